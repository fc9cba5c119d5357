"""Sizes a module class takes in ``__init__`` (``Dense(n_in, n_out)``), kept as symbols in the
tensors and layers it builds, and made concrete where the file builds every instance with the
same literal arguments.

A plain parameter of ``__init__`` of an ``nn.Module`` class (no annotation other than ``int``, no
default other than an int, never rebound in ``__init__``) stands for one value for the life of
the instance: ``self.W = nn.Parameter(torch.randn(n_in, n_out))`` keeps the sizes ``n_in`` and
``n_out`` (a :class:`ConfigSize`) and ``forward`` sees them. Two distinct config sizes are
generic: independent, each at least 2; a finding that needs them different says so.

:func:`constructed_sizes` reads every construction ``Dense(5, 3)`` of a class in its file: a
parameter that every construction (or its default) gives the same int is that int in the
call-site walks of the class's methods (:func:`concrete_attrs`).
"""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from shapecheck.semantic.facts import INT, MODULE, TENSOR, Fact
from shapecheck.semantic.rebinding import rebound_names
from shapecheck.semantic.syntax import method_def
from shapecheck.semantic.torch_api import SIZE_ARGUMENT_FACTORIES
from shapecheck.semantic.walk import walk
from shapecheck.shapes import Dim, Generic, Shape, monomial
from shapecheck.semantic.node_memo import NodeMemo
from shapecheck.semantic.version_memo import carried, carry


class ConfigSize(Generic):
    """A size given to ``__init__`` of the module class ``owner`` (its parameter's name)."""

    owner: str


def config_size(name: str, owner: str) -> ConfigSize:
    """The config size ``name`` of the module class ``owner``."""
    out = ConfigSize(name)
    out.owner = owner
    return out


def is_config_size(d: Dim) -> bool:
    """True for a size given to ``__init__`` of a module class (see :class:`ConfigSize`)."""
    return isinstance(d, ConfigSize)


def _int_literal(expr: Optional[cst.BaseExpression]) -> Optional[int]:
    """The value of an int literal (``16``, ``-1``), else ``None``."""
    if type(expr) is cst.Integer:
        return int(expr.evaluated_value)
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus and type(expr.expression) is cst.Integer:
        return -int(expr.expression.evaluated_value)
    return None


def _size_params(init: cst.FunctionDef) -> list[cst.Param]:
    """The parameters of ``init`` (after ``self``) that may be sizes: plain or keyword-only,
    annotated ``int`` or not at all, without a default or with an int default, never rebound."""
    params = list(init.params.posonly_params) + list(init.params.params)
    if not params:
        return []
    rebound = rebound_names(init)
    out = []
    for p in params[1:] + list(init.params.kwonly_params):
        annotation = p.annotation.annotation if p.annotation is not None else None
        if annotation is not None and not (type(annotation) is cst.Name and annotation.value == "int"):
            continue
        if p.default is not None and _int_literal(p.default) is None:
            continue
        if p.name.value not in rebound:
            out.append(p)
    return out


def _used_as_ints(init: cst.FunctionDef, resolve: Callable[[cst.BaseExpression], Optional[str]]) -> set[str]:
    """The names ``init`` passes where torch takes only an int: one of several sizes of a
    factory (``torch.randn(n_in, n_out)``), the features of ``nn.Linear``, the sizes of
    ``nn.Embedding``."""
    found: set[str] = set()

    for node in walk(init.body):
        if type(node) is not cst.Call or any(a.star for a in node.args):
            continue
        qual = resolve(node.func) or ""
        args = [a for a in node.args if a.keyword is None]
        if qual.startswith("torch.") and qual[len("torch."):] in SIZE_ARGUMENT_FACTORIES and len(args) >= 2:
            taken = args
        elif qual in _INT_LAYERS:
            words = _INT_LAYERS[qual]
            taken = args[:len(words)]
            taken += [a for a in node.args if a.keyword is not None and a.keyword.value in words]
        else:
            continue
        found.update(a.value.value for a in taken if type(a.value) is cst.Name)
    return found


#: layers whose first arguments (named so as keywords) are ints
_INT_LAYERS = {
    "torch.nn.Linear": ("in_features", "out_features"),
    "torch.nn.Bilinear": ("in1_features", "in2_features", "out_features"),
    "torch.nn.Embedding": ("num_embeddings", "embedding_dim"),
    **{f"torch.nn.{layer}{n}d": ("in_channels", "out_channels")
       for layer in ("Conv", "ConvTranspose") for n in (1, 2, 3)},
    **{f"torch.nn.BatchNorm{n}d": ("num_features",) for n in (1, 2, 3)},
    "torch.nn.GroupNorm": ("num_groups", "num_channels"),
    **{f"torch.nn.{layer}": ("input_size", "hidden_size") for layer in ("LSTM", "GRU", "RNN")},
    "torch.nn.MultiheadAttention": ("embed_dim", "num_heads"),
}


def init_sizes(class_name: str, init: cst.FunctionDef,
               resolve: Callable[[cst.BaseExpression], Optional[str]]) -> dict[str, Fact]:
    """The facts the size parameters of ``__init__`` of the module class ``class_name`` start
    with: a value whose size is the config size of its name, an int when ``__init__`` passes
    it where torch takes only an int (else of unknown kind: a caller may give a tuple of sizes,
    or a float for an int default)."""
    ints = _used_as_ints(init, resolve)
    out: dict[str, Fact] = {}
    for p in _size_params(init):
        name = p.name.value
        out[name] = Fact(kind=INT if name in ints else None, dim=config_size(name, class_name))
    return out


def constructed_sizes(module: cst.Module, class_def: cst.ClassDef) -> dict[str, int]:
    """The size parameters of ``__init__`` of ``class_def`` (a class at module level) that every
    construction in ``module`` gives the same int literal (directly or by its default). Empty
    when the class is used other than by calling its name (a subclass, passed as a value, a
    ``*args``/``**kwargs`` call) or never constructed."""
    cached = _LAST.get(class_def, id(module))
    return cached if cached is not None else _LAST.put(class_def, _constructed_sizes(module, class_def), id(module))


#: the constructed sizes of each class: the call-site walks of its methods read them once
_LAST: NodeMemo[dict[str, int]] = NodeMemo(limit=64)


def resized_attrs(module: cst.Module) -> frozenset[str]:
    """The attributes whose tensor the file may give another shape in place: ``x.W.data = ...``,
    ``x.W.resize_(...)``, ``x.W.set_(...)`` (also on ``x.W.data``)."""
    return _index(module).resized


class _StatementIndex:
    """What one walk of a top-level statement tells these sizes: the calls of each plain name,
    how often each name is read, and the attributes resized in place."""

    def __init__(self, stmt: cst.CSTNode) -> None:
        self.calls: dict[str, list[cst.Call]] = {}
        self.reads: dict[str, int] = {}
        resized: set[str] = set()

        def owner(expr: cst.BaseExpression) -> None:
            if type(expr) is cst.Attribute and expr.attr.value == "data":
                expr = expr.value
            if type(expr) is cst.Attribute:
                resized.add(expr.attr.value)

        for node in (stmt, *walk(stmt, into_defs=True)):
            tp = type(node)
            if tp is cst.Name:
                self.reads[node.value] = self.reads.get(node.value, 0) + 1  # type: ignore[attr-defined]
            elif tp is cst.Call:
                func = node.func  # type: ignore[attr-defined]
                if type(func) is cst.Name:
                    self.calls.setdefault(func.value, []).append(node)  # type: ignore[arg-type]
                elif type(func) is cst.Attribute and func.attr.value in ("resize_", "set_", "resize_as_"):
                    owner(func.value)
            elif tp is cst.Assign:
                for target in node.targets:  # type: ignore[attr-defined]
                    if type(target.target) is cst.Attribute and target.target.attr.value == "data":
                        owner(target.target)
        self.resized = frozenset(resized)


class _ModuleIndex:
    """The :class:`_StatementIndex` of each top-level statement of a module, read together (each
    kept from the last version of the document while its statement is the same node,
    :mod:`~shapecheck.semantic.version_memo`)."""

    def __init__(self, module: cst.Module) -> None:
        parts = []
        for stmt in reversed(module.body):  # the order in which a walk of the module meets them
            part = carried("sizes", stmt)
            parts.append(part if part is not None else carry("sizes", stmt, _StatementIndex(stmt)))
        self._parts = parts
        self.resized = frozenset().union(*(part.resized for part in parts))

    def calls(self, name: str) -> list[cst.Call]:
        """The calls of the plain name ``name``, in walk order."""
        return [call for part in self._parts for call in part.calls.get(name, ())]

    def reads(self, name: str) -> int:
        """How many times the name ``name`` occurs."""
        return sum(part.reads.get(name, 0) for part in self._parts)


def _index(module: cst.Module) -> _ModuleIndex:
    """The :class:`_ModuleIndex` of ``module``, read once (the last module's is kept)."""
    cached = _INDEX.get(module)
    return cached if cached is not None else _INDEX.put(module, _ModuleIndex(module))


#: the index of the last module read (a limit of 0 keeps one)
_INDEX: NodeMemo[_ModuleIndex] = NodeMemo(limit=0)


def _constructed_sizes(module: cst.Module, class_def: cst.ClassDef) -> dict[str, int]:
    """:func:`constructed_sizes`, computed."""
    name = class_def.name.value
    init = method_def(class_def, "__init__")
    if init is None:
        return {}
    sizes = _size_params(init)
    positional = [p.name.value for p in (list(init.params.posonly_params) + list(init.params.params))[1:]]
    index = _index(module)
    calls = index.calls(name)
    if not calls or index.reads(name) != len(calls) + 1:  # the class's own name, and one per call
        return {}
    values: dict[str, Optional[int]] = {}
    for call in calls:
        given: dict[str, Optional[cst.BaseExpression]] = {}
        for i, arg in enumerate(call.args):
            if arg.star:
                return {}
            if arg.keyword is not None:
                given[arg.keyword.value] = arg.value
            elif i < len(positional):
                given[positional[i]] = arg.value
        for p in sizes:
            value = _int_literal(given[p.name.value]) if p.name.value in given else _int_literal(p.default)
            key = p.name.value
            values[key] = value if key not in values or values[key] == value else None
    return {key: v for key, v in values.items() if v is not None and v >= 0}


def _concrete(d: Dim, values: dict[str, int]) -> Dim:
    """``d`` with the config sizes of ``values`` made ints (a product of them too)."""
    if not isinstance(d, Generic):
        return d
    m = monomial(d)
    if m is None or "//" in d or not m[1] or any(a not in values for a in m[1]):
        return d
    if len(m[1]) == 1 and not is_config_size(d) and m[0] == 1:
        return d
    out = m[0]
    for atom in m[1]:
        out *= values[atom]
    return out


def concrete_attrs(env: dict[str, Fact], values: dict[str, int], skip: Optional[set[str] | frozenset[str]]) -> None:
    """Make the config sizes in the shapes of the ``self.x`` tensors and the features of the
    ``self.x`` layers of ``env`` the ints of ``values``; not those of the attributes ``skip``
    names (the file assigns them on other objects, ``model.W = ...``, or resizes them in place;
    ``None``: any attribute may be assigned)."""
    if not values or skip is None:
        return
    for key, f in list(env.items()):
        if not key.startswith("self.") or key.split(".")[1] in skip:
            continue
        if f.kind == TENSOR and f.shape is not None:
            dims = tuple(_concrete(d, values) for d in f.shape.dims)
            if dims != f.shape.dims:
                env[key] = f.with_(shape=Shape(dims, f.shape.rest_at, f.shape.rest_name), strides=None)
        elif f.kind == MODULE and (f.features is not None or f.layers is not None):
            concrete = _concrete_module(f, values)
            if concrete is not f:
                env[key] = concrete


def _concrete_module(f: Fact, values: dict[str, int]) -> Fact:
    """``f`` (a module) with the config sizes of its features, and of its layers' (a
    ``Sequential``), made the ints of ``values``; ``f`` itself when nothing changes."""
    changes: dict = {}
    if f.features is not None:
        features = tuple(_concrete(d, values) for d in f.features)
        if features != f.features:
            changes["features"] = features
    if f.layers is not None:
        layers = tuple(_concrete_module(layer, values) for layer in f.layers)
        if any(new is not old for new, old in zip(layers, f.layers)):
            changes["layers"] = layers
    return f.with_(**changes) if changes else f


__all__ = ["ConfigSize", "config_size", "is_config_size", "init_sizes", "constructed_sizes", "concrete_attrs",
           "resized_attrs"]
