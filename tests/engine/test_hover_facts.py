"""The hover of an expression: the fact the analysis has for it where the walk reaches it."""

from __future__ import annotations

import re
import textwrap

import libcst as cst

from shapecheck.engine.hover_facts import expression_at, hover_markdown

CODE = textwrap.dedent(
    """\
    import torch

    x = torch.randn(2, 3, 4, requires_grad=True)
    y = x.transpose(1, 2)
    z = y * 2
    n = 3

    def f(a):
        return a.t()
    """
)


def _hover(line: int, column: int):
    module = cst.parse_module(CODE)
    found = hover_markdown(module, line, column, CODE)
    return found[0] if found is not None else None


def test_transposed_tensor_shows_shape_layout_op_device_grad_dtype():
    assert _hover(4, 0) == (
        "**tensor** `y`\n\n"
        "- shape: `(2, 4, 3)`\n"
        "- layout: non-contiguous, made non-contiguous by `.transpose(1, 2)` (strides `(12, 1, 4)`)\n"
        "- device: cpu\n"
        "- grad: requires grad (not a leaf: computed from a tensor that requires grad)\n"
        "- dtype: float"
    )


def test_a_leaf_and_a_method_name_show_their_own_facts():
    leaf = _hover(4, 4)  # `x` in `x.transpose(1, 2)`
    assert leaf.startswith("**tensor** `x`\n\n- shape: `(2, 3, 4)`\n- layout: contiguous")
    assert "requires grad (a leaf" in leaf
    call = _hover(4, 8)  # `transpose`: the call's result
    assert call.startswith("**tensor** `x.transpose(1, 2)`\n\n- shape: `(2, 4, 3)`")


def test_elementwise_result_keeps_the_layout():
    assert "made non-contiguous by `.transpose(1, 2)`" in _hover(5, 6)


def test_nothing_when_nothing_is_known():
    assert _hover(6, 0) is None  # an int
    assert _hover(9, 11) is None  # a parameter of unknown kind
    assert _hover(1, 3) is None  # an import


def test_expression_at_moves_to_the_assigned_value():
    module = cst.parse_module(CODE)
    target = expression_at(module, 4, 0)
    assert module.code_for_node(target.node) == "x.transpose(1, 2)"
    assert module.code_for_node(target.pointed) == "y"
    assert target.span == (4, 0, 4, 1)


# ----------------------------------------------------------------- one hover, one analysis


def _count_walks(monkeypatch) -> list[int]:
    """Count the semantic walks (``Checker.run``: the analysis every lint and hover goes through)."""
    from shapecheck.engine import checker

    walks: list[int] = []
    real = checker.Checker.run

    def counted(self):
        walks.append(1)
        return real(self)

    monkeypatch.setattr(checker.Checker, "run", counted)
    return walks


def test_a_hover_in_a_python_text_is_one_analysis(monkeypatch):
    walks = _count_walks(monkeypatch)
    assert _hover(4, 0).startswith("**tensor** `y`")
    assert len(walks) == 1


#: ``CODE`` cut into notebook cells (numbers as an editor gives them: a markdown cell is 2)
CELLS = [(1, "import torch\n\nx = torch.randn(2, 3, 4, requires_grad=True)\n"),
         (3, "y = x.transpose(1, 2)\nz = y * 2\n"), (4, "n = 3\n\ndef f(a):\n    return a.t()\n")]


def test_a_hover_in_a_notebook_cell_is_one_analysis_and_the_same_text(monkeypatch):
    from shapecheck.engine.notebooks import hover_in_cells

    expected = _hover(4, 0)
    walks = _count_walks(monkeypatch)
    assert hover_in_cells(CELLS, 3, 1, 0) == (expected, (1, 0, 1, 1))
    assert len(walks) == 1
    assert hover_in_cells(CELLS, 3, 2, 6)[0] == _hover(5, 6)  # `y` in `y * 2`
    assert hover_in_cells(CELLS, 4, 1, 0) is None  # an int: nothing shown, still one walk
    assert len(walks) == 4  # the two `_hover` calls above are one walk each


def test_a_hover_next_to_a_cell_that_does_not_parse_is_one_analysis(monkeypatch):
    from shapecheck.engine.notebooks import hover_in_cells, parse_cells

    cells = [CELLS[0], (2, "x = (1,\n"), *CELLS[1:]]
    walks = _count_walks(monkeypatch)
    program, module = parse_cells(cells)
    assert module is not None and "x = (1," not in program.text and walks == []
    assert hover_in_cells(cells, 3, 1, 0)[0] == _hover(4, 0)
    assert len(walks) == 2  # the parse is not an analysis: one walk here, one in `_hover`
    program, module = parse_cells([(1, "x = (1,\n")])
    assert module is not None and not module.body and walks == [1, 1]


def _fact_of_the_whole_walk(module: cst.Module, target: cst.CSTNode, text: str):
    """The fact the walk records first for ``target`` when it runs to its end (no early stop)."""
    from shapecheck.engine.checker import analyze

    def hook(self, node, ctx):
        if node is target and self.fact is None:
            self.fact = ctx.fact(node)

    probe = type("WholeWalkProbe", (), {"code": "HOVER", "fact": None, f"visit_{type(target).__name__}": hook})()
    analyze(module, [probe], text).release()
    return probe.fact


def test_the_walk_that_stops_at_the_hovered_node_finds_the_fact_of_the_whole_walk():
    """Every name in the example programs: the hover's walk stops once it has the fact, and that
    fact is the one the whole walk (with the walks of callees in call-site contexts) records."""
    from pathlib import Path

    from shapecheck.engine.hover_facts import fact_at

    examples = sorted((Path(__file__).resolve().parents[2] / "examples").glob("sc*_bad.py"))
    compared = known = 0
    for path in [*examples, None]:
        text = CODE if path is None else path.read_text(encoding="utf-8")
        module = cst.parse_module(text)
        for line_number, line in enumerate(text.splitlines(), start=1):
            for match in re.finditer(r"\b[A-Za-z_]", line):  # where each word starts
                column = match.start()
                target = expression_at(module, line_number, column)
                if target is None:
                    continue
                fact = fact_at(module, target.node, text)
                whole = _fact_of_the_whole_walk(module, target.node, text)
                assert repr(fact) == repr(whole), (path, line_number, column)  # `Fact` compares by identity
                compared += 1
                known += fact is not None
    assert compared > 1000 and known > 300


def test_a_lint_after_a_hover_that_stopped_its_walk_is_unchanged():
    """The server lints and hovers in one process: a walk stopped early leaves nothing behind."""
    from pathlib import Path

    from shapecheck.engine.runner import lint_text
    from shapecheck.rules.catalog import all_rules

    path = Path(__file__).resolve().parents[2] / "examples" / "sc101_view_on_non_contiguous_bad.py"
    text = path.read_text(encoding="utf-8")
    before = lint_text(text, all_rules(), str(path))
    module = cst.parse_module(text)
    hovered = [hover_markdown(module, n, len(line) - len(line.lstrip()), text)
               for n, line in enumerate(text.splitlines(), start=1)]
    assert any(h is not None and h[0].startswith("**tensor**") for h in hovered)
    assert lint_text(text, all_rules(), str(path)) == before and [d.code for d in before] == ["SC101"]
