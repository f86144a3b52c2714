"""runtime.compile on training steps drawn at random: a small model stacked from a menu of
layers (after a convolution or a recurrent layer, or not), in float32 or float64, a loss
and an optimizer with drawn hyperparameters, gradient clipping or not. Each step must compile (the
menu holds only what compile supports) and give eager's losses, parameters, gradients and
optimizer state, bit for bit, over a few calls. So must the same model compiled on its own
(`runtime.compile(model)`, its backward generated at its node: runtime/compile/joint.py)
in the same step run eagerly. A seeded draw, the same in every run: a failure names its
case, which `_case(seed)` rebuilds."""

from __future__ import annotations

import numpy as np
import pytest

import runtime

nn = runtime.nn
F = runtime.nn.functional

WIDTH, CLASSES, BATCH, STEPS, CASES, MODEL_CASES = 6, 3, 5, 3, 100, 60

ACTIVATIONS = [nn.ReLU, nn.Tanh, nn.Sigmoid, nn.GELU, nn.ELU, nn.Softplus, nn.SiLU,
               lambda: nn.LeakyReLU(0.1), lambda: nn.Dropout(0.3)]
NORMS = [lambda: nn.LayerNorm(WIDTH), lambda: nn.BatchNorm1d(WIDTH)]
LOSSES = {
    "mse": lambda out, y, t: F.mse_loss(out, y),
    "l1": lambda out, y, t: F.l1_loss(out, y),
    "smooth_l1": lambda out, y, t: F.smooth_l1_loss(out, y),
    "huber": lambda out, y, t: F.huber_loss(out, y, delta=0.5),
    "cross_entropy": lambda out, y, t: F.cross_entropy(out, t),
    "smoothed_cross_entropy": lambda out, y, t: F.cross_entropy(out, t, label_smoothing=0.1),
    "nll": lambda out, y, t: F.nll_loss(F.log_softmax(out, dim=1), t),
    "bce_logits": lambda out, y, t: F.binary_cross_entropy_with_logits(out, y.sigmoid()),
    "sum_of_squares": lambda out, y, t: (out - y).pow(2).sum(),
}
OPTIMIZERS = [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.01}), ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.01}), ("AdamW", {"lr": 0.01, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}), ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}),
    ("Adagrad", {"lr": 0.1}), ("Adadelta", {"lr": 1.0}),
]


FAMILIES = ("mlp", "conv", "recurrent")


class _Recurrent(nn.Module):
    """A recurrent layer over a short sequence, its last output to the head."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.rnn = getattr(nn, kind)(WIDTH, WIDTH, batch_first=True)

    def forward(self, x):
        return self.rnn(x.view(x.shape[0], 2, WIDTH // 2).repeat(1, 1, 2))[0][:, -1]


def _case(seed: int) -> dict:
    """The drawn configuration of case `seed`."""
    rng = np.random.default_rng(seed)
    family = FAMILIES[int(rng.integers(len(FAMILIES)))]
    layers = []
    if family == "conv":
        layers = [("conv", int(rng.integers(2))),
                  ("activation", int(rng.integers(len(ACTIVATIONS))))]
    elif family == "recurrent":
        layers = [("recurrent", str(rng.choice(["LSTM", "GRU", "RNN"])))]
    for _ in range(int(rng.integers(1, 4))):
        layers.append(("linear",))
        if rng.random() < 0.3:
            layers.append(("norm", int(rng.integers(len(NORMS)))))
        layers.append(("activation", int(rng.integers(len(ACTIVATIONS)))))
    return {"layers": layers, "loss": str(rng.choice(list(LOSSES))),
            "optimizer": OPTIMIZERS[int(rng.integers(len(OPTIMIZERS)))],
            "clip": bool(rng.random() < 0.3), "float64": bool(rng.random() < 0.3),
            "seed": seed}


def _layer(layer: tuple) -> nn.Module:
    kind = layer[0]
    if kind == "linear":
        return nn.Linear(WIDTH, WIDTH)
    if kind == "norm":
        return NORMS[layer[1]]()
    if kind == "activation":
        return ACTIVATIONS[layer[1]]()
    if kind == "recurrent":
        return _Recurrent(layer[1])
    pool = nn.MaxPool1d(2) if layer[1] else nn.AvgPool1d(2)  # conv: (B, 6) -> (B, 6)
    return nn.Sequential(nn.Unflatten(1, (1, WIDTH)), nn.Conv1d(1, 2, 3, padding=1), pool,
                         nn.Flatten())


def _run(case: dict, compiled: str | None) -> tuple:
    """The drawn step, eager (`compiled` None), compiled whole ("step") or with its model
    compiled ("model"); what it leaves, as bits, and what was compiled."""
    runtime.manual_seed(case["seed"])
    model = nn.Sequential(*map(_layer, case["layers"]), nn.Linear(WIDTH, CLASSES))
    dtype = np.float64 if case["float64"] else np.float32
    if case["float64"]:
        model.double()
    name, options = case["optimizer"]
    optimizer = getattr(runtime.optim, name)(model.parameters(), **options)
    loss_of = LOSSES[case["loss"]]
    forward = runtime.compile(model) if compiled == "model" else model

    def step(x, y, t):
        optimizer.zero_grad()
        loss = loss_of(forward(x), y, t)
        loss.backward()
        if case["clip"]:
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        return loss

    run = runtime.compile(step) if compiled == "step" else step
    generator = np.random.default_rng(case["seed"] + 1)
    losses = []
    for _ in range(STEPS):
        x = runtime.tensor(generator.standard_normal((BATCH, WIDTH)).astype(dtype))
        y = runtime.tensor(generator.standard_normal((BATCH, CLASSES)).astype(dtype))
        t = runtime.tensor(generator.integers(0, CLASSES, BATCH))
        losses.append(run(x, y, t).detach().numpy().tobytes())
    state = [p.detach().numpy().tobytes() for p in model.parameters()]
    state += [p.grad.numpy().tobytes() for p in model.parameters() if p.grad is not None]
    state += [b.numpy().tobytes() for b in model.buffers()]
    state += [value.detach().numpy().tobytes() for per_param in optimizer.state.values()
              for _, value in sorted(per_param.items()) if isinstance(value, runtime.Tensor)]
    return losses, state, forward if compiled == "model" else run


@pytest.mark.parametrize("seed", range(CASES))
def test_a_drawn_step_compiles_and_equals_eager(seed):
    _compiled_like_eager(_case(seed), "step")


@pytest.mark.parametrize("seed", range(CASES, CASES + MODEL_CASES))
def test_a_drawn_model_compiles_and_equals_eager(seed):
    _compiled_like_eager(_case(seed), "model")


def _compiled_like_eager(case: dict, what: str) -> None:
    eager_losses, eager_state, _ = _run(case, None)
    losses, state, compiled = _run(case, what)
    assert compiled.fallback_reason is None, (case, compiled.fallback_reason)
    # (SGD's first step with momentum makes its buffers, copies of the first gradients,
    # unlike its later steps: compiled whole, that step runs eagerly and the next traces.)
    name, options = case["optimizer"]
    first_eager = what == "step" and name == "SGD" and options.get("momentum", 0) != 0
    assert compiled.traces == 1 + first_eager, case
    assert losses == eager_losses, case
    assert state == eager_state, case
