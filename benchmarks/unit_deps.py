"""What the analysis of one top-level unit (a module-level ``def`` or ``class``) reads from the rest
of the file: the measurement behind analysis reuse in the language server (issue 14).

Lints a file once with every rule, instrumenting the walk (no change to the package):

- the time of each top-level statement's walk with the rules watching, of the scans before the
  walk and of the call-site walks after it;
- for each unit, the other units it reads: callees re-analysed (also through the shared run
  cache), class tables keyed by class name (``class_attrs``, ``classes``, ``class_moves``,
  ``placements``, ``class_fixed``, ...), and the layers SC401/SC403 learnt other classes' methods
  feed (``fed_layer``);
- the callee statement budget spent;
- the rules' per-file state left after the walk.

Then, for every unit, the units to walk again after an edit inside it (the unit and, transitively,
every unit whose record mentions it) and what that walk would cost, weighted by the unit's lines
(where a random keystroke lands).

    python benchmarks/unit_deps.py [FILE ...]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT = ROOT / "benchmarks" / "_corpus" / "transformers" / "transformers__models__wav2vec2__modeling_wav2vec2.py"

CLASS_TABLES = ("classes", "class_attrs", "placements", "init_methods", "class_registered", "class_moving",
                "class_fixed")


class _State:
    """The unit being walked and what each unit read."""

    def __init__(self) -> None:
        self.unit: Any = None
        self.reads: dict[int, set[tuple[str, Any]]] = defaultdict(set)

    def note(self, kind: str, key: Any) -> None:
        """Record that the current unit read ``key`` of ``kind``."""
        if self.unit is not None:
            self.reads[self.unit].add((kind, key))


STATE = _State()


class _LoggedDict(dict):
    def __init__(self, kind: str, *args: Any) -> None:
        super().__init__(*args)
        self.kind = kind

    def get(self, key: Any, default: Any = None) -> Any:
        STATE.note(self.kind, key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        STATE.note(self.kind, key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        STATE.note(self.kind, key)
        return super().__contains__(key)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        STATE.note(self.kind, key)
        return super().setdefault(key, default)


class _LoggedSet(set):
    def __init__(self, kind: str, *args: Any) -> None:
        super().__init__(*args)
        self.kind = kind

    def __contains__(self, key: object) -> bool:
        STATE.note(self.kind, key)
        return super().__contains__(key)


def _instrument() -> dict[str, float]:
    """Patch the walk to time units and record their reads; returns the timing table."""
    from shapecheck.engine import checker as checker_mod
    from shapecheck.rules.device import sc401_cross_device_operation as sc401, sc403_factory_without_device as sc403
    from shapecheck.semantic import callee_analysis, interpreter, summaries
    from shapecheck.semantic.model import SemanticModel

    times: dict[str, float] = defaultdict(float)
    original_init = SemanticModel.__init__

    def init(self: Any) -> None:
        original_init(self)
        for name in CLASS_TABLES:
            setattr(self, name, _LoggedDict(name, getattr(self, name)))
        self.class_moves = _LoggedSet("class_moves", self.class_moves)

    SemanticModel.__init__ = init  # type: ignore[method-assign]

    original_outcome = callee_analysis.call_outcome

    def outcome(ev: Any, callee: Any, call: Any, receiver: Any) -> Any:
        if callee.home is None:
            STATE.note("callee", id(callee.node))
        return original_outcome(ev, callee, call, receiver)

    summaries._OUTCOME[:] = [outcome]
    summaries._REANALYSIS[:] = [lambda ev, callee, call, receiver: (lambda o: o[0] if o else None)(
        outcome(ev, callee, call, receiver))]

    for module in (sc401, sc403):
        original_fed = module.fed_layer

        def fed(feeds: Any, receiver: Any, method: str, index: int, _orig: Any = original_fed) -> Any:
            if receiver.qual is not None:
                STATE.note("feeds", receiver.qual)
            return _orig(feeds, receiver, method, index)

        module.fed_layer = fed  # type: ignore[attr-defined]

    original_stmt = interpreter.Interpreter._stmt

    def stmt(self: Any, node: Any) -> int:
        top = getattr(self, "_top_units", None)
        if top is not None and id(node) in getattr(self, "_methods", ()):
            start = time.perf_counter()
            try:
                return original_stmt(self, node)
            finally:
                times[f"method {id(node)}"] += time.perf_counter() - start
        if top is None or id(node) not in top or STATE.unit is not None:
            return original_stmt(self, node)
        STATE.unit = id(node)
        start = time.perf_counter()
        try:
            return original_stmt(self, node)
        finally:
            times[top[id(node)]] += time.perf_counter() - start
            STATE.unit = None

    interpreter.Interpreter._stmt = stmt  # type: ignore[method-assign]

    original_run = checker_mod.Checker.run

    def run(self: Any) -> None:
        self.interpreter._top_units = {id(s): _label(s) for s in self.module.body}
        self.interpreter._methods = {id(m) for s in self.module.body if type(s).__name__ == "ClassDef"
                                     for m in s.body.body if type(m).__name__ == "FunctionDef"}
        start = time.perf_counter()
        original_run(self)
        times["(whole walk)"] += time.perf_counter() - start

    checker_mod.Checker.run = run  # type: ignore[method-assign]
    original_contexts = checker_mod.context_findings

    def contexts(checker: Any, rules: Any) -> Any:
        start = time.perf_counter()
        try:
            return original_contexts(checker, rules)
        finally:
            times["(call-site walks)"] += time.perf_counter() - start

    checker_mod.context_findings = contexts
    return times


def _label(stmt: Any) -> str:
    import libcst as cst
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return ("class " if isinstance(stmt, cst.ClassDef) else "def ") + stmt.name.value
    return f"stmt@{id(stmt)}"


def _owners(module: Any) -> tuple[dict[int, int], dict[str, int]]:
    """id of a function node -> id of its top-level unit; class name -> id of its unit."""
    import libcst as cst
    owner: dict[int, int] = {}
    classes: dict[str, int] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef):
            classes[stmt.name.value] = id(stmt)
        for node in _defs(stmt):
            owner[id(node)] = id(stmt)
    return owner, classes


def _defs(stmt: Any) -> list[Any]:
    import libcst as cst
    found: list[Any] = []

    class _Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            found.append(node)

    stmt.visit(_Find())
    return found


def measure(path: Path) -> None:
    """Print the unit table and the re-walk estimate for ``path``."""
    import libcst as cst
    from shapecheck.engine.checker import analyze
    from shapecheck.rules.catalog import all_rules

    text = path.read_text()
    module = cst.parse_module(text)
    rules = [r() for r in all_rules()]
    STATE.reads.clear()
    times = _instrument_once()
    times.clear()
    start = time.perf_counter()
    checker = analyze(module, rules, text)
    total = time.perf_counter() - start
    defs = checker.model.callees
    owner, classes = _owners(module)
    units = list(module.body)
    labels = {id(s): _label(s) for s in units}
    lines = {id(s): module.code_for_node(s).count("\n") for s in units}
    # unit -> units it reads
    deps: dict[int, set[int]] = defaultdict(set)
    kinds: dict[str, int] = defaultdict(int)
    for unit, reads in STATE.reads.items():
        for kind, key in reads:
            other = owner.get(key) if kind == "callee" else classes.get(key) if isinstance(key, str) else None
            if other is not None and other != unit:
                deps[unit].add(other)
                kinds[kind] += 1
    readers: dict[int, set[int]] = defaultdict(set)
    for unit, others in deps.items():
        for other in others:
            readers[other].add(unit)
    print(f"\n{path.name}: {text.count(chr(10))} lines, {len(units)} top-level statements, "
          f"analyze {1000 * total:.0f} ms (walk {1000 * times['(whole walk)']:.0f}, call-site walks "
          f"{1000 * times['(call-site walks)']:.0f})")
    unit_time = {id(s): times.get(labels[id(s)], 0.0) for s in units}
    scans = times["(whole walk)"] - sum(unit_time.values())
    print(f"scans before the walk and module-level bookkeeping: {1000 * scans:.0f} ms; callee budget spent "
          f"{defs.spent if defs else 0} of 40000")
    print(f"cross-unit reads by kind (unit pairs): {dict(kinds)}")
    weighted: list[tuple[float, int]] = []
    for s in units:
        if not isinstance(s, (cst.FunctionDef, cst.ClassDef)):
            continue
        dirty = {id(s)}
        todo = [id(s)]
        while todo:
            u = todo.pop()
            for r in readers.get(u, ()):
                if r not in dirty:
                    dirty.add(r)
                    todo.append(r)
        cost = sum(unit_time[u] for u in dirty)
        weighted.append((cost, lines[id(s)]))
        if unit_time[id(s)] > 0.01 or len(dirty) > 1:
            read = sorted(labels[d] for d in deps.get(id(s), ()))
            print(f"  {labels[id(s)]:<48}{lines[id(s)]:>5} lines {1000 * unit_time[id(s)]:>6.1f} ms; "
                  f"re-walk {len(dirty)} units {1000 * cost:>6.1f} ms; reads {read}")
    per_line = [c for c, n in weighted for _ in range(max(n, 1))]
    print(f"re-walk per edit, weighted by lines: median {1000 * statistics.median(per_line):.0f} ms, "
          f"p95 {1000 * sorted(per_line)[int(0.95 * len(per_line))]:.0f} ms (+ scans and call-site walks, "
          "if they cannot be reused)")
    _fine(module, units, unit_time, times, STATE.reads, owner, classes)
    state = {}
    for rule in rules:
        sizes = {k: len(v) for k, v in vars(rule).items() if hasattr(v, "__len__") and len(v)}
        if sizes:
            state[rule.code] = sizes
    print(f"rule state left after the file: {state}")
    checker.release()


def _fine(module: Any, units: list[Any], unit_time: dict[int, float], times: dict[str, float],
          reads: dict[int, set[tuple[str, Any]]], owner: dict[int, int], classes: dict[str, int]) -> None:
    """The re-walk per edit with dependencies per function: an edit inside function ``F`` of unit
    ``X`` re-walks ``X`` (or only ``F``, for a method other than ``__init__``) and every unit that
    re-analysed ``F`` as a callee; an edit in ``__init__`` or elsewhere in a class (not in a method)
    also every unit that read ``X``'s class tables."""
    import libcst as cst
    callee_readers: dict[int, set[int]] = defaultdict(set)
    table_readers: dict[int, set[int]] = defaultdict(set)
    for unit, found in reads.items():
        for kind, key in found:
            if kind == "callee":
                callee_readers[key].add(unit)
            elif isinstance(key, str) and key in classes and classes[key] != unit:
                table_readers[classes[key]].add(unit)
    unit_level: list[float] = []
    method_level: list[float] = []
    for s in units:
        if not isinstance(s, (cst.FunctionDef, cst.ClassDef)):
            continue
        functions = [s] if isinstance(s, cst.FunctionDef) else \
            [m for m in s.body.body if isinstance(m, cst.FunctionDef)]
        rest = module.code_for_node(s).count("\n") - sum(module.code_for_node(f).count("\n") for f in functions)
        pieces = [(f, module.code_for_node(f).count("\n")) for f in functions] + [(None, max(rest, 0))]
        for f, n in pieces:
            dirty = {id(s)}
            inner = f is not None and isinstance(s, cst.ClassDef) and f.name.value != "__init__"
            if f is not None:
                for g in _defs(f):
                    dirty |= callee_readers.get(id(g), set())
            if not inner:
                dirty |= table_readers.get(id(s), set())
            others = sum(unit_time[u] for u in dirty if u != id(s))
            unit_level.extend([unit_time[id(s)] + others] * n)
            own = times.get(f"method {id(f)}", 0.0) if inner else unit_time[id(s)]
            method_level.extend([own + others] * n)
    for label, values in (("unit", unit_level), ("method", method_level)):
        ordered = sorted(values)
        print(f"fine-grained deps, re-walking the edited {label}: median {1000 * statistics.median(ordered):.0f} ms, "
              f"p95 {1000 * ordered[int(0.95 * len(ordered))]:.0f} ms per edit (weighted by lines)")


_TIMES: list[dict[str, float]] = []


def _instrument_once() -> dict[str, float]:
    if not _TIMES:
        _TIMES.append(_instrument())
    return _TIMES[0]


def main() -> int:
    """Measure each file named (default: wav2vec2)."""
    files = [Path(a) for a in sys.argv[1:]] or [DEFAULT]
    for f in files:
        measure(f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
