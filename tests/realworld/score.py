"""Score the linter on the real-world corpus: recall per family and every false alarm.

The linter runs in-process through the public API (:func:`shapecheck.lint.run`), with every rule
selected but SC603 (``--select SC --ignore SC603``: SC603 is an opt-in performance warning about
``.item()`` in loops, and this corpus is about correctness), on all bug cases, fixed twins and
look-alikes at once, without the cache. A bug case counts as caught when a diagnostic with the
manifest's code sits on the manifest's line. Any diagnostic in a fixed twin or a look-alike is a false alarm.

``python -m tests.realworld.score`` prints the table, the misses and the false alarms.
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILIES = ("view", "keepdim", "autograd", "device", "einsum", "shape")
#: rules left out of the run: SC603 (`.item()` in a loop) warns about speed, not correctness
IGNORED = ("SC603",)


@dataclass
class Score:
    """What one linter run over the corpus found."""

    #: family -> (caught, total)
    per_family: dict[str, tuple[int, int]]
    #: manifest entries that were not caught, each with the diagnostics found on its file
    misses: list[tuple[dict, list]] = field(default_factory=list)
    #: (relative path, line, code, message) of every diagnostic in a fixed twin or look-alike
    false_alarms: list[tuple[str, int, str, str]] = field(default_factory=list)

    @property
    def recall(self) -> float:
        """Caught bug cases over all bug cases."""
        caught = sum(c for c, _ in self.per_family.values())
        total = sum(t for _, t in self.per_family.values())
        return caught / total if total else 0.0


#: a CPU tensor meeting a GPU one is reported as SC401 or SC403 (the issue names both), where they meet
DEVICE_MEETING = frozenset({"SC401", "SC403"})


def _matches(case: dict, diag) -> bool:
    """Whether ``diag`` is the finding ``case`` expects: its code on its line. A case whose CPU
    tensor is made on one line and meets a device tensor on another (``meets``) is also caught by
    SC401 or SC403 on the line where they meet, where the device rules report."""
    if diag.code == case["code"] and diag.line == case["line"]:
        return True
    meets = case.get("meets")
    return meets is not None and case["code"] in DEVICE_MEETING and diag.code in DEVICE_MEETING \
        and diag.line in (case["line"], meets)


def _manifest() -> list[dict]:
    with open(os.path.join(HERE, "manifest.json"), encoding="utf-8") as handle:
        return json.load(handle)["cases"]


def _lookalikes() -> list[str]:
    folder = os.path.join(HERE, "lookalikes")
    return sorted(os.path.join("lookalikes", n) for n in os.listdir(folder) if n.endswith(".py"))


def lint_paths(relpaths: list[str]) -> dict[str, list]:
    """Diagnostics per relative path, from one in-process run with every rule selected."""
    from shapecheck.engine.config import Selectors, Settings, registry_infos
    from shapecheck.lint import run

    layers = [Selectors(select=["SC"], ignore=list(IGNORED))]
    settings = Settings(rules=registry_infos(), layers=layers, root=HERE, project_root=HERE)
    paths = [os.path.join(HERE, p) for p in relpaths]
    outcome = run(paths, settings, jobs=1, use_cache=False)
    found: dict[str, list] = {p: [] for p in relpaths}
    for diag in outcome.diagnostics:
        rel = os.path.relpath(os.path.abspath(diag.path), HERE)
        found.setdefault(rel, []).append(diag)
    return found


def score() -> Score:
    """Lint the whole corpus and score it."""
    cases = _manifest()
    clean = [c["fixed"] for c in cases] + _lookalikes()
    found = lint_paths([c["path"] for c in cases] + clean)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    result = Score(per_family={})
    for case in cases:
        diags = found.get(case["path"], [])
        hit = any(_matches(case, d) for d in diags)
        counts[case["family"]][1] += 1
        if hit:
            counts[case["family"]][0] += 1
        else:
            result.misses.append((case, diags))
    result.per_family = {f: (counts[f][0], counts[f][1]) for f in FAMILIES if f in counts}
    for path in clean:
        for d in found.get(path, []):
            result.false_alarms.append((path, d.line, d.code, d.message))
    return result


def render(result: Score) -> str:
    """The recall table, then the misses and the false alarms."""
    lines = ["family     caught  total  recall"]
    for family, (caught, total) in result.per_family.items():
        lines.append("%-9s  %6d  %5d  %5.0f%%" % (family, caught, total, 100.0 * caught / total))
    caught = sum(c for c, _ in result.per_family.values())
    total = sum(t for _, t in result.per_family.values())
    lines.append("%-9s  %6d  %5d  %5.0f%%" % ("overall", caught, total, 100.0 * result.recall))
    lines.append("")
    lines.append("missed (%d):" % len(result.misses))
    for case, diags in result.misses:
        got = ", ".join("%s@%d" % (d.code, d.line) for d in diags) or "nothing"
        lines.append("  %s  want %s@%d  got %s" % (case["path"], case["code"], case["line"], got))
    lines.append("")
    lines.append("false alarms (%d):" % len(result.false_alarms))
    for path, line, code, message in result.false_alarms:
        lines.append("  %s:%d %s %s" % (path, line, code, message))
    return "\n".join(lines)


def main() -> int:
    """Print the score."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    print(render(score()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
