"""``shapecheck einsum`` and ``shapecheck broadcast``: the functions cli.py wires up."""

from __future__ import annotations

import io

import pytest

from shapecheck.frontends.algebra_cli import ShapeTextError, broadcast_command, einsum_command, parse_shape_text
from shapecheck.shapes import Shape


def run(fn, *args):
    out = io.StringIO()
    rc = fn(*args, out)
    return rc, out.getvalue()


@pytest.mark.parametrize(
    "text, shape",
    [
        ("8x3x4", Shape((8, 3, 4))),
        ("8,3,4", Shape((8, 3, 4))),
        ("b,3,4", Shape(("b", 3, 4))),
        ("(8, 3, 4)", Shape((8, 3, 4))),
        ("[8,3]", Shape((8, 3))),
        ("8", Shape((8,))),
        ("8,", Shape((8,))),
        ("batch", Shape(("batch",))),
        ("()", Shape(())),
        ("scalar", Shape(())),
        ("?x3", Shape((None, 3))),
        ("...,3", Shape((3,), 0)),
        ("*batch,3", Shape((3,), 0, "batch")),
        ("0x2", Shape((0, 2))),
    ],
)
def test_shape_spelling(text, shape):
    assert parse_shape_text(text) == shape


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "'' is not a shape; write a 0-d shape as () or scalar"),
        ("8xq", "'8xq' is not a shape; 'x' separates plain sizes (8x3x4), write symbols with commas (b,3,4)"),
        ("8,-1", "'-1' in '8,-1' is not a size: use a non-negative int, a name, ? (unknown) or ..."),
        ("3.5", "'3.5' is not a size: use a non-negative int, a name, ? (unknown) or ..."),
        ("...,...", "'...,...' has more than one '...' or '*name'"),
        ("8,,3", "'' in '8,,3' is not a size: use a non-negative int, a name, ? (unknown) or ..."),
    ],
)
def test_bad_shape_text(text, message):
    with pytest.raises(ShapeTextError) as e:
        parse_shape_text(text)
    assert str(e.value) == message


def test_einsum_two_operands():
    rc, text = run(einsum_command, "bij,bjk->bik", ["8x3x4", "8,4,5"])
    assert rc == 0
    assert text == (
        "spec: bij,bjk->bik  (letters form)\n"
        "inputs:\n"
        "  operand 0: bij  (8, 3, 4)\n"
        "  operand 1: bjk  (8, 4, 5)\n"
        "output: bik  (explicit)\n"
        "contracted: j\n"
        "output shape: (8, 3, 5)\n"
    )


def test_einsum_spec_only():
    rc, text = run(einsum_command, "ij,jk", [])
    assert rc == 0
    assert text == (
        "spec: ij,jk  (letters form)\n"
        "inputs:\n"
        "  operand 0: ij\n"
        "  operand 1: jk\n"
        "output: ik  (implicit)\n"
        "contracted: j\n"
    )


def test_einsum_named_and_zero_d():
    rc, text = run(einsum_command, "batch i, batch i ->", ["b,3", "b,3"])
    assert rc == 0
    assert "output: (0-d)  (explicit)" in text
    assert "contracted: batch i" in text
    assert text.endswith("output shape: ()\n")
    rc, text = run(einsum_command, ",i->i", ["()", "4"])
    assert rc == 0 and "  operand 0: (0-d)  ()" in text


def test_einsum_contraction_order():
    rc, text = run(einsum_command, "ab,bc,cd,de->ae", ["2x3", "3x40", "40x5", "5x6"])
    assert rc == 0
    assert text.splitlines()[-5:] == [
        "contraction order:",
        "  1. operands 1 and 2: bc,cd->bd  FLOPs 1,200",
        "  2. operands 0 and 2: ab,bd->ad  FLOPs 60",
        "  3. operands 0 and 1: de,ad->ae  FLOPs 120",
        "total FLOPs: 1,380 (in one step: 28,800)",
    ]


def test_einsum_contraction_order_symbolic():
    rc, text = run(einsum_command, "ab,bc,cd->ad", ["n,3", "3,m", "m,4"])
    assert rc == 0
    assert "output shape: (n, 4)" in text
    assert text.splitlines()[-1] == (
        "total FLOPs: unknown (some sizes are symbols or unknown; order chosen as if they were 16)"
    )
    assert "FLOPs ?" in text


def test_einsum_bad_spec_is_exit_1_with_rendering():
    rc, text = run(einsum_command, "ij->ii", [])
    assert rc == 1
    assert text == (
        'einsum "ij->ii": output index i appears more than once in the output\n'
        "    ij->ii\n"
        "         ^\n"
        "    each output index appears once; to take a diagonal write it twice in an input (ii->i)\n"
    )


def test_einsum_shape_error_is_exit_1():
    rc, text = run(einsum_command, "ij,jk", ["2x3", "4x5"])
    assert rc == 1
    assert 'einsum "ij,jk": index j is 3 in operand 0 but 4 in operand 1' in text
    rc, text = run(einsum_command, "ij,jk", ["2x3"])
    assert rc == 1
    assert "the spec has 2 input terms but 1 operand was given" in text


def test_einsum_bad_shape_is_exit_2_one_line():
    rc, text = run(einsum_command, "ij", ["2xq"])
    assert rc == 2
    assert text == (
        "shapecheck: '2xq' is not a shape; 'x' separates plain sizes (8x3x4), write symbols with commas (b,3,4)\n"
    )


def test_broadcast_ok_prints_table_with_result():
    rc, text = run(broadcast_command, ["8x1x6x1", "7x1x5"])
    assert rc == 0
    assert text == (
        "                     dim  -4  -3  -2  -1\n"
        "    shape 0 (8, 1, 6, 1)   8   1   6   1\n"
        "    shape 1 (7, 1, 5)          7   1   5\n"
        "    result (8, 7, 6, 5)    8   7   6   5\n"
    )


def test_broadcast_failure_is_exit_1():
    rc, text = run(broadcast_command, ["2x3", "2"])
    assert rc == 1
    assert text.splitlines()[0] == (
        "shapes (2, 3) and (2,) do not broadcast: dim -1 is 3 in shape 0 but 2 in shape 1"
    )
    assert "    rule: align the shapes on the right" in text


def test_broadcast_bad_input_is_exit_2():
    rc, text = run(broadcast_command, [])
    assert rc == 2
    assert text == "shapecheck: give at least one shape, e.g. shapecheck broadcast 8x1x4 3x1\n"
    rc, text = run(broadcast_command, ["2x1", "x"])
    assert rc == 0  # 'x' alone is a symbol, a 1-d shape
    assert text.splitlines()[-1] == "    result (2, x)    2   x"
    rc, text = run(broadcast_command, ["2x3", "3-"])
    assert rc == 2 and text.count("\n") == 1
