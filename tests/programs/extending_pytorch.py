# ruff: noqa - written as the tutorial writes it (super(Net, self), str.format, ...)
# "Extending PyTorch" (torch.autograd.Function): a linear function, a multiplication by a
# non-tensor constant and a cube with setup_context, each checked with gradcheck.
import torch
from torch.autograd import Function, gradcheck


class LinearFunction(Function):
    """y = x W^T + b, forward and backward by hand."""

    @staticmethod
    def forward(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None

        # needs_input_grad skips what nobody asked for; returning too much is fine too.
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)

        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    """y = x * c for a Python number c: its gradient is None."""

    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        # ctx keeps the non-tensor directly.
        _, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class MyCube(Function):
    """x^3 with the derivative 3x^2 returned as a second, non-differentiable output."""

    @staticmethod
    def forward(x):
        result = x ** 3
        dx = 3 * x ** 2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        # Written with differentiable ops, so double backward works.
        result = grad_output * dx + grad_dx * 6 * x
        return result


class MyCubeOld(Function):
    """The older style: forward takes ctx."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 3 * x ** 2


linear = LinearFunction.apply
torch.manual_seed(0)

# gradcheck compares the backward with finite differences, in double precision.
input = (torch.randn(20, 20, dtype=torch.double, requires_grad=True),
         torch.randn(30, 20, dtype=torch.double, requires_grad=True))
test = gradcheck(linear, input + (None,), eps=1e-6, atol=1e-4)
print("linear (no bias)", test)
input = input + (torch.randn(30, dtype=torch.double, requires_grad=True),)
test = gradcheck(linear, input, eps=1e-6, atol=1e-4)
print("linear", test)

x = torch.randn(4, 3, requires_grad=True)
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(5, requires_grad=True)
y = linear(x, w, b)
print(y.grad_fn.name() if hasattr(y.grad_fn, "name") else type(y.grad_fn).__name__)
y.pow(2).sum().backward()
print(x.grad, w.grad, b.grad)

z = MulConstant.apply(x, 2.5)
z.sum().backward()
print(x.grad)
print(gradcheck(lambda t: MulConstant.apply(t, 2.5), (torch.randn(3, dtype=torch.double,
                                                                 requires_grad=True),)))

x = torch.randn(3, dtype=torch.double, requires_grad=True)
cube, dx = MyCube.apply(x)
print(cube, dx)
print(gradcheck(lambda t: MyCube.apply(t)[0], (x,)))
grad_x, = torch.autograd.grad(cube.sum(), x, create_graph=True)
print(grad_x)
grad2_x, = torch.autograd.grad(grad_x.sum(), x)
print(grad2_x)
print(torch.autograd.gradgradcheck(lambda t: MyCube.apply(t)[0], (x,)))

x = torch.randn(3, dtype=torch.double, requires_grad=True)
print(gradcheck(MyCubeOld.apply, (x,)))
y = MyCubeOld.apply(x)
y.backward(torch.ones(3, dtype=torch.double))
print(x, x.grad)
