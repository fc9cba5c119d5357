"""fill_directly: the fast __init__ of Fact and Evidence builds what the dataclass one built."""

from __future__ import annotations

import dataclasses

import pytest

from shapecheck.semantic.evidence import Evidence
from shapecheck.semantic.facts import TENSOR, Fact
from shapecheck.semantic.frozen_init import fill_directly


def test_defaults_keywords_and_positions_fill_every_field():
    plain = Fact()
    assert [getattr(plain, f.name) for f in dataclasses.fields(Fact)] == [f.default for f in dataclasses.fields(Fact)]
    named = Fact(kind=TENSOR, value=3)
    assert (named.kind, named.value, named.shape, named.is_scalar_cpu) == (TENSOR, 3, None, False)
    assert Evidence(True, 2, 1) == Evidence(tensor=True, exact=2, front=1)
    assert Evidence(True, 2, 1).back == 0


def test_an_unknown_field_or_too_many_values_raise_type_error():
    with pytest.raises(TypeError, match="Fact has no field 'shpae'"):
        Fact(shpae=None)
    with pytest.raises(TypeError, match="Evidence takes at most 7 values, got 8"):
        Evidence(*range(8))
    with pytest.raises(TypeError, match="Fact has no field 'shpae'"):
        Fact().with_(shpae=None)


def test_instances_stay_frozen_and_evidence_compares_by_value():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Fact().kind = TENSOR  # type: ignore[misc]
    assert hash(Evidence(tensor=True)) == hash(Evidence(True))


def test_a_class_with_a_field_without_default_is_refused():
    @dataclasses.dataclass(frozen=True)
    class Needs:
        x: int

    with pytest.raises(TypeError, match="plain default"):
        fill_directly(Needs)
