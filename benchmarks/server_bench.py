"""What a keystroke costs the language server: analysis time per single-character edit.

Opens a real ~2,000-line file, then applies N single-character edits (a letter typed inside an
identifier at a random place, so the text stays valid Python) one after another, and for each
edit times the server's lint of the new text two ways: incremental (re-parsing only the touched
statements of the innermost ``def``/``class`` body the edit lies in, else the touched top-level
ones, :mod:`shapecheck.server.incremental_parse`, and replaying the analysis of the top-level
statements the edit cannot affect, :mod:`shapecheck.engine.unit_reuse`) and full (parse and
analyse the whole text). Both must give the same diagnostics and fixes (checked). The incremental
lint takes the positions of the nodes it did not re-parse from the last version
(:mod:`shapecheck.server.offset_reuse`), as the server does. Prints the median and p95 per edit,
the parse part alone, the analysis part alone (with reuse, and a full walk) and how many
top-level statements the analysis walked (the others were replayed). Each time is given as
wall-clock time and as the CPU time of the process (the same on an idle machine; on a shared one
the wall clock also counts the time other processes held the CPU).

    python benchmarks/server_bench.py                      # wav2vec2 from the corpus, 20 edits
    python benchmarks/server_bench.py FILE --edits 50 --seed 3
"""

from __future__ import annotations

import argparse
import ast
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT = ROOT / "benchmarks" / "_corpus" / "transformers" / "transformers__models__wav2vec2__modeling_wav2vec2.py"


def _edit(text: str, rng: random.Random) -> str:
    while True:
        at = rng.randrange(1, len(text) - 1)
        if text[at - 1].isalpha() and text[at].isalpha():
            new = text[:at] + rng.choice("abcdefgh") + text[at:]
            try:
                ast.parse(new)
            except SyntaxError:  # a keyword or a number spelled anew: another place
                continue
            return new


class _Times:
    """The wall-clock and the CPU time (of this process) of each run of a ``with`` block: on a
    shared machine the wall clock also counts the time other processes held the CPU."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __enter__(self) -> None:
        self._start = (time.perf_counter(), time.process_time())

    def __exit__(self, *exc: object) -> None:
        self.wall.append(time.perf_counter() - self._start[0])
        self.cpu.append(time.process_time() - self._start[1])


def p95(values: list[float]) -> float:
    """The 95th percentile of ``values`` (the nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def main() -> int:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", default=str(DEFAULT))
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from shapecheck.engine.checker import analyze
    from shapecheck.engine.config import Settings, registry_infos, selected_codes
    from shapecheck.engine.positions import known_offsets, use_offsets
    from shapecheck.engine.unit_reuse import analyze_recording
    from shapecheck.rules.catalog import get_rule
    from shapecheck.server.document_lint import lint_document
    from shapecheck.server.incremental_parse import parse_document

    text = Path(args.file).read_text()
    settings = Settings(rules=registry_infos(), layers=[])
    rng = random.Random(args.seed)
    classes = [get_rule(code) for code in selected_codes(settings)]
    first = lint_document(args.file, text, settings)
    previous, record = first.parsed, first.record
    doc = parse_document(text)
    checker, trace = analyze_recording(doc.module, [cls() for cls in classes], text)
    checker.release()
    incremental, full, parse_inc, parse_full, reparsed, depths = _Times(), _Times(), _Times(), _Times(), [], []
    analysis_reuse, analysis_full, walked = _Times(), _Times(), []
    for _ in range(args.edits):
        text = _edit(text, rng)
        with incremental:
            inc = lint_document(args.file, text, settings, previous, record)
        offsets = known_offsets(inc.parsed.module) if inc.parsed is not None else None
        with full:
            whole = lint_document(args.file, text, settings)
        if offsets is not None and inc.parsed is not None:  # the server runs no full lint in between
            use_offsets(inc.parsed.module, offsets, text)
        if inc.diagnostics != whole.diagnostics or inc.fixes != whole.fixes:
            print("MISMATCH: incremental and full lint differ", file=sys.stderr)
            return 1
        previous, record = inc.parsed, inc.record
        with parse_inc:
            doc = doc.edited(text)
        with analysis_reuse:
            checker, trace = analyze_recording(doc.module, [cls() for cls in classes], text, trace)
            checker.release()
        walked.append(trace.walked if trace is not None else len(doc.module.body))
        with analysis_full:
            analyze(doc.module, [cls() for cls in classes], text).release()
        reparsed.append(doc.reparsed)
        depths.append(doc.depth)
        with parse_full:
            parse_document(text)

    lines = text.count("\n")
    print(f"{Path(args.file).name}: {lines} lines, {args.edits} single-character edits")
    print(f"{'per edit (ms)':<28}{'median':>10}{'p95':>10}{'CPU median':>12}{'CPU p95':>10}")
    for label, times in [("lint, incremental parse", incremental), ("lint, full", full),
                         ("parse, incremental", parse_inc), ("parse, full", parse_full),
                         ("analysis, reusing", analysis_reuse), ("analysis, full", analysis_full)]:
        print(f"{label:<28}{1000 * statistics.median(times.wall):>10.1f}{1000 * p95(times.wall):>10.1f}"
              f"{1000 * statistics.median(times.cpu):>12.1f}{1000 * p95(times.cpu):>10.1f}")
    print(f"statements re-parsed per edit: median {statistics.median(reparsed)}; in a def/class body "
          f"{sum(1 for depth in depths if depth)} of {len(depths)} edits (median depth {statistics.median(depths)})")
    print(f"top-level statements walked per edit (of {len(doc.module.body)}; the others replayed): "
          f"median {statistics.median(walked)}, max {max(walked)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
