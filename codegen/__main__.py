"""`python -m codegen`: check the spec and regenerate generated/ (all I/O lives here).

    python -m codegen                 regenerate generated/ from derivatives.yaml
    python -m codegen --check         exit 1 with a diff if generated/ is stale
    python -m codegen --spec P --out D
    python -m codegen verify [OP ...] prove the formulas of the named ops (all by default)

A bad spec (or an output directory that cannot be written) exits with status 2 and leaves
the output directory as it was: every file is rendered first, written to a temporary
directory, and moved into place only when all of them succeeded.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from codegen.load import check_kernels, function_signatures, load_spec, module_functions
from codegen.model import SpecError
from codegen.render import render_all

ROOT = Path(__file__).resolve().parent.parent


def generate(spec: Path) -> dict[str, str]:
    """Spec path -> {file name: text}; raises SpecError."""
    kernels = function_signatures(ROOT / "runtime" / "kernels.py", private=True)
    manual = (ROOT / "runtime" / "manual.py").read_text(encoding="utf-8")
    raw_functions = module_functions(ROOT / "runtime" / "raw.py", private=True)
    infos = load_spec(spec)
    check_kernels(infos, kernels, "runtime/kernels.py")
    return render_all(infos, spec.name, frozenset(kernels), manual, raw_functions)


def _existing(out: Path) -> dict[str, str]:
    if not out.is_dir():
        return {}
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(out.glob("*.py"))}


def stale_diff(files: dict[str, str], out: Path) -> str:
    existing = _existing(out)
    diff: list[str] = []
    for name in sorted(set(files) | set(existing)):
        old = existing.get(name, "").splitlines(keepends=True)
        new = files.get(name, "").splitlines(keepends=True)
        diff.extend(difflib.unified_diff(old, new, f"{out.name}/{name} (on disk)",
                                         f"{out.name}/{name} (from the spec)"))
    return "".join(diff)


def write_atomically(files: dict[str, str], out: Path) -> None:
    """Write all files to a temporary directory, then swap it in for `out`.

    Whatever fails (a full disk, a permission), `out` is left as it was.
    """
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=out.parent))
    retired = None
    try:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
        if out.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{out.name}-old-", dir=out.parent))
            os.rename(out, retired / out.name)
        try:
            os.rename(staging, out)
        except OSError:
            if retired is not None:
                os.rename(retired / out.name, out)
            raise
    finally:
        if staging.exists():
            shutil.rmtree(staging)
        if retired is not None:
            shutil.rmtree(retired, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "verify":
        from codegen.verify import main as verify_main

        return verify_main(argv[1:])
    if argv and argv[0] == "explain":
        from codegen.explain import main as explain_main

        return explain_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m codegen", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Check the spec and regenerate generated/ from it.",
        epilog="Also: python -m codegen verify [OP ...] proves the named ops' formulas "
               "(see python -m codegen verify --help).\n"
               "Also: python -m codegen explain OP shows one op from its YAML to its code.")
    parser.add_argument("--spec", type=Path, default=ROOT / "derivatives.yaml",
                        help="the spec to read (default: derivatives.yaml)")
    parser.add_argument("--out", type=Path, default=ROOT / "generated",
                        help="the directory to write (default: generated/)")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 and print a diff if the output is stale; write nothing")
    args = parser.parse_args(argv)
    try:
        files = generate(args.spec)
    except SpecError as error:
        print(error, file=sys.stderr)
        return 2
    if args.check:
        diff = stale_diff(files, args.out)
        if diff:
            sys.stdout.write(diff)
            print(f"{args.out} is stale: run `python -m codegen`", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date ({len(files)} files)")
        return 0
    if not stale_diff(files, args.out):
        print(f"{args.out} is up to date ({len(files)} files)")
        return 0
    try:
        write_atomically(files, args.out)
    except OSError as error:
        print(f"cannot write {args.out}: {error}; it was left as it was", file=sys.stderr)
        return 2
    print(f"wrote {len(files)} files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
