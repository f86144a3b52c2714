"""PyTorch's ModuleInfo database (`module_db`, torch.testing._internal.common_modules) as a
peer test of `runtime.compile(module)`: for each nn module gradgen has, the modules and
forward inputs torch's own tests build (float64, training and eval mode), made in gradgen
from the same numbers. A module compiled on its own (a generated forward, and a generated
backward at its node: runtime/compile/joint.py) is called twice beside a copy run eagerly;
the second call's outputs, and the gradients of a fixed random cotangent with respect to
the inputs and the parameters, must be eager gradgen's bit for bit. (Eager gradgen against
torch is tests/test_nn.py's and tests/test_opinfo.py's business.)"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
import torch
from torch.testing._internal.common_modules import module_db

import runtime
from tests.test_opinfo import _leaves, to_gradgen

MAX_INPUTS = 6  # module inputs per module and mode
INFOS = [info for info in module_db if hasattr(runtime.nn, info.module_cls.__name__)]
_COUNTS = {"compiled": 0, "eager": 0}
# Modules whose forward compile runs eagerly, each for a reason it names (the floor below
# leaves them out; their equality with eager is still checked): their Python reads a
# tensor's values (CTC's target loops, GaussianNLLLoss's variance
# check), attention reads tensors through attributes the guards do not follow, the lazy
# modules initialise in a forward hook, circular padding writes through CopySlices.
EAGER_BY_DESIGN = {
    "nn.CTCLoss", "nn.GaussianNLLLoss",
    "nn.MultiheadAttention", "nn.TransformerEncoderLayer", "nn.TransformerDecoderLayer",
    "nn.Transformer", "nn.LazyConv1d", "nn.LazyConv2d", "nn.LazyConv3d",
    "nn.LazyConvTranspose1d", "nn.LazyConvTranspose2d", "nn.LazyConvTranspose3d",
    "nn.CircularPad1d", "nn.CircularPad2d", "nn.CircularPad3d",
}


def _bits(result: Any, inputs: list, module: Any) -> tuple[list, list]:
    """The outputs, and the gradients of (outputs . cotangent) with respect to the inputs
    and the parameters, as bytes."""
    outputs = _leaves(result, runtime.Tensor)
    values = [o.detach().numpy().tobytes() for o in outputs]
    differentiable = [o for o in outputs if o.requires_grad and o.dtype.is_floating_point]
    wrt = inputs + [p for p in module.parameters() if p.requires_grad]
    if not differentiable or not wrt:
        return values, []
    generator = np.random.default_rng(1)
    total = sum((o * runtime.tensor(generator.standard_normal(tuple(o.shape)),
                                    dtype=o.dtype)).sum() for o in differentiable)
    grads = runtime.autograd.grad(total, wrt, allow_unused=True)
    return values, [None if g is None else g.numpy().tobytes() for g in grads]


def _call(module: Any, forward_input: Any, seed: int) -> tuple[list, list]:
    args, kwargs = to_gradgen(forward_input.args), to_gradgen(forward_input.kwargs)
    inputs = [t for t in _leaves((args, kwargs), runtime.Tensor) if t.requires_grad]
    runtime.manual_seed(seed)  # (dropout's and RNNs' draws, alike in both)
    return _bits(module(*args, **kwargs), inputs, module)


@pytest.mark.parametrize("info", INFOS, ids=[info.name for info in INFOS])
def test_a_compiled_module_equals_eager(info: Any) -> None:
    cls = getattr(runtime.nn, info.module_cls.__name__)
    for training in (True, False):
        module_inputs = info.module_inputs_func(info, device="cpu", dtype=torch.float64,
                                                requires_grad=True, training=training)
        for index, module_input in enumerate(module_inputs[:MAX_INPUTS]):
            if module_input.forward_input is None:
                continue
            constructor = module_input.constructor_input
            if any(isinstance(v, torch.nn.Module) for v in
                   [*constructor.args, *constructor.kwargs.values()]):
                continue  # a torch module given to the constructor (a TransformerEncoder's
                # layer): gradgen makes its own modules; tests/test_nn_transformer.py has them
            runtime.manual_seed(0)
            eager = cls(*to_gradgen(constructor.args), **to_gradgen(constructor.kwargs))
            eager.double().train(training)
            twin = copy.deepcopy(eager)
            compiled = runtime.compile(twin)
            where = (info.name, training, index)
            _call(eager, module_input.forward_input, 5)
            _call(compiled, module_input.forward_input, 5)  # traced
            want = _call(eager, module_input.forward_input, 6)
            got = _call(compiled, module_input.forward_input, 6)
            assert got == want, (where, compiled.fallback_reason)
            if info.name in EAGER_BY_DESIGN:
                assert compiled.fallback_reason, (where, "compiles now: leave EAGER_BY_DESIGN")
            else:
                _COUNTS["eager" if compiled.fallback_reason else "compiled"] += 1


def test_compiled_modules_mostly_ran_generated_code() -> None:
    """(After the test above, in the same run:) most module inputs compiled, so its
    equality tests generated code, not eager against itself."""
    total = _COUNTS["compiled"] + _COUNTS["eager"]
    if total:
        assert _COUNTS["compiled"] >= 0.9 * total, _COUNTS
