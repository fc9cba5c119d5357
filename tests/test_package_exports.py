"""Every name the runtime exports is reachable from the package itself."""

import os
import subprocess
import sys

import shapecheck
from shapecheck import runtime


def test_every_runtime_export_is_a_package_attribute():
    for name in runtime.__all__:
        assert getattr(shapecheck, name) is getattr(runtime, name), name


def test_package_lists_exactly_the_runtime_exports():
    assert set(runtime.__all__) == set(shapecheck._RUNTIME_NAMES) | set(shapecheck._ERROR_NAMES)


def test_disabled_is_reachable_from_a_fresh_interpreter():
    code = "import shapecheck; print(shapecheck.disabled())"
    env = {**os.environ, "SHAPECHECK_DISABLE": "1"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True"
