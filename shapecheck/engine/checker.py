"""One traversal per file: the semantic walk, with the rules' hooks called at each node.

:func:`analyze` is the entry point of the engine. A :class:`Checker` collects the
``visit_<NodeClass>`` hooks of the rule instances, runs the
:class:`~shapecheck.semantic.interpreter.Interpreter` over the module as its observer, and calls
the hooks of each node it is told about with a :class:`RuleContext` (the
:class:`~shapecheck.rules.api.Context` of the rules). A hook that raises is recorded in
``crashes`` and its rule is dropped for the rest of the file; the other rules go on.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

import libcst as cst

from shapecheck.engine.contexts import context_findings, merge_context_findings
from shapecheck.rules.api import Context
from shapecheck.rules.base import Finding, Fix, Rule
from shapecheck.rules.helpers.size_guards import guaranteed
from shapecheck.rules.helpers.visit_memo import forget_visits
from shapecheck.semantic.backward_saves import SaveRecord
from shapecheck.semantic.call_arguments import passed_argument
from shapecheck.semantic.branch_facts import Branch, under_branches
from shapecheck.semantic.evaluator import Evaluator
from shapecheck.semantic.evidence import forget_scans
from shapecheck.semantic.facts import TENSOR, Fact
from shapecheck.semantic.interpreter import Interpreter
from shapecheck.semantic.model import SemanticModel
from shapecheck.semantic.node_memo import forget_node_memos
from shapecheck.semantic import callee_analysis  # noqa: F401  # registers the re-analysis of callees
from shapecheck.semantic.read_only_params import read_only_parameters
from shapecheck.semantic.summaries import Definitions, Effects, ForeignModule, call_effects, parameter_of, resolve_call
from shapecheck.shapes import Dim

__all__ = ["Checker", "RuleContext", "analyze"]

#: (rule code, bound hook)
Hook = tuple[str, Callable[[Any, Any], None]]


_HOOK_NAMES: dict[type, tuple[str, ...]] = {}


def _hook_names(rule_class: type) -> tuple[str, ...]:
    """The ``visit_<NodeClass>`` attributes of a rule class, in ``dir`` order (read once per class)."""
    names = _HOOK_NAMES.get(rule_class)
    if names is None:
        names = _HOOK_NAMES[rule_class] = tuple(attr for attr in dir(rule_class) if attr.startswith("visit_"))
    return names


def forget_memos() -> None:
    """Drop what the analysis remembers per syntax node outside any checker (walks, scans,
    indexes, every :class:`~shapecheck.semantic.node_memo.NodeMemo`): :meth:`Checker.release`
    does this once a file's findings are read."""
    forget_node_memos()
    forget_scans()
    forget_visits()


class Checker:
    """Runs the hooks of ``rules`` over one module, in one semantic walk."""

    def __init__(self, module: cst.Module, rules: Sequence[Any], text: Optional[str] = None) -> None:
        self.module = module
        #: the file's source text when the caller has it
        self.text = text
        self.findings: list[Finding] = []
        #: (rule code, exception) for every hook that raised; the engine reports SC999 for each
        self.crashes: list[tuple[str, BaseException]] = []
        #: the code of the rule whose hook is running (its reports carry it)
        self.current_code = ""
        self._hooks: dict[str, list[Hook]] = {}
        self._hooks_by_type: dict[type, list[Hook]] = {}
        for rule in rules:
            for attr in _hook_names(type(rule)):
                self._hooks.setdefault(attr[6:], []).append((rule.code, getattr(rule, attr)))
        self.model = SemanticModel()
        self.evaluator = Evaluator(self.model)
        self.interpreter = Interpreter(self.model, self.evaluator, self)
        self.context: Context = RuleContext(self)

    @property
    def infer_errors(self) -> list[BaseException]:
        """Exceptions the inference caught (each made one expression unknown); empty on the test
        suite and the audit corpora, kept for debugging."""
        return self.model.infer_errors

    def run(self) -> None:
        """Walk the module once, calling the hooks."""
        self.interpreter.run(self.module, self.text)

    def release(self) -> None:
        """Drop the walk's state once ``findings`` and ``crashes`` are read: the interpreter and
        the rule context refer back to this checker, so without this the file's facts, and the
        syntax tree they point into, wait for the cyclic garbage collector (a pass over all of
        them) instead of being freed at once. The checker answers nothing else afterwards."""
        self.interpreter.__dict__.clear()
        vars(self.context).clear()
        forget_memos()

    # ------------------------------------------------------------------ the observer of the walk
    def _hooks_for(self, tp: type) -> list[Hook]:
        hooks = self._hooks_by_type.get(tp)
        if hooks is None:
            hooks = self._hooks.get(tp.__name__, [])
            self._hooks_by_type[tp] = hooks
        return hooks

    def watches(self, node_type: type) -> bool:
        """Whether a rule still running hooks nodes of this class."""
        hooks = self._hooks_by_type.get(node_type)
        if hooks is None:
            hooks = self._hooks_for(node_type)
        return True if hooks else False

    def unwatched(self, node_types: Sequence[type]) -> frozenset[type]:
        """The node classes no rule hooks."""
        return frozenset(tp for tp in node_types if tp.__name__ not in self._hooks)

    def visit(self, node: cst.CSTNode) -> None:
        """Call every hook of ``node``'s class; a hook that raises drops its rule."""
        hooks = self._hooks_by_type.get(type(node))
        if hooks is None:
            hooks = self._hooks_for(type(node))
        # _drop() replaces the lists, never mutates them: iterating this one stays safe
        for code, hook in hooks:
            self.current_code = code
            try:
                hook(node, self.context)
            except Exception as exc:  # one rule's crash must not stop the others
                self.crashes.append((code, exc))
                self._drop(code)

    def _drop(self, code: str) -> None:
        for name in list(self._hooks):
            self._hooks[name] = [(c, h) for c, h in self._hooks[name] if c != code]
        self._hooks_by_type.clear()


class RuleContext:
    """The :class:`~shapecheck.rules.api.Context` of a checker: the model at the hook's node."""

    def __init__(self, checker: Checker) -> None:
        self._checker = checker
        self._model = checker.model
        #: the scope stack: its top frame answers the questions about the enclosing scopes
        self._scopes = checker.model.scopes
        self._interpreter = checker.interpreter
        evaluator = checker.evaluator
        #: id of a FunctionDef -> the parameters it only reads
        self._read_only: dict[int, frozenset[str]] = {}
        #: id of a node -> (the node, its source text): rules ask for the same operands again
        self._sources: dict[int, tuple[cst.CSTNode, str]] = {}
        self.module = checker.module
        self.text = checker.text
        self.imports = checker.model.imports
        # bound once: hooks ask for facts at almost every node
        self.fact = evaluator.fact
        self.qualname = evaluator.qualname
        self.view_target = evaluator.view_target
        self.view_verdict = evaluator.view_verdict
        self.factory_sizes = evaluator.factory_sizes
        self._evaluator = evaluator

    def report(self, node: cst.CSTNode, message: str, *, fix: Optional[Fix] = None,
               offset: Optional[tuple[int, int]] = None, condition: Optional[str] = None,
               related: Sequence[tuple[cst.CSTNode, str]] = ()) -> None:
        """Report a diagnostic of the rule whose hook is running, at ``node``; a finding whose
        exception (``condition``) the tests around it guarantee is dropped
        (:mod:`~shapecheck.rules.helpers.size_guards`)."""
        if condition is not None and guaranteed(self, condition, node):
            return
        checker = self._checker
        checker.findings.append(Finding(checker.current_code, node, message, fix, offset, condition, tuple(related)))

    def branch_view_verdicts(
            self, call: cst.Call) -> list[tuple[Branch, Optional[tuple[Fact, list[Dim], Optional[bool]]]]]:
        """:meth:`view_verdict` on each side of the ``if`` joins a name of the receiver comes from."""
        if type(call.func) is not cst.Attribute:
            return []
        return under_branches(self._evaluator, self._interpreter.branches, call.func.value,
                              lambda: self.view_verdict(call))

    def source(self, node: cst.CSTNode) -> str:
        """The source text of ``node``, for messages."""
        known = self._sources.get(id(node))
        if known is not None and known[0] is node:
            return known[1]
        text = self.module.code_for_node(node)
        self._sources[id(node)] = (node, text)
        return text

    def call_site_arguments(self, name: str) -> Optional[list[cst.BaseExpression]]:
        """In a walk of a function with the facts of its call sites: the expressions those calls
        pass to its parameter ``name``; ``None`` in a plain walk, in another function, or when
        a call passes none explicitly."""
        context = getattr(self._interpreter, "context", None)
        if context is None or self.function is not context.callee.node:
            return None
        found = [passed_argument(context.callee, call, name) for call in context.calls]
        return [a for a in found if a is not None] if all(a is not None for a in found) and found else None

    @property
    def bindings(self) -> Mapping[str, Fact]:
        """The facts of the names bound at this point (``x``, ``self.fc``), read-only."""
        return self._scopes.top.env

    def is_tensor(self, expr: cst.CSTNode) -> bool:
        """True when ``expr`` is known to be a tensor."""
        return self.fact(expr).kind == TENSOR

    @property
    def grad_enabled(self) -> Optional[bool]:
        """Whether autograd records at this point: True, False, or None (unknown)."""
        return self._scopes.top.grad[-1]

    def changed_saves(self, expr: cst.BaseExpression) -> list[tuple[SaveRecord, cst.CSTNode]]:
        """The saved tensors ``expr`` needs for backward that were changed in place since."""
        return self._scopes.top.saves.changed_saves(expr)

    def assigned_values(self, name: str) -> tuple[cst.BaseExpression, ...]:
        """The expressions the current binding of ``name`` was assigned from (empty: unknown)."""
        return self._scopes.top.saves.assigned_values(name)

    def freed_by_backward(self, name: str) -> Optional[cst.Call]:
        """The earlier non-retaining ``name.backward()`` on every path, if any."""
        return self._scopes.top.saves.freed_by(name)

    def call_effects(self, call: cst.Call) -> Optional[Effects]:
        """What the callee of ``call`` does to gradients, when it is known."""
        return call_effects(self._model, call)

    def local_callee(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The function or method of this file that ``call`` runs, when it is known."""
        callee = resolve_call(self._model, call)
        return callee.node if callee is not None and callee.home is None else None

    def only_reads(self, call: cst.Call, arg: cst.BaseExpression) -> bool:
        """The callee of ``call`` only reads the parameter ``arg`` is passed to."""
        callee = resolve_call(self._model, call)
        if callee is None:
            return False
        param = parameter_of(callee, call, arg)
        if param is None:
            return False
        found = self._read_only.get(id(callee.node))
        if found is None:
            found = self._read_only[id(callee.node)] = read_only_parameters(callee.node, self.imports.resolve)
        return param in found

    @property
    def function(self) -> Optional[cst.FunctionDef]:
        """The innermost enclosing function, or ``None``."""
        return self._scopes.top.function

    @property
    def class_def(self) -> Optional[cst.ClassDef]:
        """The class whose method or body is being analysed, or ``None``."""
        return self._scopes.top.class_def

    @property
    def in_module_class(self) -> Optional[bool]:
        """That class subclasses ``nn.Module``: True, False or None."""
        return self._scopes.top.in_module_class

    @property
    def in_forward(self) -> bool:
        """The function is ``forward`` of an ``nn.Module`` class."""
        return self._scopes.top.in_forward

    @property
    def loops(self) -> list[cst.CSTNode]:
        """The enclosing loops of the current function, outermost first."""
        return self._scopes.top.loops

    @property
    def loop(self) -> Optional[cst.CSTNode]:
        """The innermost enclosing loop of the current function, or ``None``."""
        loops = self._scopes.top.loops
        return loops[-1] if loops else None

    @property
    def in_loop(self) -> bool:
        """True inside the body of a loop of the current function."""
        return bool(self._scopes.top.loops)

    def loop_entry_fact(self, name: str) -> Optional[Fact]:
        """The fact of ``name`` where the innermost loop of the current function was entered."""
        loop = self.loop
        entry = self._model.loop_entries.get(id(loop)) if loop is not None else None
        return entry.get(name) if entry is not None else None

    @property
    def statement(self) -> Optional[cst.CSTNode]:
        """The small statement (or compound statement header) being analysed."""
        return self._interpreter.statement

    @property
    def parent(self) -> Optional[cst.CSTNode]:
        """The parent of the node whose hook is running (within the statement)."""
        path = self._interpreter.path
        return path[-2] if len(path) >= 2 else None

    @property
    def ancestors(self) -> tuple[cst.CSTNode, ...]:
        """The nodes from the statement down to the parent of the node whose hook is running."""
        return tuple(self._interpreter.path[:-1])

    @property
    def infer_errors(self) -> list[BaseException]:
        """Exceptions the inference caught so far (for debugging)."""
        return self._model.infer_errors


def analyze(module: cst.Module, rules: Sequence[Any], text: Optional[str] = None,
            imported: Optional[dict[str, tuple[ForeignModule, str]]] = None) -> Checker:
    """Walk ``module`` once, inferring facts and running the hooks of ``rules``.

    ``text``, the source ``module`` was parsed from, is optional: rules use it to skip work that
    the text shows cannot matter. ``imported``: the functions and classes the file imports
    from other files of the run (local name -> (that file, the name there)). Returns the
    checker: ``.findings`` holds the diagnostics, ``.crashes`` the rules that raised.
    """
    if text is not None:
        rules = [r for r in rules if not isinstance(r, Rule) or type(r).applies_to(text)]
    checker = Checker(module, rules, text)
    if imported:
        checker.model.callees = Definitions(imported=dict(imported))
    checker.run()
    extra = context_findings(checker, rules)
    if extra:
        checker.findings.extend(merge_context_findings(module, checker.findings, extra))
    return checker
