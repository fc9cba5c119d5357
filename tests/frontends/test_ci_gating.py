"""CI gating: ``--severity error`` shows warnings without failing the build, and the default
``--jobs`` keeps small runs in one process."""

from __future__ import annotations

import json

from conftest import BAD, run_cli_subprocess, write_tree

from shapecheck.engine import runner
from shapecheck.rules.catalog import get_rule

#: SC603 (item-in-loop) is a warning, opt-in: ``.item()`` syncs with the device on every step.
WARNING_ONLY = (
    "import torch\ndef train(model, loader, loss_fn, opt):\n    total = 0.0\n    for x, y in loader:\n"
    "        loss = loss_fn(model(x), y)\n        loss.backward()\n        opt.step()\n"
    "        total += loss.item()\n    return total\n"
)


def test_warning_rule_is_a_warning():
    assert get_rule("SC603").severity == "warning" and get_rule("SC101").severity == "error"


def test_severity_error_fails_only_on_errors(tmp_path):
    write_tree(tmp_path, {"w.py": WARNING_ONLY})
    args = ["lint", "--no-cache", "--format", "json", "--select", "SC603,SC101"]
    shown = run_cli_subprocess([*args, "w.py"], tmp_path)
    assert shown.rc == 1 and [r["severity"] for r in json.loads(shown.out)] == ["warning"]
    gated = run_cli_subprocess([*args, "--severity", "error", "w.py"], tmp_path)
    assert gated.rc == 0 and [r["code"] for r in json.loads(gated.out)] == ["SC603"]  # still shown
    write_tree(tmp_path, {"e.py": BAD})
    both = run_cli_subprocess([*args, "--severity", "error", "w.py", "e.py"], tmp_path)
    assert both.rc == 1 and sorted(r["code"] for r in json.loads(both.out)) == ["SC101", "SC603"]


def test_bad_severity_is_a_usage_error(tmp_path):
    write_tree(tmp_path, {"e.py": BAD})
    result = run_cli_subprocess(["lint", "--severity", "fatal", "e.py"], tmp_path)
    assert result.rc == 2 and "--severity" in result.err


def _jobs(count: int, size: int) -> list:
    return [runner.FileJob(f"f{i}.py", b"x" * size) for i in range(count)]


def test_small_default_runs_stay_in_one_process(monkeypatch):
    monkeypatch.setattr(runner.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert runner.auto_workers(_jobs(3, 10**6), 8) == 1  # few files
    assert runner.auto_workers(_jobs(50, 1000), 8) == 1  # little code
    assert runner.auto_workers(_jobs(50, 10**5), 8) == 8


def test_a_busy_machine_gets_fewer_workers(monkeypatch):
    monkeypatch.setattr(runner.os, "getloadavg", lambda: (7.6, 0.0, 0.0))
    assert runner.auto_workers(_jobs(50, 10**5), 8) == 1
    monkeypatch.setattr(runner.os, "getloadavg", lambda: (3.0, 0.0, 0.0))
    assert runner.auto_workers(_jobs(50, 10**5), 8) == 6


def test_default_jobs_lints_a_small_project_in_process(tmp_path, monkeypatch):
    write_tree(tmp_path, {f"m{i}.py": BAD for i in range(8)})
    import multiprocessing

    def no_pool(*args, **kwargs):
        raise AssertionError("a pool was started for a small run")

    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    from shapecheck.engine.config import Settings, registry_infos

    monkeypatch.chdir(tmp_path)
    outcome = runner.run(["."], Settings(rules=registry_infos(), root=str(tmp_path)), jobs=8,
                         use_cache=False, auto_jobs=True)
    assert [d.path for d in outcome.diagnostics] == [f"m{i}.py" for i in range(8)]
