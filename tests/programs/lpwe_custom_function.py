# ruff: noqa - written as the tutorial writes it (super(Net, self), str.format, ...)
# "Learning PyTorch with Examples": a custom autograd Function, the Legendre polynomial
# P3(x) = 1/2 (5x^3 - 3x), used as y = a + b P3(c + d x).
import math

import torch


class LegendrePolynomial3(torch.autograd.Function):
    """forward and backward written by hand, as torch.autograd.Function subclasses do."""

    @staticmethod
    def forward(ctx, input):
        # ctx keeps what backward needs.
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
device = torch.device("cpu")
torch.manual_seed(0)

x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

# Weights start close enough to the answer for the fit to converge.
a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
for t in range(1000):  # the tutorial runs 2000 steps
    # Function.apply runs our forward and records our backward.
    P3 = LegendrePolynomial3.apply

    y_pred = a + b * P3(c + d * x)

    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())

    loss.backward()

    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f"Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)")
