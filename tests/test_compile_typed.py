"""The traced lines are typed (runtime/compile/emit.py's Line) and the optimisations read
their kinds, not their text: a global whose name holds "grad" is a tensor read like any
other, and the `.grad` slots the step's zero_grad emptied are still set directly by its
backward."""

from __future__ import annotations

import numpy as np

import runtime

_rng = np.random.default_rng(0)
# A global the step reads: its line is `T2 = c0['grad_scale']`.
grad_scale = runtime.tensor(_rng.standard_normal((5, 3)).astype(np.float32))
x = runtime.tensor(_rng.standard_normal((5, 4)).astype(np.float32))


def _step(seed: int = 0):
    runtime.manual_seed(seed)
    model = runtime.nn.Linear(4, 3)
    optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)

    def step():
        optimizer.zero_grad()
        loss = (model(x) * grad_scale).sum()
        loss.backward()
        optimizer.step()
        return loss

    return model, step


def test_a_global_named_like_a_grad_is_read_as_a_tensor():
    model, step = _step()
    eager_model, eager_step = _step()
    compiled = runtime.compile(step)
    for index in range(5):
        got, expected = compiled(), eager_step()
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), index
        for p, q in zip(model.parameters(), eager_model.parameters(), strict=True):
            assert p.detach().numpy().tobytes() == q.detach().numpy().tobytes(), index
            assert p.grad.numpy().tobytes() == q.grad.numpy().tobytes(), index
        assert compiled.fallback_reason is None, compiled.fallback_reason
    code = compiled.code
    assert "['grad_scale']" in code  # (the global, read at every call)
    # zero_grad emptied both slots; the backward fills them without `accumulate`.
    assert "accumulate(" not in code
    assert code.count("._grad = new(") == 2
