"""Which dims are independent generic sizes (shapecheck.generic_dims), and the generic verdict of
broadcasting (shapecheck.broadcast.generic_mismatch), checked against torch with sizes that are
distinct primes (independent, at least 2)."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.broadcast import broadcast_shapes, generic_mismatch
from shapecheck.generic_dims import Part, broadcast_condition, equal_condition, independent, split_parts
from shapecheck.shapes import Generic, Measured, Shape, dim_floordiv, dim_mul, measured

READ = object()
B, T, C = (measured(n, READ) for n in "BTC")
OTHER = measured("S", object())  # a size of another tensor
CONFIG = Generic("self.n_head")  # an attribute: its relation to the sizes is unknown


def test_sizes_of_one_read_are_independent():
    assert independent(T, B) and independent(B, C)
    assert equal_condition(T, B) == "`T` equals `B`"
    assert broadcast_condition(T, B) == "`T` equals `B` or one of them is 1"


def test_a_product_against_one_of_its_factors_differs_unless_the_rest_is_1():
    bt = dim_mul(B, T)
    assert isinstance(bt, Measured) and independent(bt, B)
    assert equal_condition(bt, B) == "`T` is 1"
    assert broadcast_condition(B, bt) == "`T` is 1 or `B` is 1"
    btc = dim_mul(bt, C)
    assert equal_condition(B, btc) == "`C` and `T` are 1"


def test_a_quotient_by_a_config_value_keeps_its_read():
    hs = dim_floordiv(C, CONFIG)
    assert isinstance(hs, Measured) and not hs.pure
    assert independent(T, hs)
    assert equal_condition(T, hs) == "`T` equals `C//self.n_head`"


@pytest.mark.parametrize("a, b", [
    (C, Generic("d_model")),  # a config value may be the size read from x by construction
    (T, OTHER),  # two tensors may share a size
    (C, 3), (C, 1),  # an int may be the size the input always has
    (T, T), (T, None), (Generic("n"), Generic("m")),
    (dim_mul(B, T), dim_mul(B, Generic("k"))),  # T against k: a config value again
    (dim_mul(B, T), dim_mul(2, B)),  # equal when T is 2, a generic size
    (dim_floordiv(C, CONFIG), C),  # equal when n_head is 1: unknown
    (dim_mul(T, OTHER), T),  # two reads in one product
])
def test_sizes_whose_relation_is_unknown_are_not_independent(a, b):
    assert not independent(a, b) and not independent(b, a)


def test_measured_sizes_survive_views_and_pickling():
    bt = dim_mul(B, T)
    back = pickle.loads(pickle.dumps(Shape((bt, C))))
    assert independent(back.dims[0], back.dims[1])
    assert dim_floordiv(bt, T) == "B" and isinstance(dim_floordiv(bt, T), Measured)


def test_a_view_that_splits_the_last_dim_makes_its_config_values_parts():
    # k.view(B, T, self.n_head, C // self.n_head) of a (B, T, ?) tensor
    quotient = dim_floordiv(C, CONFIG)
    dims = split_parts(Shape((B, T, None)), [B, T, CONFIG, quotient, -1])
    assert dims == [B, T, CONFIG, quotient, -1] and isinstance(dims[2], Part) and dims[3] is quotient
    head = dims[2]
    assert independent(head, T) and independent(B, head)
    assert equal_condition(head, T) == "`self.n_head` equals `T`"
    assert broadcast_condition(T, head) == "`T` equals `self.n_head` or one of them is 1"
    # not against a size the view did not keep, another part, another read, itself or an int
    assert not independent(head, C) and not independent(head, quotient) and not independent(head, OTHER)
    assert not independent(head, head) and not independent(head, 4)
    parts = split_parts(Shape((B, T, None)), [B, T, 3, CONFIG, Generic("self.head_dim")])
    assert not independent(parts[3], parts[4])
    back = pickle.loads(pickle.dumps(Shape(tuple(dims))))
    assert isinstance(back.dims[2], Part) and independent(back.dims[2], back.dims[1])


@pytest.mark.parametrize("source, target", [
    (Shape((B, T, None)), [B, T, CONFIG]),  # no split: the layer may mix as many tokens as T
    (Shape((B, T, None)), [T, B, CONFIG, -1]),  # the leading sizes moved
    (Shape((B, OTHER, None)), [B, OTHER, CONFIG, -1]),  # sizes of two reads
    (Shape((Generic("b"), T, None)), [Generic("b"), T, CONFIG, -1]),  # a size that was not read
    (Shape((B, T, None), 2), [B, T, CONFIG, -1]),  # rank unknown
    (None, [B, T, CONFIG, -1]),
])
def test_other_views_make_no_parts(source, target):
    assert not any(isinstance(d, Part) for d in split_parts(source, target))


def test_generic_broadcast_verdict_names_the_columns_and_the_exception():
    verdict = generic_mismatch(Shape((B, T)), Shape((B,)))
    assert verdict is not None
    assert verdict.columns == ((-1, "T", "B", 0, 1),)
    assert verdict.condition == "`T` equals `B` or one of them is 1"
    assert "dim -1 is T in shape 0 but B in shape 1" in verdict.reason
    two = generic_mismatch(Shape((B, T)), Shape((T, B)))
    assert two is not None and two.condition == "`B` equals `T` or one of them is 1"


@pytest.mark.parametrize("shapes", [
    ((B, T), (B, 1)), ((B, T), (T,)), ((B, T, C), (C,)), ((B, T), (OTHER,)), ((B, C), (Generic("d"),)),
    ((B, T), (None,)), ((B, T), (3,)), ((B, T), ()),
])
def test_generic_broadcast_verdict_is_silent_when_the_shapes_may_fit(shapes):
    assert generic_mismatch(*[Shape(s) for s in shapes]) is None


def test_exact_broadcast_still_takes_generic_sizes_to_fit():
    # the runtime and the exact verdict keep their behaviour: only generic_mismatch speaks
    assert broadcast_shapes(Shape((B, T)), Shape((B,))).dims == (B, None)


PRIMES = {"B": 2, "T": 3, "C": 5}
_dim = st.sampled_from(["B", "T", "C", 1])


@settings(max_examples=200, deadline=None)
@given(st.lists(_dim, max_size=3), st.lists(_dim, max_size=3))
def test_generic_verdict_against_torch(a, b):
    torch = pytest.importorskip("torch")
    sym = {n: measured(n, READ) for n in PRIMES}
    sa = Shape(tuple(sym[d] if isinstance(d, str) else d for d in a))
    sb = Shape(tuple(sym[d] if isinstance(d, str) else d for d in b))
    verdict = generic_mismatch(sa, sb)

    def fits(sizes):
        try:
            torch.broadcast_shapes(tuple(sizes.get(d, d) for d in a), tuple(sizes.get(d, d) for d in b))
        except RuntimeError:
            return False
        return True

    if verdict is None:
        return
    assert not fits(PRIMES)  # a mismatch for generic sizes: torch raises with distinct primes
    # the exception it names makes it pass: one symbol of each clause set to 1, or two made equal
    if verdict.condition.count("`") == 4 and "equals" in verdict.condition and "and (" not in verdict.condition:
        x, y = verdict.condition.split("`")[1], verdict.condition.split("`")[3]
        assert fits({**PRIMES, x: PRIMES[y]})
        assert fits({**PRIMES, x: 1}) and fits({**PRIMES, y: 1})
    assert fits(dict.fromkeys(PRIMES, 1))
