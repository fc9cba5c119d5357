"""The pytest plugin: ``--shapecheck-packages`` checks an untouched package's annotated functions."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("jaxtyping")

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"

USER_TESTS = textwrap.dedent(
    """
    import torch
    from runtime_pkg.layers import Projection, attention_scores, plain, scale_channels


    def test_fitting_calls():
        assert scale_channels(torch.randn(2, 3), torch.randn(3)).shape == (2, 3)
        assert attention_scores(torch.randn(2, 4, 8), torch.randn(2, 5, 8)).shape == (2, 4, 5)
        assert Projection(8, 3)(torch.randn(2, 4, 8)).shape == (2, 4, 3)
        assert Projection.pairwise(torch.randn(2, 3), torch.randn(4, 3)).shape == (2, 4)
        assert plain(1, 2) == 3


    def test_wrong_weight_length():
        # torch broadcasts a length-1 weight silently; the annotation says one per channel
        out = scale_channels(torch.randn(2, 3), torch.randn(1))
        assert out.shape == (2, 3)


    def test_wrong_pairwise_width():
        Projection.pairwise(torch.randn(2, 3), torch.randn(4, 5))
    """
)


def _run(tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(TESTS), env.get("PYTHONPATH", "")])
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.pop("SHAPECHECK_DISABLE", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-p", "shapecheck.torch_runtime.pytest_plugin", "test_user.py", *options]
    return subprocess.run(command, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)


def test_plugin_checks_the_named_package(tmp_path):
    result = _run(tmp_path, "--shapecheck-packages=runtime_pkg")
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "1 passed" in out and "2 failed" in out, out
    assert ("scale_channels(): argument 'weight' has shape (1,), expected (channels,): "
            "dim 0 (channels) is 1, but channels = 3 from argument 'x'") in out
    assert "SignatureShapeError" in out
    assert "Projection.pairwise(): argument 'b' has shape (4, 5)" in out
    assert "dims bound so far" in out


def test_without_the_option_nothing_is_checked(tmp_path):
    result = _run(tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "2 passed" in out and "1 failed" in out, out
    assert "SignatureShapeError" not in out


def test_ini_option_and_bad_names(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\nshapecheck_packages = runtime_pkg\n")
    result = _run(tmp_path, "-v")
    out = result.stdout + result.stderr
    assert "2 failed" in out and "SignatureShapeError" in out, out
    assert "shapecheck: checking shapes in runtime_pkg" in out
    (tmp_path / "pytest.ini").unlink()
    result = _run(tmp_path, "--shapecheck-packages=not a-name")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "is not a package name" in result.stderr


def test_instrument_module_in_process():
    import importlib

    from shapecheck.torch_runtime import pytest_plugin

    sys.path.insert(0, str(TESTS))
    try:
        module = importlib.import_module("runtime_pkg.layers")
        module = importlib.reload(module)
        count = pytest_plugin.instrument_module(module)
        assert count == 4
        assert getattr(module.scale_channels, "__shapecheck__", False)
        assert not getattr(module.plain, "__shapecheck__", False)
        assert pytest_plugin.instrument_module(module) == 0
    finally:
        sys.path.remove(str(TESTS))
        importlib.reload(module)


def test_preloaded_package_and_reexports(tmp_path):
    """A package imported before the plugin is configured (by a conftest) is instrumented in
    place, its re-exported names included."""
    (tmp_path / "conftest.py").write_text("import runtime_pkg\n")
    (tmp_path / "test_reexport.py").write_text(textwrap.dedent(
        """
        import torch
        import runtime_pkg


        def test_reexported():
            runtime_pkg.scale_channels(torch.randn(2, 3), torch.randn(1))
        """))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(TESTS), env.get("PYTHONPATH", "")])
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.pop("SHAPECHECK_DISABLE", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
               "shapecheck.torch_runtime.pytest_plugin", "--shapecheck-packages=runtime_pkg", "test_reexport.py"]
    result = subprocess.run(command, cwd=str(tmp_path), env=env, capture_output=True, text=True,
                            timeout=300)
    out = result.stdout + result.stderr
    assert "1 failed" in out and "scale_channels(): argument 'weight'" in out, out


def test_packages_from():
    from shapecheck.torch_runtime.pytest_plugin import packages_from

    assert packages_from("a, b.c,,d") == ["a", "b.c", "d"]
    assert packages_from(None) == []
