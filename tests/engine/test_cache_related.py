"""Cached diagnostics keep their related places, and a stored place of the wrong shape is a miss."""

from __future__ import annotations

from shapecheck.engine.cache import _row_schema, _valid_entry, Cache
from shapecheck.engine.diagnostics import Diagnostic, Related

DIGEST = "0" * 64


def _diagnostic() -> Diagnostic:
    place = Related(5, 9, 5, 43, "made non-contiguous here by `transpose(1, 2)`")
    return Diagnostic("a.py", 7, 12, 7, 31, "SC101", "view-on-non-contiguous", "error", "m", True,
                      related=(place,))


def test_put_then_get_gives_the_related_places_back(tmp_path):
    cache = Cache(str(tmp_path), ["SC101"])
    cache.put("a.py", DIGEST, [_diagnostic()])
    (got,) = cache.get("a.py", DIGEST)
    assert got == _diagnostic() and got.related == _diagnostic().related


def test_a_stored_place_of_the_wrong_shape_is_not_read():
    schema = _row_schema()
    cache = Cache("unused", ["SC101"])
    cache.usable = True
    cache.put("a.py", DIGEST, [_diagnostic()])
    row = cache.entries["a.py"][1][0]
    column = [name for name, *_ in schema].index("related")
    assert row[column] == [[5, 9, 5, 43, "made non-contiguous here by `transpose(1, 2)`", None]]
    for bad in ([[5, 9, 5, 43]], [[5, 9, 5, 43, "x"]], [[5, 9, 5, "43", "x", None]], [[5, 9, 5, -1, "x", None]],
                [[5, 9, 5, 43, None, None]], [[5, 9, 5, 43, "x", "3"]], [[5, 9, 5, 43, "x", 0]], "x", None):
        broken = list(row)
        broken[column] = bad
        assert not _valid_entry([DIGEST, [broken]], schema, frozenset({"SC101"}))
    assert _valid_entry([DIGEST, [row]], schema, frozenset({"SC101"}))
    in_cell = list(row)
    in_cell[column] = [[1, 5, 1, 10, "x", 3]]
    assert _valid_entry([DIGEST, [in_cell]], schema, frozenset({"SC101"}))


def test_a_place_in_another_cell_keeps_its_cell(tmp_path):
    place = Related(1, 5, 1, 10, "made non-contiguous here by `t()`", cell=3)
    finding = Diagnostic("nb.ipynb", 3, 5, 3, 15, "SC101", "view-on-non-contiguous", "error", "m", True,
                         related=(place,), cell=5)
    cache = Cache(str(tmp_path), ["SC101"])
    cache.put("nb.ipynb", DIGEST, [finding])
    (got,) = cache.get("nb.ipynb", DIGEST)
    assert got.related == (place,) and got.cell == 5
