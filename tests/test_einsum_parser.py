"""The einsum grammar and shape rules, checked against torch.einsum.

The facts in the unit tests were probed on torch 2.13 (CPU); the differential tests at the end
feed thousands of generated specs and shapes, valid and broken, to torch and to shapecheck and
require the same verdict and the same output shape.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapecheck.einsum_order import ContractionPlan
from shapecheck.einsum_parser import ELLIPSIS, EinsumSpec, parse, parse_sublist
from shapecheck.errors import (
    EinsumOperandCountError,
    EinsumShapeError,
    EinsumSyntaxError,
    ShapeCheckError,
)
from shapecheck.shapes import Shape


def out(spec: str, *shapes, form: str = "letters"):
    """The output dims of ``spec`` on ``shapes`` (a tuple; Shape rest runs kept as Shape)."""
    result = parse(spec, form).output_shape(*shapes)
    return result.dims if result.rest_at is None else result


# ---------------------------------------------------------------------------------------------
# grammar facts (probed on torch 2.13)


def test_parse_explicit_and_implicit():
    s = parse("bij,bjk->bik")
    assert isinstance(s, EinsumSpec)
    assert s.inputs == (("b", "i", "j"), ("b", "j", "k"))
    assert s.output == ("b", "i", "k")
    assert s.explicit_output
    assert s.contracted == ("j",)
    assert s.text == "bij,bjk->bik"
    implicit = parse("ij,jk")
    assert implicit.output == ("i", "k") and not implicit.explicit_output


def test_implicit_output_is_ascii_order_uppercase_first():
    # torch: "Ba" on (2, 3) -> (2, 3); "aB" -> (3, 2); "zaZA" on (2,3,4,5) -> (5, 4, 3, 2)
    assert parse("Ba").output == ("B", "a")
    assert parse("aB").output == ("B", "a")
    assert parse("bA").output == ("A", "b")
    assert parse("zaZA").output == ("A", "Z", "a", "z")
    assert out("zaZA", (2, 3, 4, 5)) == (5, 4, 3, 2)


def test_implicit_output_puts_ellipsis_first_and_drops_repeated():
    assert parse("i...j").output == (ELLIPSIS, "i", "j")
    assert out("i...j", (2, 5, 3)) == (5, 2, 3)
    assert parse("ii").output == ()
    assert parse("iij,k").output == ("j", "k")
    assert parse("ab,ba").output == ()


def test_spaces_anywhere_but_inside_arrow_and_ellipsis():
    assert parse(" i j , j k -> i k ") == parse("ij,jk->ik")
    assert parse("a-> a").output == ("a",)
    assert parse("ij ->").output == ()
    for bad in ("a - > a", "a -> a".replace("->", "- >"), ". ..", ".. .", "i- >j"):
        with pytest.raises(EinsumSyntaxError):
            parse(bad, "letters")


def test_empty_terms_are_zero_d():
    assert parse("").inputs == ((),)
    assert out("", ()) == ()
    assert out(",->", (), ()) == ()
    assert out(",", (), ()) == ()
    assert out("i,", (2,), ()) == (2,)
    assert out("ij,->", (2, 3), ()) == ()
    assert out("->", ()) == ()


def test_ellipsis_rules():
    assert out("...", (2, 3)) == (2, 3)
    assert out("...->", (2, 3)) == ()
    assert out("...ij->...", (2, 3)) == ()
    assert out("i...j->...", (2, 5, 3)) == (5,)
    assert out("i...j->ij", (2, 5, 3)) == (2, 3)
    assert out("a...", (2,)) == (2,)
    assert out("...->...", ()) == ()
    # an output ellipsis is fine where no input has one: it covers no dims
    assert out("ij->...", (2, 3)) == ()
    # ellipsis dims broadcast right-aligned across operands
    assert out("...i,...i", (2, 3), (5, 1, 3)) == (5, 2)
    assert out("i...,i...->i", (2, 3), (2, 3)) == (2,)


def test_diagonal_and_broadcast_of_labelled_size_one():
    assert out("ii->i", (3, 3)) == (3,)
    assert out("ii", (3, 3)) == ()
    assert out("ij,jk->ik", (2, 3), (1, 4)) == (2, 4)
    assert out("ij,jk->ik", (2, 1), (3, 4)) == (2, 4)
    assert out("ii,i->i", (3, 3), (1,)) == (3,)
    assert out("i,i->i", (3,), (1,)) == (3,)
    assert out("ij,ik->jk", (1, 2), (3, 4)) == (2, 4)
    # size 0 and size 1 broadcast to 0
    assert out("i,i->i", (0,), (1,)) == (0,)
    assert out("i,i->i", (1,), (0,)) == (0,)


@pytest.mark.parametrize(
    "spec, shapes",
    [
        ("ii", [(3, 4)]),
        ("iij->j", [(1, 3, 4)]),  # a 1 does not broadcast on a diagonal
        ("ij,jk->ik", [(2, 3), (4, 4)]),
        ("...i,...i->...", [(2, 3), (4, 3)]),
        ("ij", [(3,)]),
        ("ij", [(3, 4, 5)]),
        ("...a", [()]),
        ("i,i", [(0,), (2,)]),
    ],
)
def test_shape_rejections(spec, shapes):
    with pytest.raises(EinsumShapeError):
        parse(spec).output_shape(*shapes)


@pytest.mark.parametrize(
    "spec",
    ["....", "..", "...i...", "ij->ii", "ij->k", "i1", "ij-", "ij>", "ij->i->j", "ij->i,j", "i.j",
     "ij->j.", "ij->......", "a\tb", "é"],
)
def test_syntax_rejections(spec):
    with pytest.raises(EinsumSyntaxError):
        parse(spec, "letters")


def test_operand_count():
    with pytest.raises(EinsumOperandCountError) as e:
        parse("ij,jk->ik").output_shape((2, 3))
    assert (e.value.expected, e.value.given) == (2, 1)
    assert isinstance(e.value, ValueError) and isinstance(e.value, RuntimeError)
    with pytest.raises(EinsumOperandCountError):
        parse("ij").output_shape((2, 3), (3, 4))
    with pytest.raises(EinsumOperandCountError):
        parse("ij,jk,").output_shape((2, 3), (3, 4))
    with pytest.raises(EinsumOperandCountError):
        parse("").output_shape()


def test_parse_is_cached():
    assert parse("abc,cd->abd") is parse("abc,cd->abd")


def test_bad_spec_type_and_form():
    with pytest.raises(EinsumSyntaxError) as e:
        parse(3)  # type: ignore[arg-type]
    assert e.value.reason == "einsum spec must be a string, got int"
    with pytest.raises(ValueError):
        parse("ij", "wrong")


# ---------------------------------------------------------------------------------------------
# rendered messages: every error path


def test_message_size_mismatch():
    with pytest.raises(EinsumShapeError) as e:
        parse("bij,bjk->bik").output_shape((2, 3, 4), (2, 5, 6))
    err = e.value
    assert err.reason == 'einsum "bij,bjk->bik": index j is 4 in operand 0 but 5 in operand 1'
    assert (err.index, err.operands, err.sizes, err.certain) == ("j", (0, 1), (4, 5), True)
    assert err.position == 5  # the j of operand 1's term, for the linter's caret
    assert str(err) == (
        'einsum "bij,bjk->bik": index j is 4 in operand 0 but 5 in operand 1\n'
        "    operand 0: b i j\n"
        "               2 3 4\n"
        "                   ^\n"
        "    operand 1: b j k\n"
        "               2 5 6\n"
        "                 ^\n"
        "    index j must have one size in every term it appears in (a size of 1 broadcasts)"
    )


def test_message_size_mismatch_after_broadcast_names_the_operand_that_set_the_size():
    with pytest.raises(EinsumShapeError) as e:
        parse("i,i,i->i").output_shape((1,), (3,), (4,))
    assert e.value.reason == 'einsum "i,i,i->i": index i is 3 in operand 1 but 4 in operand 2'


def test_message_diagonal():
    with pytest.raises(EinsumShapeError) as e:
        parse("ii->i").output_shape((3, 4))
    err = e.value
    assert err.reason == "einsum \"ii->i\": index i is repeated in operand 0's term but its dims differ: 3 and 4"
    assert (err.index, err.operands, err.sizes) == ("i", (0, 0), (3, 4))
    assert str(err).splitlines()[1:] == [
        "    operand 0: i i",
        "               3 4",
        "               ^ ^",
        "    an index repeated inside one term takes the diagonal, so its dims must be equal"
        " (a 1 does not broadcast here)",
    ]


def test_message_rank():
    with pytest.raises(EinsumShapeError) as e:
        parse("bij,bjk->bik").output_shape((2, 3), (2, 3, 4))
    err = e.value
    assert err.reason == 'einsum "bij,bjk->bik": operand 0 has 2 dims (2, 3) but its term "bij" has 3 indices'
    assert (err.index, err.operands, err.sizes, err.position) == (None, (0,), (3, 2), 0)
    assert str(err).splitlines()[1:] == [
        '    operand 0: term "bij", shape (2, 3)',
        "    one index per dim: the term names more dims than the operand has",
    ]
    with pytest.raises(EinsumShapeError) as e:
        parse("ij").output_shape((3, 4, 5))
    assert str(e.value).splitlines()[-1] == (
        "    one index per dim; or start the term with '...' to let the ellipsis cover the extra leading dims"
    )
    with pytest.raises(EinsumShapeError) as e:
        parse("...ij").output_shape((2,))
    assert e.value.reason == (
        'einsum "...ij": operand 0 has 1 dim (2,) but its term "...ij" has 2 indices besides the ellipsis'
    )
    assert str(e.value).splitlines()[-1] == "    the term needs at least 2 dims; the ellipsis covers the rest"


def test_message_ellipsis_broadcast():
    with pytest.raises(EinsumShapeError) as e:
        parse("...i,...i->...").output_shape((2, 3), (1, 4, 3))
    err = e.value
    assert err.reason == (
        "einsum \"...i,...i->...\": the dims under '...' do not broadcast: dim -1 of the ellipsis is "
        "2 in operand 0 but 4 in operand 1"
    )
    assert (err.index, err.operands, err.sizes, err.position) == (ELLIPSIS, (0, 1), (2, 4), 5)
    assert str(err).splitlines()[1:] == [
        "                       dim  -2  -1",
        "    operand 0 '...' (2,)         2   <",
        "    operand 1 '...' (1, 4)   1   4   <",
        "                                 ^",
        "    the dims under '...' broadcast like shapes: aligned on the right, equal or 1",
    ]


def test_message_symbols_cannot_prove_equal():
    with pytest.raises(EinsumShapeError) as e:
        parse("bc,cd->bd").output_shape(("b", "c"), (3, 4))
    err = e.value
    assert err.reason == 'einsum "bc,cd->bd": index c is c in operand 0 but 3 in operand 1 (cannot prove equal)'
    assert not err.certain
    assert str(err).endswith(
        "index c must have one size in every term it appears in (a size of 1 broadcasts); "
        "c and 3 cannot be proven equal"
    )


@pytest.mark.parametrize(
    "spec, reason, caret, hint",
    [
        ("ij->ii", "output index i appears more than once in the output", "         ^",
         "    each output index appears once; to take a diagonal write it twice in an input (ii->i)"),
        ("ij->k", "output index k does not appear in any input", "        ^",
         "    every output index must come from some input term"),
        ("i1", "'1' at position 1 is not a valid index", "     ^", "    indices are single letters a-z and A-Z"),
        ("a - > a", "stray '-' at position 2", "      ^",
         "    the arrow is written '->', without spaces, and appears at most once"),
        ("ij->i,j", "',' after '->': the output is a single term", "         ^",
         "    list the output indices after '->' without commas"),
        ("i.j", "'.' at position 1 is not part of an ellipsis '...'", "     ^",
         "    an ellipsis is three dots with nothing between them"),
        ("ij->j.", "'.' at position 5 is not part of an ellipsis '...'", "         ^",
         "    an ellipsis is three dots with nothing between them"),
        ("...i...", "a second '...' in the term of operand 0", "        ^", "    each term may hold one ellipsis"),
        ("i->......", "a second '...' in the output", "          ^", "    the output may hold one ellipsis"),
        ("a\tb", "'\\t' at position 1 is not a valid index", "     ^^",
         "    only plain spaces may separate indices"),
    ],
)
def test_message_syntax(spec, reason, caret, hint):
    with pytest.raises(EinsumSyntaxError) as e:
        parse(spec, "letters")
    err = e.value
    assert "\n" not in err.reason
    assert err.reason.endswith(": " + reason)
    lines = str(err).splitlines()
    assert lines[2] == caret
    assert lines[3] == hint
    assert err.position == len(caret.strip(" ").rstrip("^")) + caret.index("^") - 4


def test_message_operand_count():
    with pytest.raises(EinsumOperandCountError) as e:
        parse("ij,jk->ik").output_shape((2, 3))
    assert str(e.value) == (
        'einsum "ij,jk->ik": the spec has 2 input terms but 1 operand was given\n'
        "    ij,jk->ik\n"
        "      ^\n"
        "    no operand for the term from here on; give one operand per comma-separated term"
    )
    with pytest.raises(EinsumOperandCountError) as e:
        parse("ij->ij").output_shape((2, 3), (3,), (4,))
    assert str(e.value) == (
        'einsum "ij->ij": the spec has 1 input term but 3 operands were given\n'
        "    ij->ij\n"
        "      ^\n"
        "    operands 1 to 2 have no term; give one operand per comma-separated term"
    )


def test_message_named_form_errors():
    cases = {
        "a b -> a -> b": ("a second '->'", "             ^^"),
        "b (h w) -> b": ("'(' at position 2: axis composition is not supported in einsum", "      ^"),
        "a 1x, b": ("'1x' at position 2 is not a valid axis name", "      ^^"),
        "a..., b": ("'a...' at position 0: write '...' as an axis of its own", "    ^^^^"),
        "a b, b c -> a d": ("output axis d does not appear in any input", "                  ^"),
        "a b, b c -> a a": ("output axis a appears more than once in the output", "                  ^"),
        "a ... ..., b": ("a second '...' in the term of operand 0", "          ^^^"),
        "a b -> a, b": ("',' after '->': the output is a single term", "            ^"),
        "a-b c": ("stray '-' at position 1", "     ^"),
    }
    for spec, (reason, caret) in cases.items():
        with pytest.raises(EinsumSyntaxError) as e:
            parse(spec, "named")
        assert e.value.reason == f'einsum "{spec}": {reason}', spec
        assert str(e.value).splitlines()[2] == caret, spec


def test_message_named_shape_error_uses_axis():
    with pytest.raises(EinsumShapeError) as e:
        parse("batch i d, batch j d -> batch i j").output_shape((2, 3, 4), (2, 5, 6))
    assert e.value.reason == 'einsum "batch i d, batch j d -> batch i j": axis d is 4 in operand 0 but 6 in operand 1'
    assert e.value.position == 19
    assert str(e.value).splitlines()[1:4] == [
        "    operand 0: batch i d",
        "               2     3 4",
        "                       ^",
    ]


def test_message_sublist_errors():
    with pytest.raises(EinsumSyntaxError) as e:
        parse_sublist(["x", [0, 52]])
    assert e.value.reason == "einsum(): subscript 52 of operand 0 is not within the valid range [0, 52)"
    with pytest.raises(EinsumSyntaxError) as e:
        parse_sublist(["x", ["a"]])
    assert e.value.reason == "einsum(): subscript 'a' of operand 0 is not an int or Ellipsis"
    with pytest.raises(EinsumSyntaxError) as e:
        parse_sublist(["x"])
    assert str(e.value) == (
        "einsum(): give at least one operand and its subscripts list\n"
        "    the sublist form is einsum(op0, [0, 1], op1, [1, 2], [0, 2])"
    )
    with pytest.raises(EinsumSyntaxError) as e:
        parse_sublist(["x", 3])
    assert e.value.reason == "einsum(): the subscripts of operand 0 must be a list, got int"


def test_reason_stays_on_one_line():
    with pytest.raises(EinsumSyntaxError) as e:
        parse("a\nb", "letters")
    assert e.value.reason == "einsum \"a\\nb\": '\\n' at position 1 is not a valid index"


# ---------------------------------------------------------------------------------------------
# forms


def test_named_form_equals_letters():
    named = parse("batch head i d, batch head j d -> batch head i j")
    assert named.form == "named"
    assert named.inputs == (("batch", "head", "i", "d"), ("batch", "head", "j", "d"))
    assert named.output_shape((2, 4, 5, 8), (2, 4, 6, 8)).dims == (2, 4, 5, 6)
    assert named.letters() == "bhid,bhjd->bhij"
    assert parse("b h i d, b h j d -> b h i j") == parse("bhid,bhjd->bhij")
    assert parse("i j") == parse("ij")  # auto: whitespace between two axes is the named form
    assert parse("... i, ... i") == parse("...i,...i")
    assert parse("batch ... d -> d").inputs == (("batch", ELLIPSIS, "d"),)
    assert parse("ij, jk -> ik").form == "letters"


def test_named_letters_maps_long_names_and_keeps_free_single_letters():
    s = parse("x batch, batch y -> x y", "named")
    eq = s.letters()
    assert eq == "xb,by->xy"
    assert parse("ab abc, abc b -> ab b", "named").letters() == "ac,cb->ab"
    many = " ".join(f"a{k}" for k in range(53))
    with pytest.raises(EinsumSyntaxError) as e:
        parse(many + " -> a0", "named").letters()
    assert "53 distinct axes; torch.einsum allows at most 52" in e.value.reason


def test_named_implicit_output_sorted_by_name():
    assert parse("zeta alpha, alpha beta", "named").output == ("beta", "zeta")


def test_sublist_form():
    spec, ops = parse_sublist(["A", [0, 1], "B", [1, 2], [0, 2]])
    assert ops == ["A", "B"]
    assert spec == parse("AB,BC->AC")
    assert spec.text == "AB,BC->AC"
    spec, ops = parse_sublist(["A", [Ellipsis, 27, 26]])
    assert spec.text == "...ba" and ops == ["A"]
    spec, _ = parse_sublist(["A", [0, 1], "B", [1, 2], [0, 2]])
    assert spec == parse("A B, B C -> A C")


# ---------------------------------------------------------------------------------------------
# symbols, unknowns, unknown ranks


def test_symbols_and_unknowns():
    assert out("bij,bjk->bik", ("B", 3, "n"), ("B", "n", 5)) == ("B", 3, 5)
    assert out("ij,jk->ik", (None, 3), (None, 4)) == (None, 4)
    assert out("i,i->i", (None,), (4,)) == (4,)
    assert out("i,i->i", (None,), (1,)) == (None,)
    assert out("i,i->i", ("n",), (1,)) == ("n",)
    with pytest.raises(EinsumShapeError) as e:
        parse("i,i->i").output_shape(("b",), ("c",))
    assert not e.value.certain


def test_unknown_rank_binds_known_ends_only():
    unknown = Shape.unknown()
    assert out("ij,jk->ik", unknown, (3, 4)) == (None, 4)
    tail = Shape((5,), rest_at=0)  # (..., 5)
    assert out("ij,jk->ik", tail, (5, 4)) == (None, 4)
    with pytest.raises(EinsumShapeError):
        parse("ij,jk->ik").output_shape(tail, (6, 4))
    assert out("...j,jk->...k", tail, (5, 4)) == Shape((4,), rest_at=0)
    with pytest.raises(EinsumShapeError):
        parse("i,i").output_shape(Shape((2, 3), rest_at=1), (2,))


# ---------------------------------------------------------------------------------------------
# contraction order


def test_contraction_order_chain():
    plan = parse("ab,bc,cd,de->ae").contraction_order((2, 3), (3, 40), (40, 5), (5, 6))
    assert isinstance(plan, ContractionPlan)
    assert plan.path == [(1, 2), (0, 2), (0, 1)]
    assert plan.flops == 1380
    assert [s.equation for s in plan.steps] == ["bc,cd->bd", "ab,bd->ad", "de,ad->ae"]
    assert plan.naive_flops == 2 * 3 * 40 * 5 * 6 * 4


def test_contraction_order_small_and_symbolic():
    assert parse("ij->i").contraction_order((2, 3)).path == [(0,)]
    assert parse("ij,jk").contraction_order((2, 3), (3, 4)).path == [(0, 1)]
    sym = parse("ab,bc,cd->ad").contraction_order(("n", 3), (3, "m"), ("m", 4))
    assert sym.flops is None and len(sym.path) == 2
    with pytest.raises(EinsumShapeError):
        parse("ab,bc,cd->ad").contraction_order((2, 3), (4, 5), (5, 6))


def test_contraction_order_greedy_beyond_four_and_ellipsis():
    shapes = [(2, 3), (3, 4), (4, 5), (5, 6), (6, 7), (7, 2)]
    plan = parse("ab,bc,cd,de,ef,fg->ag").contraction_order(*shapes)
    assert len(plan.path) == 5 and plan.flops > 0
    plan = parse("...ab,bc,...cd->...ad").contraction_order((9, 2, 3), (3, 4), (1, 4, 5))
    assert len(plan.path) == 2 and plan.flops is not None


def test_output_shape_is_fast():
    spec = parse("bij,bjk->bik")
    shapes = ((8, 3, 4), (8, 4, 5))
    spec.output_shape(*shapes)
    n = 20000
    t0 = time.perf_counter()
    for _ in range(n):
        spec.output_shape(*shapes)
    per_call = (time.perf_counter() - t0) / n
    assert per_call < 50e-6, per_call


# ---------------------------------------------------------------------------------------------
# differential tests against torch

try:
    import torch
except ImportError:  # the algebra works without torch; only the differential tests need it
    torch = None
try:
    import opt_einsum
except ImportError:
    opt_einsum = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

ALPHABET = "abcijAB"


@st.composite
def einsum_cases(draw):
    """A spec (valid, or one mutation away from valid) and operand shapes for it."""
    n_ops = draw(st.integers(1, 4))
    terms = []
    for _ in range(n_ops):
        labels = draw(st.lists(st.sampled_from(ALPHABET), max_size=4))
        if draw(st.integers(0, 3)) == 0:
            labels.insert(draw(st.integers(0, len(labels))), ELLIPSIS)
        terms.append(labels)
    used = sorted({x for t in terms for x in t if x != ELLIPSIS})
    explicit = draw(st.booleans())
    output: list = []
    if explicit:
        output = draw(st.lists(st.sampled_from(used), unique=True)) if used else []
        if draw(st.integers(0, 2)) == 0:
            output.insert(draw(st.integers(0, len(output))), ELLIPSIS)

    def spaced(labels):
        pieces = []
        for x in labels:
            pieces.append(x)
            if draw(st.integers(0, 7)) == 0:
                pieces.append(" ")
        return "".join(pieces)

    spec = ",".join(spaced(t) for t in terms)
    if explicit:
        spec += draw(st.sampled_from(["->", " ->", "-> ", " -> "])) + spaced(output)
    mutation = draw(st.integers(0, 9))
    if mutation == 0 and "," in spec:
        i = draw(st.sampled_from([k for k, c in enumerate(spec) if c == ","]))
        spec = spec[:i] + spec[i + 1:]
    elif mutation == 1 and used:
        spec = spec + ("" if explicit else "->") + draw(st.sampled_from(used)) * 2
    elif mutation == 2:
        i = draw(st.integers(0, len(spec)))
        spec = spec[:i] + draw(st.sampled_from(list("1-.>_ ,\tZ") + [".."])) + spec[i:]
    elif mutation == 3:
        i = draw(st.integers(0, len(spec)))
        spec = spec[:i] + "..." + spec[i:]
    elif mutation == 4 and "->" in spec:
        spec = spec.replace("->", draw(st.sampled_from(["- >", "->->", "-", ">"])), 1)
    elif mutation == 5 and explicit:
        spec += draw(st.sampled_from(["z", "q", "C"]))
    sizes = {x: draw(st.integers(0, 3)) for x in ALPHABET}
    shapes = []
    for t in terms:
        dims = []
        for x in t:
            if x == ELLIPSIS:
                dims.extend(draw(st.lists(st.integers(1, 3), max_size=2)))
            else:
                roll = draw(st.integers(0, 9))
                dims.append(1 if roll == 0 else draw(st.integers(0, 3)) if roll == 1 else sizes[x])
        if draw(st.integers(0, 11)) == 0:
            if dims and draw(st.booleans()):
                dims.pop(draw(st.integers(0, len(dims) - 1)))
            else:
                dims.insert(0, draw(st.integers(1, 3)))
        shapes.append(tuple(dims))
    count = draw(st.integers(0, 9))
    if mutation == 6 or count == 0:
        if draw(st.booleans()) and shapes:
            shapes.pop()
        else:
            shapes.append(tuple(draw(st.lists(st.integers(1, 3), max_size=2))))
    return spec, shapes


def torch_verdict(spec: str, shapes):
    try:
        result = torch.einsum(spec, *[torch.empty(s) for s in shapes])
    except Exception:  # torch raises RuntimeError, ValueError or (via opt_einsum) IndexError
        return None
    return tuple(result.shape)


def our_verdict(spec: str, shapes):
    try:
        result = parse(spec, "letters").output_shape(*shapes)
    except ShapeCheckError:
        return None
    return result.dims


@needs_torch
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(einsum_cases())
def test_differential_against_torch_einsum(case):
    spec, shapes = case
    theirs = torch_verdict(spec, shapes)
    ours = our_verdict(spec, shapes)
    assert ours == theirs, (spec, shapes)


@settings(max_examples=300, deadline=None)
@given(einsum_cases())
def test_named_form_agrees_with_letters(case):
    spec, shapes = case
    try:
        letters = parse(spec, "letters")
    except EinsumSyntaxError:
        return
    named_text = ", ".join(" ".join(t) for t in letters.inputs)
    if letters.explicit_output:
        named_text += " -> " + " ".join(letters.output)
    named = parse(named_text, "named")
    assert named == letters
    assert parse(named.letters(), "letters") == letters or named.letters() == letters.canonical()
    assert our_verdict(named.letters(), shapes) == our_verdict(spec, shapes)


@pytest.mark.skipif(opt_einsum is None, reason="opt_einsum is not installed")
@settings(max_examples=150, deadline=None)
@given(
    st.integers(3, 4).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.lists(st.sampled_from("abcde"), min_size=1, max_size=3, unique=True), min_size=n, max_size=n),
            st.dictionaries(st.sampled_from("abcde"), st.integers(1, 9), min_size=5, max_size=5),
            st.none() | st.lists(st.sampled_from("abcde"), unique=True, max_size=3),
        )
    )
)
def test_contraction_cost_counts_like_opt_einsum_and_is_optimal(case):
    n, terms, sizes, output = case
    spec = ",".join("".join(t) for t in terms)
    if output is not None:
        used = {x for t in terms for x in t}
        spec += "->" + "".join(x for x in output if x in used)
    shapes = [tuple(sizes[x] for x in t) for t in terms]
    plan = parse(spec).contraction_order(*shapes)
    _, best = opt_einsum.contract_path(spec, *shapes, shapes=True, optimize="optimal")
    _, ours = opt_einsum.contract_path(spec, *shapes, shapes=True, optimize=plan.path)
    assert plan.flops == ours.opt_cost  # FLOPs counted as opt_einsum counts them
    assert plan.flops <= best.opt_cost  # and no worse than its optimal search
    assert plan.naive_flops == best.naive_cost


def test_contraction_plan_is_cached():
    spec = parse("ab,bc,cd->ad")
    first = spec.contraction_order((2, 3), (3, 4), (4, 5))
    assert spec.contraction_order((2, 3), (3, 4), (4, 5)) is first
    assert spec.contraction_order([2, 3], [3, 4], [4, 5]).path == first.path  # lists: not cached


def test_spec_helpers():
    s = parse("...ij,jk->...ik")
    assert s.labels == ("i", "j", "k")
    assert s.contracted == ("j",)
    assert s.term_text(0) == "...ij" and s.output_text() == "...ik"
    assert s.canonical() == "...ij,jk->...ik"
    assert parse("ij,jk").canonical() == "ij,jk->ik"
    named = parse("batch ... d, d e")
    assert named.canonical() == "batch ... d, d e -> ... batch e"
    assert named.letters() == "b...d,de->...be"


def test_torch_size_takes_the_fast_path():
    class Size(tuple):
        pass

    assert parse("ij,jk->ik").output_shape(Size((2, 3)), Size((3, 4))).dims == (2, 4)


@needs_torch
@settings(max_examples=300, deadline=None)
@given(einsum_cases())
def test_sublist_form_agrees_with_torch(case):
    spec, shapes = case
    try:
        letters = parse(spec, "letters")
    except EinsumSyntaxError:
        return
    code = {c: (ord(c) - 65 if c.isupper() else ord(c) - 97 + 26) for c in letters.labels}
    ops = [torch.empty(s) for s in shapes]
    args = []
    for k, t in enumerate(letters.inputs):
        if k < len(ops):
            args += [ops[k], [Ellipsis if x == ELLIPSIS else code[x] for x in t]]
    if letters.explicit_output:
        args.append([Ellipsis if x == ELLIPSIS else code[x] for x in letters.output])
    try:
        theirs = tuple(torch.einsum(*args).shape)
    except Exception:  # RuntimeError or ValueError, as for the string form
        theirs = None
    try:
        sub, operands = parse_sublist(args)
        ours = sub.output_shape(*[tuple(o.shape) for o in operands]).dims
    except ShapeCheckError:
        ours = None
    assert ours == theirs


@st.composite
def blurred(draw, shape):
    """``shape`` with some dims made unknown, and sometimes a run of dims hidden in ``*rest``."""
    dims = [None if draw(st.integers(0, 3)) == 0 else d for d in shape]
    if draw(st.integers(0, 3)) == 0:
        start = draw(st.integers(0, len(dims)))
        stop = draw(st.integers(start, len(dims)))
        return Shape(tuple(dims[:start] + dims[stop:]), rest_at=start)
    return Shape(tuple(dims))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(einsum_cases(), st.data())
def test_unknown_dims_never_reject_what_torch_accepts(case, data):
    """Soundness for the linter: hiding sizes of a valid call never produces an error, and
    every size still known in the result is the true one."""
    spec, shapes = case
    truth = our_verdict(spec, shapes)
    if truth is None:
        return
    hidden = [data.draw(blurred(s)) for s in shapes]
    result = parse(spec, "letters").output_shape(*hidden)
    if result.rest_at is None:
        assert len(result.dims) == len(truth)
        for got, want in zip(result.dims, truth):
            assert got is None or got == want
    else:
        lead, tail = result.leading(), result.trailing()
        assert len(lead) + len(tail) <= len(truth)
        for got, want in zip(lead, truth):
            assert got is None or got == want
        for got, want in zip(reversed(tail), reversed(truth)):
            assert got is None or got == want


@needs_torch
@settings(max_examples=1000, deadline=None)
@given(
    st.lists(st.sampled_from(list("abAB.,->  1\t") + ["...", "->"]), max_size=10).map("".join),
    st.lists(st.lists(st.sampled_from([1, 2, 2, 3]), max_size=3).map(tuple), min_size=1, max_size=3),
)
def test_differential_random_text(spec, shapes):
    """Arbitrary strings over the grammar's characters: torch and shapecheck agree."""
    assert our_verdict(spec, shapes) == torch_verdict(spec, shapes), (spec, shapes)


def test_an_index_at_an_unknown_position_may_broadcast_a_known_one():
    """``i`` is 1 in operand 0, but in operand 1 it sits on a dim whose position the hidden rank
    leaves unknown: torch broadcasts the 1 to whatever that dim is (here 0), so ``i`` is unknown."""
    spec = parse("...aabi,i...,c,->abci", "letters")
    assert spec.output_shape((1, 1, 1, 1), (0,), (1,), ()).dims == (1, 1, 1, 0)
    hidden = spec.output_shape(Shape((None, None, None, 1)), Shape((None,), rest_at=0), Shape((None,)), Shape(()))
    assert hidden.dims == (None, None, None, None)
    known = spec.output_shape(Shape((None, None, None, 5)), Shape((None,), rest_at=0), Shape((None,)), Shape(()))
    assert known.dims[3] == 5
