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
"""

from __future__ import annotations

import dataclasses
import threading
import types
from typing import Any, Callable, Optional

import libcst as cst

__all__ = ["parse_source"]

_LOCK = threading.Lock()
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


def _storing_constructor(cls: type) -> Optional[Callable[..., None]]:
    """A constructor for node class ``cls`` with the signature and defaults of its dataclass one
    that stores the fields into their slots and does not validate; ``None`` when ``cls`` is not
    a plain frozen dataclass with slots (then it keeps its own)."""
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
        body.append(f"    _s_{name}(self, {name})")
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
#: (node class, its own constructor, the storing one) for every class that has one; made at the
#: first parse
_CONSTRUCTORS: Optional[Constructors] = None


def _constructors() -> Constructors:
    """(node class, its own constructor, the storing one) for every class that has one."""
    found = []
    for cls in _node_classes():
        fast = _storing_constructor(cls)
        if fast is not None:
            found.append((cls, cls.__dict__["__init__"], fast))
    return found


def parse_source(text: str) -> cst.Module:
    """``libcst.parse_module(text)``, the same tree and the same errors, built without
    re-validating each node the parser made."""
    base = cst.CSTNode
    hook = base.__dict__.get("__post_init__")
    if hook is None:  # libcst changed the hook: parse the plain way
        return cst.parse_module(text)
    global _CONSTRUCTORS
    with _LOCK:
        if _CONSTRUCTORS is None:
            _CONSTRUCTORS = _constructors()
        constructors = _CONSTRUCTORS
        base.__post_init__ = _skip_validation  # type: ignore[method-assign]
        for cls, _, fast in constructors:
            cls.__init__ = fast  # type: ignore[misc]
        try:
            return cst.parse_module(text)
        finally:
            for cls, own, _ in constructors:
                cls.__init__ = own  # type: ignore[misc]
            base.__post_init__ = hook  # type: ignore[method-assign]
