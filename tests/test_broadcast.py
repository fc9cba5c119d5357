"""Broadcasting over ints, symbols and unknowns, checked against torch.broadcast_shapes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.broadcast import InvalidShapeError, broadcast_shapes, broadcast_table, combine, Mismatch
from shapecheck.errors import BroadcastError, ShapeCheckError
from shapecheck.shapes import Shape

try:
    import torch
except ImportError:  # the algebra works without torch; only the differential test needs it
    torch = None


def dims(*shapes):
    return broadcast_shapes(*shapes).dims


def test_ints_follow_numpy_rules():
    assert dims((2, 3), (3,)) == (2, 3)
    assert dims((8, 1, 6, 1), (7, 1, 5)) == (8, 7, 6, 5)
    assert dims() == ()
    assert dims((2, 3)) == (2, 3)
    assert dims((2, 3), ()) == (2, 3)
    assert dims(2, (3, 1)) == (3, 2)  # a bare int is a 1-d shape, as in torch
    assert dims([2, 3], [3]) == (2, 3)
    assert dims((0,), (1,)) == (0,)
    assert dims((1,), (0,)) == (0,)
    assert dims((True,), (2,)) == (2,)


def test_symbols():
    assert dims(("b", 1), (1, "c")) == ("b", "c")
    assert dims(("batch", 3), ("batch", 1)) == ("batch", 3)
    assert dims(("n",), (1,)) == ("n",)
    with pytest.raises(BroadcastError) as e:
        broadcast_shapes(("b",), ("c",))
    assert not e.value.certain
    with pytest.raises(BroadcastError) as e:
        broadcast_shapes(("b",), (3,))
    assert not e.value.certain


def test_unknowns_never_raise():
    assert dims((None, 3), (5, None)) == (5, 3)
    assert dims((None,), (1,)) == (None,)
    assert dims((None,), (None,)) == (None,)
    assert dims((None,), ("b",)) == ("b",)
    result = broadcast_shapes(Shape.unknown(), (2, 3))
    assert result == Shape((2, 3), rest_at=0)  # unknown dims are taken to fit
    result = broadcast_shapes(Shape((4,), rest_at=0), (2, 1))
    assert result == Shape((2, 4), rest_at=0)
    with pytest.raises(BroadcastError):
        broadcast_shapes(Shape((4,), rest_at=0), (3,))


def test_combine():
    assert combine(3, 3) == 3
    assert combine(1, "b") == "b"
    assert combine(None, 5) == 5
    assert combine(None, 1) is None
    with pytest.raises(Mismatch):
        combine(2, 3)


def test_message_two_shapes():
    with pytest.raises(BroadcastError) as e:
        broadcast_shapes((2, 3), (2,))
    err = e.value
    assert err.reason == "shapes (2, 3) and (2,) do not broadcast: dim -1 is 3 in shape 0 but 2 in shape 1"
    assert err.axis == -1
    assert err.shapes == (Shape((2, 3)), Shape((2,)))
    assert err.certain
    assert isinstance(err, RuntimeError)
    assert str(err) == (
        "shapes (2, 3) and (2,) do not broadcast: dim -1 is 3 in shape 0 but 2 in shape 1\n"
        "               dim  -2  -1\n"
        "    shape 0 (2, 3)   2   3   <\n"
        "    shape 1 (2,)         2   <\n"
        "                         ^\n"
        "    rule: align the shapes on the right; in each column the sizes must be equal,\n"
        "          or be 1 (a missing dim counts as 1)\n"
        "    here: 3 and 2 are different and neither is 1."
    )
    assert err.table == str(err).split("\n", 1)[1]


def test_message_three_shapes_names_the_shape_that_set_the_size():
    with pytest.raises(BroadcastError) as e:
        broadcast_shapes((8, 1, 6, 1), (7, 1, 5), (1, 8, 4, 5))
    err = e.value
    assert err.reason == (
        "shapes (8, 1, 6, 1), (7, 1, 5) and (1, 8, 4, 5) do not broadcast: dim -2 is 6 in shape 0 "
        "but 4 in shape 2"
    )
    assert err.axis == -2
    assert str(err).splitlines()[1:5] == [
        "                     dim  -4  -3  -2  -1",
        "    shape 0 (8, 1, 6, 1)   8   1   6   1   <",
        "    shape 1 (7, 1, 5)          7   1   5",
        "    shape 2 (1, 8, 4, 5)   1   8   4   5   <",
    ]
    assert str(err).splitlines()[5] == "                                   ^"


def test_message_after_a_one():
    with pytest.raises(BroadcastError) as e:
        broadcast_shapes((1,), (3,), (4,))
    assert e.value.reason == "shapes (1,), (3,) and (4,) do not broadcast: dim -1 is 3 in shape 1 but 4 in shape 2"


def test_message_symbolic():
    with pytest.raises(BroadcastError) as e:
        broadcast_shapes(("b", "c"), (3,))
    err = e.value
    assert err.reason == (
        "shapes (b, c) and (3,) do not broadcast: dim -1 is c in shape 0 but 3 in shape 1 (cannot prove equal)"
    )
    assert str(err).splitlines()[-1] == (
        "    here: c and 3 cannot be proven equal (different symbols, or a symbol and a size other than 1)."
    )


def test_message_invalid_shapes():
    with pytest.raises(InvalidShapeError) as e:
        broadcast_shapes((-1,), (2,))
    assert str(e.value) == "shape (-1,) has a negative size -1"
    assert isinstance(e.value, ValueError) and isinstance(e.value, ShapeCheckError)
    with pytest.raises(InvalidShapeError) as e:
        broadcast_shapes((2.0,))
    assert str(e.value) == "shape (2.0,) has a dim 2.0 that is not an int, a symbol or unknown"


def test_table_without_error():
    assert broadcast_table([(2, 3), ()], labels=["x (2, 3)", "y ()"]) == (
        "         dim  -2  -1\n"
        "    x (2, 3)   2   3\n"
        "    y ()"
    )
    assert broadcast_table([Shape((3,), rest_at=0), (4, 1)]) == (
        "                 dim   -2  -1\n"
        "    shape 0 (..., 3)  ...   3\n"
        "    shape 1 (4, 1)      4   1"
    )


# ---------------------------------------------------------------------------------------------
# differential test against torch.broadcast_shapes

shape_st = st.lists(st.sampled_from([1, 1, 2, 3, 0]), max_size=4).map(tuple)


@st.composite
def shape_lists(draw):
    """Lists of shapes that often broadcast and often fail by one dim."""
    base = draw(st.lists(st.sampled_from([0, 1, 2, 3]), max_size=4))
    shapes = []
    for _ in range(draw(st.integers(0, 4))):
        keep = draw(st.integers(0, len(base)))
        dims_ = list(base[len(base) - keep:])
        for i in range(len(dims_)):
            roll = draw(st.integers(0, 7))
            if roll == 0:
                dims_[i] = 1
            elif roll == 1:
                dims_[i] = draw(st.integers(0, 3))
        shapes.append(tuple(dims_))
    if draw(st.integers(0, 5)) == 0:
        shapes.append(draw(shape_st))
    return shapes


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@settings(max_examples=2000, deadline=None)
@given(shape_lists())
def test_differential_against_torch_broadcast_shapes(shapes):
    try:
        theirs = tuple(torch.broadcast_shapes(*shapes))
    except (RuntimeError, ValueError):
        theirs = None
    try:
        ours = broadcast_shapes(*shapes).dims
    except BroadcastError:
        ours = None
    assert ours == theirs, shapes


@st.composite
def blurred_lists(draw):
    shapes = draw(shape_lists())
    out = []
    for s in shapes:
        dims_ = [None if draw(st.integers(0, 3)) == 0 else d for d in s]
        if draw(st.integers(0, 4)) == 0:
            cut = draw(st.integers(0, len(dims_)))
            out.append((tuple(s), Shape(tuple(dims_[cut:]), rest_at=0)))
        else:
            out.append((tuple(s), Shape(tuple(dims_))))
    return out


@settings(max_examples=500, deadline=None)
@given(blurred_lists())
def test_unknown_dims_never_reject_a_valid_broadcast(pairs):
    """Soundness for the linter: hiding sizes of shapes that broadcast never raises, and every
    size still known in the result is the true one."""
    concrete = [c for c, _ in pairs]
    try:
        truth = broadcast_shapes(*concrete).dims
    except BroadcastError:
        return
    result = broadcast_shapes(*[b for _, b in pairs])
    tail = result.trailing()
    assert len(tail) <= len(truth)
    for got, want in zip(reversed(tail), reversed(truth)):
        assert got is None or got == want
