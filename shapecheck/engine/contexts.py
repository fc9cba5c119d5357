"""Findings inside a function from the facts of its call sites.

The walk of a file records, for each of its functions and methods, the facts its parameters get
at every call in the file (:mod:`~shapecheck.semantic.call_sites`). After that walk, each callee
whose call sites agree on a fact of some parameter is walked once more, with the rules watching,
its parameters bound to the join of its call sites (an argument not given: the default) and the
grad mode they agree on. A caller walked that way records its own calls again, with its context's
facts: ``demo()`` builds a loader and calls ``main(loader)``, which calls ``train(model, loader)``;
:data:`MAX_CONTEXT_DEPTH` rounds. A callee is walked again only when its join changed; ``__init__``,
generators and functions of other files never.

A finding of such a walk is kept when no finding of the plain walk, nor of an earlier context,
has its code and line, nor its code at every call it comes from (``model(x)`` with a CPU input
and a GPU module is said at the call, not again inside ``forward``); its message names the
calls its facts came from, and it carries no fix (the fix was computed for those facts only).
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any, Optional, Sequence

import libcst as cst

from shapecheck.engine.caller_ranks import at_the_callers, declared_ranks
from shapecheck.rules.base import Finding
from shapecheck.semantic.backward_saves import BACKWARD_WORDS, mentions_backward
from shapecheck.semantic.call_sites import Context, Sites, context_of
from shapecheck.semantic.config_sizes import concrete_attrs, constructed_sizes, resized_attrs
from shapecheck.semantic.eval.nn_modules import module_attr
from shapecheck.semantic.evaluator import INFERENCE_GAPS, Evaluator
from shapecheck.semantic.facts import MODULE
from shapecheck.semantic.evidence import refine_bindings, scan_function
from shapecheck.semantic.evidence import PARAMETERS
from shapecheck.semantic.interpreter import Interpreter
from shapecheck.semantic.model import SemanticModel
from shapecheck.semantic.prescan import scan_statements
from shapecheck.semantic.scopes import Env, ScopeStack
from shapecheck.semantic.summaries import Definitions, call_noter

__all__ = ["MAX_CONTEXT_DEPTH", "context_findings"]

#: rounds of call-site contexts: a caller's parameters may come from its own call sites this deep
MAX_CONTEXT_DEPTH = 3


class _ContextInterpreter(Interpreter):
    """The interpreter over one callee, its parameters bound to the facts of its call sites."""

    def __init__(self, model: SemanticModel, evaluator: Evaluator, observer: Any, context: Context) -> None:
        super().__init__(model, evaluator, observer)
        self.context = context
        #: the sizes every construction of the callee's class gives its ``__init__``, and the
        #: attributes the file resizes in place (they keep their symbols)
        self.sizes: dict[str, int] = {}
        self.resized: frozenset[str] = frozenset()

    def _entry(self, node: cst.FunctionDef, env: Env, mode: Optional[bool]) -> Optional[bool]:
        if node is not self.context.callee.node:
            return mode
        context = self.context
        for name, f in context.facts.items():
            if name in env:
                env[name] = f
        for name, f in context.script.items():
            env.setdefault(name, f)  # what a module-level call leaves in names the walk did not bind
        class_name = context.callee.class_name
        receiver = context.receiver
        first = _receiver(node, class_name)
        if class_name is not None and first is not None and receiver is not None and receiver.kind == MODULE:
            env[first] = receiver  # the instances the calls run on, not every instance of the class
            for key in self.model.class_attrs.get(class_name, {}):
                env[key] = module_attr(self.evaluator, receiver, key[len("self."):])
        if class_name is not None and first is not None:
            external = self.model.external_attrs
            concrete_attrs(env, self.sizes, external | self.resized if external is not None else None)
        found = scan_function(node, self.model.imports.resolve)
        refine_bindings(env, {name: ev for name, ev in found.at(PARAMETERS).items() if name in self.context.facts})
        return self.context.grad


def _context_model(base: SemanticModel) -> SemanticModel:
    """A model in the state the plain walk left at the end of the file, with a scope stack of
    its own (module-level names as the module scope holds them at the end)."""
    model = copy.copy(base)
    model.scopes = ScopeStack()
    model.scopes.module.env = dict(base.scopes.module.env)
    model.scopes.module.grad[:] = list(base.scopes.module.grad)
    model.infer_errors = []
    return model


def _walk_context(checker: Any, rules: Sequence[Any], context: Context) -> tuple[list[Finding], Sites]:
    """Walk the callee of ``context`` with fresh rule instances (a rule's ``carry_from(plain)``, when
    it has one, takes what its instance of the plain walk learnt of the file): their findings, and
    the call sites the walk recorded."""
    base = checker.model
    defs: Definitions = base.callees
    fresh_rules = [type(r)() for r in rules]
    for plain, fresh in zip(rules, fresh_rules):
        carry = getattr(fresh, "carry_from", None)
        if carry is not None:
            carry(plain)  # what the rule learnt of the whole file in the plain walk
    inner = type(checker)(checker.module, fresh_rules, checker.text)
    inner.model = model = _context_model(base)
    inner.evaluator = evaluator = Evaluator(model)
    interpreter = inner.interpreter = _ContextInterpreter(model, evaluator, inner, context)
    inner.context = type(checker.context)(inner)
    source = checker.text if checker.text is not None else checker.module.code
    interpreter._track_saves = any(word in source for word in (*BACKWARD_WORDS, "def forward"))
    if interpreter._track_saves:
        model.scopes.module.saves.shared.records = mentions_backward(checker.module)
        interpreter._saves.steps = ".step(" in source
    interpreter._saves.source = checker.module.code_for_node
    interpreter._note_call = call_noter(model)
    outer_sites = defs.sites
    defs.sites = {}
    callee = context.callee
    try:
        if callee.class_name is not None:
            info = defs.classes[callee.class_name]
            interpreter.sizes = constructed_sizes(checker.module, info.node)
            interpreter.resized = resized_attrs(checker.module)
            rebound: set[str] = set()
            for stmt in info.node.body.body:
                if isinstance(stmt, cst.FunctionDef) and stmt.name.value != "__init__":
                    scan_statements(stmt.body.body, set(), rebound, None)
            model.scopes.push_class(info.node, model.classes.get(callee.class_name), rebound, model.default_grad)
        interpreter._function(callee.node)
    except (RecursionError, *INFERENCE_GAPS):
        inner.findings = []
    except Exception as exc:  # noqa: BLE001  # a context never costs the file its plain findings
        base.infer_errors.append(exc)
        inner.findings = []
    finally:
        recorded = defs.sites
        defs.sites = outer_sites
    checker.crashes.extend(c for c in inner.crashes if c[0] not in {code for code, _ in checker.crashes})
    return inner.findings, recorded


def _callees_in_order(module: cst.Module) -> list[cst.FunctionDef]:
    """The module-level functions and the methods of module-level classes, in source order."""
    out: list[cst.FunctionDef] = []
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            out.append(stmt)
        elif isinstance(stmt, cst.ClassDef):
            out.extend(item for item in stmt.body.body if isinstance(item, cst.FunctionDef))
    return out


def _receiver(fn: cst.FunctionDef, class_name: Optional[str]) -> Optional[str]:
    params = list(fn.params.posonly_params) + list(fn.params.params)
    if class_name is None or not params:
        return None
    return params[0].name.value


def context_findings(checker: Any, rules: Sequence[Any]) -> list[tuple[Finding, tuple[cst.Call, ...]]]:
    """The findings of the walks of callees with the facts of their call sites, each with the
    calls whose facts it used (not yet filtered against the plain walk's findings)."""
    defs: Optional[Definitions] = checker.model.callees
    if defs is None or not defs.sites:
        return []
    sites: Sites = {key: dict(found) for key, found in defs.sites.items()}
    walked: dict[int, Context] = {}
    out: list[tuple[Finding, tuple[cst.Call, ...]]] = []
    order = _callees_in_order(checker.module)
    for _ in range(MAX_CONTEXT_DEPTH):
        recorded_now: Sites = {}
        for fn in order:
            found = sites.get(id(fn))
            if not found or fn.name.value == "__init__":
                continue
            first = next(iter(found.values()))
            context = context_of(found, _receiver(fn, first.callee.class_name))
            if context is None or context.same(walked.get(id(fn))):
                continue
            walked[id(fn)] = context
            findings, recorded = _walk_context(checker, rules, context)
            out.extend(_placed(checker, findings, context))
            for key, calls in recorded.items():
                recorded_now.setdefault(key, {}).update(calls)
        if not recorded_now:
            break
        for key, calls in recorded_now.items():
            sites.setdefault(key, {}).update(calls)
    return out


def _placed(checker: Any, findings: list[Finding], context: Context) -> list[tuple[Finding, tuple[cst.Call, ...]]]:
    """The findings of a context walk with their calls; those the callers caused by a wrong rank
    moved to the calls (:mod:`~shapecheck.engine.caller_ranks`)."""
    ranks = declared_ranks(checker.model.imports.resolve, context.callee.node) if findings else {}
    if not ranks:
        return [(f, context.calls) for f in findings]
    from shapecheck.engine.positions import node_positions

    positions = node_positions(checker.module, [f.node for f in findings])
    return at_the_callers(findings, context, ranks, lambda node: positions.get(node, (0, 0, 0, 0))[0])


#: the label of the related place of a call whose arguments a finding was made with
CALLED_HERE = "called here: the finding uses these arguments"


def merge_context_findings(module: cst.Module, findings: list[Finding],
                           extra: list[tuple[Finding, tuple[cst.Call, ...]]]) -> list[Finding]:
    """``extra`` that no finding of ``findings`` (nor an earlier one of ``extra``) has the code
    and line of, each message naming the lines of the calls it came from (the calls also its
    related places); no fixes."""
    if not extra:
        return []
    from shapecheck.engine.positions import node_positions

    nodes: list[cst.CSTNode] = [f.node for f in findings] + [f.node for f, _ in extra]
    nodes += [call for _, calls in extra for call in calls]
    positions = node_positions(module, nodes)

    def line(node: cst.CSTNode) -> int:
        return positions.get(node, (0, 0, 0, 0))[0]

    seen = {(f.code, line(f.node)) for f in findings}
    kept: list[Finding] = []
    for f, calls in extra:
        key = (f.code, line(f.node))
        lines = sorted({line(c) for c in calls})
        if key in seen or all((f.code, n) in seen for n in lines):
            continue  # already said, here or at every call it comes from (the bug is there)
        seen.add(key)
        where = (f"the call on line {lines[0]}" if len(lines) == 1
                 else "the calls on lines " + ", ".join(str(n) for n in lines))
        calls_here = tuple((c, CALLED_HERE) for c in sorted(calls, key=line))
        kept.append(replace(f, message=f"{f.message} (with the arguments of {where})", fix=None,
                            related=f.related + calls_here))
    return kept
