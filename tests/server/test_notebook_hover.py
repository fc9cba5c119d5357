"""The hover of a notebook cell as the server computes it: the cells parsed as one program and
analysed once, with the same text as the hover of the same code in a Python file."""

from __future__ import annotations

import libcst as cst

from shapecheck.engine import checker
from shapecheck.engine.hover_facts import hover_markdown
from shapecheck.server.notebook_lint import hover_in_notebook

CELLS = [
    (1, "nb#cell0", "import torch\nx = torch.randn(2, 3, 4)\n"),
    (3, "nb#cell2", "y = x.transpose(1, 2)\n"),
    (4, "nb#cell3", "z = y.view(2, 12)\n"),
]


def test_a_cell_hover_is_one_analysis_with_the_text_of_the_python_file(monkeypatch):
    program = "".join(source for _, _, source in CELLS)
    expected = hover_markdown(cst.parse_module(program), 3, 0, program)
    walks: list[int] = []
    real = checker.Checker.run
    monkeypatch.setattr(checker.Checker, "run", lambda self: walks.append(1) or real(self))
    assert expected is not None and expected[0].startswith("**tensor** `y`\n\n- shape: `(2, 4, 3)`")
    walks.clear()
    assert hover_in_notebook(CELLS, "nb#cell2", 1, 0) == (expected[0], (1, 0, 1, 1))
    assert walks == [1]
    assert hover_in_notebook(CELLS, "nb#cell3", 1, 4)[0] == expected[0]  # `y` in `y.view`
    assert hover_in_notebook(CELLS, "nb#unknown", 1, 0) is None
    assert walks == [1, 1]


def test_hovers_between_two_edits_reuse_the_parse_of_the_cells(monkeypatch):
    from shapecheck.engine import notebooks

    parses: list[int] = []
    real = notebooks.parse_cells
    monkeypatch.setattr(notebooks, "parse_cells", lambda cells: parses.append(1) or real(cells))
    edited = [*CELLS[:2], (4, "nb#cell3", "z = y.reshape(2, 12)\n")]
    first = hover_in_notebook(edited, "nb#cell2", 1, 0)
    assert hover_in_notebook(edited, "nb#cell3", 1, 4) == (first[0], (1, 4, 1, 5))
    assert parses == [1]
    changed = [*edited[:2], (4, "nb#cell3", "z = y.reshape(2, 12)\nw = z * 2\n")]
    assert hover_in_notebook(changed, "nb#cell3", 2, 0)[0].startswith("**tensor** `w`\n\n- shape: `(2, 12)`")
    assert parses == [1, 1]
