"""Per-call cost of the runtime layer against what users run today (DESIGN.md's targets).

    python benchmarks/runtime_bench.py [--quick]

Prints, side by side, shapecheck's per-call time, the baseline's, their ratio and the target:

- ``shapecheck.einsum`` vs ``torch.einsum`` (default settings) on two small operands;
- a 5-operand chain of small operands, repeated, vs ``torch.einsum`` with opt_einsum on;
- large operands (the same kernels do the work), vs ``torch.einsum``;
- ``@shapecheck.check`` overhead (decorated minus bare call) vs
  ``jaxtyped(typechecker=beartype)`` overhead; and with ``SHAPECHECK_DISABLE=1``.

Every timing is the best of several interleaved repeats, so that load from other processes on
the machine hits both sides alike. Results are also checked for equality with torch's.
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from beartype import beartype  # noqa: E402
from jaxtyping import Float, jaxtyped  # noqa: E402
from torch import Tensor  # noqa: E402

import shapecheck  # noqa: E402
from shapecheck.torch_runtime import einsum as runtime_einsum# noqa: E402


def per_call(fn, number: int, repeat: int) -> float:
    """Best per-call time in microseconds over ``repeat`` runs of ``number`` calls."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def paired(ours, theirs, number: int, repeat: int) -> tuple:
    """Time two callables interleaved (ours, theirs, ours, ...); best per-call of each."""
    a, b = [], []
    for _ in range(repeat):
        a.append(per_call(ours, number, 1))
        b.append(per_call(theirs, number, 1))
    return min(a), min(b)


def einsum_rows(quick: bool) -> list:
    scale = 0.2 if quick else 1.0
    rows = []
    torch.backends.opt_einsum.enabled = True

    a, b = torch.randn(2, 2), torch.randn(2, 2)
    torch.testing.assert_close(shapecheck.einsum("ij,jk->ik", a, b), torch.einsum("ij,jk->ik", a, b))
    n = int(20000 * scale)
    ours, theirs = paired(lambda: shapecheck.einsum("ij,jk->ik", a, b),
                          lambda: torch.einsum("ij,jk->ik", a, b), n, 7)
    rows.append(("einsum 2 operands small  ij,jk->ik 2x2", ours, theirs, 0.5))

    q, k = torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4)
    spec = "bhid,bhjd->bhij"
    torch.testing.assert_close(shapecheck.einsum(spec, q, k), torch.einsum(spec, q, k))
    ours, theirs = paired(lambda: shapecheck.einsum(spec, q, k), lambda: torch.einsum(spec, q, k), n, 7)
    rows.append(("einsum 2 operands small  bhid,bhjd->bhij 2x2x3x4", ours, theirs, 0.5))

    chain = "ab,bc,cd,de,ef->af"
    ops = [torch.randn(3, 3) for _ in range(5)]
    torch.testing.assert_close(shapecheck.einsum(chain, *ops), torch.einsum(chain, *ops))
    n = int(1000 * scale)
    ours, theirs = paired(lambda: shapecheck.einsum(chain, *ops), lambda: torch.einsum(chain, *ops), n, 5)
    rows.append(("einsum 5-operand chain small, repeated (opt_einsum on)", ours, theirs, 0.2))

    big_a, big_b = torch.randn(32, 256, 256), torch.randn(32, 256, 256)
    torch.testing.assert_close(shapecheck.einsum("bij,bjk->bik", big_a, big_b),
                               torch.einsum("bij,bjk->bik", big_a, big_b))
    n = max(1, int(5 * scale))
    ours, theirs = paired(lambda: shapecheck.einsum("bij,bjk->bik", big_a, big_b),
                          lambda: torch.einsum("bij,bjk->bik", big_a, big_b), n, 7)
    rows.append(("einsum large  bij,bjk->bik 32x256x256", ours, theirs, 1.05))

    big_q, big_k = torch.randn(8, 8, 256, 64), torch.randn(8, 8, 256, 64)
    spec = "bhid,bhjd->bhij"
    torch.testing.assert_close(shapecheck.einsum(spec, big_q, big_k), torch.einsum(spec, big_q, big_k))
    ours, theirs = paired(lambda: shapecheck.einsum(spec, big_q, big_k),
                          lambda: torch.einsum(spec, big_q, big_k), n, 7)
    rows.append(("einsum large  bhid,bhjd->bhij 8x8x256x64", ours, theirs, 1.05))
    return rows


def _plain(x: Float[Tensor, "b c"], y: Float[Tensor, "c d"]) -> Float[Tensor, "b d"]:
    return x @ y


def check_rows(quick: bool) -> list:
    scale = 0.2 if quick else 1.0
    x, y = torch.randn(2, 3), torch.randn(3, 4)
    ours_fn = shapecheck.check(_plain)
    theirs_fn = jaxtyped(typechecker=beartype)(_plain)
    n = int(20000 * scale)
    bare_a, ours = paired(lambda: _plain(x, y), lambda: ours_fn(x, y), n, 7)
    theirs = per_call(lambda: theirs_fn(x, y), max(1, n // 10), 7)
    bare_b = per_call(lambda: _plain(x, y), n, 7)
    bare = min(bare_a, bare_b)
    rows = [("@check overhead per call  (b c),(c d)->(b d)", ours - bare, theirs - bare, 0.2)]

    previous = os.environ.get("SHAPECHECK_DISABLE")
    os.environ["SHAPECHECK_DISABLE"] = "1"
    try:
        disabled_fn = shapecheck.check(_plain)
    finally:
        if previous is None:
            del os.environ["SHAPECHECK_DISABLE"]
        else:
            os.environ["SHAPECHECK_DISABLE"] = previous
    same = disabled_fn is _plain
    rows.append(("@check with SHAPECHECK_DISABLE=1: function returned unchanged" + ("" if same else " (NOT)"),
                 0.0 if same else per_call(lambda: disabled_fn(x, y), n, 5) - bare, theirs - bare, 0.0))
    return rows, bare


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (a rough reading)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch intra-op threads (default 1: steadier on a shared machine)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print("torch %s, %d threads, opt_einsum %s; python %s" % (
        torch.__version__, torch.get_num_threads(),
        "on" if torch.backends.opt_einsum.is_available() else "missing", sys.version.split()[0]))
    runtime_einsum.clear_cache()
    rows = einsum_rows(args.quick)
    check, bare = check_rows(args.quick)
    rows += check
    width = max(len(r[0]) for r in rows)
    print()
    header = ("case".ljust(width), "shapecheck", "baseline", "ratio", "target")
    print("%s  %12s  %12s  %7s  %7s" % header)
    failures = 0
    for name, ours, theirs, target in rows:
        ratio = ours / theirs if theirs > 0 else float("inf")
        ok = ratio <= target + 1e-9
        failures += not ok
        print("%s  %10.2f us  %10.2f us  %6.3fx  %6.2fx  %s" % (
            name.ljust(width), ours, theirs, ratio, target, "ok" if ok else "MISSED"))
    print()
    print("baselines: torch.einsum (default settings; opt_einsum on for the chain); "
          "jaxtyped(typechecker=beartype) overhead for @check (bare call %.2f us)" % bare)
    print("check overheads are decorated minus bare call time")
    print("%d of %d targets met" % (len(rows) - failures, len(rows)))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
