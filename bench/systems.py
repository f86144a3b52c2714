"""The same work written for each system: gradgen (eager, and compiled with runtime.compile),
torch, HIPS autograd and plain numpy.

Each `STEPS[name](weights, x, y, lr)` returns a function that runs one training step of
the seed's TinyModel; `MLP_STEPS[name](weights, x, target, lr)` one of an MLP with
cross-entropy and Adam; `CHAINS[name](n)` a builder for a chain of n tiny ops;
`LONG_CHAINS[name](n)` measures a long chain's time and memory.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

import numpy as np

Weights = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def init_weights(rng: np.random.Generator, d_in: int, hidden: int, d_out: int) -> Weights:
    """nn.Linear's default initialisation: uniform(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    def uniform(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        bound = 1 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    return (uniform((hidden, d_in), d_in), uniform((hidden,), d_in),
            uniform((d_out, hidden), hidden), uniform((d_out,), hidden))


def tinymodel_inputs(batch: int) -> tuple[Weights, np.ndarray, np.ndarray]:
    """The weights, input and target of the TinyModel at `batch`, the same for every system."""
    from bench.common import DIM_IN, DIM_OUT, HIDDEN

    rng = np.random.default_rng(batch)
    weights = init_weights(rng, DIM_IN, HIDDEN, DIM_OUT)
    x = rng.standard_normal((batch, DIM_IN)).astype(np.float32)
    y = rng.standard_normal((batch, DIM_OUT)).astype(np.float32)
    return weights, x, y


# -- one TinyModel training step -------------------------------------------------------------

def _module_step(lib, weights: Weights, x: np.ndarray, y: np.ndarray, lr: float,
                 compile_model: bool = False) -> Callable:
    """The seed program's step, written once against the torch API (torch or gradgen);
    `compile_model`: the model is `lib.compile(model)`, the rest of the step eager."""
    w1, b1, w2, b2 = weights

    class TinyModel(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer1 = lib.nn.Linear(w1.shape[1], w1.shape[0])
            self.relu = lib.nn.ReLU()
            self.layer2 = lib.nn.Linear(w2.shape[1], w2.shape[0])

        def forward(self, x):
            return self.layer2(self.relu(self.layer1(x)))

    model = TinyModel()
    with lib.no_grad():
        for parameter, value in zip(model.parameters(), weights, strict=True):
            parameter.copy_(lib.tensor(value))
    optimizer = lib.optim.SGD(model.parameters(), lr=lr)
    inputs, target = lib.tensor(x), lib.tensor(y)
    forward = lib.compile(model) if compile_model else model

    def step() -> None:
        optimizer.zero_grad()
        prediction = forward(inputs)
        loss = (target - prediction).pow(2).sum()
        loss.backward()
        optimizer.step()

    return step


def _tiny_model(lib, weights: Weights):
    """The seed's TinyModel with `weights`, as _module_step builds it."""
    w1, _, w2, _ = weights

    class TinyModel(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer1 = lib.nn.Linear(w1.shape[1], w1.shape[0])
            self.relu = lib.nn.ReLU()
            self.layer2 = lib.nn.Linear(w2.shape[1], w2.shape[0])

        def forward(self, x):
            return self.layer2(self.relu(self.layer1(x)))

    model = TinyModel()
    with lib.no_grad():
        for parameter, value in zip(model.parameters(), weights, strict=True):
            parameter.copy_(lib.tensor(value))
    return model


def compiled_arguments_step(weights: Weights, x: np.ndarray, y: np.ndarray,
                            lr: float) -> Callable:
    """The compiled step with its batch passed as arguments: `step(inputs, target)`."""
    import runtime

    model = _tiny_model(runtime, weights)
    optimizer = runtime.optim.SGD(model.parameters(), lr=lr)

    def step(inputs, target) -> None:
        optimizer.zero_grad()
        loss = (target - model(inputs)).pow(2).sum()
        loss.backward()
        optimizer.step()

    compiled = runtime.compile(step)
    inputs, target = runtime.tensor(x), runtime.tensor(y)
    return lambda: compiled(inputs, target)


def compiled_attributes_step(weights: Weights, x: np.ndarray, y: np.ndarray,
                             lr: float) -> Callable:
    """The compiled step written as a trainer's method, over `self.model`, `self.opt`,
    `self.x`, `self.y` (guarded along those attribute chains)."""
    import runtime

    class Trainer:
        def __init__(self) -> None:
            self.model = _tiny_model(runtime, weights)
            self.opt = runtime.optim.SGD(self.model.parameters(), lr=lr)
            self.x, self.y = runtime.tensor(x), runtime.tensor(y)

        def step(self) -> None:
            self.opt.zero_grad()
            loss = (self.y - self.model(self.x)).pow(2).sum()
            loss.backward()
            self.opt.step()

    return runtime.compile(Trainer().step)


def gradgen_step(weights: Weights, x: np.ndarray, y: np.ndarray, lr: float) -> Callable:
    import runtime

    return _module_step(runtime, weights, x, y, lr)


def torch_step(weights: Weights, x: np.ndarray, y: np.ndarray, lr: float) -> Callable:
    import torch

    return _module_step(torch, weights, x, y, lr)


def autograd_step(weights: Weights, x: np.ndarray, y: np.ndarray, lr: float) -> Callable:
    import autograd.numpy as anp
    from autograd import grad

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        hidden = anp.maximum(anp.dot(x, w1.T) + b1, 0.0)
        prediction = anp.dot(hidden, w2.T) + b2
        return anp.sum((y - prediction) ** 2)

    gradient = grad(loss)
    params = [w.copy() for w in weights]

    def step() -> None:
        grads = gradient(params, x, y)
        for p, g in zip(params, grads, strict=True):
            p -= lr * g

    return step


def numpy_step(weights: Weights, x: np.ndarray, y: np.ndarray, lr: float) -> Callable:
    """The floor: the same forward, backward and update, written by hand."""
    w1, b1, w2, b2 = (w.copy() for w in weights)

    def step() -> None:
        hidden_pre = x @ w1.T + b1
        hidden = np.maximum(hidden_pre, 0)
        prediction = hidden @ w2.T + b2
        d_prediction = 2 * (prediction - y)
        d_w2 = d_prediction.T @ hidden
        d_b2 = d_prediction.sum(0)
        d_hidden = d_prediction @ w2
        d_hidden *= hidden_pre > 0
        d_w1 = d_hidden.T @ x
        d_b1 = d_hidden.sum(0)
        for p, g in ((w1, d_w1), (b1, d_b1), (w2, d_w2), (b2, d_b2)):
            p -= lr * g

    return step


def compiled_step(weights: Weights, x: np.ndarray, y: np.ndarray, lr: float) -> Callable:
    """gradgen's step through runtime.compile: traced on its first call (a warm-up call),
    then the generated function."""
    import runtime

    return runtime.compile(_module_step(runtime, weights, x, y, lr))


def compiled_model_step(weights: Weights, x: np.ndarray, y: np.ndarray,
                        lr: float) -> Callable:
    """gradgen's step with its model compiled on its own (`model = torch.compile(model)`):
    a generated forward, and a generated backward at its node; the loss, the engine's walk
    and SGD eager."""
    import runtime

    return _module_step(runtime, weights, x, y, lr, compile_model=True)


STEPS: dict[str, Callable] = {
    "gradgen": gradgen_step, "compiled": compiled_step, "compiled model": compiled_model_step,
    "compiled args": compiled_arguments_step, "compiled self": compiled_attributes_step,
    "torch": torch_step, "autograd": autograd_step, "numpy": numpy_step,
}


# -- an MLP with cross-entropy and Adam ------------------------------------------------------

MlpWeights = tuple[np.ndarray, ...]


def mlp_inputs(batch: int) -> tuple[MlpWeights, np.ndarray, np.ndarray]:
    """Linear 1000→100, ReLU, Linear 100→100, ReLU, Linear 100→10; class-index targets."""
    from bench.common import DIM_IN, DIM_OUT, HIDDEN

    rng = np.random.default_rng(batch + 1)
    weights = init_weights(rng, DIM_IN, HIDDEN, HIDDEN) + \
        init_weights(rng, HIDDEN, HIDDEN, DIM_OUT)[2:]
    x = rng.standard_normal((batch, DIM_IN)).astype(np.float32)
    target = rng.integers(0, DIM_OUT, batch)
    return weights, x, target


def _module_mlp_step(lib, weights: MlpWeights, x: np.ndarray, target: np.ndarray,
                     lr: float) -> Callable:
    linears = [lib.nn.Linear(w.shape[1], w.shape[0]) for w in weights[::2]]
    model = lib.nn.Sequential(linears[0], lib.nn.ReLU(), linears[1], lib.nn.ReLU(), linears[2])
    with lib.no_grad():
        for parameter, value in zip(model.parameters(), weights, strict=True):
            parameter.copy_(lib.tensor(value))
    optimizer = lib.optim.Adam(model.parameters(), lr=lr)
    inputs, labels = lib.tensor(x), lib.tensor(target)

    def step() -> None:
        optimizer.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(inputs), labels)
        loss.backward()
        optimizer.step()

    return step


class _Adam:
    """Adam by hand on arrays, in PyTorch's order of operations."""

    def __init__(self, params: list[np.ndarray], lr: float, betas=(0.9, 0.999),
                 eps: float = 1e-8) -> None:
        self.params, self.lr, self.betas, self.eps = params, lr, betas, eps
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads: list[np.ndarray]) -> None:
        self.t += 1
        beta1, beta2 = self.betas
        correction1 = 1 - beta1 ** self.t
        correction2 = (1 - beta2 ** self.t) ** 0.5
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            m += (1 - beta1) * (g - m)
            v *= beta2
            v += (1 - beta2) * (g * g)
            p -= (self.lr / correction1) * (m / (np.sqrt(v) / correction2 + self.eps))


def numpy_mlp_step(weights: MlpWeights, x: np.ndarray, target: np.ndarray,
                   lr: float) -> Callable:
    """The floor: forward, softmax cross-entropy, backward and Adam, by hand."""
    params = [w.copy() for w in weights]
    adam = _Adam(params, lr)
    rows = np.arange(len(target))

    def step() -> None:
        w1, b1, w2, b2, w3, b3 = params
        h1_pre = x @ w1.T + b1
        h1 = np.maximum(h1_pre, 0)
        h2_pre = h1 @ w2.T + b2
        h2 = np.maximum(h2_pre, 0)
        logits = h2 @ w3.T + b3
        shifted = logits - logits.max(1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        _loss = -log_p[rows, target].mean()
        d_logits = np.exp(log_p)
        d_logits[rows, target] -= 1
        d_logits /= len(target)
        d_h2 = d_logits @ w3
        d_h2 *= h2_pre > 0
        d_h1 = d_h2 @ w2
        d_h1 *= h1_pre > 0
        adam.step([d_h1.T @ x, d_h1.sum(0), d_h2.T @ h1, d_h2.sum(0), d_logits.T @ h2,
                   d_logits.sum(0)])

    return step


def autograd_mlp_step(weights: MlpWeights, x: np.ndarray, target: np.ndarray,
                      lr: float) -> Callable:
    import autograd.numpy as anp
    from autograd import grad

    rows = np.arange(len(target))

    def loss(params):
        w1, b1, w2, b2, w3, b3 = params
        h1 = anp.maximum(anp.dot(x, w1.T) + b1, 0.0)
        h2 = anp.maximum(anp.dot(h1, w2.T) + b2, 0.0)
        logits = anp.dot(h2, w3.T) + b3
        shifted = logits - anp.max(logits, axis=1, keepdims=True)
        log_p = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
        return -anp.mean(log_p[rows, target])

    gradient = grad(loss)
    params = [w.copy() for w in weights]
    adam = _Adam(params, lr)
    return lambda: adam.step(gradient(params))


MLP_STEPS: dict[str, Callable] = {
    "gradgen": lambda *a: _module_mlp_step(_lib("gradgen"), *a),
    "compiled": lambda *a: _lib("gradgen").compile(_module_mlp_step(_lib("gradgen"), *a)),
    "torch": lambda *a: _module_mlp_step(_lib("torch"), *a),
    "autograd": autograd_mlp_step,
    "numpy": numpy_mlp_step,
}


def gradgen_forward_backward(weights: Weights, x: np.ndarray, y: np.ndarray):
    """gradgen's forward and backward as two calls, to time backward alone."""
    import runtime

    params = [runtime.tensor(w, requires_grad=True) for w in weights]
    inputs, target = runtime.tensor(x), runtime.tensor(y)

    def forward():
        for p in params:
            p.grad = None
        w1, b1, w2, b2 = params
        prediction = runtime.linear(runtime.linear(inputs, w1, b1).relu(), w2, b2)
        return (target - prediction).pow(2).sum()

    def backward(loss) -> None:
        loss.backward()

    return forward, backward


# -- chains of tiny ops ----------------------------------------------------------------------

def _chain(lib, n: int) -> Callable[[], Callable[[], None]]:
    def build() -> Callable[[], None]:
        x = lib.ones(4, requires_grad=True)
        y = x
        for _ in range(n):
            y = y * 1.0001
        loss = y.sum()
        return loss.backward

    return build


def _autograd_chain(n: int) -> Callable[[], Callable[[], None]]:
    """HIPS autograd traces during the call, so forward and backward are timed as a pair:
    the forward half is its traced evaluation, the backward half the VJP sweep."""
    from autograd.core import make_vjp

    def f(x):
        for _ in range(n):
            x = x * 1.0001
        return x.sum()

    def build() -> Callable[[], None]:
        vjp, _ = make_vjp(f, np.ones(4))
        return lambda: vjp(1.0)

    return build


def _lib(name: str):
    if name == "torch":
        import torch

        return torch
    import runtime

    return runtime


CHAINS: dict[str, Callable] = {
    "gradgen": lambda n: _chain(_lib("gradgen"), n),
    "torch": lambda n: _chain(_lib("torch"), n),
    "autograd": _autograd_chain,
}


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def _long_chain(name: str, n: int) -> dict:
    """Build and backward a chain of n ops: the times, and the memory the graph keeps
    per node (resident set size before and after building, the same measure for all)."""
    lib = _lib(name)
    gc.collect()
    before = _rss()
    start = time.perf_counter()
    x = lib.ones(1, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    loss = y.sum()
    built = time.perf_counter()
    kept = _rss() - before
    loss.backward()
    done = time.perf_counter()
    del x, y, loss
    return {"build_s": built - start, "backward_s": done - built, "bytes_per_node": kept / n}


LONG_CHAINS: dict[str, Callable] = {
    "gradgen": lambda n: _long_chain("gradgen", n),
    "torch": lambda n: _long_chain("torch", n),
}
