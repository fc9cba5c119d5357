"""Names resolve through the imports of the file (``import torch as T``, ``from torch import zeros``)."""

from __future__ import annotations

from semantic_probe import reveal

from shapecheck.shapes import format_shape


def test_names_resolve_through_imports():
    code = """
    import torch as T
    from torch import zeros
    import torch.nn.functional as F
    x = T.zeros(2, 3)
    y = zeros(4)
    reveal(F.relu(x))
    reveal(y)
    """
    (relu, _), (y, _) = reveal(code)
    assert format_shape(relu.shape) == "(2, 3)"
    assert format_shape(y.shape) == "(4,)"
