"""The memo of the cross-file pass: each imported file is decoded, parsed and indexed once per
process for all its importers (reusing the parse of its own lint), a bounded number of them is
kept, and the findings are those of a cold memo, in any order and with a process pool."""

from __future__ import annotations

import pytest
from conftest import write_tree

from shapecheck.engine import run_imports
from shapecheck.engine import runner as lint
from shapecheck.engine.config import Selectors, build_settings
from shapecheck.engine.run_imports import module_name, module_names
from shapecheck.semantic import summaries

HELPERS = "def heads(x):\n    return x.transpose(1, 2)\n\n\ndef other(x):\n    return x\n"
FIXED = "def heads(x):\n    return x.transpose(1, 2).contiguous()\n\n\ndef other(x):\n    return x\n"


def _caller(name: str) -> str:
    return (
        "import torch\nfrom .layers import heads\n\n\n"
        f"def {name}():\n    y = torch.randn(2, 3, 4)\n    return heads(y).view(2, 12)\n"
    )


#: a package whose six modules call one helper of ``pkg/layers.py``
TREE = {"pkg/__init__.py": "", "pkg/layers.py": HELPERS,
        **{f"pkg/m{i}.py": _caller(f"f{i}") for i in range(6)}}
EXPECTED = [(f"pkg/m{i}.py", "SC101", 7) for i in range(6)]


@pytest.fixture(autouse=True)
def _cold_memo():
    summaries.forget_foreign_homes()
    lint._foreign_text.cache_clear()
    yield
    summaries.forget_foreign_homes()
    lint._foreign_text.cache_clear()


def _settings(root):
    return build_settings(str(root), None, Selectors(select=["SC101"]))


def _found(run):
    return [(d.path.replace("\\", "/"), d.code, d.line) for d in run.diagnostics]


def test_a_warm_memo_finds_what_a_cold_one_does(tmp_path, monkeypatch):
    write_tree(tmp_path, TREE)
    monkeypatch.chdir(tmp_path)
    cold = lint.run(["."], _settings(tmp_path), jobs=1, use_cache=False)
    assert _found(cold) == EXPECTED
    warm = lint.run(["."], _settings(tmp_path), jobs=1, use_cache=False)
    assert warm.diagnostics == cold.diagnostics


def test_importers_linted_before_the_helper_find_the_same(tmp_path, monkeypatch):
    # the helper's file sorts last: its parse is made for the first importer, not for its own lint
    tree = {"pkg/__init__.py": "", "pkg/z_layers.py": HELPERS,
            **{f"pkg/m{i}.py": _caller(f"f{i}").replace(".layers", ".z_layers") for i in range(6)}}
    write_tree(tmp_path, tree)
    monkeypatch.chdir(tmp_path)
    run = lint.run(["."], _settings(tmp_path), jobs=1, use_cache=False)
    assert _found(run) == EXPECTED


def test_a_process_pool_finds_what_one_process_does(tmp_path, monkeypatch):
    write_tree(tmp_path, TREE)
    monkeypatch.chdir(tmp_path)
    assert _found(lint.run(["."], _settings(tmp_path), jobs=2, use_cache=False)) == EXPECTED


def test_a_changed_helper_is_seen_with_a_warm_memo(tmp_path, monkeypatch):
    write_tree(tmp_path, TREE)
    monkeypatch.chdir(tmp_path)
    assert _found(lint.run(["."], _settings(tmp_path), jobs=1, use_cache=False)) == EXPECTED
    (tmp_path / "pkg/layers.py").write_text(FIXED)
    assert lint.run(["."], _settings(tmp_path), jobs=1, use_cache=False).diagnostics == []


def test_the_helper_file_is_parsed_once_for_its_lint_and_all_importers(tmp_path, monkeypatch):
    write_tree(tmp_path, TREE)
    monkeypatch.chdir(tmp_path)
    parsed = []
    original = summaries._parse
    monkeypatch.setattr(summaries, "_parse", lambda text: parsed.append(text) or original(text))
    assert _found(lint.run(["."], _settings(tmp_path), jobs=1, use_cache=False)) == EXPECTED
    assert parsed == []  # the parse made to lint pkg/layers.py serves its six importers
    assert list(summaries._HOMES) == [HELPERS]


def test_only_files_imported_from_are_marked_shared(tmp_path):
    write_tree(tmp_path, TREE)
    jobs = [lint.FileJob(str(tmp_path / path), text.encode()) for path, text in sorted(TREE.items())]
    shared = {job.path for job in lint._with_links(jobs) if job.shared}
    assert shared == {str(tmp_path / "pkg/layers.py")}


def test_the_memo_keeps_a_bounded_number_of_files():
    texts = [f"def f{i}(x):\n    return x\n" for i in range(summaries.HOME_MEMO_SIZE + 3)]
    homes = [summaries.foreign_home(text) for text in texts]
    assert list(summaries._HOMES) == texts[3:]
    assert summaries.foreign_home(texts[-1]) is homes[-1]
    assert list(homes[0].functions) == ["f0"]
    summaries.foreign_home(texts[3])  # used again: the newest
    summaries.foreign_home("def g(x):\n    return x\n")
    assert texts[4] not in summaries._HOMES and texts[3] in summaries._HOMES
    for i in range(lint.FOREIGN_TEXTS_KEPT + 2):
        lint._foreign_text(f"x = {i}\n".encode())
    assert lint._foreign_text.cache_info().currsize == lint.FOREIGN_TEXTS_KEPT


def test_each_importer_has_its_own_reanalysis_state():
    one = summaries.ForeignModule("pkg.layers", HELPERS)
    two = summaries.ForeignModule("pkg.layers", HELPERS)
    assert one.module is two.module
    assert one.definitions.functions is two.definitions.functions
    assert one.definitions is not two.definitions
    one.definitions.spent = 10
    assert two.definitions.spent == 0


def test_a_file_that_does_not_parse_has_no_definitions():
    assert summaries.ForeignModule("bad", "def f(:\n").definitions.functions == {}


def test_module_names_look_at_each_folder_once(tmp_path, monkeypatch):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "", "pkg/b.py": "", "top.py": ""})
    paths = [str(tmp_path / p) for p in ("pkg/__init__.py", "pkg/a.py", "pkg/b.py", "top.py")]
    expected = {p: module_name(p) for p in paths}
    looked = []
    original = run_imports._packages
    monkeypatch.setattr(run_imports, "_packages", lambda folder: looked.append(folder) or original(folder))
    assert module_names(paths) == expected
    assert sorted(looked) == sorted({str(tmp_path / "pkg"), str(tmp_path)})


@pytest.mark.parametrize("text", [
    "from a import b\nfrom .c import (d,\n    e as f)\nx = 1\nfrom g import h\\\n    , i\n",
    "from a import (b,\nfrom c import d)\nfrom e import f\n",  # no match starts inside another
    "  from a import b\n#from c import d\nfromage = 1\n\nfrom e import f",
    "", "from", "\r\nfrom a import b\r\n",
])
def test_line_matches_are_those_of_finditer(text):
    for pattern, word in ((run_imports._FROM_IMPORT, "from"), (run_imports._DEF, "def")):
        expected = [(m.span(), m.groups()) for m in pattern.finditer(text)]
        assert [(m.span(), m.groups()) for m in run_imports.line_matches(pattern, text, word)] == expected
    defs = "def a(x):\n    def b():\n        pass\nxdef c\ndef d():\n    pass\n"
    assert [m.group(1) for m in run_imports.line_matches(run_imports._DEF, defs, "def")] == ["a", "d"]
