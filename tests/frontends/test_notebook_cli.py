"""Notebooks through the command a user runs: found in folders, linted as one program, reported
by cell, fixed in place with every other byte kept (checked with nbformat, the reference reader)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import BAD, run_cli_subprocess, write_tree

nbformat = pytest.importorskip("nbformat")

MESSAGE = ("`y` is not contiguous after `.t()` (shape (8, 4), strides (1, 8)); `.view(32)` would merge dims whose "
           "strides do not line up and raises at run time; use `.reshape()` or call `.contiguous()` first")


def _notebook():
    """A notebook as Jupyter saves one: markdown, magics, a shell escape, outputs with an image
    and a stream, metadata; `x` is made in cell 2, transposed in cell 3, viewed in cell 5."""
    v4 = nbformat.v4
    nb = v4.new_notebook()
    nb.metadata.update({
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "version": "3.11.7"},
    })
    nb.cells = [
        v4.new_markdown_cell("# Shapes\nA notebook with a bug."),
        v4.new_code_cell("%matplotlib inline\nimport torch\n!nvidia-smi\nx = torch.randn(4, 8)", execution_count=1,
                         outputs=[v4.new_output("stream", name="stdout", text="no GPU\n")]),
        v4.new_code_cell("y = x.t()\ny.shape?", execution_count=2, outputs=[
            v4.new_output("display_data", data={"image/png": "iVBORw0KGgoAAAANSUhEUg==", "text/plain": "<Figure>"}),
        ]),
        v4.new_markdown_cell("Now flatten it:"),
        v4.new_code_cell("%%time\nprint(y.sum())\nz = y.view(32)\n", execution_count=3),
        v4.new_code_cell("%%bash\necho (not python\n"),
    ]
    nb.cells[1].metadata["tags"] = ["setup"]
    for number, cell in enumerate(nb.cells):
        cell.id = f"cell-{number}"
    return nb


def _write(folder: Path, name: str = "nb.ipynb") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(_notebook()) + "\n", encoding="utf-8")
    return path


def test_a_folder_walk_lints_notebooks_and_respects_gitignore(tmp_path):
    _write(tmp_path / "pkg")
    _write(tmp_path / "pkg", "scratch.ipynb")
    write_tree(tmp_path, {".gitignore": "scratch.ipynb\n", "pkg/a.py": BAD, ".git/HEAD": ""})
    result = run_cli_subprocess(["lint", "--no-cache", "--output-format", "concise", "pkg"], tmp_path)
    assert result.rc == 1, result.err
    lines = result.out.splitlines()
    assert lines[0].startswith("pkg/a.py:3:5: SC101 [*] error: ")
    assert lines[1] == f"pkg/nb.ipynb:cell 5:3:5: SC101 [*] error: {MESSAGE}"
    assert lines[2] == "Found 2 problems (2 fixable)."
    assert "scratch" not in result.out and "skipped" not in result.err


def test_full_format_shows_the_line_of_the_cell(tmp_path):
    _write(tmp_path)
    result = run_cli_subprocess(["lint", "--no-cache", "nb.ipynb"], tmp_path)
    assert result.out.splitlines()[:5] == [
        "nb.ipynb:cell 5:3:5: SC101 [*] error: `y` is not contiguous after `.t()` (shape (8, 4), strides (1, 8))",
        "  |",
        "3 | z = y.view(32)",
        "  |     ^^^^^^^^^^",
        "  |",
    ]


def test_a_related_place_in_another_cell_is_shown_with_its_cell(tmp_path):
    """`y` is transposed in cell 3 and viewed in cell 5: the transposing line is shown from its own
    cell in the full text, and named by its cell in JSON and SARIF (SARIF: joined-cell lines)."""
    _write(tmp_path)
    full = run_cli_subprocess(["lint", "--no-cache", "nb.ipynb"], tmp_path).out
    assert full.splitlines()[:11] == [
        "nb.ipynb:cell 5:3:5: SC101 [*] error: `y` is not contiguous after `.t()` (shape (8, 4), strides (1, 8))",
        "  |",
        "3 | z = y.view(32)",
        "  |     ^^^^^^^^^^",
        "  |",
        " ::: nb.ipynb:cell 3:1:5",
        "1 | y = x.t()",
        "  |     ----- made non-contiguous here by `t()`",
        "  |",
        "  = `.view(32)` would merge dims whose strides do not line up and raises at run time",
        "  = help: use `.reshape()` or call `.contiguous()` first",
    ]
    [row] = json.loads(run_cli_subprocess(["lint", "--no-cache", "--output-format", "json", "nb.ipynb"], tmp_path).out)
    assert row["related"] == [{"line": 1, "column": 5, "end_line": 1, "end_column": 10,
                               "label": "made non-contiguous here by `t()`", "cell": 3}]
    sarif = json.loads(run_cli_subprocess(["lint", "--no-cache", "--output-format", "sarif", "nb.ipynb"], tmp_path).out)
    [related] = sarif["runs"][0]["results"][0]["relatedLocations"]
    # cell 3 comes after the 4 lines of cell 2 in the joined code cells
    assert related["physicalLocation"]["region"] == {"startLine": 5, "startColumn": 5, "endLine": 5, "endColumn": 10}
    assert related["properties"] == {"cell": 3}
    # the cache keeps the place and its cell
    cached = [run_cli_subprocess(["lint", "--output-format", "json", "nb.ipynb"], tmp_path).out for _ in range(2)]
    assert json.loads(cached[0])[0]["related"] == json.loads(cached[1])[0]["related"] == row["related"]


def test_json_github_and_sarif_positions(tmp_path):
    _write(tmp_path)
    write_tree(tmp_path, {"a.py": BAD})
    rows = json.loads(run_cli_subprocess(["lint", "--no-cache", "--output-format", "json", "."], tmp_path).out)
    assert [(r["path"], r["cell"], r["line"], r["column"], r["end_line"], r["end_column"]) for r in rows] == [
        ("a.py", None, 3, 5, 3, 19), ("nb.ipynb", 5, 3, 5, 3, 15),
    ]
    github = run_cli_subprocess(["lint", "--no-cache", "--output-format", "github", "nb.ipynb"], tmp_path).out
    # as ruff: lines counted in the code cells joined (4 + 2 lines before cell 5), the cell in the text
    assert github == (
        "::error file=nb.ipynb,line=9,col=5,endLine=9,endColumn=15,title=SC101 (view-on-non-contiguous)::"
        f"cell 5:3:5: SC101 {MESSAGE}\n"
    )
    sarif = json.loads(run_cli_subprocess(["lint", "--no-cache", "--output-format", "sarif", "nb.ipynb"], tmp_path).out)
    [result] = sarif["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 9, "startColumn": 5, "endLine": 9, "endColumn": 15,
    }
    assert result["properties"] == {"cell": 5} and "fixes" not in result


def test_fix_changes_only_the_fixed_cell(tmp_path):
    path = _write(tmp_path)
    before = path.read_text(encoding="utf-8")
    result = run_cli_subprocess(["lint", "--no-cache", "--fix", "nb.ipynb"], tmp_path)
    assert (result.rc, result.out) == (0, "Fixed 1 problem, 0 remaining.\n"), result.err
    after = path.read_text(encoding="utf-8")
    expected = _notebook()
    expected.cells[4].source = "%%time\nprint(y.sum())\nz = y.reshape(32)\n"
    fixed = nbformat.read(path, as_version=4)
    assert fixed == expected
    assert after == nbformat.writes(expected) + "\n"
    assert after == before.replace('"z = y.view(32)\\n"', '"z = y.reshape(32)\\n"')
    nbformat.validate(fixed)


def test_invalid_json_is_sc000_with_its_position_and_the_run_goes_on(tmp_path):
    write_tree(tmp_path, {"a_broken.ipynb": '{\n "cells": [\n  {"cell_type": "code", }\n ]\n}\n', "b.py": BAD})
    result = run_cli_subprocess(["lint", "--no-cache", "--output-format", "concise", "."], tmp_path)
    assert result.rc == 2
    lines = result.out.splitlines()
    assert lines[0] == ("a_broken.ipynb:3:25: SC000 error: cannot parse the notebook: invalid JSON: Expecting "
                        "property name enclosed in double quotes")
    assert lines[1].startswith("b.py:3:5: SC101 [*] error: ")


def test_noqa_add_noqa_statistics_and_exit_zero_in_cells(tmp_path):
    path = _write(tmp_path)
    added = run_cli_subprocess(["lint", "--no-cache", "--add-noqa", "nb.ipynb"], tmp_path)
    assert added.rc == 0, added.err
    cells = nbformat.read(path, as_version=4).cells
    assert cells[4].source == "%%time\nprint(y.sum())\nz = y.view(32)  # noqa: SC101\n"
    assert cells[1].source == _notebook().cells[1].source
    clean = run_cli_subprocess(["lint", "--no-cache", "nb.ipynb"], tmp_path)
    assert (clean.rc, clean.out) == (0, "All checks passed.\n")
    _write(tmp_path)
    stats = run_cli_subprocess(["lint", "--no-cache", "--statistics", "--exit-zero", "nb.ipynb"], tmp_path)
    assert (stats.rc, stats.out) == (0, "    1\tSC101\t[*] view-on-non-contiguous\nFound 1 problem.\n")


def test_the_cache_covers_notebooks(tmp_path):
    path = _write(tmp_path)
    first = run_cli_subprocess(["lint", "--output-format", "json", "nb.ipynb"], tmp_path)
    cached = run_cli_subprocess(["lint", "--output-format", "json", "nb.ipynb"], tmp_path)
    assert first.out == cached.out and json.loads(cached.out)[0]["cell"] == 5
    stored = "".join(p.read_text() for p in (tmp_path / ".shapecheck_cache").rglob("results-*.json"))
    assert "nb.ipynb" in stored
    path.write_text(path.read_text().replace("y.view(32)", "y.reshape(32)"))
    assert json.loads(run_cli_subprocess(["lint", "--output-format", "json", "nb.ipynb"], tmp_path).out) == []


def test_diff_shows_the_source_change_and_writes_nothing(tmp_path):
    path = _write(tmp_path)
    before = path.read_bytes()
    result = run_cli_subprocess(["lint", "--no-cache", "--diff", "nb.ipynb"], tmp_path)
    assert result.rc == 1 and result.err.endswith("Would fix 1 problem.\n")
    changed = [line for line in result.out.splitlines() if line.startswith(("-", "+"))]
    assert changed == ["--- a/nb.ipynb", "+++ b/nb.ipynb", '-    "z = y.view(32)\\n"', '+    "z = y.reshape(32)\\n"']
    assert path.read_bytes() == before


def test_a_malformed_noqa_in_a_cell_is_named_by_its_cell_line(tmp_path):
    nb = _notebook()
    nb.cells[2].source = "y = x.t()  # noqa: SC1O1\ny.shape?"
    (tmp_path / "nb.ipynb").write_text(nbformat.writes(nb), encoding="utf-8")
    result = run_cli_subprocess(["lint", "--no-cache", "--output-format", "concise", "nb.ipynb"], tmp_path)
    assert ("warning: nb.ipynb:cell 3:1: `# noqa: SC1O1`: `SC1O1` is not a rule code; it silences only the valid "
            "codes it names\n") in result.err


# ------------------------------------------------------------------ examples/training_notebook.ipynb

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "training_notebook.ipynb"


def test_the_example_notebook_reports_its_bugs_across_cells():
    result = run_cli_subprocess(["lint", "--no-cache", "--output-format", "json", str(EXAMPLE)], EXAMPLE.parent)
    assert result.rc == 1, result.err
    found = json.loads(result.out)
    assert [(d["code"], d["cell"], d["line"], d["column"]) for d in found] == [
        ("SC101", 6, 2, 28), ("SC201", 7, 1, 15), ("SC402", 8, 6, 9), ("SC401", 8, 7, 32), ("SC308", 8, 9, 9),
        ("SC309", 9, 4, 1),
    ]
    # the tensor viewed in cell 6 and reduced in cell 7 were made in cell 3
    assert [(r["cell"], r["line"]) for d in found for r in d["related"]] == [(3, 4), (3, 5)]


def test_the_example_notebook_is_a_real_notebook_with_magics_and_outputs():
    nb = nbformat.read(EXAMPLE, as_version=4)
    nbformat.validate(nb)
    sources = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    assert sources[0].startswith("%matplotlib inline\n") and "\n!nvidia-smi -L\n" in sources[0]
    assert sources[-2].startswith("%%time\n")
    assert {cell.cell_type for cell in nb.cells} == {"code", "markdown"}
    kinds = {output.output_type for cell in nb.cells if cell.cell_type == "code" for output in cell.outputs}
    assert kinds == {"stream", "execute_result", "error"}


def test_the_docs_show_what_the_cli_prints_for_the_example_notebook():
    repo = EXAMPLE.parents[1]
    result = run_cli_subprocess(["lint", "--no-cache", "examples/training_notebook.ipynb"], repo)
    docs = (repo / "docs" / "notebooks.md").read_text(encoding="utf-8")
    assert f"$ shapecheck lint examples/training_notebook.ipynb\n{result.out}```" in docs


def test_fixing_a_copy_of_the_example_keeps_its_outputs(tmp_path):
    copy = tmp_path / "training_notebook.ipynb"
    copy.write_bytes(EXAMPLE.read_bytes())
    result = run_cli_subprocess(["lint", "--no-cache", "--fix", "--output-format", "concise", copy.name], tmp_path)
    assert result.rc == 1, result.err
    assert [line.split(": ")[0] for line in result.out.splitlines() if ": SC" in line] == [
        "training_notebook.ipynb:cell 7:1:15", "training_notebook.ipynb:cell 8:9:9"]  # SC201, SC308: no safe fix
    before, after = nbformat.read(EXAMPLE, as_version=4), nbformat.read(copy, as_version=4)
    assert [c.get("outputs") for c in after.cells] == [c.get("outputs") for c in before.cells]
    changed = [n for n, (a, b) in enumerate(zip(before.cells, after.cells), start=1) if a.source != b.source]
    assert changed == [6, 8, 9]
    assert "images.reshape(64, -1)" in after.cells[5].source
    assert "        x = x.to(device)\n" in after.cells[7].source
    assert after.cells[8].source.endswith("probs.cpu().detach().numpy()[:2]")
