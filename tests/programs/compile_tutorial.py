# ruff: noqa - written as the tutorial writes it
# After PyTorch's "Introduction to torch.compile" tutorial: a function and a module
# compiled with torch.compile, then a model compiled and trained in an ordinary loop (the
# loss, backward and optimizer step eager), and, as nanoGPT's train.py does, a checkpoint
# saved from the compiled model (its keys prefixed with `_orig_mod.`) loaded into a fresh
# model. The backend is aot_eager (PyTorch's own kernels, no C++ compiler needed); a small
# seeded synthetic dataset stands in for the tutorial's.
import torch

torch.manual_seed(0)


def foo(x, y):
    a = torch.sin(x)
    b = torch.cos(y)
    return a + b


opt_foo1 = torch.compile(foo, backend="aot_eager")
print(opt_foo1(torch.randn(3, 3), torch.randn(3, 3)))


class MyModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(100, 10)

    def forward(self, x):
        return torch.nn.functional.relu(self.lin(x))


mod = MyModule()
opt_mod = torch.compile(mod, backend="aot_eager")
print(opt_mod(torch.randn(2, 100)))


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(20, 32), torch.nn.GELU(), torch.nn.Dropout(0.1),
            torch.nn.Linear(32, 32), torch.nn.LayerNorm(32), torch.nn.Tanh(),
            torch.nn.Linear(32, 4))

    def forward(self, x):
        return self.net(x)


torch._dynamo.reset()  # as the tutorial does between its examples
print(torch.compiler.is_compiling())

data = torch.randn(64, 20)
labels = (data[:, :4].argmax(dim=1) + (data[:, 4] > 0).long()) % 4
model = Classifier()
model = torch.compile(model, backend="aot_eager")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
loss_fn = torch.nn.CrossEntropyLoss()

for epoch in range(3):
    for start in range(0, 64, 16):
        x, y = data[start:start + 16], labels[start:start + 16]
        optimizer.zero_grad(set_to_none=True)
        logits = model(x)
        loss = loss_fn(logits, y)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.6f}")
print(type(model).__name__, logits.grad_fn.name())

model.eval()
with torch.no_grad():
    accuracy = (model(data).argmax(dim=1) == labels).float().mean()
print(f"accuracy {accuracy.item():.4f}")

# The checkpoint of a compiled model, loaded into a plain one (nanoGPT's train.py).
checkpoint = {"model": model.state_dict()}
print(list(checkpoint["model"])[:2])
state_dict = checkpoint["model"]
unwanted_prefix = "_orig_mod."
for k, v in list(state_dict.items()):
    if k.startswith(unwanted_prefix):
        state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
fresh = Classifier()
fresh.load_state_dict(state_dict)
fresh.eval()
with torch.no_grad():
    print(torch.equal(fresh(data), model(data)), fresh(data[:2]))
