# ruff: noqa - written as the tutorial writes it (super(Net, self), str.format, ...)
# "Learning PyTorch with Examples": the polynomial fit with autograd computing the backward pass.
import math

import torch

dtype = torch.float
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")
torch.set_default_device(device)
torch.manual_seed(0)

# Tensors for the inputs and outputs; they do not need gradients.
x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
y = torch.sin(x)

# The weights require gradients: backward() will fill their .grad.
a = torch.randn((), dtype=dtype, requires_grad=True)
b = torch.randn((), dtype=dtype, requires_grad=True)
c = torch.randn((), dtype=dtype, requires_grad=True)
d = torch.randn((), dtype=dtype, requires_grad=True)

learning_rate = 1e-6
for t in range(1000):  # the tutorial runs 2000 steps
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    # loss is a Tensor of shape (); loss.item() is its value as a Python number
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())

    # Gradients of the loss with respect to every tensor with requires_grad=True
    loss.backward()

    # Update the weights by hand; no_grad keeps the update out of the graph
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        # Zero the gradients for the next step
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")
