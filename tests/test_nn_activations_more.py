"""PReLU, RReLU (training draws torch's numbers bit for bit), Softmax2d, the in-place
functional forms, Bilinear, EmbeddingBag, Embedding.from_pretrained and F.gumbel_softmax,
against PyTorch: values, gradients, random streams, reprs, state_dict keys and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.oracle import close, same


def _data(shape: tuple[int, ...], seed: int = 0, dtype: str = "float32") -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# -- PReLU ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("shape", "parameters"), [
    ((3, 4), 4), ((2, 3, 5), 3), ((2, 3, 2, 2), 1), ((5,), 1), ((), 1), ((6,), 1),
])
def test_prelu(shape: tuple, parameters: int) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.PReLU(parameters, init=0.1)
        input = lib.tensor(_data(shape, 1), requires_grad=True)
        out = module(input)
        functional = lib.nn.functional.prelu(input, lib.tensor(_data((parameters,), 2)))
        (out.pow(2).sum() + functional.sum()).backward()
        return [out, functional, input.grad, module.weight.grad, repr(module),
                list(module.state_dict())]

    close(program)


def test_tensor_prelu_method() -> None:
    def program(lib: Any) -> list:
        input = lib.tensor(_data((2, 3, 2), 1), requires_grad=True)
        weight = lib.tensor([0.1, 0.5, 2.0], requires_grad=True)
        out = input.prelu(weight)
        out.sum().backward()
        return [out, input.grad, weight.grad]

    close(program)


@pytest.mark.parametrize("call", [
    "F.prelu(lib.ones(2, 3), lib.ones(4))",
    "F.prelu(lib.ones(()), lib.ones(2))",
    "F.prelu(lib.ones(2, 3), lib.ones(1, 1))",
    "F.prelu(lib.ones(2, 3), lib.ones(3, dtype=lib.float64))",
    "F.prelu(lib.ones(2, 3, dtype=lib.int64), lib.ones(3, dtype=lib.int64))",
    "F.rrelu(lib.ones(3, dtype=lib.int64), training=True)",
    "F.rrelu(-lib.ones(3, dtype=lib.int64))",
])
def test_prelu_errors(call: str) -> None:
    def program(lib: Any) -> Any:
        F = lib.nn.functional  # noqa: F841 - read by eval
        return eval(call).tolist()

    same(program)


# -- RReLU ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bounds", [(1 / 8, 1 / 3), (0.05, 0.9)])
def test_rrelu_training_draws_torch_s_numbers_bit_for_bit(dtype: str, bounds: tuple) -> None:
    x = _data((4, 5, 6), 1, dtype)
    x[0, 0, :2] = 0.0

    def program(lib: Any) -> list:
        lib.manual_seed(3)
        input = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.rrelu(input, *bounds, training=True)
        out.backward(lib.tensor(_data((4, 5, 6), 2, dtype)))
        module = lib.nn.RReLU(*bounds)
        second = module(lib.tensor(x).transpose(0, 2))
        module.eval()
        evaluated = module(lib.tensor(x))
        return [out, input.grad, second, evaluated, lib.rand(3), repr(module)]

    close(program, rtol=0, atol=0)


def test_rrelu_in_place_forms_and_eval_mode() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(5)
        a, b, c = (lib.tensor(_data((3, 4), 1)) for _ in range(3))
        F = lib.nn.functional
        returned = F.rrelu_(a, training=True)
        F.rrelu(b, 0.2, 0.4, training=False, inplace=True)
        module = lib.nn.RReLU(inplace=True)
        module(c)
        return [returned is a, a, b, c, repr(module), lib.rand(2)]

    close(program, rtol=0, atol=0)


def test_softmax2d() -> None:
    def program(lib: Any) -> list:
        module = lib.nn.Softmax2d()
        input = lib.tensor(_data((2, 3, 4, 2), 1), requires_grad=True)
        out = module(input)
        unbatched = module(input[0])
        (out.pow(2).sum() + unbatched[1].sum()).backward()
        return [out, unbatched, input.grad, repr(module)]

    close(program)


@pytest.mark.parametrize("call", ["lib.nn.Softmax2d()(lib.ones(2, 3))",
                                  "lib.nn.Softmax2d()(lib.ones(1, 2, 3, 4, 5))"])
def test_softmax2d_errors(call: str) -> None:
    same(lambda lib: eval(call).tolist())


@pytest.mark.parametrize(("name", "args"), [
    ("relu_", ()), ("elu_", (0.5,)), ("selu_", ()), ("celu_", (2.0,)), ("leaky_relu_", (0.3,)),
    ("hardtanh_", (-0.5, 0.7)),
])
def test_in_place_functional_forms(name: str, args: tuple) -> None:
    def program(lib: Any) -> list:
        leaf = lib.tensor(_data((3, 4), 1), requires_grad=True)
        input = leaf * 2
        version = input._version
        out = getattr(lib.nn.functional, name)(input, *args)
        out.sum().backward()
        return [out is input, input._version > version, out, leaf.grad,
                type(out.grad_fn).__name__]

    close(program)


# -- Bilinear -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("batch", "bias"), [((4,), True), ((2, 3), False), ((), True)])
def test_bilinear(batch: tuple, bias: bool) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.Bilinear(3, 5, 2, bias=bias)
        x1 = lib.tensor(_data((*batch, 3), 1), requires_grad=True)
        x2 = lib.tensor(_data((*batch, 5), 2), requires_grad=True)
        out = module(x1, x2)
        out.pow(2).sum().backward()
        return [out, x1.grad, x2.grad, *[p.grad for p in module.parameters()],
                *module.parameters(), repr(module), list(module.state_dict())]

    close(program)


@pytest.mark.parametrize("call", [
    "F.bilinear(lib.ones(2, 3), lib.ones(2, 2, 5), lib.ones(4, 3, 5))",
    "F.bilinear(lib.ones(2, 3), lib.ones(3, 5), lib.ones(4, 3, 5))",
    "F.bilinear(lib.ones(2, 2), lib.ones(2, 5), lib.ones(4, 3, 5))",
    "F.bilinear(lib.ones(2, 3), lib.ones(2, 4), lib.ones(4, 3, 5))",
    "F.bilinear(lib.ones(2, 3), lib.ones(2, 5), lib.ones(4, 3, 5), lib.ones(3))",
])
def test_bilinear_errors(call: str) -> None:
    def program(lib: Any) -> Any:
        F = lib.nn.functional  # noqa: F841 - read by eval
        return eval(call).tolist()

    same(program)


# -- EmbeddingBag ---------------------------------------------------------------------------------

BAG_CASES = [
    ({"mode": "mean"}, "1d", {}),
    ({"mode": "sum"}, "1d", {"per_sample_weights": True}),
    ({"mode": "max"}, "1d", {}),
    ({"mode": "sum"}, "2d", {}),
    ({"mode": "max"}, "2d", {}),
    ({"mode": "mean", "padding_idx": 2}, "1d", {}),
    ({"mode": "sum", "include_last_offset": True}, "1d_last", {}),
    ({"mode": "mean", "padding_idx": -1}, "2d", {}),
]


@pytest.mark.parametrize(("options", "layout", "call"), BAG_CASES,
                         ids=[f"{o}-{la}-{c}" for o, la, c in BAG_CASES])
def test_embedding_bag(options: dict, layout: str, call: dict) -> None:
    indices = np.array([1, 2, 4, 5, 4, 3, 2, 9, 2])

    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.EmbeddingBag(10, 3, **options)
        if layout == "2d":
            input, offsets = lib.tensor(indices[:8].reshape(2, 4)), None
        elif layout == "1d_last":
            input, offsets = lib.tensor(indices), lib.tensor([0, 2, 2, 5, 9])
        else:
            input, offsets = lib.tensor(indices), lib.tensor([0, 2, 2, 5])
        extra = {}
        if call.get("per_sample_weights"):
            extra["per_sample_weights"] = lib.tensor(_data(tuple(input.shape), 3),
                                                     requires_grad=True)
        out = module(input, offsets, **extra)
        out.pow(2).sum().backward()
        grads = [extra["per_sample_weights"].grad] if extra else []
        return [out, module.weight.grad, *grads, repr(module), list(module.state_dict()),
                module.weight]

    close(program)


def test_embedding_bag_and_embedding_from_pretrained() -> None:
    def program(lib: Any) -> list:
        table = lib.tensor(_data((5, 2), 1))
        bag = lib.nn.EmbeddingBag.from_pretrained(table, mode="sum")
        trainable = lib.nn.EmbeddingBag.from_pretrained(table, freeze=False, padding_idx=0)
        embedding = lib.nn.Embedding.from_pretrained(table, padding_idx=1)
        free = lib.nn.Embedding.from_pretrained(table, freeze=False)
        indices = lib.tensor([[0, 1, 4], [2, 2, 3]])
        return [bag(indices), trainable(indices), embedding(indices), free(indices),
                bag.weight.requires_grad, trainable.weight.requires_grad,
                embedding.weight.requires_grad, free.weight.requires_grad, repr(bag),
                repr(trainable), repr(embedding)]

    close(program)


BAG_ERRORS = [
    "F.embedding_bag(lib.tensor([[0, 1]]), w, lib.tensor([0]))",
    "F.embedding_bag(lib.tensor([0, 1]), w)",
    "F.embedding_bag(lib.tensor([0, 1]), w, lib.tensor([[0]]))",
    "F.embedding_bag(lib.tensor([[[0, 1]]]), w)",
    "F.embedding_bag(lib.tensor([0, 1]), w, lib.tensor([0]), mode='min')",
    "F.embedding_bag(lib.tensor([0, 1]), lib.ones(3), lib.tensor([0]))",
    "F.embedding_bag(lib.tensor([0, 1]), w, lib.tensor([0]), per_sample_weights=lib.ones(3))",
    "F.embedding_bag(lib.tensor([0, 1]), w, lib.tensor([0]), mode='mean',"
    " per_sample_weights=lib.ones(2))",
    "F.embedding_bag(lib.tensor([0, 1]), w, lib.tensor([1]))",
    "F.embedding_bag(lib.tensor([0, 1]), w, lib.tensor([0, 3]))",
    "F.embedding_bag(lib.tensor([0, 1]), w, lib.tensor([0]), mode='max',"
    " scale_grad_by_freq=True)",
    "lib.nn.EmbeddingBag(3, 2, padding_idx=3)",
    "F.embedding_bag(lib.tensor([0, 7]), w, lib.tensor([0]))",
    "F.embedding_bag(lib.tensor([0, 1]), w, lib.tensor([0]), padding_idx=5)",
    "lib.nn.EmbeddingBag(3, 2, _weight=lib.ones(2, 2))",
    "lib.nn.EmbeddingBag.from_pretrained(lib.ones(3))",
    "lib.nn.Embedding.from_pretrained(lib.ones(3))",
]


@pytest.mark.parametrize("call", BAG_ERRORS)
def test_embedding_bag_errors(call: str) -> None:
    def program(lib: Any) -> Any:
        F = lib.nn.functional  # noqa: F841 - read by eval
        w = lib.ones(3, 2)  # noqa: F841 - read by eval
        result = eval(call)
        return repr(result) if isinstance(result, lib.nn.Module) else result.tolist()

    same(program)


# -- gumbel softmax -------------------------------------------------------------------------------

@pytest.mark.parametrize(("tau", "hard", "dim"), [(1.0, False, -1), (0.5, True, -1),
                                                  (2.0, True, 0)])
def test_gumbel_softmax_draws_torch_s_noise(tau: float, hard: bool, dim: int) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(11)
        logits = lib.tensor(_data((4, 5), 1), requires_grad=True)
        sample = lib.nn.functional.gumbel_softmax(logits, tau, hard, dim=dim)
        (sample * lib.arange(5.0)).sum().backward()
        return [sample, logits.grad, lib.rand(2)]

    close(program, rtol=1e-5, atol=1e-6)


def test_gumbel_softmax_eps_warning() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        return lib.nn.functional.gumbel_softmax(lib.zeros(3), eps=1e-5).shape

    same(program)
