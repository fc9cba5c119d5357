"""A fix never changes what a working program does, beyond the bug its rule reports (issue 9, item 2).

Every fixable rule (SC101, SC309, SC310, SC402, SC403, SC404, SC605) meets adversarial programs:
names a function only reads (module-level, shadowed by a comprehension), names declared
``global``/``nonlocal``, parameter slots, leaves that require grad, parameters without evidence
that they are tensors, ``**options``, f-strings, loops over ``.parameters()`` of a non-module,
modules moved in place. Each program is a complete script on the CPU that prints its result.
The real command lints them (the markers the user sees: ``[*]`` safe fix, ``[-]`` unsafe fix,
none), fixes copies with ``--fix`` and with ``--fix --unsafe-fixes``, and all three versions
run in a child process. A safe fix must leave the outcome (stdout, and the exception if one
escapes) exactly as it was, unless the case documents the difference as the reported bug; an
unsafe fix may change more, and where it does the case says why it is unsafe.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapecheck.engine.runner import fix_text, lint_text
from shapecheck.rules.catalog import all_rules, get_rule

FIXABLE = ("SC101", "SC309", "SC310", "SC402", "SC403", "SC404", "SC605")
#: the outcome does not change
SAME = "same"


@dataclass(frozen=True)
class Case:
    """One program: the findings the user sees, and what each fixed version prints.

    ``findings`` are ``(line, code, mark)`` with mark ``"[*]"``, ``"[-]"`` or ``""``.
    ``safe``/``unsafe``: :data:`SAME`, or the exact outcome of the ``--fix`` /
    ``--fix --unsafe-fixes`` version (stdout, then ``!ExceptionName`` when one escaped);
    ``why`` says why it differs.
    """

    name: str
    program: str
    findings: tuple
    safe: str = SAME
    unsafe: str = SAME
    why: str = ""


CASES = [
    # ---------------------------------------------------------------- SC402: assign the move back
    Case(
        "sc402_issue_module_name_read_in_function",
        "import torch\n\nx = torch.randn(3)\n\n\ndef show():\n    print(x.dtype)\n    x.double()\n"
        "    print(x.sum().item() > -100)\n\n\nshow()\n",
        ((8, "SC402", ""),),
        why="no fix: `x = x.double()` makes x local to show(): UnboundLocalError at `print(x.dtype)`",
    ),
    Case(
        "sc402_issue_parameter_slot",
        "import torch\nimport torch.nn as nn\n\n\nclass Scale(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = nn.Parameter(torch.ones(3))\n\n"
        "    def forward(self, x):\n        self.w.double()\n        return x * self.w\n\n\n"
        "m = Scale()\nprint(m(torch.ones(3)).tolist())\nm.w.double()\nprint(m.w.dtype)\n",
        ((11, "SC402", ""), (17, "SC402", "")),
        why="no fix: `self.w = self.w.double()` raises TypeError (a Parameter slot)",
    ),
    Case(
        "sc402_comprehension_variable_shadows_nothing",
        "import torch\n\nx = torch.ones(2)\n\n\ndef comp():\n    ys = [x * 2 for x in range(2)]\n"
        "    x.half()\n    print(ys, x.dtype)\n\n\ncomp()\n",
        ((8, "SC402", ""),),
        why="no fix: the comprehension's x is its own; the function only reads the module's x",
    ),
    Case(
        "sc402_subscript_and_tensor_property",
        "import torch\n\nxs = [torch.zeros(2), torch.ones(2)]\nxs[0].double()\nt = torch.zeros(2, 3)\n"
        "t.T.double()\nprint(xs[0].dtype, t.dtype)\n",
        ((4, "SC402", ""), (6, "SC402", "")),
        why="no fix: `t.T = ...` raises AttributeError; `t[0] = ...` would copy back into t's dtype",
    ),
    Case(
        "sc402_module_level_name",
        "import torch\n\nx = torch.arange(3.0)\nx.double()\nprint(x.dtype)\n",
        ((4, "SC402", "[*]"),),
        safe="torch.float64\n",
        unsafe="torch.float64\n",
        why="the bug: x kept its dtype",
    ),
    Case(
        "sc402_move_to_meta_device",
        "import torch\n\nx = torch.ones(3)\nx.to('meta')\nprint(x.device)\n",
        ((4, "SC402", "[*]"),),
        safe="meta\n",
        unsafe="meta\n",
        why="the bug: x stayed on the CPU (meta stands in for CUDA)",
    ),
    Case(
        "sc402_local_name",
        "import torch\n\n\ndef f():\n    y = torch.zeros(2)\n    y.double()\n    return y.dtype\n\n\nprint(f())\n",
        ((6, "SC402", "[*]"),),
        safe="torch.float64\n",
        unsafe="torch.float64\n",
        why="the bug: y kept its dtype",
    ),
    Case(
        "sc402_function_parameter",
        "import torch\n\n\ndef prep(t: torch.Tensor):\n    t.double()\n    return t.dtype\n\n\n"
        "a = torch.zeros(2)\nprint(prep(a), a.dtype)\n",
        ((5, "SC402", "[*]"),),
        safe="torch.float64 torch.float32\n",
        unsafe="torch.float64 torch.float32\n",
        why="the bug: t kept its dtype; the caller's tensor is untouched either way",
    ),
    Case(
        "sc402_global_declared",
        "import torch\n\nx = None\n\n\ndef make():\n    global x\n    x = torch.zeros(2)\n    x.double()\n"
        "    return x.dtype\n\n\nprint(make(), x.dtype)\n",
        ((9, "SC402", "[-]"),),
        unsafe="torch.float64 torch.float64\n",
        why="unsafe: the assignment rebinds the module's x, which every other function reads",
    ),
    Case(
        "sc402_nonlocal_declared",
        "import torch\n\n\ndef counter():\n    total = torch.zeros(2)\n\n    def add():\n        nonlocal total\n"
        "        total = torch.ones(2)\n        total.half()\n        return total.dtype\n\n"
        "    return add(), total.dtype\n\n\nprint(counter())\n",
        ((10, "SC402", "[-]"),),
        unsafe="(torch.float16, torch.float16)\n",
        why="unsafe: the assignment rebinds the enclosing function's total",
    ),
    Case(
        "sc402_leaf_that_requires_grad",
        "import torch\n\nw = torch.randn(3, requires_grad=True)\nw.double()\n"
        "opt = torch.optim.SGD([w], lr=0.1)\nprint(w.is_leaf)\n",
        ((4, "SC402", "[-]"),),
        unsafe="!ValueError",
        why="unsafe: the new w is no leaf, and an optimizer refuses it",
    ),
    Case(
        "sc402_modules_move_in_place",
        "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\n    def half_precision(self):\n"
        "        self.half()\n        self.fc.float()\n\n\nnet = Net()\nnet.to(torch.float64)\nnet.fc.double()\n"
        "net.double()\nprint(net.fc.weight.dtype)\nnet.half_precision()\nprint(net.fc.weight.dtype)\n",
        (),
        why="modules convert in place: nothing to report",
    ),
    # ------------------------------------------------------- SC403: factory without device=
    Case(
        "sc403_annotated_parameter",
        "import torch\nfrom torch import Tensor\n\n\ndef add_bias(x: Tensor) -> Tensor:\n"
        "    bias = torch.arange(3.0)\n    return x + bias\n\n\nprint(add_bias(torch.ones(3)).tolist())\n"
        "print(add_bias(torch.ones(3, device='meta')).device)\n",
        ((7, "SC403", "[*]"),),
        safe="[1.0, 2.0, 3.0]\nmeta\n",
        unsafe="[1.0, 2.0, 3.0]\nmeta\n",
        why="the bug: a CPU bias met an input on another device (meta stands in for CUDA)",
    ),
    Case(
        "sc403_fstring",
        "import torch\nfrom torch import Tensor\n\n\ndef show(x: Tensor) -> None:\n"
        "    print(f\"{(x + torch.zeros(3)).tolist()}\")\n\n\nshow(torch.ones(3))\n",
        ((6, "SC403", "[*]"),),
    ),
    Case(
        "sc403_unannotated_forward_gets_a_float",
        "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        return x + torch.zeros(3)\n\n\nprint(Net()(1.5).tolist())\n",
        ((7, "SC403", "[-]"),),
        unsafe="!AttributeError",
        why="unsafe: nothing shows x is a tensor; a float has no .device",
    ),
    Case(
        "sc403_parameter_rebound",
        "import torch\nfrom torch import Tensor\n\n\ndef f(x: Tensor) -> Tensor:\n    h = x * 2\n"
        "    x = x.shape\n    return h + torch.zeros(3)\n\n\nprint(f(torch.ones(3)).tolist())\n",
        ((8, "SC403", "[-]"),),
        unsafe="!AttributeError",
        why="unsafe: x is rebound to a torch.Size before the factory runs",
    ),
    Case(
        "sc403_options_may_hold_the_device",
        "import torch\nfrom torch import Tensor\n\n\ndef f(x: Tensor, **opts) -> Tensor:\n"
        "    return x + torch.zeros(3, **opts)\n\n\nprint(f(torch.ones(3), device='cpu').tolist())\n",
        (),
        why="`**opts` may hold device=: not a finding (a fix would pass device twice: TypeError)",
    ),
    # ----------------------------------------------------------------- SC310: .data
    Case(
        "sc310_read_through_numpy",
        "import torch\n\nw = torch.arange(3.0, requires_grad=True)\nv = w.data.numpy()\nprint(v.tolist())\n",
        ((4, "SC310", "[*]"),),
    ),
    Case(
        "sc310_inplace_on_shared_result",
        "import torch\n\nw = torch.ones(3, requires_grad=True)\nloss = (w * w).sum()\nv = w.data.cpu()\n"
        "v.mul_(0)\nloss.backward()\nprint(w.grad.tolist())\n",
        ((5, "SC310", "[*]"),),
        safe="!RuntimeError",
        unsafe="!RuntimeError",
        why="the bug: the gradient was silently wrong ([0, 0, 0] for 2w = [2, 2, 2]); now autograd raises",
    ),
    Case(
        "sc310_parameters_of_a_non_module",
        "import numpy as np\nimport torch\n\n\nclass Holder:\n    def parameters(self):\n"
        "        return [np.arange(3)]\n\n\ndef dump(model):\n    for p in model.parameters():\n"
        "        print(p.data.tolist())\n\n\ndump(Holder())\n",
        ((12, "SC310", "[-]"),),
        unsafe="!AttributeError",
        why="unsafe: only the method name says p is a parameter; a NumPy array's .data has no .detach()",
    ),
    # ------------------------------------------------------- SC309: numpy() on a grad tensor
    Case(
        "sc309_numpy_of_grad_tensor",
        "import torch\n\nw = torch.arange(3.0, requires_grad=True)\na = (w * 2).numpy()\nprint(a.tolist())\n",
        ((4, "SC309", "[*]"),),
        safe="[0.0, 2.0, 4.0]\n",
        unsafe="[0.0, 2.0, 4.0]\n",
        why="the bug: numpy() raised RuntimeError",
    ),
    Case(
        "sc309_inside_fstring",
        "import torch\n\nw = torch.arange(3.0, requires_grad=True)\nprint(f\"{w.numpy().tolist()}\")\n",
        ((4, "SC309", "[*]"),),
        safe="[0.0, 1.0, 2.0]\n",
        unsafe="[0.0, 1.0, 2.0]\n",
        why="the bug: numpy() raised RuntimeError",
    ),
    # ----------------------------------------------------------- SC404: numpy() on CUDA
    Case(
        "sc404_cuda_when_available",
        "import torch\n\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "x = torch.arange(3.0, device=device)\nprint(x.numpy().tolist())\n",
        ((5, "SC404", "[*]"),),
    ),
    # ------------------------------------------------------------- SC101: view -> reshape
    Case(
        "sc101_view_after_transpose",
        "import torch\n\nx = torch.arange(6.0).view(2, 3)\ny = x.transpose(0, 1).view(-1)\nprint(y.tolist())\n",
        ((4, "SC101", "[*]"),),
        safe="[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]\n",
        unsafe="[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]\n",
        why="the bug: view() raised RuntimeError",
    ),
    Case(
        "sc101_view_as_dtype_is_legal",
        "import torch\n\na = torch.arange(12.0).view(3, 4).t()\nb = a.view(torch.int32)\n"
        "c = torch.rand(32, 32, 3).permute(2, 0, 1).view(3, -1)\nprint(b.shape, c.shape)\n",
        (),
    ),
    # ------------------------------------------------------- SC605: inverse then matmul
    Case(
        "sc605_solve_rounds_differently",
        "import torch\n\nn = 6\ni = torch.arange(n, dtype=torch.float32)\nA = 1.0 / (i[:, None] + i[None, :] + 1.0)\n"
        "b = torch.ones(n)\nA_inv = torch.inverse(A)\nreference = A_inv @ b\nx = torch.inverse(A) @ b\n"
        "print(torch.equal(x, reference))\n",
        ((9, "SC605", "[-]"),),
        unsafe="False\n",
        why="unsafe: solve() rounds differently (a Hilbert matrix makes it show)",
    ),
    Case(
        "sc605_well_conditioned",
        "import torch\n\nA = torch.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=torch.float64)\n"
        "b = torch.tensor([1.0, 2.0], dtype=torch.float64)\nx = torch.inverse(A) @ b\n"
        "print(torch.allclose(x, torch.tensor([0.2, 0.6], dtype=torch.float64)))\n",
        ((5, "SC605", "[-]"),),
    ),
]

_RUNNER = r"""
import contextlib, io, json, runpy, sys
outcomes = {}
for path in sys.argv[1:]:
    out = io.StringIO()
    raised = ""
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_path(path, run_name="__main__")
        except BaseException as exc:
            raised = "!" + type(exc).__name__
    outcomes[path] = out.getvalue() + raised
print(json.dumps(outcomes))
"""


def _run_programs(paths: list[Path]) -> dict[str, str]:
    """Each program's outcome, all run in one child process (torch is imported once)."""
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, *map(str, paths)],
        capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONHASHSEED="0"),
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _findings(output: str, folder: str) -> dict[str, list]:
    """``{case name: [(line, code, mark), ...]}`` from ``lint`` text output."""
    found: dict[str, list] = {}
    for line in output.splitlines():
        if not line.startswith(folder + "/"):
            continue
        location, _, rest = line.partition(": ")
        path, number, _column = location.rsplit(":", 2)
        code, mark = rest.split(" ")[0], rest.split(" ")[1]
        found.setdefault(Path(path).stem, []).append(
            (int(number), code, mark if mark in ("[*]", "[-]") else "")
        )
    return found


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The cases linted, fixed both ways and run: findings, fixed texts, outcomes."""
    pytest.importorskip("torch")
    from conftest import run_cli_subprocess

    root = tmp_path_factory.mktemp("fix_semantics")
    for folder in ("orig", "safe", "unsafe"):
        (root / folder).mkdir()
        for case in CASES:
            (root / folder / f"{case.name}.py").write_text(case.program, encoding="utf-8")
    select = ["--no-cache", "--select", ",".join(FIXABLE)]
    listed = run_cli_subprocess(["lint", "--output-format", "concise", *select, "orig"], root)
    safe = run_cli_subprocess(["lint", *select, "--fix", "safe"], root)
    # more files than the engine lints in-process: the flag must reach the worker processes
    unsafe = run_cli_subprocess(["lint", *select, "--jobs", "2", "--fix", "--unsafe-fixes", "unsafe"], root)
    paths = [root / f / f"{c.name}.py" for f in ("orig", "safe", "unsafe") for c in CASES]
    outcomes = _run_programs(paths)
    return {
        "root": root,
        "listed": listed,
        "safe": safe,
        "unsafe": unsafe,
        "findings": _findings(listed.out, "orig"),
        "outcome": {(p.parent.name, p.stem): outcomes[str(p)] for p in paths},
        "text": {(p.parent.name, p.stem): p.read_text(encoding="utf-8") for p in paths},
    }


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_user_sees_the_findings_and_their_fix_markers(corpus, case):
    assert sorted(corpus["findings"].get(case.name, [])) == sorted(case.findings)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fix_applies_exactly_the_marked_fixes(corpus, case):
    text = corpus["text"]
    marks = {mark for _, _, mark in case.findings}
    assert (text["safe", case.name] != case.program) == ("[*]" in marks)
    assert (text["unsafe", case.name] != case.program) == bool(marks & {"[*]", "[-]"})


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fixed_programs_behave_as_documented(corpus, case):
    outcome = corpus["outcome"]
    before = outcome["orig", case.name]
    for kind, expected in (("safe", case.safe), ("unsafe", case.unsafe)):
        after = outcome[kind, case.name]
        assert after == (before if expected == SAME else expected), (kind, case.why)
    if case.safe == SAME:
        assert outcome["safe", case.name] == before


def test_safe_fixes_never_break_a_program_that_ran(corpus):
    """Across the table, a program that ran still runs after ``--fix``, but for the one whose
    gradient was silently wrong: autograd now says so (the bug SC310 reports)."""
    broken = [
        case.name for case in CASES
        if "!" not in corpus["outcome"]["orig", case.name] and "!" in corpus["outcome"]["safe", case.name]
    ]
    assert broken == ["sc310_inplace_on_shared_result"]


def test_the_issue_programs_keep_running_and_say_why_there_is_no_fix(corpus):
    out = corpus["listed"].out
    assert ("orig/sc402_issue_module_name_read_in_function.py:8:5: SC402 error: `x.double()` returns a new "
            "tensor and leaves `x` unchanged; the result is thrown away, so `x` keeps its old device and "
            "dtype; assign the result where `x` is defined: `x` is not local to `show`, and "
            "`x = x.double()` there would raise UnboundLocalError") in out
    assert ("orig/sc402_issue_parameter_slot.py:11:9: SC402 error: `self.w.double()` returns a new tensor and "
            "leaves `self.w` unchanged; the result is thrown away, so `self.w` keeps its old device and "
            "dtype; `self.w` is a leaf that requires grad, most likely a parameter, which refuses a plain "
            "tensor: if `self` is a module, `self.double()` converts its parameters in place") in out
    for kind in ("safe", "unsafe"):
        for name in ("sc402_issue_module_name_read_in_function", "sc402_issue_parameter_slot"):
            assert "!" not in corpus["outcome"][kind, name]


def test_summary_counts_unsafe_fixes_and_says_how_to_apply_them(corpus):
    out = corpus["listed"].out.splitlines()
    safe = sum(1 for c in CASES for f in c.findings if f[2] == "[*]")
    unsafe = sum(1 for c in CASES for f in c.findings if f[2] == "[-]")
    total = sum(len(c.findings) for c in CASES)
    assert f"Found {total} problems ({safe} fixable, {unsafe} with an unsafe fix)." in out
    assert "Run `shapecheck lint --fix` to apply the fixes marked [*]." in out
    assert ("Fixes marked [-] may change what the code does: review them, then apply them with "
            "`shapecheck lint --fix --unsafe-fixes`.") in out
    assert corpus["listed"].rc == 1
    fixed_line = next(line for line in corpus["safe"].out.splitlines() if line.startswith("Fixed "))
    assert fixed_line.startswith(f"Fixed {safe} problems, ")
    fixed_line = next(line for line in corpus["unsafe"].out.splitlines() if line.startswith("Fixed "))
    assert fixed_line.startswith(f"Fixed {safe + unsafe} problems, ")


def test_fixes_are_stable_a_second_run_changes_nothing(corpus, cli_subprocess):
    root = corpus["root"]
    select = ["--no-cache", "--select", ",".join(FIXABLE)]
    for folder, extra in (("safe", []), ("unsafe", ["--unsafe-fixes"])):
        before = {p.name: p.read_text(encoding="utf-8") for p in (root / folder).iterdir()}
        again = cli_subprocess(["lint", *select, "--fix", *extra, folder], root)
        assert "Fixed 0 problems" in again.out
        assert {p.name: p.read_text(encoding="utf-8") for p in (root / folder).iterdir()} == before


# ------------------------------------------------------------------ the command line


def test_diff_shows_unsafe_fixes_only_when_asked(tmp_path, cli_subprocess):
    program = "import torch\n\nw = torch.randn(3, requires_grad=True)\nw.double()\n"
    (tmp_path / "leaf.py").write_text(program, encoding="utf-8")
    plain = cli_subprocess(["lint", "--no-cache", "--diff", "leaf.py"], tmp_path)
    assert (plain.rc, plain.out, plain.err) == (0, "", "Would fix 0 problems.\n")
    asked = cli_subprocess(["lint", "--no-cache", "--diff", "--unsafe-fixes", "leaf.py"], tmp_path)
    assert asked.rc == 1
    assert "-w.double()\n+w = w.double()\n" in asked.out
    assert asked.err == "Would fix 1 problem.\n"
    assert (tmp_path / "leaf.py").read_text(encoding="utf-8") == program


def test_markers_survive_the_result_cache(tmp_path, cli_subprocess):
    (tmp_path / "a.py").write_text(
        "import torch\nx = torch.zeros(2)\nx.half()\nw = torch.randn(3, requires_grad=True)\nw.double()\n",
        encoding="utf-8",
    )
    first = cli_subprocess(["lint", "a.py"], tmp_path)
    second = cli_subprocess(["lint", "a.py"], tmp_path)
    assert first.out == second.out
    assert "a.py:3:1: SC402 [*] " in first.out and "a.py:5:1: SC402 [-] " in first.out


def test_unsafe_fixes_alone_is_a_usage_error(tmp_path, cli_subprocess):
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    result = cli_subprocess(["lint", "--unsafe-fixes", "a.py"], tmp_path)
    assert result.rc == 2
    assert "--unsafe-fixes needs --fix or --diff" in result.err
    assert "Traceback" not in result.err


def test_statistics_mark_unsafe_fixes(tmp_path, cli_subprocess):
    (tmp_path / "a.py").write_text("import torch\nw = torch.randn(3, requires_grad=True)\nw.double()\n",
                                   encoding="utf-8")
    result = cli_subprocess(["lint", "--no-cache", "--statistics", "a.py"], tmp_path)
    assert "    1\tSC402\t[-] discarded-device-move" in result.out.splitlines()


def test_stdin_fix_leaves_unsafe_fixes_alone(tmp_path, cli_subprocess):
    program = "import torch\nx = torch.zeros(2)\nx.half()\nw = torch.randn(3, requires_grad=True)\nw.double()\n"
    result = cli_subprocess(["lint", "--fix", "-"], tmp_path, stdin=program.encode())
    assert result.out == program.replace("x.half()", "x = x.half()")
    both = cli_subprocess(["lint", "--fix", "--unsafe-fixes", "-"], tmp_path, stdin=program.encode())
    assert both.out == program.replace("x.half()", "x = x.half()").replace("w.double()", "w = w.double()")


# ------------------------------------------------------------------ the rules' own examples


def _unsafe_examples():
    for rule in all_rules():
        for index, example in enumerate(rule.invalid_examples()):
            if example.unsafe_fixed is not None:
                yield pytest.param(rule, example, id=f"{rule.code}-unsafe-{index}")


@pytest.mark.parametrize("rule, example", list(_unsafe_examples()))
def test_unsafe_example_is_fixed_only_with_unsafe_fixes(rule, example):
    assert example.fixed is None, "an example has a safe fix or an unsafe one, not both"
    [diag] = [d for d in lint_text(example.code, [rule]) if d.code == rule.code]
    assert (diag.fixable, diag.unsafe_fix) == (False, True)
    assert fix_text(example.code, [rule]) == (example.code, 0)
    fixed, applied = fix_text(example.code, [rule], unsafe_fixes=True)
    assert (fixed, applied) == (example.unsafe_fixed, 1)
    assert fix_text(fixed, [rule], unsafe_fixes=True) == (fixed, 0)


def _examples_with_a_safe_fix():
    for rule in all_rules():
        for index, example in enumerate(rule.invalid_examples()):
            if example.fixed is not None:
                yield pytest.param(rule, example, id=f"{rule.code}-fixed-{index}")


@pytest.mark.parametrize("rule, example", list(_examples_with_a_safe_fix()))
def test_safe_example_is_marked_safe(rule, example):
    [diag] = [d for d in lint_text(example.code, [rule]) if d.code == rule.code]
    assert (diag.fixable, diag.unsafe_fix) == (True, False)


def _examples_without_a_fix():
    for rule in all_rules():
        if not rule.fixable:
            continue
        for index, example in enumerate(rule.invalid_examples()):
            if example.fixed is None and example.unsafe_fixed is None:
                yield pytest.param(rule, example, id=f"{rule.code}-nofix-{index}")


@pytest.mark.parametrize("rule, example", list(_examples_without_a_fix()))
def test_example_without_a_fixed_form_gets_no_fix(rule, example):
    [diag] = [d for d in lint_text(example.code, [rule]) if d.code == rule.code]
    assert (diag.fixable, diag.unsafe_fix) == (False, False)
    assert fix_text(example.code, [rule], unsafe_fixes=True) == (example.code, 0)


# ------------------------------------------------------------------ scopes, as CPython reads them

_SCOPES_SOURCE = """\
def f(p, *args, **kw):
    global g
    a = 1
    print(x, p)
    [y for y in range(3)]
    [(w := 1) for _ in range(3)]
    def inner():
        nonlocal a
        a = 2
    match p:
        case {"k": m}:
            pass
    try:
        pass
    except ValueError as e:
        pass
    z: int
    import os as o
    for t in args:
        pass
    with open(p) as h:
        pass
    del kw
"""


@pytest.mark.parametrize("name, expected", [
    ("p", "local"), ("args", "local"), ("kw", "local"), ("a", "local"), ("w", "local"), ("m", "local"),
    ("e", "local"), ("z", "local"), ("o", "local"), ("t", "local"), ("h", "local"), ("inner", "local"),
    ("g", "shared"), ("x", "free"), ("print", "free"), ("y", None),
])
def test_name_scope_follows_cpython(name, expected):
    import libcst as cst

    from shapecheck.rules.helpers import fix_safety

    function = cst.parse_module(_SCOPES_SOURCE).body[0]
    assert fix_safety.name_scope(fix_safety.Place(function, False), name) == expected


def test_nonlocal_names_are_shared_in_the_inner_function():
    import libcst as cst

    from shapecheck.rules.helpers import fix_safety

    outer = cst.parse_module(_SCOPES_SOURCE).body[0]
    inner = next(s for s in outer.body.body if isinstance(s, cst.FunctionDef))
    assert fix_safety.name_scope(fix_safety.Place(inner, False), "a") == fix_safety.SHARED
    assert fix_safety.rebound(fix_safety.Place(outer, False), "p") is False
    assert fix_safety.rebound(fix_safety.Place(outer, False), "kw") is True


def test_scope_of_a_statement_in_a_class_nested_in_a_function():
    src = ("import torch\ndef outer():\n    z = torch.zeros(2)\n    class Inner:\n        z.double()\n"
           "    return z\n")
    found = [d for d in lint_text(src, [get_rule("SC402")]) if d.code == "SC402"]
    assert all(not d.fixable for d in found)
    assert fix_text(src, [get_rule("SC402")], unsafe_fixes=True) == (src, 0)


# ------------------------------------------------------------------ generated function bodies

_BODY_LINES = {
    "read": "    print(x.dtype)",
    "bind": "    x = torch.zeros(2)",
    "comprehension": "    print([x for x in range(2)])",
    "maybe_bind": "    if len(sys.argv) > 99:\n        x = torch.ones(2)",
    "closure": "    def inner():\n        return x.dtype\n    print(inner())",
    "move": "    x.double()",
}


def _program(use_global: bool, before: list, after: list) -> str:
    body = (["    global x"] if use_global else []) + [_BODY_LINES[k] for k in before] + [
        _BODY_LINES["move"]] + [_BODY_LINES[k] for k in after]
    return ("import sys\nimport torch\n\nx = torch.zeros(2)\n\n\ndef f():\n" + "\n".join(body)
            + "\n\n\nf()\nprint(x.dtype)\n")


def _execute(source: str) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(source, "<case>", "exec"), {"__name__": "__main__"})
        except Exception as exc:  # the outcome is what is compared
            return out.getvalue() + "!" + type(exc).__name__
    return out.getvalue()


_LINES = st.lists(st.sampled_from(sorted(set(_BODY_LINES) - {"move"})), max_size=3)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(use_global=st.booleans(), before=_LINES, after=_LINES)
def test_safe_move_fix_never_changes_whether_a_function_runs(use_global, before, after):
    """Any mix of reads, bindings, comprehensions, closures and ``global`` around ``x.double()``:
    the safe fix keeps every exception (or its absence) and changes only the dtype printed."""
    pytest.importorskip("torch")
    source = _program(use_global, before, after)
    fixed, applied = fix_text(source, [get_rule("SC402")])
    before_outcome, after_outcome = _execute(source), _execute(fixed)
    assert ("!" in after_outcome) == ("!" in before_outcome), fixed
    assert after_outcome.replace("float64", "float32") == before_outcome, fixed
    if applied:  # only a name the function binds itself, never a global one
        assert not use_global and {"bind", "maybe_bind"} & set(before + after)
