"""The expression evaluator, by subject: each module computes the facts of one family of
expressions and registers its handlers (:mod:`~shapecheck.semantic.eval.registry`);
:class:`shapecheck.semantic.evaluator.Evaluator` composes them."""
