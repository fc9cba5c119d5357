"""The error classes: builtin bases, one-line reasons, renderings, pickling."""

from __future__ import annotations

import pickle

import pytest

from shapecheck.errors import (
    BroadcastError,
    DeviceMismatchError,
    DimStringError,
    DtypeMismatchError,
    EinsumOperandCountError,
    EinsumShapeError,
    EinsumSyntaxError,
    ShapeCheckError,
    SignatureShapeError,
    caret_line,
    quote_spec,
    visible,
)


def test_bases_match_what_torch_raises():
    assert issubclass(EinsumSyntaxError, ValueError)
    assert issubclass(EinsumOperandCountError, EinsumSyntaxError)
    assert issubclass(EinsumOperandCountError, RuntimeError)
    assert issubclass(EinsumShapeError, RuntimeError)
    assert issubclass(EinsumShapeError, ValueError)  # opt_einsum's path for 3+ operands
    assert issubclass(BroadcastError, RuntimeError)
    assert issubclass(DeviceMismatchError, RuntimeError)
    assert issubclass(DimStringError, ValueError)
    assert issubclass(SignatureShapeError, RuntimeError)
    assert issubclass(DtypeMismatchError, RuntimeError) and issubclass(DtypeMismatchError, TypeError)
    for cls in (EinsumSyntaxError, EinsumShapeError, BroadcastError, DeviceMismatchError, DimStringError,
                SignatureShapeError, DtypeMismatchError):
        assert issubclass(cls, ShapeCheckError)


def test_base_error_reason_and_rendering():
    err = ShapeCheckError("something is off")
    assert str(err) == "something is off" and err.reason == "something is off" and err.certain
    err = ShapeCheckError("one line\nsneaks a newline", "detail")
    assert err.reason == "one line\\nsneaks a newline"
    assert str(err) == "one line\\nsneaks a newline\ndetail"


def test_syntax_error_caret():
    err = EinsumSyntaxError('einsum "ij->ii": output index i appears more than once', "ij->ii", 5, "    hint")
    assert (err.spec, err.position) == ("ij->ii", 5)
    assert str(err) == (
        'einsum "ij->ii": output index i appears more than once\n'
        "    ij->ii\n"
        "         ^\n"
        "    hint"
    )
    no_position = EinsumSyntaxError("bad", "x", None)
    assert str(no_position) == "bad"


def test_caret_under_escaped_characters():
    assert visible("a\tb") == "a\\tb"
    assert caret_line("a\tb", 2) == "   ^"
    assert caret_line("a\tb", 1) == " ^^"
    assert caret_line("ab", 2) == "  ^"
    assert quote_spec("a\nb") == '"a\\nb"'


def test_operand_count_error_fields():
    err = EinsumOperandCountError("r", "ij,jk", 2, 1, 2, "    h")
    assert (err.expected, err.given, err.position) == (2, 1, 2)
    assert str(err) == "r\n    ij,jk\n      ^\n    h"


def test_shape_error_fields():
    err = EinsumShapeError("r", "ij,jk", "j", [0, 1], [3, 4], "table", certain=False)
    assert (err.index, err.operands, err.sizes, err.certain) == ("j", (0, 1), (3, 4), False)
    assert str(err) == "r\ntable"


def test_broadcast_error_fields():
    err = BroadcastError("r", [(2, 3), (2,)], -1, "table")
    assert (err.shapes, err.axis, err.table) == (((2, 3), (2,)), -1, "table")
    assert str(err) == "r\ntable"


def test_device_mismatch_rendering():
    err = DeviceMismatchError(
        "tensors on different devices: x on cuda:0, w on cpu", [("x", "cuda:0"), ("weight", "cpu")]
    )
    assert str(err) == (
        "tensors on different devices: x on cuda:0, w on cpu\n"
        "    x       on cuda:0\n"
        "    weight  on cpu"
    )
    assert str(DeviceMismatchError("plain")) == "plain"


def test_dim_string_error():
    err = DimStringError('dimension string "a,b": separate axes with spaces, not commas', "a,b", 1)
    assert str(err).splitlines()[1:] == ["    a,b", "     ^"]


@pytest.mark.parametrize(
    "err",
    [
        EinsumSyntaxError("r", "ij", 1, "h"),
        EinsumOperandCountError("r", "ij", 1, 2, 2),
        EinsumShapeError("r", "ij", "i", (0, 1), (2, 3), "t"),
        BroadcastError("r", [(2,), (3,)], -1, "t"),
        DeviceMismatchError("r", [("x", "cpu")]),
        SignatureShapeError("r", "bound dims"),
        DtypeMismatchError("r", "dtypes"),
    ],
)
def test_errors_pickle(err):
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err)
    assert str(back) == str(err)
    assert back.reason == err.reason


def test_runtime_classes_take_reason_and_rendering():
    err = SignatureShapeError("x: expected (b, 3), got (2, 4)", "    b = 2")
    err.argument = "x"
    assert str(err) == "x: expected (b, 3), got (2, 4)\n    b = 2"
    back = pickle.loads(pickle.dumps(err))
    assert back.argument == "x" and str(back) == str(err)
    assert str(DtypeMismatchError("mixed dtypes")) == "mixed dtypes"
