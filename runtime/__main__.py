"""`python -m runtime prog.py [args]`: run an unmodified PyTorch program on gradgen.

The program's `import torch` (and `torch.nn`, `torch.optim`, ...) gives gradgen's modules
(runtime/aliases.py). Everything else is as `python prog.py [args]` would have it:
`sys.argv`, `sys.path[0]` (the program's directory), `__name__ == "__main__"`, `__file__`,
and, when the program fails, the traceback from its own frames and exit status 1.
`python -m runtime -m module [args]` runs a module as `python -m module` would.
"""

from __future__ import annotations

import importlib.machinery
import io
import os
import re
import runpy
import signal
import sys
import types
from types import TracebackType

from runtime import aliases

USAGE = "usage: python -m runtime prog.py [args ...]  |  python -m runtime -m module [args ...]"


def run_program(path: str, args: list[str]) -> None:
    """Run the file at `path` as the `__main__` module, as `python path args` does."""
    filename = os.path.abspath(path)
    sys.argv = [path, *args]
    sys.path[0] = os.path.dirname(filename)
    with io.open_code(filename) as source:
        # dont_inherit: this module's `from __future__` imports are not the program's.
        code = compile(source.read(), filename, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    module.__file__ = filename
    module.__loader__ = importlib.machinery.SourceFileLoader("__main__", filename)
    module.__builtins__ = __builtins__
    sys.modules["__main__"] = module
    exec(code, module.__dict__)


def run_module(name: str, args: list[str]) -> None:
    """Run module `name` as `__main__`, as `python -m name args` does."""
    sys.argv = [name, *args]  # runpy sets argv[0] to the module's file, as Python does
    sys.path[0] = os.getcwd()
    runpy.run_module(name, run_name="__main__", alter_sys=True)


def program_traceback(tb: TracebackType | None) -> TracebackType | None:
    """The traceback of the program's own frames, as Python would show it: the frames of
    this module and of runpy before the program's are dropped, and so are those of the
    import hook (Python shows none of its import system's). None when the program never
    ran (a syntax error, which carries its own location)."""
    while tb is not None and (tb.tb_frame.f_code.co_filename == __file__
                              or tb.tb_frame.f_globals.get("__name__") == "runpy"):
        tb = tb.tb_next
    hook = aliases.__file__
    while tb is not None and tb.tb_frame.f_code.co_filename == hook:
        tb = tb.tb_next
    current = tb
    while current is not None:
        while current.tb_next is not None and current.tb_next.tb_frame.f_code.co_filename == hook:
            current.tb_next = current.tb_next.tb_next
        current = current.tb_next
    return tb


def _name_what_is_missing(error: BaseException) -> None:
    """`from torch.optim import X` fails with Python's own ImportError, which names gradgen's
    module (Python makes it of the AttributeError the module gives): a note says which
    torch name gradgen lacks."""
    if not isinstance(error, ImportError) or error.name not in aliases.TORCH_MODULES.values():
        return
    match = re.match(r"cannot import name '(\w+)'", str(error))
    if match:
        owner = aliases.torch_name(error.name)
        error.add_note(aliases.not_in_gradgen(f"{owner}.{match.group(1)}"))


def _report(error: BaseException) -> int:
    """Report an uncaught exception as Python does, and return the exit status."""
    _name_what_is_missing(error)
    # Set on the exception too: Python's hook prints the traceback the exception carries.
    tb = program_traceback(error.__traceback__)
    sys.excepthook(type(error), error.with_traceback(tb), tb)
    if isinstance(error, KeyboardInterrupt):
        # Python dies of the signal, so that whoever started it sees the interrupt.
        sys.stdout.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return 1


def main(argv: list[str]) -> int:
    """Run the program `argv` names; returns the exit status (SystemExit passes through)."""
    if not argv or argv[0] == "-m" and len(argv) < 2:
        print(USAGE, file=sys.stderr)
        return 2
    if argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if argv[0] != "-m" and not os.path.exists(argv[0]):
        print(f"{sys.executable}: can't open file {os.path.abspath(argv[0])!r}: [Errno 2] No "
              "such file or directory", file=sys.stderr)
        return 2
    aliases.install_as_torch()
    try:
        if argv[0] == "-m":
            run_module(argv[1], argv[2:])
        else:
            run_program(argv[0], argv[1:])
    except SystemExit:
        raise
    except BaseException as error:
        return _report(error)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
