"""The expression evaluator of the inference: the facts of one expression, given the model.

:class:`Evaluator` composes the handlers that the modules of :mod:`shapecheck.semantic.eval`
register, one module per subject:

- :mod:`~shapecheck.semantic.eval.expressions`: names, literals, attributes, subscripts;
- :mod:`~shapecheck.semantic.eval.elementwise`: operators, binary methods, broadcasting, dtype
  promotion, matrix products;
- :mod:`~shapecheck.semantic.eval.calls`: who a call calls; annotated functions of the file;
- :mod:`~shapecheck.semantic.eval.torch_functions`: ``torch.*``, ``F.*``, ``linalg``, ``cat``,
  ``einsum``; :mod:`~shapecheck.semantic.eval.factories`: tensor factories and ``new_*``;
- :mod:`~shapecheck.semantic.eval.tensor_methods`, :mod:`~shapecheck.semantic.eval.shape_methods`,
  :mod:`~shapecheck.semantic.eval.reductions`: tensor methods, each registered where it is defined;
- :mod:`~shapecheck.semantic.eval.nn_modules`: layers, ``Sequential``, the file's module classes;
- :mod:`~shapecheck.semantic.eval.autograd`, :mod:`~shapecheck.semantic.eval.devices`,
  :mod:`~shapecheck.semantic.eval.layout`: the grad, device and layout of results.

Facts are computed lazily and memoised per node for the statement being analysed: the
interpreter calls :meth:`Evaluator.forget` before each statement.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic import shape_ops as O
# the modules of the evaluator register their handlers when imported
from shapecheck.semantic.eval import calls, elementwise, expressions, layout  # noqa: F401
from shapecheck.semantic.eval import factories, reductions, shape_methods, tensor_methods  # noqa: F401
from shapecheck.semantic.eval import dict_literals  # noqa: F401
from shapecheck.semantic.eval.factories import factory_sizes
from shapecheck.semantic.eval.registry import EXPRESSIONS
from shapecheck.semantic.eval.shape_methods import view_target, view_verdict
from shapecheck.semantic.facts import UNKNOWN, Fact
from shapecheck.semantic.model import SemanticModel
from shapecheck.semantic.no_gradient import settle as settle_no_gradient
from shapecheck.semantic.syntax import dotted_name
from shapecheck.shapes import Dim

__all__ = ["Evaluator", "dotted_name"]

#: what an inference gap may raise: the expression's value is unknown, the analysis goes on
INFERENCE_GAPS = (RecursionError, ArithmeticError, LookupError, TypeError, ValueError, AttributeError)


class Evaluator:
    """Computes the facts of expressions against a :class:`SemanticModel`."""

    def __init__(self, model: SemanticModel) -> None:
        self.model = model
        #: id(node) -> fact, for the statement being analysed
        self.memo: dict[int, Fact] = {}
        #: drop the memoised facts: the bindings are about to change
        self.forget = self.memo.clear

    def fact(self, expr: cst.CSTNode) -> Fact:
        """The facts of ``expr`` at the current point of the analysis."""
        key = id(expr)
        f = self.memo.get(key)
        if f is None:
            handler = EXPRESSIONS.get(type(expr))
            if handler is None:
                f = UNKNOWN
            else:
                try:
                    f = handler(self, expr)
                except INFERENCE_GAPS as exc:
                    # an inference gap must never stop the analysis: the value is unknown
                    self.model.infer_errors.append(exc)
                    f = UNKNOWN
                f = settle_no_gradient(self, expr, O.without_impossible_sizes(f))
            self.memo[key] = f
        return f

    def qualname(self, expr: cst.CSTNode) -> Optional[str]:
        """The import-resolved dotted name of ``expr``."""
        return self.model.imports.resolve(expr)

    def view_target(self, call: cst.Call) -> Optional[list[Dim]]:
        """The sizes asked of ``x.view(...)``/``x.reshape(...)`` (see
        :func:`~shapecheck.semantic.eval.shape_methods.view_target`)."""
        return view_target(self, call)

    def view_verdict(self, call: cst.Call) -> Optional[tuple[Fact, list[Dim], Optional[bool]]]:
        """Whether ``x.view(...)`` is proven to fail or to work (see
        :func:`~shapecheck.semantic.eval.shape_methods.view_verdict`)."""
        return view_verdict(self, call)

    def factory_sizes(self, call: cst.Call) -> Optional[tuple[str, list[Dim]]]:
        """The sizes a factory call asks for, as written (see
        :func:`~shapecheck.semantic.eval.factories.factory_sizes`)."""
        return factory_sizes(self, call)
