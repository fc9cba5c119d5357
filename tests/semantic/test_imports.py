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


def test_torch_name_is_the_part_after_torch_of_the_resolved_name():
    import libcst as cst

    from shapecheck.semantic.imports import ImportTable, torch_name

    table = ImportTable()
    table.add_import(cst.parse_statement("import torch.nn.functional as F").body[0])
    table.add_import(cst.parse_statement("import numpy as np").body[0])
    # the table caches by node identity, as nodes of one module live as long as its walk: keep
    # every expression alive, so that no later one is allocated at a freed one's address
    relu, zeros, bare = (cst.parse_expression(e) for e in ("F.relu", "np.zeros", "relu"))
    assert torch_name(table.resolve, relu) == "nn.functional.relu"
    assert torch_name(table.resolve, zeros) is None
    assert torch_name(table.resolve, bare) is None
