# ruff: noqa - written as the tutorial writes it (super(Net, self), str.format, ...)
# The examples of torch.func's docstrings: grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
# hessian, functional_call and vmap (including per-example gradients), each printed.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import (functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                        vjp, vmap)

torch.manual_seed(0)

# grad: the gradient of sin is cos, and grad composes.
x = torch.randn([])
cos_x = grad(lambda x: torch.sin(x))(x)
print(cos_x, x.cos())
neg_sin_x = grad(grad(lambda x: torch.sin(x)))(x)
print(neg_sin_x, -x.sin())

# grad with vmap: per-example gradients.
batch_size, feature_size = 3, 5


def model(weights, feature_vec):
    assert feature_vec.dim() == 1
    return feature_vec.dot(weights).relu()


def compute_loss(weights, example, target):
    y = model(weights, example)
    return ((y - target) ** 2).mean()  # MSELoss


weights = torch.randn(feature_size, requires_grad=True)
examples = torch.randn(batch_size, feature_size)
targets = torch.randn(batch_size)
inputs = (weights, examples, targets)
grad_weight_per_example = vmap(grad(compute_loss), in_dims=(None, 0, 0))(*inputs)
print(grad_weight_per_example)

# grad with has_aux and argnums.


def my_loss_func(y, y_pred):
    loss_per_sample = F.cross_entropy(y_pred, y, reduction="none")
    return loss_per_sample.mean(), loss_per_sample


y_true = torch.randint(0, 4, (6,))
y_preds = torch.randn(6, 4)
grads, aux = grad(my_loss_func, argnums=1, has_aux=True)(y_true, y_preds)
print(grads, aux)


def f(x, y):
    return x.mul(y).sum()


x, y = torch.randn(3), torch.randn(3)
print(grad(f, argnums=(0, 1))(x, y))

# grad_and_value
print(grad_and_value(lambda x: x.sin().sum())(torch.randn(4)))

# vjp
x = torch.randn([5])
f = lambda x: x.sin().sum()  # noqa: E731
(_, vjpfunc) = vjp(f, x)
vjps = vjpfunc(torch.tensor(1.0))
print(vjps[0], x.cos())

x = torch.randn([5])
(_, vjpfunc) = vjp(torch.sin, x)
print(vjpfunc(torch.ones(5))[0])

# jvp
x = torch.randn([])
f = lambda x: x * torch.tensor([1.0, 2.0, 3])  # noqa: E731
value, grad_out = jvp(f, (x,), (torch.tensor(1.0),))
print(value, grad_out)

x = torch.randn(5)
print(jvp(torch.sin, (x,), (torch.ones(5),)))

# jacrev and jacfwd
x = torch.randn(5)
jacobian = jacrev(torch.sin)(x)
print(jacobian, torch.allclose(jacobian, torch.diag(x.cos())) if hasattr(torch, "diag") else "")


def f(x):
    x_sin = x.sin()
    return x_sin, (x_sin, x.cos())


jacobian_f, (f_x, cos_x) = jacrev(f, has_aux=True)(x)
print(jacobian_f, f_x, cos_x)
print(jacfwd(torch.sin)(x))


def g(x, y):
    return x + y


x, y = torch.randn(5), torch.randn(5)
print(jacrev(g, argnums=1)(x, y))
print(jacfwd(g, argnums=(0, 1))(x, y))
print(jacrev(jacrev(torch.sin))(x).shape, jacfwd(jacrev(torch.sin))(x).shape)

# hessian
x = torch.randn(5)
print(hessian(lambda x: x.sin().sum())(x))

# functional_call: a module with parameters taken from a dict.
model = nn.Linear(3, 3)
x = torch.randn(1, 3)
t = torch.randn(1, 3)
params = {k: v.detach() for k, v in model.named_parameters()}
print(functional_call(model, params, (x,)))


def compute_model_loss(params, x, t):
    y = functional_call(model, params, x)
    return nn.functional.mse_loss(y, t)


grad_weights = grad(compute_model_loss)(params, x, t)
print(grad_weights)

# vmap: batched dot products, a matrix-vector product and nested vmaps.
x, y = torch.randn(2, 5), torch.randn(2, 5)
batched_dot = vmap(torch.dot)
print(batched_dot(x, y))
batched_pow = vmap(torch.mul, in_dims=(0, None))
print(batched_pow(x, torch.tensor(2.0)))
x, y = torch.randn(2, 3, 5), torch.randn(2, 3, 5)
print(vmap(vmap(torch.dot))(x, y).shape)
x = torch.randn(2, 5)
print(vmap(lambda x: x.sum(0), in_dims=1)(x))
print(vmap(lambda x: x * 2, out_dims=1)(x).shape)
