"""zero_grad(set_to_none=False) given by keyword, in a compiled step: the trace hears it
(the gradients are zeroed in place, not set to None), as eager does."""

import numpy as np

import runtime


def _run(compiled: bool):
    runtime.manual_seed(0)
    model = runtime.nn.Linear(4, 2)
    optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)
    x = runtime.randn(3, 4)

    def step():
        optimizer.zero_grad(set_to_none=False)
        loss = model(x).pow(2).sum()
        loss.backward()
        optimizer.step()
        return loss

    run = runtime.compile(step) if compiled else step
    grads = []
    for _ in range(4):
        run()
        grads.append(model.weight.grad)
    return run, [g._data.copy() for g in grads], model.weight._data.copy(), grads


def test_zero_grad_keyword_is_heard():
    _, eager_grads, eager_weight, eager_objects = _run(False)
    compiled, grads, weight, objects = _run(True)
    assert compiled.fallback_reason is None, compiled.fallback_reason
    assert all(np.array_equal(a, b) for a, b in zip(grads, eager_grads, strict=True))
    assert weight.tobytes() == eager_weight.tobytes()
    # set_to_none=False keeps the same .grad tensor from the second step on, as eager does.
    assert (objects[1] is objects[2]) == (eager_objects[1] is eager_objects[2])
