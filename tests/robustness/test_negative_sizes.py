"""Negative and zero sizes (issue 9, item 9): no rule crashes on them, SC103 reports a negative
size where it is written with the words torch raises, and the inference never carries one.

The property test builds small programs over factories, view/reshape, expand, repeat and
broadcasting ops with random sizes from -3 to 4, lints them with every rule (opt-in ones too)
and runs them with torch line by line: no SC999; a negative size that torch rejects in a factory
or a view is an SC103 on that line quoting torch's error; and no shape error is reported on a
line that torch runs.
"""

from __future__ import annotations

import subprocess
import sys

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapecheck.engine.checker import analyze
from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules, get_rule

torch = pytest.importorskip("torch")

ALL_RULES = all_rules()
SC103 = get_rule("SC103")
#: rules that claim "this line raises" and may fire on the programs below
RAISING_CODES = {"SC101", "SC102", "SC103", "SC202", "SC203"}
#: torch's words for a size it rejects, whatever the tensor
NEGATIVE_WORDS = ("negative dimension", "Dimension size must be non-negative", "invalid shape dimension",
                  "must be greater or equal to 0", "number of steps must be non-negative")
#: sizes, about one in four negative, so that programs often get past their first lines
SIZES = st.sampled_from([-3, -2, -1, 0, 1, 1, 2, 2, 3, 3, 4, 4])


def _lint(text: str):
    return lint_text(text, ALL_RULES, path="prog.py")


def _torch_error(statement: str) -> str:
    """The first line of the error torch raises for ``statement`` (``""`` when it runs)."""
    try:
        exec(statement, {"torch": torch})
    except Exception as exc:  # the error text is what is compared
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return ""


def _run_lines(lines: list[str]) -> tuple[int, str]:
    """Run the program line by line; the 1-based line that raised first and its error's first
    line, or ``(0, "")`` when every line ran."""
    scope = {"torch": torch}
    for number, line in enumerate(lines, start=1):
        try:
            exec(line, scope)
        except Exception as exc:
            text = str(exc)
            return number, text.splitlines()[0] if text else type(exc).__name__
    return 0, ""


def _sizes(values: list[int], form: str) -> str:
    joined = ", ".join(map(str, values))
    if form == "splat":
        return joined
    tup = "(" + joined + ("," if len(values) == 1 else "") + ")"
    if form == "tuple":
        return tup
    if form == "list":
        return "[" + joined + "]"
    return "size=" + tup


@st.composite
def programs(draw):
    """Lines of a program (without the import) and, per line, whether it is a factory or a
    view/reshape whose negative sizes SC103 must report."""
    lines = ["import torch", "t0 = torch.ones(2, 3)"]
    checked = [False, False]
    names = ["t0"]
    for i in range(1, draw(st.integers(1, 5)) + 1):
        src = draw(st.sampled_from(names))
        other = draw(st.sampled_from(names))
        sizes = draw(st.lists(SIZES, min_size=1, max_size=3))
        form = draw(st.sampled_from(["splat", "tuple", "list", "kw"]))
        kind = draw(st.sampled_from([
            "factory", "full", "randint", "new", "eye", "randperm", "linspace", "arange",
            "view", "reshape", "expand", "repeat", "binary", "broadcast_to", "cat", "unsqueeze",
            "sum", "matmul",
        ]))
        check = kind in ("factory", "full", "randint", "new", "eye", "randperm", "linspace", "view", "reshape")
        if kind == "factory":
            fn = draw(st.sampled_from(["zeros", "ones", "empty", "rand", "randn"]))
            expr = f"torch.{fn}({_sizes(sizes, form)})"
        elif kind == "full":
            expr = f"torch.full({_sizes(sizes, 'tuple')}, 1.0)"
        elif kind == "randint":
            expr = f"torch.randint(0, 5, {_sizes(sizes, 'tuple')})"
        elif kind == "new":
            fn = draw(st.sampled_from(["new_zeros", "new_ones", "new_empty"]))
            expr = f"{src}.{fn}({_sizes(sizes, 'kw' if form == 'kw' else form)})"
        elif kind == "eye":
            expr = "torch.eye(" + ", ".join(map(str, sizes[:2])) + ")"
        elif kind == "randperm":
            expr = f"torch.randperm({sizes[0]})"
        elif kind == "linspace":
            expr = f"torch.linspace(0, 1, {sizes[0]})"
        elif kind == "arange":
            expr = f"torch.arange({sizes[0]})"
        elif kind in ("view", "reshape"):
            expr = f"{src}.{kind}({_sizes(sizes, 'list' if form == 'kw' else form)})"
        elif kind in ("expand", "repeat"):
            expr = f"{src}.{kind}({_sizes(sizes, 'tuple' if form in ('kw', 'list') else form)})"
        elif kind == "binary":
            op = draw(st.sampled_from(["+", "-", "*"]))
            expr = f"{src} {op} {other}"
        elif kind == "broadcast_to":
            expr = f"torch.broadcast_to({src}, {_sizes(sizes, 'tuple')})"
        elif kind == "cat":
            expr = f"torch.cat([{src}, {other}], dim={draw(st.integers(-2, 1))})"
        elif kind == "unsqueeze":
            expr = f"{src}.unsqueeze({draw(st.integers(-3, 2))})"
        elif kind == "sum":
            expr = f"{src}.sum({draw(st.integers(-2, 1))})"
        else:
            expr = f"{src} @ {other}"
        lines.append(f"t{i} = {expr}")
        checked.append(check)
        names.append(f"t{i}")
    return lines, checked


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_sizes_agree_with_torch(program):
    lines, checked = program
    text = "\n".join(lines) + "\n"
    found = _lint(text)
    assert [d for d in found if d.code in ("SC000", "SC999")] == []
    failed_line, error = _run_lines(lines)
    last_run = failed_line - 1 if failed_line else len(lines)
    by_line: dict[int, list] = {}
    for d in found:
        by_line.setdefault(d.line, []).append(d)
    for number in range(1, last_run + 1):
        wrong = [d for d in by_line.get(number, []) if d.code in RAISING_CODES]
        assert wrong == [], f"line {number} runs under torch but was flagged:\n{text}"
    if not failed_line:
        return
    here = by_line.get(failed_line, [])
    quoted = [d for d in here if d.code in ("SC102", "SC103") and f"`{error}`" in d.message]
    if checked[failed_line - 1] and any(w in error for w in NEGATIVE_WORDS):
        assert quoted, f"torch raises {error!r} on line {failed_line}, not reported:\n{text}\n{here}"
    if checked[failed_line - 1] and "only one dimension can be inferred" in error:
        assert [d.code for d in quoted] == ["SC102"], text
    for d in here:
        if d.code in ("SC102", "SC103"):
            assert f"`{error}`" in d.message, f"{d.message!r} does not quote torch's {error!r}"


# -- the reported cases, each against torch's own words

FACTORY_CASES = [
    ("torch.zeros(-1)", 0, -1),
    ("torch.empty(2, -3)", 1, -3),
    ("torch.randn((-1,))", 0, -1),
    ("torch.ones(size=(4, -2))", 1, -2),
    ("torch.rand([-5])", 0, -5),
    ("torch.full((-1, 2), 0.0)", 0, -1),
    ("torch.randint(0, 5, (2, -2))", 1, -2),
    ("torch.empty_strided((2, -1), (1, 1))", 1, -1),
    ("torch.randperm(-4)", 0, -4),
    ("t.new_zeros(-2)", 0, -2),
    ("t.new_ones((3, -1))", 1, -1),
    ("t.new_empty(-2)", 0, -2),
    ("t.new_full((-2,), 1.0)", 0, -2),
]


@pytest.mark.parametrize("expr, index, size", FACTORY_CASES)
def test_negative_factory_size_is_sc103_with_torchs_words(expr, index, size):
    prefix = "import torch\nt = torch.ones(3)\n"
    error = _torch_error(prefix + f"y = {expr}\n")
    assert error
    (d,) = [d for d in _lint(prefix + f"y = {expr}\n") if d.code != "SC403"]
    assert (d.code, d.line, d.column) == ("SC103", 3, 5)
    assert d.message == (f"`{expr}` asks for size {size} at index {index}; a tensor size is never "
                         f"negative, and torch raises `{error}`")


@pytest.mark.parametrize("expr, what", [
    ("torch.eye(-1)", "a negative size (n=-1)"),
    ("torch.eye(2, -3)", "a negative size (m=-3)"),
    ("torch.linspace(0, 1, -1)", "a negative number of steps (-1)"),
    ("torch.logspace(0, 1, steps=-2)", "a negative number of steps (-2)"),
])
def test_negative_count_in_eye_and_linspace(expr, what):
    error = _torch_error(f"import torch\ny = {expr}\n")
    (d,) = _lint(f"import torch\ny = {expr}\n")
    assert d.code == "SC103"
    assert d.message == f"`{expr}` asks for {what}; a tensor size is never negative, and torch raises `{error}`"


@pytest.mark.parametrize("call, code", [
    ("x.view(-3, -1)", "SC103"),
    ("x.reshape(-2)", "SC103"),
    ("x.view(3, -2)", "SC103"),
    ("x.view(-2, -1, -1)", "SC103"),  # torch stops at -2 before it sees the second -1
    ("x.view(-1, -1, -2)", "SC102"),  # and at the second -1 before it sees -2
    ("x.view(-1, -1)", "SC102"),
    ("x.view(0, -1)", "SC103"),
    ("x.view(4, 2)", "SC103"),
])
def test_view_sizes_are_reported_once_with_torchs_words(call, code):
    prefix = "import torch\nx = torch.arange(6)\n"
    error = _torch_error(prefix + call)
    (d,) = _lint(prefix + f"y = {call}\n")
    assert d.code == code
    assert f"`{error}`" in d.message


def test_reshape_of_what_may_be_a_numpy_array():
    # NumPy reads any negative size as -1: only a known tensor's reshape(-2) raises
    text = "def f(a):\n    return a.reshape(-2), a.reshape(3, -2), a.reshape(-2, -1, -1)\n"
    assert [d.code for d in _lint(text)] == ["SC102"]  # NumPy too allows one unknown size
    (d,) = _lint("def f(a):\n    return a.view(3, -2)\n")  # a view with sizes is a tensor's
    assert d.code == "SC103"


def test_zero_elements_with_inferred_size_is_ambiguous():
    text = "import torch\nx = torch.zeros(0)\ny = x.view(-1, 0)\n"
    error = _torch_error(text)
    (d,) = _lint(text)
    assert d.code == "SC103" and d.message.endswith(f"torch raises `{error}`")
    assert "ambiguous" in error


def test_valid_zero_and_inferred_sizes_are_not_flagged():
    text = ("import torch\nx = torch.zeros(0, 3)\ny = x.view(-1, 3)\nz = torch.empty(2, 0)\n"
            "w = torch.full((0,), 1.0) + torch.zeros(0)\nv = torch.randint(-5, 5, (3,))\n"
            "u = torch.arange(6).reshape(-1) - torch.ones(6)\n")
    assert _torch_error(text) == ""
    assert _lint(text) == []


class _Probe:
    code = "PROBE"

    def __init__(self):
        self.shapes = []

    def visit_Call(self, node, ctx):
        if isinstance(node.func, cst.Name) and node.func.value == "reveal":
            fact = ctx.fact(node.args[0].value)
            self.shapes.append(fact.shape.dims if fact.shape is not None else None)


@pytest.mark.parametrize("expr, dims", [
    ("torch.zeros(-1)", (None,)),
    ("torch.empty(2, -3)", (2, None)),
    ("torch.arange(6).view(-3, -1)", (None, None)),
    ("torch.arange(6).reshape(-2)", (None,)),
    ("torch.ones(1, 3).expand(2, -2)", (2, None)),
    ("torch.ones(3).repeat(-1)", (None,)),
    ("torch.zeros(-1) + torch.zeros(-1)", (None,)),
    ("torch.eye(-2)", (None, None)),
])
def test_inference_never_carries_a_negative_size(expr, dims):
    probe = _Probe()
    analyze(cst.parse_module(f"import torch\nreveal({expr})\n"), [probe])
    assert probe.shapes == [dims]


def test_reported_cases_through_the_real_command(tmp_path):
    (tmp_path / "neg.py").write_text(
        "import torch\n"
        "a = torch.zeros(-1) + torch.zeros(-1)\n"
        "\n"
        "def f(x, y):\n"
        "    return x.view(-3, -1) - y\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "shapecheck", "lint", "--no-cache", "--output-format", "concise", "--select", "SC",
         "neg.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "SC999" not in proc.stdout and "Traceback" not in proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("neg.py:")]
    assert [line.split(" ")[0] + " " + line.split(" ")[1] for line in lines] == [
        "neg.py:2:5: SC103", "neg.py:2:23: SC103", "neg.py:5:12: SC103",
    ]
    assert lines[2].endswith("torch raises `invalid shape dimension -3 at index 0 of shape [-3, -1]`")


def test_negative_sizes_in_jaxtyping_annotations_crash_nothing():
    text = (
        "import torch\nfrom jaxtyping import Float\n\n"
        "def f(x: Float[torch.Tensor, '-1 3'], y: Float[torch.Tensor, '-2']) -> Float[torch.Tensor, '-1 -3']:\n"
        "    z = x + y + torch.zeros(2, 3)\n"
        "    return z.view(-1) @ x\n"
    )
    assert [d.code for d in _lint(text) if d.code in ("SC000", "SC999")] == []
