"""The hover of an expression: the fact the analysis has for it where the walk reaches it."""

from __future__ import annotations

import textwrap

import libcst as cst

from shapecheck.engine.hover_facts import expression_at, hover_markdown

CODE = textwrap.dedent(
    """\
    import torch

    x = torch.randn(2, 3, 4, requires_grad=True)
    y = x.transpose(1, 2)
    z = y * 2
    n = 3

    def f(a):
        return a.t()
    """
)


def _hover(line: int, column: int):
    module = cst.parse_module(CODE)
    found = hover_markdown(module, line, column, CODE)
    return found[0] if found is not None else None


def test_transposed_tensor_shows_shape_layout_op_device_grad_dtype():
    assert _hover(4, 0) == (
        "**tensor** `y`\n\n"
        "- shape: `(2, 4, 3)`\n"
        "- layout: non-contiguous, made non-contiguous by `.transpose(1, 2)` (strides `(12, 1, 4)`)\n"
        "- device: cpu\n"
        "- grad: requires grad (not a leaf: computed from a tensor that requires grad)\n"
        "- dtype: float"
    )


def test_a_leaf_and_a_method_name_show_their_own_facts():
    leaf = _hover(4, 4)  # `x` in `x.transpose(1, 2)`
    assert leaf.startswith("**tensor** `x`\n\n- shape: `(2, 3, 4)`\n- layout: contiguous")
    assert "requires grad (a leaf" in leaf
    call = _hover(4, 8)  # `transpose`: the call's result
    assert call.startswith("**tensor** `x.transpose(1, 2)`\n\n- shape: `(2, 4, 3)`")


def test_elementwise_result_keeps_the_layout():
    assert "made non-contiguous by `.transpose(1, 2)`" in _hover(5, 6)


def test_nothing_when_nothing_is_known():
    assert _hover(6, 0) is None  # an int
    assert _hover(9, 11) is None  # a parameter of unknown kind
    assert _hover(1, 3) is None  # an import


def test_expression_at_moves_to_the_assigned_value():
    module = cst.parse_module(CODE)
    target = expression_at(module, 4, 0)
    assert module.code_for_node(target.node) == "x.transpose(1, 2)"
    assert module.code_for_node(target.pointed) == "y"
    assert target.span == (4, 0, 4, 1)
