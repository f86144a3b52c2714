"""gradgen's runtime: `import runtime as torch` runs a small PyTorch autograd program, and
`python -m runtime prog.py` runs one unchanged (`install_as_torch()` from Python).

Tensor, the engine and the grad modes are hand-written; the ops come from the spec
(generated/ops.py) and from composite.py. This file is the top: it imports every layer.
Below it, a module imports only modules of earlier rows, lower layers, and never this
package (tests/test_import_graph.py checks it). Row by row, with what each imports:

    aliases (torch's module names),      the standard library
    modes (the mode stack every public
    function and op consults)
    devices
    cpu_math, sampling, sampling_serial  numpy and the standard library: torch's CPU
                                         sampling kernels on arrays
    memory_formats                       numpy: torch.memory_format, the layouts on arrays
    kernels, grad_mode, anomaly, hooks,  numpy and the standard library (kernels also
    _tensor_str, manual                  sampling, cpu_math); manual (the helpers formulas call)
                                         is given its ops
    dtypes                               kernels
    _tensor (the Tensor class)           dtypes, devices, grad_mode, hooks, _tensor_str
    forward_grad, predicates, random     _tensor (random also kernels: the Generator
                                         installs itself there for dropout)
    arguments                            _tensor, dtypes, devices, random: torch's
                                         argument parser, for every call (generated
                                         wrappers, overloads, factories, hand-written ops)
    out (the out= keyword)               _tensor, dtypes, grad_mode, forward_grad: factories,
                                         generated/ and composite hand an out= call to it
    namespaces                           arguments, dtypes, kernels: the ops formulas
                                         call, filled in last, below
    node, factories                      _tensor, forward_grad, arguments, namespaces
                                         (factories also generated.signatures, out)
    random_ops                           factories, random, sampling
    recording, engine                    node, namespaces: what wrappers call; the
                                         backward pass
    generated/                           recording, node, arguments, namespaces, manual
    composite                            generated.ops, factories, devices, random_ops
    autograd                             engine, generated.ops, recording, random_ops
    other_names                          generated.ops, _tensor: torch's other names of ops
                                         (arccos, clip_, swapaxes, ...)
    tensor_attributes                    generated.ops, _tensor: predicates, memory facts,
                                         conj & co, apply_/map_, as_subclass
    tensor_functions                     generated.ops, factories, linalg: composites (atleast_1d,
                                         kron, cov, splits and stacks, det, ...)
    counting                             kernels, recording, _tensor: results without a
                                         gradient (bincount, histc, isin, gcd, ...)
    histograms                           factories, recording, node: histogram,
                                         histogramdd (torch's NotImplemented node)
    old_linalg                           linalg, out: orgqr, nuclear_norm, native_norm
    global_flags                         anomaly, factories: process switches (anomaly,
                                         warn-always, autocast off), scalar_tensor, range
    windows                              factories: hann_window, kaiser_window, ...
    methods                              generated.tensor_methods, composite, autograd,
                                         predicates, random_ops, other_names,
                                         tensor_attributes, tensor_functions,
                                         counting: sets the op methods on
                                         Tensor
    nn, optim, linalg, special, fft      composite, generated.ops, factories, _tensor,
                                         random (special, fft also out)
    utils (torch.utils.data),            random_ops, factories, generated.ops, nn,
    serialization (save, load)           dtypes, _tensor
    func                                 autograd, forward_grad, generated.ops, factories,
                                         random: torch.func's transforms
    overrides (torch.overrides)          modes, _tensor: TorchFunctionMode

    distributions                        generated.ops, factories, random_ops, nn, linalg,
                                         autograd, sampling_serial: torch.distributions
    profiler                             engine, kernels, namespaces, generated.ops: times
                                         ops and backward nodes while it records
    viz (not imported here)              nn, runtime.__main__: draws a graph
    explore (imported when first read)   viz, engine, profiler, generated.explore_data:
                                         the explorer page, `runtime.explore(loss)`
    compile                              generated.ops, kernels, recording, nn, optim,
                                         autograd: a traced step as straight-line numpy
    cuda, accelerator                    devices: no device but the CPU
    backends, deterministic              the standard library: torch.backends' flags,
                                         use_deterministic_algorithms
    legacy                               factories, dtypes, _tensor: FloatTensor & co,
                                         Variable, finfo/iinfo, the thread counts
    version                              the standard library: torch.__version__
"""

from __future__ import annotations

from types import FunctionType as _FunctionType
from typing import Any as _Any

from generated import ops as _ops
from generated.ops import *  # noqa: F403 - the ops of the spec
from runtime import (
    _dynamo,  # noqa: F401 - torch._dynamo (reset, config), for torch.compile's programs
    accelerator,
    autograd,
    backends,  # torch.backends: cudnn, mps, mkldnn... as a CPU-only torch reports them
    compiler,
    cuda,
    distributions,  # torch.distributions
    dtypes,
    fft,  # torch.fft: the frequencies and shifts (no complex dtypes, so no transforms yet)
    func,
    linalg,
    methods,  # noqa: F401 - imported to set the op methods on Tensor
    nn,
    optim,
    overrides,  # torch.overrides: TorchFunctionMode
    profiler,
    random,
    serialization,  # torch.serialization: save, load
    special,  # torch.special
    utils,  # torch.utils.data
)
from runtime import arguments as _arguments
from runtime import factories as _factories
from runtime import legacy as _legacy
from runtime import namespaces as _namespaces
from runtime._tensor import Size, Tensor
from runtime._tensor_str import get_printoptions, printoptions, set_printoptions
from runtime.aliases import install_as_torch, uninstall_as_torch
from runtime.aliases import missing_attribute as _missing_attribute
from runtime.compile import compile  # noqa: A004 - torch.compile: a step as one function
from runtime.composite import *  # noqa: F403 - the composite ops
from runtime.counting import *  # noqa: F403 - bincount, histc, isin, gcd, ...
from runtime.deterministic import (  # torch.use_deterministic_algorithms and friends
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode,
    use_deterministic_algorithms,
)
from runtime.devices import device, get_default_device, set_default_device
from runtime.distributions.samplers import (  # torch's samplers under the distributions
    _dirichlet_grad,
    _sample_dirichlet,
    _standard_gamma,
    _standard_gamma_grad,
    binomial,
    poisson,
)
from runtime.dtypes import bfloat16 as bfloat16  # numpy's from ml_dtypes
from runtime.dtypes import (
    bool_ as bool,  # noqa: A004 - torch.bool
)
from runtime.dtypes import (
    double,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int32,
    int64,
    long,
    set_default_dtype,
    uint8,
)
from runtime.dtypes import dtype as dtype
from runtime.dtypes import float as float  # noqa: A004 - torch.float
from runtime.dtypes import int as int  # noqa: A004 - torch.int
from runtime.factories import *  # noqa: F403
from runtime.global_flags import *  # noqa: F403 - set_anomaly_enabled, autocast off, ...
from runtime.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from runtime.histograms import *  # noqa: F403 - histogram, histogramdd
from runtime.legacy import *  # noqa: F403 - FloatTensor & co, finfo, iinfo, threads
from runtime.nn.conv import conv1d, conv2d
from runtime.nn.pooling import adaptive_avg_pool1d, avg_pool1d, max_pool1d, max_pool2d
from runtime.old_linalg import *  # noqa: F403 - orgqr, nuclear_norm, native_norm
from runtime.other_names import *  # noqa: F403 - arccos, clip, divide, ...: other names
from runtime.predicates import *  # noqa: F403 - isnan, isclose, equal, ...
from runtime.random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
    thread_safe_generator,
)
from runtime.random_functions import *  # noqa: F403 - torch.normal over the spec's ops
from runtime.random_ops import *  # noqa: F403
from runtime.serialization import load, save  # torch.save / torch.load
from runtime.tensor_attributes import *  # noqa: F403 - is_signed, conj, square, ...
from runtime.tensor_functions import *  # noqa: F403 - atleast_1d, kron, cov, ...
from runtime.version import __version__
from runtime.windows import *  # noqa: F403 - hann_window & co

# Last, when the ops and Tensor exist: what formulas call through `ops` (runtime/namespaces.py).
_namespaces.install(_ops, Tensor, _factories)


# -- numpy-style keywords for the hand-written functions (`torch.softmax(x, axis=1)`) --------
# torch binds these through its argument parser, which takes them; the generated ops take
# them in their wrappers, the factories in their parser (runtime/arguments.py). Only the
# names here get them: torch.nn.functional's Python functions (F.softmax) take none, as in
# torch.
def _take_numpy_keywords(namespace: dict) -> None:
    for name, value in list(namespace.items()):
        if isinstance(value, _FunctionType) and value.__module__ in _HAND_WRITTEN and \
                not name.startswith("_") and name not in _arguments.TORCH_PYTHON_FUNCTIONS:
            namespace[name] = _arguments.numpy_keywords(value)


_HAND_WRITTEN = frozenset({"runtime.composite", "runtime.predicates", "runtime.nn.conv",
                           "runtime.nn.pooling", "runtime.random_ops"})
_take_numpy_keywords(globals())

__all__ = [
    "Tensor", "Size", "autograd", "func", "dtypes", "nn", "optim", "random", "cuda",
    "accelerator", "device", "get_default_device", "set_default_device", "bool", "double",
    "float32", "float64", "float", "int", "int32", "int64", "long",
    "uint8", "dtype", "profiler", "get_default_dtype", "set_default_dtype", "Generator",
    "default_generator", "get_rng_state", "initial_seed", "manual_seed", "seed",
    "set_rng_state", "enable_grad", "inference_mode", "is_grad_enabled",
    "is_inference_mode_enabled", "no_grad", "set_grad_enabled", "set_printoptions",
    "get_printoptions", "printoptions", "install_as_torch", "uninstall_as_torch", "__version__",
    "utils", "serialization", "save", "load", "linalg", "float16", "half", "bfloat16",
    "compile", "compiler", "thread_safe_generator", "overrides", "special", "fft",
    "distributions", "_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet",
    "_dirichlet_grad", "binomial", "poisson", "backends", "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode", "get_deterministic_debug_mode",
    "conv1d", "conv2d", "max_pool1d", "max_pool2d", "avg_pool1d", "adaptive_avg_pool1d",
    *_legacy.__all__,
]

# -- issue 28, helper nnlayers: torch.* spellings of the nn functions ----------------------------
from runtime.nn import torch_functions as _nn_torch_functions  # noqa: E402
from runtime.nn.torch_functions import *  # noqa: E402, F403

__all__ += _nn_torch_functions.__all__

# -- issue 28, helper nnB: torch.feature_dropout & co, pooling ----------------------------
from runtime.nn.dropout_ops import (  # noqa: E402
    alpha_dropout,
    alpha_dropout_,
    feature_alpha_dropout,
    feature_alpha_dropout_,
    feature_dropout,
    feature_dropout_,
)
from runtime.nn.pooling_more import (  # noqa: E402
    adaptive_max_pool1d_with_indices as adaptive_max_pool1d,
)
from runtime.nn.pooling_more import max_pool1d_with_indices, max_pool3d  # noqa: E402
from runtime.nn.utils.weight_norm import _weight_norm as _weight_norm  # noqa: E402
from runtime.nn.utils.weight_norm import norm_except_dim  # noqa: E402

__all__ += ["alpha_dropout", "alpha_dropout_", "feature_alpha_dropout",
            "feature_alpha_dropout_", "feature_dropout", "feature_dropout_",
            "adaptive_max_pool1d", "max_pool1d_with_indices", "max_pool3d",
            "norm_except_dim"]
# -- end of nnB's block ---------------------------------------------------------------------

# -- issue 27, helper nnA: torch.* spellings of the convolutions ----------------------------
from runtime.nn.conv import (  # noqa: E402
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)

__all__ += ["conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
from runtime.nn.grid_sample import grid_sampler  # noqa: E402

# the antialiased resizes with their .vec overloads
from runtime.nn.upsampling import _upsample_bicubic2d_aa as _upsample_bicubic2d_aa  # noqa: E402
from runtime.nn.upsampling import _upsample_bilinear2d_aa as _upsample_bilinear2d_aa  # noqa: E402
from runtime.nn.upsampling import _upsample_lanczos2d_aa as _upsample_lanczos2d_aa  # noqa: E402

__all__ += ["grid_sampler"]
# -- end of nnA's block ---------------------------------------------------------------------


# -- issue 28, helper names: the *_copy functions, storages, sym_*, amp ---------------------
from runtime import view_copies as _view_copies  # noqa: E402
from runtime.view_copies import *  # noqa: E402, F403

__all__ += _view_copies.__all__
from runtime import cpu  # noqa: E402 - torch.cpu
from runtime import more_names as _more_names  # noqa: E402
from runtime.more_names import *  # noqa: E402, F403 - sym_*, asarray, frombuffer, ...

__all__ += [*_more_names.__all__, "cpu"]
methods.install(_more_names.NamesMethods)
from runtime import storage as _storage  # noqa: E402
from runtime.storage import *  # noqa: E402, F403 - UntypedStorage, FloatStorage, ...

__all__ += _storage.__all__
methods.install(_storage.StorageMethods)
from runtime import amp  # noqa: E402 - torch.amp
from runtime.amp import GradScaler, autocast  # noqa: E402

__all__ += ["amp", "GradScaler", "autocast"]
from runtime.dtypes import int8, int16, short  # noqa: E402

__all__ += ["int8", "int16", "short"]
from runtime.dtypes import uint64  # noqa: E402 - hash_tensor's result dtype

__all__ += ["uint64"]
from runtime.lowrank import pca_lowrank, svd_lowrank  # noqa: E402

__all__ += ["pca_lowrank", "svd_lowrank"]
from runtime.lobpcg import lobpcg  # noqa: E402

__all__ += ["lobpcg"]
# -- end of names' block --------------------------------------------------------------------
# -- issue 28, helper complex: the complex dtypes -------------------------------------------------
from runtime.dtypes import cdouble, cfloat, chalf, complex32, complex64, complex128  # noqa: E402
from runtime.fft import stft  # noqa: E402

__all__ += ["complex64", "complex128", "cfloat", "cdouble", "complex32", "chalf", "stft"]
# -- end of complex's block -----------------------------------------------------------------------
# -- helper linalg (breadth 2): torch.istft -------------------------------------------------
from runtime.fft import istft  # noqa: E402

__all__ += ["istft"]

# -- issue 28, helper nnx: torch.embedding_bag, torch.lstm & co ---------------------------------
from runtime.nn.embedding_bag import _embedding_bag_forward_only as _embedding_bag_forward_only  # noqa: E402, E501
from runtime.nn.embedding_bag import embedding_bag  # noqa: E402
from runtime.nn.rnn_functions import gru, lstm, rnn_relu, rnn_tanh  # noqa: E402

__all__ += ["embedding_bag", "gru", "lstm", "rnn_relu", "rnn_tanh"]
# -- end of nnx's block ---------------------------------------------------------------------------


def __getattr__(name: str) -> _Any:
    if name == "explore":  # gradgen's own, not torch's: imported when first asked for
        import importlib

        return importlib.import_module("runtime.explore")
    raise _missing_attribute(__name__, name)
