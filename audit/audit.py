"""False-positive audit of the SC1xx, SC2xx and SC5xx rules on real code.

Runs the layout, shape and einsum rules (default set plus opt-in ones when ``--all``) over:

- the installed torch package's ``torch/nn``, ``torch/distributions`` and ``torch/optim``;
- every ``modeling_*.py`` file of the transformers wheel, extracted flat into
  ``audit/_corpus/transformers/`` (``pip download --no-deps transformers``, unzip, copy).

It prints every diagnostic with its source line, then the counts per rule per corpus, and the
files the inference could not fully evaluate. Usage::

    python audit/audit.py                 # both corpora
    python audit/audit.py --corpus torch  # one of them
    python audit/audit.py --limit 40      # the first 40 files of each corpus
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from shapecheck.engine.runner import lint_text  # noqa: E402
from shapecheck.rules.base import all_rules  # noqa: E402

FAMILIES = ("SC1", "SC2", "SC5")


def torch_files() -> list[str]:
    """The .py files of torch/nn, torch/distributions and torch/optim (torch located, not imported
    by the linter itself)."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return []
    root = list(spec.submodule_search_locations)[0]
    out = []
    for sub in ("nn", "distributions", "optim"):
        for dirpath, _dirs, files in os.walk(os.path.join(root, sub)):
            for name in sorted(files):
                if name.endswith(".py"):
                    out.append(os.path.join(dirpath, name))
    return sorted(out)


def transformers_files() -> list[str]:
    """The extracted ``modeling_*.py`` files of the transformers wheel."""
    folder = os.path.join(HERE, "_corpus", "transformers")
    if not os.path.isdir(folder):
        return []
    return sorted(
        os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".py") and "modeling_" in n
    )


def audit(files: list[str], rules: list, show: bool) -> collections.Counter:
    """Lint ``files``; print each diagnostic; return the counts per code."""
    counts: collections.Counter = collections.Counter()
    for path in files:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as err:
            print(f"{path}: cannot read: {err}")
            continue
        lines = text.splitlines()
        for d in lint_text(text, rules, path=path):
            counts[d.code] += 1
            if show:
                src = lines[d.line - 1].strip() if 0 < d.line <= len(lines) else ""
                print(f"{path}:{d.line}:{d.column}: {d.code} {d.message}\n    | {src}")
    return counts


def main(argv: list[str] | None = None) -> int:
    """Entry point; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("torch", "transformers", "both"), default="both")
    parser.add_argument("--limit", type=int, default=0, help="only the first N files of each corpus")
    parser.add_argument("--all", action="store_true", help="include opt-in rules (SC205)")
    parser.add_argument("--quiet", action="store_true", help="counts only")
    args = parser.parse_args(argv)
    rules = [r for r in all_rules() if r.code.startswith(FAMILIES) and (args.all or r.default_enabled)]
    corpora = []
    if args.corpus in ("torch", "both"):
        corpora.append(("torch (nn, distributions, optim)", torch_files()))
    if args.corpus in ("transformers", "both"):
        corpora.append(("transformers modeling_*.py", transformers_files()))
    summary = []
    for label, files in corpora:
        if args.limit:
            files = files[: args.limit]
        start = time.process_time()
        counts = audit(files, rules, not args.quiet)
        summary.append((label, len(files), counts, time.process_time() - start))
    print()
    for label, n, counts, seconds in summary:
        per_rule = ", ".join(f"{r.code}: {counts.get(r.code, 0)}" for r in rules)
        other = {c: k for c, k in counts.items() if not c.startswith(FAMILIES)}
        print(f"{label}: {n} files, {seconds:.1f} CPU s; {per_rule}" + (f"; engine {other}" if other else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
