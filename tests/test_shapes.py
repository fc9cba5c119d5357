"""Shapes and jaxtyping dimension strings."""

from __future__ import annotations

import pytest

from shapecheck.broadcast import broadcast_shapes
from shapecheck.errors import DimStringError
from shapecheck.shapes import (
    ANONYMOUS,
    FIXED,
    NAMED,
    SYMBOLIC,
    VARIADIC,
    DimItem,
    Generic,
    Shape,
    as_shape,
    dim_floordiv,
    dim_mul,
    dims_product,
    dims_to_shape,
    format_shape,
    is_generic,
    monomial,
    parse_dims,
)


def test_shape_basics():
    s = Shape.of([2, "b", None])
    assert s.rank == 3 and not s.is_fully_known and s.numel() is None
    assert Shape.of([2, 3]).numel() == 6
    assert Shape.unknown().rank is None
    assert format_shape((16, 8)) == "(16, 8)"
    assert format_shape((16,)) == "(16,)"
    assert format_shape(Shape((3,), rest_at=0, rest_name="batch")) == "(*batch, 3)"
    assert as_shape([1, 2]) == Shape((1, 2))


@pytest.mark.parametrize(
    "text, shape",
    [
        ("batch seq d", Shape(("batch", "seq", "d"))),
        ("*batch c", Shape(("c",), 0, "batch")),
        ("... c", Shape(("c",), 0)),
        ("c ...", Shape(("c",), 1)),
        ("#b c", Shape((None, "c"))),
        ("3 c", Shape((3, "c"))),
        ("_ c", Shape((None, "c"))),
        ("_name c", Shape((None, "c"))),
        ("c=3", Shape((3,))),
        ("rows=3 cols=4", Shape((3, 4))),
        ("dim+1 dim", Shape(("dim+1", "dim"))),
        ("", Shape(())),
        ("  a   b ", Shape(("a", "b"))),
        ("#*b c", Shape(("c",), 0)),
        ("*_ c", Shape(("c",), 0)),
        ("?x 3", Shape(("x", 3))),
        ("#3", Shape((None,))),
    ],
)
def test_dims_to_shape(text, shape):
    assert dims_to_shape(parse_dims(text)) == shape


def test_dim_items():
    items = parse_dims("#b *rest 3 _ c=4 n-1 ?t")
    assert [i.kind for i in items] == [NAMED, VARIADIC, FIXED, ANONYMOUS, FIXED, SYMBOLIC, NAMED]
    assert items[0] == DimItem(NAMED, "b", None, True, text="#b")
    assert items[1].name == "rest"
    assert items[2].size == 3 and items[4].size == 4
    assert items[5].expression == "n-1"
    assert items[6].treepath
    assert parse_dims("... c")[0] == DimItem(VARIADIC, None, text="...")


@pytest.mark.parametrize(
    "text, reason, caret",
    [
        ("a,b", "separate axes with spaces, not commas", "     ^"),
        ("a#", "'#' goes at the start of an axis (#b), not at the end", "    ^^"),
        ("*a *b", "only one variadic axis ('*name' or '...') is allowed", "       ^^"),
        ("... *b", "only one variadic axis ('*name' or '...') is allowed", "        ^^"),
        ("**a", "'*' used twice (**x)", "    ^^^"),
        ("##a", "'#' used twice (##x)", "    ^^^"),
        ("__a", "'_' used twice (__x)", "    ^^^"),
        ("??a", "'?' used twice (??x)", "    ^^^"),
        ("_4", "a fixed size cannot be anonymous (_4)", "    ^^"),
        ("*4", "a fixed size cannot cover several axes (*4)", "    ^^"),
        ("?4", "a fixed size cannot depend on the tree path (?4)", "    ^^"),
        ("#_", "an axis cannot be both anonymous and broadcastable (#_)", "    ^^"),
        ("a ...x", "'...' must be an axis on its own", "      ^^^^"),
        ("_a+b", "a symbolic axis cannot be anonymous (_foo+bar)", "    ^^^^"),
        ("*a+b", "a symbolic axis cannot cover several axes (*foo+bar)", "    ^^^^"),
        ("?a+b", "a symbolic axis cannot depend on the tree path (?foo+bar)", "    ^^^^"),
    ],
)
def test_dim_string_errors(text, reason, caret):
    with pytest.raises(DimStringError) as e:
        parse_dims(text)
    assert e.value.reason == f'dimension string "{text}": {reason}'
    assert str(e.value).splitlines()[1:] == ["    " + text, caret]


def test_dim_string_not_a_string():
    with pytest.raises(DimStringError) as e:
        parse_dims(3)  # type: ignore[arg-type]
    assert str(e.value) == "a dimension string must be a string, got int"


def test_function_call_symbolic_axis_allows_commas():
    assert parse_dims("min(a,b)")[0].kind == SYMBOLIC


try:
    import jaxtyping
except ImportError:  # pragma: no cover
    jaxtyping = None


@pytest.mark.skipif(jaxtyping is None, reason="jaxtyping is not installed")
@pytest.mark.parametrize(
    "text",
    ["batch seq d", "*batch c", "... c", "#b c", "3 c", "_ c", "c=3", "dim+1", "a,b", "a#", "*a *b", "**a",
     "_4", "*4", "#_", "a ...x", "_a+b", "*a+b", "?4", "?a b", "", "#*b c", "*_ c", "min(a,b)"],
)
def test_accepts_what_jaxtyping_accepts(text):
    np = pytest.importorskip("numpy")
    try:
        jaxtyping.Float[np.ndarray, text]
        theirs = True
    except ValueError:
        theirs = False
    try:
        parse_dims(text)
        ours = True
    except DimStringError:
        ours = False
    assert ours == theirs


@pytest.mark.skipif(jaxtyping is None, reason="jaxtyping is not installed")
def test_differential_against_jaxtyping():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    np = pytest.importorskip("numpy")
    pieces = ["a", "b", "3", "#", "*", "_", "?", "=", "...", "+1", ",", "(", ")", "x=", "1"]
    tokens = st.lists(st.sampled_from(pieces), min_size=1, max_size=4).map("".join)

    @settings(max_examples=400, deadline=None, database=None)
    @given(st.lists(tokens, max_size=3).map(" ".join))
    def check(text):
        try:
            jaxtyping.Float[np.ndarray, text]
            theirs = True
        except ValueError:
            theirs = False
        try:
            parse_dims(text)
            ours = True
        except DimStringError:
            ours = False
        assert ours == theirs, text

    check()


def test_products_and_quotients_of_dims():
    assert dim_mul("h", "w") == "h*w" and is_generic(dim_mul("h", "w"))
    assert dim_mul("w", "h") == dim_mul("h", "w")  # canonical: symbols sorted
    assert dim_mul(2, dim_mul("T", "B")) == "2*B*T"
    assert dim_mul(3, 4) == 12 and dim_mul("h", None) is None and dim_mul("h", 1) == "h"
    assert dim_floordiv(dim_mul("B", "T"), "T") == "B"
    assert dim_floordiv(dim_mul(4, "C"), 2) == "2*C"
    assert dim_floordiv("C", 4) == "C//4" and dim_floordiv(12, 4) == 3 and dim_floordiv("C", None) is None
    assert dim_mul(dim_floordiv("C", "g"), "B") == "B*(C//g)"
    assert monomial("B*(C//g)") == (1, ("B", "C//g"))
    assert monomial("dim+1") == (1, ("dim+1",))
    assert monomial(6) == (6, ()) and monomial(None) is None
    assert dims_product(["a", 3, "b"]) == "3*a*b" and dims_product([2, 3]) == 6
    assert not is_generic("batch") and is_generic(Generic("b"))
    assert format_shape(Shape((Generic("b"), dim_mul("h", "w")))) == "(b, h*w)"


def test_generic_sizes_broadcast_with_any_size():
    assert broadcast_shapes(Shape((Generic("n"),)), Shape(("m",))).dims == (None,)
    assert broadcast_shapes(Shape((Generic("n"),)), Shape((5,))).dims == (5,)
    assert broadcast_shapes(Shape((Generic("n"),)), Shape((1,))).dims == ("n",)
