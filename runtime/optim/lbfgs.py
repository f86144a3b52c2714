"""L-BFGS: quasi-Newton steps from a short history of gradient differences, with an
optional strong-Wolfe line search.

It works on all parameters as one flat vector, so it takes a single parameter group, and it
calls the closure (which must zero the gradients, compute the loss and call backward)
several times per `step`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from generated import ops
from runtime._tensor import Tensor
from runtime.grad_mode import enable_grad, no_grad
from runtime.optim.optimizer import Optimizer

__all__ = ["LBFGS"]


def _cubic_minimum(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any,
                   bounds: tuple[Any, Any] | None = None) -> Any:
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2,
    clamped to `bounds` (by default the interval between x1 and x2); the bounds' midpoint
    when the cubic has no minimum."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = d2_square.sqrt()
    if x1 <= x2:
        position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(position, low), high)


class _Point:
    """One trial of the line search: step t, loss f, flat gradient g, slope gtd = g·d."""

    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t: Any, f: float, g: Tensor, gtd: Any) -> None:
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


class _LineSearch:
    """The strong-Wolfe search along d from x (Nocedal & Wright, algorithms 3.5 and 3.6):
    first grow t until the minimum is bracketed, then shrink the bracket by cubic
    interpolation until a point meets both Wolfe conditions."""

    def __init__(self, evaluate: Callable[[Any], tuple[float, Tensor]], d: Tensor,
                 start: _Point, tolerance_change: float, max_ls: int,
                 c1: float = 1e-4, c2: float = 0.9) -> None:
        self.evaluate, self.d, self.start = evaluate, d, start
        self.tolerance_change, self.max_ls, self.c1, self.c2 = tolerance_change, max_ls, c1, c2
        self.evals = 0

    def trial(self, t: Any) -> _Point:
        loss, grad = self.evaluate(t)
        self.evals += 1
        return _Point(t, loss, grad, grad.dot(self.d))

    def sufficient_decrease_fails(self, point: _Point) -> bool:
        return point.f > self.start.f + self.c1 * point.t * self.start.gtd

    def curvature_holds(self, point: _Point) -> bool:
        return abs(point.gtd) <= -self.c2 * self.start.gtd

    def run(self, t: Any) -> _Point:
        bracket, done = self._bracket(t)
        if not done:
            bracket = self._zoom(bracket)
        return bracket[0] if done else bracket[self._low(bracket)]

    def _bracket(self, t: Any) -> tuple[list[_Point], bool]:
        start = self.start
        previous = _Point(0, start.f, start.g.clone(), start.gtd)
        point = self.trial(t)
        for iteration in range(self.max_ls):
            if self.sufficient_decrease_fails(point) or (iteration > 1
                                                         and point.f >= previous.f):
                return [previous, self._kept(point)], False
            if self.curvature_holds(point):
                return [point], True
            if point.gtd >= 0:
                return [previous, self._kept(point)], False
            bounds = (point.t + 0.01 * (point.t - previous.t), point.t * 10)
            t = _cubic_minimum(previous.t, previous.f, previous.gtd, point.t, point.f,
                               point.gtd, bounds)
            previous = self._kept(point)
            point = self.trial(t)
        # Out of evaluations: the start and the last trial, without their slopes.
        return [_Point(0, start.f, start.g, None), _Point(point.t, point.f, point.g, None)], \
            False

    @staticmethod
    def _kept(point: _Point) -> _Point:
        return _Point(point.t, point.f, point.g.clone(), point.gtd)

    @staticmethod
    def _low(bracket: list[_Point]) -> int:
        return 0 if bracket[0].f <= bracket[-1].f else 1

    def _zoom(self, bracket: list[_Point]) -> list[_Point]:
        insufficient_progress = False
        d_norm = self.d.abs().max()
        while self.evals - 1 < self.max_ls:  # trials after the first, as max_ls counts
            low = self._low(bracket)
            ts = [point.t for point in bracket]
            if abs(ts[1] - ts[0]) * d_norm < self.tolerance_change:
                break
            t = _cubic_minimum(bracket[0].t, bracket[0].f, bracket[0].gtd,
                               bracket[1].t, bracket[1].f, bracket[1].gtd)
            t, insufficient_progress = self._away_from_ends(t, ts, insufficient_progress)
            point = self.trial(t)
            if self.sufficient_decrease_fails(point) or point.f >= bracket[low].f:
                bracket[1 - low] = self._kept(point)
                continue
            if self.curvature_holds(point):
                bracket[low] = self._kept(point)
                return [bracket[low]]
            if point.gtd * (bracket[1 - low].t - bracket[low].t) >= 0:
                bracket[1 - low] = bracket[low]
            bracket[low] = self._kept(point)
        return bracket

    @staticmethod
    def _away_from_ends(t: Any, ts: list[Any], insufficient: bool) -> tuple[Any, bool]:
        """Keep the trial at least a tenth of the bracket away from its ends, or move it
        there when the last trial was also too close (the search was not progressing)."""
        high, low = max(ts), min(ts)
        eps = 0.1 * (high - low)
        if min(high - t, t - low) >= eps:
            return t, False
        if insufficient or t >= high or t <= low:
            return (high - eps if abs(t - high) < abs(t - low) else low + eps), False
        return t, True


class LBFGS(Optimizer):
    """L-BFGS as torch.optim.LBFGS: `step(closure)` runs up to `max_iter` iterations (and
    `max_eval` closure calls), each a two-loop recursion over the last `history_size`
    steps, then a step of length lr (the first one scaled by the gradient's 1-norm) or a
    strong-Wolfe line search (`line_search_fn="strong_wolfe"`)."""

    def __init__(self, params: Iterable[Any], lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # -- the parameters as one flat vector -------------------------------------------------
    def _flat_grad(self) -> Tensor:
        return ops.cat([ops.zeros(p.numel(), dtype=p.dtype) if p.grad is None
                        else p.grad.reshape(-1) for p in self._params], 0)

    def _move(self, step_size: Any, direction: Tensor) -> None:
        offset = 0
        for param in self._params:
            numel = param.numel()
            param.add_(direction[offset:offset + numel].view_as(param), alpha=step_size)
            offset += numel

    def _evaluate_at(self, closure: Callable[[], Any], t: Any, d: Tensor) -> tuple[float, Tensor]:
        """Loss and flat gradient at x + t·d; the parameters are put back to x after."""
        saved = [param.clone() for param in self._params]
        self._move(t, d)
        loss = float(closure())
        grad = self._flat_grad()
        for param, value in zip(self._params, saved, strict=True):
            param.copy_(value)
        return loss, grad

    # -- one step --------------------------------------------------------------------------
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        def evaluate() -> Any:
            with enable_grad():
                return closure()

        orig_loss = evaluate()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max() <= group["tolerance_grad"]:
            return orig_loss
        history = _History.from_state(state, group["history_size"])
        for iteration in range(1, group["max_iter"] + 1):
            state["n_iter"] += 1
            history.direction(flat_grad, first=state["n_iter"] == 1)
            history.remember_gradient(flat_grad)
            history.prev_loss = prev_loss = loss
            history.t = (min(1.0, 1.0 / flat_grad.abs().sum()) * group["lr"]
                         if state["n_iter"] == 1 else group["lr"])
            gtd = flat_grad.dot(history.d)
            if gtd > -group["tolerance_change"]:
                break
            loss, flat_grad, history.t, used = self._advance(
                evaluate, group, history.d, history.t, loss, flat_grad, gtd,
                group["max_eval"] - evals, last=iteration == group["max_iter"])
            evals += used
            state["func_evals"] += used
            if self._converged(group, iteration, evals, flat_grad, history, loss, prev_loss):
                break
        history.save(state)
        return orig_loss

    def _advance(self, evaluate: Callable[[], Any], group: dict[str, Any], d: Tensor, t: Any,
                 loss: float, flat_grad: Tensor, gtd: Any, evals_left: int,
                 last: bool) -> tuple[float, Tensor, Any, int]:
        """Move the parameters along d: by t, or as far as the line search finds. The loss
        and gradient there, the step taken and the closure calls it cost."""
        line_search = group["line_search_fn"]
        if line_search is not None:
            if line_search != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            search = _LineSearch(lambda step: self._evaluate_at(evaluate, step, d), d,
                                 _Point(0, loss, flat_grad, gtd), group["tolerance_change"],
                                 evals_left)
            found = search.run(t)
            self._move(found.t, d)
            return found.f, found.g, found.t, search.evals
        self._move(t, d)
        if last:
            return loss, flat_grad, t, 0
        loss = float(evaluate())
        return loss, self._flat_grad(), t, 1

    @staticmethod
    def _converged(group: dict[str, Any], iteration: int, evals: int, flat_grad: Tensor,
                   history: _History, loss: float, prev_loss: float) -> bool:
        if iteration == group["max_iter"] or evals >= group["max_eval"]:
            return True
        if flat_grad.abs().max() <= group["tolerance_grad"]:
            return True
        if history.d.mul(history.t).abs().max() <= group["tolerance_change"]:
            return True
        return abs(loss - prev_loss) < group["tolerance_change"]


class _History:
    """What L-BFGS keeps between iterations and steps (in the parameter's state under
    torch's keys): the last direction d and step t, the pairs (y, s) of gradient and
    parameter differences with ρ = 1/(y·s), the scale H_diag of the initial Hessian
    estimate, the previous flat gradient and loss."""

    KEYS = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss")

    def __init__(self, state: dict[str, Any], size: int) -> None:
        self.state, self.size = state, size

    @classmethod
    def from_state(cls, state: dict[str, Any], size: int) -> _History:
        history = cls(state, size)
        for key in cls.KEYS:
            setattr(history, key, state.get(key))
        return history

    def save(self, state: dict[str, Any]) -> None:
        for key in self.KEYS:
            state[key] = getattr(self, key)

    def direction(self, flat_grad: Tensor, first: bool) -> None:
        """The next search direction: steepest descent at first, then the two-loop
        recursion's approximation of -H·g."""
        if first:
            self.d = flat_grad.neg()
            self.old_dirs, self.old_stps, self.ro, self.H_diag = [], [], [], 1
            return
        y = flat_grad.sub(self.prev_flat_grad)
        s = self.d.mul(self.t)
        ys = y.dot(s)
        if ys > 1e-10:  # keep the pair only where the curvature is positive
            if len(self.old_dirs) == self.size:
                for pairs in (self.old_dirs, self.old_stps, self.ro):
                    pairs.pop(0)
            self.old_dirs.append(y)
            self.old_stps.append(s)
            self.ro.append(1.0 / ys)
            self.H_diag = ys / y.dot(y)
        alphas = self.state.setdefault("al", [None] * self.size)
        q = flat_grad.neg()
        for i in range(len(self.old_dirs) - 1, -1, -1):
            alphas[i] = self.old_stps[i].dot(q) * self.ro[i]
            q.add_(self.old_dirs[i], alpha=-alphas[i])
        r = ops.mul(q, self.H_diag)
        for i in range(len(self.old_dirs)):
            beta = self.old_dirs[i].dot(r) * self.ro[i]
            r.add_(self.old_stps[i], alpha=alphas[i] - beta)
        self.d = r

    def remember_gradient(self, flat_grad: Tensor) -> None:
        if self.prev_flat_grad is None:
            self.prev_flat_grad = flat_grad.clone()
        else:
            self.prev_flat_grad.copy_(flat_grad)
