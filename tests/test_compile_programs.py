"""runtime.compile on the training steps of programs users bring: the models of
tests/programs/gpt.py (the "Let's build GPT" lecture), mnist.py (pytorch/examples' MNIST,
with Adadelta and StepLR) and resnet.py (torchvision's BasicBlock, SGD with Nesterov and
MultiStepLR, and its evaluation under no_grad), and the step of pytorch/examples' word
language model (tests/programs/word_language_model.py), written as functions. Each
compiles in one trace and gives eager's losses and parameters, bit for bit."""

from __future__ import annotations

import re
from pathlib import Path

import runtime
from tests.test_compile_reads import _compiled_like_eager

PROGRAMS = Path(__file__).resolve().parent / "programs"


def _gpt_namespace() -> dict:
    """gpt.py's definitions (up to its training loop), run on gradgen."""
    source = (PROGRAMS / "gpt.py").read_text()
    head = source[:source.index("model = GPTLanguageModel()")]
    imports = ("import torch\n", "import torch.nn as nn\n",
               "from torch.nn import functional as F\n")
    for line in imports:
        assert line in head
        head = head.replace(line, "")
    namespace = {"__name__": "gpt", "torch": runtime, "nn": runtime.nn,
                 "F": runtime.nn.functional}
    exec(compile(head, str(PROGRAMS / "gpt.py"), "exec"), namespace)  # noqa: S102
    return namespace


def _gpt_run(compiled: bool, steps: int = 6):
    namespace = _gpt_namespace()
    runtime.manual_seed(1337)
    model = namespace["GPTLanguageModel"]()
    optimizer = runtime.optim.AdamW(model.parameters(), lr=1e-3)

    def step(xb, yb):
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss

    run = runtime.compile(step) if compiled else step
    runtime.manual_seed(7)
    batches = [namespace["get_batch"]("train") for _ in range(steps)]
    runtime.manual_seed(11)  # dropout's draws, the same in both
    losses = [run(x, y).detach().numpy().tobytes() for x, y in batches]
    return losses, [p.detach().numpy().tobytes() for p in model.parameters()], run


def test_gpt_step_compiles_and_equals_eager():
    """Embeddings, masked multi-head attention (a tril buffer, masked_fill, softmax),
    LayerNorm, dropout in training mode, cross-entropy and AdamW."""
    compiled = _compiled_like_eager(_gpt_run)
    assert compiled.fallback_reason is None and compiled.traces == 1


class _RNNModel(runtime.nn.Module):
    """word_language_model.py's RNNModel (LSTM), tied weights."""

    def __init__(self, ntoken=30, ninp=16, nhid=16, nlayers=2, dropout=0.2):
        super().__init__()
        nn = runtime.nn
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.decoder.weight = self.encoder.weight
        self.ntoken, self.nhid, self.nlayers = ntoken, nhid, nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return runtime.nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def _language_model_run(compiled: bool, steps: int = 5):
    runtime.manual_seed(1111)
    model = _RNNModel()
    criterion = runtime.nn.NLLLoss()
    lr = 20.0

    def step(data, targets, hidden):
        # The example's loop body: zero_grad on the model, clipping, a hand-written SGD
        # update through p.data; the hidden state (a tuple) comes in and goes back detached.
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        runtime.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        return loss.item(), (hidden[0].detach(), hidden[1].detach())

    run = runtime.compile(step) if compiled else step
    hidden = model.init_hidden(4)
    runtime.manual_seed(5)
    data = [runtime.randint(0, 30, (8, 4)) for _ in range(steps + 1)]
    losses = []
    for index in range(steps):
        loss, hidden = run(data[index], data[index + 1].view(-1), hidden)
        losses.append(loss)
    return losses, [p.detach().numpy().tobytes() for p in model.parameters()], run


def test_word_language_model_step_compiles_and_equals_eager():
    eager_losses, eager_bits, _ = _language_model_run(False)
    losses, bits, compiled = _language_model_run(True)
    assert compiled.fallback_reason is None and compiled.traces == 1
    # The update through p.data: one in-place add into each parameter's array.
    assert compiled.code.count("# after backward: add_Tensor_, in place: the sum") == 10
    assert re.search(r"return \(v\d+\.item\(\), \(wrap\(v\d+\), wrap\(v\d+\)\)\)",
                     compiled.code)
    assert "t = a2[0]" in compiled.last.guard_code  # the tuple argument's tensors
    assert losses == eager_losses and all(type(loss) is float for loss in losses)
    assert bits == eager_bits


def _mnist_run(compiled: bool):
    source = (PROGRAMS / "mnist.py").read_text()
    namespace = {"torch": runtime, "nn": runtime.nn, "F": runtime.nn.functional}
    exec(compile(source[source.index("class Net"):source.index("def train(")],  # noqa: S102
                 str(PROGRAMS / "mnist.py"), "exec"), namespace)
    runtime.manual_seed(1)
    model = namespace["Net"]()
    optimizer = runtime.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = runtime.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)

    def step(data, target):  # the example's loop body
        optimizer.zero_grad()
        output = model(data)
        loss = runtime.nn.functional.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        return loss.item()

    run = runtime.compile(step) if compiled else step
    runtime.manual_seed(2)
    batches = [(runtime.randn(4, 1, 28, 28), runtime.randint(0, 10, (4,))) for _ in range(3)]
    losses = []
    for _epoch in range(2):
        losses += [run(data, target) for data, target in batches]
        scheduler.step()  # a new learning rate, which the update reads at every call
    return losses, [p.detach().numpy().tobytes() for p in model.parameters()], run


def test_mnist_step_with_adadelta_and_step_lr_compiles_and_equals_eager():
    compiled = _compiled_like_eager(_mnist_run)
    assert compiled.fallback_reason is None and compiled.traces == 1
    assert "lr0 = O0.param_groups[0]['lr']" in compiled.code  # read at every call
    assert "Adadelta.step: add_Tensor_, in place" in compiled.code


def _resnet_run(compiled: bool):
    source = (PROGRAMS / "resnet.py").read_text()
    head = source[source.index("def conv3x3"):source.index("torch.manual_seed(0)\nmodel")]
    namespace = {"torch": runtime, "nn": runtime.nn, "F": runtime.nn.functional}
    exec(compile(head, str(PROGRAMS / "resnet.py"), "exec"), namespace)  # noqa: S102
    runtime.manual_seed(0)
    model = namespace["ResNet"](namespace["BasicBlock"], [1, 1])
    criterion = runtime.nn.CrossEntropyLoss()
    optimizer = runtime.optim.SGD(model.parameters(), lr=0.1, momentum=0.9,
                                  weight_decay=5e-4, nesterov=True)
    scheduler = runtime.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1], gamma=0.1)

    def train_step(inputs, targets):  # the program's loop bodies
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        return loss.item()

    def evaluate(inputs, targets):
        with runtime.no_grad():
            outputs = model(inputs)
            return criterion(outputs, targets), outputs.argmax(1)

    train = runtime.compile(train_step) if compiled else train_step
    test = runtime.compile(evaluate) if compiled else evaluate
    runtime.manual_seed(1)
    images, labels = runtime.randn(24, 3, 32, 32), runtime.randint(0, 10, (24,))
    seen = []
    for _epoch in range(2):
        model.train()
        seen += [train(images[i:i + 8], labels[i:i + 8]) for i in (0, 8)]
        scheduler.step()
        model.eval()
        seen += [t.numpy().tobytes() for t in test(images[16:], labels[16:])]
    state = [p.detach().numpy().tobytes() for p in model.parameters()]
    return seen, state + [b.numpy().tobytes() for b in model.buffers()], (train, test)


def test_resnet_training_and_evaluation_compile_and_equal_eager():
    """BatchNorm2d in train mode (its running stats and counter written in the step) and
    in eval mode, a strided downsample, AdaptiveAvgPool2d; the evaluation a forward alone."""
    train, test = _compiled_like_eager(_resnet_run)
    # (SGD's first step makes its momentum buffers, copies of the first gradients, unlike
    # its later steps: it runs eagerly, and the next call traces.)
    for compiled, traces in ((train, 2), (test, 1)):
        assert compiled.fallback_reason is None and compiled.traces == traces
