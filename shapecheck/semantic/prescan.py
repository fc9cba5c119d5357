"""What the analysis reads from a whole file before the walk: text flags, imports, signatures of
module-level functions, the names the module binds once, and the statements that move ``self``."""

from __future__ import annotations

import re
from typing import Optional, Sequence

import libcst as cst

from shapecheck.semantic.annotations import annotation_fact
from shapecheck.semantic.freeze_flow import FREEZES
from shapecheck.semantic.imports import ImportTable
from shapecheck.semantic.model import SemanticModel, Signature
from shapecheck.semantic.summaries import index_module
from shapecheck.semantic.syntax import all_params, dotted_name, sub_blocks, target_names
from shapecheck.semantic.torch_api import MODULE_DEVICE_METHODS


_GRAD_SWITCH = re.compile(r"[ \t]*(?:[\w.]+[ \t]*=[ \t]*)?[\w.]*set_grad_enabled\(\s*(?!True\s*\))")
_WITH_LINE = re.compile(r"[ \t]*(?:async[ \t]+)?with\b")


def read_file_flags(model: SemanticModel, text: str) -> None:
    """Set the file-wide flags of ``model`` from the source text (see :class:`SemanticModel`)."""
    model.default_device_set = changes_default_device(text)
    model.params_frozen = FREEZES.search(text) is not None
    if switches_grad_off(text):
        model.switch_grad_off_by_default()


def switches_grad_off(text: str) -> bool:
    """True when a line starts with a ``torch.set_grad_enabled(...)`` call whose argument is not
    ``True``, alone or assigned (``with`` and decorators scope the switch and are read as such)."""
    start = text.find("set_grad_enabled(")
    while start >= 0:
        if _GRAD_SWITCH.match(text, text.rfind("\n", 0, start) + 1):
            return True
        start = text.find("set_grad_enabled(", start + 17)
    return False


def changes_default_device(text: str) -> bool:
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


def prescan_module(model: SemanticModel, body: Sequence[cst.BaseStatement], text: Optional[str] = None) -> None:
    """Read the module-level imports and function signatures into ``model``, and the names the
    module binds once (those functions see) or at all. ``text``, the module's source when the
    caller has it, spares the search for ``global`` statements in a file without the word."""
    model.imports.read_module(body)
    counts: dict[str, int] = {}
    for stmt in body:
        count_bindings(stmt, counts, top=True)
        if type(stmt) is cst.FunctionDef:
            sig = signature(stmt, model.imports)
            if sig is not None:
                model.signatures[stmt.name.value] = sig
    declared: set[str] = set()
    if text is None or "global" in text:
        scan_statements(body, declared, set())
    model.module_globals = {n for n, c in counts.items() if c == 1 and n not in declared}
    model.module_names = set(counts)
    model.declared_globals = declared
    imported = model.callees.imported if model.callees is not None else {}
    model.callees = index_module(body)
    model.callees.imported.update(imported)


def signature(fn: cst.FunctionDef, imports: ImportTable) -> Optional[Signature]:
    """The shapes the annotations of ``fn`` promise, when its return is an annotated tensor."""
    ret = annotation_fact(fn.returns.annotation, imports) if fn.returns is not None else None
    params = []
    for p in all_params(fn.params):
        f = annotation_fact(p.annotation.annotation if p.annotation else None, imports)
        params.append((p.name.value, f.shape if f is not None else None))
    if ret is None:
        return None
    return params, ret.shape


def count_bindings(stmt: cst.CSTNode, counts: dict[str, int], top: bool) -> None:
    """Count the module-level bindings of each name (compound bodies count twice)."""
    weight = 1 if top else 2
    tp = type(stmt)
    if tp is cst.SimpleStatementLine or isinstance(stmt, cst.BaseSmallStatement):
        for small in stmt.body if type(stmt) is cst.SimpleStatementLine else (stmt,):
            targets: list[cst.BaseExpression] = []
            if type(small) is cst.Assign:
                targets = [t.target for t in small.targets]
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                targets = [small.target]
                if type(small) is cst.AugAssign:
                    weight = 2
            for t in targets:
                for n in target_names(t):
                    counts[n] = counts.get(n, 0) + weight
        return
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        counts[stmt.name.value] = counts.get(stmt.name.value, 0) + 2
        return
    if type(stmt) is cst.For:
        for n in target_names(stmt.target):
            counts[n] = counts.get(n, 0) + 2
    for block in sub_blocks(stmt):
        for s in block:
            count_bindings(s, counts, top=False)


def scan_statements(stmts: Sequence[cst.CSTNode], declared_global: set[str], self_attrs: set[str],
                    moves: Optional[list[cst.CSTNode]] = None) -> None:
    """Statements only (no expression walk): names declared ``global`` anywhere, the ``self.x``
    attributes assigned (as ``self.x = ...``, also inside nested blocks), and (into ``moves``,
    when given) the statements that move ``self`` (``self.cuda()``, ``x = self.to(d)``)."""
    for stmt in stmts:
        tp = type(stmt)
        if tp is cst.SimpleStatementLine or _is_small(tp):
            for small in stmt.body if tp is cst.SimpleStatementLine else (stmt,):  # type: ignore[attr-defined]
                if moves is not None and moves_self(getattr(small, "value", None)):
                    moves.append(small)
                small_tp = type(small)
                if small_tp is cst.Global:
                    declared_global.update(n.name.value for n in small.names)  # type: ignore[union-attr]
                elif small_tp is cst.Assign or small_tp is cst.AnnAssign or small_tp is cst.AugAssign:
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) \
                        else [small.target]  # type: ignore[union-attr]
                    for t in targets:
                        parts = [e.value for e in t.elements] if type(t) is cst.Tuple or type(t) is cst.List else [t]
                        for el in parts:
                            name = dotted_name(el) if type(el) is cst.Attribute else None
                            if name is not None and name.startswith("self.") and name.count(".") == 1:
                                self_attrs.add(name)
            continue
        if tp is cst.FunctionDef or tp is cst.ClassDef:
            scan_statements(stmt.body.body, declared_global, self_attrs)  # type: ignore[attr-defined]
            continue
        for block in sub_blocks(stmt):
            scan_statements(block, declared_global, self_attrs, moves)


_SMALL: dict[type, bool] = {}


def _is_small(tp: type) -> bool:
    """``tp`` is a small statement class (cached: the check on libcst's abstract class is slow)."""
    small = _SMALL.get(tp)
    if small is None:
        small = _SMALL[tp] = issubclass(tp, cst.BaseSmallStatement)
    return small


def moves_self(value: object) -> bool:
    """True for ``self.to(...)``, ``self.cuda()``... (methods that move a module's parameters)."""
    if type(value) is not cst.Call:
        return False
    func = value.func
    return type(func) is cst.Attribute and func.attr.value in MODULE_DEVICE_METHODS \
        and type(func.value) is cst.Name and func.value.value == "self"
