"""The semantic model of one file: everything the analysis knows at the current point of the walk.

State only: the :class:`~shapecheck.semantic.interpreter.Interpreter` moves it forward statement
by statement, the :class:`~shapecheck.semantic.evaluator.Evaluator` reads it to compute the facts
of expressions. It holds

- the import table (:class:`~shapecheck.semantic.imports.ImportTable`);
- the scope stack (:class:`~shapecheck.semantic.scopes.ScopeStack`): the bindings of each scope,
  the enclosing function, class and loops, the grad-mode stack, and what autograd saved for
  backward in it (:mod:`~shapecheck.semantic.backward_saves`);
- what the file's classes and functions are: which classes are ``nn.Module`` subclasses, the
  ``self.x`` facts each ``__init__`` exports, the classes with a method that moves ``self``, and
  the shapes that module-level functions promise through jaxtyping annotations;
- file-wide flags read before the walk (the default device changes, parameters may be frozen,
  grad mode is switched off by a plain statement);
- the exceptions the inference caught (each made one expression or statement unknown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from shapecheck.semantic.facts import Device, Fact
from shapecheck.semantic.imports import ImportTable
from shapecheck.semantic.scopes import Env, ScopeStack
from shapecheck.shapes import Shape

if TYPE_CHECKING:
    from shapecheck.semantic.summaries import Definitions

#: a module-level function with an annotated tensor return: ``([(parameter, shape or None)], return shape)``
Signature = tuple[list[tuple[str, Optional[Shape]]], Optional[Shape]]


class SemanticModel:
    """The facts and places of one file at the current point of the walk."""

    def __init__(self) -> None:
        self.imports = ImportTable()
        self.scopes = ScopeStack()
        #: local class name -> subclasses ``nn.Module``: True, False or None (unknown bases)
        self.classes: dict[str, Optional[bool]] = {}
        #: local class name -> the ``self.x`` facts its ``__init__`` exports to other methods
        self.class_attrs: dict[str, dict[str, Fact]] = {}
        #: local classes with a method that moves ``self`` (``self.cuda()``, ``self.to(...)``)
        self.class_moves: set[str] = set()
        #: local module class -> the device the file moves its instances to (directly, as a
        #: submodule or as a base of a moved class), with a note for messages
        #: (:mod:`~shapecheck.semantic.module_state`)
        self.placements: dict[str, tuple[Device, str]] = {}
        #: placed class -> the methods its ``__init__`` runs (they see the module where it was built)
        self.init_methods: dict[str, set[str]] = {}
        #: local class -> the ``self.x`` its methods registered as buffers or parameters
        self.class_registered: dict[str, set[str]] = {}
        #: local class -> the ``self.x`` tensors that move with the module (parameters, buffers)
        self.class_moving: dict[str, set[str]] = {}
        #: local class -> its plain tensor attributes (moving the module leaves them where they are)
        self.class_fixed: dict[str, set[str]] = {}
        #: module-level name -> the one device every move of the file puts the module it is bound to
        #: on (see :func:`~shapecheck.semantic.module_state.global_bindings`): functions keep it
        self.steady_devices: dict[str, Device] = {}
        #: the names bound at module level, and those of them the file only runs (``None`` until
        #: a function first reads a module-level module)
        self.top_assigned: frozenset[str] = frozenset()
        self.only_run: Optional[frozenset[str]] = None
        #: attribute names the file assigns on objects other than ``self`` (``None``: the file
        #: calls ``setattr``, any attribute may be written)
        self.external_attrs: Optional[set[str]] = set()
        #: the file mentions ``collate_fn``: a ``DataLoader(..., **kwargs)`` may have one
        self.custom_collate = True
        #: the file mentions ``Lambda(``: a torchvision transform may move the images anywhere
        self.custom_transform = True
        #: module-level function name -> the shapes its annotations promise
        self.signatures: dict[str, Signature] = {}
        #: names the module binds exactly once and no function declares ``global``: functions see them
        self.module_globals: set[str] = set()
        #: every name the module binds at top level (functions and classes included)
        self.module_names: set[str] = set()
        #: the names some function of the module declares ``global``
        self.declared_globals: set[str] = set()
        #: id of a function -> the module-level names it started with in the walk of the file
        #: (:func:`~shapecheck.semantic.module_state.global_bindings` at its ``def``)
        self.globals_at_def: dict[int, frozenset[str]] = {}
        #: the file changes torch's default device (``torch.set_default_device``, ``with
        #: torch.device(...)``): factories and modules without ``device=`` may not be on the CPU
        self.default_device_set = False
        #: the file turns ``requires_grad`` off somewhere (``m.requires_grad_(False)``,
        #: ``p.requires_grad = False``): the parameters of modules may not require grad
        self.params_frozen = False
        #: grad mode where no context says otherwise: unknown in a file that switches it off with a
        #: plain ``torch.set_grad_enabled(False)`` statement (process-wide, until switched back)
        self.default_grad: Optional[bool] = True
        #: exceptions the inference caught (each made one expression or statement unknown)
        self.infer_errors: list[BaseException] = []
        #: the functions and classes calls may reach (:mod:`~shapecheck.semantic.summaries`)
        self.callees: Optional[Definitions] = None
        #: the module being analysed (set when its walk starts)
        self.tree: Optional[cst.Module] = None
        #: id of a loop statement -> the bindings where the walk last entered it (the facts of
        #: its first iteration), kept while its visiting pass runs
        self.loop_entries: dict[int, Env] = {}

    # ------------------------------------------------------------------ the current scope
    @property
    def env(self) -> Env:
        """The bindings of the current scope (name or dotted name -> fact)."""
        return self.scopes.top.env

    @env.setter
    def env(self, value: Env) -> None:
        self.scopes.top.env = value

    @property
    def function(self) -> Optional[cst.FunctionDef]:
        """The innermost enclosing function (``None`` at module level)."""
        return self.scopes.top.function

    @property
    def class_def(self) -> Optional[cst.ClassDef]:
        """The class whose body, or whose method, is being analysed."""
        return self.scopes.top.class_def

    @property
    def in_module_class(self) -> Optional[bool]:
        """That class subclasses ``nn.Module``: True, False or None (unknown bases)."""
        return self.scopes.top.in_module_class

    @property
    def in_forward(self) -> bool:
        """The function is ``forward`` of an ``nn.Module`` class."""
        return self.scopes.top.in_forward

    @property
    def loops(self) -> list[cst.CSTNode]:
        """The enclosing loops of the current scope, outermost first."""
        return self.scopes.top.loops

    @property
    def grad_enabled(self) -> Optional[bool]:
        """Whether autograd records at this point: True, False, or None (unknown)."""
        return self.scopes.top.grad[-1]

    def push_grad_mode(self, mode: Optional[bool]) -> None:
        """Enter a block with grad mode ``mode`` (``with torch.no_grad():``)."""
        self.scopes.top.grad.append(mode)

    def pop_grad_mode(self) -> None:
        """Leave the block the last :meth:`push_grad_mode` entered."""
        self.scopes.top.grad.pop()

    def switch_grad_off_by_default(self) -> None:
        """Make grad mode unknown wherever no ``with``/decorator sets it (a file with a plain
        ``torch.set_grad_enabled(False)`` statement)."""
        self.default_grad = None
        self.scopes.module.grad[:] = [None]
