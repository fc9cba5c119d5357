"""Re-linting an edited document with the analysis of the unaffected top-level statements
replayed (:mod:`shapecheck.engine.unit_reuse`) gives exactly what a full lint gives."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapecheck.engine.config import Settings, registry_infos
from shapecheck.engine.positions import known_offsets, use_offsets
from shapecheck.server.document_lint import DocumentLint, lint_document

REPO = Path(__file__).resolve().parents[2]
SETTINGS = Settings(rules=registry_infos(), layers=[])
PATH = "model.py"

#: every example program with a bug, one after the other: 32 programs, findings of every rule
ALL_BAD = "".join(p.read_text().rstrip("\n") + "\n\n" for p in sorted((REPO / "examples").glob("sc*_bad.py")))

#: lines an edit puts into a function body (some make findings, some take them away)
SNIPPETS = [
    "tmp_a = torch.ones(2, 3).t().view(6)",
    "tmp_b = torch.zeros(4, 5) @ torch.zeros(3, 4)",
    "tmp_c = torch.randn(3, 4).sum(1) + torch.randn(3, 4)",
    "tmp_d = torch.ones(3, requires_grad=True).numpy()",
    "pass",
]

HELPER = '''import torch


def helper(x):
    return x.transpose(0, 1)


def caller():
    t = torch.ones(2, 3)
    y = helper(t)
    return y.view(-1)


def other(t):
    return t.sum(0)
'''

INIT = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class Other(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = Net()

    def forward(self, x):
        return self.net(x).view(-1)


def main():
    model = Net().cuda()
    x = torch.ones(2, 4)
    return model(x)
'''

#: `main` moves a `Net` to CUDA: `Net` is placed there, and its plain tensor attribute stays behind
MOVED = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.mask = torch.ones(4)

    def forward(self, x):
        return self.fc(x) * self.mask


def main():
    model = Net()
    model.to("cuda")
    x = torch.ones(2, 4, device="cuda")
    return model(x)
'''

#: `main` builds the one `Dense` of the file with sizes 5 and 3: its call-site walk has them
SIZED = '''import torch
import torch.nn as nn


class Dense(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.W = nn.Parameter(torch.randn(n_in, n_out))

    def forward(self, x):
        return x @ self.W


def main():
    layer = Dense(5, 3)
    x = torch.ones(2, 4)
    return layer(x)
'''

#: `g` calls `self.f()`, which `Sub` overrides: what it returns is unknown
OVERRIDDEN = '''import torch
import torch.nn as nn


class Base(nn.Module):
    def f(self):
        return torch.ones(2, 3).t()

    def g(self):
        return self.f().view(-1)


class Sub(Base):
    def f(self):
        return torch.ones(6)
'''

#: `make` resolves `ones` through the import above it
IMPORTED = '''import torch
from torch import ones


def make():
    return ones(2, 3).t().view(-1)


def other():
    return ones(4)
'''


def _full(text: str) -> DocumentLint:
    return lint_document(PATH, text, SETTINGS)


def _step(last: DocumentLint, text: str) -> DocumentLint:
    """Lint ``text`` as the server does after ``last``, check it against a full lint."""
    found = lint_document(PATH, text, SETTINGS, last.parsed, last.record)
    offsets = known_offsets(found.parsed.module) if found.parsed is not None else None
    whole = _full(text)
    if offsets is not None and found.parsed is not None:  # the server runs no full lint in between
        use_offsets(found.parsed.module, offsets, text)
    assert found.diagnostics == whole.diagnostics
    assert found.fixes == whole.fixes
    return found


def _edit(text: str, kind: int, where: int, what: int) -> str:
    """One edit of ``text``: a letter typed in a name, a line added to or blanked in a function
    body, a parameter added, a module-level name given another value, a statement added at
    module level."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    if kind == 0:
        spots = [i for i in range(1, len(text)) if text[i - 1].isalpha() and text[i].isalpha()]
        at = spots[where % len(spots)]
        return text[:at] + "abcdefgh"[what % 8] + text[at:]
    function = functions[where % len(functions)]
    statement = function.body[what % len(function.body)]
    row = statement.lineno - 1
    indent = lines[row][:len(lines[row]) - len(lines[row].lstrip())]
    if kind == 1:
        return "".join(lines[:row] + [indent + SNIPPETS[what % len(SNIPPETS)] + "\n"] + lines[row:])
    if kind == 2 and statement.end_lineno == statement.lineno:
        return "".join(lines[:row] + [indent + "pass\n"] + lines[row + 1:])
    if kind == 3 and function.args.args and not function.args.defaults and not function.args.vararg \
            and not function.args.kwonlyargs and not function.args.kwarg:
        last = function.args.args[-1]
        row = last.lineno - 1
        line = lines[row]
        return "".join(lines[:row] + [line[:last.end_col_offset] + ", zz=None" + line[last.end_col_offset:]]
                       + lines[row + 1:])
    if kind == 4:  # a module-level name gets another value
        assigns = [n for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
                   and n.lineno == n.end_lineno]
        if assigns:
            top = assigns[where % len(assigns)]
            value = ["torch.ones(3, 4).t()", "3", "torch.zeros(2, 5, device='cuda')", "None"][what % 4]
            row = top.lineno - 1
            return "".join(lines[:row] + [f"{top.targets[0].id} = {value}\n"] + lines[row + 1:])
    if kind == 5:  # a statement added at module level
        top = tree.body[where % len(tree.body)]
        row = top.lineno - 1 - len(getattr(top, "decorator_list", []))
        return "".join(lines[:row] + ["ZZ = torch.ones(2)\n"] + lines[row:])
    return text


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 10_000), st.integers(0, 100)), min_size=1, max_size=3))
def test_random_edits_of_the_examples_lint_as_a_full_lint(edits: list[tuple[int, int, int]]) -> None:
    text = ALL_BAD
    last = _full(text)
    for kind, where, what in edits:
        new = _edit(text, kind, where, what)
        try:
            ast.parse(new)
        except SyntaxError:
            continue
        text = new
        last = _step(last, text)


def test_an_edit_inside_one_function_walks_only_that_function() -> None:
    last = _full(ALL_BAD)
    assert last.record is not None
    text = ALL_BAD.replace("\n    ", "\n    # a comment\n    ", 1)
    found = _step(last, text)
    assert found.record is not None and found.record.walked <= 3
    assert len(found.diagnostics) == len(last.diagnostics)



def test_an_edit_in_a_middle_function_replays_the_statements_after_it() -> None:
    """No rule keeps a value made from the whole module (the module node itself) as state that
    every later statement reads: that would make each edit re-walk the rest of the file."""
    last = _full(ALL_BAD)
    middle = ALL_BAD.index("\n    ", len(ALL_BAD) // 2)
    text = ALL_BAD[:middle] + "\n    # a comment" + ALL_BAD[middle:]
    found = _step(last, text)
    assert found.record is not None and found.record.walked <= 3

def test_changing_a_helper_re_walks_its_caller() -> None:
    last = _full(HELPER)
    assert [d.code for d in last.diagnostics] == ["SC101"]
    changed = _step(last, HELPER.replace("x.transpose(0, 1)", "x.contiguous()"))
    assert [d.code for d in changed.diagnostics] == []
    assert changed.record is not None and changed.record.walked == 2  # the helper and its caller
    back = _step(changed, HELPER)
    assert [d.code for d in back.diagnostics] == ["SC101"]


def test_changing_init_re_walks_the_classes_that_read_it() -> None:
    last = _full(INIT)
    text = INIT.replace("self.fc = nn.Linear(4, 4)", "self.fc = nn.Linear(4, 4)\n        self.mask = torch.ones(4)")
    found = _step(last, text)
    assert found.record is not None and 1 <= found.record.walked < len(found.parsed.module.body)


def test_renaming_a_function_walks_it_and_the_statements_that_named_it() -> None:
    last = _full(HELPER)
    unused = _step(last, HELPER.replace("def other(", "def other2("))
    assert unused.record is not None and unused.record.walked == 1
    renamed = _step(last, HELPER.replace("def helper(", "def helper2("))
    assert _codes(renamed) == [] and renamed.record is not None and renamed.record.walked == 2
    back = _step(renamed, HELPER)
    assert _codes(back) == [(11, "SC101")]


def test_adding_a_statement_walks_everything() -> None:
    last = _full(HELPER)
    found = _step(last, HELPER.replace("def other(", "X = 1\n\n\ndef other("))
    assert found.record is not None and found.record.walked == len(found.parsed.module.body)


def test_a_text_that_does_not_parse_and_its_repair() -> None:
    last = _full(HELPER)
    broken = _step(last, HELPER.replace("return y.view(-1)", "return y.view(-1"))
    assert [d.code for d in broken.diagnostics] == ["SC000"] and broken.record is None
    repaired = _step(broken, HELPER)
    assert [d.code for d in repaired.diagnostics] == ["SC101"]


def _codes(found: DocumentLint) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in found.diagnostics]


def test_a_move_edited_in_one_function_re_places_the_class_it_moves() -> None:
    """The scan of module moves keeps what it found in each unchanged function from the last
    version: the edited function is read again."""
    last = _full(MOVED)
    assert _codes(last) == [(12, "SC401")] and "plain tensor attribute" in last.diagnostics[0].message
    to_cpu = _step(last, MOVED.replace('model.to("cuda")', 'model.to("cpu")'))
    assert _codes(to_cpu) == [(12, "SC401")] and "is on the CPU but its input `x` is on CUDA" \
        in to_cpu.diagnostics[0].message
    back = _step(to_cpu, MOVED)
    assert back.diagnostics == last.diagnostics


def test_a_construction_edited_in_one_function_changes_the_sizes_of_the_call_site_walk() -> None:
    """The index of constructions keeps each unchanged top-level statement's part from the last
    version: the edited statement is read again."""
    last = _full(SIZED)
    assert _codes(last) == [(11, "SC203")]
    fitting = _step(last, SIZED.replace("Dense(5, 3)", "Dense(4, 3)"))
    assert _codes(fitting) == []
    back = _step(fitting, SIZED)
    assert back.diagnostics == last.diagnostics


def test_a_base_class_edited_re_walks_the_classes_that_looked_through_all_classes() -> None:
    """`g` looked through every class of the file for an override of `f`: a class that stops
    deriving from `Base` changes the answer, and `Base` is walked again."""
    last = _full(OVERRIDDEN)
    assert _codes(last) == []
    unrelated = _step(last, OVERRIDDEN.replace("class Sub(Base):", "class Sub(nn.Module):"))
    assert _codes(unrelated) == [(10, "SC101")]
    assert unrelated.record is not None and unrelated.record.walked == 2
    back = _step(unrelated, OVERRIDDEN)
    assert _codes(back) == []


def test_an_import_edited_changes_what_the_unchanged_functions_resolve() -> None:
    """Each statement resolves the names it uses itself (the cache of resolved names is emptied
    before each statement is walked), so its trace holds the import aliases its answers read."""
    last = _full(IMPORTED)
    assert _codes(last) == [(6, "SC101")]
    numpy = _step(last, IMPORTED.replace("from torch import ones", "from numpy import ones"))
    assert _codes(numpy) == []
    back = _step(numpy, IMPORTED)
    assert back.diagnostics == last.diagnostics


def test_going_through_all_classes_reads_their_names_and_then_each_part_it_reads() -> None:
    from shapecheck.engine.unit_reuse import _PART, UnitTrace, _JClassIndex, _Journal
    from shapecheck.semantic.summaries import ClassInfo

    journal = _Journal()
    first = ClassInfo(None, {"f": None}, ("Base",))  # type: ignore[arg-type]
    index = _JClassIndex(journal, {"A": first, "B": ClassInfo(None, {}, ())})  # type: ignore[arg-type]
    journal.trace = trace = UnitTrace(None)  # type: ignore[arg-type]
    entries = index.copy()
    assert list(entries) == ["A", "B"] and trace.whole == {index._box: {"A": None, "B": None}}
    assert entries["A"].bases == ("Base",) and "f" in entries["A"].methods
    assert set(trace.reads) == {(index._box, (_PART, "A", "bases")), (index._box, (_PART, "A", "method", "f"))}
