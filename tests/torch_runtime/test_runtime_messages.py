"""What a user sees when the runtime API fails: catchable as torch's error, the user's own frame
in the traceback, where an ``assert_shape`` was called, which extra to install without torch,
and a warning for a ``--shapecheck-packages`` name that was never imported."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import shapecheck  # noqa: E402
from shapecheck.errors import EinsumSyntaxError  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def test_einsum_syntax_error_is_caught_as_runtime_error_like_torch():
    a = torch.zeros(2, 3)
    with pytest.raises(RuntimeError):
        torch.einsum("ij,j!->i", a, torch.zeros(3))
    with pytest.raises(RuntimeError) as caught:
        shapecheck.einsum("ij,j!->i", a, torch.zeros(3))
    assert isinstance(caught.value, EinsumSyntaxError)
    with pytest.raises(ValueError):  # still a ValueError, as before
        shapecheck.einsum("ij,j!->i", a, torch.zeros(3))


@pytest.mark.parametrize(
    "spec, shapes",
    [("ij,jk->ik", [(2, 3), (4, 5)]), ("ij,j!k->ik", [(2, 3), (3, 5)]), ("ijk->i", [(2, 3)])],
)
def test_failing_einsum_traceback_ends_at_the_public_entry(spec, shapes):
    operands = [torch.zeros(s) for s in shapes]
    try:
        shapecheck.einsum(spec, *operands)
    except shapecheck.ShapeCheckError as err:
        frames = traceback.extract_tb(err.__traceback__)
        shown = "".join(traceback.format_exception(err))
    else:
        raise AssertionError("no error")
    assert frames[0].filename == __file__
    assert [f.name for f in frames[1:]] == ["einsum"], frames
    assert "During handling" not in shown and shown.count('File "') == 2, shown


def test_assert_shape_outside_a_checked_function_names_the_callers_line():
    x = torch.zeros(2, 3)
    line = sys._getframe().f_lineno + 2
    with pytest.raises(shapecheck.SignatureShapeError) as caught:
        shapecheck.assert_shape(x, "b c d")
    assert f"in assert_shape() ({__file__}:{line})" in str(caught.value)


def test_einsum_without_torch_names_the_extra(tmp_path):
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(
        """
        import sys

        class NoTorch:
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ImportError("No module named 'torch'", name="torch")

        sys.meta_path.insert(0, NoTorch())
        import shapecheck
        shapecheck.einsum("ij->ji", None)
        """
    ))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: shapecheck's runtime API")
    assert "install the `runtime` extra" in last and "[runtime]" in last


def test_pytest_plugin_warns_about_a_package_never_imported(tmp_path):
    (tmp_path / "test_user.py").write_text("def test_nothing():\n    assert True\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-p", "shapecheck.torch_runtime.pytest_plugin", "test_user.py",
               "--shapecheck-packages=json,not_a_real_pkg"]
    result = subprocess.run(command, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("shapecheck: warning: package 'not_a_real_pkg' (from --shapecheck-packages) was never "
            "imported") in result.stdout
    assert "package 'json'" not in result.stdout  # imported by pytest itself
