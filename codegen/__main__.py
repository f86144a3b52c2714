"""`python -m codegen`: check the spec and regenerate generated/ (written here and in output.py).

    python -m codegen                 regenerate generated/ from derivatives.yaml
    python -m codegen --check         exit 1 with a diff if generated/ is stale
    python -m codegen --spec P --out D
    python -m codegen verify [OP ...] prove the formulas of the named ops (all by default)
    python -m codegen explain OP      one op from its entry to its generated code and proof
    python -m codegen export-torch [OP ...] --out FILE
                                      the formulas as torch.autograd.Function classes
    python -m codegen compare-torch [--json] [--write-docs] [--torch-spec PATH]
                                      the spec beside torch's derivatives.yaml, entry by entry

A bad spec (or an output directory that cannot be written) exits with status 2 and leaves
the output directory as it was: every file is rendered first, then codegen/output.py swaps
the whole set in (atomically on Linux), and refuses (status 2, touching nothing) an --out
holding anything the generator did not write. `--check` compares the generated files only:
it notes such a foreign entry on stderr, but that alone does not make the output stale.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from codegen import compare_torch, explain, export_torch, output, verify
from codegen.generate import ROOT, generate  # generate: also importable from here, as before
from codegen.model import SpecError


def stale_diff(files: dict[str, str], out: Path) -> str:
    """A unified diff from the generated files in `out` to `files` ("" when up to date).

    Only generated files (see codegen/output.py) are compared: anything else in `out` is not
    stale content but a reason for `python -m codegen` to refuse to write there.
    """
    existing = output.generated_files(out)
    diff: list[str] = []
    for name in sorted(set(files) | set(existing)):
        if existing.get(name) == files.get(name):
            continue
        old = existing.get(name, "").splitlines(keepends=True)
        new = files.get(name, "").splitlines(keepends=True)
        diff.extend(difflib.unified_diff(old, new, f"{out.name}/{name} (on disk)",
                                         f"{out.name}/{name} (from the spec)"))
    return "".join(diff)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "verify":
        return verify.main(argv[1:])
    if argv and argv[0] == "explain":
        return explain.main(argv[1:])
    if argv and argv[0] == "export-torch":
        return export_torch.main(argv[1:])
    if argv and argv[0] == "compare-torch":
        return compare_torch.main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m codegen", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Check the spec and regenerate generated/ from it.",
        epilog="Also: python -m codegen verify [OP ...] proves the named ops' formulas "
               "(see python -m codegen verify --help).\n"
               "Also: python -m codegen explain OP shows one op from its YAML to its code.\n"
               "Also: python -m codegen export-torch [OP ...] --out FILE writes the spec's "
               "formulas as torch.autograd.Function classes.\n"
               "Also: python -m codegen compare-torch sets the spec beside torch's "
               "derivatives.yaml.")
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
        if reason := output.refusal(args.out):
            print(f"note: `python -m codegen` would refuse to write {args.out}: {reason}",
                  file=sys.stderr)
        if diff:
            sys.stdout.write(diff)
            print(f"{args.out} is stale: run `python -m codegen`", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date ({len(files)} files)")
        return 0
    try:
        written = output.write(files, args.out)
    except output.Refused as error:
        print(error, file=sys.stderr)
        return 2
    except OSError as error:
        print(f"cannot write {args.out}: {error}; it was left as it was", file=sys.stderr)
        return 2
    if not written:
        print(f"{args.out} is up to date ({len(files)} files)")
        return 0
    print(f"wrote {len(files)} files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
