"""The TinyModel program of PyTorch's autograd tutorial ("Autograd in Training"), on gradgen.

Only the import differs from the tutorial. The end walks the graph behind the loss,
from `loss.grad_fn` down to the AccumulateGrad nodes of the parameters, as the seed's
author did to see what backward would run.

Run from the repository root: `python examples/seed_tinymodel.py`.
"""

import sys
from pathlib import Path

# Find `runtime` in this checkout when gradgen is not installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import runtime as torch  # noqa: E402 - the one changed line: `import torch` in the tutorial

BATCH_SIZE = 16
DIM_IN = 1000
HIDDEN_SIZE = 100
DIM_OUT = 10


class TinyModel(torch.nn.Module):

    def __init__(self):
        super(TinyModel, self).__init__()  # noqa: UP008 - as the tutorial writes it

        self.layer1 = torch.nn.Linear(DIM_IN, HIDDEN_SIZE)
        self.relu = torch.nn.ReLU()
        self.layer2 = torch.nn.Linear(HIDDEN_SIZE, DIM_OUT)

    def forward(self, x):
        x = self.layer1(x)
        x = self.relu(x)
        x = self.layer2(x)
        return x


some_input = torch.randn(BATCH_SIZE, DIM_IN, requires_grad=False)
ideal_output = torch.randn(BATCH_SIZE, DIM_OUT, requires_grad=False)

model = TinyModel()

print(model.layer2.weight[0][0:10])  # just a small slice
print(model.layer2.weight.grad)

optimizer = torch.optim.SGD(model.parameters(), lr=0.001)

prediction = model(some_input)

loss = (ideal_output - prediction).pow(2).sum()
print(loss)

loss.backward()
print(model.layer2.weight[0][0:10])
print(model.layer2.weight.grad[0][0:10])

optimizer.step()
print(model.layer2.weight[0][0:10])
print(model.layer2.weight.grad[0][0:10])

optimizer.zero_grad(set_to_none=False)

print(model.layer2.weight.grad[0][0:10])


# -- the graph behind the loss ------------------------------------------------------------

def print_graph(node, depth=0):
    """One line per node, children indented below their parent; a leaf's AccumulateGrad
    shows the shape of the parameter it accumulates into."""
    indent = "    " * depth
    if node is None:
        print(f"{indent}None")
        return
    if hasattr(node, "variable"):
        print(f"{indent}{node.name()} {list(node.variable.shape)}")
        return
    print(f"{indent}{node.name()}")
    for next_node, _ in node.next_functions:
        print_graph(next_node, depth + 1)


print(loss.grad_fn)
print_graph(loss.grad_fn)
