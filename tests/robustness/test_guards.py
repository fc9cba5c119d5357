"""One file cannot take the run down (issue 9, items 5, 6 and 8): a file nested too deeply for
libcst's native parser, or too large for memory, is one ``SC000`` that says why (and, for the
size, how to lift the limit), and every other file keeps its result; a worker process that dies
costs only its own file; the answer for a deep file does not depend on ``--jobs`` or on how deep
the caller's stack is.

Every case but two runs the real command (``python -m shapecheck``) on a tree built in
``tmp_path``. The exceptions need what a command line cannot give: a worker that dies on demand
(in-process, with ``fork``), and a caller that is already deep in its own stack.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.engine import guards

REPO = Path(__file__).resolve().parents[2]

#: SC103 for ``NAME.view(5)`` of a (2, 3) tensor: on line 3, column 5, of every file that
#: :func:`_good_files` writes (with ``x``)
SC103_OF = (
    "SC103 `{}` has shape (2, 3) (6 elements) but `.view(5)` needs 5 elements; torch raises "
    "`shape '[5]' is invalid for input of size 6`"
)
SC103 = SC103_OF.format("x")
TOO_DEEP = (
    "SC000 not linted: an expression nests more than 500 levels deep, too deep to parse safely; "
    "split it into smaller statements"
)
TOO_MANY_PARENS = "SC000 cannot parse: too many nested parentheses (Python allows 200)"


def shapecheck(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``python -m shapecheck ARGS`` in ``cwd`` (``lint`` in the ``concise`` text format)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if args[:1] == ["lint"]:
        args = ["lint", "--output-format", "concise", *args[1:]]
    return subprocess.run(
        [sys.executable, "-m", "shapecheck", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=600,
    )


def _good_files(root: Path, count: int = 5) -> list[str]:
    """``count`` files with one SC103 each (enough of them that ``--jobs 2`` uses a pool)."""
    names = []
    for i in range(count):
        name = f"good{i}.py"
        (root / name).write_text("import torch\nx = torch.zeros(2, 3)\ny = x.view(5)\n")
        names.append(f"{name}:3:5: {SC103}")
    return names


#: The severity word of a ``concise`` line, which the expected lines of these tests leave out.
_SEVERITY = re.compile(r"(: SC\d{3}(?: \[[*-]\])?) (?:error|warning):")


def _lines(result: subprocess.CompletedProcess) -> list[str]:
    return [_SEVERITY.sub(r"\1", line, count=1) for line in result.stdout.splitlines() if ".py:" in line]


#: (file name, text, the line shapecheck prints for it): beyond what CPython itself compiles,
#: or beyond what libcst parses safely; each used to crash, exhaust memory or run for minutes
DEEP_FILES = [
    ("chain.py", "x = " + " + ".join(["a"] * 7000) + "\n", f"chain.py:1:2007: {TOO_DEEP}"),
    ("calls.py", "x = " + "f(" * 1000 + "a" + ")" * 1000 + "\n", f"calls.py:1:406: {TOO_MANY_PARENS}"),
    ("method.py", "x = a" + ".a()" * 5000 + "\n", f"method.py:1:1006: {TOO_DEEP}"),
    ("boolean.py", "x = " + " and ".join(["a"] * 100_000) + "\n", f"boolean.py:1:3007: {TOO_DEEP}"),
    ("unary.py", "x = " + "-" * 20_000 + "a\n", f"unary.py:1:505: {TOO_DEEP}"),
    ("lambdas.py", "f = " + "lambda: " * 3000 + "0\n", f"lambdas.py:1:4005: {TOO_DEEP}"),
    (
        "fstring.py", "x = f'{" + "+".join(["a"] * 3000) + "}'\n", f"fstring.py:1:1007: {TOO_DEEP}",
    ),
    (
        "elifs.py", "if a:\n    pass\n" + "elif a:\n    pass\n" * 1500,
        "elifs.py:2003:1: SC000 not linted: an if/elif chain of more than 1000 branches is too long "
        "to parse safely; split it up",
    ),
    (
        "indent.py", "".join(" " * i + "if a:\n" for i in range(120)) + " " * 120 + "pass\n",
        "indent.py:101:101: SC000 cannot parse: too many levels of indentation (Python allows 99)",
    ),
]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_too_deep_to_parse_is_one_sc000_and_the_others_keep_their_results(tmp_path, jobs):
    expected = _good_files(tmp_path)
    for name, text, line in DEEP_FILES:
        (tmp_path / name).write_text(text)
        expected.append(line)

    result = shapecheck(["lint", "--no-cache", "--jobs", jobs, "."], tmp_path)

    assert result.returncode == 2, result.stderr
    assert result.stderr == ""
    assert _lines(result) == sorted(expected)


def test_a_file_over_the_size_limit_is_one_sc000_that_says_how_to_lift_it(tmp_path):
    expected = _good_files(tmp_path, 1)
    # one line of 3 MB: parsing it used to take gigabytes
    (tmp_path / "big.py").write_text("x = [" + "1, " * 1_000_000 + "]\n")

    result = shapecheck(["lint", "--no-cache", "."], tmp_path)

    assert result.returncode == 2
    assert _lines(result) == [
        "big.py:1:1: SC000 not linted: the file is 2.9 MiB, over the 2.0 MiB limit (raise it with "
        "`max-file-size = 3000007` under [tool.shapecheck] or `--max-file-size 3000007`)",
        *expected,
    ]


def test_the_size_limit_is_lifted_by_the_flag_or_the_config_key(tmp_path):
    (tmp_path / "big.py").write_text("import torch\nx = torch.zeros(2, 3)\ny = x.view(5)\n" + "#" * 5000 + "\n")
    expected = [f"big.py:3:5: {SC103}"]

    refused = shapecheck(["lint", "--no-cache", "--max-file-size", "4000", "big.py"], tmp_path)
    assert _lines(refused) == [
        "big.py:1:1: SC000 not linted: the file is 4.9 KiB, over the 3.9 KiB limit (raise it with "
        "`max-file-size = 5050` under [tool.shapecheck] or `--max-file-size 5050`)"
    ]
    by_flag = shapecheck(["lint", "--no-cache", "--max-file-size", "5050", "big.py"], tmp_path)
    assert (by_flag.returncode, _lines(by_flag)) == (1, expected)

    (tmp_path / "pyproject.toml").write_text("[tool.shapecheck]\nmax-file-size = 4000\n")
    by_config = shapecheck(["lint", "--no-cache", "big.py"], tmp_path)
    assert (by_config.returncode, _lines(by_config)) == (2, _lines(refused)[:1])
    (tmp_path / "pyproject.toml").write_text("[tool.shapecheck]\nmax-file-size = 10000\n")
    lifted = shapecheck(["lint", "--no-cache", "big.py"], tmp_path)
    assert (lifted.returncode, _lines(lifted)) == (1, expected)
    # the command line wins over the configuration
    flag_wins = shapecheck(["lint", "--no-cache", "--max-file-size", "4000", "big.py"], tmp_path)
    assert _lines(flag_wins) == _lines(refused)[:1]


@pytest.mark.parametrize("value", ["0", "-5", '"2MiB"', "true", "1.5"])
def test_a_bad_max_file_size_is_a_one_line_error(tmp_path, value):
    (tmp_path / "pyproject.toml").write_text(f"[tool.shapecheck]\nmax-file-size = {value}\n")
    (tmp_path / "a.py").write_text("x = 1\n")

    result = shapecheck(["lint", "--no-cache", "a.py"], tmp_path)

    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("shapecheck: error: ")
    assert "`max-file-size` must be a positive whole number of bytes" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_stdin_over_the_size_limit_is_refused_too(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "shapecheck", "lint", "--output-format", "concise", "--max-file-size", "100", "-"],
        input="x = 1\n" * 100, cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert result.returncode == 2
    assert result.stdout.splitlines()[:1] == [
        "-:1:1: SC000 error: not linted: the file is 600 bytes, over the 100 bytes limit (raise it with "
        "`max-file-size = 600` under [tool.shapecheck] or `--max-file-size 600`)"
    ]


#: Deep programs that the guard lets through and that stress the analysis' recursion.
DEEP_PROGRAMS = {
    "method.py": "y = x" + ".abs()" * 240,
    "binop.py": "y = " + " + ".join(["x"] * 450),
    "calls.py": "y = " + "torch.abs(" * 190 + "x" + ")" * 190,
    "unary.py": "y = " + "-" * 450 + "x",
    "subscript.py": "y = x" + "[0:2]" * 400,
    "mixed.py": "y = " + "(x + " * 150 + "x" + ")" * 150,
}


def _write_deep_programs(root: Path) -> None:
    for name, line in DEEP_PROGRAMS.items():
        (root / name).write_text(f"import torch\nx = torch.zeros(2, 3)\n{line}\nz = y.view(5)\n")


def test_deep_programs_get_the_same_answer_with_any_number_of_jobs(tmp_path):
    _write_deep_programs(tmp_path)

    one = shapecheck(["lint", "--no-cache", "--jobs", "1", "."], tmp_path)
    two = shapecheck(["lint", "--no-cache", "--jobs", "2", "."], tmp_path)

    assert (one.returncode, one.stdout, one.stderr) == (two.returncode, two.stdout, two.stderr)
    # and the answer is the right one: no internal error, the finding after the deep line
    assert _lines(one) == [f"{name}:4:5: {SC103_OF.format('y')}" for name in sorted(DEEP_PROGRAMS)]


def test_the_answer_does_not_depend_on_the_depth_of_the_callers_stack(tmp_path):
    from shapecheck.engine.runner import lint_text
    from shapecheck.rules.catalog import all_rules

    texts = [f"import torch\nx = torch.zeros(2, 3)\n{line}\nz = y.view(5)\n" for line in DEEP_PROGRAMS.values()]
    rules = all_rules()
    shallow = [lint_text(text, rules) for text in texts]

    def deep(levels: int):
        if levels:
            return deep(levels - 1)
        return [lint_text(text, rules) for text in texts]

    limit = sys.getrecursionlimit()
    assert deep(limit - 100) == shallow
    assert sys.getrecursionlimit() == limit  # the analysis thread's limit does not leak
    assert all([d.code for d in found] == ["SC103"] for found in shallow)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker must inherit the patched linter")
def test_a_worker_that_dies_costs_only_its_own_file(tmp_path, monkeypatch):
    """A file that kills the process linting it (as a parser crash does) is an SC000 naming
    the signal; the files that were in the pool with it, pending or done, keep their results."""
    import multiprocessing

    from shapecheck.engine import runner as lint
    from shapecheck.engine.config import Settings, registry_infos

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs the fork start method")
    expected = _good_files(tmp_path, 8)
    (tmp_path / "crash.py").write_text("x = 1\n")
    real_lint = lint._Linter.lint

    def lint_or_die(self, job, mode):
        if job.path.endswith("crash.py"):
            import faulthandler

            faulthandler.disable()  # die quietly, as the parser does
            os.kill(os.getpid(), signal.SIGSEGV)
        return real_lint(self, job, mode)

    monkeypatch.setattr(lint._Linter, "lint", lint_or_die)
    monkeypatch.chdir(tmp_path)
    settings = Settings(rules=registry_infos(), root=str(tmp_path))

    outcome = lint.run(["."], settings, jobs=2, use_cache=False)

    shown = [f"{d.path}:{d.line}:{d.column}: {d.code} {d.message}" for d in outcome.diagnostics]
    assert shown == [
        "crash.py:1:1: SC000 cannot parse: the parser crashed on this file (signal 11, SIGSEGV); "
        "the other files were linted",
        *expected,
    ]


# --- the nesting scan itself ------------------------------------------------------------------

_SHALLOW = st.recursive(
    st.sampled_from(["x", "1", "'s'", "f'{x}'", "x.y", "x[0]", "f(x)"]),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from([" + ", " * ", " and ", " < ", " if x else ", " ** "]), inner)
        .map("".join),
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"[{e}, {e}]"),
        inner.map(lambda e: f"-({e})"),
        inner.map(lambda e: f"(not {e})"),
        inner.map(lambda e: f"(lambda a, b: {e})"),
        inner.map(lambda e: f"({e}).m()"),
        inner.map(lambda e: f"g(k={e})"),
    ),
    max_leaves=25,
)


@settings(max_examples=100, deadline=None)
@given(_SHALLOW)
def test_ordinary_expressions_are_never_too_deep(expression):
    text = f"def f(x):\n    return {expression}\n"
    compile(text, "<x>", "exec")  # it is Python
    assert guards.nesting_problem(text) is None


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["a + ", "a * ", "-", "~", "not ", "a and ", "a if a else ", "lambda: ", "a ** ", "await "]),
    st.integers(501, 3000),
    st.sampled_from(["x = {}a\n", "x = f'{{{}a}}'\n", "def f():\n    return ({}a)\n", "x = g(1, {}a)\n"]),
)
def test_a_long_chain_of_any_operator_is_too_deep_wherever_it_stands(step, count, template):
    if step == "lambda: " and "f'" in template:
        return  # in a field, a colon outside brackets starts the format spec: no chain at all
    text = template.format(step * count)
    problem = guards.nesting_problem(text)
    assert problem is not None and "too deep to parse safely" in problem[0]


@pytest.mark.parametrize(
    "hidden",
    [
        # a string that closes where the scan might think it does not, and the chain after it
        "x = 'a\\'' + {chain}\n",
        'x = """a"" " """ + {chain}\n',
        "x = rb'\\\\' + {chain}\n",
        # PEP 701: an f-string field may hold strings in the same quotes
        'x = f"{{"a" + {chain}}}"\n',
        'x = f"{{x:{{"a" + {chain}}}}}"\n',
        "x = f'''{{'''a''' + {chain}}}'''\n",
        # a comment or a name that looks like a prefix or a keyword
        "# ' \nx = {chain}\n",
        "x = if_ + {chain}\n",
    ],
)
def test_strings_and_comments_cannot_hide_a_chain(hidden):
    text = hidden.format(chain=" + ".join(["a"] * 600))
    problem = guards.nesting_problem(text)
    assert problem is not None and "too deep to parse safely" in problem[0]


def _notebook(source: list[str], image_bytes: int) -> str:
    """A one-cell Python notebook with ``source`` and an output image of ``image_bytes``."""
    return json.dumps({
        "cells": [{"cell_type": "code", "execution_count": 1, "id": "a", "metadata": {}, "source": source,
                   "outputs": [{"data": {"image/png": "A" * image_bytes}, "metadata": {},
                                "output_type": "display_data"}]}],
        "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
        "nbformat": 4, "nbformat_minor": 5,
    })


def test_a_notebooks_size_limit_is_on_its_code_not_on_its_outputs(tmp_path):
    code = ["import torch\n", "x = torch.zeros(2, 3)\n", "y = x.view(5)\n"]
    (tmp_path / "pictures.ipynb").write_text(_notebook(code, 6000))  # 6 KB of output, 50 bytes of code
    (tmp_path / "long.ipynb").write_text(_notebook(code + ["#" * 5000 + "\n"], 10))

    result = shapecheck(["lint", "--no-cache", "--max-file-size", "4000", "."], tmp_path)

    assert [_SEVERITY.sub(r"\1", line, count=1) for line in result.stdout.splitlines() if ".ipynb:" in line] == [
        "long.ipynb:1:1: SC000 not linted: the notebook's code is 4.9 KiB, over the 3.9 KiB limit (raise it "
        "with `max-file-size = 5050` under [tool.shapecheck] or `--max-file-size 5050`)",
        f"pictures.ipynb:cell 1:3:5: {SC103}",
    ]
