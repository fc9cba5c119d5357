"""False-positive audit of the rules on real code, through the engine (noqa and positions as a user
sees them).

Runs the selected rules over these corpora:

- ``torch/nn``, ``torch/distributions``, ``torch/optim``: the installed torch package's sources
  (located, never imported);
- ``transformers``: every ``modeling_*.py`` file of the transformers wheel, extracted flat into
  ``audit/_corpus/transformers/`` (``pip download --no-deps transformers``, unzip, copy);
- ``transformers-other``: the other modules of the newest ``transformers-*.whl`` in
  ``audit/_corpus/dl/`` (trainer, generation, pipelines...: training loops and ``.item()`` calls
  the modeling files lack), read from the wheel without unpacking it.

It prints every diagnostic with its source line (unless ``--quiet``), then the count per rule per
corpus, the engine's own diagnostics (SC999: a rule crashed) and the CPU time. Usage::

    python audit/audit.py                           # the default rules, every corpus found
    python audit/audit.py --select SC1,SC2,SC5      # some families (opt-in rules they name too)
    python audit/audit.py --select SC403 --corpus torch --limit 40
    python audit/audit.py --all --quiet --out /tmp/audit.jsonl   # every rule; JSON lines too
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from shapecheck.engine.config import ENGINE_CODES, Selectors, selected_rules  # noqa: E402
from shapecheck.engine.runner import lint_text  # noqa: E402

CORPUS = REPO / "audit" / "_corpus"


class WheelFile:
    """A module inside a wheel, read without unpacking it."""

    def __init__(self, wheel: Path, name: str) -> None:
        self.wheel = wheel
        self.name = name

    def read_text(self, encoding: str = "utf-8") -> str:
        """The module's source."""
        with zipfile.ZipFile(self.wheel) as archive:
            return archive.read(self.name).decode(encoding)

    def __str__(self) -> str:
        return f"{self.wheel.name}!{self.name}"


def torch_corpora() -> dict[str, list[Path]]:
    """The .py files of torch/nn, torch/distributions and torch/optim, by corpus name."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        print("torch is not installed: skipping the torch corpora", file=sys.stderr)
        return {}
    root = Path(list(spec.submodule_search_locations)[0])
    return {f"torch/{sub}": sorted((root / sub).rglob("*.py")) for sub in ("nn", "distributions", "optim")}


def transformers_corpora() -> dict[str, list]:
    """The extracted modeling files, and the other modules of the newest wheel when there is one."""
    found: dict[str, list] = {}
    folder = CORPUS / "transformers"
    found["transformers"] = sorted(p for p in folder.glob("*.py") if "modeling_" in p.name)
    wheels = sorted((CORPUS / "dl").glob("transformers-*.whl"))
    if wheels:
        with zipfile.ZipFile(wheels[-1]) as wheel:
            found["transformers-other"] = [
                WheelFile(wheels[-1], name) for name in sorted(wheel.namelist())
                if name.endswith(".py") and "/models/" not in name
            ]
    return found


def chosen(name: str, wanted: list[str] | None) -> bool:
    """True when corpus ``name`` is asked for: by its name, or by its group (``torch``)."""
    return not wanted or any(name == w or name.startswith(w + "/") for w in wanted)


def audit_file(path, rules: list, show: bool) -> list[dict]:
    """The diagnostics of ``rules`` on one file (a Path or a wheel member); printed when ``show``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        print(f"{path}: cannot read: {err}")
        return []
    lines = text.splitlines()
    found = []
    for d in lint_text(text, rules, path=str(path)):
        source = lines[d.line - 1].strip() if 0 < d.line <= len(lines) else ""
        found.append({"file": str(path), "line": d.line, "column": d.column, "code": d.code,
                      "message": d.message, "source": source})
        if show:
            print(f"{path}:{d.line}:{d.column}: {d.code} {d.message}\n    | {source}")
    return found


def main(argv: list[str] | None = None) -> int:
    """Run the audit; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", help="comma-separated codes, prefixes or names (default: the default rules)")
    parser.add_argument("--all", action="store_true", help="every rule, opt-in ones included")
    parser.add_argument("--corpus", action="append", help="only this corpus or group (torch, torch/nn, "
                        "transformers, transformers-other); repeatable")
    parser.add_argument("--limit", type=int, default=0, help="only the first N files of each corpus")
    parser.add_argument("--quiet", action="store_true", help="counts only")
    parser.add_argument("--out", help="also write every diagnostic as a JSON line to this file")
    args = parser.parse_args(argv)
    select = ["SC"] if args.all else [s.strip() for s in args.select.split(",")] if args.select else None
    rules = selected_rules([Selectors(select=select)])
    if not rules:
        print("no rule matches the selection", file=sys.stderr)
        return 2
    corpora = {**torch_corpora(), **transformers_corpora()}
    counts: dict[str, Counter] = {}
    sizes: dict[str, int] = {}
    out = open(args.out, "w", encoding="utf-8") if args.out else None
    started = time.process_time()
    try:
        for name, files in corpora.items():
            if not chosen(name, args.corpus):
                continue
            if args.limit:
                files = files[: args.limit]
            counts[name] = Counter()
            sizes[name] = len(files)
            for path in files:
                for item in audit_file(path, rules, not args.quiet):
                    counts[name][item["code"]] += 1
                    if out is not None:
                        out.write(json.dumps({**item, "corpus": name}) + "\n")
    finally:
        if out is not None:
            out.close()
    print()
    width = max([len(n) for n in counts] + [8])
    print("rule    " + "  ".join(f"{n:>{width}}" for n in counts))
    print("files   " + "  ".join(f"{sizes[n]:>{width}}" for n in counts))
    for code in [r.code for r in rules] + sorted(ENGINE_CODES):
        if code in ENGINE_CODES and not any(counts[n][code] for n in counts):
            continue
        print(f"{code}   " + "  ".join(f"{counts[n][code]:>{width}}" for n in counts))
    print(f"\nCPU seconds: {time.process_time() - started:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
