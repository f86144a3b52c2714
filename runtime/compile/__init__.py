"""`runtime.compile`: a whole training step as one generated function of numpy calls.

    step = runtime.compile(step)      # or @runtime.compile
    step()                            # traced: runs eagerly, and writes the code
    step()                            # runs the code
    print(step.code)                  # read it: a comment per line says where it came from

See docs/compile.md. The package: trace.py listens to one eager run and runs the engine's
own GraphTask on traced values (values.py's symbolic op namespace) for the backward;
optim.py traces an optimizer's step through its own code (numbers.py: the learning rate
and step count it reads afresh at each call); reads.py finds what the step reaches
through the objects it names (`self.model`, `self.x`) and guards.py guards it;
optimize.py rewrites the lines; step.py caches and runs them. `python -m runtime.compile
prog.py` prints the code of every step a program compiles.
"""

from __future__ import annotations

from runtime.compile.step import CompiledStep, compile  # noqa: A004 - torch.compile's name

__all__ = ["compile", "CompiledStep"]
