"""One traversal per file: resolve imports, infer tensor facts, and run the rules' hooks.

The engine calls :func:`analyze` with a parsed module and the rule instances to run. The walk is
hand-written (no libcst visitor, no metadata providers): statements in order, per function body
and at module level, with the bindings of each name (``x``, ``self.fc``) carried as
:class:`~shapecheck.semantic.facts.Fact` objects.

Hook protocol
-------------
A rule defines ``visit_<NodeClass>(self, node, ctx)`` for libcst node classes. Hooks are called
in source order (pre-order inside a statement) for statements, expressions and their structural
parts (``Arg``, ``Param``, ``SubscriptElement``, ``Decorator``, ``CompFor`` ...); tokens and
whitespace nodes (operators, commas, parentheses) are not visited. Facts queried in a hook are
those that hold just *before* the statement that contains the node runs: in ``visit_Call`` of
``x.add_(1)`` the fact of ``x`` is its state before the call. For compound statements the hook
runs before their body. Hooks of a loop body run exactly once per node (the analysis makes a
first, silent pass to find the facts at the loop head, then one reporting pass), so reports are
never duplicated. A hook that raises is recorded in ``ctx.crashes`` and its rule is dropped for
the rest of the file.

What a hook may call on ``ctx`` (a :class:`RuleContext`)
------------------------------------------------------
- ``ctx.fact(expr) -> Fact``: the facts of any expression (see :mod:`shapecheck.semantic.facts` for the
  fields: kind, shape, layout, strides, perm, device, grad, dtype_kind, value, dim, qual,
  features, reduction, elems, is_scalar_cpu). Unknown fields are ``None``.
- ``ctx.qualname(expr)``: the import-resolved dotted name (``torch.einsum`` for ``T.einsum``).
- ``ctx.source(node)``: the source text of a node (for messages; costs a code generation).
- ``ctx.report(node, message, fix=None, offset=None)``.
- ``ctx.grad_enabled``: ``True``/``False``/``None`` (unknown): ``False`` inside
  ``torch.no_grad()``, ``torch.inference_mode()``, ``torch.set_grad_enabled(False)`` blocks and
  in functions decorated with them; ``True`` again under ``torch.enable_grad()``.
- ``ctx.function``: the innermost enclosing ``cst.FunctionDef`` (``None`` at module level).
- ``ctx.class_def``: the ``cst.ClassDef`` whose method is being analysed (or whose body), else
  ``None``; ``ctx.in_module_class``: that class subclasses ``nn.Module`` (directly or through a
  class of the same file) - ``True``, ``False`` or ``None`` when its bases are unknown;
  ``ctx.in_forward``: the function is ``forward`` of such a class.
- ``ctx.loop``: the innermost enclosing ``For``/``While`` inside the current function (or module
  level), else ``None``; ``ctx.loops``: all of them, outermost first; ``ctx.in_loop``.
- ``ctx.statement``: the small statement (or compound statement header) being analysed.
- ``ctx.parent``: the parent of the node whose hook is running; ``ctx.ancestors``: the nodes from
  the statement (a small statement, or a compound statement for its header expressions: the
  ``If`` for its test) down to that parent.
- ``ctx.is_tensor(expr)``: ``ctx.fact(expr).kind == "tensor"``.
- ``ctx.view_target(call)``: the sizes asked of ``x.view(...)``/``x.reshape(...)`` (``-1`` kept,
  unknown sizes ``None``), or ``None`` when unreadable; ``ctx.view_verdict(call)``:
  ``(fact of x, sizes, possible)`` where ``possible`` is ``False`` only when the view is proven
  to fail (exact strides with known sizes; dims a transpose/permute/expand moved apart with
  unknown sizes), ``True`` when proven to work, ``None`` when unknown.
- ``ctx.factory_sizes(call)``: for ``torch.zeros``/``ones``/``empty``/``rand``/``randn``/``full``/
  ``randint``/``empty_strided``/``randperm``/``eye``/``linspace``/``logspace`` and
  ``x.new_zeros``/``new_ones``/``new_empty``/``new_full``: ``(name, sizes as written)`` with
  negative sizes kept, else ``None``. Facts never carry a negative size: the inference makes it
  unknown (a rule reports it where it is written).
- ``ctx.imports``: the import table (``ctx.imports.resolve(expr)`` is ``ctx.qualname``).
- ``ctx.infer_errors``: exceptions the evaluator caught (each made one expression unknown);
  empty on the test suite and the audit corpora, kept for debugging.

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
(and at every ``continue``/``break``). Functions see the module's names bound exactly once, with
annotation names removed (and modules without their device and parameters: module-level code run
before the call may move them); methods of a class also see the modules, optimizers, devices and
parameters that ``__init__`` assigned to ``self`` (without a device: the instance may have been
moved since).

Modules: a ``torch.nn`` layer knows the parameters it holds (``model.weight`` of an
``nn.Linear`` is a leaf tensor that requires grad, on the module's device; ``bias=False``,
``elementwise_affine=False`` and ``affine=False`` are read); ``model.<p>`` of an instance of a
class of this file is the ``self.<p>`` its ``__init__`` assigned. Calling a module whose
parameters require grad gives a ``non-leaf`` tensor with grad mode on; a module without
parameters (``nn.ReLU()``, ``nn.MSELoss()``) computes on its inputs' device and grad. A module
has a device only when it is known to hold parameters or buffers; an instance of a class of this
file with a method that moves ``self`` (``self.cuda()``, ``self.to(...)``) has none. Two facts are
read from the whole file before the walk: a file that changes the default device
(``torch.set_default_device``, ``set_default_tensor_type``, ``with torch.device(...):``) has no
``cpu`` fact for factories and modules built without ``device=``; a file that turns
``requires_grad`` off (``m.requires_grad_(False)``, ``p.requires_grad = False``) leaves the grad
of module parameters and outputs unknown; a file with a plain ``torch.set_grad_enabled(False)``
statement has grad mode unknown wherever no ``with``/decorator sets it. A module passed to a
function that is not a builtin (``weight_norm(layer)``, ``prune.l1_unstructured(layer, ...)``,
``to_gpu(model)``) keeps only its class. ``torch.equal``, ``torch.allclose``,
``x.is_contiguous()`` and the other calls of ``PYTHON_BOOL_RESULTS`` are Python bools.
"""

from __future__ import annotations

import builtins
import dataclasses
import re
from typing import Optional

import libcst as cst

from shapecheck.semantic.facts import (
    CPU, DEVICE, INT, SIZE, LEAF_REQUIRES_GRAD, MODULE, NO_GRAD, NON_LEAF, OPTIMIZER, STR,
    TENSOR, UNKNOWN, Fact, fresh, join,
)
from shapecheck.semantic.annotations import annotation_fact
from shapecheck.semantic.evaluator import (
    ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, CallArgs, Evaluator, dotted_name,
)
from shapecheck.rules.base import Finding, Fix, Rule
from shapecheck.shapes import Shape

__all__ = ["ImportTable", "RuleContext", "analyze", "dotted_name", "annotation_fact"]


class ImportTable:
    """Local names bound by imports, mapped to what they stand for (``T`` -> ``torch``)."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self._cache: dict[int, Optional[str]] = {}

    def add_import(self, node: cst.Import) -> None:
        """Record ``import a.b`` (binds ``a``) and ``import a.b as c`` (binds ``c``)."""
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.aliases[alias.asname.name.value] = full
            else:
                top = full.split(".")[0]
                self.aliases[top] = top
        self._cache.clear()

    def add_import_from(self, node: cst.ImportFrom) -> None:
        """Record ``from a.b import c as d`` (binds ``d`` to ``a.b.c``); relative imports are skipped."""
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module)
        if module is None:
            return
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{module}.{name}"
        self._cache.clear()

    def resolve(self, expr: cst.BaseExpression) -> Optional[str]:
        """The qualified name of an expression through the imports, or ``None``."""
        key = id(expr)
        if key in self._cache:
            return self._cache[key]
        result = None
        dotted = dotted_name(expr)
        if dotted is not None:
            head, _, rest = dotted.partition(".")
            target = self.aliases.get(head)
            if target is not None:
                result = f"{target}.{rest}" if rest else target
        self._cache[key] = result
        return result


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


_NODE_TYPES: dict[type, bool] = {}


def _is_node_type(tp: type) -> bool:
    """``issubclass(tp, cst.CSTNode)``, cached: CSTNode is an ABC, and its checks are slow."""
    known = _NODE_TYPES.get(tp)
    if known is None:
        known = _NODE_TYPES[tp] = issubclass(tp, cst.CSTNode)
    return known


#: node types without child expressions
_LEAF_TYPES = (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis,
               cst.Pass, cst.Break, cst.Continue)
_SCOPED_EXPRS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp, cst.Lambda)
_TERMINAL = (cst.Return, cst.Raise)
_LOOP_EXIT = (cst.Continue, cst.Break)
#: in-place methods that keep the receiver's shape and layout
_INPLACE_KEEP = {n + "_" for n in ELEMENTWISE_UNARY | ELEMENTWISE_BINARY} | {
    "copy_", "zero_", "fill_", "normal_", "uniform_", "masked_fill_", "clamp_", "index_add_",
    "scatter_", "scatter_add_", "index_fill_", "index_copy_", "masked_scatter_", "bernoulli_",
    "exponential_", "random_", "add_", "mul_", "div_", "sub_", "addcmul_", "addcdiv_", "lerp_",
    "clamp_min_", "clamp_max_", "fill_diagonal_", "put_", "record_stream", "retain_grad",
}


class _Exit:
    """How a block ended: normally, by return/raise, or by break/continue."""

    NORMAL = 0
    RETURN = 1
    LOOP = 2


class RuleContext(Evaluator):
    """What a hook may ask of the analysis, and where it reports (see the module docstring)."""

    def __init__(
        self,
        module: cst.Module,
        imports: ImportTable,
        rules: list[Rule] = (),
        text: Optional[str] = None,
    ) -> None:
        self.module = module
        #: the file's source text when the caller has it (rules may pre-screen it cheaply)
        self.text = text
        self.imports = imports
        self.findings: list[Finding] = []
        #: (rule code, exception) for every hook that raised; the engine reports SC999 for each
        self.crashes: list[tuple[str, BaseException]] = []
        self.current_code = ""
        self.env: dict[str, Fact] = {}
        self.memo: dict[int, Fact] = {}
        self.infer_errors: list[BaseException] = []
        self.classes: dict[str, Optional[bool]] = {}
        self.class_attrs: dict[str, dict[str, Fact]] = {}
        self.class_bases: dict[str, list[str]] = {}
        self.signatures: dict = {}
        #: local classes with a method that moves ``self`` (``self.cuda()``, ``self.to(...)``)
        self.class_moves: set[str] = set()
        #: the file changes torch's default device (``torch.set_default_device``, ``with
        #: torch.device(...)``): factories and modules without ``device=`` may not be on the CPU
        self.default_device_set = False
        #: the file turns ``requires_grad`` off somewhere (``m.requires_grad_(False)``,
        #: ``p.requires_grad = False``): the parameters of modules may not require grad
        self.params_frozen = False
        self.statement: Optional[cst.CSTNode] = None
        self.function: Optional[cst.FunctionDef] = None
        self.class_def: Optional[cst.ClassDef] = None
        self.in_module_class: Optional[bool] = None
        self.in_forward = False
        self.loops: list[cst.CSTNode] = []
        self._grad: list[Optional[bool]] = [True]
        self._silent = 0
        self._stack: list[cst.CSTNode] = []
        self._loop_exits: list[list[dict]] = []
        self._module_globals: set[str] = set()
        #: every name the module binds at top level (functions and classes included)
        self._module_names: set[str] = set()
        self._hooks: dict[str, list] = {}
        self._hooks_by_type: dict[type, list] = {}
        for rule in rules:
            for attr in dir(rule):
                if attr.startswith("visit_"):
                    self._hooks.setdefault(attr[6:], []).append((rule.code, getattr(rule, attr)))
        #: leaf node types (names, literals) that no rule hooks: the walk skips them
        self._silent_leaves = frozenset(tp for tp in _LEAF_TYPES if tp.__name__ not in self._hooks)

    # ------------------------------------------------------------------ public API
    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        fix: Optional[Fix] = None,
        offset: Optional[tuple[int, int]] = None,
    ) -> None:
        """Report a diagnostic of the rule whose hook is running, at ``node``."""
        self.findings.append(Finding(self.current_code, node, message, fix, offset))

    def source(self, node: cst.CSTNode) -> str:
        """The source text of ``node``, for messages."""
        return self.module.code_for_node(node)

    @property
    def grad_enabled(self) -> Optional[bool]:
        """Whether autograd records at this point: True, False, or None (unknown)."""
        return self._grad[-1]

    @property
    def loop(self) -> Optional[cst.CSTNode]:
        """The innermost enclosing loop of the current function, or ``None``."""
        return self.loops[-1] if self.loops else None

    @property
    def in_loop(self) -> bool:
        """True inside the body of a loop of the current function."""
        return bool(self.loops)

    @property
    def parent(self) -> Optional[cst.CSTNode]:
        """The parent of the node whose hook is running (within the statement)."""
        return self._stack[-2] if len(self._stack) >= 2 else None

    @property
    def ancestors(self) -> tuple[cst.CSTNode, ...]:
        """The nodes from the statement down to the parent of the node whose hook is running."""
        return tuple(self._stack[:-1])

    def is_tensor(self, expr: cst.BaseExpression) -> bool:
        """True when ``expr`` is known to be a tensor."""
        return self.fact(expr).kind == TENSOR

    # ------------------------------------------------------------------ dispatch
    def _hooks_for(self, tp: type) -> list:
        hooks = self._hooks_by_type.get(tp)
        if hooks is None:
            hooks = self._hooks.get(tp.__name__, [])
            self._hooks_by_type[tp] = hooks
        return hooks

    def _fire(self, node: cst.CSTNode, hooks: Optional[list] = None) -> None:
        if hooks is None:
            hooks = self._hooks_for(type(node))
        # _drop() replaces the lists, never mutates them: iterating this one stays safe
        for code, hook in hooks:
            self.current_code = code
            try:
                hook(node, self)
            except Exception as exc:  # one rule's crash must not stop the others
                self.crashes.append((code, exc))
                self._drop(code)

    def _drop(self, code: str) -> None:
        for name in list(self._hooks):
            self._hooks[name] = [(c, h) for c, h in self._hooks[name] if c != code]
        self._hooks_by_type.clear()

    def _walk(self, node: cst.CSTNode) -> None:
        """Fire hooks on ``node`` and everything below it (pre-order)."""
        stack = self._stack
        stack.append(node)
        tp = type(node)
        hooks = self._hooks_for(tp)
        if hooks:
            self._fire(node, hooks)
        masked = None
        if tp in _SCOPED_EXPRS:
            masked = self._mask(node)
        leaves = self._silent_leaves
        for name in _child_fields(tp):
            value = getattr(node, name)
            vtp = type(value)
            if vtp is tuple or vtp is list:
                for child in value:
                    ctp = type(child)
                    if ctp not in leaves and _is_node_type(ctp):
                        self._walk(child)
            elif vtp not in leaves and _is_node_type(vtp):
                self._walk(value)
        if masked is not None:
            for key, old in masked.items():
                if old is None:
                    self.env.pop(key, None)
                else:
                    self.env[key] = old
        if tp is cst.NamedExpr and type(node.target) is cst.Name:
            self.env[node.target.value] = fresh()
        stack.pop()

    def _mask(self, node: cst.CSTNode) -> dict:
        """Hide the outer bindings of names a comprehension or lambda binds."""
        names: list[str] = []
        if isinstance(node, cst.Lambda):
            for p in _all_params(node.params):
                names.append(p.name.value)
        else:
            comp = node.for_in
            while comp is not None:
                names.extend(_target_names(comp.target))
                comp = comp.inner_for_in
        saved = {}
        for n in names:
            saved[n] = self.env.get(n)
            self.env[n] = fresh()
        return saved

    def _walk_header(self, node: cst.CSTNode, *parts) -> None:
        """Fire the hooks of a compound statement and of its header expressions."""
        self.memo.clear()
        self.statement = node
        if self._silent:
            return
        self._stack.append(node)
        self._fire(node)
        for part in parts:
            if part is None:
                continue
            if isinstance(part, (list, tuple)):
                for p in part:
                    self._walk(p)
            else:
                self._walk(part)
        self._stack.pop()

    # ------------------------------------------------------------------ driver
    def run(self) -> None:
        """Analyse the whole module."""
        module = self.module
        text = self.text if self.text is not None else module.code
        self.default_device_set = _changes_default_device(text)
        self.params_frozen = _FREEZES.search(text) is not None
        if _switches_grad_off(text):
            self._default_grad = None
            self._grad = [None]
        self._prescan(module.body)
        if not self._silent:
            self._stack.append(module)
            self._fire(module)
            self._stack.pop()
        self._block(module.body)

    def _prescan(self, body) -> None:
        """Signatures of module-level functions; names the module binds more than once."""
        counts: dict[str, int] = {}
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Import):
                        self.imports.add_import(small)
                    elif isinstance(small, cst.ImportFrom):
                        self.imports.add_import_from(small)
        for stmt in body:
            _count_bindings(stmt, counts, top=True)
            if isinstance(stmt, cst.FunctionDef):
                sig = self._signature(stmt)
                if sig is not None:
                    self.signatures[stmt.name.value] = sig
        declared: set[str] = set()
        _scan_statements(body, declared, set())
        self._module_globals = {n for n, c in counts.items() if c == 1 and n not in declared}
        self._module_names = set(counts)

    def _signature(self, fn: cst.FunctionDef):
        ret = annotation_fact(fn.returns.annotation if fn.returns else None, self.imports) \
            if fn.returns is not None else None
        params = []
        for p in _all_params(fn.params):
            f = annotation_fact(p.annotation.annotation if p.annotation else None, self.imports)
            params.append((p.name.value, f.shape if f is not None else None))
        if ret is None:
            return None
        return params, ret.shape

    def _block(self, stmts) -> int:
        for stmt in stmts:
            ended = self._stmt(stmt)
            if ended:
                return ended
        return _Exit.NORMAL

    def _stmt(self, stmt: cst.CSTNode) -> int:
        tp = type(stmt)
        if tp is cst.SimpleStatementLine:
            if not self._silent and self._hooks_for(tp):
                self.statement = stmt
                self._stack.append(stmt)
                self._fire(stmt)
                self._stack.pop()
            return self._smalls(stmt.body)
        handler = _STMT_HANDLERS.get(tp)
        if handler is not None:
            return handler(self, stmt)
        return _Exit.NORMAL

    def _smalls(self, smalls) -> int:
        """The small statements of one line (or of a one-line suite), in order."""
        for small in smalls:
            self.memo.clear()
            self.statement = small
            if not self._silent:
                self._walk(small)
            try:
                self._bind_small(small)
            except (RecursionError, ArithmeticError, LookupError, TypeError, ValueError,
                    AttributeError) as exc:
                self.infer_errors.append(exc)
            if isinstance(small, _TERMINAL):
                return _Exit.RETURN
            if isinstance(small, _LOOP_EXIT):
                if self._loop_exits:
                    self._loop_exits[-1].append(dict(self.env))
                return _Exit.LOOP
        return _Exit.NORMAL

    def _body(self, suite) -> int:
        if isinstance(suite, cst.IndentedBlock):
            return self._block(suite.body)
        return self._smalls(suite.body)  # a one-line suite: `if c: x = 1`

    # ------------------------------------------------------------------ compound statements
    def _if(self, node: cst.If) -> int:
        self._walk_header(node, node.test)
        env0 = self.env
        self.env = dict(env0)
        e1 = self._body(node.body)
        env1 = self.env
        self.env = dict(env0)
        if isinstance(node.orelse, cst.If):
            e2 = self._if(node.orelse)
        elif isinstance(node.orelse, cst.Else):
            self._walk_header(node.orelse)
            e2 = self._body(node.orelse.body)
        else:
            e2 = _Exit.NORMAL
        env2 = self.env
        live = [e for e, ended in ((env1, e1), (env2, e2)) if not ended]
        if not live:
            self.env = _merge([env1, env2])
            return max(e1, e2)
        self.env = _merge(live)
        return _Exit.NORMAL

    def _loop(self, node, target, iter_expr, test) -> int:
        header = [p for p in (target, iter_expr, test) if p is not None]
        self._walk_header(node, *header)
        elem = self._iter_elem(iter_expr) if iter_expr is not None else None
        env0 = self.env
        self.loops.append(node)

        def one_pass(start: dict) -> dict:
            """Analyse the loop body once from ``start``; the facts at its end and exits."""
            self.env = dict(start)
            self.memo.clear()
            if target is not None:
                self._bind(target, elem if elem is not None else fresh())
            self._loop_exits.append([])
            self._body(node.body)
            exits = self._loop_exits.pop()
            return _merge([self.env] + exits)

        if self._silent:
            end = one_pass(env0)
            entry = _merge([env0, end])
        else:
            self._silent += 1
            end = one_pass(env0)
            self._silent -= 1
            entry = _merge([env0, end])
            end = one_pass(entry)
            entry = _merge([entry, end])
        self.loops.pop()
        self.env = entry
        if node.orelse is not None:
            self._walk_header(node.orelse)
            self._body(node.orelse.body)
        return _Exit.NORMAL

    def _for(self, node: cst.For) -> int:
        return self._loop(node, node.target, node.iter, None)

    def _while(self, node: cst.While) -> int:
        return self._loop(node, None, None, node.test)

    def _iter_elem(self, iter_expr: cst.BaseExpression) -> Optional[Fact]:
        """The fact of each element a for-loop iterates over."""
        if isinstance(iter_expr, cst.Call):
            func = iter_expr.func
            if isinstance(func, cst.Name) and func.value == "range":
                return Fact(kind=INT)
            if isinstance(func, cst.Name) and func.value == "enumerate" and iter_expr.args:
                inner = self._iter_elem(iter_expr.args[0].value) or fresh()
                return Fact(elems=(Fact(kind=INT), inner))
            if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
                owner = self.fact(func.value)
                if owner.kind == MODULE or func.attr.value == "parameters" and owner.kind is None:
                    param = Fact(kind=TENSOR, grad=LEAF_REQUIRES_GRAD, device=owner.device)
                    if func.attr.value == "named_parameters":
                        return Fact(elems=(Fact(kind=STR), param))
                    return param
        f = self.fact(iter_expr)
        if f.kind == TENSOR and f.shape is not None and f.shape.rank:
            return f.with_(shape=Shape(f.shape.dims[1:]), layout=None, strides=None, perm=None,
                           reduction=None, is_scalar_cpu=f.shape.rank == 1 and f.device == CPU)
        if f.kind == TENSOR:
            return Fact(kind=TENSOR, device=f.device, grad=f.grad, dtype_kind=f.dtype_kind)
        return None

    def _try(self, node) -> int:
        self._walk_header(node)
        env0 = self.env
        self.env = dict(env0)
        e_body = self._body(node.body)
        env_body = self.env
        outs = []
        for h in node.handlers:
            self.env = _merge([env0, env_body])
            self._walk_header(h, h.type)
            if h.name is not None:
                self._bind(h.name.name, fresh())
            e = self._body(h.body)
            if not e:
                outs.append(self.env)
        self.env = env_body
        if node.orelse is not None and not e_body:
            self._walk_header(node.orelse)
            e_body = self._body(node.orelse.body)
        if not e_body:
            outs.append(self.env)
        self.env = _merge(outs) if outs else _merge([env0, env_body])
        if node.finalbody is not None:
            self._walk_header(node.finalbody)
            self._body(node.finalbody.body)
        return _Exit.NORMAL if outs else _Exit.RETURN

    def _with(self, node: cst.With) -> int:
        self._walk_header(node, list(node.items))
        mode = self._grad[-1]
        for item in node.items:
            if isinstance(item.item, cst.Call) and self.imports.resolve(item.item.func) == "torch.device":
                self.default_device_set = True  # also one the text scan missed (a multi-line `with`)
            m = self._grad_mode_of(item.item)
            if m is not _NOT_GRAD_CM:
                mode = m
            if item.asname is not None:
                self._bind(item.asname.name, fresh())
        self._grad.append(mode)
        try:
            return self._body(node.body)
        finally:
            self._grad.pop()

    def _grad_mode_of(self, expr: cst.BaseExpression):
        """The grad mode a context manager or decorator sets, or ``_NOT_GRAD_CM``."""
        func = expr.func if isinstance(expr, cst.Call) else expr
        qual = self.imports.resolve(func)
        if qual is None:
            return _NOT_GRAD_CM
        if qual in ("torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"):
            return False
        if qual in ("torch.enable_grad", "torch.autograd.enable_grad"):
            return True
        if qual in ("torch.inference_mode", "torch.autograd.inference_mode"):
            if isinstance(expr, cst.Call) and expr.args:
                v = self.fact(expr.args[0].value).value
                return False if v is True else (True if v is False else None)
            return False
        if qual in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled"):
            if isinstance(expr, cst.Call) and expr.args:
                v = self.fact(expr.args[0].value).value
                return v if isinstance(v, bool) else None
            return None
        return _NOT_GRAD_CM

    def _match(self, node) -> int:
        self._walk_header(node, node.subject)
        env0 = self.env
        outs = []
        for case in node.cases:
            self.env = dict(env0)
            self._walk_header(case, case.pattern, case.guard)
            if not self._body(case.body):
                outs.append(self.env)
        outs.append(env0)
        self.env = _merge(outs)
        return _Exit.NORMAL

    def _function(self, node: cst.FunctionDef) -> int:
        decorators = [d.decorator for d in node.decorators]
        self._walk_header(node, list(node.decorators), node.params,
                          node.returns.annotation if node.returns is not None else None)
        saved = (self.env, self.function, self.loops, self._grad, self._loop_exits,
                 self.in_forward, self.class_def, self.in_module_class)
        method_of = self.class_def if saved[0] is self._class_env else None
        env: dict[str, Fact] = {}
        if self.function is None and self.class_def is None:
            module_env = self.env
        else:
            module_env = self._globals_env
        for name in self._module_globals:
            f = module_env.get(name)
            if f is not None:
                env[name] = _global_view(f)
        if method_of is not None:
            env.update(self.class_attrs.get(method_of.name.value, {}))
        params = _all_params(node.params)
        for i, p in enumerate(params):
            f = annotation_fact(p.annotation.annotation if p.annotation else None, self.imports)
            if f is None:
                f = fresh()
                if i == 0 and method_of is not None and p.name.value == "self" and self.in_module_class:
                    f = Fact(kind=MODULE, qual=method_of.name.value)
            env[p.name.value] = f
        mode: Optional[bool] = self._default_grad
        for d in decorators:
            m = self._grad_mode_of(d)
            if m is not _NOT_GRAD_CM:
                mode = m
        self.env = env
        self.function = node
        self.loops = []
        self._grad = [mode]
        self._loop_exits = []
        if method_of is None:
            self.class_def = None
            self.in_module_class = None
        self.in_forward = bool(method_of is not None and self.in_module_class and node.name.value == "forward")
        try:
            self._body(node.body)
            if method_of is not None and node.name.value == "__init__":
                table = self.class_attrs.setdefault(method_of.name.value, {})
                for key, f in self.env.items():
                    if key.startswith("self.") and key.count(".") == 1 and _exportable(f) \
                            and key not in self._rebound_attrs:
                        table[key] = _exported(f)
        finally:
            (self.env, self.function, self.loops, self._grad, self._loop_exits,
             self.in_forward, self.class_def, self.in_module_class) = saved
        self.env.pop(node.name.value, None)
        return _Exit.NORMAL

    def _class(self, node: cst.ClassDef) -> int:
        self._walk_header(node, list(node.decorators), list(node.bases), list(node.keywords))
        name = node.name.value
        is_module = self._is_module_class(node)
        self.classes[name] = is_module
        inherited: dict[str, Fact] = {}
        for base in node.bases:
            if isinstance(base.value, cst.Name) and base.value.value in self.class_attrs:
                inherited.update(self.class_attrs[base.value.value])
            if isinstance(base.value, cst.Name) and base.value.value in self.class_moves:
                self.class_moves.add(name)
        if inherited:
            self.class_attrs[name] = dict(inherited)
        saved = (self.env, self.class_def, self.in_module_class, self._class_env, self.loops, self._grad,
                 self._globals_env, self._rebound_attrs)
        rebound: set[str] = set()
        for stmt in node.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value != "__init__":
                moves: list = []
                _scan_statements(stmt.body.body, set(), rebound, moves)
                if moves:
                    self.class_moves.add(name)
        self._rebound_attrs = rebound
        if self.function is None and self.class_def is None:
            self._globals_env = self.env
        self.env = {}
        self._class_env = self.env
        self.class_def = node
        self.in_module_class = is_module
        self.loops = []
        self._grad = [self._default_grad]
        try:
            self._body(node.body)
        finally:
            (self.env, self.class_def, self.in_module_class, self._class_env, self.loops,
             self._grad, self._globals_env, self._rebound_attrs) = saved
        self.env.pop(name, None)
        return _Exit.NORMAL

    #: grad mode where no context says otherwise: unknown in a file that switches it off with a
    #: plain ``torch.set_grad_enabled(False)`` statement (process-wide, until switched back)
    _default_grad: Optional[bool] = True
    _class_env: Optional[dict] = None
    _globals_env: dict = {}
    #: ``self.x`` keys that a method other than ``__init__`` assigns: not exported from __init__
    _rebound_attrs: set = frozenset()

    def _is_module_class(self, node: cst.ClassDef) -> Optional[bool]:
        if not node.bases:
            return False
        verdicts = []
        for base in node.bases:
            if base.keyword is not None:
                continue
            qual = self.imports.resolve(base.value)
            if qual is not None and qual.startswith("torch.nn.") and qual.split(".")[-1][:1].isupper():
                if qual.split(".")[-1] in ("Parameter",):
                    verdicts.append(False)
                    continue
                return True
            if isinstance(base.value, cst.Name):
                local = self.classes.get(base.value.value, "missing")
                if local is True:
                    return True
                if base.value.value == "object" or local is False:
                    verdicts.append(False)
                    continue
            verdicts.append(None)
        if verdicts and all(v is False for v in verdicts):
            return False
        return None

    # ------------------------------------------------------------------ small statements
    def _bind_small(self, small: cst.CSTNode) -> None:
        tp = type(small)
        if tp is cst.Assign:
            value = self.fact(small.value)
            for t in small.targets:
                if isinstance(t.target, (cst.Tuple, cst.List)) and value.kind == SIZE:
                    self._refine_rank(small.value, t.target)
                self._bind(t.target, value)
            if type(small.value) is cst.Call:
                self._modules_passed(small.value)
        elif tp is cst.AnnAssign:
            f = self.fact(small.value) if small.value is not None else None
            ann = annotation_fact(small.annotation.annotation, self.imports)
            if ann is not None and (f is None or f.shape is None):
                f = ann if f is None else f.with_(kind=TENSOR, shape=ann.shape)
            if f is not None:
                self._bind(small.target, f)
        elif tp is cst.AugAssign:
            self._aug_assign(small)
        elif tp is cst.Expr:
            self._expr_statement(small.value)
            if type(small.value) is cst.Call:
                self._modules_passed(small.value)
        elif tp is cst.Import:
            self.imports.add_import(small)
            for alias in small.names:
                self.env.pop(_import_binding(alias), None)
        elif tp is cst.ImportFrom:
            self.imports.add_import_from(small)
            if not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    self.env.pop(_import_binding(alias), None)
        elif tp is cst.Del:
            for name in _target_names(small.target):
                self.env.pop(name, None)
        elif tp in (cst.Global, cst.Nonlocal):
            for n in small.names:
                self.env.pop(n.name.value, None)

    def _refine_rank(self, size_expr: cst.BaseExpression, target) -> None:
        """``b, t, c = x.shape`` proves that ``x`` has rank 3 (when its rank was unknown)."""
        if any(isinstance(e, cst.StarredElement) for e in target.elements):
            return
        owner_expr = None
        if isinstance(size_expr, cst.Attribute) and size_expr.attr.value == "shape":
            owner_expr = size_expr.value
        elif isinstance(size_expr, cst.Call) and isinstance(size_expr.func, cst.Attribute) \
                and size_expr.func.attr.value == "size" and not size_expr.args:
            owner_expr = size_expr.func.value
        owner = dotted_name(owner_expr) if owner_expr is not None else None
        if owner is None:
            return
        cur = self.fact(owner_expr)
        if cur.shape is not None or cur.kind not in (TENSOR, None):
            return
        self._set(owner, cur.with_(shape=Shape((None,) * len(target.elements))))

    def _bind(self, target: cst.BaseExpression, value: Fact) -> None:
        tp = type(target)
        if tp is cst.Name:
            name = target.value
            if value.kind == STR and value.device is not None:
                value = Fact(kind=DEVICE, device=value.device, value=value.value)
            self._set(name, value)
            return
        if tp is cst.Attribute:
            dotted = dotted_name(target)
            if dotted is None:
                return
            if target.attr.value == "requires_grad":
                owner = dotted_name(target.value)
                if owner is not None:
                    cur = self.fact(target.value)
                    if value.value is True:
                        self._set(owner, cur.with_(grad=LEAF_REQUIRES_GRAD))
                    elif value.value is False:
                        self._set(owner, cur.with_(grad=NO_GRAD))
                    else:
                        self._set(owner, cur.with_(grad=None))
                return
            if target.attr.value == "data":
                owner = dotted_name(target.value)
                if owner is not None:
                    cur = self.fact(target.value)
                    self._set(owner, cur.with_(shape=value.shape, layout=value.layout,
                                               strides=value.strides, perm=value.perm))
                return
            self._set(dotted, value)
            return
        if tp in (cst.Tuple, cst.List):
            elements = target.elements
            elems = value.elems
            if value.kind == SIZE and value.shape is not None and value.shape.rank is not None:
                elems = tuple(Fact(kind=INT, dim=d, value=d if isinstance(d, int) else None)
                              for d in value.shape.dims)
            elif value.kind == SIZE:
                elems = tuple(Fact(kind=INT) for _ in elements)
            if any(isinstance(e, cst.StarredElement) for e in elements) or elems is None \
                    or len(elems) != len(elements):
                for e in elements:
                    inner = e.value
                    self._bind(inner, fresh())
                return
            for e, f in zip(elements, elems):
                self._bind(e.value, f)
            return
        if tp is cst.Subscript:
            owner = dotted_name(target.value)
            if owner is not None:
                cur = self.fact(target.value)
                if cur.kind == TENSOR and value.kind == TENSOR and value.grad in (LEAF_REQUIRES_GRAD, NON_LEAF) \
                        and cur.grad == NO_GRAD and self.grad_enabled:
                    self._set(owner, cur.with_(grad=NON_LEAF))
            return
        if tp is cst.StarredElement:
            self._bind(target.value, fresh())

    def _set(self, key: str, value: Fact) -> None:
        env = self.env
        env[key] = value
        prefix = key + "."
        stale = [k for k in env if k.startswith(prefix)] if _has_dotted(env) else ()
        for k in stale:
            del env[k]

    def _aug_assign(self, node: cst.AugAssign) -> None:
        owner = dotted_name(node.target)
        if owner is None:
            return
        cur = self.fact(node.target)
        other = self.fact(node.value)
        if cur.kind in (INT, "float") and other.kind in (INT, "float"):
            self._set(owner, Fact(kind=cur.kind if cur.kind == other.kind else "float"))
            return
        if cur.kind != TENSOR:
            self._set(owner, fresh() if cur.kind is None else Fact(kind=cur.kind))
            return
        grad = cur.grad
        if grad == NO_GRAD and other.kind == TENSOR and other.grad in (LEAF_REQUIRES_GRAD, NON_LEAF) \
                and self.grad_enabled:
            grad = NON_LEAF
        elif grad == NO_GRAD and other.kind not in (TENSOR, INT, "float", "bool"):
            grad = None
        self._set(owner, cur.with_(grad=grad, reduction=None))

    def _modules_passed(self, call: cst.Call) -> None:
        """A module passed to a function may come back changed (``weight_norm(layer)``,
        ``prune.l1_unstructured(layer, ...)`` make ``layer.weight`` a computed tensor,
        ``accelerator.prepare(model)`` moves it): forget what it holds and where it is."""
        func = call.func
        if type(func) is cst.Name and func.value in _BUILTINS and func.value not in self.env \
                and func.value not in self._module_names and self.imports.resolve(func) is None:
            return  # a builtin (`print`, `isinstance`): it only reads what it is given
        env = self.env
        for arg in call.args:
            value = arg.value
            tp = type(value)
            if tp is not cst.Name and tp is not cst.Attribute:
                continue
            key = value.value if tp is cst.Name else dotted_name(value)
            f = env.get(key) if key is not None else None
            if f is None or f.kind != MODULE or (f.device is None and f.params is None and f.trainable is None):
                continue
            qual = self.imports.resolve(func)
            if qual is not None and qual.startswith("torch.nn.") and qual.count(".") == 2:
                return  # `nn.Sequential(layer, ...)`: a container keeps the layer as it is
            self._set(key, Fact(kind=MODULE, qual=f.qual, features=f.features))

    def _expr_statement(self, value: cst.BaseExpression) -> None:
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
            return
        func = value.func
        owner = dotted_name(func.value)
        if owner is None:
            return
        method = func.attr.value
        cur = self.fact(func.value)
        if cur.kind == MODULE:
            if method in ("to", "cuda", "cpu", "requires_grad_"):
                self._set(owner, self.fact(value))
            if owner == "self" and method in _MOVES and self.class_def is not None:
                self.class_moves.add(self.class_def.name.value)  # `self.cuda()` in `__init__`
            return
        if cur.kind not in (TENSOR, None):
            return
        if method in ("requires_grad_", "detach_"):
            result = self.fact(value)
            if result is not UNKNOWN:
                self._set(owner, result)
            return
        if method.endswith("_") and not method.startswith("_"):
            if method in _INPLACE_KEEP:
                if cur.reduction is not None:
                    self._set(owner, cur.with_(reduction=None))
                if cur.kind == TENSOR and cur.grad == NO_GRAD and self.grad_enabled:
                    args = CallArgs(value)
                    for a in args.pos:
                        f = self.fact(a)
                        if f.kind == TENSOR and f.grad in (LEAF_REQUIRES_GRAD, NON_LEAF):
                            self._set(owner, cur.with_(grad=NON_LEAF))
                            break
                return
            if cur is not UNKNOWN or owner in self.env:
                self._set(owner, cur.with_(shape=None, layout=None, strides=None, perm=None,
                                           moved_by=None, reduction=None))


_NOT_GRAD_CM = object()


def _has_dotted(env: dict) -> bool:
    for k in env:
        if "." in k:
            return True
    return False


def _without_symbols(f: Fact) -> Fact:
    """``f`` with its annotation names made unknown: they mean nothing in another function."""
    shape = f.shape
    if shape is None or not any(isinstance(d, str) for d in shape.dims):
        return f
    return f.with_(shape=Shape(tuple(None if isinstance(d, str) else d for d in shape.dims),
                               shape.rest_at, None))


def _global_view(f: Fact) -> Fact:
    """The fact of a module-level name inside a function: without annotation names; a module
    also without its device and parameters (module-level code that runs before the call may move
    it, ``model.to(device)``, or wrap its weights)."""
    f = _without_symbols(f)
    if f.kind == MODULE and (f.device is not None or f.params is not None):
        f = f.with_(device=None, params=None)
    return f


def _exported(f: Fact) -> Fact:
    """The fact of ``self.x`` that other methods see: without annotation names, and without a
    device for tensors and modules (whoever built the instance may have moved it since)."""
    f = _without_symbols(f)
    if f.kind in (TENSOR, MODULE) and (f.device is not None or f.is_scalar_cpu):
        f = f.with_(device=None, is_scalar_cpu=False)
    return f


_BUILTINS = frozenset(dir(builtins))
_GRAD_SWITCH = re.compile(r"[ \t]*(?:[\w.]+[ \t]*=[ \t]*)?[\w.]*set_grad_enabled\(\s*(?!True\s*\))")


def _switches_grad_off(text: str) -> bool:
    """True when a line starts with a ``torch.set_grad_enabled(...)`` call whose argument is not
    ``True``, alone or assigned (``with`` and decorators scope the switch and are read as such)."""
    start = text.find("set_grad_enabled(")
    while start >= 0:
        if _GRAD_SWITCH.match(text, text.rfind("\n", 0, start) + 1):
            return True
        start = text.find("set_grad_enabled(", start + 17)
    return False


_WITH_LINE = re.compile(r"[ \t]*(?:async[ \t]+)?with\b")


def _changes_default_device(text: str) -> bool:
    """True when the text calls ``set_default_device``/``set_default_tensor_type``, or has a
    line ``with ...device(...)`` (``with torch.device("cuda"):``)."""
    if "set_default_device" in text or "set_default_tensor_type" in text:
        return True
    start = text.find("device(")
    while start >= 0:
        if _WITH_LINE.match(text, text.rfind("\n", 0, start) + 1, start):
            return True
        start = text.find("device(", start + 7)
    return False


#: text that turns ``requires_grad`` off somewhere in a file
_FREEZES = re.compile(r"\.requires_grad_\((?!\s*\)|\s*True\s*\))|\.requires_grad\s*=(?!=)(?!\s*True\b)")
#: methods that move a module's parameters to another device
_MOVES = frozenset({"to", "cuda", "cpu", "xpu", "mps", "to_empty", "ipu"})


def _exportable(f: Fact) -> bool:
    """Facts of ``self.x`` set in ``__init__`` that other methods may rely on."""
    if f.kind in (MODULE, OPTIMIZER, DEVICE):
        return True
    return f.kind == TENSOR and f.grad == LEAF_REQUIRES_GRAD


def _merge(envs: list[dict]) -> dict:
    """Join several environments: names bound on every path, with joined facts."""
    if len(envs) == 1:
        return envs[0]
    first = envs[0]
    out: dict[str, Fact] = {}
    for key, f in first.items():
        cur = f
        for other in envs[1:]:
            g = other.get(key)
            if g is None:
                cur = None
                break
            if g is not cur:
                cur = join(cur, g)
        if cur is not None:
            out[key] = cur
    return out


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def _target_names(target) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names = []
        for e in target.elements:
            names.extend(_target_names(e.value))
        return names
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    if isinstance(target, cst.Del):
        return _target_names(target.target)
    return []


def _import_binding(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    name = dotted_name(alias.name) or ""
    return name.split(".")[0]


def _count_bindings(stmt, counts: dict, top: bool) -> None:
    """Count the module-level bindings of each name (compound bodies count twice)."""
    weight = 1 if top else 2
    tp = type(stmt)
    if tp is cst.SimpleStatementLine or isinstance(stmt, cst.BaseSmallStatement):
        for small in stmt.body if tp is cst.SimpleStatementLine else (stmt,):
            targets = []
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                targets = [small.target]
                if isinstance(small, cst.AugAssign):
                    weight = 2
            for t in targets:
                for n in _target_names(t):
                    counts[n] = counts.get(n, 0) + weight
        return
    if tp in (cst.FunctionDef, cst.ClassDef):
        counts[stmt.name.value] = counts.get(stmt.name.value, 0) + 2
        return
    if tp is cst.For:
        for n in _target_names(stmt.target):
            counts[n] = counts.get(n, 0) + 2
    for block in _sub_blocks(stmt):
        for s in block:
            _count_bindings(s, counts, top=False)


def _scan_statements(stmts, declared_global: set, self_attrs: set, moves: Optional[list] = None) -> None:
    """Statements only (no expression walk): names declared ``global`` anywhere, the ``self.x``
    attributes assigned (as ``self.x = ...``, also inside nested blocks), and (into ``moves``,
    when given) the statements that move ``self`` (``self.cuda()``, ``x = self.to(d)``)."""
    for stmt in stmts:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.BaseSmallStatement)):
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else (stmt,):
                if moves is not None and _moves_self(getattr(small, "value", None)):
                    moves.append(small)
                if isinstance(small, cst.Global):
                    declared_global.update(n.name.value for n in small.names)
                elif isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) \
                        else [small.target]
                    for t in targets:
                        parts = [e.value for e in t.elements] if isinstance(t, (cst.Tuple, cst.List)) else [t]
                        for el in parts:
                            name = dotted_name(el) if isinstance(el, cst.Attribute) else None
                            if name is not None and name.startswith("self.") and name.count(".") == 1:
                                self_attrs.add(name)
            continue
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            _scan_statements(stmt.body.body, declared_global, self_attrs)
            continue
        for block in _sub_blocks(stmt):
            _scan_statements(block, declared_global, self_attrs, moves)


def _moves_self(value) -> bool:
    """True for ``self.to(...)``, ``self.cuda()``... (methods that move a module's parameters)."""
    if type(value) is not cst.Call:
        return False
    func = value.func
    return type(func) is cst.Attribute and func.attr.value in _MOVES and type(func.value) is cst.Name \
        and func.value.value == "self"


def _sub_blocks(stmt) -> list:
    blocks = []
    body = getattr(stmt, "body", None)
    if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)):
        blocks.append(body.body)
    orelse = getattr(stmt, "orelse", None)
    if isinstance(orelse, cst.If):
        blocks.append([orelse])
    elif orelse is not None and hasattr(orelse, "body"):
        blocks.append(orelse.body.body)
    for h in getattr(stmt, "handlers", ()) or ():
        blocks.append(h.body.body)
    fin = getattr(stmt, "finalbody", None)
    if fin is not None:
        blocks.append(fin.body.body)
    return blocks


_STMT_HANDLERS = {
    cst.If: RuleContext._if,
    cst.For: RuleContext._for,
    cst.While: RuleContext._while,
    cst.Try: RuleContext._try,
    cst.TryStar: RuleContext._try,
    cst.With: RuleContext._with,
    cst.FunctionDef: RuleContext._function,
    cst.ClassDef: RuleContext._class,
    cst.Match: RuleContext._match,
}


def analyze(module: cst.Module, rules: list[Rule], text: Optional[str] = None) -> RuleContext:
    """Walk ``module`` once, inferring facts and running the hooks of ``rules``.

    ``text``, the source ``module`` was parsed from, is optional: rules use it to skip work that
    the text shows cannot matter. Returns the context: ``.findings`` holds the diagnostics,
    ``.crashes`` the rules that raised.
    """
    if text is not None:
        rules = [r for r in rules if not isinstance(r, Rule) or type(r).applies_to(text)]
    ctx = RuleContext(module, ImportTable(), rules, text)
    ctx.run()
    return ctx
