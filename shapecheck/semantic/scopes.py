"""The scope stack of the walk: one frame per module, class body and function being analysed.

A frame holds the bindings of its scope (name or dotted name -> :class:`Fact`) and where the walk
stands inside it: the enclosing function and class, the loops, the grad-mode stack, the
environments saved at ``break``/``continue``. Entering a ``def`` or ``class`` pushes a frame and
leaving it pops the frame, which restores everything the enclosing scope had.

What a new function sees (:meth:`ScopeStack.inherited_bindings`): the names the module binds
exactly once, as the module scope holds them when the ``def`` runs, whatever the nesting (a
function in a function, a method of a class in a function). Names local to an enclosing
function are not seen: the closure reads them when it is called, and by then they may hold
something else.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

import libcst as cst

from shapecheck.semantic.backward_saves import BackwardSaves
from shapecheck.semantic.config_sizes import is_config_size
from shapecheck.semantic.facts import DEVICE, MODULE, OPTIMIZER, TENSOR, LEAF_REQUIRES_GRAD, Fact, join
from shapecheck.shapes import Shape

Env = dict[str, Fact]

MODULE_SCOPE = "module"
CLASS_SCOPE = "class"
FUNCTION_SCOPE = "function"


class Scope:
    """One frame: the bindings of a module, class body or function, and the walk's place in it."""

    __slots__ = ("kind", "node", "env", "body_env", "function", "class_def", "in_module_class",
                 "in_forward", "loops", "grad", "loop_exits", "rebound_attrs", "saves")

    def __init__(
        self,
        kind: str,
        node: Optional[cst.CSTNode],
        env: Env,
        *,
        function: Optional[cst.FunctionDef],
        class_def: Optional[cst.ClassDef],
        in_module_class: Optional[bool],
        in_forward: bool,
        grad: Optional[bool],
        loop_exits: list[list[Env]],
        rebound_attrs: frozenset[str] | set[str] = frozenset(),
    ) -> None:
        self.kind = kind
        self.node = node
        #: the bindings now (the walk replaces the dict at control-flow joins)
        self.env = env
        #: the dict the scope started with: a class body that still holds it has seen no join
        self.body_env = env
        self.function = function
        self.class_def = class_def
        self.in_module_class = in_module_class
        self.in_forward = in_forward
        #: the enclosing ``for``/``while`` statements of this scope, outermost first
        self.loops: list[cst.CSTNode] = []
        #: grad mode: ``with``/decorators push and pop; the last entry holds
        self.grad: list[Optional[bool]] = [grad]
        #: for each loop being analysed, the bindings at each ``break``/``continue``
        self.loop_exits = loop_exits
        #: in a class scope: the ``self.x`` keys that a method other than ``__init__`` assigns
        self.rebound_attrs = rebound_attrs
        #: what autograd saved for backward along the walk's path (replaced at joins, as ``env``)
        self.saves = BackwardSaves()


class ScopeStack:
    """The frames from the module down to the scope being analysed."""

    def __init__(self) -> None:
        module = Scope(MODULE_SCOPE, None, {}, function=None, class_def=None, in_module_class=None,
                       in_forward=False, grad=True, loop_exits=[])
        self.frames: list[Scope] = [module]
        #: the innermost frame (kept as an attribute: the evaluator reads it for every name)
        self.top = module

    @property
    def module(self) -> Scope:
        """The frame of the module."""
        return self.frames[0]

    @property
    def depth(self) -> int:
        """The number of frames above the module's."""
        return len(self.frames) - 1

    def analysed_function(self) -> Optional[cst.FunctionDef]:
        """The ``def`` whose body is being analysed: the innermost frame's, when that is a
        function's (not a lambda's); else ``None``."""
        top = self.top
        return top.node if top.kind == FUNCTION_SCOPE and type(top.node) is cst.FunctionDef else None

    def method_class(self) -> Optional[cst.ClassDef]:
        """The class a ``def`` here is a method of: the class whose body is being analysed, as
        long as no ``if``/loop/``try``/``match`` of that body has joined its bindings (a ``def``
        after one is analysed as a plain function)."""
        top = self.top
        if top.kind == CLASS_SCOPE and top.env is top.body_env:
            return top.class_def
        return None

    def inherited_bindings(self, names: Iterable[str], view: Callable[[Fact], Fact]) -> Env:
        """The bindings a function defined here starts with: each of ``names`` (the module-level
        names bound once) that the module scope binds now, seen through ``view``."""
        module_env = self.frames[0].env
        env: Env = {}
        for name in names:
            f = module_env.get(name)
            if f is not None:
                env[name] = view(f)
        return env

    def push_function(self, node: cst.FunctionDef, env: Env, grad: Optional[bool]) -> Scope:
        """Enter the body of ``node`` with ``env`` and grad mode ``grad``.

        A method (see :meth:`method_class`) keeps the class and its ``nn.Module`` verdict; any
        other function has neither. ``in_forward`` is set for ``forward`` of an ``nn.Module``.
        """
        outer = self.top
        method_of = self.method_class()
        in_module_class = outer.in_module_class if method_of is not None else None
        frame = Scope(
            FUNCTION_SCOPE, node, env, function=node, class_def=method_of,
            in_module_class=in_module_class,
            in_forward=bool(method_of is not None and in_module_class and node.name.value == "forward"),
            grad=grad, loop_exits=[],
        )
        return self._push(frame)

    def push_class(self, node: cst.ClassDef, is_module: Optional[bool], rebound_attrs: set[str],
                   grad: Optional[bool]) -> Scope:
        """Enter the body of class ``node`` with no bindings. The enclosing function (and whether
        it is ``forward``) stay what they were; loops start afresh."""
        outer = self.top
        frame = Scope(
            CLASS_SCOPE, node, {}, function=outer.function, class_def=node, in_module_class=is_module,
            in_forward=outer.in_forward, grad=grad, loop_exits=outer.loop_exits,
            rebound_attrs=rebound_attrs,
        )
        return self._push(frame)

    def _push(self, frame: Scope) -> Scope:
        self.frames.append(frame)
        self.top = frame
        return frame

    def pop(self) -> Scope:
        """Leave the innermost scope; the enclosing one is current again."""
        if len(self.frames) == 1:
            raise IndexError("the module scope is never popped")
        frame = self.frames.pop()
        self.top = self.frames[-1]
        return frame

    def enclosing(self) -> Scope:
        """The frame just outside the innermost one (the module's for the module itself)."""
        return self.frames[-2] if len(self.frames) >= 2 else self.frames[0]


# ---------------------------------------------------------------- bindings across scopes and paths
def merge(envs: list[Env]) -> Env:
    """Join several environments: names bound on every path, with joined facts."""
    if len(envs) == 1:
        return envs[0]
    first = envs[0]
    out: Env = {}
    if len(envs) == 2:  # the join of an `if`: most merges
        find = envs[1].get
        for key, f in first.items():
            g = find(key)
            if g is not None:
                out[key] = f if g is f else join(f, g)
        return out
    rest = envs[1:]
    for key, f in first.items():
        cur = f
        for other in rest:
            g = other.get(key)
            if g is None:
                break
            if g is not cur:
                cur = join(cur, g)
        else:
            out[key] = cur
    return out


def without_symbols(f: Fact) -> Fact:
    """``f`` with its annotation names made unknown: they mean nothing in another function (the
    sizes given to ``__init__`` of a module class are kept: the instance holds them)."""
    shape = f.shape
    if shape is None or not any(isinstance(d, str) and not is_config_size(d) for d in shape.dims):
        return f
    return f.with_(shape=Shape(tuple(None if isinstance(d, str) and not is_config_size(d) else d
                                     for d in shape.dims), shape.rest_at, None))


def global_view(f: Fact) -> Fact:
    """The fact of a module-level name inside a function: without annotation names; a module
    also without its device and parameters (module-level code that runs before the call may move
    it, ``model.to(device)``, or wrap its weights)."""
    f = without_symbols(f)
    if f.kind == MODULE and (f.device is not None or f.params is not None):
        f = f.with_(device=None, params=None)
    return f


def exported(f: Fact) -> Fact:
    """The fact of ``self.x`` that other methods see: without annotation names, and without a
    device for tensors and modules (whoever built the instance may have moved it since)."""
    f = without_symbols(f)
    if f.kind in (TENSOR, MODULE) and (f.device is not None or f.is_scalar_cpu):
        f = f.with_(device=None, is_scalar_cpu=False)
    return f


def exportable(f: Fact) -> bool:
    """Facts of ``self.x`` set in ``__init__`` that other methods may rely on."""
    if f.kind in (MODULE, OPTIMIZER, DEVICE):
        return True
    return f.kind == TENSOR and f.grad == LEAF_REQUIRES_GRAD
