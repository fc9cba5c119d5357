"""What a hover costs the language server on a ~2,000-line file.

Opens a real file (wav2vec2's modeling file from the corpus by default), picks N names at random
places (the targets of assignments, the tensors a reader points at) and times, per hover:

- the hover in a Python document: the server has the parse of its last lint, so a hover is one
  analysis of the file with the hover's probe, which stops where the probe gets its fact
  (:func:`shapecheck.engine.hover_facts.hover_markdown`);
- the hover in a notebook cell: the same file cut into cells at its top-level statements, parsed
  as one program and analysed once (:func:`shapecheck.engine.notebooks.hover_in_cells`), and
  with the parse of those cells reused (the server keeps it for the hovers between two edits);
- "before": the same hovers as they were made before (a whole walk; in a cell, a lint without
  rules first, then that walk), for comparison. All three must give the same text (checked).

It counts the semantic walks each hover makes (must be 1) and prints the median and p95.

    python benchmarks/hover_bench.py                      # wav2vec2 from the corpus, 20 hovers
    python benchmarks/hover_bench.py FILE --hovers 50 --seed 3
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))
from server_bench import DEFAULT, p95  # noqa: E402  # the same file and percentile as the edit benchmark


def _targets(text: str, count: int, rng: random.Random) -> list[tuple[int, int]]:
    """``count`` positions (1-based line, 0-based column) of names assigned by ``name = ...``."""
    import re

    places = [(number, match.start(1)) for number, line in enumerate(text.splitlines(), start=1)
              for match in [re.match(r"\s*([A-Za-z_]\w*) = \S", line)] if match]
    return rng.sample(places, min(count, len(places)))


def _cells(text: str) -> list[tuple[int, str]]:
    """The text cut into one cell per top-level statement (a statement's decorators with it)."""
    import ast

    lines = text.splitlines(keepends=True)
    firsts = sorted({min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
                     for node in ast.parse(text).body} | {1})
    bounds = [*firsts, len(lines) + 1]
    return [(number, "".join(lines[bounds[number - 1] - 1:bounds[number] - 1]))
            for number in range(1, len(firsts) + 1)]


def _whole_walk(module: Any, target: Any, text: str) -> Any:
    """The hover's fact as it was found before: the whole analysis, not stopped at the node."""
    from shapecheck.engine.checker import analyze

    def hook(self: Any, node: Any, ctx: Any) -> None:
        if node is target and self.fact is None:
            self.fact = ctx.fact(node)

    probe = type("WholeWalk", (), {"code": "HOVER", "fact": None, f"visit_{type(target).__name__}": hook})()
    analyze(module, [probe], text).release()
    return probe.fact


def _two_analyses(cells: list[tuple[int, str]], cell: int, line: int, column: int) -> None:
    """The hover in a cell as it was made before: a lint without rules to get the module, then
    the hover's own analysis, a whole walk (for comparison)."""
    from shapecheck.engine.hover_facts import hover_markdown
    from shapecheck.engine.notebook_core import analyse
    from shapecheck.engine.notebook_program import build_program
    from shapecheck.engine.runner import _Linter

    program, module, _, _, _ = analyse(_Linter([]), "<notebook>", build_program(cells))
    start = program.program_line(cell, line)
    if module is not None and start is not None:
        hover_markdown(module, start, column, program.text, lambda m, n: _whole_walk(m, n, program.text))


def main() -> int:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", default=str(DEFAULT))
    parser.add_argument("--hovers", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from shapecheck.engine import checker
    from shapecheck.engine.hover_facts import expression_at, hover_markdown
    from shapecheck.engine.notebooks import hover_in_cells, parse_cells
    from shapecheck.engine.parsing import parse_source

    walks = [0]
    real_run = checker.Checker.run

    def counted(self: checker.Checker) -> None:
        walks[0] += 1
        real_run(self)

    checker.Checker.run = counted  # type: ignore[method-assign]

    text = Path(args.file).read_text()
    module = parse_source(text)
    cells = _cells(text)
    starts, before = {}, 0
    for number, source in cells:
        starts[number] = before
        before += source.count("\n")
    rng = random.Random(args.seed)
    python_times, whole_times, cell_times, cached_times, before_times = [], [], [], [], []
    shown = most_walks = 0
    parsed = parse_cells(cells)
    for line, column in _targets(text, args.hovers, rng):
        walks[0] = 0
        expression_at(module, line, column)  # the positions of the module, as the lint left them
        start = time.perf_counter()
        found = hover_markdown(module, line, column, text)
        python_times.append(time.perf_counter() - start)
        most_walks = max(most_walks, walks[0])
        expression_at(module, line, column)
        start = time.perf_counter()
        whole = hover_markdown(module, line, column, text, lambda m, n: _whole_walk(m, n, text))
        whole_times.append(time.perf_counter() - start)
        cell = max(n for n, first in starts.items() if first < line)
        walks[0] = 0
        start = time.perf_counter()
        in_cell = hover_in_cells(cells, cell, line - starts[cell], column)
        cell_times.append(time.perf_counter() - start)
        most_walks = max(most_walks, walks[0])
        start = time.perf_counter()
        hover_in_cells(cells, cell, line - starts[cell], column, parsed)
        cached_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        _two_analyses(cells, cell, line - starts[cell], column)
        before_times.append(time.perf_counter() - start)
        if not (found and found[0]) == (in_cell and in_cell[0]) == (whole and whole[0]):
            print(f"MISMATCH at line {line}: the hovers differ", file=sys.stderr)
            return 1
        shown += found is not None

    print(f"{Path(args.file).name}: {text.count(chr(10))} lines ({len(cells)} cells as a notebook), "
          f"{len(python_times)} hovers, {shown} with a tensor shown; at most {most_walks} analysis per hover")
    print(f"{'per hover (ms)':<34}{'median':>10}{'p95':>10}")
    for label, values in [("Python document", python_times),
                          ("Python document, before", whole_times),
                          ("notebook cell (parse + analysis)", cell_times),
                          ("notebook cell (parse reused)", cached_times),
                          ("notebook cell, before", before_times)]:
        print(f"{label:<34}{1000 * statistics.median(values):>10.1f}{1000 * p95(values):>10.1f}")
    return 0 if most_walks == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
