"""The statement walker of the inference: one pass over a file that moves the semantic model
forward statement by statement, and tells an observer which nodes it passes.

The walk is hand-written (no libcst visitor, no metadata providers): statements in order, per
function body and at module level, with the bindings of each name (``x``, ``self.fc``) carried
as :class:`~shapecheck.semantic.facts.Fact` objects in the scope stack of the
:class:`~shapecheck.semantic.model.SemanticModel`; the
:class:`~shapecheck.semantic.evaluator.Evaluator` computes the facts of expressions.

What the observer sees (:class:`NodeObserver`)
----------------------------------------------
The module, then statements, expressions and their structural parts (``Arg``, ``Param``,
``SubscriptElement``, ``Decorator``, ``CompFor`` ...) in source order, pre-order inside a
statement; tokens and whitespace nodes (operators, commas, parentheses) are not visited. A node
is visited while the model holds the facts just *before* the statement that contains it runs:
at ``x.add_(1)`` the fact of ``x`` is its state before the call. A compound statement and its
header expressions (the test of an ``if``) are visited before its body. Each node of a loop body
is visited exactly once: the walk makes a first, silent pass over the body to find the facts at
the loop head, then one visiting pass. :attr:`Interpreter.path` holds the nodes from the
statement down to the node being visited.

Facts come from: literal factories (``zeros ones empty full rand randn randint arange linspace
eye tensor *_like``), jaxtyping annotations on parameters and ``torch.Tensor`` annotations,
the shape rules of view/reshape/flatten/transpose/permute/T/mT/t/unsqueeze/squeeze/expand/
repeat/indexing/reductions/matmul/einsum/cat/stack/elementwise ops, ``nn.Linear`` calls, and
calls of functions of the same file with jaxtyping-annotated parameters and return. Layout
follows torch exactly with known sizes (view stride rule, TensorIterator's stride order for
elementwise results and ``clone``); with unknown sizes a *perm* records which dims a
transpose/permute/expand moved. At ``if``/``try`` joins facts that differ become unknown
(``cuda`` on one path and ``cpu`` on the other is ``maybe-cuda``); a path that returns or raises
does not join; loops are analysed with the entry facts joined with those at the end of the body
(and at every ``continue``/``break``). Every function, nested or not, sees the module's names
bound exactly once as they are when the ``def`` runs, with annotation names removed (and modules
without their device and parameters: module-level code run before the call may move them); it
does not see the locals of an enclosing function. Methods of a class also see the modules,
optimizers, devices, parameters, registered buffers and plain tensor attributes that ``__init__``
assigned to ``self``: without a device (the instance may have been moved since), unless the file
moves an instance of the class (:mod:`~shapecheck.semantic.module_state`): then ``self``, its
parameters, buffers and submodules are on that device and its plain tensor attributes where
``__init__`` made them.

Modules: a ``torch.nn`` layer knows the parameters it holds (``model.weight`` of an
``nn.Linear`` is a leaf tensor that requires grad, on the module's device; ``bias=False``,
``elementwise_affine=False`` and ``affine=False`` are read); ``model.<p>`` of an instance of a
class of this file is the ``self.<p>`` its ``__init__`` assigned. Calling a module whose
parameters require grad gives a ``non-leaf`` tensor with grad mode on; a module without
parameters (``nn.ReLU()``, ``nn.MSELoss()``) computes on its inputs' device and grad. A module
has a device only when it is known to hold parameters or buffers; an instance of a class of this
file with a method that moves ``self`` (``self.cuda()``, ``self.to(...)``) has none. Three facts
are read from the whole file before the walk (:mod:`~shapecheck.semantic.prescan`): a file that
changes the default device (``torch.set_default_device``, ``set_default_tensor_type``, ``with
torch.device(...):``) has no ``cpu`` fact for factories and modules built without ``device=``; a
file that turns ``requires_grad`` off (``m.requires_grad_(False)``, ``p.requires_grad = False``)
leaves the grad of module parameters and outputs unknown; a file with a plain
``torch.set_grad_enabled(False)`` statement has grad mode unknown wherever no ``with``/decorator
sets it. A module passed to a function that is not a builtin (``weight_norm(layer)``,
``prune.l1_unstructured(layer, ...)``, ``to_gpu(model)``) keeps only its class.
``torch.equal``, ``torch.allclose``, ``x.is_contiguous()`` and the other calls of
``PYTHON_BOOL_RESULTS`` are Python bools.

In a file that may run a backward pass, each scope also keeps what autograd saved
(:mod:`~shapecheck.semantic.backward_saves`): updated after the hooks of each statement (and of
each compound statement header), never during the silent loop pass, and joined at the same
points as the bindings.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional, Protocol, Sequence, Union, cast

import libcst as cst

from shapecheck.semantic.annotations import annotation_fact
from shapecheck.semantic.inplace_layers import inplace_layer_call
from shapecheck.semantic.layer_saves import module_saves, saves_weights
from shapecheck.semantic.backward_saves import (
    BACKWARD_WORDS, BackwardSaves, SavesTracker, differentiated, join_saves, mentions_backward,
)
from shapecheck.semantic.bindings import Binder
from shapecheck.semantic.branch_facts import BranchTable
from shapecheck.semantic.eval.autograd import NOT_A_GRAD_MODE, grad_mode_of
from shapecheck.semantic.eval.expressions import loop_element
from shapecheck.semantic.freeze_flow import forget_fresh_layers, may_freeze
from shapecheck.semantic.eval.nn_modules import is_module_class
from shapecheck.semantic.evaluator import INFERENCE_GAPS, Evaluator
from shapecheck.semantic.evidence import (
    PARAMETERS, FunctionEvidence, after_statement, refine_bindings, scan_function, scan_module,
)
from shapecheck.semantic.config_sizes import init_sizes
from shapecheck.semantic.facts import MODULE, Fact, ParamLoop, fresh
from shapecheck.semantic.model import SemanticModel
from shapecheck.semantic.module_state import (
    global_bindings, held_tensors, inherit_state, method_attrs, scan_placements, self_fact,
)
from shapecheck.semantic.prescan import prescan_module, read_file_flags, scan_statements
from shapecheck.semantic.rebinding import rebound_names
from shapecheck.semantic.scopes import FUNCTION_SCOPE, Env, exportable, exported, merge
from shapecheck.semantic.summaries import call_noter
from shapecheck.semantic.syntax import all_params, target_names
from shapecheck.semantic.walk import is_node_type

__all__ = ["Interpreter", "NodeObserver", "annotation_fact"]


class NodeObserver(Protocol):
    """Who watches the walk (the rule checker): told each node in the order described above."""

    def watches(self, node_type: type) -> bool:
        """Whether :meth:`visit` wants nodes of this class now (the answer may turn False later)."""
        ...

    def visit(self, node: cst.CSTNode) -> None:
        """Called for each node of a watched class, with the model at that node."""
        ...

    def unwatched(self, node_types: Sequence[type]) -> frozenset[type]:
        """Which of these (leaf) node classes :meth:`visit` will never want: the walk skips them."""
        ...


class _Nobody:
    """The observer of a walk that only infers facts."""

    def watches(self, node_type: type) -> bool:
        """Nothing is watched."""
        return False

    def visit(self, node: cst.CSTNode) -> None:
        """Never called."""

    def unwatched(self, node_types: Sequence[type]) -> frozenset[type]:
        """Every node class is unwatched."""
        return frozenset(node_types)


# fields of a node class that hold child nodes worth visiting (no tokens or whitespace)
_SKIP_FIELDS = {
    "lpar", "rpar", "comma", "semicolon", "colon", "equal", "leading_lines", "header", "footer",
    "newline", "trailing_whitespace", "lines_after_decorators", "dot", "lbracket", "rbracket",
    "lbrace", "rbrace", "operator", "star", "asynchronous", "whitespace", "arrow", "walrus",
    "first_line",
}
_FIELD_CACHE: dict[type, tuple[str, ...]] = {}


def _child_fields(tp: type) -> tuple[str, ...]:
    fields = _FIELD_CACHE.get(tp)
    if fields is None:
        fields = tuple(
            f.name for f in dataclasses.fields(tp)
            if f.name not in _SKIP_FIELDS and not f.name.startswith("whitespace")
        )
        _FIELD_CACHE[tp] = fields
    return fields




#: node types without child expressions
_LEAF_TYPES = (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis,
               cst.Pass, cst.Break, cst.Continue)
_SCOPED_EXPRS = frozenset({cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp, cst.Lambda})
# exact classes (libcst has no subclasses of these): isinstance on its abstract classes is slow
_TERMINAL = frozenset({cst.Return, cst.Raise})
_LOOP_EXIT = frozenset({cst.Continue, cst.Break})

#: how a block ended: normally, by return/raise, or by break/continue
NORMAL = 0
RETURN = 1
LOOP_EXIT = 2

Suite = Union[cst.IndentedBlock, cst.SimpleStatementSuite]


class Interpreter:
    """Walks a module once, moving ``model`` forward and telling ``observer`` the nodes it passes."""

    def __init__(self, model: SemanticModel, evaluator: Evaluator,
                 observer: Optional[NodeObserver] = None) -> None:
        self.model = model
        self.evaluator = evaluator
        self.fact = evaluator.fact
        self._forget = evaluator.forget
        self.binder = Binder(model, evaluator)
        watcher: NodeObserver = observer if observer is not None else _Nobody()
        self._watches = watcher.watches
        self._visit = watcher.visit
        #: leaf node types (names, literals) that nobody watches: the walk skips them
        self._quiet_leaves = watcher.unwatched(_LEAF_TYPES)
        #: class -> whether the walk goes into a value of that class (see :meth:`_enters`)
        self._entered: dict[type, bool] = {}
        #: node class -> whether the observer watched it when first met (an observer only ever
        #: stops watching a class, and then its ``visit`` of that class does nothing)
        self._watched: dict[type, bool] = {}
        #: the small statement (or compound statement header) being analysed
        self.statement: Optional[cst.CSTNode] = None
        #: the nodes from the statement down to the node being visited
        self.path: list[cst.CSTNode] = []
        #: > 0 during the silent first pass over a loop body
        self._silent = 0
        #: the file may run a backward pass: the walk keeps what autograd saved (see
        #: :mod:`~shapecheck.semantic.backward_saves`)
        self._track_saves = False
        self._saves = SavesTracker(self.fact, model.imports.resolve, lambda node: "",
                                   lambda module, input_grad: module_saves(model, module, input_grad),
                                   lambda call: inplace_layer_call(model.imports.resolve, model.class_def, call)
                                   is not None,
                                   lambda module, any_grad: saves_weights(model, module, any_grad))
        #: the calls of the statement being walked, in source order (only while saves are kept)
        self._calls: list[cst.Call] = []
        #: for each loop being walked: the saves at each ``break``/``continue``
        self._saves_exits: list[list[BackwardSaves]] = []
        #: the evidence of the uses of each binding, per function being walked (innermost last)
        self._evidence: list[FunctionEvidence] = []
        #: records the call sites of the file's own functions (:mod:`~shapecheck.semantic.call_sites`)
        self._note_call: Optional[Callable[[Evaluator, cst.Call], None]] = None
        #: the facts of each side of the ``if`` joins that lost a layout (:mod:`~shapecheck.semantic.branch_facts`)
        self.branches = BranchTable()

    # ------------------------------------------------------------------ driver
    def run(self, module: cst.Module, text: Optional[str] = None) -> None:
        """Analyse the whole module (``text`` is its source, when the caller has it)."""
        source = text if text is not None else module.code
        self.model.tree = module
        read_file_flags(self.model, source)
        self._track_saves = any(word in source for word in (*BACKWARD_WORDS, "def forward"))
        if self._track_saves:
            self.model.scopes.module.saves.shared.records = mentions_backward(module)
            self._saves.steps = ".step(" in source
        self._saves.source = module.code_for_node
        prescan_module(self.model, module.body, source)
        self._note_call = call_noter(self.model)
        scan_placements(self.model, module, source)
        self._evidence = [scan_module(module.body, self.model.imports.resolve)]
        if not self._silent:
            self._visit_alone(module)
        self._block(module.body)

    def _visit_alone(self, node: cst.CSTNode) -> None:
        """Visit ``node`` (a module, statement or header) without its children."""
        if self._watches(type(node)):
            self.path.append(node)
            self._visit(node)
            self.path.pop()

    # ------------------------------------------------------------------ the expression walk
    def _walk(self, node: cst.CSTNode) -> None:
        """Visit ``node`` and everything below it (pre-order); bind what the expressions bind."""
        path = self.path
        path.append(node)
        tp = type(node)
        watched = self._watched.get(tp)
        if watched is None:
            watched = self._watched[tp] = self._watches(tp)
        if watched:
            self._visit(node)
        if tp is cst.Call:
            if self._track_saves:
                self._calls.append(node)  # type: ignore[arg-type]
            if self._note_call is not None:
                self._note_call(self.evaluator, node)  # type: ignore[arg-type]
        masked = None
        if tp in _SCOPED_EXPRS:
            masked = self._mask(node)
        entered = self._entered
        fields = _FIELD_CACHE.get(tp)
        for name in fields if fields is not None else _child_fields(tp):
            value = getattr(node, name)
            vtp = type(value)
            if vtp is tuple or vtp is list:
                for child in value:
                    enter = entered.get(type(child))
                    if enter is None:
                        enter = self._enters(type(child))
                    if enter:
                        self._walk(child)
            else:
                enter = entered.get(vtp)
                if enter is None:
                    enter = self._enters(vtp)
                if enter:
                    self._walk(value)
        if masked is not None:
            env = self.model.env
            for key, old in masked.items():
                if old is None:
                    env.pop(key, None)
                else:
                    env[key] = old
        if tp is cst.NamedExpr and type(node.target) is cst.Name:  # type: ignore[attr-defined]
            self.model.env[node.target.value] = fresh()  # type: ignore[attr-defined]
        path.pop()

    def _enters(self, tp: type) -> bool:
        """Whether the walk goes into a field's value of class ``tp``: a node, unless a leaf nobody
        watches (remembered in ``_entered``)."""
        enter = self._entered[tp] = tp not in self._quiet_leaves and is_node_type(tp)
        return enter

    def _mask(self, node: cst.CSTNode) -> dict[str, Optional[Fact]]:
        """Hide the outer bindings of names a comprehension or lambda binds; the variable of a
        comprehension with one ``for`` is bound to what a loop over its iterable binds."""
        names: list[str] = []
        element: Optional[Fact] = None
        if type(node) is cst.Lambda:
            for p in all_params(node.params):
                names.append(p.name.value)
        else:
            comp = node.for_in  # type: ignore[attr-defined]
            if comp.inner_for_in is None and comp.asynchronous is None and type(comp.target) is cst.Name:
                element = loop_element(self.evaluator, comp.iter)
            while comp is not None:
                names.extend(target_names(comp.target))
                comp = comp.inner_for_in
        env = self.model.env
        saved = {}
        for n in names:
            saved[n] = env.get(n)
            env[n] = element if element is not None else fresh()
        return saved

    def _walk_header(self, node: cst.CSTNode, *parts: object) -> None:
        """Visit a compound statement and its header expressions."""
        self._forget()
        self.statement = node
        if self._silent:
            return
        self.path.append(node)
        if self._watches(type(node)):
            self._visit(node)
        self._calls = []
        for part in parts:
            if part is None:
                continue
            if type(part) is list or type(part) is tuple:
                for p in part:
                    self._walk(p)
            else:
                self._walk(part)  # type: ignore[arg-type]
        self.path.pop()
        if self._track_saves:
            self._saves.calls(self.model.scopes.top.saves, self._calls, self.model.grad_enabled)

    # ------------------------------------------------------------------ statements
    def _block(self, stmts: Sequence[cst.BaseStatement]) -> int:
        for stmt in stmts:
            ended = self._stmt(stmt)
            if ended:
                return ended
        return NORMAL

    def _stmt(self, stmt: cst.BaseStatement) -> int:
        tp = type(stmt)
        if tp is cst.SimpleStatementLine:
            if not self._silent and self._watches(tp):
                self.statement = stmt
                self._visit_alone(stmt)
            return self._smalls(stmt.body)  # type: ignore[attr-defined]
        handler = _STMT_HANDLERS.get(tp)
        if handler is not None:
            return handler(self, stmt)
        return NORMAL

    def _smalls(self, smalls: Sequence[cst.BaseSmallStatement]) -> int:
        """The small statements of one line (or of a one-line suite), in order."""
        for small in smalls:
            self._forget()
            self.statement = small
            if not self._silent:
                self._calls = []
                self._walk(small)
            try:
                if self._track_saves and not self._silent:
                    self._saves.statement(self.model.scopes.top.saves, small, self._calls,
                                          self.model.grad_enabled)
                self.binder.small_statement(small)
                if self.model.params_frozen and self.model.scopes.top.function is not None \
                        and may_freeze(small, self.fact, self.model.imports.resolve, self.model.env):
                    forget_fresh_layers(self.model.env)
                if self._evidence:
                    after_statement(self.fact, small, self.model.env, self._evidence[-1])
            except INFERENCE_GAPS as exc:
                self.model.infer_errors.append(exc)
            if type(small) in _TERMINAL:
                return RETURN
            if type(small) in _LOOP_EXIT:
                loop_exits = self.model.scopes.top.loop_exits
                if loop_exits:
                    loop_exits[-1].append(dict(self.model.env))
                if self._saves_exits and not self._silent:
                    self._saves_exits[-1].append(self.model.scopes.top.saves.copy())
                return LOOP_EXIT
        return NORMAL

    def _body(self, suite: cst.BaseSuite) -> int:
        if type(suite) is cst.IndentedBlock:
            return self._block(suite.body)
        return self._smalls(cast(cst.SimpleStatementSuite, suite).body)  # a one-line suite: `if c: x = 1`

    # ------------------------------------------------------------------ compound statements
    def _start_path(self, env: dict, saves: BackwardSaves) -> None:
        """Start one path of a branch from the bindings and save records before it."""
        self.model.env = dict(env)
        self.model.scopes.top.saves = saves.copy()

    def _if(self, node: cst.If) -> int:
        model = self.model
        self._walk_header(node, node.test)
        scope = model.scopes.top
        env0 = model.env
        s0 = scope.saves
        self._start_path(env0, s0)
        e1 = self._body(node.body)
        env1 = model.env
        s1 = scope.saves
        self._start_path(env0, s0)
        if type(node.orelse) is cst.If:
            e2 = self._if(node.orelse)
        elif type(node.orelse) is cst.Else:
            self._walk_header(node.orelse)
            e2 = self._body(node.orelse.body)
        else:
            e2 = NORMAL
        env2 = model.env
        s2 = scope.saves
        live = [e for e, ended in ((env1, e1), (env2, e2)) if not ended]
        if not live:
            model.env = merge([env1, env2])
            scope.saves = join_saves([s1, s2])
            return max(e1, e2)
        model.env = merge(live)
        if len(live) == 2 and not self._silent:
            self.branches.note(node.test, env0, env1, env2, model.env)
        scope.saves = join_saves([s for s, ended in ((s1, e1), (s2, e2)) if not ended])
        return NORMAL

    def _loop(self, node: Union[cst.For, cst.While], target: Optional[cst.BaseAssignTargetExpression],
              iter_expr: Optional[cst.BaseExpression], test: Optional[cst.BaseExpression]) -> int:
        model = self.model
        header = [p for p in (target, iter_expr, test) if p is not None]
        self._walk_header(node, *header)
        elem = loop_element(self.evaluator, iter_expr) if iter_expr is not None else None
        param_var = parameter_loop(self.evaluator, target, iter_expr)
        env0 = model.env
        model.loops.append(node)

        def one_pass(start: Env) -> Env:
            """Analyse the loop body once from ``start``; the facts at its end and exits."""
            model.env = dict(start)
            self._forget()
            if target is not None:
                self.binder.bind(target, elem if elem is not None else fresh())
                if self._track_saves and not self._silent and iter_expr is not None:
                    self._saves.loop_target(model.scopes.top.saves, target, iter_expr)
                if param_var is not None:
                    name, how = param_var
                    model.env[name] = model.env[name].with_(parameter_loop=how)
                if self._evidence:
                    refine_bindings(model.env, self._evidence[-1].at(node))
            loop_exits = model.scopes.top.loop_exits
            loop_exits.append([])
            self._body(node.body)
            exits = loop_exits.pop()
            return merge([model.env] + exits)

        if self._silent:
            end = one_pass(env0)
            entry = merge([env0, end])
        else:
            self._silent += 1
            end = one_pass(env0)
            self._silent -= 1
            entry = merge([env0, end])
            scope = model.scopes.top
            s0 = scope.saves
            scope.saves = s0.copy()
            self._saves_exits.append([])
            model.loop_entries[id(node)] = env0
            try:
                end = one_pass(entry)
            finally:
                model.loop_entries.pop(id(node), None)
            scope.saves = join_saves([s0, scope.saves, *self._saves_exits.pop()])
            entry = merge([entry, end])
        model.loops.pop()
        model.env = entry
        if node.orelse is not None:
            self._walk_header(node.orelse)
            self._body(node.orelse.body)
        return NORMAL

    def _for(self, node: cst.For) -> int:
        return self._loop(node, node.target, node.iter, None)

    def _while(self, node: cst.While) -> int:
        return self._loop(node, None, None, node.test)

    def _try(self, node: Union[cst.Try, cst.TryStar]) -> int:
        model = self.model
        self._walk_header(node)
        scope = model.scopes.top
        env0 = model.env
        s0 = scope.saves
        self._start_path(env0, s0)
        e_body = self._body(node.body)
        env_body = model.env
        s_body = scope.saves
        outs = []
        saves_outs = []
        for h in node.handlers:
            model.env = merge([env0, env_body])
            scope.saves = join_saves([s0, s_body], stopped_early=True)
            self._walk_header(h, h.type)
            if h.name is not None:
                self.binder.bind(h.name.name, fresh())
            e = self._body(h.body)
            if not e:
                outs.append(model.env)
                saves_outs.append(scope.saves)
        model.env = env_body
        scope.saves = s_body
        if node.orelse is not None and not e_body:
            self._walk_header(node.orelse)
            e_body = self._body(node.orelse.body)
        if not e_body:
            outs.append(model.env)
            saves_outs.append(scope.saves)
        model.env = merge(outs) if outs else merge([env0, env_body])
        scope.saves = join_saves(saves_outs) if saves_outs else join_saves([s0, s_body], stopped_early=True)
        if node.finalbody is not None:
            self._walk_header(node.finalbody)
            self._body(node.finalbody.body)
        return NORMAL if outs else RETURN

    def _with(self, node: cst.With) -> int:
        model = self.model
        self._walk_header(node, list(node.items))
        mode = model.grad_enabled
        for item in node.items:
            if type(item.item) is cst.Call and model.imports.resolve(item.item.func) == "torch.device":
                model.default_device_set = True  # also one the text scan missed (a multi-line `with`)
            m = grad_mode_of(self.evaluator, item.item)
            if m is not NOT_A_GRAD_MODE:
                mode = m  # type: ignore[assignment]
            if item.asname is not None:
                self.binder.bind(item.asname.name, fresh())
        model.push_grad_mode(mode)
        try:
            return self._body(node.body)
        finally:
            model.pop_grad_mode()

    def _match(self, node: cst.Match) -> int:
        model = self.model
        self._walk_header(node, node.subject)
        scope = model.scopes.top
        env0 = model.env
        s0 = scope.saves
        outs = []
        saves_outs = []
        for case in node.cases:
            self._start_path(env0, s0)
            self._walk_header(case, case.pattern, case.guard)
            if not self._body(case.body):
                outs.append(model.env)
                saves_outs.append(scope.saves)
        outs.append(env0)
        saves_outs.append(s0)
        model.env = merge(outs)
        scope.saves = join_saves(saves_outs)
        return NORMAL

    def _function(self, node: cst.FunctionDef) -> int:
        model = self.model
        scopes = model.scopes
        self._walk_header(node, list(node.decorators), node.params,
                          node.returns.annotation if node.returns is not None else None)
        method_of = scopes.method_class()
        env = global_bindings(model)
        for frame in scopes.frames[1:]:
            if frame.kind == FUNCTION_SCOPE and type(frame.node) is cst.FunctionDef:
                shadowing = rebound_names(frame.node) | {p.name.value for p in all_params(frame.node.params)}
                for name in shadowing & env.keys():
                    del env[name]  # an enclosing function's own binding, not the module's
        model.globals_at_def.setdefault(id(node), frozenset(env))
        sizes: dict[str, Fact] = {}
        if method_of is not None:
            env.update(method_attrs(model, method_of.name.value, node))
            if node.name.value == "__init__" and model.in_module_class:
                sizes = init_sizes(method_of.name.value, node, model.imports.resolve)
        for i, p in enumerate(all_params(node.params)):
            f = annotation_fact(p.annotation.annotation if p.annotation else None, model.imports)
            if f is not None and p.name.value in sizes and f.dim is None:
                f = f.with_(dim=sizes[p.name.value].dim)  # `n: int`
            if f is None:
                f = sizes.get(p.name.value) or fresh()
                if i == 0 and method_of is not None and p.name.value == "self" and model.in_module_class:
                    f = self_fact(model, method_of.name.value, node)
            env[p.name.value] = f
        mode = self._entry(node, env, model.default_grad)
        found = scan_function(node, model.imports.resolve)
        receiver = all_params(node.params)[0].name.value if method_of is not None and all_params(node.params) else None
        refine_bindings(env, {name: ev for name, ev in found.at(PARAMETERS).items() if name != receiver})
        self._evidence.append(found)
        for d in node.decorators:
            m = grad_mode_of(self.evaluator, d.decorator)
            if m is not NOT_A_GRAD_MODE:
                mode = m  # type: ignore[assignment]
        frame = scopes.push_function(node, env, mode)
        if self._track_saves:
            frame.saves.shared.records = mentions_backward(node.body) or method_of is None or \
                differentiated(node, method_of)
        try:
            self._body(node.body)
            if method_of is not None and node.name.value == "__init__":
                self._export_init(method_of, scopes.enclosing().rebound_attrs)
        finally:
            scopes.pop()
            self._evidence.pop()
        model.env.pop(node.name.value, None)
        return NORMAL

    def _entry(self, node: cst.FunctionDef, env: Env, mode: Optional[bool]) -> Optional[bool]:
        """The grad mode a function's body starts in (before its decorators); a subclass may also
        rebind its parameters in ``env`` (the walk of a callee with the facts of its call sites)."""
        return mode

    def _export_init(self, class_def: cst.ClassDef, rebound: Union[set[str], frozenset[str]]) -> None:
        """Record what ``__init__`` leaves in ``self.x`` for the other methods of the class."""
        model = self.model
        table = model.class_attrs.setdefault(class_def.name.value, {})
        for key, f in model.env.items():
            if key.startswith("self.") and key.count(".") == 1 and exportable(f) and key not in rebound:
                table[key] = exported(f)
        table.update(held_tensors(model, self.evaluator.fact, class_def, model.env, rebound))

    def _class(self, node: cst.ClassDef) -> int:
        model = self.model
        self._walk_header(node, list(node.decorators), list(node.bases), list(node.keywords))
        name = node.name.value
        is_module = is_module_class(model, node)
        model.classes[name] = is_module
        inherited: dict[str, Fact] = {}
        for base in node.bases:
            if type(base.value) is cst.Name and base.value.value in model.class_attrs:
                inherited.update(model.class_attrs[base.value.value])
                inherit_state(model, name, base.value.value)
            if type(base.value) is cst.Name and base.value.value in model.class_moves:
                model.class_moves.add(name)
        if inherited:
            model.class_attrs[name] = dict(inherited)
        rebound: set[str] = set()
        for stmt in node.body.body:
            if type(stmt) is cst.FunctionDef and stmt.name.value != "__init__":
                moves: list[cst.CSTNode] = []
                scan_statements(stmt.body.body, set(), rebound, moves)
                if moves:
                    model.class_moves.add(name)
        outer_records = model.scopes.top.saves.shared.records
        model.scopes.push_class(node, is_module, rebound, model.default_grad).saves.shared.records = outer_records
        try:
            self._body(node.body)
        finally:
            model.scopes.pop()
        model.env.pop(name, None)
        return NORMAL



def parameter_loop(ev: Evaluator, target: Optional[cst.BaseAssignTargetExpression],
                   iter_expr: Optional[cst.BaseExpression]) -> Optional[tuple[str, ParamLoop]]:
    """For ``for p in m.parameters()`` (or ``for name, p in m.named_parameters()``): ``("p", how
    p is known to be a parameter)``, else ``None``."""
    if target is None or type(iter_expr) is not cst.Call or type(iter_expr.func) is not cst.Attribute:
        return None
    method = iter_expr.func.attr.value
    if method not in ("parameters", "named_parameters"):
        return None
    if method == "named_parameters" and type(target) is cst.Tuple and len(target.elements) == 2:
        target = target.elements[1].value  # type: ignore[assignment]
    if type(target) is not cst.Name:
        return None
    owner = ev.fact(iter_expr.func.value)
    return target.value, ParamLoop.MODULE if owner.kind == MODULE else ParamLoop.GUESSED


_STMT_HANDLERS: dict[type, Callable[[Interpreter, cst.CSTNode], int]] = {
    cst.If: Interpreter._if,  # type: ignore[dict-item]
    cst.For: Interpreter._for,  # type: ignore[dict-item]
    cst.While: Interpreter._while,  # type: ignore[dict-item]
    cst.Try: Interpreter._try,  # type: ignore[dict-item]
    cst.TryStar: Interpreter._try,  # type: ignore[dict-item]
    cst.With: Interpreter._with,  # type: ignore[dict-item]
    cst.FunctionDef: Interpreter._function,  # type: ignore[dict-item]
    cst.ClassDef: Interpreter._class,  # type: ignore[dict-item]
    cst.Match: Interpreter._match,  # type: ignore[dict-item]
}
