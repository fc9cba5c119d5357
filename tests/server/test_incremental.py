"""Re-parsing and re-linting an edited document gives what a full parse and a full lint give."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapecheck.engine.config import Settings
from shapecheck.server.document_lint import lint_document, noqa_edit
from shapecheck.server.incremental_parse import parse_document

REPO = Path(__file__).resolve().parents[2]
#: real files: examples with findings of several rules, and a module of the linter itself
FILES = [
    REPO / "examples" / "sc101_view_on_non_contiguous_bad.py",
    REPO / "examples" / "sc603_item_in_loop_bad.py",
    REPO / "examples" / "sc201_reduction_without_keepdim_bad.py",
    REPO / "shapecheck" / "semantic" / "eval" / "layout.py",
]
PIECES = ["a", "x", "(", ")", ":", "=", ".", ",", "\n", "    ", "#", "'", '"', "\\", "1", " ", "def f():\n    "]


def _settings() -> Settings:
    from shapecheck.engine.config import registry_infos

    return Settings(rules=registry_infos(), layers=[])


edits = st.lists(
    st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 3), st.sampled_from(PIECES), st.integers(1, 30)),
    min_size=1, max_size=6,
)


def _apply(text: str, where: float, how: int, piece: str, width: int) -> str:
    at = int(where * len(text))
    if how == 0:
        return text[:at] + piece + text[at:]
    if how == 1:
        return text[:at] + text[at + 1:]
    if how == 2:
        return text[:at] + text[at + width:]
    return text[:at] + piece + text[at + width:]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FILES), edits)
def test_spliced_module_is_the_new_text_and_parses_like_a_full_parse(path: Path, changes):
    text = path.read_text()
    doc = parse_document(text)
    for change in changes:
        text = _apply(text, *change)
        try:
            full = cst.parse_module(text)
        except Exception:
            full = None
        try:
            doc = doc.edited(text)
        except Exception:
            assert full is None, "the edit parses as a whole, but its re-parsed part did not"
            doc = None
        if doc is None:
            return
        assert full is not None, "the re-parsed part parsed, but the whole text does not"
        assert doc.module.code == text
        assert [type(s) for s in doc.module.body] == [type(s) for s in full.body]
        for start, statement in zip(doc.starts, doc.module.body):
            code = doc.module.code_for_node(statement)
            last_without_newline = statement is doc.module.body[-1] and not doc.module.has_trailing_newline
            assert text[start:start + len(code)] == code or (last_without_newline and code.startswith(text[start:]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FILES[:3]), edits)
def test_incremental_lint_equals_a_full_lint(path: Path, changes):
    config = _settings()
    text = path.read_text()
    previous = lint_document(str(path), text, config).parsed
    for change in changes:
        text = _apply(text, *change)
        incremental = lint_document(str(path), text, config, previous)
        full = lint_document(str(path), text, config)
        assert incremental.diagnostics == full.diagnostics
        assert incremental.fixes == full.fixes
        previous = incremental.parsed if incremental.parsed is not None else previous


def test_a_sc101_finding_keeps_its_fix_after_an_unrelated_edit():
    path = FILES[0]
    text = path.read_text()
    config = _settings()
    first = lint_document(str(path), text, config)
    codes = [d.code for d in first.diagnostics]
    assert "SC101" in codes and first.fixes
    edited = "# a comment\n" + text if not text.startswith(("#", '"""')) else text + "\nz = 1\n"
    second = lint_document(str(path), edited, config, first.parsed)
    assert [d.code for d in second.diagnostics] == codes
    assert len(second.fixes) == len(first.fixes)


def test_noqa_edit_adds_or_extends():
    text = "a = 1\nb = 2  # noqa: SC101\nc = '''x\ny'''\n"
    assert noqa_edit(text, 1, "SC205") == (1, "a = 1  # noqa: SC205")
    assert noqa_edit(text, 2, "SC205") == (2, "b = 2  # noqa: SC101, SC205")
    assert noqa_edit(text, 3, "SC205") is None  # the line ends inside a string

