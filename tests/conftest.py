"""Shared helpers for the linter's tests: run the CLI in-process or as a subprocess, write trees."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@dataclass
class CliResult:
    """Exit status and captured output of one command."""

    rc: int
    out: str
    err: str


def run_cli_inprocess(args: list[str], cwd: Path) -> CliResult:
    """``shapecheck ARGS`` in this process, from folder ``cwd``."""
    from shapecheck.frontends.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd(), sys.stdout, sys.stderr
    os.chdir(cwd)
    sys.stdout, sys.stderr = out, err
    try:
        rc = main(list(args))
    finally:
        os.chdir(old[0])
        sys.stdout, sys.stderr = old[1], old[2]
    return CliResult(rc, out.getvalue(), err.getvalue())


def run_cli_subprocess(args: list[str], cwd: Path, stdin: bytes = b"", extra_env=None) -> CliResult:
    """``python -m shapecheck ARGS`` as a child process (for stdin and import checks)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra_env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "shapecheck", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=env,
        timeout=300,
    )
    return CliResult(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))


@pytest.fixture
def cli():
    """Run ``shapecheck`` in-process: ``cli(args, cwd)``."""
    return run_cli_inprocess


@pytest.fixture
def cli_subprocess():
    """Run ``python -m shapecheck`` as a subprocess: ``cli_subprocess(args, cwd, stdin=b"")``."""
    return run_cli_subprocess


def write_tree(root: Path, files: dict) -> Path:
    """Create ``files`` (relative path -> str or bytes) under ``root``; returns ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


#: A file SC101 flags once, on line 3 (column 5), with a fix.
BAD = "import torch\nx = torch.randn(3, 4)\ny = x.t().view(12)\n"
#: A file nothing flags.
GOOD = "import torch\nx = torch.randn(3, 4)\ny = x.t().reshape(12)\n"
