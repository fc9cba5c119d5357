"""One traversal per file: resolve imports, infer tensor facts, and run the rules' hooks.

FIRST VERSION: the walker, the import table and the rule dispatch are real; fact inference
(``RuleContext.fact``) answers unknown for everything until the inference work lands.

The engine calls :func:`analyze` with a parsed module and the rule instances to run; hooks named
``visit_<NodeClass>`` on a rule are called with ``(node, ctx)``.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.facts import UNKNOWN, Fact
from shapecheck.rules.base import Finding, Fix, Rule


def dotted_name(expr: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else ``None``."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


class ImportTable:
    """Local names bound by imports, mapped to what they stand for (``T`` -> ``torch``)."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}

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

    def resolve(self, expr: cst.BaseExpression) -> Optional[str]:
        """The qualified name of an expression through the imports, or ``None``."""
        dotted = dotted_name(expr)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target


class RuleContext:
    """What a hook may ask of the analysis, and where it reports."""

    def __init__(self, module: cst.Module, imports: ImportTable) -> None:
        self.module = module
        self.imports = imports
        self.findings: list[Finding] = []
        #: (rule code, exception) for every hook that raised; the engine reports SC999 for each
        self.crashes: list[tuple[str, BaseException]] = []
        self.current_code = ""

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

    def qualname(self, expr: cst.BaseExpression) -> Optional[str]:
        """The import-resolved dotted name of ``expr`` (``torch.einsum`` for ``T.einsum``)."""
        return self.imports.resolve(expr)

    def fact(self, expr: cst.BaseExpression) -> Fact:
        """The tensor facts of ``expr`` at this point of the program."""
        return UNKNOWN

    def source(self, node: cst.CSTNode) -> str:
        """The source text of ``node``, for messages."""
        return self.module.code_for_node(node)


class _Dispatcher(cst.CSTVisitor):
    def __init__(self, ctx: RuleContext, rules: list[Rule]) -> None:
        super().__init__()
        self.ctx = ctx
        self.hooks: dict[str, list] = {}
        for rule in rules:
            for attr in dir(rule):
                if attr.startswith("visit_"):
                    self.hooks.setdefault(attr[6:], []).append((rule.code, getattr(rule, attr)))

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Import):
            self.ctx.imports.add_import(node)
        elif isinstance(node, cst.ImportFrom):
            self.ctx.imports.add_import_from(node)
        hooks = self.hooks.get(type(node).__name__)
        if hooks:
            for code, hook in list(hooks):
                self.ctx.current_code = code
                try:
                    hook(node, self.ctx)
                except Exception as exc:  # one rule's crash must not stop the others
                    self.ctx.crashes.append((code, exc))
                    self._drop(code)
        return True

    def _drop(self, code: str) -> None:
        for name in list(self.hooks):
            self.hooks[name] = [(c, h) for c, h in self.hooks[name] if c != code]


def analyze(module: cst.Module, rules: list[Rule]) -> RuleContext:
    """Walk ``module`` once, running the hooks of ``rules``.

    Returns the context: ``.findings`` holds the diagnostics, ``.crashes`` the rules that raised.
    """
    ctx = RuleContext(module, ImportTable())
    module.visit(_Dispatcher(ctx, rules))
    return ctx
