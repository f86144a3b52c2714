"""runtime.compile of a model (or any function) that returns a graph and calls no
backward: `model = torch.compile(model)` in an eager training loop. The forward runs as
generated code and its outputs get one CompiledFunctionBackward node, whose backward is
generated from the formulas of the nodes the traced forward made (runtime/compile/joint.py).
Each test runs the same loop on the compiled model and on the model itself and compares
the bits: losses, parameters, gradients, buffers."""

from __future__ import annotations

import re

import numpy as np
import pytest

import runtime
from runtime.compile.joint import DOUBLE_BACKWARD
from runtime.node import ERR_BACKWARD_TWICE
from tests.test_compile_programs import _gpt_namespace, _RNNModel

STEPS = 6


def _batches(count: int = STEPS, batch: int = 8, features: int = 12):
    rng = np.random.default_rng(0)
    return [(runtime.tensor(rng.standard_normal((batch, features)).astype(np.float32)),
             runtime.tensor(rng.integers(0, 4, batch))) for _ in range(count)]


def _bits(tensors) -> list[bytes | None]:
    return [None if t is None else t.detach().numpy().tobytes() for t in tensors]


def _loop(make, loss_of, optimizer_of, batches, compiled: bool):
    """An eager training loop over `batches` with the model compiled or not; returns what
    it leaves behind, as bits, and the callable it ran."""
    runtime.manual_seed(0)
    model = make()
    optimizer = optimizer_of(model.parameters())
    forward = runtime.compile(model) if compiled else model
    runtime.manual_seed(11)  # dropout's draws, the same in both
    losses, grads = [], []
    for batch in batches:
        optimizer.zero_grad()
        loss = loss_of(forward, batch)
        loss.backward()
        grads.append(_bits(p.grad for p in model.parameters()))
        optimizer.step()
        losses.append(loss.detach().numpy().tobytes())
    return (losses, grads, _bits(model.parameters()), _bits(model.buffers())), forward


def _compiled_like_eager(make, loss_of, optimizer_of, batches=None):
    batches = batches or _batches()
    expected, _ = _loop(make, loss_of, optimizer_of, batches, compiled=False)
    got, compiled = _loop(make, loss_of, optimizer_of, batches, compiled=True)
    assert got == expected
    assert compiled.fallback_reason is None and compiled.traces == 1
    return compiled


def _mlp(dropout: float = 0.0):
    nn = runtime.nn
    return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Dropout(dropout), nn.Linear(16, 4))


def _cross_entropy(forward, batch):
    return runtime.nn.functional.cross_entropy(forward(batch[0]), batch[1])


def _sgd(parameters):
    return runtime.optim.SGD(parameters, lr=1e-2, momentum=0.9)


@pytest.mark.parametrize("loss", ["cross_entropy", "mse", "sum", "squares"])
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_a_compiled_model_in_an_eager_loop_is_eager_bit_for_bit(loss, optimizer):
    """The model's gradient arrives as cross-entropy, MSE, `sum()` (a broadcast ones) or
    the seed's `(y - p).pow(2).sum()` give it."""
    target = runtime.zeros(8, 4)
    losses = {
        "cross_entropy": _cross_entropy,
        "mse": lambda f, b: runtime.nn.functional.mse_loss(f(b[0]), target),
        "sum": lambda f, b: f(b[0]).sum(),
        "squares": lambda f, b: (target - f(b[0])).pow(2).sum(),
    }
    optimizers = {"SGD": _sgd, "Adam": lambda p: runtime.optim.Adam(p, lr=1e-2)}
    compiled = _compiled_like_eager(_mlp, losses[loss], optimizers[optimizer])
    assert "def forward(a0):" in compiled.code and "def backward(" in compiled.code


def test_a_broadcast_gradient_reaches_the_backward_as_it_is():
    """`out.sum().backward()` gives the model a broadcast ones (strides 0); numpy's matrix
    product sums such an operand in another order than BLAS does a contiguous one. The
    generated backward takes the gradient as the engine gives it, so its products are
    eager's (made contiguous first, layer 2's weight gradient differs from batch 64 on)."""
    nn = runtime.nn
    runtime.manual_seed(0)
    model = nn.Sequential(nn.Linear(1000, 100), nn.ReLU(), nn.Linear(100, 10))
    x = runtime.randn(64, 1000)
    compiled = runtime.compile(model)
    compiled(x)
    grads = []
    for forward in (model, compiled):
        model.zero_grad()
        forward(x).sum().backward()
        grads.append(_bits(p.grad for p in model.parameters()))
    assert compiled.fallback_reason is None and grads[0] == grads[1]


def test_dropout_batch_norm_and_running_stats():
    """Dropout draws in the forward, in eager's order; BatchNorm's running statistics are
    written in place by the forward, and its backward reads the batch's statistics."""
    nn = runtime.nn

    def make():
        return nn.Sequential(nn.Linear(12, 16), nn.BatchNorm1d(16), nn.Tanh(),
                             nn.Dropout(0.3), nn.Linear(16, 4))

    _compiled_like_eager(make, _cross_entropy, _sgd)


def test_the_node_and_its_edges():
    """One node for the outputs, named as PyTorch names it, with an edge per tensor that
    needs a gradient: the parameters' AccumulateGrad."""
    model = _mlp()
    compiled = runtime.compile(model)
    x = _batches()[0][0]
    first = compiled(x)  # the traced call: its outputs get the compiled node too
    assert first.grad_fn.name() == "CompiledFunctionBackward"
    out = compiled(x)
    assert compiled.fallback_reason is None
    assert out.detach().numpy().tobytes() == first.detach().numpy().tobytes()
    node = out.grad_fn
    assert node.name() == "CompiledFunctionBackward"
    assert {id(n.variable) for n, _ in node.next_functions} == {id(p) for p in model.parameters()}
    assert out.requires_grad and not out.is_leaf


def test_a_compiled_block_between_eager_layers():
    """The block's input has a history of its own (an eager layer before it) and the
    input of that layer requires grad: the generated backward hands the block's input
    gradient on to that history, and x.grad is eager's."""
    nn = runtime.nn

    class Net(nn.Module):
        def __init__(self, compiled: bool):
            super().__init__()
            self.stem = nn.Linear(12, 16)
            self.block = nn.Sequential(nn.Tanh(), nn.Linear(16, 16), nn.ReLU())
            self.head = nn.Linear(16, 4)
            self.run_block = runtime.compile(self.block) if compiled else self.block

        def forward(self, x):
            return self.head(self.run_block(self.stem(x)))

    results = []
    for compiled in (False, True):
        runtime.manual_seed(0)
        net = Net(compiled)
        optimizer = _sgd(net.parameters())
        bits = []
        for x, y in _batches():
            x = x.clone().requires_grad_()
            optimizer.zero_grad()
            runtime.nn.functional.cross_entropy(net(x), y).backward()
            optimizer.step()
            bits.append(_bits([x.grad, *net.parameters()]))
        results.append(bits)
        if compiled:
            assert net.run_block.fallback_reason is None and net.run_block.traces == 1
            assert "CompiledFunctionBackward" in _node_names(net(x).grad_fn)
    assert results[0] == results[1]


def _node_names(node) -> set[str]:
    names, stack = set(), [node]
    while stack:
        node = stack.pop()
        names.add(node.name())
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return names


class _TwoHeads(runtime.nn.Module):
    def __init__(self, nn=runtime.nn):
        super().__init__()
        self.body = nn.Linear(12, 16)
        self.left = nn.Linear(16, 4)
        self.right = nn.Linear(16, 3)

    def forward(self, x):
        h = self.body(x).relu()
        return self.left(h), (self.right(h), None)


def test_two_outputs_one_of_them_unused():
    """An output the loss does not use gets zeros from the engine (a Function's missing
    gradients are materialized), which the generated backward takes: the unused head's
    parameters get zero gradients where eager leaves None, as torch.compile does
    (test_unused_output_and_double_backward_as_torch_compile); the rest is eager's."""

    def loss_of(forward, batch):
        left, (right, nothing) = forward(batch[0])
        assert nothing is None and right.requires_grad
        return runtime.nn.functional.cross_entropy(left, batch[1])

    def sgd(parameters):
        return runtime.optim.SGD(parameters, lr=1e-2)

    batches = _batches()
    (losses, grads, parameters, _), _ = _loop(_TwoHeads, loss_of, sgd, batches, False)
    (losses2, grads2, parameters2, _), compiled = _loop(_TwoHeads, loss_of, sgd, batches, True)
    assert compiled.fallback_reason is None and compiled.traces == 1
    assert losses2 == losses and parameters2 == parameters
    zeros = [bytes(4 * 3 * 16), bytes(4 * 3)]
    for got, expected in zip(grads2, grads, strict=True):  # the traced call's too
        assert got[:4] == expected[:4] and expected[4:] == [None, None] and got[4:] == zeros


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.compile's own imports
def test_unused_output_and_double_backward_as_torch_compile():
    """torch.compile (backend aot_eager, donated buffers off, so that create_graph is
    allowed at all): the node's name, zero gradients for the unused head, and the error of
    a double backward."""
    import torch
    import torch._functorch.config

    results = []
    for lib in (torch, runtime):
        lib.manual_seed(0)
        model = _TwoHeads(lib.nn)
        if lib is torch:
            with torch._functorch.config.patch(donated_buffer=False):
                results.append(_two_heads_facts(lib, model, torch.compile(model,
                                                                          backend="aot_eager")))
        else:
            results.append(_two_heads_facts(lib, model, runtime.compile(model)))
    assert results[0] == results[1]


def _two_heads_facts(lib, model, compiled) -> list:
    x = lib.ones(8, 12)
    compiled(x)
    left, (right, _) = compiled(x)
    left.sum().backward()
    facts = [left.grad_fn.name(), right.grad_fn is left.grad_fn,
             float(model.right.weight.grad.abs().sum()), model.left.weight.grad is not None]
    grad, = lib.autograd.grad(compiled(x)[0].pow(2).sum(), model.body.weight,
                              create_graph=True)
    facts.append(grad.grad_fn.name())
    with pytest.raises(RuntimeError) as error:
        grad.sum().backward()
    return [*facts, str(error.value)]


def test_a_hook_on_a_parameter_runs_as_in_eager():
    """AccumulateGrad stays the engine's: a parameter's hook sees eager's gradient."""
    seen = {False: [], True: []}

    def make(compiled):
        def build():
            model = _mlp()
            model[0].weight.register_hook(lambda g: seen[compiled].append(g.numpy().tobytes()))
            model[3].bias.register_hook(lambda g: g * 2)
            return model
        return build

    for compiled in (False, True):
        _loop(make(compiled), _cross_entropy, _sgd, _batches(), compiled)
    assert seen[True] == seen[False] and len(seen[True]) == STEPS
    expected, _ = _loop(make(False), _cross_entropy, _sgd, _batches(), compiled=False)
    got, forward = _loop(make(True), _cross_entropy, _sgd, _batches(), compiled=True)
    assert got == expected and forward.fallback_reason is None


def test_retain_graph_and_a_second_backward():
    model = _mlp()
    compiled = runtime.compile(model)
    x = _batches()[0][0]
    compiled(x)
    for forward in (model, compiled):
        model.zero_grad()
        out = forward(x)
        out.sum().backward(retain_graph=True)
        out.sum().backward()
        if forward is model:
            expected = _bits(p.grad for p in model.parameters())
        with pytest.raises(RuntimeError, match=re.escape(ERR_BACKWARD_TWICE)):
            out.sum().backward()
    assert _bits(p.grad for p in model.parameters()) == expected


def test_double_backward_raises_pytorchs_error():
    """create_graph=True gives gradients (with a node of their own); differentiating them
    again raises, in PyTorch's words."""
    model = _mlp()
    compiled = runtime.compile(model)
    x = _batches()[0][0]
    compiled(x)
    out = compiled(x)
    grad, = runtime.autograd.grad(out.pow(2).sum(), model[0].weight, create_graph=True)
    assert grad.grad_fn.name() == "CompiledFunctionBackwardBackward"
    eager, = runtime.autograd.grad(model(x).pow(2).sum(), model[0].weight)
    assert grad.detach().numpy().tobytes() == eager.numpy().tobytes()
    with pytest.raises(RuntimeError, match=re.escape(DOUBLE_BACKWARD)):
        grad.sum().backward()


def test_an_input_changed_in_place_before_backward():
    """The backward reads the forward's input: changed in place in between, the backward
    raises eager's error instead of reading the changed values."""
    model = _mlp()
    compiled = runtime.compile(model)
    compiled(_batches()[0][0])
    messages = []
    for forward in (model, compiled):
        x = _batches()[0][0].clone()
        out = forward(x)
        x.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as error:
            out.sum().backward()
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_what_cannot_be_compiled_runs_eagerly_with_a_reason():
    nn = runtime.nn
    linear = nn.Linear(12, 4)
    x = _batches()[0][0]
    cases = {
        "the forward returns a tensor it did not compute":
            lambda v: (linear(v), linear.weight),
        "the forward returns a view of an input": lambda v: (linear(v), v[0]),
        "the forward returns the same tensor twice": lambda v: (linear(v),) * 2,
        "the forward returns a set": lambda v: (linear(v), {1}),
    }
    for reason, function in cases.items():
        compiled = runtime.compile(function)
        for _ in range(2):
            got = compiled(x)
        assert compiled.fallback_reason.startswith(reason), compiled.fallback_reason
        assert got[0].grad_fn.name() == "AddmmBackward0"


def test_eval_mode_and_no_grad_trace_again():
    """model.eval() is a new trace (dropout off); under no_grad, a forward alone."""
    model = _mlp(dropout=0.5)
    compiled = runtime.compile(model)
    x = _batches()[0][0]
    for mode in ("train", "eval", "no_grad", "train"):
        getattr(model, "eval" if mode == "eval" else "train")()
        runtime.manual_seed(3)
        if mode == "no_grad":
            with runtime.no_grad():
                got, expected = compiled(x), (runtime.manual_seed(3), model(x))[1]
        else:
            got = compiled(x)
            runtime.manual_seed(3)
            expected = model(x)
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes()
        assert got.requires_grad == (mode != "no_grad")
    assert compiled.traces == 3


def test_gpt_compiled_as_a_model():
    """The GPT of tests/programs/gpt.py compiled as `model = torch.compile(model)`: its
    forward returns (logits, loss); the loss's backward gives logits no gradient."""
    namespace = _gpt_namespace()
    runtime.manual_seed(7)
    batches = [namespace["get_batch"]("train") for _ in range(3)]

    def loss_of(forward, batch):
        logits, loss = forward(*batch)
        return loss

    compiled = _compiled_like_eager(namespace["GPTLanguageModel"], loss_of,
                                    lambda p: runtime.optim.AdamW(p, lr=1e-3), batches)
    assert "kernels.softmax" in compiled.code or "softmax" in compiled.code


def test_word_language_model_compiled_as_a_model():
    """The LSTM language model (tied weights) compiled on its own: it returns
    (log-probabilities, (h, c)); the loop detaches the hidden state between batches."""
    rng = np.random.default_rng(4)
    batches = [(runtime.tensor(rng.integers(0, 30, (5, 3))),
                runtime.tensor(rng.integers(0, 30, 15))) for _ in range(4)]
    hidden = {}

    def loss_of(forward, batch):
        state = hidden.get(id(forward))
        if state is None:
            state = tuple(runtime.zeros(2, 3, 16) for _ in range(2))
        output, state = forward(batch[0], state)
        hidden[id(forward)] = tuple(h.detach() for h in state)
        return runtime.nn.functional.nll_loss(output, batch[1])

    compiled = _compiled_like_eager(_RNNModel, loss_of, lambda p: runtime.optim.SGD(p, lr=0.5),
                                    batches)
    assert compiled.fallback_reason is None


def _optimized_module_facts(lib) -> list:
    model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU())
    compiled = lib.compile(model)
    facts = [type(compiled).__name__, isinstance(compiled, lib.nn.Module),
             list(dict(compiled.named_parameters())), list(compiled.state_dict()),
             repr(compiled), len(compiled), [name for name, _ in compiled.named_modules()],
             all(p is q for p, q in zip(compiled.parameters(), model.parameters(),
                                        strict=True))]
    compiled.eval()
    facts += [model.training, compiled.training]
    compiled.scale = 3
    facts += [model.scale, compiled.scale]
    del compiled.scale
    facts.append(hasattr(model, "scale"))
    for probe in (lambda: compiled[0], lambda: len(lib.compile(lib.nn.Linear(2, 2)))):
        with pytest.raises(TypeError) as error:
            probe()
        facts.append(str(error.value))
    return facts


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.compile's own imports
def test_a_compiled_module_is_a_module_as_torch_compiles_it():
    """compile(module) is an OptimizedModule holding the model as `_orig_mod` (parameters
    and state_dict keys under that prefix, as a checkpoint of PyTorch's has them), its
    attributes read and written through, its training flag mirrored; its loading of a
    prefixed state_dict and its compiled call work on the model's own tensors."""
    import torch

    assert _optimized_module_facts(runtime) == _optimized_module_facts(torch)
    model = _mlp()
    compiled = runtime.compile(model)
    state = {name: value.clone().add_(1) for name, value in compiled.state_dict().items()}
    compiled.load_state_dict(state)
    assert model[0].weight.detach().numpy().tobytes() == \
        state["_orig_mod.0.weight"].numpy().tobytes()
    x = _batches()[0][0]
    for _ in range(2):
        assert compiled(x).detach().numpy().tobytes() == model(x).detach().numpy().tobytes()
    assert compiled.fallback_reason is None and compiled.traces == 1
    assert "def forward(a0):" in compiled.code


class _Discriminator(runtime.nn.Module):
    """DCGAN's discriminator's ending: a sigmoid (whose backward reads its result), then
    a view of that result returned."""

    def __init__(self):
        super().__init__()
        self.main = runtime.nn.Sequential(runtime.nn.Linear(12, 1), runtime.nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


def test_an_output_that_is_a_view_of_a_saved_value():
    """The output and the value the backward reads share memory, and so a version counter,
    as in eager: the loop is eager's bit for bit, and a write into the output before the
    backward raises, as in eager, instead of giving a gradient from changed values."""

    def loss_of(forward, batch):
        return runtime.nn.functional.binary_cross_entropy(forward(batch[0]),
                                                          (batch[1] % 2).float())

    _compiled_like_eager(_Discriminator, loss_of, _sgd)
    model = _Discriminator()
    compiled = runtime.compile(model)
    x = _batches()[0][0]
    compiled(x)
    for forward in (model, compiled):
        out = forward(x)
        out.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()
    assert compiled.fallback_reason is None


def test_compiling_a_compiled_module():
    """A compiled module compiled again (its truth value is never asked: an
    OptimizedModule's len() raises, as torch's does, for a model without one)."""
    model = runtime.nn.Linear(12, 4)
    twice = runtime.compile(runtime.compile(model))
    x = _batches()[0][0]
    for _ in range(2):
        assert twice(x).detach().numpy().tobytes() == model(x).detach().numpy().tobytes()
    assert twice.fallback_reason is None
    assert list(dict(twice.named_parameters())) == ["_orig_mod._orig_mod.weight",
                                                    "_orig_mod._orig_mod.bias"]


class _Tied(runtime.nn.Module):
    """One layer used twice: its parameters get two gradients per call."""

    def __init__(self):
        super().__init__()
        self.layer = runtime.nn.Linear(12, 12)
        self.head = runtime.nn.Linear(12, 4)

    def forward(self, x):
        return self.head(self.layer(self.layer(x).tanh()).relu())


def test_several_calls_feeding_one_backward():
    """The losses of several calls summed, then one backward (char_rnn's minibatch): the
    node sends each gradient of a parameter used twice on its own, so the engine adds them
    in eager's order, interleaved with the other calls'; sums made inside the node would
    round differently."""

    def loss_of(forward, batch):
        x, t = batch
        return sum(runtime.nn.functional.cross_entropy(forward(x[i:i + 2]), t[i:i + 2])
                   for i in range(0, 8, 2))

    compiled = _compiled_like_eager(_Tied, loss_of, _sgd)
    assert len(compiled(_batches()[0][0][:2]).grad_fn.next_functions) == 6


def _classifier_step(model, compiled: str | None):
    """A cross-entropy step with SGD over `model`, run eagerly (None), with the model
    compiled ("model") or compiled whole ("step"): the step to call, and the compiled one
    (or the model)."""
    optimizer = _sgd(model.parameters())
    forward = runtime.compile(model) if compiled == "model" else model

    def step(x, t):
        optimizer.zero_grad()
        loss = runtime.nn.functional.cross_entropy(forward(x), t)
        loss.backward()
        optimizer.step()
        return loss

    call = runtime.compile(step) if compiled == "step" else step
    return call, (call if compiled == "step" else forward)


class _DynamicNet(runtime.nn.Module):
    """"Learning PyTorch with Examples"' dynamic net: Python's random module draws how
    many terms the forward adds (and numpy's global generator, in the second flavour)."""

    def __init__(self, draw):
        super().__init__()
        self.draw = draw
        self.layer = runtime.nn.Linear(12, 4)

    def forward(self, x):
        y = self.layer(x)
        for _ in range(self.draw()):
            y = y * self.layer.bias.sigmoid()
        return y


@pytest.mark.parametrize("draw", ["random", "numpy"])
@pytest.mark.parametrize("what", ["model", "step"])
def test_a_forward_that_draws_from_pythons_random_runs_eagerly(draw, what):
    """Numbers drawn in Python would be constants of a trace and not drawn again: the
    forward (or step) runs eagerly, with the reason, and gives eager's results."""
    import random

    draws = {"random": lambda: random.randint(0, 3),
             "numpy": lambda: int(np.random.randint(0, 4))}

    def run(compiled):
        random.seed(0)
        np.random.seed(0)
        runtime.manual_seed(0)
        model = _DynamicNet(draws[draw])
        call, compiled_one = _classifier_step(model, what if compiled else None)
        losses = [call(x, t).detach().numpy().tobytes() for x, t in _batches()]
        return losses, _bits(model.parameters()), compiled_one

    expected, got = run(False), run(True)
    assert got[:2] == expected[:2]
    source = {"random": "Python's random module", "numpy": "numpy's global random generator"}
    assert got[2].fallback_reason.startswith(f"the step draws from {source[draw]}")


@pytest.mark.parametrize("what", ["model", "step"])
def test_a_forward_hook_runs_at_every_call(what):
    """A module's forward hook is Python (here it keeps the activation, as feature
    extraction does): the step or model runs eagerly, and the hook at every call, as
    eager's does."""
    seen = {False: [], True: []}

    def run(compiled):
        runtime.manual_seed(0)
        model = _mlp()
        model[1].register_forward_hook(
            lambda module, args, out: seen[compiled].append(out.detach().numpy().tobytes()))
        call, compiled_one = _classifier_step(model, what if compiled else None)
        for x, t in _batches():
            call(x, t)
        return compiled_one

    run(False)
    compiled = run(True)
    assert seen[True] == seen[False] and len(seen[True]) == STEPS
    assert compiled.fallback_reason == "a forward hook on a ReLU module (hooks run eagerly)"


class _Recording(runtime.nn.Module):
    """A forward that keeps what it computed (in a list) and counts its calls (in a dict),
    and reads a list it never changes."""

    def __init__(self, change: bool):
        super().__init__()
        self.layer = runtime.nn.Linear(12, 4)
        self.change = change
        self.history, self.calls, self.scales = [], {}, [0.5, 2.0]

    def forward(self, x):
        y = self.layer(x) * self.scales[1]
        if self.change:
            self.history.append(y.detach())
            self.calls["forward"] = self.calls.get("forward", 0) + 1
        return y


@pytest.mark.parametrize("what", ["model", "step"])
def test_a_forward_that_changes_a_list_its_module_holds_runs_eagerly(what):
    """`self.history.append(y)` is Python that generated code would not repeat: the trace
    sees a list (or dict, or set) a module holds change, and the step runs eagerly, with
    the reason; the history then has an entry per call, as in eager. A list only read
    compiles."""
    for change in (True, False):
        model = _Recording(change)
        call, compiled = _classifier_step(model, what)
        for x, t in _batches():
            call(x, t)
        if change:
            assert len(model.history) == model.calls["forward"] == STEPS
            assert compiled.fallback_reason == (
                "the step changes what _Recording.history holds (a list, dict or set: Python "
                "that later calls would not repeat)")
        else:
            assert compiled.fallback_reason is None and not model.history


def test_gradcheck_of_compiled_functions():
    """The generated backward against central differences (gradcheck, float64): a module,
    and a function of two inputs that require grad with two outputs; gradcheck calls
    them again and again (the calls after the first run the generated code)."""
    nn = runtime.nn
    runtime.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 3), nn.LogSoftmax(dim=1))
    model.double()
    x = runtime.randn(3, 5, dtype=runtime.float64, requires_grad=True)
    compiled_model = runtime.compile(model)

    def two(a, b):
        return (a.sin() * b).sum(1), a @ b.T

    compiled_two = runtime.compile(two)
    a, b = (runtime.randn(3, 4, dtype=runtime.float64, requires_grad=True) for _ in range(2))
    assert runtime.autograd.gradcheck(compiled_model, (x,))
    assert runtime.autograd.gradcheck(compiled_two, (a, b))
    for compiled in (compiled_model, compiled_two):
        assert compiled.fallback_reason is None and compiled.traces == 1
    with pytest.raises(RuntimeError, match=re.escape(DOUBLE_BACKWARD)):
        runtime.autograd.gradgradcheck(compiled_two, (a, b))


class _WithTargets(runtime.nn.Module):
    """GPT's way: `model(x, targets=y)` returns (logits, loss), or (logits, None)."""

    def __init__(self):
        super().__init__()
        self.layer = runtime.nn.Linear(12, 4)

    def forward(self, x, targets=None, scale=1.0):
        logits = self.layer(x) * scale
        if targets is None:
            return logits, None
        return logits, runtime.nn.functional.cross_entropy(logits, targets)


@pytest.mark.parametrize("what", ["model", "step"])
def test_keyword_arguments(what):
    """Keyword arguments reach the generated code as one more argument, a dict checked as
    a dict argument is: other names, another order, another value of a number each make
    a trace of their own; the results are eager's."""
    calls = [{"targets": True}, {"targets": True}, {}, {"targets": True, "scale": 2.0},
             {"scale": 2.0, "targets": True}, {"targets": True}]

    def run(compiled):
        runtime.manual_seed(0)
        model = _WithTargets()
        optimizer = _sgd(model.parameters())
        forward = runtime.compile(model) if compiled and what == "model" else model

        def step(x, **kwargs):
            optimizer.zero_grad()
            logits, loss = forward(x, **kwargs)
            if loss is None:
                return logits.sum()
            loss.backward()
            optimizer.step()
            return loss

        call = runtime.compile(step) if compiled and what == "step" else step
        bits = []
        for (x, t), kwargs in zip(_batches(), calls, strict=True):
            if "targets" in kwargs:
                kwargs = {**kwargs, "targets": t}
            bits.append(call(x, **kwargs).detach().numpy().tobytes())
        return bits, _bits(model.parameters()), forward if what == "model" else call

    expected, got = run(False), run(True)
    assert got[:2] == expected[:2]
    # (The step compiled whole: SGD's first step, which makes its momentum buffers, runs
    # eagerly, and the next call traces: one trace more.)
    assert got[2].fallback_reason is None and got[2].traces == (4 if what == "model" else 5)


def _decorated(compiled: bool):
    """A model whose class compiles its own forward (`@torch.compile` on the method)."""
    nn = runtime.nn

    def forward(self, x):
        return self.head(self.drop(self.body(x).relu()))

    class Decorated(nn.Module):
        def __init__(self):
            super().__init__()
            self.body, self.drop, self.head = nn.Linear(12, 16), nn.Dropout(0.3), \
                nn.Linear(16, 4)

    Decorated.forward = runtime.compile(forward) if compiled else forward
    return Decorated


def test_a_forward_compiled_in_its_class():
    """`@torch.compile` on `forward`: each instance gets the compiled step of its bound
    method; the module itself is guarded (eval mode is a new trace); eager's bits."""
    expected, _ = _loop(_decorated(False), _cross_entropy, _sgd, _batches(), compiled=False)
    got, _ = _loop(_decorated(True), _cross_entropy, _sgd, _batches(), compiled=False)
    assert got == expected
    model, twin = _decorated(True)(), _decorated(False)()
    twin.load_state_dict(model.state_dict())
    x = _batches()[0][0]
    for mode in ("train", "train", "eval", "eval"):
        for m in (model, twin):
            getattr(m, mode)()
        runtime.manual_seed(5)
        out = model(x)
        runtime.manual_seed(5)
        assert out.detach().numpy().tobytes() == twin(x).detach().numpy().tobytes()
    assert model.forward is model.forward and model.forward.traces == 2
    assert model.forward.fallback_reason is None
    assert out.grad_fn.name() == "CompiledFunctionBackward"


def test_torch_compiler_and_dynamo_names():
    """torch.compiler.reset() makes every compiled step trace again;
    torch._dynamo.config.cache_size_limit (recompile_limit) bounds the traces;
    torch.compiler.disable keeps a function out (the step runs eagerly, saying so);
    is_compiling() is True while a step is traced."""
    model = _mlp()
    compiled = runtime.compile(model)
    x = _batches()[0][0]
    compiled(x)
    compiled(x)
    runtime.compiler.reset()
    compiled(x)
    assert compiled.traces == 2 and compiled.fallback_reason is None

    limit = runtime._dynamo.config.cache_size_limit
    try:
        runtime._dynamo.config.cache_size_limit = 2
        assert runtime._dynamo.config.recompile_limit == 2
        shapes = runtime.compile(lambda v: model(v).sum())
        for rows in (2, 3, 4, 5):
            shapes(x[:rows])
        assert shapes.traces == 2 and shapes.fallback_reason.startswith(
            "the cache of 2 traces is full")
    finally:
        runtime._dynamo.config.cache_size_limit = limit

    seen = []

    @runtime.compiler.disable
    def log(value):
        seen.append(runtime.compiler.is_compiling())
        return value

    def step(v):
        seen.append(runtime.compiler.is_compiling())
        return log(model(v)).sum()

    kept_out = runtime.compile(step)
    for _ in range(2):
        kept_out(x)
    assert kept_out.fallback_reason == ("the step calls test_torch_compiler_and_dynamo_names."
                                        "<locals>.log, which torch.compiler.disable keeps out "
                                        "of compiled code")
    assert seen[:2] == [True, False] and not runtime.compiler.is_compiling()
    assert runtime.compiler.list_backends() == ["gradgen"]


def test_fullgraph_reads_as_its_compiled_step():
    """compile(fullgraph=True) reads as the compiled step it wraps (cache size, traces,
    reset), on a function and on a method compiled in its class."""
    model = _mlp()
    x = _batches()[0][0]
    whole = runtime.compile(lambda v: model(v).sum(), fullgraph=True)
    whole(x)
    whole(x)
    assert whole.cache_size == 8 and whole.traces == 1 and whole.fallback_reason is None
    runtime.compiler.reset()
    whole(x)
    assert whole.traces == 2

    class Fixed(runtime.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = runtime.nn.Linear(12, 4)

        @runtime.compile(fullgraph=True)
        def forward(self, v):
            return self.layer(v)

    fixed = Fixed()
    fixed(x)
    fixed(x)
    assert fixed.forward.traces == 1 and fixed.forward.fallback_reason is None


class _ByName(runtime.nn.Module):
    """A model that returns its outputs by name, as Hugging Face's models do."""

    def __init__(self):
        super().__init__()
        self.layer = runtime.nn.Linear(12, 4)

    def forward(self, x, labels=None):
        logits = self.layer(x)
        loss = None if labels is None else runtime.nn.functional.cross_entropy(logits, labels)
        return {"loss": loss, "logits": logits, "note": "by name"}


def test_outputs_by_name():
    """A dict of outputs (str keys) comes back as a dict, its tensors from the node."""

    def loss_of(forward, batch):
        outputs = forward(batch[0], labels=batch[1])
        assert list(outputs) == ["loss", "logits", "note"] and outputs["note"] == "by name"
        return outputs["loss"]

    compiled = _compiled_like_eager(_ByName, loss_of, _sgd)
    outputs = compiled(_batches()[0][0])
    assert outputs["loss"] is None
    assert outputs["logits"].grad_fn.name() == "CompiledFunctionBackward"
