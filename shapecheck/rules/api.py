"""What a rule's hook may ask of the analysis: the :class:`Context` it receives as ``ctx``.

A rule defines ``visit_<NodeClass>(self, node, ctx)`` for libcst node classes (see
:mod:`shapecheck.rules.base`). The engine (:mod:`shapecheck.engine.checker`) calls the hooks in
source order, pre-order inside a statement, for statements, expressions and their structural
parts (``Arg``, ``Param``, ``SubscriptElement``, ``Decorator``, ``CompFor`` ...); tokens and
whitespace nodes are not visited. The facts a hook reads are those that hold just *before* the
statement that contains the node runs: in ``visit_Call`` of ``x.add_(1)`` the fact of ``x`` is
its state before the call. For a compound statement the hook runs before its body. Hooks of a
loop body run exactly once per node, so reports are never duplicated. A hook that raises is
recorded (the engine reports SC999) and its rule is dropped for the rest of the file.

Rules may import this module for type hints: ``def visit_Call(self, node: cst.Call, ctx: Context)``.
"""

from __future__ import annotations

from typing import Mapping, Optional, Protocol, Sequence

import libcst as cst

from shapecheck.rules.base import Fix
from shapecheck.semantic.backward_saves import SaveRecord
from shapecheck.semantic.branch_facts import Branch
from shapecheck.semantic.facts import Fact
from shapecheck.semantic.imports import ImportTable
from shapecheck.semantic.summaries import Effects
from shapecheck.shapes import Dim

__all__ = ["Context"]


class Context(Protocol):
    """The handle a hook receives: questions about the file at the hook's node, and ``report``."""

    @property
    def module(self) -> cst.Module:
        """The module being analysed."""
        ...

    @property
    def text(self) -> Optional[str]:
        """The file's source text when the engine has it (rules may pre-screen it cheaply)."""
        ...

    @property
    def imports(self) -> ImportTable:
        """The import table (``ctx.imports.resolve(expr)`` is ``ctx.qualname(expr)``)."""
        ...

    def report(self, node: cst.CSTNode, message: str, *, fix: Optional[Fix] = None,
               offset: Optional[tuple[int, int]] = None, condition: Optional[str] = None,
               related: Sequence[tuple[cst.CSTNode, str]] = ()) -> None:
        """Report a diagnostic of the running rule at ``node``; ``offset`` is ``(line_delta,
        column)`` from the start of ``node`` (a character inside a string literal);
        ``condition`` the exception under which a finding that holds for generic sizes does not
        hold (``"`T` is 1"``; the message already names it), ``None`` when it always holds;
        ``related`` the other nodes the finding comes from, each with a short label (where the
        tensor was transposed, created, reduced), shown under the finding."""
        ...

    def fact(self, expr: cst.CSTNode) -> Fact:
        """The facts of any expression (see :mod:`shapecheck.semantic.facts` for the fields:
        kind, shape, layout, strides, perm, device, grad, dtype_kind, value, dim, qual, features,
        params, trainable, reduction, elems, is_scalar_cpu). Unknown fields are ``None``."""
        ...

    @property
    def bindings(self) -> Mapping[str, Fact]:
        """The facts of the names bound at this point (``x``, ``self.fc``): the fact of a plain
        name is its binding's. Read-only."""
        ...

    def is_tensor(self, expr: cst.CSTNode) -> bool:
        """``ctx.fact(expr).kind == "tensor"``."""
        ...

    def qualname(self, expr: cst.CSTNode) -> Optional[str]:
        """The import-resolved dotted name (``torch.einsum`` for ``T.einsum``), or ``None``."""
        ...

    def source(self, node: cst.CSTNode) -> str:
        """The source text of a node (for messages; costs a code generation)."""
        ...

    def call_site_arguments(self, name: str) -> Optional[list[cst.BaseExpression]]:
        """In a walk of a function with the facts of its call sites: the expressions those calls
        pass to its parameter ``name`` (``None`` in a plain walk, or when one passes none)."""
        ...

    def view_target(self, call: cst.Call) -> Optional[list[Dim]]:
        """The sizes asked of ``x.view(...)``/``x.reshape(...)`` (``-1`` kept, unknown sizes
        ``None``), or ``None`` when they cannot be read (starred arguments, a dtype view)."""
        ...

    def view_verdict(self, call: cst.Call) -> Optional[tuple[Fact, list[Dim], Optional[bool]]]:
        """For ``x.view(...)``: ``(fact of x, sizes, possible)``. ``possible`` is ``False`` only
        when the view is proven to fail (exact strides with known sizes; dims a transpose,
        permute or expand moved apart with unknown sizes), ``True`` when proven to work, ``None``
        when unknown."""
        ...

    def branch_view_verdicts(
            self, call: cst.Call) -> list[tuple[Branch, Optional[tuple[Fact, list[Dim], Optional[bool]]]]]:
        """For ``x.view(...)`` where a name read in ``x`` was joined from the two sides of an
        ``if`` that disagreed about its layout: :meth:`view_verdict` on each side (see
        :mod:`~shapecheck.semantic.branch_facts`); ``[]`` when there is no such name."""
        ...

    def factory_sizes(self, call: cst.Call) -> Optional[tuple[str, list[Dim]]]:
        """For ``torch.zeros``/``ones``/``empty``/``rand``/``randn``/``full``/``randint``/
        ``empty_strided``/``randperm``/``eye``/``linspace``/``logspace`` and
        ``x.new_zeros``/``new_ones``/``new_empty``/``new_full``: ``(name, sizes as written)``
        with negative sizes kept, else ``None``. Facts never carry a negative size: the
        inference makes it unknown (a rule reports it where it is written)."""
        ...

    @property
    def grad_enabled(self) -> Optional[bool]:
        """Whether autograd records here: ``False`` inside ``torch.no_grad()``,
        ``torch.inference_mode()`` and ``torch.set_grad_enabled(False)`` blocks and in functions
        decorated with them, ``True`` again under ``torch.enable_grad()``; ``None`` when unknown."""
        ...

    @property
    def function(self) -> Optional[cst.FunctionDef]:
        """The innermost enclosing function (``None`` at module level)."""
        ...

    @property
    def class_def(self) -> Optional[cst.ClassDef]:
        """The class whose method (or body) is being analysed, else ``None``."""
        ...

    @property
    def in_module_class(self) -> Optional[bool]:
        """That class subclasses ``nn.Module`` (directly or through a class of the same file):
        ``True``, ``False``, or ``None`` when its bases are unknown."""
        ...

    @property
    def in_forward(self) -> bool:
        """The function is ``forward`` of an ``nn.Module`` class."""
        ...

    @property
    def loop(self) -> Optional[cst.CSTNode]:
        """The innermost enclosing ``For``/``While`` of the current function (or of the module
        level), else ``None``."""
        ...

    @property
    def loops(self) -> list[cst.CSTNode]:
        """All the enclosing loops of the current function, outermost first."""
        ...

    @property
    def in_loop(self) -> bool:
        """True inside the body of a loop of the current function."""
        ...

    def loop_entry_fact(self, name: str) -> Optional[Fact]:
        """The fact of ``name`` (a name or dotted name) where the innermost loop of the current
        function was entered: its value on the first iteration, until the body rebinds it;
        ``None`` when unknown."""
        ...

    @property
    def statement(self) -> Optional[cst.CSTNode]:
        """The small statement (or compound statement header) being analysed."""
        ...

    @property
    def parent(self) -> Optional[cst.CSTNode]:
        """The parent of the node whose hook is running (within the statement)."""
        ...

    @property
    def ancestors(self) -> tuple[cst.CSTNode, ...]:
        """The nodes from the statement (a small statement, or a compound statement for its
        header expressions: the ``If`` for its test) down to the parent of the hook's node."""
        ...

    # -- what autograd saved for backward (per scope, joined like the bindings; see
    #    :mod:`shapecheck.semantic.backward_saves`)
    def changed_saves(self, expr: cst.BaseExpression) -> list[tuple[SaveRecord, cst.CSTNode]]:
        """The tensors the value of ``expr`` needs for backward (saved by the ops it came from)
        that a statement of the same scope changed in place since on every path, each with the
        first statement that changed it, in the order they were saved."""
        ...

    def assigned_values(self, name: str) -> tuple[cst.BaseExpression, ...]:
        """The expressions the current binding of ``name`` (a name or dotted name) was assigned
        from in this scope, one per path that bound it differently; empty when unknown on some
        path (a parameter, ``+=``)."""
        ...

    def freed_by_backward(self, name: str) -> Optional[cst.Call]:
        """The ``name.backward()`` (without ``retain_graph``/``create_graph``) that already ran on
        the current binding of ``name`` on every path to this point, else ``None``."""
        ...

    def call_effects(self, call: cst.Call) -> Optional[Effects]:
        """What the function or method of this file (or of another file of the run) that
        ``call`` runs does to gradients (clears them, runs ``backward()``), through the helpers
        it calls; ``None`` when the callee is not known."""
        ...

    def local_callee(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The function or method of this file that ``call`` runs, when the facts prove which one
        (see :func:`~shapecheck.semantic.summaries.resolve_call`); ``None`` otherwise."""
        ...

    def only_reads(self, call: cst.Call, arg: cst.BaseExpression) -> bool:
        """``call`` runs a function or method of this file (or of another file of the run) that
        only reads the parameter ``arg`` (an argument expression of ``call``) is passed to: it
        never changes it in place, rebinds it or hands it on (see
        :mod:`~shapecheck.semantic.read_only_params`)."""
        ...
