"""The shape algebra imports neither torch nor libcst: it must work where importing them fails."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent(
    """
    import importlib.abc
    import sys

    BLOCKED = {"torch", "libcst", "numpy", "opt_einsum", "jaxtyping", "beartype"}

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{name} is blocked in this test")
            return None

    sys.meta_path.insert(0, Block())
    for name in list(sys.modules):
        if name.split(".")[0] in BLOCKED:
            del sys.modules[name]

    import io
    from shapecheck import broadcast, einsum_parser, errors, shapes
    from shapecheck.frontends import algebra_cli

    spec = einsum_parser.parse("bij,bjk->bik")
    assert spec.output_shape((2, 3, 4), (2, 4, 5)).dims == (2, 3, 5)
    assert einsum_parser.parse("b h i d, b h j d -> b h i j").letters() == "bhid,bhjd->bhij"
    plan = einsum_parser.parse("ab,bc,cd->ad").contraction_order((2, 3), (3, 4), (4, 5))
    assert len(plan.path) == 2 and plan.flops > 0
    try:
        spec.output_shape((2, 3, 4), (2, 5, 6))
    except errors.EinsumShapeError as e:
        assert "index j is 4 in operand 0 but 5 in operand 1" in e.reason
    else:
        raise AssertionError("no error")
    try:
        einsum_parser.parse("ij->ii")
    except errors.EinsumSyntaxError as e:
        assert "^" in str(e)
    assert broadcast.broadcast_shapes((2, 1), (3,)).dims == (2, 3)
    try:
        broadcast.broadcast_shapes((2, 3), (2,))
    except errors.BroadcastError as e:
        assert e.axis == -1
    assert shapes.dims_to_shape(shapes.parse_dims("*b c")).rest_name == "b"
    out = io.StringIO()
    assert algebra_cli.einsum_command("ij,jk,kl", ["2x3", "3x4", "4x5"], out) == 0
    assert algebra_cli.broadcast_command(["2x1", "3"], out) == 0
    for name in BLOCKED:
        assert name not in sys.modules, name
    print("ok")
    """
)


def test_algebra_works_without_torch_and_libcst():
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_algebra_sources_do_not_name_torch_or_libcst():
    for name in ("shapes", "broadcast", "einsum_parser", "einsum_order", "errors", "strides", "frontends/algebra_cli"):
        text = (REPO / "shapecheck" / f"{name}.py").read_text(encoding="utf-8")
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith(("import ", "from ")):
                assert "torch" not in stripped and "libcst" not in stripped, (name, line)
