"""False-positive audit of the SC3xx, SC4xx and SC6xx rules on real code.

Runs every rule of those families (opt-in SC603 included) with :func:`shapecheck.semantic.interpreter.analyze`
over the installed torch's ``torch/nn``, ``torch/distributions`` and ``torch/optim``, and over
the transformers modeling files in ``audit/_corpus/transformers``, and (corpus
``transformers-other``) the other modules of the transformers wheel in ``audit/_corpus/dl``
(trainer, generation, pipelines...: training loops and ``.item()`` calls the modeling files
lack). Prints the count per rule per corpus and writes every diagnostic (file, line, code,
message, source line) as JSON lines, for review.

    python audit/audit_sc3_4_6.py [--out /tmp/audit_sc3_4_6.jsonl] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from shapecheck.rules.base import all_rules  # noqa: E402
from shapecheck.semantic.interpreter import analyze  # noqa: E402


def corpora() -> dict[str, list[Path]]:
    """The files of each corpus, by corpus name."""
    found: dict[str, list[Path]] = {}
    try:
        import torch

        root = Path(os.path.dirname(torch.__file__))
        for sub in ("nn", "distributions", "optim"):
            found[f"torch/{sub}"] = sorted((root / sub).rglob("*.py"))
    except ImportError:
        print("torch is not installed: skipping the torch corpora", file=sys.stderr)
    found["transformers"] = sorted((REPO / "audit" / "_corpus" / "transformers").glob("*.py"))
    wheels = sorted((REPO / "audit" / "_corpus" / "dl").glob("transformers-*.whl"))
    if wheels:
        with zipfile.ZipFile(wheels[-1]) as wheel:
            found["transformers-other"] = [
                _WheelFile(wheel.filename, name) for name in sorted(wheel.namelist())
                if name.endswith(".py") and "/models/" not in name
            ]
    return found


class _WheelFile:
    """A module inside the wheel, read without unpacking it."""

    def __init__(self, wheel: str, name: str) -> None:
        self.wheel = wheel
        self.name = name

    def read_text(self, encoding: str = "utf-8") -> str:
        """The module's source."""
        with zipfile.ZipFile(self.wheel) as archive:
            return archive.read(self.name).decode(encoding)

    def __str__(self) -> str:
        return f"{Path(self.wheel).name}!{self.name}"


def audit_file(path, rules) -> tuple[list[dict], list[str]]:
    """The diagnostics of ``rules`` on one file (a Path or a wheel member), and the crashes."""
    text = path.read_text(encoding="utf-8")
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        return [], [f"{path}: parse error {exc}"]
    ctx = analyze(module, [r() for r in rules])
    crashes = [f"{path}: {code} {type(exc).__name__}: {exc}" for code, exc in ctx.crashes]
    if not ctx.findings:
        return [], crashes
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = text.splitlines()
    out = []
    for finding in ctx.findings:
        line = positions[finding.node].start.line
        out.append({
            "file": str(path),
            "line": line,
            "code": finding.code,
            "message": finding.message,
            "source": lines[line - 1].strip() if line <= len(lines) else "",
        })
    return out, crashes


def main(argv=None) -> int:
    """Run the audit; print the counts table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="/tmp/audit_sc3_4_6.jsonl")
    parser.add_argument("--limit", type=int, default=0, help="at most N files per corpus")
    parser.add_argument("--corpus", action="append", help="only these corpora")
    args = parser.parse_args(argv)
    rules = [r for r in all_rules() if r.code[2] in "346"]
    counts: dict[str, Counter] = {}
    crashes: list[str] = []
    started = time.process_time()
    with open(args.out, "w", encoding="utf-8") as out:
        for name, files in corpora().items():
            if args.corpus and name not in args.corpus:
                continue
            if args.limit:
                files = files[: args.limit]
            counts[name] = Counter()
            for path in files:
                found, crashed = audit_file(path, rules)
                crashes.extend(crashed)
                for item in found:
                    item["corpus"] = name
                    counts[name][item["code"]] += 1
                    out.write(json.dumps(item) + "\n")
            print(f"{name}: {len(files)} files, {sum(counts[name].values())} diagnostics", flush=True)
    codes = [r.code for r in rules]
    print("\nrule    " + "  ".join(f"{c:>22}" for c in counts))
    for code in codes:
        print(f"{code}   " + "  ".join(f"{counts[c][code]:>22}" for c in counts))
    print(f"\ncrashes: {len(crashes)}; CPU seconds: {time.process_time() - started:.0f}")
    for line in crashes[:20]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
