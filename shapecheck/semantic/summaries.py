"""The functions and classes a call can reach, and what a callee does to its arguments.

A file's :class:`Definitions` are read before the walk (:func:`index_module`): its module-level
functions and classes (a name bound once at module level, by one ``def`` or ``class``), the
methods of each class, and, from the other files of the same run, the functions and classes the
file imports (:class:`ForeignModule`, filled by the engine). :func:`resolve_call` says which
definition a call runs:

- ``helper(x)``: a function of this file (also one defined later in the file) or one imported
  from another file of the run;
- ``self.helper(x)`` in a method: the method of the enclosing class (or of a base class of the
  file), unless a class of the file that derives from it overrides the method;
- ``model(x)`` / ``self.block(x)`` / ``model.forward(x)``: ``forward`` of the module class of
  the file that built the instance.

A callee decorated with anything but a grad-mode switch or ``staticmethod`` is not resolved
(a decorator may replace the function). What a callee returns given the facts of a call site is
computed by :mod:`~shapecheck.semantic.callee_analysis`; what it does to the training loop
(:class:`Effects`: clears gradients, runs ``backward()``) is read from its statements here,
through the helpers it calls in turn (to :data:`MAX_DEPTH`).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import libcst as cst

from shapecheck.semantic.imports import ImportTable
from shapecheck.semantic.syntax import all_params, dotted_name, sub_blocks, target_names
from shapecheck.semantic.walk import walk

#: the semantic model of a file (:class:`~shapecheck.semantic.model.SemanticModel`; not imported:
#: the model holds the definitions)
SemanticModel = Any
#: computes what a call returns from its callee: ``(evaluator, callee, call, receiver fact) ->
#: fact or None``; :mod:`~shapecheck.semantic.callee_analysis` registers it when imported
Reanalysis = Callable[[Any, "Callee", cst.Call, Any], Any]
_REANALYSIS: list[Reanalysis] = []
#: the same, with what the call leaves in its arguments (``(result, {argument: fact})``)
_OUTCOME: list[Reanalysis] = []

#: how many calls deep a re-analysis (or a scan of effects) follows helpers
MAX_DEPTH = 3
#: how many statements of callees one file may re-analyse in all (keeps the time of a file bounded)
STATEMENT_BUDGET = 40_000

_ALLOWED_DECORATORS = frozenset({
    "staticmethod", "torch.no_grad", "torch.enable_grad", "torch.inference_mode",
    "torch.autograd.no_grad", "torch.autograd.enable_grad",
})


@dataclass
class ClassInfo:
    """A module-level class: its methods, and the names of its bases as written."""

    node: cst.ClassDef
    methods: dict[str, cst.FunctionDef]
    bases: tuple[Optional[str], ...]


class ForeignModule:
    """Another file of the run, as one file importing from it sees it: its text, parsed and
    indexed once per process (:class:`ForeignHome`, shared by every importer) only when a call
    reaches into it, with a re-analysis state of this importer's own."""

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.text = text
        self._definitions: Optional[Definitions] = None

    @property
    def shared(self) -> "ForeignHome":
        """What every importer of this text shares: its parse and its index."""
        return foreign_home(self.text)

    @property
    def module(self) -> cst.Module:
        """The parsed file (an empty module when it does not parse)."""
        return self.shared.module

    @property
    def definitions(self) -> "Definitions":
        """Its module-level functions and classes (with a re-analysis state of this importer)."""
        if self._definitions is None:
            home = self.shared
            self._definitions = Definitions(functions=home.functions, classes=home.classes)
        return self._definitions


class ForeignHome:
    """One file that other files of the run import from, as they all see it (never changed once
    made): its parse, its module-level functions and classes, and what the re-analysis reads from
    the whole file (:mod:`~shapecheck.semantic.callee_analysis` fills :attr:`scan`)."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        index = index_module(module.body)
        self.functions = index.functions
        self.classes = index.classes
        self.scan: Any = None
        self._imports: Optional[ImportTable] = None
        self._derived: dict[tuple[str, ...], frozenset[str]] = {}

    @property
    def imports(self) -> ImportTable:
        """Its module-level imports."""
        if self._imports is None:
            self._imports = ImportTable()
            self._imports.read_module(self.module.body)
        return self._imports

    @property
    def module_classes(self) -> frozenset[str]:
        """Its classes that subclass ``torch.nn.Module``: a ``torch.nn`` class as a base (through
        its module-level imports), or another such class of the file."""
        return self.classes_deriving(NN_CLASSES)

    def classes_deriving(self, bases: tuple[str, ...]) -> frozenset[str]:
        """Its classes that derive from one of ``bases`` (see :func:`derived_classes`)."""
        found = self._derived.get(bases)
        if found is None:
            found = self._derived[bases] = derived_classes(self.classes, self.imports.resolve, bases)
        return found


#: every class of ``torch.nn`` (a module prefix: see :func:`derived_classes`)
NN_CLASSES = ("torch.nn.",)


def derived_classes(classes: dict[str, ClassInfo], resolve: Callable[[cst.CSTNode], Optional[str]],
                    bases: tuple[str, ...]) -> frozenset[str]:
    """The classes of ``classes`` with a base whose qualified name (through ``resolve``) is one
    of ``bases``, or, for an entry ending in a dot (a module), names a class of that module (a
    capitalised name, ``Parameter`` aside); or with a base that is such a class of the same file."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, info in classes.items():
            if name not in found and any(_derived_base(resolve(base.value), base.value, found, bases)
                                         for base in info.node.bases if base.keyword is None):
                found.add(name)
                changed = True
    return frozenset(found)


def _derived_base(qual: Optional[str], base: cst.BaseExpression, found: set[str], bases: tuple[str, ...]) -> bool:
    if type(base) is cst.Name and base.value in found:
        return True
    if qual is None:
        return False
    for wanted in bases:
        if not wanted.endswith("."):
            if qual == wanted:
                return True
            continue
        last = qual[len(wanted):]
        if qual.startswith(wanted) and "." not in last and last[:1].isupper() and last != "Parameter":
            return True
    return False


def imported_module_class(model: SemanticModel, name: str) -> bool:
    """``name`` is a class imported from another file of the run, where it subclasses
    ``torch.nn.Module``: calling it makes a module (its file is parsed once per process)."""
    defs = model.callees
    found = defs.imported.get(name) if defs is not None else None
    if found is None:
        return False
    home, original = found
    return original in home.shared.module_classes


#: the qualified names of ``torch.autograd.Function``
AUTOGRAD_FUNCTION = ("torch.autograd.Function", "torch.autograd.function.Function")


def autograd_function(model: SemanticModel, name: str) -> Optional[ClassInfo]:
    """The class ``name`` (of this file, or imported from another file of the run) when it
    subclasses ``torch.autograd.Function``: ``name.apply(...)`` runs its ``forward``."""
    defs = model.callees
    if defs is None:
        return None
    info = defs.classes.get(name)
    if info is not None:
        return info if name in derived_classes(defs.classes, model.imports.resolve, AUTOGRAD_FUNCTION) else None
    imported = defs.imported.get(name)
    if imported is None:
        return None
    home, original = imported
    shared = home.shared
    return shared.classes.get(original) if original in shared.classes_deriving(AUTOGRAD_FUNCTION) else None


#: how many :class:`ForeignHome` one process keeps (the least recently used goes first): a run
#: imports from a few files, and a file's syntax tree is large
HOME_MEMO_SIZE = 8
_HOMES: "OrderedDict[str, ForeignHome]" = OrderedDict()


def foreign_home(text: str, module: Optional[cst.Module] = None) -> ForeignHome:
    """The shared :class:`ForeignHome` of ``text``, made on the first request (from ``module``,
    the parse of ``text`` when the caller has one, else by parsing it)."""
    home = _HOMES.get(text)
    if home is not None:
        _HOMES.move_to_end(text)
        return home
    home = _HOMES[text] = ForeignHome(module if module is not None else _parse(text))
    while len(_HOMES) > HOME_MEMO_SIZE:
        _HOMES.popitem(last=False)
    return home


def remember_parse(text: str, module: cst.Module) -> None:
    """Offer the parse of ``text`` made for its own lint to the files that import from it later
    (it replaces nothing already kept)."""
    if text not in _HOMES:
        foreign_home(text, module)


def forget_foreign_homes() -> None:
    """Drop every kept :class:`ForeignHome` (tests; a long-lived process between runs)."""
    _HOMES.clear()


def _parse(text: str) -> cst.Module:
    try:
        return cst.parse_module(text)
    except Exception:  # noqa: BLE001  # the file reports its own parse error when it is linted
        return cst.Module(body=())


@dataclass(frozen=True)
class Callee:
    """What a call runs: a function or method, the class it is a method of, and the file that
    defines it (``None``: this file)."""

    node: cst.FunctionDef
    class_name: Optional[str] = None
    home: Optional[ForeignModule] = None

    @property
    def is_static(self) -> bool:
        """The method is a ``staticmethod`` (it has no ``self``)."""
        return any(dotted_name(d.decorator) == "staticmethod" for d in self.node.decorators)


@dataclass
class Definitions:
    """The functions and classes of one file that calls may reach, and the imported ones."""

    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    #: local name -> (the other file of the run, the name it has there)
    imported: dict[str, tuple[ForeignModule, str]] = field(default_factory=dict)
    #: statements of callees re-analysed so far in this file (see :data:`STATEMENT_BUDGET`)
    spent: int = 0
    #: (id of the callee, class, id of each argument fact, grad mode) -> the facts it returned
    memo: dict = field(default_factory=dict)
    #: (callee, what its arguments say, grad mode, how many module names) -> the arguments and the result of its walk
    runs: dict = field(default_factory=dict)
    #: callees being re-analysed now (recursion guard), innermost last
    active: list = field(default_factory=list)
    #: id of a FunctionDef -> its :class:`Effects`
    effects: dict = field(default_factory=dict)
    #: id of a FunctionDef -> (it is a generator, its number of statements, the parameters it never rebinds)
    bodies: dict = field(default_factory=dict)
    #: id of a FunctionDef of this file -> (id of a call -> the facts it gives the parameters),
    #: for the calls of the walk that rules see (:mod:`~shapecheck.semantic.call_sites`)
    sites: dict = field(default_factory=dict)
    #: (class, method name, exact) -> what :meth:`method` found (the classes are fixed once indexed)
    found_methods: dict = field(default_factory=dict, compare=False, repr=False)

    def method(self, class_name: str, name: str, exact: bool) -> Optional[cst.FunctionDef]:
        """``name`` of class ``class_name``, found in the class or its bases of this file.

        ``exact``: the instance is of this very class (``model(x)``); otherwise (``self.f()``)
        an override in a class of this file that derives from it makes the answer unknown."""
        key = (class_name, name, exact)
        if key in self.found_methods:
            return self.found_methods[key]
        found = self.found_methods[key] = self._method(class_name, name, exact)
        return found

    def _method(self, class_name: str, name: str, exact: bool) -> Optional[cst.FunctionDef]:
        if not exact and any(name in info.methods and self._derives(other, class_name)
                             for other, info in self.classes.items() if other != class_name):
            return None
        seen: set[str] = set()
        current: Optional[str] = class_name
        while current is not None and current not in seen:
            seen.add(current)
            info = self.classes.get(current)
            if info is None:
                return None
            found = info.methods.get(name)
            if found is not None:
                return found
            local_bases = [b for b in info.bases if b in self.classes]
            unknown = [b for b in info.bases if b not in self.classes and not _plain_base(b)]
            if unknown or len(local_bases) > 1:
                return None  # the method may come from a base this file does not define
            current = local_bases[0] if local_bases else None
        return None

    def _derives(self, name: str, base: str) -> bool:
        seen: set[str] = set()
        todo = [name]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            info = self.classes.get(current)
            if info is None:
                continue
            for b in info.bases:
                if b == base:
                    return True
                if b is not None:
                    todo.append(b)
        return False


def _plain_base(name: Optional[str]) -> bool:
    """A base that adds no method a call could reach: ``object`` or a ``torch.nn`` module class."""
    return name is not None and (name in ("object", "Module") or name.endswith("nn.Module"))


def index_module(body: Sequence[cst.BaseStatement]) -> Definitions:
    """The module-level functions and classes of a file, each bound once at module level."""
    defs = Definitions()
    counts: dict[str, int] = {}
    for stmt in body:
        for name in _bound_names(stmt):
            counts[name] = counts.get(name, 0) + 1
    for stmt in body:
        if type(stmt) is cst.FunctionDef and counts.get(stmt.name.value) == 1 and _resolvable(stmt):
            defs.functions[stmt.name.value] = stmt
        elif type(stmt) is cst.ClassDef and counts.get(stmt.name.value) == 1:
            methods: dict[str, cst.FunctionDef] = {}
            seen: dict[str, int] = {}
            for item in stmt.body.body:
                for name in _bound_names(item):
                    seen[name] = seen.get(name, 0) + 1
            for item in stmt.body.body:
                if type(item) is cst.FunctionDef and seen.get(item.name.value) == 1 and _resolvable(item):
                    methods[item.name.value] = item
            bases = tuple(dotted_name(b.value) for b in stmt.bases if b.keyword is None)
            defs.classes[stmt.name.value] = ClassInfo(stmt, methods, bases)
    return defs


def _bound_names(stmt: cst.CSTNode) -> list[str]:
    """The names a module-level (or class-level) statement binds, nested blocks included."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return [stmt.name.value]
    if type(stmt) is cst.SimpleStatementLine:
        names: list[str] = []
        for small in stmt.body:
            if type(small) is cst.Assign:
                for t in small.targets:
                    names.extend(target_names(t.target))
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                names.extend(target_names(small.target))
            elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    bound = alias.asname.name if alias.asname is not None else alias.name
                    text = dotted_name(bound)
                    if text is not None:
                        names.append(text.split(".")[0])
        return names
    names = []
    if type(stmt) is cst.For:
        names.extend(target_names(stmt.target))
    for block in sub_blocks(stmt):
        for s in block:
            names.extend(_bound_names(s))
            names.extend(_bound_names(s))  # bound under a condition: never a single binding
    return names


def _resolvable(fn: cst.FunctionDef) -> bool:
    """No decorator that may replace the function (grad-mode switches and ``staticmethod`` keep it)."""
    if fn.asynchronous is not None:
        return False
    for d in fn.decorators:
        expr = d.decorator.func if type(d.decorator) is cst.Call else d.decorator
        name = dotted_name(expr)
        if name is None or not (name in _ALLOWED_DECORATORS or name.split(".")[-1] in (
                "no_grad", "enable_grad", "inference_mode")):
            return False
    return True


# ---------------------------------------------------------------------------- who a call runs
def resolve_call(model: SemanticModel, call: cst.Call) -> Optional[Callee]:
    """The function or method of this file (or of another file of the run) that ``call`` runs,
    when the facts prove which one it is."""
    defs = model.callees
    if defs is None:
        return None
    func = call.func
    env = model.scopes.top.env
    if type(func) is cst.Name:
        name = func.value
        if name in env:
            return None
        fn = defs.functions.get(name)
        if fn is not None:
            return Callee(fn) if model.imports.resolve(func) is None else None
        found = defs.imported.get(name)
        if found is not None:
            home, original = found
            foreign = home.definitions.functions.get(original)
            return Callee(foreign, None, home) if foreign is not None else None
        return None
    if type(func) is cst.Attribute:
        recv = func.value
        if type(recv) is cst.Name and recv.value == "self" and is_self(model):
            class_def = model.class_def
            if class_def is None or class_def.name.value not in defs.classes:
                return None
            fn = defs.method(class_def.name.value, func.attr.value, exact=False)
            return Callee(fn, class_def.name.value) if fn is not None else None
        owner = env.get(dotted_name(recv) or "")
        if owner is not None and owner.kind == "module" and owner.qual in defs.classes:
            fn = defs.method(owner.qual, func.attr.value, exact=True)
            return Callee(fn, owner.qual) if fn is not None else None
    return None


def parameter_of(callee: Callee, call: cst.Call, arg: cst.BaseExpression) -> Optional[str]:
    """The parameter of ``callee`` that the argument expression ``arg`` of ``call`` is bound to
    (``None``: none, or it cannot be told: ``*args``, ``**kwargs``)."""
    params = list(callee.node.params.posonly_params) + list(callee.node.params.params)
    if callee.class_name is not None and not callee.is_static:
        params = params[1:]
    names = {p.name.value for p in all_params(callee.node.params)}
    index = 0
    for a in call.args:
        if a.star:
            return None
        if a.keyword is not None:
            if a.value is arg:
                return a.keyword.value if a.keyword.value in names else None
            continue
        if a.value is arg:
            return params[index].name.value if index < len(params) else None
        index += 1
    return None


def register_reanalysis(compute: Reanalysis, outcome: Reanalysis) -> None:
    """Make ``compute`` the re-analysis of callees (see :func:`reanalyse`), ``outcome`` the one
    that also says what a call leaves in its arguments (see :func:`argument_effects`)."""
    _REANALYSIS[:] = [compute]
    _OUTCOME[:] = [outcome]


#: records the facts a call gives its callee's parameters: ``(evaluator, call) -> None``
_NOTE_CALL: list[Callable[[Any, cst.Call], None]] = []


def register_call_noter(note: Callable[[Any, cst.Call], None]) -> None:
    """Make ``note`` what :func:`call_noter` gives the walk (see
    :mod:`~shapecheck.semantic.call_sites`)."""
    _NOTE_CALL[:] = [note]


def call_noter(model: SemanticModel) -> Optional[Callable[[Any, cst.Call], None]]:
    """What the walk calls at each call it passes to record its call site, or ``None`` when the
    file defines nothing a call could reach (or nothing registered one)."""
    defs = model.callees
    if not _NOTE_CALL or defs is None or not (defs.functions or defs.classes):
        return None
    return _NOTE_CALL[0]


def reanalyse(ev: Any, callee: Callee, call: cst.Call, receiver: Any) -> Any:
    """The facts of what ``call`` returns when it runs ``callee`` (``receiver``: the fact of
    ``self``), or ``None``: unknown, also when no re-analysis is registered (the engine imports
    :mod:`~shapecheck.semantic.callee_analysis`, which registers it)."""
    return _REANALYSIS[0](ev, callee, call, receiver) if _REANALYSIS else None


def argument_effects(ev: Any, call: cst.Call) -> Optional[dict[cst.BaseExpression, Any]]:
    """For a call of a function or method the re-analysis resolves: argument expression -> the
    fact it holds after the call, for each argument the callee changed (an empty dict: it
    changed none); ``None`` when the callee is unknown."""
    if not _OUTCOME or ev.model.callees is None:
        return None
    callee = resolve_call(ev.model, call)
    receiver = None
    if callee is None:
        owner = ev.model.scopes.top.env.get(dotted_name(call.func) or "")
        callee = forward_of(ev.model, owner.qual) if owner is not None and owner.kind == "module" else None
        receiver = owner
    elif type(call.func) is cst.Attribute:
        receiver = ev.fact(call.func.value)
    if callee is None:
        return None
    found = _OUTCOME[0](ev, callee, call, receiver)
    return found[1] if found is not None else None


def forward_of(model: SemanticModel, class_name: Optional[str]) -> Optional[Callee]:
    """``forward`` of ``class_name``, a module class of this file (what ``instance(x)`` runs)."""
    defs = model.callees
    if defs is None or class_name is None or class_name not in defs.classes:
        return None
    info = defs.classes[class_name]
    if "__call__" in info.methods:
        return None
    fn = defs.method(class_name, "forward", exact=True)
    return Callee(fn, class_name) if fn is not None else None


def is_self(model: SemanticModel) -> bool:
    """``self`` is the first parameter of the method being analysed (not a rebinding of it)."""
    fn = model.function
    if fn is None or model.class_def is None:
        return False
    params = list(fn.params.posonly_params) + list(fn.params.params)
    return bool(params) and params[0].name.value == "self"


# ---------------------------------------------------------------------------- training-loop effects
@dataclass(frozen=True)
class Effects:
    """What running a callee does to the training loop that calls it."""

    #: it clears gradients (``zero_grad()``, ``p.grad = None``, ``p.grad.zero_()``) somewhere
    zero_grads: bool = False
    #: it runs a backward pass (``x.backward()``, ``torch.autograd.backward``) somewhere
    backward: bool = False


def call_effects(model: SemanticModel, call: cst.Call) -> Optional[Effects]:
    """What the callee of ``call`` does to gradients (``None`` when the callee is unknown)."""
    callee = resolve_call(model, call)
    if callee is None:
        return None
    defs = model.callees
    assert defs is not None
    return _effects(defs if callee.home is None else callee.home.definitions, callee, 0)


def _effects(defs: Definitions, callee: Callee, depth: int) -> Effects:
    key = id(callee.node)
    known = defs.effects.get(key)
    if known is not None:
        return known
    defs.effects[key] = Effects()  # a recursive call adds nothing
    zero = back = False
    for node in walk(callee.node.body):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if type(node) is cst.Call:
            name = dotted_name(node.func) or ""
            last = name.rsplit(".", 1)[-1]
            if "zero_grad" in last:
                zero = True
            elif last in ("zero_", "fill_") and "grad" in name.split(".")[1:-1]:
                zero = True
            elif last in ("backward", "manual_backward"):
                back = True
            elif depth < MAX_DEPTH:
                inner = _resolve_within(defs, callee, node)
                if inner is not None:
                    found = _effects(defs, inner, depth + 1)
                    zero, back = zero or found.zero_grads, back or found.backward
        elif isinstance(node, (cst.Assign, cst.Del)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if any(type(t) is cst.Attribute and t.attr.value == "grad" for t in targets):
                zero = True
    found = Effects(zero, back)
    if depth == 0:
        defs.effects[key] = found
    else:
        del defs.effects[key]  # a helper in a cycle saw this one unfinished: not its final answer
    return found


def _resolve_within(defs: Definitions, caller: Callee, call: cst.Call) -> Optional[Callee]:
    """A helper called from a helper: a function of the same file, or a method of ``self``."""
    func = call.func
    if type(func) is cst.Name:
        fn = defs.functions.get(func.value)
        return Callee(fn, None, caller.home) if fn is not None else None
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self" \
            and caller.class_name is not None:
        fn = defs.method(caller.class_name, func.attr.value, exact=False)
        return Callee(fn, caller.class_name, caller.home) if fn is not None else None
    return None
