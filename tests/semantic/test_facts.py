"""Facts: the words of each vocabulary are their text, devices named after a value, and the join
of two paths derived from the rule declared with each field."""

from __future__ import annotations

import dataclasses
import json
import sys
import types
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.semantic import facts
from shapecheck.semantic.facts import (
    BOOL, CONTIGUOUS, CPU, CUDA, DEVICE, FLOAT, INT, LEAF_REQUIRES_GRAD, MAYBE_CUDA, MODULE, MPS,
    NO_GRAD, NON_CONTIGUOUS, NON_LEAF, OPTIMIZER, SIZE, STR, TENSOR, TUPLE, UNKNOWN, Device,
    DtypeKind, Fact, Grad, KeptWith, Kind, Layout, ParamLoop, Reduction, SameDeviceAs, fresh, join,
)
from shapecheck.shapes import Shape

WORDS = [member for enum in (Kind, Layout, Device, Grad, DtypeKind) for member in enum]

#: the names consumers import, with the text each had when the vocabularies were plain strings
OLD_TEXT = {
    TENSOR: "tensor", MODULE: "module", DEVICE: "device", OPTIMIZER: "optimizer", TUPLE: "tuple",
    SIZE: "size", INT: "int", FLOAT: "float", STR: "str", BOOL: "bool",
    CONTIGUOUS: "contiguous", NON_CONTIGUOUS: "non-contiguous",
    CPU: "cpu", CUDA: "cuda", MPS: "mps", MAYBE_CUDA: "maybe-cuda",
    LEAF_REQUIRES_GRAD: "leaf-requiring-grad", NON_LEAF: "non-leaf", NO_GRAD: "no-grad",
}


# ------------------------------------------------------------------ words are their text
@pytest.mark.parametrize("word", WORDS, ids=str)
def test_a_word_compares_hashes_and_prints_as_its_text(word):
    text = word.value
    assert word == text and text == word and not word != text
    assert hash(word) == hash(text)
    assert word in {text} and text in {word} and {text: 1}[word] == 1
    assert str(word) == text and type(str(word)) is str
    assert f"{word}" == text and f"<{word:>12}>" == f"<{text:>12}>"
    assert "%s" % word == text and "on " + word == "on " + text
    assert repr(word) != repr(text)  # a debugger still shows which vocabulary it is


@pytest.mark.parametrize("word", WORDS, ids=str)
def test_a_word_serialises_to_json_as_its_text(word):
    assert json.dumps(word) == json.dumps(word.value)
    assert json.dumps({word: [word]}) == json.dumps({word.value: [word.value]})


def test_the_imported_names_are_the_enum_members_with_the_old_text():
    for name, text in OLD_TEXT.items():
        assert name == text and str(name) == text
    assert TENSOR is Kind.TENSOR and CPU is Device.CPU and NO_GRAD is Grad.NO_GRAD
    assert CONTIGUOUS is Layout.CONTIGUOUS


def test_a_message_names_a_fact_as_before():
    f = Fact(kind=TENSOR, device=CUDA, grad=NON_LEAF, layout=NON_CONTIGUOUS, dtype_kind=DtypeKind.INT)
    assert f"{f.kind} on {f.device}, {f.grad}, {f.layout}, {f.dtype_kind}" == \
        "tensor on cuda, non-leaf, non-contiguous, int"


def test_a_plain_string_still_reads_as_the_word():
    # producers not yet switched write the text: it must mean the same as the member
    assert Fact(kind="tensor").is_tensor
    assert Fact(grad="no-grad").requires_grad is False
    assert join(Fact(device="cuda"), Fact(device=CPU)).device is MAYBE_CUDA
    assert Fact(kind="tensor", device="cpu").same(Fact(kind=TENSOR, device=CPU))


def test_kind_and_dtype_kind_words_of_the_same_text_are_equal():
    assert Kind.FLOAT == DtypeKind.FLOAT and Kind.INT == DtypeKind.INT and Kind.BOOL == DtypeKind.BOOL


# ------------------------------------------------------------------ SameDeviceAs
def test_same_device_as_is_a_value_named_by_its_name():
    assert SameDeviceAs("x") == SameDeviceAs("x")
    assert hash(SameDeviceAs("x")) == hash(SameDeviceAs("x"))
    assert SameDeviceAs("x") != SameDeviceAs("self.w")
    assert SameDeviceAs("x") != "same-as:x"
    assert SameDeviceAs("cpu") != CPU
    assert len({SameDeviceAs("x"), SameDeviceAs("x"), CPU}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        SameDeviceAs("x").name = "y"  # type: ignore[misc]


def test_same_device_as_joins_only_with_itself():
    x = Fact(kind=TENSOR, device=SameDeviceAs("x"))
    assert join(x, Fact(kind=TENSOR, device=SameDeviceAs("x"), grad=NO_GRAD)).device == SameDeviceAs("x")
    assert join(x, Fact(kind=TENSOR, device=SameDeviceAs("y"))).device is None
    assert join(x, Fact(kind=TENSOR, device=CPU)).device is None
    assert join(Fact(device=CUDA), x).device is None


# ------------------------------------------------------------------ each field's join rule
@pytest.mark.parametrize("a, b, joined", [
    (CUDA, CPU, MAYBE_CUDA),
    (CPU, CUDA, MAYBE_CUDA),
    (MAYBE_CUDA, CPU, MAYBE_CUDA),
    (CUDA, MAYBE_CUDA, MAYBE_CUDA),
    (CUDA, CUDA, CUDA),
    (CUDA, MPS, None),
    (MPS, CPU, None),
    (CUDA, None, None),
    (None, None, None),
])
def test_devices_join(a, b, joined):
    out = join(Fact(kind=TENSOR, device=a), Fact(kind=TENSOR, device=b, grad=NO_GRAD)).device
    assert out == joined and (joined is None) == (out is None)


def test_fields_that_differ_become_unknown_and_equal_ones_stay():
    a = Fact(kind=TENSOR, shape=Shape.of((2, 3)), layout=CONTIGUOUS, grad=NO_GRAD, dtype_kind=DtypeKind.FLOAT)
    b = a.with_(shape=Shape.of((2, 4)), grad=NON_LEAF)
    out = join(a, b)
    assert out.kind is TENSOR and out.layout is CONTIGUOUS and out.dtype_kind is DtypeKind.FLOAT
    assert out.shape == Shape.of((2, None))  # the rank and the sizes both paths agree on
    assert out.grad is None


@pytest.mark.parametrize("a, b, joined", [
    (Shape.of((2, 3)), Shape.of((2, 3)), Shape.of((2, 3))),
    (Shape.of(("n", 3)), Shape.of(("n", 10)), Shape.of(("n", None))),
    (Shape.of((2, 3)), Shape.of((2, 3, 1)), None),
    (Shape.of((2, 3)), Shape((None,) * 2, rest_at=2), None),
    (Shape.of((2, 3)), None, None),
])
def test_shapes_join_to_the_rank_and_sizes_both_paths_say(a, b, joined):
    assert join(Fact(kind=TENSOR, shape=a), Fact(kind=TENSOR, shape=b, grad=NO_GRAD)).shape == joined


def test_strides_join_only_with_the_shape_they_were_computed_for():
    a = Fact(kind=TENSOR, shape=Shape.of((2, 3)), strides=(3, 1))
    assert join(a, a.with_(shape=Shape.of((4, 3)))).strides is None
    assert join(a, a.with_(strides=(1, 2))).strides is None
    assert join(a, a.with_(grad=NO_GRAD)).strides == (3, 1)


def test_constants_join_only_when_of_the_same_type():
    assert join(Fact(kind=INT, value=1), Fact(kind=INT, value=1, dim=1)).value == 1
    assert join(Fact(kind=INT, value=1), Fact(kind=BOOL, value=True)).value is None
    assert join(Fact(kind=INT, value=1), Fact(kind=FLOAT, value=1.0)).value is None


def test_the_0_dim_cpu_flag_holds_only_when_it_holds_on_both_paths():
    a = Fact(kind=TENSOR, is_scalar_cpu=True)
    assert join(a, Fact(kind=TENSOR, is_scalar_cpu=True, grad=NO_GRAD)).is_scalar_cpu is True
    assert join(a, Fact(kind=TENSOR)).is_scalar_cpu is False


def test_elements_join_one_by_one_when_the_lengths_agree():
    one, two = Fact(kind=INT, value=1), Fact(kind=INT, value=2)
    out = join(Fact(elems=(one, two)), Fact(elems=(one, Fact(kind=INT, value=3))))
    assert out.elems is not None and out.elems[0] is one
    assert out.elems[1].kind is INT and out.elems[1].value is None
    assert join(Fact(elems=(one,)), Fact(elems=(one, two))).elems is None


def test_the_maybe_pair_flag_holds_only_when_it_holds_on_both_paths():
    pair = Fact(elems=(Fact(kind=TENSOR), Fact(kind=TENSOR)), maybe_pair=True)
    assert join(pair, Fact(elems=pair.elems, maybe_pair=True, dim=1)).maybe_pair is True
    assert join(pair, Fact(elems=pair.elems)).maybe_pair is False


def test_moved_by_is_the_first_paths_text_while_the_perms_agree():
    a = Fact(kind=TENSOR, perm=(1, 0), moved_by=".T")
    b = Fact(kind=TENSOR, perm=(1, 0), moved_by=".transpose(0, 1)", grad=NO_GRAD)
    assert join(a, b).moved_by == ".T" and join(b, a).moved_by == ".transpose(0, 1)"
    assert join(a, b.with_(perm=(0, 1))).moved_by is None


def test_reductions_join_when_equal_and_same_compares_source_and_axes():
    src = Fact(kind=TENSOR)
    r1 = Reduction(src, "x", (1,), node="first call")
    r2 = Reduction(src, "y", (1,), node="second call")
    assert join(Fact(kind=TENSOR, reduction=r1), Fact(kind=TENSOR, reduction=r1, grad=NO_GRAD)).reduction is r1
    assert join(Fact(kind=TENSOR, reduction=r1), Fact(kind=TENSOR, reduction=r2, grad=NO_GRAD)).reduction is None
    assert Fact(reduction=r1).same(Fact(reduction=r2))  # the same tensor reduced over the same axes
    assert not Fact(reduction=r1).same(Fact(reduction=Reduction(Fact(kind=TENSOR), "x", (1,), "first call")))
    assert not Fact(reduction=r1).same(Fact(reduction=Reduction(src, "x", (0,), "first call")))


def test_equal_facts_join_to_the_first_one():
    a = Fact(kind=TENSOR, shape=Shape.of((2,)))
    b = Fact(kind=TENSOR, shape=Shape.of((2,)))
    assert a != b and a.same(b)  # == tells bindings apart; same() compares what they say
    assert join(a, b) is a and join(a, a) is a


def test_elements_are_the_same_only_when_they_are_the_same_bindings():
    one = Fact(kind=INT, value=1)
    assert Fact(elems=(one,)).same(Fact(elems=(one,)))
    assert not Fact(elems=(one,)).same(Fact(elems=(Fact(kind=INT, value=1),)))


# ------------------------------------------------------------------ join laws
_POOLS = {
    "kind": [TENSOR, INT, MODULE, "tensor"],
    "shape": [Shape.of((2, 3)), Shape.of((2, 4)), Shape.unknown()],
    "layout": [CONTIGUOUS, NON_CONTIGUOUS],
    "strides": [(3, 1), (1, 2)],
    "perm": [(0, 1), (1, 0)],
    "moved_by": [".T", ".permute(1, 0)"],
    "device": [CPU, CUDA, MPS, MAYBE_CUDA, SameDeviceAs("x"), SameDeviceAs("y"), "cuda"],
    "grad": [LEAF_REQUIRES_GRAD, NON_LEAF, NO_GRAD],
    "dtype_kind": list(DtypeKind),
    "value": [1, 1.0, True, "cuda", (1, 2), float("nan")],
    "dim": [2, "n"],
    "qual": ["torch.nn.Linear", "Net"],
    "features": [(3, 2)],
    "params": [(), ("weight",)],
    "trainable": [True, False],
    "is_scalar_cpu": [True],
    "maybe_pair": [True],
    "no_gradient_from": ["`torch.argmax`", "a comparison"],
    "parameter_loop": list(ParamLoop),
    "placed_by": ["`Net` is moved to CUDA at line 9"],
    "unreduced": ['nn.MSELoss(reduction="none")', "nn.L1Loss(reduce=False)"],
    "updates": [frozenset({"model"}), frozenset({"G", "D"})],
}
_SHARED = [Fact(kind=INT, value=2), Fact(kind=TENSOR)]
_SOURCE = Fact(kind=TENSOR)
_REDUCTIONS = [Reduction(_SOURCE, "x", (1,), "a"), Reduction(_SOURCE, "x", (0,), "b")]


def _facts(elems) -> st.SearchStrategy[Fact]:
    fields = {name: st.sampled_from(pool) for name, pool in _POOLS.items()}
    fields["reduction"] = st.sampled_from(_REDUCTIONS)
    if elems is not None:
        fields["elems"] = st.lists(st.one_of(elems, st.sampled_from(_SHARED)), min_size=1, max_size=2).map(tuple)
        fields["mapped"] = st.lists(st.one_of(elems, st.sampled_from(_SHARED)), min_size=0, max_size=1).map(tuple)
        fields["layers"] = st.lists(st.one_of(elems, st.sampled_from(_SHARED)), min_size=1, max_size=2).map(tuple)
    return st.fixed_dictionaries({}, optional=fields).map(lambda kw: Fact(**kw))


FACTS = st.recursive(_facts(None), _facts, max_leaves=4)
#: moved_by is message text tied to perm: the first path's text wins, so the laws hold without it
_LAW_FIELDS = [f.name for f in dataclasses.fields(Fact) if f.name != "moved_by"]


def _said(f: Fact) -> tuple:
    """What ``f`` says, elements included: for comparing facts built separately."""
    return tuple(
        tuple(_said(e) for e in getattr(f, name)) if name in ("elems", "mapped", "layers")
        and getattr(f, name) is not None
        else getattr(f, name)
        for name in _LAW_FIELDS
    )


def test_the_generated_facts_cover_every_field():
    assert set(_POOLS) | {"reduction", "elems", "mapped", "layers"} == {f.name for f in dataclasses.fields(Fact)}


@settings(max_examples=300, deadline=None)
@given(FACTS, FACTS)
def test_join_is_commutative(a, b):
    assert _said(join(a, b)) == _said(join(b, a))


@settings(max_examples=200, deadline=None)
@given(FACTS)
def test_join_is_idempotent(a):
    assert join(a, a) is a
    copy = a.with_()
    assert join(a, copy) is a and _said(join(copy, a)) == _said(a)


@settings(max_examples=200, deadline=None)
@given(FACTS)
def test_unknown_absorbs(a):
    assert _said(join(a, UNKNOWN)) == _said(UNKNOWN)
    assert _said(join(fresh(), a)) == _said(UNKNOWN)


@settings(max_examples=300, deadline=None)
@given(FACTS, FACTS)
def test_join_says_nothing_that_one_path_does_not(a, b):
    out = join(a, b)
    for f in dataclasses.fields(Fact):
        if f.metadata["join"] is facts.equal:
            mine = getattr(out, f.name)
            assert mine is None or (mine == getattr(a, f.name) and mine == getattr(b, f.name)), f.name


# ------------------------------------------------------------------ one declaration per field
def test_every_field_declares_its_join_rule_and_what_same_compares():
    for f in dataclasses.fields(Fact):
        rule = f.metadata.get("join")
        assert callable(rule) or isinstance(rule, KeptWith), f.name
        assert "same" in f.metadata, f.name
        if isinstance(rule, KeptWith):
            assert rule.field_name in {g.name for g in dataclasses.fields(Fact)}


def _facts_module_with(line_after_maybe_pair: str) -> types.ModuleType:
    """facts.py with one line added after the last field: what a contributor's edit does."""
    source = Path(facts.__file__).read_text(encoding="utf-8")
    anchor = "    maybe_pair: bool = _fact(both, default=False)\n"
    assert anchor in source
    name = "shapecheck.semantic._facts_with_a_new_field"
    module = types.ModuleType(name)
    module.__file__ = facts.__file__
    sys.modules[name] = module  # dataclasses looks the module up while building the class
    try:
        exec(compile(source.replace(anchor, anchor + line_after_maybe_pair), facts.__file__, "exec"),
             module.__dict__)
    finally:
        del sys.modules[name]
    return module


def test_a_new_field_is_one_line():
    m = _facts_module_with("    extra: Optional[int] = _fact(equal)\n")
    a = m.Fact(kind=m.TENSOR, extra=1)
    assert m.join(a, m.Fact(kind=m.TENSOR, extra=1, grad=m.NO_GRAD)).extra == 1
    assert m.join(a, m.Fact(kind=m.TENSOR, extra=2)).extra is None
    assert not a.same(m.Fact(kind=m.TENSOR, extra=2)) and a.same(m.Fact(kind=m.TENSOR, extra=1))


def test_a_field_without_a_join_rule_is_refused_at_import():
    with pytest.raises(KeyError, match="join"):
        _facts_module_with("    extra: Optional[int] = None\n")


def test_a_noted_text_is_its_text_for_facts_and_keeps_its_node():
    import pickle

    import libcst as cst

    from shapecheck.semantic.facts import Fact, Noted, join

    first, second = cst.Name("a"), cst.Name("b")
    a = Fact(placed_by=Noted("`M` is moved to CUDA at line 3", first))
    b = Fact(placed_by=Noted("`M` is moved to CUDA at line 3", second))
    assert a.same(b) and a.placed_by == "`M` is moved to CUDA at line 3" and hash(a.placed_by) == hash(b.placed_by)
    assert join(a, b).placed_by.node is first  # the first path's node
    assert join(a, Fact(placed_by="elsewhere")).placed_by is None
    copied = pickle.loads(pickle.dumps(a.placed_by))
    assert copied == a.placed_by and type(copied) is str
