"""torch's module names for gradgen's modules, and the import hook that maps one onto the other.

With the hook installed (`install_as_torch()`, or `python -m runtime prog.py`), `import torch`
gives the module `runtime` itself, `import torch.nn.functional as F` gives
`runtime.nn.functional`, and so on for every name of TORCH_MODULES: the same module objects,
never copies, so `torch.Tensor is runtime.Tensor`. A `torch.*` module outside the table is a
ModuleNotFoundError that says gradgen lacks it: the real torch is never loaded behind the
program's back. A missing attribute of a mapped module is an AttributeError that says the
same (`missing_attribute`, which each mapped package calls from its module `__getattr__`).

This module imports nothing of gradgen's at module level, so every layer may use it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

__all__ = ["TORCH_MODULES", "install_as_torch", "is_installed", "missing_attribute",
           "uninstall_as_torch"]

# torch's name -> gradgen's module of that name. Only these import as torch.*.
TORCH_MODULES: dict[str, str] = {
    "torch": "runtime",
    "torch.accelerator": "runtime.accelerator",
    "torch.autograd": "runtime.autograd",
    "torch.autograd.forward_ad": "runtime.autograd.forward_ad",
    "torch.autograd.function": "runtime.autograd.function",
    "torch.autograd.functional": "runtime.autograd.functional",
    "torch.autograd.gradcheck": "runtime.autograd.gradcheck",
    "torch.autograd.graph": "runtime.autograd.graph",
    "torch.autograd.profiler": "runtime.autograd.profiler",
    "torch.autograd.variable": "runtime.autograd.variable",
    "torch.cuda": "runtime.cuda",
    "torch.cpu": "runtime.cpu",  # the CPU as a device module (torch.get_device_module)
    "torch.amp": "runtime.amp",  # autocast (off, as gradgen has none) and GradScaler
    "torch.storage": "runtime.storage",  # UntypedStorage, TypedStorage
    "torch.cuda.amp": "runtime.cuda_amp",  # the deprecated spellings of torch.amp's
    "torch.cpu.amp": "runtime.cpu_amp",
    "torch.fft": "runtime.fft",
    "torch.func": "runtime.func",
    "torch.linalg": "runtime.linalg",
    "torch.nn": "runtime.nn",
    "torch.nn.functional": "runtime.nn.functional",
    "torch.nn.init": "runtime.nn.init",
    "torch.nn.parameter": "runtime.nn.parameter",
    "torch.nn.utils": "runtime.nn.utils",
    "torch.nn.utils.clip_grad": "runtime.nn.utils.clip_grad",
    "torch.optim": "runtime.optim",
    "torch.overrides": "runtime.overrides",  # TorchFunctionMode (runtime/modes.py's stack)
    "torch.profiler": "runtime.profiler",
    "torch.random": "runtime.random",
    "torch.special": "runtime.special",
    # data loading, optimizers' schedules, saving
    "torch.utils": "runtime.utils",
    "torch.utils.data": "runtime.utils.data",
    "torch.utils._python_dispatch": "runtime.utils._python_dispatch",  # TorchDispatchMode
    "torch.utils.data.dataloader": "runtime.utils.data.dataloader",
    "torch.utils.data.dataset": "runtime.utils.data.dataset",
    "torch.utils.data.sampler": "runtime.utils.data.sampler",
    "torch.utils.data.distributed": "runtime.utils.data.distributed",
    "torch.optim.lr_scheduler": "runtime.optim.lr_scheduler",
    "torch.optim.swa_utils": "runtime.optim.swa_utils",
    "torch.nn.utils.convert_parameters": "runtime.nn.utils.convert_parameters",
    "torch.serialization": "runtime.serialization",
    # around torch.compile
    "torch.compiler": "runtime.compiler",
    "torch._dynamo": "runtime._dynamo",
    "torch._dynamo.config": "runtime.compile.config",
    # torch.distributions and its modules
    **{f"torch.distributions{name}": f"runtime.distributions{name}" for name in (
        "", ".constraints", ".distribution", ".exp_family", ".kl", ".utils", ".bernoulli",
        ".beta", ".categorical", ".dirichlet", ".exponential", ".gamma", ".independent",
        ".multivariate_normal", ".normal", ".uniform", ".transforms", ".constraint_registry",
        ".transformed_distribution", ".laplace", ".cauchy", ".log_normal", ".gumbel",
        ".geometric", ".one_hot_categorical", ".relaxed_bernoulli", ".mixture_same_family",
        ".half_normal", ".chi2", ".weibull", ".binomial", ".half_cauchy", ".studentT",
        ".pareto", ".poisson", ".multinomial", ".continuous_bernoulli", ".fishersnedecor",
        ".generalized_pareto", ".inverse_gamma", ".kumaraswamy", ".logistic_normal",
        ".negative_binomial", ".relaxed_categorical", ".lowrank_multivariate_normal",
        ".von_mises", ".lkj_cholesky", ".wishart")},
    "torch.utils.checkpoint": "runtime.utils.checkpoint",
    "torch.utils.benchmark": "runtime.utils.benchmark",
    # issue 28, helper nnlayers: where programs import pad_sequence & co. from
    "torch.nn.utils.rnn": "runtime.nn.utils.rnn",
    # torch.backends: the flags of a CPU-only torch
    **{f"torch.backends{name}": f"runtime.backends{name}" for name in (
        "", ".cpu", ".cuda", ".cudnn", ".mkl", ".mkldnn", ".mps", ".openmp", ".opt_einsum")},
    # issue 28, helper nnB: nn.utils' modules
    "torch.nn.utils.fusion": "runtime.nn.utils.fusion",
    "torch.nn.utils.parametrizations": "runtime.nn.utils.parametrizations",
    "torch.nn.utils.parametrize": "runtime.nn.utils.parametrize",
    "torch.nn.utils.prune": "runtime.nn.utils.prune",
    "torch.nn.utils.stateless": "runtime.nn.utils.stateless",
    # functorch, the package torch ships beside itself (its deprecated transforms)
    "functorch": "runtime.functorch",
    "torch.optim.optimizer": "runtime.optim.optimizer",  # Optimizer, the global step hooks
}

# The top-level packages the finder answers for: torch's own and those torch ships.
ROOTS = ("torch", "functorch")


def _is_aliased(name: str) -> bool:
    """Whether `name` is one of ROOTS or inside one."""
    return name.partition(".")[0] in ROOTS

_GRADGEN_NAMES = {gradgen: torch for torch, gradgen in TORCH_MODULES.items()}


def torch_name(module: str) -> str:
    """torch's name for one of gradgen's modules (`runtime.nn` -> `torch.nn`)."""
    return _GRADGEN_NAMES.get(module, module)


def not_in_gradgen(name: str) -> str:
    return f"{name} is not in gradgen (yet)"


def missing_attribute(module: str, name: str) -> AttributeError:
    """The error for `torch.nn.X` when gradgen's `runtime.nn` has no X; `module` is the
    module's own `__name__`."""
    owner = torch_name(module)
    return AttributeError(f"module '{owner}' has no attribute '{name}': "
                          f"{not_in_gradgen(f'{owner}.{name}')}", name=name)


class _AliasLoader(importlib.abc.Loader):
    """Gives the gradgen module itself as the module of a torch name."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        # The import system stamped the torch name's spec on the module: it keeps its own.
        module.__spec__ = module.__spec__.loader_state


class TorchFinder(importlib.abc.MetaPathFinder):
    """A `sys.meta_path` finder that answers every `torch` and `torch.*` import (and
    `functorch`, which torch ships beside itself)."""

    def find_spec(self, fullname: str, path: Any = None,
                  target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not _is_aliased(fullname):
            return None
        gradgen_name = TORCH_MODULES.get(fullname)
        if gradgen_name is None:
            raise ModuleNotFoundError(not_in_gradgen(fullname), name=fullname)
        # Imported here, to tell a package from a module: the spec must say which, or the
        # import system would give a module a __path__.
        module = importlib.import_module(gradgen_name)
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              is_package=hasattr(module, "__path__"))
        spec.loader_state = module.__spec__
        return spec


_finder = TorchFinder()


def is_installed() -> bool:
    return _finder in sys.meta_path


def _real_torch_modules() -> list[str]:
    """Modules of the real torch already imported (whatever does not belong to gradgen)."""
    gradgen = set(TORCH_MODULES.values())
    return [name for name, module in sys.modules.items()
            if _is_aliased(name) and getattr(module, "__name__", None) not in gradgen]


def install_as_torch() -> None:
    """From now on, `import torch` (and each `torch.*` of TORCH_MODULES) imports gradgen.

    Refused if the real torch is already imported: its modules would then import gradgen's
    under its own names, and the program would mix the two.
    """
    if is_installed():
        return
    real = _real_torch_modules()
    if real:
        raise RuntimeError(f"the real torch is already imported ({real[0]}): gradgen cannot "
                           "stand in for it in this process")
    sys.meta_path.insert(0, _finder)


def uninstall_as_torch() -> None:
    """Undo install_as_torch: `torch` names no gradgen module any more."""
    while _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [name for name in sys.modules if _is_aliased(name)]:
        if getattr(sys.modules[name], "__name__", None) in _GRADGEN_NAMES:
            del sys.modules[name]
