"""The result cache against what a repository (or another user) can put in its way.

Issue 9, items 1, 8 (never cache an internal error), 10 and 12: a linked or foreign cache folder,
links, FIFOs and foreign files inside it, corrupted cache files, the cache's location. Each test
builds the hostile tree and runs the real command.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import stat
import sys
import time
from pathlib import Path

import pytest

from conftest import BAD, GOOD, run_cli_subprocess, write_tree

from shapecheck.engine import cache
from shapecheck.engine import runner as lint
from shapecheck.engine.config import Selectors, build_settings, find_project_root, registry_infos, selected_codes
from shapecheck.rules.catalog import get_rule

CACHE = ".shapecheck_cache"
MARK = b"shapecheck-cache "
#: the cache format the header names (engine/cache.py bumps it when rows change)
FORMAT = f"{cache._FORMAT} ".encode()
#: another file SC101 flags, on line 2
BAD2 = "import torch\nz = torch.zeros(2, 5).transpose(0, 1).view(10)\n"
BROKEN = "def broken(:\n    pass\n"
WARNING = "shapecheck: warning: not using the cache:"
#: Giving a file to another user takes root (the tests run as root; elsewhere these skip).
needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")


def _project(root: Path) -> Path:
    return write_tree(root, {"pyproject.toml": "[project]\nname = 'x'\n", "a.py": BAD, "b.py": GOOD, "c.py": BAD2})


def _lint(cwd: Path, *args: str, env=None):
    return run_cli_subprocess(["lint", *args], cwd, extra_env=env)


def _snapshot(top: Path) -> dict:
    """Every entry under ``top`` (links not followed): its kind and its bytes or link target."""
    found = {}
    for folder, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            rel = os.path.relpath(path, top)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                found[rel] = ("file", Path(path).read_bytes(), stat.S_IMODE(info.st_mode))
            elif stat.S_ISFIFO(info.st_mode):
                found[rel] = ("fifo",)
            else:
                found[rel] = ("dir",)
    return found


def _assert_untouched(before: dict, after: dict, cache_folder: str = "") -> None:
    """Everything in ``before`` is still there, unchanged; anything new is a marked cache file
    in ``cache_folder`` (a new configuration: the linter's code changed between two runs, as it
    does while it is being edited)."""
    assert {k: v for k, v in after.items() if k in before} == before
    for rel in set(after) - set(before):
        assert cache_folder and os.path.dirname(rel) == cache_folder, rel
        assert after[rel][0] == "file" and after[rel][1].startswith(MARK), rel


def _victim(folder: Path) -> Path:
    """A folder of files that a cache following a link would write over or prune."""
    files = {f"{i:020x}.json": f'{{"precious": {i}}}\n' for i in range(12)}
    files.update({
        "data.json": '{"keep": true}\n',
        "rules-local.txt": "keep me\n",
        "rules-0123456789abcdef0123.json": "[]\n",
        "results-0123456789abcdef0123.json": "not ours\n",
        ".gitignore": "# mine\n",
    })
    write_tree(folder, files)
    # even a file that looks like one of the cache's own must not be touched through a link
    (folder / "results-aaaaaaaaaaaaaaaaaaaa.json").write_bytes(MARK + b"2 0\n{}")
    old = time.time() - 10 * 86400
    for path in folder.iterdir():
        os.utime(path, (old, old))
    return folder


def _encode(body) -> bytes:
    """A cache file as shapecheck writes it: the marked header with the checksum, then JSON."""
    data = json.dumps(body).encode()
    return MARK + FORMAT + hashlib.sha256(data).hexdigest().encode() + b"\n" + data


def _raw(data: bytes) -> bytes:
    """A cache file holding ``data`` (not necessarily JSON) under a correct header."""
    return MARK + FORMAT + hashlib.sha256(data).hexdigest().encode() + b"\n" + data


def _decode(blob: bytes):
    header, _, data = blob.partition(b"\n")
    assert header == MARK + FORMAT + hashlib.sha256(data).hexdigest().encode()
    return json.loads(data)


def _cache_files(root: Path, prefix: str) -> list[Path]:
    return sorted((root / CACHE).glob(f"{prefix}-*.json"))


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """Exit status and output of an uncached run over the standard project."""
    root = _project(tmp_path_factory.mktemp("cold"))
    result = _lint(root, "--no-cache", ".")
    assert result.rc == 1 and "a.py:3:5: SC101" in result.out and "c.py:2:" in result.out
    return result.rc, result.out


# --- item 1: links and foreign folders --------------------------------------------------------


@pytest.mark.parametrize("target", ["absolute", "relative", "inside-project", "dangling"])
def test_linked_cache_folder_is_never_written_through(tmp_path, cold, target):
    project = _project(tmp_path / "project")
    victim = _victim(tmp_path / "victim" if target != "inside-project" else project / "data")
    link = {
        "absolute": str(victim), "relative": "../victim", "inside-project": "data",
        "dangling": str(tmp_path / "nowhere"),
    }[target]
    os.symlink(link, project / CACHE)
    before = _snapshot(tmp_path)
    for _ in range(2):  # the first run would write, the second prune
        result = _lint(project, ".")
        assert (result.rc, result.out) == cold
        assert result.err.count(WARNING) == 1 and "is a symbolic link" in result.err
    assert _snapshot(tmp_path) == before
    assert not (tmp_path / "nowhere").exists()


def test_links_fifos_and_foreign_files_inside_the_cache_folder(tmp_path, cold):
    project = _project(tmp_path / "project")
    victim = _victim(tmp_path / "victim")
    assert _lint(project, ".").rc == 1
    folder = project / CACHE
    results, rules = _cache_files(project, "results")[0], _cache_files(project, "rules")[0]
    # the cache's own names become links to copies of themselves: reading them would be a hit
    for own in (results, rules, folder / ".gitignore"):
        copy = victim / ("copy-" + own.name)
        copy.write_bytes(own.read_bytes())
        own.unlink()
        os.symlink(copy, own)
    for i in range(12):  # names the cache prunes, as links to the victim's files
        os.symlink(victim / f"{i:020x}.json", folder / f"results-{i:020x}.json")
    os.symlink(victim / "rules-local.txt", folder / "rules-ffffffffffffffffffff.json")
    os.symlink(victim / "data.json", folder / ".tmp-0123456789abcdef.part")
    os.mkfifo(folder / "results-eeeeeeeeeeeeeeeeeeee.json")
    write_tree(folder, {"notes.json": "mine\n", "ffffffffffffffffffff.json": "{}\n"})
    before = _snapshot(tmp_path)
    for _ in range(2):
        result = _lint(project, ".")
        assert (result.rc, result.out) == cold
        assert "Traceback" not in result.err
    _assert_untouched(before, _snapshot(tmp_path), f"project/{CACHE}")


@needs_root
def test_cache_folder_of_another_user_is_neither_trusted_nor_written(tmp_path, cold):
    project = _project(tmp_path / "project")
    assert _lint(project, ".").rc == 1
    results = _cache_files(project, "results")[0]
    body = _decode(results.read_bytes())
    body["entries"] = {path: [digest, []] for path, (digest, _) in body["entries"].items()}
    results.write_bytes(_encode(body))
    forged = _lint(project, ".")
    assert forged.rc == 0 and forged.out.startswith("All checks passed")  # the forgery is read ...
    for folder, dirnames, filenames in os.walk(project / CACHE):
        for name in [folder] + [os.path.join(folder, n) for n in dirnames + filenames]:
            os.chown(name, 65534, 65534)
    before = _snapshot(tmp_path)
    result = _lint(project, ".")
    assert (result.rc, result.out) == cold  # ... unless the folder belongs to someone else
    assert WARNING in result.err and "belongs to another user" in result.err
    assert _snapshot(tmp_path) == before


@needs_root
def test_files_of_another_user_in_the_cache_folder_are_not_read(tmp_path, cold):
    project = _project(tmp_path / "project")
    assert _lint(project, ".").rc == 1
    results = _cache_files(project, "results")[0]
    body = _decode(results.read_bytes())
    body["entries"] = {path: [digest, []] for path, (digest, _) in body["entries"].items()}
    results.write_bytes(_encode(body))
    os.chown(results, 65534, 65534)
    result = _lint(project, ".")
    assert (result.rc, result.out) == cold
    assert results.stat().st_uid == 65534 and _decode(results.read_bytes()) == body


def test_fifo_and_folder_at_the_caches_own_names(tmp_path, cold):
    project = _project(tmp_path / "project")
    assert _lint(project, ".").rc == 1
    results, rules = _cache_files(project, "results")[0], _cache_files(project, "rules")[0]
    results.unlink()
    os.mkfifo(results)  # opening it for reading would wait forever for a writer
    rules.unlink()
    rules.mkdir()
    before = _snapshot(tmp_path)
    result = _lint(project, ".")
    assert (result.rc, result.out, result.err) == (*cold, "")
    _assert_untouched(before, _snapshot(tmp_path), f"project/{CACHE}")


def test_without_descriptor_relative_calls_the_same_checks_hold(tmp_path, monkeypatch):
    """Where ``openat`` is missing (Windows), paths are checked with lstat and realpath."""
    from shapecheck.engine import cache_folder

    monkeypatch.setattr(cache_folder, "_AT", False)
    project = _project(tmp_path / "project")
    victim = _victim(tmp_path / "victim")
    os.symlink(victim, project / CACHE)
    monkeypatch.chdir(project)
    before = _snapshot(tmp_path)
    expected = lint.run(["."], build_settings(".", None, Selectors()), use_cache=False).diagnostics
    for _ in range(2):
        assert lint.run(["."], build_settings(".", None, Selectors(), use_cache=True)).diagnostics == expected
    assert _snapshot(tmp_path) == before
    os.unlink(project / CACHE)
    assert lint.run(["."], build_settings(".", None, Selectors(), use_cache=True)).diagnostics == expected
    results = _cache_files(project, "results")[0]
    copy = victim / "copy.json"
    copy.write_bytes(results.read_bytes())
    results.unlink()
    os.symlink(copy, results)
    before = _snapshot(tmp_path)
    assert lint.run(["."], build_settings(".", None, Selectors(), use_cache=True)).diagnostics == expected
    assert _snapshot(tmp_path) == before
    results.unlink()
    assert lint.run(["."], build_settings(".", None, Selectors(), use_cache=True)).diagnostics == expected
    linted = []
    original = lint._Linter.lint
    monkeypatch.setattr(
        lint._Linter, "lint", lambda self, job, mode: linted.append(job.path) or original(self, job, mode)
    )
    assert lint.run(["."], build_settings(".", None, Selectors(), use_cache=True)).diagnostics == expected
    assert linted == []


def test_concurrent_runs_agree_and_leave_only_the_caches_files(tmp_path, cold):
    import subprocess

    from conftest import REPO

    project = _project(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    selections = [[], [], ["--select", "SC1"], ["--select", "SC2"]]
    procs = [
        subprocess.Popen([sys.executable, "-m", "shapecheck", "lint", *sel, "."], cwd=project, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for sel in selections
    ]
    outputs = [(p.communicate(timeout=300), p.returncode) for p in procs]
    outputs = [(rc, out.decode(), err.decode()) for (out, err), rc in outputs]
    for sel, (rc, out, err) in zip(selections, outputs):
        assert err == ""
        if sel != ["--select", "SC2"]:
            assert (rc, out) == cold
    names = sorted(os.listdir(project / CACHE))
    assert names[0] == ".gitignore" and len(names) == 1 + 3 + 1
    assert all((project / CACHE / n).read_bytes().startswith(MARK) for n in names[1:])


def test_prune_removes_only_the_caches_own_files(tmp_path, cold):
    project = _project(tmp_path / "project")
    folder = project / CACHE
    old = time.time() - 2 * 86400
    foreign = {
        "notes.json": "mine\n", "0123456789abcdef0123.json": "{}\n", "rules-mine": "x\n",
        "results-0123456789abcdef0123.json": "not marked\n", ".tmp-0123456789abcdef.part": "mine\n",
        "sub/results-0123456789abcdef4567.json": "deeper\n",
    }
    write_tree(folder, foreign)
    ours_stale_temp = folder / ".tmp-fedcba9876543210.part"
    ours_stale_temp.write_bytes(MARK + b"2 half-written")
    for i in range(12):  # old results files of other configurations, written by shapecheck
        (folder / f"results-{i:020x}.json").write_bytes(_encode({"key": ["old", i], "entries": {}}))
    (folder / "rules-ffffffffffffffffffff.json").write_bytes(_encode({"key": ["old"], "rules": []}))
    for path in [*folder.rglob("*")]:
        if path.is_file():
            os.utime(path, (old, old))
    result = _lint(project, ".")
    assert (result.rc, result.out) == cold
    for rel, text in foreign.items():
        assert (folder / rel).read_text() == text
    assert not ours_stale_temp.exists()
    assert not (folder / "rules-ffffffffffffffffffff.json").exists()
    kept = _cache_files(project, "results")
    assert len([p for p in kept if p.read_bytes().startswith(MARK)]) == cache.KEEP_FILES
    assert len(_cache_files(project, "rules")) == 1


# --- item 10: corrupted caches ----------------------------------------------------------------


#: How a stored entry (``[digest, rows]``) is damaged, by name.
ENTRY_CORRUPTIONS = {
    "entry-int": lambda e: 5,
    "entry-dict": lambda e: {},
    "entry-null": lambda e: None,
    "entry-short-list": lambda e: [e[0]],
    "entry-long-list": lambda e: [*e, []],
    "digest-int": lambda e: [12, e[1]],
    "digest-not-hex": lambda e: ["z" * 64, e[1]],
    "rows-dict": lambda e: [e[0], {}],
    "rows-string": lambda e: [e[0], "SC101"],
    "row-int": lambda e: [e[0], [3]],
    "row-short": lambda e: [e[0], [e[1][0][:4]]],
    "row-long": lambda e: [e[0], [[*e[1][0], "more"]]],
    "row-line-str": lambda e: [e[0], [["3", *e[1][0][1:]]]],
    "row-line-bool": lambda e: [e[0], [[True, *e[1][0][1:]]]],
    "row-line-negative": lambda e: [e[0], [[-1, *e[1][0][1:]]]],
    "row-line-huge": lambda e: [e[0], [[10 ** 40, *e[1][0][1:]]]],
    "row-line-float": lambda e: [e[0], [[3.0, *e[1][0][1:]]]],
    "row-code-unselected": lambda e: [e[0], [[*e[1][0][:4], "SC998", *e[1][0][5:]]]],
    "row-code-internal-error": lambda e: [e[0], [[*e[1][0][:4], "SC999", *e[1][0][5:]]]],
    "row-code-int": lambda e: [e[0], [[*e[1][0][:4], 101, *e[1][0][5:]]]],
    "row-message-list": lambda e: [e[0], [[*e[1][0][:7], ["x"], *e[1][0][8:]]]],
    "row-fixable-int": lambda e: [e[0], [[*e[1][0][:8], 1, *e[1][0][9:]]]],
    "row-nested-deep": lambda e: [e[0], [json.loads("[" * 500 + "]" * 500)]],
}


def test_damaged_entries_are_misses_and_are_rewritten(tmp_path):
    files = {f"e_{name.replace('-', '_')}.py": BAD for name in ENTRY_CORRUPTIONS}
    project = write_tree(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n", "good.py": GOOD, **files})
    cold = _lint(project, "--no-cache", ".")
    assert cold.rc == 1 and cold.out.count("SC101") == len(ENTRY_CORRUPTIONS)
    assert _lint(project, ".").out == cold.out
    [path] = _cache_files(project, "results")
    body = _decode(path.read_bytes())
    for name, damage in ENTRY_CORRUPTIONS.items():
        rel = f"e_{name.replace('-', '_')}.py"
        body["entries"][rel] = damage(body["entries"][rel])
    path.write_bytes(_encode(body))
    result = _lint(project, ".")
    assert (result.rc, result.out, result.err) == (cold.rc, cold.out, "")
    repaired = _decode(_newest(project, "results").read_bytes())["entries"]
    assert sorted(repaired) == sorted([*files, "good.py"])
    assert all(entry[1][0][:5] == [3, 5, 3, 19, "SC101"] for rel, entry in repaired.items() if rel != "good.py")


#: How a whole results file is damaged, by name: a function of its bytes.
FILE_CORRUPTIONS = {
    "entries-list": lambda blob: _encode({**_decode(blob), "entries": []}),
    "body-list": lambda blob: _encode([1, 2]),
    "body-int": lambda blob: _encode(7),
    "key-other": lambda blob: _encode({**_decode(blob), "key": ["other"]}),
    "extra-top-level-key": lambda blob: _encode({**_decode(blob), "more": 1}),
    "deep-nesting": lambda blob: _raw(b"[" * 100_000 + b"]" * 100_000),
    "truncated": lambda blob: blob[: len(blob) // 2],
    "header-only": lambda blob: blob.partition(b"\n")[0] + b"\n",
    "empty": lambda blob: b"",
    "garbage": lambda blob: bytes(range(256)) * 40,
    "stale-checksum": lambda blob: blob.replace(b"SC101", b"SC102", 1),
    "invalid-utf8": lambda blob: _raw(b'{"key": "\xff\xfe"}'),
    "huge-number": lambda blob: _raw(b"1" * 5000),
}


def _rules(change, checksum=True):
    """Damage the manifest's rows with ``change``; keep its checksum right or leave it stale."""
    def apply(blob):
        body = _decode(blob)
        change(body["rules"])
        if checksum:
            return _encode(body)
        return blob.partition(b"\n")[0] + b"\n" + json.dumps(body).encode()
    return apply


#: How the manifest is damaged, by name.
MANIFEST_CORRUPTIONS = {
    "missing-rule": _rules(lambda r: r.remove(next(x for x in r if x[0] == "SC101")), checksum=False),
    "extra-rule": _rules(lambda r: r.append(["SC777", "made-up", "error", True, False]), checksum=False),
    "row-int": _rules(lambda r: r.__setitem__(0, 1)),
    "row-all-ints": _rules(lambda r: r.__setitem__(0, [1, 2, 3, 4, 5])),
    "row-short": _rules(lambda r: r.__setitem__(0, ["SC101"])),
    "row-enabled-str": _rules(lambda r: r[0].__setitem__(3, "yes")),
    "row-duplicate": _rules(lambda r: r.append(list(r[0]))),
    "row-engine-code": _rules(lambda r: r[0].__setitem__(0, "SC999")),
    "rules-dict": _rules(lambda r: (r.clear(), r.append({}))),
    "rules-empty": _rules(lambda r: r.clear()),
    "deep-nesting": lambda blob: _raw(b'{"key": ' + b"[" * 100_000),
    "truncated": lambda blob: blob[: len(blob) // 2],
    "garbage": lambda blob: bytes(reversed(range(256))) * 10,
}

#: One run damages the results file and the manifest at once (one subprocess for two cases).
PAIRED = list(itertools.zip_longest(FILE_CORRUPTIONS, MANIFEST_CORRUPTIONS))


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """The standard project with a valid cache, to be copied."""
    project = _project(tmp_path_factory.mktemp("warm"))
    assert _lint(project, ".").rc == 1
    return project


def _newest(project: Path, prefix: str) -> Path:
    """The cache file of this kind written last (others are there only when the linter's own
    code changed between two runs, as it does while it is being edited)."""
    return max(_cache_files(project, prefix), key=lambda p: p.stat().st_mtime_ns)


@pytest.mark.parametrize(("results_damage", "manifest_damage"), PAIRED, ids=[f"{a}+{b}" for a, b in PAIRED])
def test_damaged_cache_files_are_misses_and_are_rewritten(tmp_path, cold, warm, results_damage, manifest_damage):
    project = tmp_path / "project"
    shutil.copytree(warm, project, symlinks=True)
    for prefix, damage in (("results", FILE_CORRUPTIONS.get(results_damage)),
                           ("rules", MANIFEST_CORRUPTIONS.get(manifest_damage))):
        if damage is not None:
            path = _newest(project, prefix)
            path.write_bytes(damage(path.read_bytes()))
    result = _lint(project, ".")
    assert (result.rc, result.out, result.err) == (*cold, "")
    body = _decode(_newest(project, "results").read_bytes())
    assert sorted(body["entries"]) == ["a.py", "b.py", "c.py"]
    assert [row[:5] for row in body["entries"]["a.py"][1]] == [[3, 5, 3, 19, "SC101"]]
    rows = _decode(_newest(project, "rules").read_bytes())["rules"]
    assert rows == [[i.code, i.name, i.severity, i.default_enabled, i.fixable] for i in registry_infos()]


def test_repaired_cache_answers_the_next_run_alone(tmp_path, cold):
    project = _project(tmp_path)
    assert _lint(project, ".").rc == 1
    [path] = _cache_files(project, "results")
    path.write_bytes(_raw(b"[" * 100_000))
    repairing = _lint(project, ".")
    assert (repairing.rc, repairing.out, repairing.err) == (*cold, "")
    result = _lint(project, ".", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert (result.rc, result.out) == cold
    imported = {line.split("|")[-1].strip() for line in result.err.splitlines() if line.startswith("import time:")}
    assert "shapecheck.engine.cache" in imported and "libcst" not in imported


def test_cache_key_holds_the_python_and_libcst_installations():
    key = cache.results_key(["SC101"])
    assert sys.version in key and sys.implementation.name in key
    import importlib.util

    origin = importlib.util.find_spec("libcst").origin
    assert [origin, os.stat(origin).st_size, os.stat(origin).st_mtime_ns] in key


# --- item 8: an internal error or an unparsable file is never cached ---------------------------


def test_results_with_an_internal_error_or_a_syntax_error_are_not_cached(tmp_path, monkeypatch):
    project = write_tree(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n", "a.py": BAD, "b.py": GOOD,
                                    "broken.py": BROKEN})
    monkeypatch.chdir(project)

    def settings():
        return build_settings(str(project), None, Selectors(), use_cache=True)

    rule = get_rule("SC101")

    def crash(self, node, ctx):
        raise ValueError("boom")

    with monkeypatch.context() as patched:
        patched.setattr(rule, "visit_Call", crash)
        first = lint.run(["."], settings(), jobs=1)
    assert [(d.path, d.code) for d in first.diagnostics] == [
        ("a.py", "SC999"), ("b.py", "SC999"), ("broken.py", "SC000"),
    ]
    stored = cache.Cache.open(str(project), selected_codes(settings())).entries
    assert stored == {}
    linted = []
    original = lint._Linter.lint
    monkeypatch.setattr(
        lint._Linter, "lint", lambda self, job, mode: linted.append(job.path) or original(self, job, mode)
    )
    second = lint.run(["."], settings(), jobs=1)
    assert [(d.path, d.code) for d in second.diagnostics] == [("a.py", "SC101"), ("broken.py", "SC000")]
    assert linted == ["a.py", "b.py", "broken.py"]
    assert sorted(cache.Cache.open(str(project), selected_codes(settings())).entries) == ["a.py", "b.py"]
    linted.clear()
    assert lint.run(["."], settings(), jobs=1).diagnostics == second.diagnostics
    assert linted == ["broken.py"]


def test_a_file_that_starts_crashing_loses_its_cached_entry(tmp_path, monkeypatch):
    project = write_tree(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n", "a.py": BAD})
    monkeypatch.chdir(project)
    codes = selected_codes(build_settings(str(project), None, Selectors()))
    assert len(lint.run(["."], build_settings(str(project), None, Selectors())).diagnostics) == 1
    store = cache.Cache.open(str(project), codes)
    diagnostics = store.get("a.py", hashlib.sha256(BAD.encode()).hexdigest())
    assert [d.code for d in diagnostics] == ["SC101"]
    store.put("a.py", "0" * 64, [lint._engine_diagnostic("a.py", "SC999", "internal error")])
    store.save()
    assert cache.Cache.open(str(project), codes).entries == {}


# --- item 12: where the cache lives ------------------------------------------------------------


def test_without_pyproject_the_cache_lives_at_the_linted_trees_root(tmp_path, cold):
    tree = write_tree(tmp_path / "tree", {"a.py": BAD, "b.py": GOOD, "c.py": BAD2, "pkg/d.py": GOOD})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = _lint(elsewhere, str(tree))
    assert result.rc == 1
    assert not (elsewhere / CACHE).exists()
    assert (tree / CACHE).is_dir() and len(_cache_files(tree, "results")) == 1
    assert _lint(elsewhere, str(tree / "pkg" / "d.py")).rc == 0
    assert not (elsewhere / CACHE).exists() and (tree / "pkg" / CACHE).is_dir()
    again = _lint(elsewhere, str(tree), env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert (again.rc, again.out.replace(str(tree) + "/", "")) == cold
    assert "libcst" not in {line.split("|")[-1].strip() for line in again.err.splitlines()}


def test_project_root_of_several_paths_is_their_common_folder(tmp_path):
    tree = write_tree(tmp_path / "tree", {"x/a.py": BAD, "y/z/b.py": GOOD})
    assert find_project_root(str(tree / "x")) == str(tree / "x")
    assert find_project_root(str(tree / "x" / "a.py")) == str(tree / "x")
    assert find_project_root([str(tree / "x" / "a.py"), str(tree / "y" / "z")]) == str(tree)
    write_tree(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n"})
    assert find_project_root(str(tree / "x")) == str(tmp_path)


def test_several_linted_paths_share_one_cache_at_their_common_folder(tmp_path):
    tree = write_tree(tmp_path / "tree", {"x/a.py": BAD, "y/b.py": GOOD})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert _lint(elsewhere, str(tree / "x"), str(tree / "y")).rc == 1
    assert (tree / CACHE).is_dir()
    assert not (tree / "x" / CACHE).exists() and not (elsewhere / CACHE).exists()


def test_without_pyproject_exclude_globs_stay_relative_to_the_working_folder(tmp_path):
    write_tree(tmp_path, {"src/gen/a.py": BAD, "src/b.py": GOOD})
    result = _lint(tmp_path, "src", "--exclude", "src/gen/*")
    assert (result.rc, result.out) == (0, "All checks passed.\n")
    assert (tmp_path / "src" / CACHE).is_dir() and not (tmp_path / CACHE).exists()
