"""The cyclic garbage collector during a run: off, with the start-up objects frozen, collecting
when what it tracks has grown, and restored afterwards."""

from __future__ import annotations

import gc
import weakref

import pytest

from shapecheck.engine import runner
from shapecheck.engine.collector import RunCollector
from shapecheck.engine.config import Selectors, build_settings


class _Node:
    """An object that can sit in a reference cycle and be watched through a weak reference."""

    def __init__(self) -> None:
        self.other: object = None


def _cycle() -> weakref.ref:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


@pytest.fixture
def collector_enabled():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_off_and_frozen_during_the_run_then_restored(collector_enabled):
    before = gc.get_freeze_count()
    with RunCollector():
        assert not gc.isenabled()
        assert gc.get_freeze_count() > before
    assert gc.isenabled()
    assert gc.get_freeze_count() == before


def test_state_restored_when_the_run_raises(collector_enabled):
    with pytest.raises(RuntimeError), RunCollector():
        raise RuntimeError("a file broke the run")
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_disabled_collector_stays_disabled():
    was = gc.isenabled()
    gc.disable()
    try:
        with RunCollector():
            pass
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_a_cycle_waits_for_the_growth_threshold(collector_enabled):
    with RunCollector(growth=10_000) as collector:
        gc.collect()  # start counting from zero
        left = _cycle()
        collector.file_done()
        assert left() is not None and collector.collections == 0
        kept = [[] for _ in range(10_000)]  # tracked objects that stay alive
        collector.file_done()
        assert left() is None and collector.collections == 1
        del kept


def test_a_serial_run_leaves_the_collector_as_it_found_it(tmp_path, collector_enabled):
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text("import torch\nx = torch.zeros(2, 3)\ny = x.t().view(6)\n")
    outcome = runner.run([str(tmp_path)], build_settings(str(tmp_path), None, Selectors(select=["SC101"])),
                         jobs=1, use_cache=False)
    assert [(d.code, d.line) for d in outcome.diagnostics] == [("SC101", 3)] * 3
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
