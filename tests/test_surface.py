"""The everyday surface of torch against PyTorch: devices, dtype conversions, predicates,
torch.Size, print options, the version, and the small nn modules and utilities that
ordinary programs use."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

import runtime
from tests.oracle import same

# -- devices ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [("cpu",), ("cpu:0",), ("cpu", 0), ("cuda",), ("cuda:1",),
                                  ("cuda", 2), ("mps",), ("meta",)])
def test_a_device_prints_and_compares_as_torch_s(args: tuple) -> None:
    same(lambda lib: (str(lib.device(*args)), repr(lib.device(*args)), lib.device(*args).type,
                      lib.device(*args).index, lib.device(*args) == lib.device(*args),
                      lib.device(*args) == lib.device("cpu"),
                      hash(lib.device(*args)) == hash(lib.device(*args))))


@pytest.mark.parametrize("args", [("foo",), ("cpu:x",), ("cuda:-1",), ("",), ("CPU",),
                                  (" cpu",), ("cuda:01",), ("cpu:0", 1), ("cpu", -1),
                                  ("cpu", "x"), (0,), (None,)])
def test_a_bad_device_fails_as_in_torch(args: tuple) -> None:
    same(lambda lib: lib.device(*args))


def test_devices_compare() -> None:
    same(lambda lib: [lib.device("cpu") == "cpu", lib.device("cpu") != lib.device("cpu:0"),
                      lib.device(lib.device("cuda", 1)) == lib.device("cuda:1"),
                      repr(lib.device(type="cpu", index=0)), {lib.device("cpu"): 1} == {
                          lib.device("cpu"): 1}])
    same(lambda lib: setattr(lib.device("cpu"), "type", "cuda"))


def test_there_is_no_cuda_and_no_accelerator() -> None:
    same(lambda lib: (lib.cuda.is_available(), lib.cuda.device_count(),
                      lib.accelerator.is_available(), lib.accelerator.current_accelerator(),
                      lib.accelerator.device_count()))
    same(lambda lib: lib.cuda.current_device())


def test_tensors_live_on_the_cpu() -> None:
    def program(lib):
        x = lib.ones(2)
        cpu = lib.device("cpu")
        return [str(x.device), repr(x.device), x.device == cpu, x.is_cuda, x.cpu() is x,
                x.to("cpu") is x, x.to(cpu) is x, x.to("cpu:0") is x, str(x.to("cpu:1").device),
                repr(x.to(cpu, lib.float64)), repr(x.to(device="cpu", dtype=lib.float64)),
                repr(x.to("cpu", lib.float64, False, True)), x.to(dtype=None) is x]
    same(program)


@pytest.mark.parametrize("call", ["x.cuda()", "x.cuda(0)", "x.cuda('cuda:0')", "x.to('cuda')",
                                  "x.to('cuda:0')", "x.to(torch.device('cuda'))", "x.to(1)",
                                  "x.to('foo')", "x.to('cpu', 'cpu')", "x.to(lib.float64, "
                                  "lib.float32)", "x.to(foo=1)",
                                  "lib.nn.Linear(2, 2).to('cuda')", "lib.nn.Linear(2, 2).cuda()"])
def test_asking_for_cuda_fails_as_torch_without_cuda_does(call: str) -> None:
    same(lambda lib: eval(call, {"lib": lib, "torch": lib, "x": lib.ones(2)}))


@pytest.mark.parametrize("call", ["lib.zeros(2, device='cuda')",
                                  "lib.tensor([1.0], device='cuda:0')",
                                  "lib.ones(2, device=lib.device('cuda'))",
                                  "lib.full((2,), 1.0, device='mps')", "lib.eye(2, device=0)",
                                  "lib.zeros_like(lib.ones(2), device='cuda')",
                                  "lib.as_tensor([1.0], device='cuda')",
                                  "repr(lib.arange(3, device='cpu:0'))",
                                  "repr(lib.linspace(0, 1, 3, device=lib.device('cpu')))",
                                  "repr(lib.ones_like(lib.ones(1), device='cpu'))"])
def test_factories_make_tensors_on_the_cpu_only(call: str) -> None:
    if "'mps'" in call:
        with pytest.raises(RuntimeError, match="gradgen computes on the cpu only: it has no mps"):
            eval(call, {"lib": runtime})
        return
    same(lambda lib: eval(call, {"lib": lib}))


def test_modules_go_to_the_cpu() -> None:
    def program(lib):
        model = lib.nn.Linear(2, 2)
        return [model.to("cpu") is model, model.cpu() is model,
                model.to(lib.device("cpu"), lib.float64).weight.dtype == lib.float64]
    same(program)


# -- dtypes -----------------------------------------------------------------------------------

CONVERSIONS = ["long", "int", "bool", "float", "double"]


@pytest.mark.parametrize("source", [[1.5, -2.7, 0.0], [3, 0, -1], [True, False, True]])
@pytest.mark.parametrize("method", CONVERSIONS)
def test_dtype_conversions(source: list, method: str) -> None:
    same(lambda lib: (repr(getattr(lib.tensor(source), method)()),
                      getattr(lib.tensor(source), method)().type()))


@pytest.mark.parametrize("method", CONVERSIONS)
def test_a_conversion_to_an_integer_dtype_has_no_history(method: str) -> None:
    def program(lib):
        x = lib.tensor([1.5, 2.5], requires_grad=True)
        y = getattr(x, method)()
        return repr(y), y.requires_grad, None if y.grad_fn is None else y.grad_fn.name()
    same(program)


def test_to_a_floating_dtype_is_recorded() -> None:
    def program(lib):
        x = lib.tensor([1.5, 2.5], requires_grad=True)
        y = x.to(lib.float64)
        z = x.to(lib.float32, copy=True)
        (y.sum() + z.sum()).backward()
        return [repr(y), repr(z), repr(x.grad), x.to(lib.float32) is x,
                repr(x.to(lib.float64).to(lib.int32)), x.to(x) is x]
    same(program)


@pytest.mark.parametrize("target", ["None", "lib.float64", "lib.int32", "'torch.DoubleTensor'",
                                    "'torch.LongTensor'", "'torch.FloatTensor'", "'foo'", "3",
                                    "'torch.cuda.FloatTensor'"])
def test_tensor_type(target: str) -> None:
    if target == "'torch.cuda.FloatTensor'":
        # torch's own failure there is about loading its CUDA library; gradgen says CUDA is
        # missing, as for any other CUDA request.
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            runtime.ones(2).type("torch.cuda.FloatTensor")
        return

    def program(lib):
        x = lib.tensor([1.5, -2.5])
        result = x.type(eval(target, {"lib": lib}))
        return result if isinstance(result, str) else (repr(result), result is x)
    same(program)


# -- predicates -------------------------------------------------------------------------------

NAN, INF = math.nan, math.inf


@pytest.mark.parametrize("values", [[1.0, NAN, INF, -INF, 0.0], [1, 2], [True, False]])
@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_isnan_isinf_isfinite(values: list, name: str) -> None:
    same(lambda lib: (repr(getattr(lib, name)(lib.tensor(values))),
                      repr(getattr(lib.tensor(values), name)())))


def test_a_predicate_has_no_gradient() -> None:
    same(lambda lib: [lib.isnan(lib.ones(2, requires_grad=True)).requires_grad,
                      lib.isclose(lib.ones(2, requires_grad=True), lib.ones(2)).requires_grad])


CLOSE_CASES = [
    ("[1.0, NAN, INF, -INF]", "[1.0, NAN, INF, INF]", {}),
    ("[1.0, NAN, INF]", "[1.0, NAN, INF]", {"equal_nan": True}),
    ("[1.0, 2.0]", "[1.00001, 2.1]", {}),
    ("[1.0, 2.0]", "[1.1, 2.3]", {"rtol": 0.1}),
    ("[1.0, 2.0]", "[1.1, 2.3]", {"atol": 0.2, "rtol": 0.0}),
    ("[1.0, 2.0]", "[[1.0], [2.0]]", {}),
    ("[1, 2]", "[2, 2]", {"atol": 1}),
    ("[1, 2]", "[2, 2]", {}),
    ("[True, False]", "[False, False]", {"atol": 1}),
    ("[1.0]", "[1.0]", {"rtol": -1}),
    ("[1.0]", "[1.0]", {"atol": -0.5}),
]


@pytest.mark.parametrize(("a", "b", "options"), CLOSE_CASES)
def test_isclose_and_allclose(a: str, b: str, options: dict) -> None:
    def program(lib):
        x, y = (lib.tensor(eval(v, {"NAN": NAN, "INF": INF})) for v in (a, b))
        return (repr(lib.isclose(x, y, **options)), lib.allclose(x, y, **options),
                repr(x.isclose(y, **options)), x.allclose(y, **options))
    same(program)


@pytest.mark.parametrize("call", ["lib.isclose(lib.ones(1), lib.ones(1, dtype=lib.float64))",
                                  "lib.isclose(lib.ones(1), lib.tensor([1]))",
                                  "lib.isclose(lib.ones(1), 1.0)",
                                  "lib.allclose(lib.ones(1), lib.ones(1, dtype=lib.float64))",
                                  "lib.isnan(1.0)", "lib.numel([1])",
                                  "lib.equal(lib.ones(1), 1.0)"])
def test_predicates_refuse_what_torch_refuses(call: str) -> None:
    same(lambda lib: eval(call, {"lib": lib}))


EQUAL_CASES = [("[1.0]", "lib.tensor([1.0], dtype=lib.float64)"), ("[1]", "lib.tensor([1.0])"),
               ("[1.0]", "lib.tensor([[1.0]])"), ("[NAN]", "lib.tensor([NAN])"),
               ("[1.0, 2.0]", "lib.tensor([1.0, 2.0])"), ("[1.0, 2.0]", "lib.tensor([1.0, 3.0])")]


@pytest.mark.parametrize(("a", "b"), EQUAL_CASES)
def test_equal(a: str, b: str) -> None:
    def program(lib):
        scope = {"lib": lib, "NAN": NAN}
        x, y = lib.tensor(eval(a, scope)), eval(b, scope)
        return lib.equal(x, y), x.equal(y)
    same(program)


def test_is_tensor_numel_nelement() -> None:
    same(lambda lib: [lib.is_tensor(lib.ones(2)), lib.is_tensor(lib.nn.Parameter(lib.ones(2))),
                      lib.is_tensor([1]), lib.numel(lib.ones(2, 3)), lib.ones(2, 3).nelement(),
                      lib.ones(2, 3).numel(), lib.ones(2, 3).element_size(),
                      lib.is_floating_point(lib.ones(2))])


# -- torch.Size -------------------------------------------------------------------------------

@pytest.mark.parametrize("expression", [
    "lib.Size([2, 3])", "lib.Size((2, 3)) == (2, 3)", "lib.Size([2, 3]).numel()",
    "lib.Size([2, 3])[1:]", "lib.Size([2, 3]) + (4,)", "(4,) + lib.Size([2, 3])",
    "lib.Size([2, 3]) * 2", "lib.Size([lib.tensor(3)])", "lib.Size()", "str(lib.Size([]))",
    "lib.Size([2.0])", "lib.Size(5)", "lib.ones(2, 3).shape == lib.Size([2, 3])",
    "isinstance(lib.ones(2).shape, lib.Size)", "lib.ones(2, 3).size()[-1]",
])
def test_size(expression: str) -> None:
    same(lambda lib: repr(eval(expression, {"lib": lib})))


# -- print options ----------------------------------------------------------------------------

PRINT_OPTIONS = [{"precision": 2}, {"precision": 8}, {"threshold": 5}, {"edgeitems": 1,
                 "threshold": 5}, {"linewidth": 30}, {"sci_mode": True}, {"sci_mode": False},
                 {"profile": "short"}, {"profile": "full"}, {"profile": "default"}]


@pytest.mark.parametrize("options", PRINT_OPTIONS)
def test_set_printoptions(options: dict) -> None:
    def program(lib):
        lib.set_printoptions(**options)
        try:
            return [repr(lib.tensor([1.123456789, 2.5, 3e-5])), repr(lib.arange(12)),
                    repr(lib.tensor([[1.0, 1e6], [3.25, 4.0]])),
                    repr(lib.arange(12.0).reshape(3, 4) / 7), repr(lib.tensor([1.0, 2.0]))]
        finally:
            lib.set_printoptions(profile="default")
    same(program)


def test_printoptions_are_gotten_and_restored() -> None:
    runtime.set_printoptions(precision=2)
    try:
        assert runtime.get_printoptions()["precision"] == 2
        with runtime.printoptions(precision=6):
            assert repr(runtime.tensor([1 / 3])) == "tensor([0.333333])"
        assert repr(runtime.tensor([1 / 3])) == "tensor([0.33])"
    finally:
        runtime.set_printoptions(profile="default")
    assert repr(runtime.tensor([1 / 3])) == "tensor([0.3333])"


# -- version ----------------------------------------------------------------------------------

def test_the_version_is_torch_s_marked_as_gradgen_s() -> None:
    assert runtime.__version__ == "2.13.0+gradgen"
    assert torch.__version__.split("+")[0] == runtime.__version__.split("+")[0]


@pytest.mark.parametrize("other", ["'2.1'", "'2.13'", "'2.13.0'", "'2.9'", "'2.14'", "(2, 13)",
                                   "(2, 13, 1)", "'2.13.0a0'", "'3.0'"])
def test_the_version_compares_as_torch_s(other: str) -> None:
    value = eval(other)
    for version in (runtime.__version__, torch.__version__):
        assert isinstance(version, str)
    ours = [runtime.__version__ >= value, runtime.__version__ < value,
            runtime.__version__ == value]
    theirs = [torch.__version__ >= value, torch.__version__ < value, torch.__version__ == value]
    assert ours == theirs


# -- nn ---------------------------------------------------------------------------------------

def test_flatten_and_unflatten() -> None:
    def program(lib):
        x = lib.arange(24.0).reshape(2, 3, 4).requires_grad_()
        flat = lib.nn.Flatten()(x)
        all_flat = lib.nn.Flatten(0)(x)
        middle = lib.nn.Flatten(0, 1)(x)
        back = lib.nn.Unflatten(1, (3, 4))(flat)
        inferred = lib.nn.Unflatten(-1, (2, -1))(x)
        (back * back).sum().backward()
        return [repr(lib.nn.Flatten()), repr(lib.nn.Flatten(0, 1)),
                repr(lib.nn.Unflatten(1, (3, 4))), repr(lib.nn.Unflatten(1, [3, 4])),
                flat.shape, all_flat.shape, middle.shape, back.shape, inferred.shape,
                flat.grad_fn.name(), back.grad_fn.name(), repr(x.grad[0, 0]),
                lib.nn.Flatten()(lib.ones(3)).shape, repr(x.unflatten(2, (2, 2)).shape),
                repr(lib.unflatten(x, 0, (1, 2)).shape)]
    same(program)


@pytest.mark.parametrize("sizes", ["()", "(-1, 4)", "(5, 2)", "(2, 2)"])
def test_unflatten_refuses_sizes_that_do_not_fit(sizes: str) -> None:
    same(lambda lib: lib.ones(2, 6).unflatten(1, eval(sizes)))


def test_identity() -> None:
    same(lambda lib: (repr(lib.nn.Identity(3, foo=2)), repr(lib.nn.Identity()(lib.ones(2)))))


def test_module_dict() -> None:
    def program(lib):
        nn = lib.nn
        d = nn.ModuleDict({"a": nn.Linear(1, 1), "b": nn.ReLU()})
        seen = [repr(d), list(d.keys()), len(d), "a" in d, "z" in d]
        d["c"] = nn.Tanh()
        seen.append(repr(d.pop("a")))
        d.update([("q", nn.Sigmoid())])
        d.update({"r": nn.Identity()})
        seen += [repr(d), list(d), [repr(v) for v in d.values()],
                 [(k, repr(v)) for k, v in d.items()],
                 repr(nn.ModuleDict([("x", nn.ReLU())]))]
        del d["q"]
        seen.append(list(d))

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.heads = nn.ModuleDict({"left": nn.Linear(2, 1), "right": nn.Linear(2, 3)})

        seen.append([name for name, _ in Model().named_parameters()])
        return seen
    same(program)


@pytest.mark.parametrize("call", ["lib.nn.ModuleDict({'a': 1})", "lib.nn.ModuleDict(3)",
                                  "lib.nn.ModuleDict([('a',)])", "lib.nn.ModuleDict()['z']"])
def test_module_dict_errors(call: str) -> None:
    same(lambda lib: eval(call, {"lib": lib}))


def test_parameter_list() -> None:
    def program(lib):
        nn = lib.nn
        params = nn.ParameterList([nn.Parameter(lib.ones(2)), nn.Parameter(lib.zeros(3, 2))])
        seen = [repr(params), len(params), [n for n, _ in params.named_parameters()]]
        params.append(lib.ones(4))
        params.extend([lib.ones(1, dtype=lib.float64)])
        seen += [type(params[2]).__name__, params[2].requires_grad, repr(params[-1].shape),
                 repr(params[0:2]), repr(nn.ParameterList()), len(params)]

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.ps = nn.ParameterList([nn.Parameter(lib.ones(1))])

        seen += [repr(Model()), [n for n, _ in Model().named_parameters()]]
        params[0] = lib.zeros(2)
        seen.append(repr(params[0]))
        return seen
    same(program)


@pytest.mark.parametrize("call", ["params[5]", "params(1)", "params.extend(lib.ones(2))"])
def test_parameter_list_errors(call: str) -> None:
    def program(lib):
        params = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2))])
        return eval(call, {"lib": lib, "params": params})
    same(program)


def _with_grads(lib: Any) -> list:
    """Three parameters with known gradients (one without)."""
    params = [lib.nn.Parameter(lib.tensor(v)) for v in ([1.0, -2.0], [[3.0], [4.0]], [0.5])]
    params[0].grad = lib.tensor([3.0, -4.0])
    params[1].grad = lib.tensor([[12.0], [0.0]])
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf, 3.0])
@pytest.mark.parametrize("max_norm", [1.0, 100.0])
def test_clip_grad_norm(norm_type: float, max_norm: float) -> None:
    def program(lib):
        params = _with_grads(lib)
        total = lib.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
        return [round(total.item(), 4), total.requires_grad] + \
            [None if p.grad is None else [round(v, 4) for v in p.grad.flatten().tolist()]
             for p in params]
    same(program)


def test_clip_grad_norm_of_one_tensor_and_of_nothing() -> None:
    def program(lib):
        from_utils = __import__(lib.__name__ + ".nn.utils", fromlist=["clip_grad_norm_"])
        p = _with_grads(lib)[0]
        total = from_utils.clip_grad_norm_(p, 1.0)
        return [round(total.item(), 5), [round(v, 5) for v in p.grad.tolist()],
                repr(lib.nn.utils.clip_grad_norm_([], 1.0)),
                repr(lib.nn.utils.clip_grad_norm_(iter([]), 1.0))]
    same(program)


def test_clip_grad_norm_refuses_a_non_finite_norm_when_asked() -> None:
    def program(lib):
        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.tensor([math.inf, 1.0])
        return lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    same(program)


def test_clip_grad_value() -> None:
    def program(lib):
        params = _with_grads(lib)
        lib.nn.utils.clip_grad_value_(params, 3.5)
        lib.nn.utils.clip_grad_value_(params[0], 3)
        return [None if p.grad is None else repr(p.grad) for p in params]
    same(program)


# -- the legacy constructor and the default device ----------------------------------------------

@pytest.mark.parametrize("args", [(), ([1, 2],), ([[1.5], [2]],), ((3,),), (2, 3), (0,),
                                  ("size",), (3.5,), ("a",), (2, "a"), ([True, False],)])
def test_the_legacy_constructor_is_torch_s(args: tuple) -> None:
    def program(lib: Any) -> tuple:
        made = lib.Tensor(*(lib.Size([2, 3]) if a == "size" else a for a in args))
        return str(made.dtype), tuple(made.shape), made.tolist() if made.numel() and not (
            len(args) > 1 or args[0] == "size" or isinstance(args[0], int)) else None
    same(program)


def test_the_legacy_constructor_aliases_a_tensor_and_refuses_other_devices() -> None:
    def aliases(lib: Any) -> list:
        sources = (lib.ones(2, requires_grad=True), lib.ones(2, dtype=lib.int64))
        made = [lib.Tensor(t) for t in sources]
        return [(str(m.dtype), m.requires_grad, type(m.grad_fn).__name__) for m in made]
    same(aliases)
    same(lambda lib: lib.Tensor([1.0], device="cuda"))


@pytest.mark.parametrize("where", [None, "cpu", ("cpu", 0), "cuda"])
def test_the_default_device_is_the_cpu(where: Any) -> None:
    def program(lib: Any) -> tuple:
        lib.set_default_device(lib.device(*where) if isinstance(where, tuple) else where)
        try:
            return repr(lib.get_default_device()), lib.ones(1).device.type
        finally:
            lib.set_default_device(None)
    if where == "cuda":  # torch takes it and fails at the first tensor; gradgen at once
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            runtime.set_default_device("cuda")
        assert repr(runtime.get_default_device()) == "device(type='cpu')"
        return
    same(program)


@pytest.mark.parametrize("kind", ["uint8", "int32", "int64", "bool", "float32", "float64"])
def test_a_numpy_array_keeps_its_dtype(kind: str) -> None:
    """torch.tensor(array) keeps the array's dtype (a uint8 image stays uint8)."""
    import numpy as np
    same(lambda lib: str(lib.tensor(np.array([0, 1, 255], dtype=kind)).dtype))
