"""The API probe of issue 12: one-liners a PyTorch program reaches for first, each run under
real torch and under gradgen (tests/oracle.py's `same`): what each returns (as plain Python
values and strings: `str(t)`, `.tolist()`, dtype names, shapes), raises or warns must be
equal. Random ones seed torch's generator first (gradgen's streams equal torch's).

bfloat16 tensors are compared with torch's in the tests at the end."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

import pytest

from tests.oracle import same


def _x(t: Any) -> Any:
    """A small float tensor with distinct values, a tie and negatives."""
    return t.tensor([[3.0, -1.0, 2.0], [0.5, 2.0, -4.0]])


def _seeded(t: Any) -> Any:
    t.manual_seed(0)
    return t


def _round_trip(t: Any) -> Any:
    """torch.save then torch.load of a dict of tensors and plain values, in a fresh file."""
    path = os.path.join(tempfile.mkdtemp(), "state.pt")
    t.save({"w": t.arange(6.0).reshape(2, 3), "step": 3, "name": "x"}, path)
    loaded = t.load(path)
    return str(loaded["w"]), loaded["step"], loaded["name"], sorted(loaded)


def _module_dict(t: Any) -> Any:
    layers = t.nn.ModuleDict({"fc": t.nn.Linear(2, 3), "act": t.nn.ReLU()})
    return repr(layers), list(layers.keys()), len(layers), "fc" in layers


def _clip(t: Any) -> Any:
    _seeded(t)
    net = t.nn.Linear(3, 2)
    net(t.ones(4, 3) * 10).sum().backward()
    norm = t.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    return round(norm.item(), 5), [round(v, 5) for v in net.weight.grad.flatten().tolist()]


def _optimizer_steps(t: Any, name: str, **kwargs: Any) -> Any:
    _seeded(t)
    net = t.nn.Linear(3, 1)
    optimizer = getattr(t.optim, name)(net.parameters(), lr=0.1, **kwargs)
    for _ in range(3):
        optimizer.zero_grad()
        ((net(t.ones(2, 3)) - 1) ** 2).mean().backward()
        optimizer.step()
    # gradgen's optimizers have no foreach / fused / capturable / differentiable options
    # (implementation switches of torch's; the update is the same): their repr lines are
    # left out of the comparison.
    lines = [line for line in repr(optimizer).splitlines()
             if line.split(":")[0].strip() not in _IMPLEMENTATION_FLAGS]
    # float32 sums in another order differ in the last bit: 4 decimals.
    return [round(v, 4) for v in net.weight.flatten().tolist()], lines


_IMPLEMENTATION_FLAGS = {"foreach", "fused", "capturable", "differentiable"}


def _step_lr(t: Any) -> Any:
    optimizer = t.optim.SGD([t.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = t.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    rates = []
    for _ in range(5):
        optimizer.step()
        scheduler.step()
        rates.append(scheduler.get_last_lr())
    return rates


def _data_loader(t: Any) -> Any:
    _seeded(t)
    data = t.utils.data.TensorDataset(t.arange(10.0), t.arange(10) % 3)
    loader = t.utils.data.DataLoader(data, batch_size=4, shuffle=True)
    return [(x.tolist(), y.tolist()) for x, y in loader], len(data), len(loader)


def _func_grad(t: Any) -> Any:
    gradient = t.func.grad(lambda x: (x.sin() * x).sum())(t.tensor([0.5, 1.0, 2.0]))
    return [round(v, 6) for v in gradient.tolist()]


def _printoptions(t: Any) -> Any:
    t.set_printoptions(precision=2)
    try:
        return str(t.tensor([1.23456, 2.5]))
    finally:
        t.set_printoptions(profile="default")


def _generator(t: Any) -> Any:
    generator = t.Generator().manual_seed(3)
    first = t.rand(3, generator=generator).tolist()
    return first, t.randn(2, generator=t.Generator().manual_seed(3)).tolist()


def _conv_pool_stack(t: Any) -> Any:
    _seeded(t)
    net = t.nn.Sequential(t.nn.Conv2d(1, 2, 3, padding=1), t.nn.MaxPool2d(2),
                          t.nn.BatchNorm2d(2), t.nn.LeakyReLU(0.1), t.nn.Flatten())
    out = net(t.arange(32.0).reshape(2, 1, 4, 4) / 10)
    return repr(net), list(out.shape), [round(v, 4) for v in out.flatten().tolist()]


def _indexing(t: Any) -> Any:
    x = t.arange(12).reshape(3, 4)
    return (x[1].tolist(), x[:, 1].tolist(), x[1:, ::2].tolist(), x[x > 5].tolist(),
            x[[0, 2]].tolist(), x[..., -1].tolist(), x[None].shape, x[1, 2].item())


def _setitem(t: Any) -> Any:
    x = t.zeros(2, 3)
    x[0, 1] = 5
    x[1] = t.tensor([1.0, 2.0, 3.0])
    x[x > 2] = -1
    return x.tolist()


PROBE: dict[str, Callable[[Any], Any]] = {
    # -- creation
    "tensor": lambda t: str(t.tensor([[1, 2], [3, 4]])),
    "tensor float": lambda t: str(t.tensor([1.5, 2.0])),
    "tensor dtype": lambda t: str(t.tensor([1, 2], dtype=t.float64)),
    "tensor bool": lambda t: str(t.tensor([True, False])),
    "Tensor legacy": lambda t: str(t.Tensor([1, 2])),
    "Tensor sizes": lambda t: list(t.Tensor(2, 3).shape),
    "zeros": lambda t: str(t.zeros(2, 3)),
    "ones tuple": lambda t: str(t.ones((2, 2), dtype=t.int64)),
    "full": lambda t: str(t.full((2, 2), 7.0)),
    "empty shape": lambda t: list(t.empty(3, 4).shape),
    "eye": lambda t: str(t.eye(3)),
    "arange": lambda t: str(t.arange(5)),
    "arange float": lambda t: str(t.arange(0, 1, 0.25)),
    "linspace": lambda t: str(t.linspace(0, 1, 5)),
    "zeros_like": lambda t: str(t.zeros_like(_x(t))),
    "ones_like": lambda t: str(t.ones_like(t.arange(3))),
    "full_like": lambda t: str(t.full_like(_x(t), 2)),
    "new_zeros": lambda t: (str(t.ones(2, dtype=t.float64).new_zeros(2, 3)),
                            str(t.ones(1).new_zeros((1, 2)))),
    "new_ones new_full": lambda t: (str(t.arange(2).new_ones(2)),
                                    str(t.arange(2).new_full((2,), 2.5))),
    "new_empty": lambda t: (list(_x(t).new_empty(4).shape), str(_x(t).new_empty(1).dtype)),
    "new_tensor": lambda t: (str(t.arange(2).new_tensor([1.5])),
                             str(_x(t).new_tensor([1, 2], requires_grad=True))),
    "new_tensor of a tensor": lambda t: str(_x(t).new_tensor(t.arange(2))),
    "from_numpy": lambda t: str(t.from_numpy(__import__("numpy").array([1.0, 2.0]))),
    "as_tensor": lambda t: str(t.as_tensor([1, 2, 3])),
    "stack": lambda t: str(t.stack([t.ones(2), t.zeros(2)])),
    "cat": lambda t: str(t.cat([t.ones(2, 1), t.zeros(2, 2)], dim=1)),
    "tril": lambda t: str(t.tril(t.ones(3, 3))),
    "triu": lambda t: str(t.triu(t.ones(3, 3), diagonal=1)),
    # -- random (seeded)
    "manual_seed rand": lambda t: _seeded(t).rand(2, 2).tolist(),
    "randn": lambda t: _seeded(t).randn(3).tolist(),
    "randint high size": lambda t: _seeded(t).randint(10, (5,)).tolist(),
    "randint low high size": lambda t: _seeded(t).randint(3, 10, (5,)).tolist(),
    "randint dtype": lambda t: str(_seeded(t).randint(10, (2,)).dtype),
    "randperm": lambda t: _seeded(t).randperm(6).tolist(),
    "multinomial": lambda t: _seeded(t).multinomial(t.tensor([0.1, 0.6, 0.3]), 5,
                                                    replacement=True).tolist(),
    "multinomial no replacement": lambda t: _seeded(t).multinomial(t.tensor([1.0, 2, 3, 4]),
                                                                   3).tolist(),
    "rand_like": lambda t: _seeded(t).rand_like(t.zeros(2)).tolist(),
    "normal_": lambda t: _seeded(t).empty(3).normal_(0, 2).tolist(),
    "uniform_": lambda t: _seeded(t).empty(3).uniform_(-1, 1).tolist(),
    "Generator": _generator,
    # -- dtypes and conversions
    "dtype": lambda t: str(_x(t).dtype),
    "long": lambda t: str(_x(t).long()),
    "int": lambda t: str(_x(t).int()),
    "bool": lambda t: str(_x(t).bool()),
    "float": lambda t: str(t.arange(3).float()),
    "double": lambda t: str(t.arange(3).double()),
    "to dtype": lambda t: str(t.arange(3).to(t.float32)),
    "to cpu": lambda t: str(_x(t).to("cpu")),
    "to device": lambda t: str(_x(t).to(t.device("cpu"))),
    "cpu": lambda t: str(_x(t).cpu()),
    "type()": lambda t: _x(t).type(),
    "type(dtype)": lambda t: str(_x(t).type(t.int64)),
    "type(str)": lambda t: str(_x(t).type("torch.DoubleTensor")),
    "is_cuda": lambda t: _x(t).is_cuda,
    "device attr": lambda t: str(_x(t).device),
    "is_floating_point": lambda t: (_x(t).is_floating_point(), t.arange(2).is_floating_point()),
    "float16 name": lambda t: str(t.float16),
    "bfloat16 name": lambda t: str(t.bfloat16),
    "half": lambda t: (str(_x(t).half()), str(_x(t).half().dtype), _x(t).half().tolist()),
    "float16 tensor": lambda t: str(t.tensor([1.0, 2.5], dtype=t.float16) * 2),
    "half to float": lambda t: str(t.tensor([0.1], dtype=t.float16).float()),
    "get_default_dtype": lambda t: str(t.get_default_dtype()),
    "promotion": lambda t: str((t.arange(3) + 0.5).dtype),
    "int division": lambda t: str(t.arange(4) / 2),
    # -- device, version, cuda
    "__version__ str": lambda t: isinstance(t.__version__, str) and t.__version__ > "2",
    "cuda.is_available": lambda t: t.cuda.is_available(),
    "cuda.device_count": lambda t: t.cuda.device_count(),
    "device": lambda t: (str(t.device("cpu")), t.device("cpu").type, repr(t.device("cpu"))),
    "device cuda string": lambda t: str(t.device("cuda" if t.cuda.is_available() else "cpu")),
    "accelerator": lambda t: (t.accelerator.is_available(),
                              t.accelerator.current_accelerator()),
    "get_default_device": lambda t: str(t.get_default_device()),
    "cuda()": lambda t: _x(t).cuda(),
    # -- shape and metadata
    "shape": lambda t: (str(_x(t).shape), list(_x(t).shape)),
    "size": lambda t: (str(_x(t).size()), _x(t).size(1), _x(t).size(-1)),
    "Size": lambda t: (str(t.Size([2, 3])), t.Size([2, 3]) == (2, 3),
                       t.Size([2, 3]).numel()),
    "dim ndim": lambda t: (_x(t).dim(), _x(t).ndim),
    "numel": lambda t: (_x(t).numel(), t.numel(_x(t))),
    "nelement": lambda t: _x(t).nelement(),
    "len": lambda t: len(_x(t)),
    "element_size": lambda t: (_x(t).element_size(), t.arange(2).element_size()),
    "is_tensor": lambda t: (t.is_tensor(_x(t)), t.is_tensor([1])),
    "item": lambda t: t.tensor([2.5]).item(),
    "tolist": lambda t: _x(t).tolist(),
    "numpy": lambda t: _x(t).numpy().tolist(),
    "repr": lambda t: repr(_x(t)),
    "str requires_grad": lambda t: str(t.ones(2, requires_grad=True)),
    "str grad_fn": lambda t: str(t.ones(2, requires_grad=True) * 2),
    "set_printoptions": _printoptions,
    # -- shape ops and indexing
    "view": lambda t: str(t.arange(6).view(2, 3)),
    "view -1": lambda t: list(t.arange(6).view(-1, 2).shape),
    "reshape": lambda t: str(t.arange(6).reshape(3, 2)),
    "flatten": lambda t: str(_x(t).flatten()),
    "unsqueeze squeeze": lambda t: (list(_x(t).unsqueeze(0).shape),
                                    list(t.ones(1, 3, 1).squeeze().shape)),
    "permute": lambda t: list(t.ones(2, 3, 4).permute(2, 0, 1).shape),
    "transpose T": lambda t: (str(_x(t).t()), str(_x(t).T), list(_x(t).transpose(0, 1).shape)),
    "mT": lambda t: list(t.ones(2, 3, 4).mT.shape),
    "contiguous": lambda t: _x(t).t().contiguous().is_contiguous(),
    "expand": lambda t: str(t.tensor([[1], [2]]).expand(2, 3)),
    "repeat": lambda t: str(t.tensor([1, 2]).repeat(2, 2)),
    "chunk split": lambda t: ([c.tolist() for c in t.arange(5).chunk(2)],
                              [c.tolist() for c in t.arange(5).split(2)]),
    "indexing": _indexing,
    "setitem": _setitem,
    "gather": lambda t: str(_x(t).gather(1, t.tensor([[0], [2]]))),
    "where": lambda t: str(t.where(_x(t) > 0, _x(t), t.zeros(1))),
    "masked_fill": lambda t: str(_x(t).masked_fill(_x(t) < 0, 0.0)),
    "clone detach": lambda t: str(_x(t).clone().detach()),
    "flip roll": lambda t: (t.arange(4).flip(0).tolist(), t.arange(4).roll(1).tolist()),
    # -- arithmetic
    "floor divide": lambda t: str(t.tensor([7, -7, 5]) // 2),
    "float floor divide": lambda t: str(t.tensor([7.5, -7.5]) // 2),
    "mod": lambda t: str(t.tensor([7, -7, 5]) % 3),
    "float mod": lambda t: str(t.tensor([7.5, -7.5]) % 2),
    "pow": lambda t: str(t.arange(4) ** 2),
    "rpow": lambda t: str(2 ** t.arange(4)),
    "matmul": lambda t: str(_x(t) @ t.ones(3, 2)),
    "mm bmm": lambda t: (str(t.mm(t.eye(2), t.ones(2, 2))),
                         list(t.bmm(t.ones(2, 2, 3), t.ones(2, 3, 4)).shape)),
    "einsum": lambda t: str(t.einsum("ij,jk->ik", _x(t), t.ones(3, 2))),
    "einsum trace": lambda t: t.einsum("ii", t.arange(9.0).reshape(3, 3)).item(),
    "abs neg": lambda t: (str(_x(t).abs()), str(-_x(t))),
    "exp log": lambda t: (str(t.tensor([0.0, 1.0]).exp()), str(t.tensor([1.0, 4.0]).log())),
    "sqrt rsqrt": lambda t: str(t.tensor([4.0, 9.0]).sqrt()),
    "clamp": lambda t: str(_x(t).clamp(min=-1, max=1)),
    "comparisons": lambda t: (str(_x(t) > 0), str(_x(t) == 2)),
    "logical": lambda t: str((_x(t) > 0) & (_x(t) < 3)),
    "isnan isinf": lambda t: (str(t.tensor([1.0, float("nan"), float("inf")]).isnan()),
                              str(t.isinf(t.tensor([1.0, float("inf")])))),
    "isfinite": lambda t: str(t.isfinite(t.tensor([1.0, float("nan")]))),
    "allclose": lambda t: (t.allclose(_x(t), _x(t) + 1e-9), t.allclose(_x(t), _x(t) + 1)),
    "equal": lambda t: (t.equal(_x(t), _x(t)), t.equal(_x(t), _x(t)[:1])),
    "log10 log2": lambda t: (str(t.tensor([100.0]).log10()), str(t.tensor([8.0]).log2())),
    "floor round": lambda t: (str(t.tensor([1.5, -1.5, 2.5]).floor()),
                              str(t.tensor([1.5, -1.5, 2.5]).round())),
    "lerp": lambda t: str(t.lerp(t.zeros(2), t.ones(2), 0.25)),
    # -- reductions and sorting
    "sum": lambda t: (str(_x(t).sum()), str(_x(t).sum(dim=1)), str(_x(t).sum(0, keepdim=True))),
    "mean": lambda t: (str(_x(t).mean()), str(_x(t).mean(dim=0))),
    "std var": lambda t: (round(_x(t).std().item(), 5), round(_x(t).var(dim=1)[0].item(), 5)),
    "max": lambda t: (str(_x(t).max()), [v.tolist() for v in _x(t).max(dim=1)]),
    "min argmin": lambda t: (str(_x(t).min()), str(_x(t).argmin()), str(_x(t).argmax(dim=1))),
    "prod": lambda t: str(t.tensor([1.0, 2, 3]).prod()),
    "cumsum": lambda t: (str(_x(t).cumsum(dim=1)), str(t.cumsum(t.arange(4), 0))),
    "sort": lambda t: [v.tolist() for v in _x(t).sort(dim=1)],
    "sort descending": lambda t: [v.tolist() for v in _x(t).sort(descending=True)],
    "argsort": lambda t: str(_x(t).argsort(dim=1)),
    "topk": lambda t: [v.tolist() for v in t.topk(t.tensor([1.0, 5, 3, 4]), 2)],
    "any all": lambda t: ((_x(t) > 2).any().item(), (_x(t) > -5).all().item()),
    "norm": lambda t: round(_x(t).norm().item(), 5),
    "linalg.norm": lambda t: round(t.linalg.norm(_x(t)).item(), 5),
    "linalg.vector_norm": lambda t: [round(v, 5) for v in
                                     t.linalg.vector_norm(_x(t), ord=1, dim=1).tolist()],
    "linalg.inv": lambda t: [[round(v, 5) for v in row] for row in
                             t.linalg.inv(t.tensor([[2.0, 1.0], [1.0, 3.0]])).tolist()],
    "linalg.solve": lambda t: [round(v, 5) for v in t.linalg.solve(
        t.tensor([[2.0, 1.0], [1.0, 3.0]]), t.tensor([1.0, 2.0])).tolist()],
    # -- autograd
    "backward grad": lambda t: _grad_of(t),
    "no_grad": lambda t: _no_grad(t),
    "detach requires_grad": lambda t: (t.ones(2, requires_grad=True).detach().requires_grad,
                                       t.ones(2).requires_grad_().requires_grad),
    "autograd.grad": lambda t: str(t.autograd.grad((t.tensor([2.0], requires_grad=True) ** 3)
                                                   .sum(), [t.tensor([2.0])], allow_unused=True)),
    "func.grad": _func_grad,
    # -- nn
    "Linear repr": lambda t: repr(t.nn.Linear(3, 2)),
    "Linear seeded": lambda t: _seeded(t).nn.Linear(3, 2).weight.tolist(),
    "Sequential": lambda t: repr(t.nn.Sequential(t.nn.Linear(2, 2), t.nn.ReLU())),
    "ModuleDict": _module_dict,
    "ModuleList": lambda t: len(t.nn.ModuleList([t.nn.ReLU(), t.nn.Tanh()])),
    "Conv2d": lambda t: (repr(t.nn.Conv2d(3, 8, 3, padding=1)),
                         list(t.nn.Conv2d(3, 8, 3, padding=1)(t.ones(1, 3, 5, 5)).shape)),
    "MaxPool2d": lambda t: str(t.nn.MaxPool2d(2)(t.arange(16.0).reshape(1, 1, 4, 4))),
    "BatchNorm1d": lambda t: (repr(t.nn.BatchNorm1d(3)),
                              str(t.nn.BatchNorm1d(3)(_x(t)).detach())),
    "LeakyReLU": lambda t: (repr(t.nn.LeakyReLU(0.2)), str(t.nn.LeakyReLU(0.2)(_x(t)))),
    "Flatten": lambda t: (repr(t.nn.Flatten()), list(t.nn.Flatten()(t.ones(2, 3, 4)).shape)),
    "Dropout eval": lambda t: str(t.nn.Dropout(0.5).eval()(_x(t))),
    "Dropout seeded": lambda t: _seeded(t).nn.Dropout(0.5)(t.ones(8)).tolist(),
    "Embedding": lambda t: _seeded(t).nn.Embedding(5, 2)(t.tensor([1, 3])).tolist(),
    "conv-pool stack": _conv_pool_stack,
    "CrossEntropyLoss": lambda t: round(t.nn.CrossEntropyLoss()(_x(t), t.tensor([0, 1]))
                                        .item(), 5),
    "MSELoss": lambda t: t.nn.MSELoss()(t.ones(3), t.zeros(3)).item(),
    "parameters count": lambda t: sum(p.numel() for p in t.nn.Linear(3, 2).parameters()),
    "state_dict keys": lambda t: list(t.nn.Linear(3, 2).state_dict()),
    "train eval": lambda t: (t.nn.Linear(1, 1).eval().training, t.nn.Linear(1, 1).training),
    "clip_grad_norm_": _clip,
    # -- nn.functional
    "F.relu": lambda t: str(t.nn.functional.relu(_x(t))),
    "F.softmax": lambda t: [round(v, 5) for v in
                            t.nn.functional.softmax(_x(t), dim=1)[0].tolist()],
    "F.one_hot": lambda t: str(t.nn.functional.one_hot(t.tensor([0, 2, 1]))),
    "F.one_hot classes": lambda t: str(t.nn.functional.one_hot(t.tensor([0, 2]), 4)),
    "F.silu": lambda t: [round(v, 5) for v in t.nn.functional.silu(_x(t))[0].tolist()],
    "F.pad": lambda t: str(t.nn.functional.pad(t.ones(2, 2), (1, 0, 0, 1))),
    "F.pad reflect": lambda t: str(t.nn.functional.pad(t.arange(4.0).reshape(1, 4), (2, 1),
                                                       mode="reflect")),
    "F.normalize": lambda t: [round(v, 5) for v in
                              t.nn.functional.normalize(_x(t), dim=1)[0].tolist()],
    "F.gelu": lambda t: [round(v, 5) for v in t.nn.functional.gelu(_x(t))[0].tolist()],
    "F.max_pool2d": lambda t: str(t.nn.functional.max_pool2d(
        t.arange(16.0).reshape(1, 1, 4, 4), 2)),
    "F.cross_entropy": lambda t: round(t.nn.functional.cross_entropy(
        _x(t), t.tensor([2, 0])).item(), 5),
    # -- optim
    "optim.SGD": lambda t: _optimizer_steps(t, "SGD", momentum=0.9),
    "optim.Adam": lambda t: _optimizer_steps(t, "Adam"),
    "optim.RMSprop": lambda t: _optimizer_steps(t, "RMSprop"),
    "optim.Adagrad": lambda t: _optimizer_steps(t, "Adagrad"),
    "lr_scheduler.StepLR": _step_lr,
    # -- data, saving
    "utils.data": _data_loader,
    "save load": _round_trip,
}


def _grad_of(t: Any) -> Any:
    x = t.tensor([1.0, 2.0], requires_grad=True)
    (x ** 2).sum().backward()
    return str(x.grad), x.is_leaf, x.requires_grad


def _no_grad(t: Any) -> Any:
    x = t.ones(2, requires_grad=True)
    with t.no_grad():
        y = x * 2
    return y.requires_grad, t.is_grad_enabled()


@pytest.mark.parametrize("name", list(PROBE))
def test_probe(name: str) -> None:
    same(PROBE[name])


def test_the_probe_is_as_long_as_the_issue_says() -> None:
    assert len(PROBE) >= 158


BFLOAT16 = {
    "tensor dtype=bfloat16": lambda t: t.ones(2, dtype=t.bfloat16),
    "to(bfloat16)": lambda t: t.ones(2).to(t.bfloat16),
    "bfloat16()": lambda t: t.ones(2).bfloat16(),
}


@pytest.mark.parametrize("name", list(BFLOAT16))
def test_bfloat16_tensors_are_torchs(name: str) -> None:
    """bfloat16 is a dtype of gradgen's (numpy's from ml_dtypes): made as torch makes it,
    printed as torch prints it."""
    same(lambda t: (str(BFLOAT16[name](t)), str(BFLOAT16[name](t).dtype),
                    BFLOAT16[name](t).tolist()))


def test_bfloat16_dtype_object_is_torchs() -> None:
    same(lambda t: (str(t.bfloat16), t.bfloat16.is_floating_point, t.bfloat16.itemsize))
