"""Parsing a file for the analysis: libcst's parser, with cheaper node constructors.

libcst's native parser builds the tree of ``parse_module`` by calling the public node classes,
and each generated dataclass constructor stores every field with ``object.__setattr__`` (the
nodes are frozen) and then validates the node (``CSTNode.__post_init__`` calls ``_validate``): a
check of what the grammar has just guaranteed (libcst's own comment there says validation could
be skipped when parsing). While :func:`parse_source` parses, under a lock, each node class has
a constructor of the same signature and defaults that writes each field straight into its slot
and does not validate: the same tree, about a quarter cheaper to build than with validation on
(validation alone was a sixth of the parse on transformers model files, the stores another
tenth). The original constructors are back once the parse returns, so the nodes that fixes
build later are validated as usual. A node class whose constructor is not the plain dataclass
one keeps it, with validation off; should libcst's node base change, it parses the plain way.

A text of at least :data:`LARGE_TEXT` characters also parses with the frozen-dataclass guards
(``__setattr__``/``__delattr__``) lifted from the node classes, so that the constructors store
with plain attribute assignment, which the interpreter turns into a direct slot write: another
4-5% off the parse of transformers model files (instruction counts, once the interpreter has
specialised the constructors). Lifting and restoring the guards costs about half a millisecond,
which a smaller text would not win back.
"""

from __future__ import annotations

import dataclasses
import threading
import types
from typing import Any, Callable, Optional

import libcst as cst

__all__ = ["LARGE_TEXT", "parse_source"]

_LOCK = threading.Lock()
#: texts at least this long parse with the nodes' attribute guards lifted (see the module's doc)
LARGE_TEXT = 8192
#: stands for "not passed" in a field whose default is made by a factory
_UNSET = object()


def _skip_validation(self: cst.CSTNode) -> None:
    """The constructor hook while the parser builds the tree: no validation."""


def _slot(cls: type, name: str) -> Optional[Any]:
    """The slot descriptor of field ``name`` on ``cls`` or a base, or ``None``."""
    for klass in cls.__mro__:
        member = klass.__dict__.get(name)
        if member is not None:
            return member if type(member) is types.MemberDescriptorType else None
    return None


def _storing_constructor(cls: type, assign: bool = False) -> Optional[Callable[..., None]]:
    """A constructor for node class ``cls`` with the signature and defaults of its dataclass one
    that stores the fields into their slots and does not validate; ``None`` when ``cls`` is not
    a plain frozen dataclass with slots (then it keeps its own). With ``assign`` it stores by
    attribute assignment, which only works while the class's guards are lifted."""
    init = cls.__dict__.get("__init__")
    if init is None or not dataclasses.is_dataclass(cls) or getattr(init, "__code__", None) is None \
            or init.__code__.co_filename != "<string>":  # not the constructor dataclasses generated
        return None
    namespace: dict[str, Any] = {"_UNSET": _UNSET}
    params, body = [], []
    for field in dataclasses.fields(cls):
        name = field.name
        member = _slot(cls, name)
        if not field.init or member is None or not name.isidentifier():
            return None
        if not assign:
            namespace["_s_" + name] = member.__set__
        if field.default is not dataclasses.MISSING:
            namespace["_d_" + name] = field.default
            params.append(f"{name}=_d_{name}")
        elif field.default_factory is not dataclasses.MISSING:
            namespace["_f_" + name] = field.default_factory
            params.append(f"{name}=_UNSET")
            body.append(f"    if {name} is _UNSET:\n        {name} = _f_{name}()")
        else:
            params.append(name)
        body.append(f"    self.{name} = {name}" if assign else f"    _s_{name}(self, {name})")
    source = "def __init__(self{}):\n{}\n".format("".join(", " + p for p in params), "\n".join(body) or "    pass")
    try:
        exec(compile(source, f"<shapecheck parse constructor of {cls.__name__}>", "exec"), namespace)
    except SyntaxError:  # a field layout dataclasses accepts and this template does not
        return None
    return namespace["__init__"]


def _node_classes() -> list[type]:
    """The node classes libcst's parser builds (the public ones: it looks them up on ``libcst``)."""
    return [value for value in vars(cst).values()
            if isinstance(value, type) and issubclass(value, cst.CSTNode) and value is not cst.CSTNode]


Constructors = list[tuple[type, Callable[..., None], Callable[..., None]]]
#: (node class, its own constructor, the storing one) for every class that has one, by whether
#: the storing one assigns (``True``: for a parse with the guards lifted); each made at its first parse
_CONSTRUCTORS: dict[bool, Constructors] = {}
#: (class, ``"__setattr__"`` or ``"__delattr__"``, the function) for each guard that a class among
#: the node classes and their bases defines, the root first; made at the first large parse
_GUARDS: Optional[list[tuple[type, str, Any]]] = None


def _constructors(assign: bool) -> Constructors:
    """(node class, its own constructor, the storing one) for every class that has one."""
    found = []
    for cls in _node_classes():
        fast = _storing_constructor(cls, assign)
        if fast is not None:
            found.append((cls, cls.__dict__["__init__"], fast))
    return found


def _guards() -> list[tuple[type, str, Any]]:
    """The ``__setattr__``/``__delattr__`` functions of the node classes and their bases (the
    frozen dataclasses' guards), the root class first: lifted in this order, a class's subclasses
    still hold their own, so no change cascades down the hierarchy; restored in the reverse one."""
    classes = {klass for cls in _node_classes() for klass in cls.__mro__ if klass is not object}
    found = [(klass, name, klass.__dict__[name]) for klass in classes
             for name in ("__setattr__", "__delattr__") if name in klass.__dict__]
    found.sort(key=lambda entry: (len(entry[0].__mro__), entry[0].__name__, entry[1]))
    return found


def parse_source(text: str) -> cst.Module:
    """``libcst.parse_module(text)``, the same tree and the same errors, built without
    re-validating each node the parser made."""
    base = cst.CSTNode
    hook = base.__dict__.get("__post_init__")
    if hook is None:  # libcst changed the hook: parse the plain way
        return cst.parse_module(text)
    global _GUARDS
    assign = len(text) >= LARGE_TEXT
    with _LOCK:
        constructors = _CONSTRUCTORS.get(assign)
        if constructors is None:
            constructors = _CONSTRUCTORS[assign] = _constructors(assign)
        guards: list[tuple[type, str, Any]] = []
        if assign:
            if _GUARDS is None:
                _GUARDS = _guards()
            guards = _GUARDS
        base.__post_init__ = _skip_validation  # type: ignore[method-assign]
        lifted = 0
        try:
            for klass, name, _ in guards:
                delattr(klass, name)
                lifted += 1
            for cls, _, fast in constructors:
                cls.__init__ = fast  # type: ignore[misc]
            return cst.parse_module(text)
        finally:
            for cls, own, _ in constructors:
                cls.__init__ = own  # type: ignore[misc]
            for klass, name, guard in reversed(guards[:lifted]):
                setattr(klass, name, guard)
            base.__post_init__ = hook  # type: ignore[method-assign]
