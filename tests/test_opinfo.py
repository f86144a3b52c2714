"""PyTorch's OpInfo database as a peer test suite.

torch's own tests describe each op once, in `op_db` (torch.testing._internal, which needs
the `expecttest` package): how to make sample inputs for it, which inputs must raise, and
which kinds of derivative it supports. Here every OpInfo entry whose op gradgen has (by the
same name: `torch.add` and `runtime.add`, `torch.nn.functional.relu` and
`runtime.nn.functional.relu`, else the Tensor method of that name) runs its samples through
both libraries, with gradgen's inputs made from the same numbers (through numpy):

- forward values, shapes and dtypes, in float64 and in int64 / bool / float32 where the
  OpInfo lists the dtype;
- reverse-mode gradients (float64, for a fixed random cotangent), forward-mode tangents
  (where the OpInfo says torch supports forward AD) and second-order gradients (where it
  says gradgrad is supported);
- error inputs: gradgen raises the same exception class.

`python tests/test_opinfo.py` lists the mapping (162 OpInfo entries with torch 2.13).
The default run takes the first MAX_SAMPLES samples of each op and dtype (a deterministic
subset: samples come from a fixed seed); `GRADGEN_OPINFO_ALL=1 pytest tests/test_opinfo.py`
runs all of them. What gradgen does not (yet) do as torch does is in KNOWN_DIFFERENCES,
each entry with its reason.
"""

from __future__ import annotations

import ast
import inspect
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import runtime
import runtime.nn.functional as runtime_functional

MAX_SAMPLES = None if os.environ.get("GRADGEN_OPINFO_ALL") else 6

# Ops left out whatever they do: their results are random (torch's random streams are
# tested in tests/test_random.py against torch's generator, not through these samples) or
# uninitialised memory.
NOT_COMPARABLE = {
    "normal", "randn", "randn_like", "rand_like", "randint", "randint_like", "multinomial",
    "bernoulli", "nn.functional.dropout", "empty", "empty_like", "new_empty",
    "nn.functional.rrelu", "empty_strided", "new_empty_strided", "empty_permuted",
}

def _matrix_norm_order(sample: Any) -> Any:
    """The `ord` of a linalg.matrix_norm sample, given by keyword or first after A."""
    return sample.kwargs.get("ord", sample.args[0] if sample.args else "fro")


def _has_ties_unstable(sample: Any) -> bool:
    """A sort / topk sample whose input repeats a value and which does not ask for a stable
    sort: the indices of the equal values are then in an order torch does not define."""
    values = sample.input
    return (not sample.kwargs.get("stable", False)
            and values.unique().numel() < values.numel())


# (OpInfo name, variant, check) -> (why gradgen differs, which samples). `check` is one of
# "forward", "float32", "int64", "bool", "backward", "forward_ad", "gradgrad", "errors", or
# "*" for all of them. With a predicate, the samples it picks are left out of the check;
# with None, the whole check is an expected failure (strict: once it passes, the entry
# must go).
SAMPLE_CHECKS = ("forward", "float32", "int64", "bool", "backward", "forward_ad", "gradgrad")
KNOWN_DIFFERENCES: dict[tuple[str, str, str], tuple[str, Callable[[Any], bool] | None]] = {
    # -- merged this session, not yet reconciled --
    # -- opinfo fixes 2 (sort/topk ties, half/bfloat16) --
    **{(name, "", check): (
        "the order of equal elements: an unstable sort (stable=False) or topk of a tensor "
        "with repeated values gives their indices in the order of torch's own sorting "
        "algorithm (not a stable order); gradgen's are in a stable order. The values agree",
        _has_ties_unstable)
       for name, check in (("sort", "bool"), ("argsort", "bool"), ("topk", "int64"))},
    # -- end of opinfo fixes 2 --
    ("nn.functional.embedding", "", "*"): (
        "gradgen has no sparse gradients (sparse=True raises NotImplementedError)",
        lambda sample: sample.kwargs.get("sparse", False)),
    ("nn.functional.embedding_bag", "", "*"): (
        "gradgen has no sparse gradients (embedding_bag with sparse=True raises "
        "NotImplementedError in backward)",
        lambda sample: sample.kwargs.get("sparse", False)),
    # Ops added in one session (torch's other names, composites, nn's functional forms)
    # that differ from torch in one check on OpInfo's samples; each is a defect not yet
    # investigated, kept as a strict expected failure so that a fix shows here.
    **{(name, "", check): ("differs from torch in this check on OpInfo's samples (added "
                           "with the torch.* and nn breadth work): not yet investigated", None)
       for name, check in (
           ("matrix_exp", "float32"),
           ("nn.functional.local_response_norm", "int64"),
           ("nn.functional.triplet_margin_loss", "int64"),
           ("nn.functional.triplet_margin_with_distance_loss", "int64"))},

    # -- strided views (helper strided) --
    ("as_strided", "partial_views", "*"): (
        "the harness's inputs: to_gradgen copies a sample's tensor into fresh memory, so the "
        "storage around a view (these samples are base[5:15] of a 20-element base) does not "
        "come along; tests/test_as_strided.py compares as_strided on such views with torch",
        lambda sample: sample.input.storage_offset() != 0),
    # -- end of strided views --

    # -- elementwise math and torch.special (family 1): entries follow --
    **{(name, variant, check): (
        "float32 rounding: torch computes these in float32 arithmetic (cosh and sinh from "
        "float32 exponentials, digamma and polygamma's series in float32), gradgen in float64 "
        "rounded once to float32; they differ by an ulp or a few (up to 2e-5 relative for "
        "polygamma of order 2 and more), above this check's 1e-7 / 1e-5 tolerance", None)
       for name, variant, check in (
           ("cosh", "", "int64"), ("sinh", "", "int64"), ("digamma", "", "int64"),
           ("digamma", "", "bool"),
           *(("polygamma", f"polygamma_n_{n}", "float32") for n in range(5)))},

    # torch.special's Bessel functions and polynomials (helper "special")
    **{(name, variant, check): (
        "float32 rounding: torch computes these in float32 arithmetic (for integer inputs "
        "too, whose result is float32), gradgen the Bessel functions in float64 rounded once "
        "and the polynomials with numpy's float32 trigonometry; they differ by an ulp or a "
        "few, above this check's 1e-7 / 1e-5 tolerance", None)
       for name, variant, check in (
           ("i0", "", "int64"), ("special.i1", "", "int64"), ("special.i1e", "", "int64"),
           ("special.airy_ai", "", "int64"), ("special.bessel_y0", "", "int64"),
           ("special.bessel_y1", "", "int64"), ("special.modified_bessel_i0", "", "int64"),
           ("special.modified_bessel_i1", "", "int64"),
           ("special.polygamma", "special_polygamma_n_0", "float32"),
           ("special.hermite_polynomial_he", "", "float32"),
           ("special.hermite_polynomial_h", "", "int64"),
           ("special.laguerre_polynomial_l", "", "int64"),
           ("special.legendre_polynomial_p", "", "int64"),
           *((f"special.{shifted}chebyshev_polynomial_{kind}", "", "int64")
             for shifted in ("", "shifted_") for kind in "tuvw"))},
    # -- end of elementwise math and torch.special (family 1) --

    # -- reductions, scans, indexing and shape (family 2): entries follow --
    **{(name, "", "int64"): (
        "the index of a tied value: with repeated values in a slice, torch's selection "
        "kernel returns the index of one of them in an order it does not define; gradgen's "
        "is the stable sort's. The values agree",
        lambda sample: sample.input.unique().numel() < sample.input.numel())
       for name in ("kthvalue", "median", "nanmedian")},

    # -- end of reductions, scans, indexing and shape (family 2) --

    # -- linear algebra (family 3): entries follow --
    ("linalg.eig", "", "gradgrad"): (
        "the second order through |eigenvectors| (the sample's output_process_fn_grad) differs "
        "from torch's, whose own gradgradcheck passes: a defect of gradgen's complex double "
        "backward of linalg_eig, not yet found", None),
    # -- end of linear algebra (family 3) --

    # -- nn kernels (family 4): entries follow --

    # -- end of nn kernels (family 4) --

    # -- spec breadth: reductions, indexing, random, linalg (helper misc) --
    **{("mode", "", check): (
        "the index of the mode among its repeats: torch's CPU kernel sorts each slice and, "
        "on long slices, returns one of the mode's positions in an order it does not define; "
        "gradgen returns the last. The values agree",
        lambda sample: sample.input.numel() > 100)
       for check in ("int64", "bool")},
}




# -- OpInfo fix-ups (opinfo fixes, batch 1) ------------------------------------------------


def _max_pool2d_backward(input: Any, kernel_size: Any = (), stride: Any = (),
                         padding: Any = (0,), dilation: Any = (1,), ceil_mode: bool = False,
                         **kwargs: Any) -> Any:
    """gradgen's counterpart of the OpInfo's `max_pool2d_backward` (a function, not a
    lambda): pool with indices, then call the backward op itself on a cotangent of ones."""
    out, indices = runtime.nn.functional.max_pool2d(
        input, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
        ceil_mode=ceil_mode, return_indices=True)
    stride = kernel_size if stride is None else stride
    return runtime.max_pool2d_with_indices_backward(
        runtime.ones_like(out), input, kernel_size, stride, padding, dilation, ceil_mode,
        indices)


# OpInfo entries whose op is a helper function of torch's test suite, or a lambda written over
# two lines (which _lambda_source does not read): gradgen's mirror of it.
OPINFO_HELPERS: dict[str, Callable] = {
    "max_pool2d_with_indices_backward": _max_pool2d_backward,
    # wrapper_set_seed(F.scaled_dot_product_attention, ...): the same dropout masks.
    "nn.functional.scaled_dot_product_attention": lambda *args, **kwargs: _call_in_order(
        runtime_functional.scaled_dot_product_attention, *args, **kwargs),
    # lambda input, *args, **kwargs: wrapper_set_seed(F.multi_head_attention_forward, ...),
    # written over two lines
    "nn.functional.multi_head_attention_forward": lambda *args, **kwargs: _call_in_order(
        runtime_functional.multi_head_attention_forward, *args, **kwargs),
    # issue 28, helper nnB: wrapper_set_seed(F.<name>, ...) around nn's random ops
    **{f"nn.functional.{name}": (lambda function: lambda *args, **kwargs: _call_in_order(
        function, *args, **kwargs))(getattr(runtime_functional, name))
       for name in ("dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
                    "fractional_max_pool2d", "fractional_max_pool3d")},
}


def _opinfo_name(op: Any) -> str:
    return op.name if not op.variant_test_name else f"{op.name}.{op.variant_test_name}"


def _lambda_source(function: Callable) -> str | None:
    """The text of a lambda written inside an OpInfo (`op=lambda x: x.T,`), or None."""
    if getattr(function, "__name__", "") != "<lambda>":
        return None
    line = inspect.getsource(function)
    text = line[line.index("lambda"):].rstrip()
    while text:  # cut what follows the lambda on its line (`,`, `)`, more arguments)
        try:
            if isinstance(ast.parse(text, mode="eval").body, ast.Lambda):
                return text
        except SyntaxError:
            pass
        text = text[:-1].rstrip()
    return None


def _call_in_order(function: Callable, *args: Any, **kwargs: Any) -> Any:
    """gradgen's `wrapper_set_seed`: torch's seeds its generator with 42 before each call
    (scaled_dot_product_attention's dropout draws from it), and gradgen's generator draws
    torch's stream, so seeding it the same makes the same dropout masks."""
    runtime.manual_seed(42)
    return function(*args, **kwargs)


def _gradgen_callable(op: Any) -> Callable | None:
    """gradgen's function for an OpInfo: where the OpInfo's op is a lambda (`lambda self,
    condition, other: torch.where(condition, self, other)`), the same lambda with `torch`
    bound to gradgen's runtime; else the function of the OpInfo's name (a Tensor method
    if gradgen has no function of that name)."""
    if _by_name(op) is None:
        return None
    if op.name in OPINFO_HELPERS:
        return OPINFO_HELPERS[op.name]
    source = _lambda_source(op.op)
    if source is not None:
        return eval(source, {"torch": runtime, "wrapper_set_seed": _call_in_order})
    return _by_name(op)


# OpInfo entries named otherwise than the function they test
_OPINFO_FUNCTIONS = {"_segment_reduce": "segment_reduce"}


def _by_name(op: Any) -> Callable | None:
    name = _OPINFO_FUNCTIONS.get(op.name, op.name)
    if name.startswith("torch.ops.aten."):  # an ATen op by its overload: gradgen's spec op
        return getattr(runtime, name.split(".")[3], None)
    if name.startswith("nn.functional."):
        return getattr(runtime_functional, name.removeprefix("nn.functional."), None)
    if "." in name:  # a function of a submodule: linalg.solve, special.erfcx, fft.fft
        owner: Any = runtime
        for part in name.split("."):
            owner = getattr(owner, part, None)
        return owner if callable(owner) and not isinstance(owner, type) else None
    function = getattr(runtime, name, None)
    if callable(function) and not isinstance(function, type):
        return function
    method = getattr(runtime.Tensor, name, None)
    if method is None:
        return None
    if isinstance(method, property):  # `x.T`
        return lambda self: getattr(self, name)
    # called unbound, as the OpInfo calls torch.Tensor's: `Tensor.__rpow__(2.5, x)` runs the
    # Tensor method, not the number's own (float.__rpow__, which returns NotImplemented)
    return lambda self, *args, **kwargs: method(self, *args, **kwargs)


OPS = [op for op in op_db
       if op.name not in NOT_COMPARABLE and _gradgen_callable(op) is not None]
IDS = [_opinfo_name(op) for op in OPS]


# -- moving values from torch to gradgen -------------------------------------------------

_DTYPES = {str(d): d for d in (runtime.float32, runtime.float64, runtime.int32,
                               runtime.int64, runtime.bool, runtime.uint8)}


def _is_torch_function(value: Any) -> bool:
    """A function of torch's namespaces (`torch.nn.functional.gelu`, `torch.tanh`)."""
    return (callable(value) and not isinstance(value, type | torch.nn.Module)
            and (getattr(value, "__module__", None) or "").startswith("torch")
            and hasattr(runtime_functional if hasattr(runtime_functional, value.__name__)
                        else runtime, getattr(value, "__name__", "")))


def to_gradgen(value: Any, requires_grad: bool = True) -> Any:
    """The same value for gradgen: tensors through numpy (keeping requires_grad), dtypes by
    name, containers item by item."""
    if isinstance(value, torch.Tensor):
        tensor = runtime.tensor(value.detach().numpy().copy(), dtype=_DTYPES[str(value.dtype)])
        if requires_grad and value.requires_grad:
            tensor.requires_grad_(True)
        return tensor
    if isinstance(value, torch.dtype):
        return _DTYPES[str(value)]
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, torch.device):
        return runtime.device(str(value))
    if isinstance(value, torch.nn.Module):  # a module given as a function: gradgen's namesake
        return _module_to_gradgen(value)
    if _is_torch_function(value):  # an activation given by function: gradgen's namesake
        return getattr(runtime_functional, value.__name__, None) or getattr(runtime,
                                                                            value.__name__)
    if isinstance(value, list | tuple):
        return type(value)(to_gradgen(v, requires_grad) for v in value)
    if isinstance(value, torch.memory_format):  # torch.channels_last: gradgen's, by name
        return getattr(runtime, str(value).removeprefix("torch."))
    if isinstance(value, dict):
        return {k: to_gradgen(v, requires_grad) for k, v in value.items()}
    return value


def _module_to_gradgen(module: torch.nn.Module) -> Any:
    """gradgen's module of the same class and settings (its __constants__), for a torch module
    without parameters, buffers or submodules (`PairwiseDistance()` as a distance_function);
    the torch module itself for any other."""
    kind = getattr(runtime.nn, type(module).__name__, None)
    if (kind is None or list(module.parameters()) or list(module.buffers())
            or list(module.children())):
        return module
    twin = kind()
    for name in getattr(kind, "__constants__", ()):
        setattr(twin, name, getattr(module, name))
    return twin


def _leaves(value: Any, kind: type) -> list:
    """The tensors in a value (a tensor, or a list / tuple of them), in order."""
    if isinstance(value, kind):
        return [value]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _leaves(v, kind)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _leaves(v, kind)]
    return []


def _to_numpy(value: Any) -> Any:
    if isinstance(value, torch.Tensor | runtime.Tensor):
        value = value.detach().resolve_conj()  # (torch's lazy conjugates resolved)
        if str(value.dtype) == "torch.bfloat16":  # numpy has none: as the float32s they are
            value = value.float()
        elif str(value.dtype) == "torch.complex32":  # nor this: as the complex64s they are
            value = value.cfloat()
        return value.numpy()
    return value


def assert_same(got: Any, want: Any, where: str, rtol: float = 1e-7, atol: float = 1e-7) -> None:
    """gradgen's result equals torch's: structure, and for tensors shape, dtype and values."""
    if isinstance(want, torch.Tensor):
        assert isinstance(got, runtime.Tensor), f"{where}: {type(got).__name__} for a Tensor"
        assert tuple(got.shape) == tuple(want.shape), f"{where}: shape"
        assert str(got.dtype) == str(want.dtype), f"{where}: dtype"
        np.testing.assert_allclose(_to_numpy(got), _to_numpy(want), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=where)
    elif isinstance(want, list | tuple):
        assert isinstance(got, list | tuple) and len(got) == len(want), f"{where}: structure"
        for index, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{where}[{index}]", rtol, atol)
    elif want is None or want is NotImplemented:
        assert got is want, f"{where}: {got!r} for {want!r}"
    else:
        assert got == pytest.approx(want, rel=rtol, abs=atol, nan_ok=True), where


# -- samples ----------------------------------------------------------------------------


def _samples(op: Any, dtype: torch.dtype, requires_grad: bool,
             left_out: Callable[[Any], bool]) -> Iterator[Any]:
    """The op's samples (the first MAX_SAMPLES in the default run), but those a known
    difference leaves out."""
    torch.manual_seed(0)
    for index, sample in enumerate(op.sample_inputs("cpu", dtype, requires_grad=requires_grad)):
        if MAX_SAMPLES is not None and index >= MAX_SAMPLES:
            return
        if not left_out(sample) and not _outside_gradgen(sample):
            _compared[0] += 1
            yield index, sample


_compared = [0]  # how many samples the running check has compared


def _outside_gradgen(sample: Any) -> bool:
    """Samples this suite leaves out, whatever the op: tensors of dtypes other than bool,
    uint8, int32, int64, float32 and float64, complex numbers, `out=` arguments and more
    than 64 dimensions (numpy's limit). gradgen has int8, int16, float16, bfloat16 and the
    complex dtypes too, compared with torch in their own test files (test_bfloat16,
    test_complex, ...); this suite's samples in them are not compared yet."""
    values = (sample.input, sample.args, sample.kwargs)
    tensors = _leaves(values, torch.Tensor)
    if any(str(t.dtype) not in _DTYPES or t.dim() > 64 or t.device.type != "cpu"
           for t in tensors):  # (gradgen has one CPU device: no meta tensors)
        return True
    if any(isinstance(v, complex) for v in _scalars(values)):
        return True
    return "out" in sample.kwargs


def _scalars(value: Any) -> list:
    if isinstance(value, list | tuple):
        return [s for v in value for s in _scalars(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _scalars(v)]
    return [value]


def _call_torch(op: Any, sample: Any) -> Any:
    return op(sample.input, *sample.args, **sample.kwargs)


# Factorizations whose factors torch documents as unique only up to sign or phase (singular
# vectors, eigenvectors): numpy's LAPACK and the one torch was built with may choose
# differently (they do for wide matrices' singular vectors), so their forward values are
# compared, as every op's derivatives are, through the sample's output_process_fn_grad: the
# part of the result that is defined (|U|, U @ Vh, S, |eigenvectors|), what torch's own
# tests compare.
UP_TO_SIGN = frozenset({"svd", "linalg.svd", "svd_lowrank", "pca_lowrank", "linalg.eig",
                        "linalg.eigh"})


def defined_part(op: Any, sample: Any, result: Any) -> Any:
    """The forward result as compared: all of it, or for UP_TO_SIGN its defined part."""
    return sample.output_process_fn_grad(result) if op.name in UP_TO_SIGN else result


def _call_gradgen(op: Any, sample: Any, requires_grad: bool = True) -> Any:
    function = _gradgen_callable(op)
    return function(to_gradgen(sample.input, requires_grad),
                    *to_gradgen(sample.args, requires_grad),
                    **to_gradgen(sample.kwargs, requires_grad))


def _known_difference(op: Any, check: str) -> tuple[str, Callable[[Any], bool] | None] | None:
    for key in (check, "*"):
        known = KNOWN_DIFFERENCES.get((op.name, op.variant_test_name, key))
        if known is not None:
            return known
    return None


def _run_check(op: Any, check: str, body: Callable[[Callable[[Any], bool]], None]) -> None:
    """Run `body(left_out)`. A check known to fail as a whole must fail (an expected failure);
    once it passes, its KNOWN_DIFFERENCES entry has to go."""
    known = _known_difference(op, check)
    if known is None:
        body(lambda sample: False)
        return
    reason, predicate = known
    if predicate is not None:
        body(predicate)
        return
    _compared[0] = 0
    try:
        body(lambda sample: False)
    except Exception:  # noqa: BLE001 - any failure is the known one
        pytest.xfail(reason)
    if not _compared[0]:
        return  # no sample of this kind (a dtype the op does not take): nothing differs
    pytest.fail(f"{_opinfo_name(op)} {check} passes now: remove it from KNOWN_DIFFERENCES")


def _check_forward(op: Any, dtype: torch.dtype, left_out: Callable[[Any], bool]) -> None:
    if dtype not in op.supported_dtypes("cpu"):
        return
    for index, sample in _samples(op, dtype, False, left_out):
        want = defined_part(op, sample, _call_torch(op, sample))
        got = defined_part(op, sample, _call_gradgen(op, sample, requires_grad=False))
        # float32 inputs, or integers transformed in float32 (torch.fft's, whose float32
        # arithmetic is not numpy's)
        loose = dtype == torch.float32 or any(
            t.dtype == torch.complex64 or op.name.startswith("fft.") and t.dtype == torch.float32
            for t in _leaves(want, torch.Tensor))
        assert_same(got, want, f"sample {index}: {sample.summary()}",
                    rtol=1e-5 if loose else 1e-7, atol=1e-5 if loose else 1e-7)


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_forward_float64(op: Any) -> None:
    _run_check(op, "forward", lambda left_out: _check_forward(op, torch.float64, left_out))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_forward_other_dtypes(op: Any, dtype: torch.dtype) -> None:
    _run_check(op, str(dtype).removeprefix("torch."),
               lambda left_out: _check_forward(op, dtype, left_out))


# -- derivatives ------------------------------------------------------------------------


def _differentiable(value: Any, kind: type) -> list:
    return [t for t in _leaves(value, kind) if t.requires_grad and t.dtype.is_floating_point]


def _cotangents(outputs: list, seed: int) -> list[np.ndarray]:
    """One weight per output element (per real and imaginary part of a complex one)."""
    generator = np.random.default_rng(seed)
    return [generator.standard_normal(tuple(o.shape) + ((2,) if o.dtype.is_complex else ()))
            for o in outputs]


def _real_view(library: Any, output: Any) -> Any:
    """A complex output as its (real, imaginary) parts, the loss being real."""
    return library.view_as_real(output.resolve_conj()) if output.dtype.is_complex else output


def _reverse(library: Any, inputs: list, outputs: list, create_graph: bool) -> list:
    weights = [library.tensor(c, dtype=library.float64) for c in _cotangents(outputs, 1)]
    total = sum((_real_view(library, o) * w).sum()
                for o, w in zip(outputs, weights, strict=True))
    return list(library.autograd.grad(total, inputs, allow_unused=True,
                                      create_graph=create_graph))


def _gradients(op: Any, sample: Any, library: Any, order: int) -> list:
    """d(output . w)/d(inputs) and, for order 2, d(grads . v)/d(inputs), as arrays; the
    outputs are the sample's output_process_fn_grad of the op's, as in torch's own gradient
    tests (for most ops the identity; for a factorization the part that is defined)."""
    if library is torch:
        result = _call_torch(op, sample)
        inputs = _differentiable((sample.input, sample.args, sample.kwargs), torch.Tensor)
        kind = torch.Tensor
    else:
        converted = (to_gradgen(sample.input), to_gradgen(sample.args),
                     to_gradgen(sample.kwargs))
        result = _gradgen_callable(op)(converted[0], *converted[1], **converted[2])
        inputs = _differentiable(converted, runtime.Tensor)
        kind = runtime.Tensor
    result = sample.output_process_fn_grad(result)
    outputs = [o for o in _leaves(result, kind) if o.requires_grad]
    if not inputs or not outputs:
        return []
    grads = _reverse(library, inputs, outputs, create_graph=order == 2)
    if order == 1:
        return [_array(g) for g in grads]
    present = [g for g in grads if g is not None and g.requires_grad]
    if not present:
        return []
    second = _reverse(library, inputs, present, create_graph=False)
    return [_array(g) for g in second]


def _array(tensor: Any) -> np.ndarray | None:
    """A gradient as an array (torch's efficient zero tensors as zeros)."""
    if tensor is None:
        return None
    if isinstance(tensor, torch.Tensor) and tensor._is_zerotensor():
        return np.zeros(tuple(tensor.shape))
    return tensor.detach().resolve_conj().numpy()


def _check_gradients(op: Any, order: int, left_out: Callable[[Any], bool]) -> None:
    for index, sample in _samples(op, torch.float64, True, left_out):
        try:
            want = _gradients(op, sample, torch, order)
        except RuntimeError:
            # torch's own second order fails on some samples (native_layer_norm without a
            # weight: an undefined gradient reaches a formula); nothing to compare with.
            assert order == 2
            continue
        got = _gradients(op, sample, runtime, order)
        where = f"sample {index}: {sample.summary()}"
        assert_same_derivatives(got, want, where)


@pytest.mark.parametrize("op", [op for op in OPS if op.supports_autograd],
                         ids=[IDS[i] for i, op in enumerate(OPS) if op.supports_autograd])
def test_backward(op: Any) -> None:
    if torch.float64 in op.supported_backward_dtypes("cpu"):
        _run_check(op, "backward", lambda left_out: _check_gradients(op, 1, left_out))


@pytest.mark.parametrize("op", [op for op in OPS if op.supports_gradgrad],
                         ids=[IDS[i] for i, op in enumerate(OPS) if op.supports_gradgrad])
def test_gradgrad(op: Any) -> None:
    if torch.float64 in op.supported_backward_dtypes("cpu"):
        _run_check(op, "gradgrad", lambda left_out: _check_gradients(op, 2, left_out))


def dual_arguments(sample: Any, library: Any, copy: bool = False) -> tuple:
    """(input, args, kwargs) of a sample in `library`, each floating tensor that requires
    grad made a dual tensor with a fixed random tangent (a copy of it with `copy`, for a
    call that writes over it). Call inside an open dual level."""
    kind = torch.Tensor if library is torch else runtime.Tensor
    values = (sample.input, sample.args, sample.kwargs)
    if library is not torch:
        values = to_gradgen(values)
    generator = np.random.default_rng(2)

    def dual(value: Any) -> Any:
        if isinstance(value, kind):
            if not (value.requires_grad and value.dtype.is_floating_point):
                return value.detach()
            tangent = library.tensor(generator.standard_normal(tuple(value.shape)),
                                     dtype=value.dtype)
            primal = value.detach().clone() if copy else value.detach()
            return library.autograd.forward_ad.make_dual(primal, tangent)
        if isinstance(value, list | tuple):
            return type(value)(dual(v) for v in value)
        if isinstance(value, dict):
            return {k: dual(v) for k, v in value.items()}
        return value

    return dual(values)


def _tangents(op: Any, sample: Any, library: Any) -> list:
    """The output tangents for fixed random input tangents, as arrays."""
    forward_ad = library.autograd.forward_ad
    kind = torch.Tensor if library is torch else runtime.Tensor
    with forward_ad.dual_level():
        first, rest, kwargs = dual_arguments(sample, library)
        function = op if library is torch else _gradgen_callable(op)
        result = sample.output_process_fn_grad(function(first, *rest, **kwargs))
        tangents = []
        for output in _leaves(result, kind):
            if output.dtype.is_floating_point:
                tangent = forward_ad.unpack_dual(output).tangent
                tangents.append(_array(tangent))
    return tangents


@pytest.mark.parametrize("op", [op for op in OPS if op.supports_forward_ad],
                         ids=[IDS[i] for i, op in enumerate(OPS) if op.supports_forward_ad])
def test_forward_ad(op: Any) -> None:
    if torch.float64 in op.supported_backward_dtypes("cpu"):
        _run_check(op, "forward_ad", lambda left_out: _check_tangents(op, left_out))



def assert_same_derivatives(got: list, want: list, where: str) -> None:
    """gradgen's gradients or tangents against torch's, input by input, in float64. An
    unused input: torch's None and a zero gradient mean the same."""
    assert len(got) == len(want), where
    for g, w in zip(got, want, strict=True):
        if w is None or g is None:
            assert (w if g is None else g) is None or not np.any(w if g is None else g), where
            continue
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-7, equal_nan=True, err_msg=where)

def _check_tangents(op: Any, left_out: Callable[[Any], bool]) -> None:
    for index, sample in _samples(op, torch.float64, True, left_out):
        want = _tangents(op, sample, torch)
        got = _tangents(op, sample, runtime)
        where = f"sample {index}: {sample.summary()}"
        assert_same_derivatives(got, want, where)


# -- through runtime.compile -------------------------------------------------------------

_COMPILED = {"compiled": 0, "eager": 0}  # samples whose compiled call ran generated code


def _eager_bits(result: Any, inputs: list) -> tuple[list, list]:
    """An op's outputs and its gradients (for the fixed cotangent), as bytes: compiled
    must equal eager gradgen bit for bit."""
    outputs = _leaves(result, runtime.Tensor)
    values = [_to_numpy(o).tobytes() for o in outputs]
    differentiable = [o for o in outputs if o.requires_grad]
    if not inputs or not differentiable:
        return values, []
    grads = _reverse(runtime, inputs, differentiable, create_graph=False)
    return values, [None if g is None else g.numpy().tobytes() for g in grads]


def _check_compiled(op: Any, left_out: Callable[[Any], bool]) -> None:
    function = _gradgen_callable(op)
    for index, sample in _samples(op, torch.float64, True, left_out):
        values = (sample.input, sample.args, sample.kwargs)
        first, rest, kwargs = to_gradgen(values)
        compiled = runtime.compile(lambda a, *args, **kw: function(a, *args, **kw))
        try:
            want = _eager_bits(function(first, *rest, **kwargs),
                               _differentiable((first, rest, kwargs), runtime.Tensor))
        except Exception as error:  # noqa: BLE001 - what gradgen lacks: compiled, the same
            first, rest, kwargs = to_gradgen(values)
            with pytest.raises(type(error)):
                compiled(first, *rest, **kwargs)
            continue
        first, rest, kwargs = to_gradgen(values)
        compiled(first, *rest, **kwargs)  # traced
        first, rest, kwargs = to_gradgen(values)
        got = _eager_bits(compiled(first, *rest, **kwargs),
                          _differentiable((first, rest, kwargs), runtime.Tensor))
        assert got == want, f"sample {index}: {sample.summary()}: {compiled.fallback_reason}"
        _COMPILED["eager" if compiled.fallback_reason else "compiled"] += 1


# Ops whose compiled call does not equal the eager one yet: defects of runtime.compile on
# ops added in one session, not yet investigated.
COMPILED_NOT_YET = {
    "stft": "runtime.compile carries no gradient of a complex output yet",
    "linalg.eigvals": "runtime.compile carries no gradient of a complex output yet",
    "lu": "the compiled step's generated code fails on lu's samples: not yet investigated",
    "matrix_exp": "the compiled backward returns a gradient of the wrong shape: not yet "
                  "investigated",
    **{name: "runtime.compile does not yet carry the gradient of a complex output (the "
             "compiled call's outputs do not require grad): not yet investigated"
       for name in ("complex", "view_as_complex", "polar", "cfloat", "cdouble", "chalf", "fft.fft",
                    "fft.fft2", "fft.fftn", "fft.rfft",
                    "fft.rfft2", "fft.rfftn", "fft.ifft", "fft.ifft2", "fft.ifftn", "fft.ihfft",
                    "fft.ihfft2", "fft.ihfftn")},
}


@pytest.mark.parametrize("op", [op for op in OPS if op.supports_autograd],
                         ids=[IDS[i] for i, op in enumerate(OPS) if op.supports_autograd])
def test_compiled_call_equals_eager(op: Any) -> None:
    """The op called through runtime.compile, twice (the second call runs the generated
    forward, and the generated backward at its node, where it compiles): its outputs and
    gradients are eager gradgen's, bit for bit. Where it does not compile (a view of an
    input returned, a dtype argument) it runs eagerly, with the same result."""
    if torch.float64 in op.supported_backward_dtypes("cpu"):
        if op.name in COMPILED_NOT_YET:
            pytest.xfail(COMPILED_NOT_YET[op.name])
        _check_compiled(op, lambda sample: False)  # (torch's differences do not matter)


def test_compiled_calls_mostly_ran_generated_code() -> None:
    """(After the test above, in the same run:) most samples compiled, so its equality is
    a test of generated code, not of eager against itself."""
    total = _COMPILED["compiled"] + _COMPILED["eager"]
    if total:
        assert _COMPILED["compiled"] >= 0.7 * total, _COMPILED


# -- error inputs -----------------------------------------------------------------------


ERROR_OPS = [op for op in OPS if op.error_inputs_func is not None]


@pytest.mark.parametrize("op", ERROR_OPS, ids=[_opinfo_name(op) for op in ERROR_OPS])
def test_error_inputs(op: Any) -> None:
    _run_check(op, "errors", lambda left_out: _check_errors(op, left_out))


def _check_errors(op: Any, left_out: Callable[[Any], bool]) -> None:
    torch.manual_seed(0)
    for index, error in enumerate(op.error_inputs("cpu")):
        sample = error.sample_input
        if left_out(sample) or _outside_gradgen(sample):
            continue
        where = f"error input {index}: {sample.summary()}"
        try:
            _call_torch(op, sample)
        except error.error_type:
            pass
        else:
            # OpInfo's generic error inputs for two Python numbers (`torch.pow(2, 3)`) are
            # meant for some variants only; torch's own tests pick them by flags. One that
            # torch does not raise on, called this way, has nothing to compare.
            continue
        _compared[0] += 1
        try:
            _call_gradgen(op, sample, requires_grad=False)
        except Exception as raised:  # the class is what is compared
            assert isinstance(raised, error.error_type), \
                f"{where}: {type(raised).__name__}: {raised} (torch: {error.error_type})"
        else:
            raise AssertionError(f"{where}: gradgen returns, torch raises {error.error_type}")


def test_the_mapping_covers_the_spec() -> None:
    """Most of the spec's ops have an OpInfo peer: the mapping must not silently shrink."""
    assert len(OPS) >= 100
    names = {op.name for op in OPS}
    for expected in ("add", "mul", "matmul", "softmax", "nn.functional.cross_entropy",
                     "index_add", "gather", "where", "sum", "native_layer_norm"):
        assert expected in names


if __name__ == "__main__":  # `python tests/test_opinfo.py`: the mapping, one OpInfo a line
    for op in OPS:
        source = _lambda_source(op.op)
        print(f"{_opinfo_name(op):45} -> {source or f'gradgen {op.name}'}")
