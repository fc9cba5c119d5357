"""Re-using the analysis of the top-level statements an edit cannot affect (the language server).

:func:`analyze_recording` is :func:`shapecheck.engine.checker.analyze` that also keeps a
:class:`UnitRecord` of the walk: for each top-level statement (a ``def``, a ``class``, any other
statement), the findings its walk reported, everything its walk read of the state that crosses
statements (the model's class tables, the module's bindings and saves, the import aliases, the
callee caches and index, every container and scalar of every rule instance) as it was when the
statement started, and everything it wrote there as it was when it ended. Given the record of
the last version, the walk of the new version skips a statement that is the same node as before
(the incremental parse keeps the identity of every statement it did not re-parse) when every
value it read is, at its start, the same as last time (field by field, nodes by identity): then
its walk would read and do exactly what it did, so its findings and its writes are replayed
instead. Any other statement is walked. The call-site walks after the walk run as always.

Everything is walked when the statements' kinds changed (a statement added or removed: the traces
go by position; a renamed ``def`` or ``class`` is only a new node, and what its new name changes
in the tables is read as any other change), or the scans before the walk or the rule set differ;
no record is kept when a rule crashed or the walk left state the journal cannot follow. A
statement that replaced a container of the module scope by a copy (a module-level ``if`` starts
each path from a copy of the module's bindings) counts as having read all of it. What the scans
before the walk found in each unchanged statement is kept too (:mod:`~shapecheck.semantic.version_memo`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, Optional, Sequence

import libcst as cst

from shapecheck.engine.checker import Checker
from shapecheck.engine.contexts import context_findings, merge_context_findings
from shapecheck.rules.base import Finding, Rule
from shapecheck.semantic.facts import Fact
from shapecheck.semantic.interpreter import Interpreter
from shapecheck.semantic.summaries import STATEMENT_BUDGET
from shapecheck.semantic.version_memo import VersionMemo, carrying

__all__ = ["UnitRecord", "analyze_recording"]

_MISSING = object()
#: the key under which a statement's trace keeps the size a container had when it started
_LEN = object()
#: the first element of a key that names a part of an entry of the class index
_PART = "(part)"
_DEPTH = 12


# ---------------------------------------------------------------------------- comparing values
def _same(a: Any, b: Any, depth: int = 0) -> bool:
    """``a`` and ``b`` say the same: facts field by field, containers element by element, syntax
    nodes (and anything without fields) by identity or ``==``."""
    if a is b:
        return True
    ta = type(a)
    if ta is not type(b) or depth > _DEPTH:
        return False
    if ta in (int, str, float, bool, bytes, type(None)):
        return bool(a == b)
    if isinstance(a, cst.CSTNode):
        return False
    if ta is tuple or ta is list:
        return len(a) == len(b) and all(_same(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, dict):
        if len(a) != len(b) or list(a) != list(b):
            return False
        return all(_same(v, b[k], depth + 1) for k, v in a.items())
    if isinstance(a, (set, frozenset)):
        return bool(a == b)
    if ta is Fact:
        return all(_same(x, y, depth + 1) for x, y in zip(a.__dict__.values(), b.__dict__.values()))
    if dataclasses.is_dataclass(a):
        return all(_same(getattr(a, f.name), getattr(b, f.name), depth + 1) for f in dataclasses.fields(a))
    fields = getattr(a, "__dict__", None)
    if fields is not None:
        return _same(fields, b.__dict__, depth + 1)
    try:
        return bool(a == b)
    except Exception:
        return False


def _copy(value: Any) -> Any:
    """A copy of a container value one level deep (so that later changes to it do not change it)."""
    tp = type(value)
    if tp is dict or tp is list or tp is set:
        return tp(value)
    return value


# ---------------------------------------------------------------------------- the journal
class UnitTrace:
    """What the walk of one top-level statement read and wrote, and what it reported."""

    __slots__ = ("node", "reads", "before", "whole", "writes", "sites", "findings", "scalars_in",
                 "scalars_out", "spent_in", "spent_out", "_groups")

    def __init__(self, node: cst.CSTNode) -> None:
        self.node = node
        #: (container, key) -> its value when the statement started (``_MISSING``: absent)
        self.reads: dict[tuple[int, Any], Any] = {}
        #: (container, key) -> its value before the statement first wrote it
        self.before: dict[tuple[int, Any], Any] = {}
        #: container -> a copy of it all as it was when the statement started
        self.whole: dict[int, Any] = {}
        #: (container, key) -> its value when the statement ended (``_MISSING``: removed)
        self.writes: dict[tuple[int, Any], Any] = {}
        #: the call sites it recorded: (id of the callee, id of the call, the site)
        self.sites: list[tuple[int, int, Any]] = []
        self.findings: list[Finding] = []
        self.scalars_in: tuple = ()
        self.scalars_out: tuple = ()
        self.spent_in = 0
        self.spent_out = 0
        self._groups: Optional[tuple[frozenset, dict, frozenset]] = None

    def read_groups(self) -> tuple[frozenset, dict, frozenset]:
        """The keys of ``reads`` by how an edit can change them: the plain keys ``(container,
        key)``; the parts of a class of the index by ``(container, class name)``; the
        containers whose size was read (found once: a trace does not change once recorded)."""
        if self._groups is None:
            plain = set()
            parts: dict[tuple[int, Any], list] = {}
            sizes = set()
            for k in self.reads:
                key = k[1]
                if key is _LEN:
                    sizes.add(k[0])
                elif type(key) is tuple and key and key[0] == _PART:
                    parts.setdefault((k[0], key[1]), []).append(k)
                else:
                    plain.add(k)
            self._groups = (frozenset(plain), parts, frozenset(sizes))
        return self._groups


class _Journal:
    """The containers of one walk and the trace of the statement being walked."""

    def __init__(self) -> None:
        self.trace: Optional[UnitTrace] = None
        self.containers: list[Any] = []
        self.broken = False
        #: why each statement that could have been replayed was walked (for the benchmark)
        self.reasons: list[str] = []
        self.names: dict[int, str] = {}

    def read(self, box: int, key: Any, value: Any) -> None:
        trace = self.trace
        if trace is not None:
            k = (box, key)
            if k not in trace.reads and k not in trace.before:
                trace.reads[k] = _copy(value)

    def wrote(self, box: int, key: Any, old: Any) -> None:
        trace = self.trace
        if trace is not None:
            k = (box, key)
            if k not in trace.before:
                trace.before[k] = _copy(old)

    def read_len(self, box: int, current: Any) -> None:
        trace = self.trace
        if trace is None or (box, _LEN) in trace.reads:
            return
        size = dict.__len__(current) if isinstance(current, dict) else set.__len__(current)
        for (b, key), old in trace.before.items():
            if b == box:
                if isinstance(current, dict):
                    exists = dict.__contains__(current, key)
                else:
                    exists = set.__contains__(current, key)
                size += (old is not _MISSING) - exists
        trace.reads[(box, _LEN)] = size

    def read_all(self, box: int, current: Any) -> None:
        trace = self.trace
        if trace is None or box in trace.whole:
            return
        if isinstance(current, _JDict):
            view = current.view
            start = dict(dict.items(current))
            for (b, key), old in trace.before.items():
                if b == box:
                    if old is _MISSING:
                        start.pop(key, None)
                    else:
                        start[key] = old
            trace.whole[box] = {k: view(v) for k, v in start.items()}
        else:
            start_set = set(set.__iter__(current))
            for (b, key), old in trace.before.items():
                if b == box:
                    if old is _MISSING:
                        start_set.discard(key)
                    else:
                        start_set.add(key)
            trace.whole[box] = start_set


class _JDict(dict):
    """A dict that tells the journal which keys are read and written."""

    #: what a read of the whole dict keeps of each value
    view: Callable[[Any], Any] = staticmethod(_copy)

    def __init__(self, journal: _Journal, contents: Any) -> None:
        super().__init__(contents)
        self._j = journal
        self._box = len(journal.containers)
        journal.containers.append(self)

    def __getitem__(self, key: Any) -> Any:
        value = dict.get(self, key, _MISSING)
        self._j.read(self._box, key, value)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _MISSING)
        self._j.read(self._box, key, value)
        return default if value is _MISSING else value

    def __contains__(self, key: object) -> bool:
        value = dict.get(self, key, _MISSING)
        self._j.read(self._box, key, value)
        return value is not _MISSING

    def __setitem__(self, key: Any, value: Any) -> None:
        self._j.wrote(self._box, key, dict.get(self, key, _MISSING))
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        self._j.wrote(self._box, key, dict.get(self, key, _MISSING))
        dict.__delitem__(self, key)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _MISSING)
        self._j.read(self._box, key, value)
        if value is _MISSING:
            self._j.wrote(self._box, key, _MISSING)
            dict.__setitem__(self, key, default)
            return default
        # the caller may change the value it gets in place: count it as written
        self._j.wrote(self._box, key, value)
        return value

    def pop(self, key: Any, *default: Any) -> Any:
        value = dict.get(self, key, _MISSING)
        self._j.read(self._box, key, value)
        if value is not _MISSING:
            self._j.wrote(self._box, key, value)
        return dict.pop(self, key, *default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def _all(self) -> None:
        self._j.read_all(self._box, self)

    def __iter__(self) -> Any:
        self._all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._j.read_len(self._box, self)
        return dict.__len__(self)

    def keys(self) -> Any:
        self._all()
        return dict.keys(self)

    def values(self) -> Any:
        self._all()
        return dict.values(self)

    def items(self) -> Any:
        self._all()
        return dict.items(self)

    def copy(self) -> dict:
        self._all()
        return dict(dict.items(self))

    def clear(self) -> None:
        for key, value in dict.items(self):
            self._j.wrote(self._box, key, value)
        dict.clear(self)

    def popitem(self) -> Any:
        self._j.broken = True
        return dict.popitem(self)

    def __reduce__(self) -> Any:  # pragma: no cover - never pickled
        raise TypeError("not picklable")


class _JSet(set):
    """A set that tells the journal which members are asked about and added."""

    def __init__(self, journal: _Journal, contents: Any) -> None:
        super().__init__(contents)
        self._j = journal
        self._box = len(journal.containers)
        journal.containers.append(self)

    def __contains__(self, key: object) -> bool:
        found = set.__contains__(self, key)
        self._j.read(self._box, key, True if found else _MISSING)
        return found

    def add(self, key: Any) -> None:
        self._j.wrote(self._box, key, True if set.__contains__(self, key) else _MISSING)
        set.add(self, key)

    def discard(self, key: Any) -> None:
        self._j.wrote(self._box, key, True if set.__contains__(self, key) else _MISSING)
        set.discard(self, key)

    def remove(self, key: Any) -> None:
        self._j.wrote(self._box, key, True if set.__contains__(self, key) else _MISSING)
        set.remove(self, key)

    def update(self, *others: Iterable[Any]) -> None:
        for other in others:
            for key in other:
                self.add(key)

    def __iter__(self) -> Any:
        self._j.read_all(self._box, self)
        return set.__iter__(self)

    def __len__(self) -> int:
        self._j.read_len(self._box, self)
        return set.__len__(self)

    def clear(self) -> None:
        self._j.broken = True
        set.clear(self)

    def pop(self) -> Any:
        self._j.broken = True
        return set.pop(self)

    def __reduce__(self) -> Any:  # pragma: no cover - never pickled
        raise TypeError("not picklable")


class _JClassIndex(_JDict):
    """The index of the file's classes (:class:`~shapecheck.semantic.summaries.ClassInfo` by
    name). Each entry is handed out as a :class:`_ClassEntry` that tells the journal which of its
    parts are read: the class node, its bases, or one method by name. A walk that goes through
    all of them (which class derives from which and defines which method) reads only their
    names, in order: what it reads of each entry it gets is a read of that part."""

    view = staticmethod(lambda info: None)

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _MISSING)
        if value is _MISSING:
            self._j.read(self._box, key, _MISSING)
            return default
        return _ClassEntry(self, key, value)

    def __getitem__(self, key: Any) -> Any:
        value = dict.get(self, key, _MISSING)
        if value is _MISSING:
            self._j.read(self._box, key, _MISSING)
            raise KeyError(key)
        return _ClassEntry(self, key, value)

    def __contains__(self, key: object) -> bool:
        found = dict.__contains__(self, key)
        self._j.read(self._box, (_PART, key, "exists"), found)
        return found

    def items(self) -> Any:
        self._all()
        return [(k, _ClassEntry(self, k, v)) for k, v in dict.items(self)]

    def values(self) -> Any:
        self._all()
        return [_ClassEntry(self, k, v) for k, v in dict.items(self)]

    def copy(self) -> dict:
        self._all()
        return dict(self.items())

    def part(self, key: tuple) -> Any:
        """The live value of a part ``(_PART, class name, part[, method name])``."""
        info = dict.get(self, key[1], _MISSING)
        if key[2] == "exists":
            return info is not _MISSING
        if info is _MISSING:
            return _MISSING
        if key[2] == "method":
            return info.methods.get(key[3], _MISSING)
        return getattr(info, key[2])


class _ClassEntry:
    """One class of the index, telling the journal which part of it is read."""

    __slots__ = ("_index", "_name", "_info")

    def __init__(self, index: _JClassIndex, name: str, info: Any) -> None:
        self._index = index
        self._name = name
        self._info = info

    def _read(self, part: str, value: Any) -> Any:
        self._index._j.read(self._index._box, (_PART, self._name, part), value)
        return value

    @property
    def node(self) -> cst.ClassDef:
        """The class statement (reading it reads the whole class)."""
        return self._read("node", self._info.node)

    @property
    def bases(self) -> tuple:
        """The names of the bases as written."""
        return self._read("bases", self._info.bases)

    @property
    def methods(self) -> "_MethodTable":
        """The methods by name."""
        return _MethodTable(self)


class _MethodTable:
    """The methods of one class of the index: each name looked up is a read of that method."""

    __slots__ = ("_entry",)

    def __init__(self, entry: _ClassEntry) -> None:
        self._entry = entry

    def get(self, name: str, default: Any = None) -> Any:
        entry = self._entry
        found = entry._info.methods.get(name, _MISSING)
        entry._index._j.read(entry._index._box, (_PART, entry._name, "method", name), found)
        return default if found is _MISSING else found

    def __contains__(self, name: object) -> bool:
        return self.get(name, _MISSING) is not _MISSING  # type: ignore[arg-type]

    def __getitem__(self, name: str) -> Any:
        found = self.get(name, _MISSING)
        if found is _MISSING:
            raise KeyError(name)
        return found

    def _all(self) -> dict:
        entry = self._entry
        return entry._read("methods", dict(entry._info.methods))

    def __iter__(self) -> Any:
        return iter(self._all())

    def items(self) -> Any:
        return self._all().items()

    def values(self) -> Any:
        return self._all().values()

    def keys(self) -> Any:
        return self._all().keys()

    def __len__(self) -> int:
        return len(self._all())


class _JSites(_JDict):
    """The call sites table: each recorded site also goes to the statement's trace, in order."""

    def setdefault(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _MISSING)
        if value is _MISSING:
            value = _SiteCalls(self._j, key)
            dict.__setitem__(self, key, value)
        return value


class _SiteCalls(dict):
    def __init__(self, journal: _Journal, callee: int) -> None:
        super().__init__()
        self._j = journal
        self._callee = callee

    def __setitem__(self, key: Any, value: Any) -> None:
        trace = self._j.trace
        if trace is not None:
            trace.sites.append((self._callee, key, value))
        dict.__setitem__(self, key, value)


def _wrap(journal: _Journal, value: Any) -> Any:
    tp = type(value)
    if tp is dict:
        return _JDict(journal, value)
    if tp is set:
        return _JSet(journal, value)
    return value


# the attributes of each object the journal watches (containers) or snapshots (scalars)
_MODEL_BOXES = ("classes", "class_attrs", "class_moves", "placements", "init_methods", "class_registered",
                "class_moving", "class_fixed", "steady_devices", "external_attrs", "signatures", "module_globals",
                "module_names", "declared_globals", "globals_at_def", "loop_entries")
_MODEL_SCALARS = ("top_assigned", "only_run", "custom_collate", "custom_transform", "default_device_set",
                  "params_frozen", "default_grad")
# `found_methods` remembers the method a call reaches: a statement that finds it there reads what
# an earlier one found (through the class index)
_DEFS_BOXES = ("functions", "imported", "memo", "runs", "found_methods")
_SAVES_BOXES = ("versions", "changed", "backwards", "freed", "made")
_SHARED_BOXES = ("deps", "saved", "assigned_from", "elements")


class _Watched:
    """The journaled state of one checker: which containers and which scalars."""

    def __init__(self, checker: Checker, journal: _Journal) -> None:
        self.journal = journal
        self.scalar_owners: list[tuple[Any, tuple[str, ...]]] = []
        self.rules: list[Any] = []
        self.module_grad: list = []
        #: (what holds the attribute, its name, the journaled container it must hold)
        self.slots: list[tuple[Callable[[], Any], str, Any]] = []

    def after_prescan(self, checker: Checker) -> None:
        """Wrap what the scans before the walk made (model tables, module scope, callee index,
        saves)."""
        journal = self.journal
        model = checker.model
        for name in _MODEL_BOXES:
            setattr(model, name, _wrap(journal, getattr(model, name)))
        self.scalar_owners.append((model, _MODEL_SCALARS))
        # a resolved name is cached by node, and a new import clears the cache: the answer is the
        # one the aliases give now. The cache is emptied before each statement is walked, so that
        # the statement reads the aliases each answer comes from itself.
        model.imports.aliases = _wrap(journal, model.imports.aliases)
        module = model.scopes.module
        self.module_grad = module.grad
        env = _wrap(journal, module.env)
        if module.body_env is module.env:
            module.body_env = env
        else:
            module.body_env = _wrap(journal, module.body_env)
        module.env = env
        self.slots.append((lambda: module, "env", env))
        self.scalar_owners.append((module, ("in_forward", "rebound_attrs")))
        saves = module.saves
        for name in _SAVES_BOXES:
            setattr(saves, name, _wrap(journal, getattr(saves, name)))
            self.slots.append((lambda: module.saves, name, getattr(saves, name)))
        shared = saves.shared
        for name in _SHARED_BOXES:
            setattr(shared, name, _wrap(journal, getattr(shared, name)))
        self.scalar_owners.append((shared, ("counter", "records", "made_any")))
        defs = model.callees
        if defs is not None:
            for name in _DEFS_BOXES:
                setattr(defs, name, _wrap(journal, getattr(defs, name)))
            defs.classes = _JClassIndex(journal, dict.items(defs.classes))
            defs.sites = _JSites(journal, defs.sites)
        branches = checker.interpreter.branches
        branches._sides = _wrap(journal, branches._sides)

    def restore_slots(self) -> None:
        """Put the journaled containers back where the statement just walked replaced them by
        copies (each path of a module-level ``if`` starts from a copy of the module's bindings).
        What it read in the copies is not known: it counts as having read the whole container
        as it was when it started; what the copies hold now counts as its writes."""
        for owner, name, box in self.slots:
            held = owner()
            current = getattr(held, name)
            if current is box:
                continue
            self.journal.read_all(box._box, box)
            if isinstance(box, _JDict):
                for key in set(dict.keys(box)) | set(current):
                    old = dict.get(box, key, _MISSING)
                    if old is not current.get(key, _MISSING):
                        self.journal.wrote(box._box, key, old)
                dict.clear(box)
                dict.update(box, current)
            else:
                for key in set(set.__iter__(box)) ^ set(current):
                    self.journal.wrote(box._box, key, True if set.__contains__(box, key) else _MISSING)
                set.clear(box)
                set.update(box, current)
            setattr(held, name, box)

    def wrap_rules(self, rules: Sequence[Any]) -> None:
        """Journal every container of every rule instance (and of the helper objects they hold)."""
        for rule in rules:
            self.rules.append(rule)
            self._wrap_object(rule, 0)

    def _wrap_object(self, obj: Any, depth: int) -> None:
        scalars = []
        for name, value in list(vars(obj).items()):
            tp = type(value)
            if tp is dict or tp is set:
                setattr(obj, name, _wrap(self.journal, value))
                self.journal.names[len(self.journal.containers) - 1] = f"{type(obj).__name__}.{name}"
            elif tp in (int, str, bool, float, type(None), tuple, frozenset) or isinstance(value, (cst.CSTNode, Fact)):
                scalars.append(name)
            elif depth == 0 and hasattr(value, "__dict__") and not callable(value):
                self._wrap_object(value, depth + 1)
            elif not callable(value):
                self.journal.broken = True  # state the journal cannot follow
        self.scalar_owners.append((obj, tuple(scalars)))

    def scalars(self) -> tuple:
        """The scalar state, in a fixed order."""
        return (tuple(self.module_grad),) + tuple(
            getattr(owner, name, _MISSING) for owner, names in self.scalar_owners for name in names)

    def set_scalars(self, values: tuple) -> None:
        """Put the scalar state back to ``values`` (from :meth:`scalars`)."""
        self.module_grad[:] = values[0]
        i = 1
        for owner, names in self.scalar_owners:
            for name in names:
                if values[i] is not _MISSING:
                    setattr(owner, name, values[i])
                i += 1


# ---------------------------------------------------------------------------- the record
@dataclasses.dataclass
class UnitRecord:
    """The traces of one analysed version of a file, for the next version's analysis."""

    module: cst.Module
    traces: list[UnitTrace]
    #: what the scans before the walk and the rule set gave: the next version must match it
    header: tuple
    #: every journaled container as it was when the walk of the first statement began
    prewalk: list
    #: how many top-level statements this analysis walked (the others were replayed)
    walked: int = 0
    #: why each statement that was the same node as last time was walked all the same
    reasons: list[str] = dataclasses.field(default_factory=list)
    #: what the scans before the walk found in each top-level statement, for the next version
    scans: VersionMemo = dataclasses.field(default_factory=VersionMemo)


class _ReuseInterpreter(Interpreter):
    """The walk with a trace per top-level statement, skipping those the last record allows."""

    unit_hook: Optional[Callable[[cst.BaseStatement], Optional[int]]] = None

    def _stmt(self, stmt: cst.BaseStatement) -> int:
        hook = self.unit_hook
        if hook is not None:
            ended = hook(stmt)
            if ended is not None:
                return ended
        return super()._stmt(stmt)


def _header(checker: Checker, rules: Sequence[Any]) -> tuple:
    interp = checker.interpreter
    return (tuple(type(r).__name__ for r in rules), interp._track_saves,
            checker.model.scopes.module.saves.shared.records, interp._evidence[0] if interp._evidence else None)


def _outline(module: cst.Module) -> list[type]:
    return [type(stmt) for stmt in module.body]


class _Run:
    """One analysis with the journal: records every statement, replays those it may."""

    def __init__(self, checker: Checker, rules: Sequence[Any], previous: Optional[UnitRecord]) -> None:
        self.checker = checker
        self.rules = rules
        self.journal = _Journal()
        self.watched = _Watched(checker, self.journal)
        self.previous = previous
        self.traces: list[UnitTrace] = []
        self.tops = {id(s): i for i, s in enumerate(checker.module.body)}
        self.walked = 0
        self.header: tuple = ()
        self.prewalk: list = []
        #: (container, key) whose value may differ from the last version's at the same point of
        #: the walk (written by a statement walked anew, or different before the walk began)
        self.dirty_keys: set[tuple[int, Any]] = set()
        #: the containers with such keys (or whose keys may come in another order)
        self.dirty_boxes: set[int] = set()
        #: the keys of :attr:`dirty_keys` by container
        self.dirty_by_box: dict[int, set[Any]] = {}

    def start(self, stmt: cst.BaseStatement) -> Optional[int]:
        """Called by the interpreter before each statement: the top-level ones are traced."""
        checker = self.checker
        index = self.tops.get(id(stmt))
        scopes = checker.model.scopes
        if index is None or self.journal.trace is not None or scopes.top is not scopes.module:
            return None
        if not self.traces:
            self.watched.after_prescan(checker)
            self.header = _header(checker, self.rules) + (len(self.journal.containers),)
            self.prewalk = [self._contents(box) for box in self.journal.containers]
            if self.previous is not None and not _same(self.header, self.previous.header):
                self.previous = None
            self._diff_prewalk()
        old = self._replayable(index, stmt)
        if old is not None:
            self._replay(old)
            self.traces.append(old)
            return 0  # NORMAL
        trace = UnitTrace(stmt)
        checker.model.imports.forget_answers()
        trace.scalars_in = self.watched.scalars()
        defs = checker.model.callees
        trace.spent_in = defs.spent if defs is not None else 0
        found = len(checker.findings)
        crashes = len(checker.crashes)
        self.journal.trace = trace
        interp = checker.interpreter
        assert isinstance(interp, _ReuseInterpreter)
        hook = interp.unit_hook
        interp.unit_hook = None
        try:
            ended = Interpreter._stmt(interp, stmt)
            self.watched.restore_slots()
        finally:
            interp.unit_hook = hook
            self.journal.trace = None
        if len(checker.crashes) != crashes:
            self.journal.broken = True
        trace.findings = checker.findings[found:]
        trace.scalars_out = self.watched.scalars()
        trace.spent_out = defs.spent if defs is not None else 0
        writes = {k: _copy(self._value(k)) for k in trace.before}
        for k, seen in trace.reads.items():  # a value read and then changed in place
            if k[1] is not _LEN and not (type(k[1]) is tuple and k[1] and k[1][0] == _PART) \
                    and k not in writes and not _same(self._value(k), seen):
                writes[k] = _copy(self._value(k))
        containers = self.journal.containers
        for box, seen in trace.whole.items():
            live = containers[box]
            if isinstance(live, _JDict):
                for k, v in dict.items(live):
                    if (box, k) not in writes and (k not in seen or not _same(live.view(v), seen[k])):
                        writes[(box, k)] = _copy(v)
                for k in seen:
                    if (box, k) not in writes and not dict.__contains__(live, k):
                        writes[(box, k)] = _MISSING
        trace.writes = writes
        self.traces.append(trace)
        self.walked += 1
        self._dirty(trace.writes)
        if self.previous is not None and index < len(self.previous.traces):
            self._dirty(self.previous.traces[index].writes)
        return ended

    def _value(self, key: tuple[int, Any]) -> Any:
        box = self.journal.containers[key[0]]
        if key[1] is _LEN:
            return dict.__len__(box) if isinstance(box, dict) else set.__len__(box)
        if type(key[1]) is tuple and key[1] and key[1][0] == _PART and isinstance(box, _JClassIndex):
            found = box.part(key[1])
            return dict(found) if key[1][2] == "methods" else found
        if isinstance(box, dict):
            return dict.get(box, key[1], _MISSING)
        return True if set.__contains__(box, key[1]) else _MISSING

    @staticmethod
    def _contents(box: Any) -> Any:
        if isinstance(box, dict):
            return {k: _copy(v) for k, v in dict.items(box)}
        return set(set.__iter__(box))

    def _diff_prewalk(self) -> None:
        """Mark the keys whose value before the walk differs from the last version's."""
        previous = self.previous
        if previous is None or len(previous.prewalk) != len(self.prewalk):
            self.previous = None
            return
        for box, (old, new) in enumerate(zip(previous.prewalk, self.prewalk)):
            if isinstance(new, dict) and isinstance(old, dict):
                for k in old.keys() | new.keys():
                    if not _same(old.get(k, _MISSING), new.get(k, _MISSING)):
                        self._mark(box, k)
                if list(old) != list(new):
                    self.dirty_boxes.add(box)
            elif isinstance(new, set) and isinstance(old, set):
                for k in old ^ new:
                    self._mark(box, k)
            else:
                self.previous = None
                return

    def _dirty(self, writes: dict) -> None:
        for box, key in writes:
            self._mark(box, key)

    def _mark(self, box: int, key: Any) -> None:
        """The value of ``key`` in container ``box`` may differ from the last version's."""
        self.dirty_keys.add((box, key))
        self.dirty_boxes.add(box)
        self.dirty_by_box.setdefault(box, set()).add(key)

    def _replayable(self, index: int, stmt: cst.BaseStatement) -> Optional[UnitTrace]:
        previous = self.previous
        if previous is None or self.journal.broken:
            return None
        old = previous.traces[index]
        if old.node is not stmt:
            return None
        reasons = self.journal.reasons
        scalars = self.watched.scalars()
        if old.scalars_in != scalars:
            reasons.append(f"scalars {[i for i, (x, y) in enumerate(zip(old.scalars_in, scalars)) if x != y]}")
            return None
        defs = self.checker.model.callees
        spent = defs.spent if defs is not None else 0
        if old.spent_out > STATEMENT_BUDGET or spent + (old.spent_out - old.spent_in) > STATEMENT_BUDGET:
            return None
        containers = self.journal.containers
        dirty_keys = self.dirty_keys
        dirty_boxes = self.dirty_boxes
        reads = old.reads
        plain, parts, sizes = old.read_groups()
        maybe = list(plain & dirty_keys) if dirty_keys else []
        if parts and dirty_keys:
            maybe.extend(k for group in parts.keys() & dirty_keys for k in parts[group])
        if sizes:
            maybe.extend((box, _LEN) for box in sizes & dirty_boxes)
        for key in maybe:
            if not _same(self._value(key), reads[key]):
                reasons.append(f"read {self.journal.names.get(key[0], key[0])}:{str(key[1])[:40]}")
                return None
        for box, value in old.whole.items():
            if box not in dirty_boxes:
                continue
            if not self._same_whole(containers[box], box, value):
                reasons.append(f"whole {self.journal.names.get(box, box)}")
                return None
        return old

    def _same_whole(self, live: Any, box: int, seen: Any) -> bool:
        """The container ``box`` holds now what a statement that read all of it saw last time:
        its keys in the same order, and the same value under every key that may have changed
        since (:attr:`dirty_keys`; the others hold what they held last time at this point)."""
        if not isinstance(live, _JDict):
            return bool(set(set.__iter__(live)) == seen)
        if list(dict.keys(live)) != list(seen):
            return False
        view = live.view
        for key in self.dirty_by_box.get(box, ()):
            if dict.__contains__(live, key) and not _same(view(dict.__getitem__(live, key)), seen[key]):
                return False
        return True

    def _replay(self, old: UnitTrace) -> None:
        containers = self.journal.containers
        for (box, key), value in old.writes.items():
            target = containers[box]
            if isinstance(target, dict):
                if value is _MISSING:
                    dict.pop(target, key, None)
                else:
                    dict.__setitem__(target, key, _copy(value))
            elif value is _MISSING:
                set.discard(target, key)
            else:
                set.add(target, key)
        defs = self.checker.model.callees
        if defs is not None:
            for callee, call, site in old.sites:
                defs.sites.setdefault(callee, {})[call] = site
            defs.spent += old.spent_out - old.spent_in
        self.watched.set_scalars(old.scalars_out)
        self.checker.findings.extend(old.findings)


def analyze_recording(module: cst.Module, rules: Sequence[Any], text: Optional[str] = None,
                      previous: Optional[UnitRecord] = None) -> tuple[Checker, Optional[UnitRecord]]:
    """:func:`shapecheck.engine.checker.analyze` of ``module`` (no imported files), replaying the
    top-level statements that ``previous`` (the record of the last version) shows the edit
    cannot affect, and taking what the scans before the walk found in the unchanged statements
    from it (:mod:`~shapecheck.semantic.version_memo`); returns the checker and the record of
    this version (``None`` when the walk cannot be recorded: the next analysis then walks
    everything)."""
    memo = previous.scans if previous is not None else VersionMemo()
    if text is not None:
        rules = [r for r in rules if not isinstance(r, Rule) or type(r).applies_to(text)]
    if previous is not None and _outline(previous.module) != _outline(module):
        previous = None
    checker = Checker(module, rules, text)
    interp = _ReuseInterpreter(checker.model, checker.evaluator, checker)
    checker.interpreter = interp
    checker.context._interpreter = interp  # type: ignore[attr-defined]
    run = _Run(checker, rules, previous)
    run.watched.wrap_rules(rules)
    interp.unit_hook = run.start
    with carrying(memo):
        checker.run()
        interp.unit_hook = None
        extra = context_findings(checker, rules)
    if extra:
        checker.findings.extend(merge_context_findings(module, checker.findings, extra))
    if run.journal.broken or checker.crashes or len(run.traces) != len(module.body):
        return checker, None
    return checker, UnitRecord(module, run.traces, run.header, run.prewalk, run.walked, run.journal.reasons, memo)
