# ruff: noqa - written as the tutorial writes it (super(Net, self), str.format, ...)
# The examples of torch.autograd.functional's docstrings: vjp, jvp, jacobian, hessian, vhp
# and hvp, each printed.
import torch
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp

torch.manual_seed(0)


def exp_reducer(x):
    return x.exp().sum(dim=1)


inputs = torch.rand(4, 4)
v = torch.ones(4)
print(vjp(exp_reducer, inputs, v))
print(vjp(exp_reducer, inputs, v, create_graph=True))


def adder(x, y):
    return 2 * x + 3 * y


inputs = (torch.rand(2), torch.rand(2))
v = torch.ones(2)
print(vjp(adder, inputs, v))

inputs = torch.rand(4, 4)
v = torch.ones(4, 4)
print(jvp(exp_reducer, inputs, v))
print(jvp(exp_reducer, inputs, v, create_graph=True))

inputs = (torch.rand(2), torch.rand(2))
v = (torch.ones(2), torch.ones(2))
print(jvp(adder, inputs, v))

inputs = torch.rand(2, 2)
print(jacobian(exp_reducer, inputs))
print(jacobian(exp_reducer, inputs, create_graph=True))


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


inputs = (torch.rand(2), torch.rand(2))
print(jacobian(exp_adder, inputs))
print(jacobian(exp_adder, inputs, strategy="forward-mode", vectorize=True))


def pow_reducer(x):
    return x.pow(3).sum()


inputs = torch.rand(2, 2)
print(hessian(pow_reducer, inputs))
print(hessian(pow_reducer, inputs, create_graph=True))


def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()


inputs = (torch.rand(2), torch.rand(2))
print(hessian(pow_adder_reducer, inputs))

inputs = torch.rand(2, 2)
v = torch.ones(2, 2)
print(vhp(pow_reducer, inputs, v))
print(vhp(pow_reducer, inputs, v, create_graph=True))
inputs = (torch.rand(2), torch.rand(2))
v = (torch.zeros(2), torch.ones(2))
print(vhp(pow_adder_reducer, inputs, v))

inputs = torch.rand(2, 2)
v = torch.ones(2, 2)
print(hvp(pow_reducer, inputs, v))
print(hvp(pow_reducer, inputs, v, create_graph=True))
inputs = (torch.rand(2), torch.rand(2))
v = (torch.zeros(2), torch.ones(2))
print(hvp(pow_adder_reducer, inputs, v))
