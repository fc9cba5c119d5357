"""Per-call cost of the kernels ``shapecheck.einsum``'s plans emit, for its kernel cost model.

    python benchmarks/kernel_costs.py [--dtype float32|float64] [--threads 1]

Times (CPU thread time, best of several runs, one torch thread) ``mm`` of ``[M, K] x [K, N]``
with the left operand stored as is or transposed (a ``.mT`` view of a ``[K, M]`` tensor), for
tall (M large, N small), wide (M small, N large) and square shapes at small and large sizes, and
the copy (``.contiguous()`` of a transposed view) of the same numbers of elements. It prints
each time and the model's estimate, then the fitted constants of the model in
``shapecheck/torch_runtime/kernel_costs.py``: a fixed cost per call, a cost per multiply-add that
grows when K or N is small (a product of two factors), and a cost per copied element.
"""

from __future__ import annotations

import argparse
import sys
import time
import timeit
from functools import partial
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

SHAPES = [  # (M, K, N): tall (N small), wide (M small), square; small to large
    (8, 8, 8), (64, 8, 8), (8, 8, 64), (64, 64, 64), (512, 8, 8), (8, 8, 512),
    (4096, 8, 8), (8, 8, 4096), (65536, 8, 8), (8, 8, 65536), (1024, 64, 16), (16, 64, 1024),
    (4096, 16, 64), (64, 16, 4096), (256, 256, 256), (512, 8, 512), (2048, 32, 32), (32, 32, 2048),
]
COPIES = [64, 512, 4096, 32768, 262144, 2097152]  # elements of a transposed view made contiguous


def best_us(stmt, number: int, repeat: int = 9) -> float:
    """Best per-call thread time in microseconds."""
    return min(timeit.Timer(stmt, timer=time.thread_time).repeat(number=number, repeat=repeat)) / number * 1e6


def measure(dtype) -> tuple:
    """``(mm rows, copy rows)``: (M, K, N, us of ``a.mm(b)``, us with ``a`` a ``.mT`` view) and
    (elements, us of ``.contiguous()`` of a transposed ``[n, n]``-like view)."""
    rows = []
    for m, k, n in SHAPES:
        a = torch.randn(m, k, dtype=dtype)
        at = torch.randn(k, m, dtype=dtype).mT
        b = torch.randn(k, n, dtype=dtype)
        number = max(3, int(2e6 / (m * k * n + 2e4)))
        rows.append((m, k, n, best_us(partial(torch.mm, a, b), number), best_us(partial(torch.mm, at, b), number)))
    copies = []
    for elements in COPIES:  # (b, g, rest) made (b, rest, g): the copy a swapped plan ends with
        view = torch.randn(4, 8, elements // 32, dtype=dtype).permute(0, 2, 1)
        number = max(3, int(2e6 / (elements + 2e4)))
        copies.append((elements, best_us(view.contiguous, number)))
    return rows, copies


def fit(rows: list, copies: list) -> dict:
    """The model's constants, least squares on relative error: an mm costs
    ``call + per_mac * M*K*N * (1 + k_half / K) * (1 + n_half / N)`` (both orientations of the
    left operand pooled; ``k_half`` and ``n_half`` on a grid, ``call`` and ``per_mac`` solved),
    a copy ``copy_call + per_element * elements``."""
    best = None
    for k_half in [0.5 * i for i in range(41)]:
        for n_half in [0.5 * i for i in range(81)]:
            design = []
            for m, k, n, plain, trans in rows:
                work = m * k * n * (1 + k_half / k) * (1 + n_half / n)
                design += [[1.0 / plain, work / plain], [1.0 / trans, work / trans]]
            a = torch.tensor(design, dtype=torch.float64)
            ones = torch.ones(len(design), 1, dtype=torch.float64)
            sol = torch.linalg.lstsq(a, ones).solution
            err = float(((a @ sol - ones) ** 2).sum())
            if best is None or err < best[0]:
                best = (err, float(sol[0, 0]), float(sol[1, 0]), k_half, n_half)
    _, call, per_mac, per_mac_k, per_mac_n = best
    cdesign = [[1.0 / us, e / us] for e, us in copies]
    csol = torch.linalg.lstsq(torch.tensor(cdesign, dtype=torch.float64),
                              torch.ones(len(copies), 1, dtype=torch.float64)).solution[:, 0].tolist()
    return {"MM_CALL_US": call, "MM_US_PER_MAC": per_mac, "MM_K_HALF": per_mac_k,
            "MM_N_HALF": per_mac_n, "COPY_CALL_US": csol[0], "COPY_US_PER_ELEMENT": csol[1]}


def main(argv=None) -> int:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    dtype = getattr(torch, args.dtype)
    print("torch %s, %d thread(s), %s" % (torch.__version__, torch.get_num_threads(), args.dtype))
    print("%6s %5s %6s %12s %14s %12s %12s" % ("M", "K", "N", "mm us", "mm(a.mT) us", "ns per mac", "model us"))
    rows, copies = measure(dtype)
    consts = fit(rows, copies)
    for m, k, n, plain, trans in rows:
        model = consts["MM_CALL_US"] + consts["MM_US_PER_MAC"] * m * k * n * (
            1 + consts["MM_K_HALF"] / k) * (1 + consts["MM_N_HALF"] / n)
        print("%6d %5d %6d %12.2f %14.2f %12.4f %12.2f" % (m, k, n, plain, trans, plain * 1e3 / (m * k * n), model))
    print("%12s %12s %12s" % ("copy elems", "us", "model us"))
    for elements, us in copies:
        print("%12d %12.2f %12.2f" % (elements, us, consts["COPY_CALL_US"] + consts["COPY_US_PER_ELEMENT"] * elements))
    for name, value in consts.items():
        print("%-22s %.4g" % (name, value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
