"""``shapecheck server`` without the ``server`` extra: one line naming the extra, exit 2."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCKED_RUN = textwrap.dedent(
    """
    import importlib.abc, sys

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("pygls", "lsprotocol"):
                raise ImportError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Block())
    from shapecheck.frontends.cli import main
    sys.exit(main(["server"]))
    """
)


def test_server_without_the_extra_says_which_extra_to_install():
    done = subprocess.run([sys.executable, "-c", BLOCKED_RUN], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("shapecheck: error: the language server needs the `server` extra")
    assert "pip install 'torch-shapecheck[server]'" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1


def test_server_is_listed_in_the_help():
    done = subprocess.run([sys.executable, "-m", "shapecheck", "--help"], capture_output=True, text=True)
    assert "server" in done.stdout and "language server" in done.stdout
