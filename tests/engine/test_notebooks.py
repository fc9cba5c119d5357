"""Notebooks in the engine: the program the code cells make, IPython lines, positions in cells,
fixes written back into the JSON text and nothing else."""

from __future__ import annotations

import json

import pytest

from shapecheck.engine import notebooks
from shapecheck.engine.notebook_json import NotebookError, read_notebook, replace_sources
from shapecheck.engine.notebook_program import build_program, python_lines
from shapecheck.rules.catalog import get_rule

SC101 = [get_rule("SC101")]
HEADER = "import torch\nx = torch.randn(4, 8)\n"


def notebook(*cells, indent=1, ensure_ascii=False, language="python", trailing_newline=True) -> str:
    """A notebook's JSON text, written the way nbformat writes it; each cell is ``(type,
    source)``; a list source is kept as a list."""
    raw = []
    for number, (kind, source) in enumerate(cells):
        cell = {"cell_type": kind, "id": f"cell-{number}", "metadata": {"tags": ["t"]}, "source": source}
        if kind == "code":
            cell["execution_count"] = number
            cell["outputs"] = [
                {"name": "stdout", "output_type": "stream", "text": ["héllo\n"]},
                {"data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure>"]},
                 "metadata": {}, "output_type": "display_data"},
            ]
        raw.append(cell)
    document = {
        "cells": raw,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"},
                     "language_info": {"name": language}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    text = json.dumps(document, indent=indent, sort_keys=True, ensure_ascii=ensure_ascii)
    return text + "\n" if trailing_newline else text


def codes(diagnostics):
    return [(d.code, d.cell, d.line, d.column) for d in diagnostics]


def test_facts_flow_from_cell_to_cell_and_positions_name_the_cell():
    text = notebook(
        ("markdown", "# A title"),
        ("code", ["import torch\n", "x = torch.randn(4, 8)"]),
        ("code", "y = x.t()\n"),
        ("markdown", "notes"),
        ("code", ["print(y)\n", "\n", "z = y.view(32)\n"]),
    )
    found = notebooks.lint_notebook(text, SC101, "nb.ipynb")
    assert codes(found) == [("SC101", 5, 3, 5)]
    assert found[0].end_line == 3 and found[0].end_column == 15


def test_ipython_lines_are_replaced_line_for_line():
    source = (
        "%matplotlib inline\nfiles = !ls\nobj?\n??obj\nfor i in range(3):\n    !echo {i}\n"
        "get_ipython().system(\n    'ls')\ns = '''\n%kept inside a string\n'''\ny = 1  # what?\n"
    )
    lines, replaced = python_lines(source)
    assert len(lines) == source.count("\n")
    assert sorted(replaced) == [0, 1, 2, 3, 5, 6, 7]
    assert lines[5] == "    pass  # <shapecheck: IPython line>" and lines[7] == ""
    assert lines[9] == "%kept inside a string" and lines[11] == "y = 1  # what?"
    compile("\n".join(lines), "<cell>", "exec")


@pytest.mark.parametrize("magic, kept", [("%%time", True), ("%%timeit -n 3", True), ("%%capture out", True),
                                         ("%%bash", False), ("%%writefile x.py", False)])
def test_cell_magics_keep_a_python_body_only(magic, kept):
    text = notebook(("code", HEADER + "y = x.t()"), ("code", f"{magic}\nz = y.view(32)\n"))
    found = notebooks.lint_notebook(text, SC101, "nb.ipynb")
    assert codes(found) == ([("SC101", 2, 2, 5)] if kept else [])


def test_a_cell_that_does_not_parse_is_sc000_at_its_line_and_the_others_are_linted():
    text = notebook(("code", HEADER + "y = x.t()"), ("code", "a = 1\ndef broken(:\n"), ("code", "z = y.view(32)"))
    found = notebooks.lint_notebook(text, SC101, "nb.ipynb")
    assert codes(found) == [("SC000", 2, 2, 12), ("SC101", 3, 1, 5)]


def test_a_cell_that_fails_only_at_its_end_is_the_one_left_out():
    """A ``def`` whose body is only comments fails at the end of its own cell (Jupyter compiles
    each cell alone), not at the next cell's first line: that cell stays, and the message counts
    lines in the failing cell."""
    text = notebook(("code", HEADER + "y = x.t()"), ("code", "# TODO\ndef run(path):\n    ## your code here\n"),
                    ("code", "z = y.view(32)\nrun('a')"))
    found = notebooks.lint_notebook(text, SC101, "nb.ipynb")
    assert codes(found) == [("SC000", 2, 3, 22), ("SC101", 3, 1, 5)]
    assert "after function definition on line 2" in found[0].message


def test_top_level_await_in_a_cell_is_not_a_syntax_error():
    text = notebook(("code", "import asyncio\nawait asyncio.sleep(0)"), ("code", HEADER + "y = x.t()\nz = y.view(32)"))
    assert codes(notebooks.lint_notebook(text, SC101, "nb.ipynb")) == [("SC101", 2, 4, 5)]


@pytest.mark.parametrize("text, message, position", [
    ('{"cells": [\n  {"cell_type": "code",}\n]}', "cannot parse the notebook: invalid JSON: Expecting property name "
     "enclosed in double quotes", (2, 24)),
    ("[1, 2]", "not a Jupyter notebook: the JSON has no `cells` list", (1, 1)),
    ('{"cells": [], "nbformat": 3}', "unsupported notebook format 3: shapecheck reads nbformat 4", (1, 1)),
    ('{"cells": [{"cell_type": "code", "source": 5}]}', "not a Jupyter notebook: the source of cell 1 is not text",
     (1, 1)),
])
def test_what_is_not_a_notebook_is_one_sc000_with_its_position(text, message, position):
    with pytest.raises(NotebookError) as caught:
        read_notebook(text)
    assert (caught.value.message, caught.value.line, caught.value.column) == (message, *position)
    [found] = notebooks.lint_notebook(text, SC101, "nb.ipynb")
    assert (found.code, found.message, found.line, found.column, found.cell) == ("SC000", message, *position, None)


def test_a_notebook_of_another_language_is_not_linted():
    text = notebook(("code", HEADER + "y = x.t().view(32)"), language="R")
    assert notebooks.lint_notebook(text, SC101, "nb.ipynb") == []


def test_noqa_applies_to_its_own_cell_line():
    text = notebook(("code", HEADER + "y = x.t()"), ("code", "a = y.view(32)  # noqa: SC101\nb = y.view(32)"))
    assert codes(notebooks.lint_notebook(text, SC101, "nb.ipynb")) == [("SC101", 2, 2, 5)]


@pytest.mark.parametrize("indent, ensure_ascii, trailing", [(1, False, True), (2, True, False), (4, False, True)])
def test_fix_changes_only_the_source_of_the_fixed_cell(indent, ensure_ascii, trailing):
    cells = (
        ("markdown", ["# Tïtle\n", "text"]),
        ("code", ["%matplotlib inline\n", "import torch\n", "x = torch.randn(4, 8)\n", "y = x.t()"]),
        ("code", ["!pip list\n", "z = y.view(32)  # héllo\n", "w = y.view(32)\n"]),
        ("code", "untouched = 1\n"),
    )
    text = notebook(*cells, indent=indent, ensure_ascii=ensure_ascii, trailing_newline=trailing)
    fixed, applied = notebooks.fix_notebook(text, SC101, "nb.ipynb")
    assert applied == 2
    expected = json.loads(text)
    expected["cells"][2]["source"] = ["!pip list\n", "z = y.reshape(32)  # héllo\n", "w = y.reshape(32)\n"]
    assert json.loads(fixed) == expected
    assert fixed == json.dumps(expected, indent=indent, sort_keys=True, ensure_ascii=ensure_ascii) + (
        "\n" if trailing else "")


def test_a_string_source_stays_a_string_and_an_unfixed_notebook_is_unchanged():
    text = notebook(("code", HEADER + "y = x.t()\nz = y.view(32)"))
    fixed, applied = notebooks.fix_notebook(text, SC101, "nb.ipynb")
    assert applied == 1 and json.loads(fixed)["cells"][0]["source"] == HEADER + "y = x.t()\nz = y.reshape(32)"
    clean = notebook(("code", HEADER + "y = x.t().reshape(32)"))
    assert notebooks.fix_notebook(clean, SC101, "nb.ipynb") == (clean, 0)


def test_replace_sources_keeps_the_layout_of_a_hand_written_file():
    text = '{"cells":[{"source":["a\\n","b"],"cell_type":"code"},{"source":[],"cell_type":"code"}],"x":1}'
    new = replace_sources(read_notebook(text), {1: "a\nc\n", 2: "d"})
    assert new == '{"cells":[{"source":["a\\n","c\\n"],"cell_type":"code"},{"source":["d"],"cell_type":"code"}],"x":1}'
    indented = '{\n "cells": [\n  {\n   "source": [],\n   "cell_type": "code"\n  }\n ]\n}\n'
    assert replace_sources(read_notebook(indented), {1: "a\nb"}) == indented.replace(
        '[]', '[\n    "a\\n",\n    "b"\n   ]')


def test_program_positions_map_back_to_cells():
    program = build_program([(2, "a = 1\nb = 2\n"), (5, "c = 3")])
    assert program.position(1) == (2, 1) and program.position(2) == (2, 2)
    assert program.position(4) == (5, 1) and program.program_line(5, 1) == 4
    assert program.cell_sources(program.text) == {}


def test_lint_cells_takes_the_cells_of_an_editor():
    found = notebooks.lint_cells([(1, HEADER + "y = x.t()"), (3, "z = y.view(32)")], SC101, "nb.ipynb")
    assert codes(found) == [("SC101", 3, 1, 5)]


def test_a_finding_made_with_the_arguments_of_a_call_names_the_call_in_its_cell():
    cells = [(1, "import torch\ndef flat(t):\n    return t.view(-1)\n"),
             (2, "x = torch.randn(4, 8)\nflat(x.t())\n"), (3, "a = 1\nflat(x.t())\n")]
    rules = [get_rule(code) for code in ("SC101",)]
    messages = [(d.cell, d.line, d.message[d.message.index("(with"):]) for d in notebooks.lint_cells(cells, rules)]
    assert messages == [(1, 3, "(with the arguments of the calls in cell 2 line 2, cell 3 line 2)")]
