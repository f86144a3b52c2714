"""The autograd explorer: one page to click through a graph, node by node.

    python -m runtime.explore prog.py [args] --out page.html [--var NAME] [--profile]

runs a PyTorch program on gradgen (as `python -m runtime` does) while recording what its
backward calls do, then writes one self-contained HTML page for a tensor it leaves (`loss`
by default). From Python:

    with runtime.explore.recording():      # what backward calls do inside is recorded
        loss.backward()
    page = runtime.explore(loss, path="page.html", params=dict(model.named_parameters()))

`runtime.explore(tensor)` returns an `ExplorerPage`, which a notebook displays inline.
The page draws make_dot's graph (runtime.viz); a click on a box shows the node's class,
its derivatives.yaml entry (from generated/explore_data.py), its generated source, what it
saved, the gradients it received and produced in the recorded backward (and which it did
not compute, and why), its time and FLOPs when a profiler was on, and the tips of
docs/autograd-tips.md that apply. The stepper walks the nodes in the engine's order.
"""

from __future__ import annotations

import contextlib
import html
import sys
import types
from collections.abc import Iterator
from pathlib import Path

from runtime._tensor import Tensor
from runtime.explore.page import page_data, render
from runtime.explore.record import BackwardRun, Recording

__all__ = ["explore", "recording", "ExplorerPage", "Recording"]


class _Last:
    recording: Recording | None = None  # the last recording made, read by explore()


@contextlib.contextmanager
def recording() -> Iterator[Recording]:
    """Record the backward calls run inside (their last few), for `explore` to show."""
    recorder = Recording()
    _Last.recording = recorder
    with recorder:
        yield recorder


class ExplorerPage:
    """An explorer page: `.html` is the whole document; `save(path)` writes it; a notebook
    shows it inline (in an iframe, so that its script and styles stay its own)."""

    def __init__(self, data: dict) -> None:
        self.data = data
        self.html = render(data)

    def save(self, path: str | Path) -> Path:
        target = Path(path)
        target.write_text(self.html, encoding="utf-8")
        return target

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" '
                'style="width:100%;height:640px;border:1px solid #ccc"></iframe>')

    def __repr__(self) -> str:
        return (f"<ExplorerPage of {self.data['title']!r}: {len(self.data['boxes'])} boxes, "
                f"{len(self.data['order'])} nodes run>")


def explore(tensor: Tensor | tuple[Tensor, ...], path: str | Path | None = None, *,
            params: dict[str, Tensor] | None = None, name: str = "loss",
            record: Recording | BackwardRun | None = None, backward: bool = False,
            layout: str = "auto") -> ExplorerPage:
    """The explorer page of the graph behind `tensor`, written to `path` if given.

    `params` names the leaves, as make_dot's. The gradients shown are those of the last
    backward call recorded (by `record`, by default the last `recording()`) that ran the
    tensor's node; with `backward=True` and none recorded, `tensor.backward()` runs here,
    recorded. `layout` is "dot" (Graphviz), "layered" (our own) or "auto" (dot if
    installed).
    """
    outputs = tensor if isinstance(tensor, tuple) else (tensor,)
    for value in outputs:
        if not isinstance(value, Tensor):
            raise TypeError(f"explore: expected a Tensor or a tuple of Tensors, got "
                            f"{type(value).__name__}")
    if params is not None and not all(isinstance(p, Tensor) for p in params.values()):
        raise TypeError("explore: params must map names to tensors")
    if layout not in ("auto", "dot", "layered"):
        raise ValueError(f"explore: layout must be 'auto', 'dot' or 'layered', not {layout!r}")
    run = _find_run(outputs[0], record)
    if run is None and backward:
        with recording() as recorder:
            outputs[0].backward()
        run = recorder.backward_of(outputs[0])
    page = ExplorerPage(page_data(outputs, name, params or {}, run, layout))
    if path is not None:
        page.save(path)
    return page


def _find_run(tensor: Tensor, record: Recording | BackwardRun | None) -> BackwardRun | None:
    if isinstance(record, BackwardRun):
        return record
    recorder = record if record is not None else _Last.recording
    return None if recorder is None else recorder.backward_of(tensor)


class _CallableModule(types.ModuleType):
    """`runtime.explore(loss)` calls `explore`: the package is also the function, as the
    issue names it (`python -m runtime.explore` needs a package of that name)."""

    def __call__(self, *args: object, **kwargs: object) -> ExplorerPage:
        return explore(*args, **kwargs)  # type: ignore[arg-type]


sys.modules[__name__].__class__ = _CallableModule
