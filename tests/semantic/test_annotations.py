"""Facts promised by annotations: jaxtyping parameters give symbolic shapes, annotated
functions of the file give their return shape at call sites."""

from __future__ import annotations

from semantic_probe import one, reveal

from shapecheck.shapes import format_shape


def test_jaxtyping_annotations_give_symbolic_shapes():
    code = """
    import torch
    from jaxtyping import Float, Int
    from torch import Tensor

    def f(x: Float[Tensor, "batch seq d"], y: Int[torch.Tensor, "*b 3"]):
        reveal(x)
        reveal(y)
        reveal(x.sum(-1))
    """
    (x, _), (y, _), (s, _) = reveal(code)
    assert format_shape(x.shape) == "(batch, seq, d)" and x.dtype_kind == "float"
    assert y.shape.rank is None and y.shape.trailing() == (3,) and y.dtype_kind == "int"
    assert format_shape(s.shape) == "(batch, seq)"


def test_annotated_function_return_is_used_at_call_sites():
    code = """
    import torch
    from jaxtyping import Float
    from torch import Tensor

    def pool(x: Float[Tensor, "b t c"]) -> Float[Tensor, "b c"]:
        return x.mean(1)

    reveal(pool(torch.zeros(2, 7, 3)))
    """
    assert format_shape(one(code).shape) == "(2, 3)"
