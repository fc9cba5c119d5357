"""``shapecheck.einsum`` against everything a user would call instead (issue 15), and ``@check``.

    python benchmarks/runtime_bench.py [--quick] [--large] [--json OUT] [--device cpu|cuda]

Anchors, each timed on the same operands: ``torch.einsum`` with opt_einsum on (torch's default)
and off, ``opt_einsum.contract``, a pre-built ``opt_einsum.contract_expression``,
``einops.einsum`` (the ``bench`` extra: ``pip install einops==0.8.2``; reported as absent
without it) and a hand-written torch expression where one is natural (``q @ k.mT``,
``torch.dot``, ``torch.trace``...).

Sections:

- the case set: real-world specs (attention in two layouts, GQA, projections, bilinear, dot and
  outer products, traces and diagonals, ``...`` with and without broadcast batch dims, chains,
  MPS, Tucker, CP, a 5-tensor network...) at the sizes asked for (small: overhead-bound;
  medium; large, with ``--large``: 1e5 to 4e6 elements), float32 and float64, contiguous and
  transposed operands (the last two dims swapped; 1-D operands a stride-2 slice);
- dynamic shapes: a never-seen sequence length or batch on every call, the same shapes in
  the same order for both contenders (each on its own operands); the target is the median
  of the per-shape ratios (the ratio of medians is printed too);
- a cyclic working set of more shapes than the plan cache holds;
- forward plus backward (``torch.autograd.grad``);
- peak memory of one call: on CPU the allocator events of ``torch.profiler`` (profile_memory),
  summed in time order; on CUDA ``torch.cuda.max_memory_allocated``;
- the targets of DESIGN.md (small 2-operand calls, repeated chains, ``@check`` overhead).

Timing: every contender is warmed up, then timed in blocks of calls (a block lasts about
``--block`` seconds), round-robin between the contenders, the order rotated on each repetition,
so that load from other processes hits all alike. Each row reports the median per-call time
and its spread (p10-p90 of the repetitions); rows over the target are timed a second time on
fresh operands (more repetitions) and the second reading counts (the first is shown). The
summary gives, per case, size, dtype and
layout, shapecheck's median as a ratio to the best of ``torch.einsum`` and the pre-built
``contract_expression``, sorted worst first, then PASS/FAIL lines for the targets of issue 15
and DESIGN.md. Every shapecheck result is compared with ``torch.einsum``'s (values and
strides) before it is timed.

Run times on the development machine (2 cores, one torch thread; the longer figure with other
jobs loading the cores): ``--quick`` (16 specs, float32) 11-30 seconds, the default (40 specs,
small and medium sizes) 1.5-6 minutes, ``--quick --large`` about 3.5 minutes and ``--large``
about 20 minutes on CPU (large rows take 7 repetitions on CPU; a GPU takes a few minutes). Exit status 0
when every target passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import sys
import time
import timeit
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable

sys.path.append(str(Path(__file__).resolve().parent.parent))  # PYTHONPATH picks another tree

import opt_einsum  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import shapecheck  # noqa: E402
from shapecheck.torch_runtime import einsum as runtime_einsum  # noqa: E402

try:
    import einops
except ImportError:  # the anchor then reports as absent
    einops = None  # type: ignore[assignment]
try:
    from beartype import beartype
    from jaxtyping import Float, jaxtyped
except ImportError:  # the @check rows are then skipped
    beartype = None  # type: ignore[assignment]

SIZES = ("small", "medium", "large")
DTYPES = {"float32": torch.float32, "float64": torch.float64}
LAYOUTS = ("contiguous", "transposed")
ROW_TARGET = 1.05


@dataclass(frozen=True)
class Case:
    """One spec: its name, letters, the operand shapes per size and an optional hand-written
    torch expression computing the same result."""

    name: str
    spec: str
    shapes: dict
    hand: Callable | None = None
    quick: bool = False


def dims(spec: str, text: str) -> list:
    """Operand shapes of a letters ``spec`` (no ``...``) from ``"b2 h4 i8"`` style sizes."""
    size = {item[0]: int(item[1:]) for item in text.split()}
    return [tuple(size[c] for c in term) for term in spec.split("->")[0].split(",")]


def case(name: str, spec: str, small: str, medium: str, large: str, hand=None, quick=False) -> Case:
    """A case whose shapes follow from per-letter sizes at each size."""
    return Case(name, spec, {"small": dims(spec, small), "medium": dims(spec, medium),
                             "large": dims(spec, large)}, hand, quick)


def _tensordot_bhij_hg(p, w):
    return torch.tensordot(p, w, dims=([1], [0])).permute(0, 3, 1, 2)


CASES = [
    case("attention scores (b h i d)", "bhid,bhjd->bhij", "b2 h2 i4 j4 d8", "b2 h4 i16 j16 d16",
         "b4 h8 i256 j256 d64", lambda q, k: q @ k.transpose(-1, -2), quick=True),
    case("attention values (b h i d)", "bhij,bhjd->bhid", "b2 h2 i4 j4 d8", "b2 h4 i16 j16 d16",
         "b4 h8 i256 j256 d64", lambda p, v: p @ v),
    case("attention scores (b s h d)", "bqhd,bkhd->bhqk", "b2 q4 k4 h2 d8", "b2 q16 k16 h4 d16",
         "b4 q256 k256 h8 d64", lambda q, k: q.transpose(1, 2) @ k.permute(0, 2, 3, 1), quick=True),
    case("attention values (b s h d)", "bhqk,bkhd->bqhd", "b2 q4 k4 h2 d8", "b2 q16 k16 h4 d16",
         "b4 q256 k256 h8 d64", lambda p, v: (p @ v.transpose(1, 2)).transpose(1, 2)),
    case("GQA scores", "bhgid,bhjd->bhgij", "b2 h2 g2 i4 j4 d8", "b2 h2 g4 i16 j16 d16",
         "b2 h4 g4 i256 j256 d64", lambda q, k: q @ k.unsqueeze(2).transpose(-1, -2), quick=True),
    case("GQA values", "bhgij,bhjd->bhgid", "b2 h2 g2 i4 j4 d8", "b2 h2 g4 i16 j16 d16",
         "b2 h4 g4 i256 j256 d64", lambda p, v: p @ v.unsqueeze(2)),
    case("projection", "bnd,de->bne", "b2 n4 d8 e8", "b4 n32 d32 e32", "b8 n512 d256 e256",
         lambda x, w: x @ w, quick=True),
    case("heads merge projection", "bnhd,hde->bne", "b2 n4 h2 d4 e8", "b4 n32 h4 d8 e32",
         "b8 n256 h8 d32 e256", lambda x, w: x.flatten(2) @ w.flatten(0, 1)),
    case("heads split projection", "bnd,hde->bhne", "b2 n4 d8 h2 e4", "b4 n32 d32 h4 e8",
         "b8 n256 d256 h8 e32", lambda x, w: x.unsqueeze(1) @ w),
    case("linear (x W^T)", "ij,kj->ik", "i4 j8 k8", "i64 j64 k64", "i1024 j512 k512",
         lambda x, w: F.linear(x, w)),
    case("matmul", "ij,jk->ik", "i2 j2 k2", "i64 j64 k64", "i1024 j512 k512", lambda a, b: a @ b,
         quick=True),
    case("batched matmul", "bij,bjk->bik", "b2 i4 j4 k4", "b8 i32 j32 k32", "b32 i256 j256 k256",
         torch.bmm),
    case("matrix-vector", "ij,j->i", "i4 j8", "i64 j128", "i2000 j2000", lambda a, v: a @ v),
    case("bilinear", "bi,oij,bj->bo", "b2 i4 j4 o4", "b16 i16 j16 o16", "b256 i128 j128 o64",
         lambda x, w, y: F.bilinear(x, y, w), quick=True),
    case("bilinear form x W y^T", "bik,kl,bjl->bij", "b2 i4 j4 k4 l4", "b4 i16 j16 k16 l16",
         "b8 i256 j256 k128 l128", lambda x, w, y: x @ w @ y.transpose(1, 2)),
    case("dot", "i,i->", "i8", "i4096", "i4000000", torch.dot, quick=True),
    case("Frobenius inner product", "ij,ij->", "i4 j4", "i64 j64", "i2000 j2000",
         lambda a, b: (a * b).sum(), quick=True),
    case("batched dot", "bi,bi->b", "b4 i8", "b64 i64", "b1000 i1000", lambda a, b: (a * b).sum(-1)),
    case("outer product", "i,j->ij", "i4 j4", "i64 j64", "i2000 j2000", torch.outer, quick=True),
    case("batched outer product", "bi,bj->bij", "b2 i4 j4", "b8 i32 j32", "b64 i256 j256",
         lambda a, b: a.unsqueeze(2) * b.unsqueeze(1)),
    case("sum of outer products", "bi,bj->ij", "b4 i4 j4", "b64 i64 j64", "b1024 i512 j512",
         lambda a, b: a.transpose(0, 1) @ b),
    case("trace", "ii->", "i4", "i64", "i2000", torch.trace, quick=True),
    case("diagonal", "ii->i", "i4", "i64", "i2000", torch.diagonal),
    case("batched diagonal", "bii->bi", "b2 i4", "b8 i32", "b64 i256",
         lambda a: torch.diagonal(a, dim1=1, dim2=2)),
    case("transpose", "ij->ji", "i4 j4", "i64 j64", "i2000 j2000", lambda a: a.transpose(0, 1)),
    case("row sums", "ij->i", "i4 j4", "i64 j64", "i2000 j2000", lambda a: a.sum(1)),
    case("Hadamard product", "ij,ij->ij", "i4 j4", "i64 j64", "i2000 j2000", torch.mul),
    Case("ellipsis batched matmul", "...ij,...jk->...ik",
         {"small": [(2, 3, 4), (2, 4, 5)], "medium": [(4, 8, 16, 16), (4, 8, 16, 16)],
          "large": [(8, 8, 128, 128), (8, 8, 128, 128)]}, lambda a, b: a @ b, quick=True),
    Case("ellipsis broadcast batch dims", "...ij,...jk->...ik",
         {"small": [(2, 1, 3, 4), (1, 3, 4, 5)], "medium": [(4, 1, 16, 16), (1, 8, 16, 16)],
          "large": [(8, 1, 128, 128), (1, 8, 128, 128)]}, lambda a, b: a @ b, quick=True),
    Case("ellipsis projection", "...d,de->...e",
         {"small": [(2, 3, 8), (8, 4)], "medium": [(4, 16, 32), (32, 32)],
          "large": [(8, 256, 256), (256, 256)]}, lambda x, w: x @ w),
    Case("ellipsis batched dot", "...i,...i->...",
         {"small": [(2, 3, 8), (2, 3, 8)], "medium": [(8, 16, 32), (8, 16, 32)],
          "large": [(16, 256, 256), (16, 256, 256)]}, lambda a, b: (a * b).sum(-1)),
    case("chain of 3", "ab,bc,cd->ad", "a3 b3 c3 d3", "a32 b32 c32 d32", "a512 b512 c512 d512",
         lambda a, b, c: torch.linalg.multi_dot([a, b, c])),
    case("chain of 5", "ab,bc,cd,de,ef->af", "a3 b3 c3 d3 e3 f3", "a32 b32 c32 d32 e32 f32",
         "a400 b400 c400 d400 e400 f400", lambda *ops: torch.linalg.multi_dot(ops), quick=True),
    case("chain of 8", "ab,bc,cd,de,ef,fg,gh,hi->ai", "a3 b3 c3 d3 e3 f3 g3 h3 i3",
         "a32 b32 c32 d32 e32 f32 g32 h32 i32", "a400 b400 c400 d400 e400 f400 g400 h400 i400",
         lambda *ops: torch.linalg.multi_dot(ops)),
    case("MPS to full tensor", "ia,ajb,bkc,cl->ijkl", "i2 j2 k2 l2 a3 b3 c3",
         "i4 j4 k4 l4 a8 b8 c8", "i32 j32 k32 l32 a32 b32 c32"),
    case("MPS transfer step", "ab,apc,bpd->cd", "a4 b4 p2 c4 d4", "a32 b32 p4 c32 d32",
         "a256 b256 p4 c256 d256"),
    case("Tucker reconstruction", "abc,ia,jb,kc->ijk", "a2 b2 c2 i4 j4 k4", "a8 b8 c8 i16 j16 k16",
         "a32 b32 c32 i128 j128 k128", quick=True),
    case("CP reconstruction", "ir,jr,kr->ijk", "i4 j4 k4 r3", "i16 j16 k16 r8",
         "i128 j128 k128 r32", quick=True),
    case("5-tensor network", "ab,bc,cde,ea,df->f", "a3 b3 c3 d3 e3 f3", "a16 b16 c16 d16 e16 f16",
         "a64 b64 c64 d64 e64 f64"),
    case("head mixing", "bhij,hg->bgij", "b2 h2 i4 j4 g2", "b2 h8 i16 j16 g8",
         "b4 h8 i256 j256 g8", _tensordot_bhij_hg, quick=True),
]


def letters_to_einops(spec: str) -> str:
    """``"bij,bjk->bik"`` as einops writes it: ``"b i j, b j k -> b i k"``."""
    def term(text: str) -> str:
        return " ".join(["..."] if text == "..." else _split_ellipsis(text))
    left, right = spec.split("->")
    return ", ".join(term(t) for t in left.split(",")) + " -> " + term(right)


def _split_ellipsis(text: str) -> list:
    out = []
    rest = text
    while rest:
        if rest.startswith("..."):
            out.append("...")
            rest = rest[3:]
        else:
            out.append(rest[0])
            rest = rest[1:]
    return out


def make_operand(shape: tuple, dtype, layout: str, device: str, gen: torch.Generator):
    """A random operand of ``shape``: contiguous, or (``transposed``) the transpose of a
    contiguous tensor of the last two dims swapped; a transposed 1-D operand is a stride-2
    slice."""
    if layout == "contiguous" or len(shape) == 0:
        return torch.randn(shape, dtype=dtype, generator=gen).to(device)
    if len(shape) == 1:
        return torch.randn(shape[0] * 2, dtype=dtype, generator=gen).to(device)[::2]
    swapped = shape[:-2] + (shape[-1], shape[-2])
    return torch.randn(swapped, dtype=dtype, generator=gen).to(device).transpose(-1, -2)


def anchors(spec: str, ops: list, hand) -> dict:
    """The contenders for one call: name -> (callable, opt_einsum flag to set before timing)."""
    expr = opt_einsum.contract_expression(spec, *[tuple(op.shape) for op in ops])
    pattern = letters_to_einops(spec)
    found = {
        "shapecheck": (lambda: shapecheck.einsum(spec, *ops), True),
        "torch.einsum": (lambda: torch.einsum(spec, *ops), True),
        "torch.einsum(oe off)": (lambda: torch.einsum(spec, *ops), False),
        "oe.contract": (lambda: opt_einsum.contract(spec, *ops), True),
        "contract_expression": (lambda: expr(*ops), True),
    }
    if einops is not None:
        found["einops.einsum"] = (lambda: einops.einsum(*ops, pattern), True)  # type: ignore[call-overload]
    if hand is not None:
        found["hand"] = (lambda: hand(*ops), True)
    return found


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def interleaved(contenders: dict, reps: int, block_s: float, device: str) -> dict:
    """Per-call times (us) of each contender: warm-up, then ``reps`` round-robin blocks.

    A contender that raises during warm-up is left out (reported as absent)."""
    usable, number = {}, {}
    for name, (fn, flag) in contenders.items():
        torch.backends.opt_einsum.enabled = flag
        try:
            fn()
            fn()
            _sync(device)
            start = time.perf_counter()
            fn()
            _sync(device)
            once = max(time.perf_counter() - start, 1e-7)
        except Exception:  # an anchor that does not take this spec (einops on a trace...)
            continue
        usable[name] = (fn, flag)
        number[name] = max(1, min(5000, int(block_s / once)))
    times: dict = {name: [] for name in usable}
    names = list(usable)
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            fn, flag = usable[name]
            torch.backends.opt_einsum.enabled = flag
            n = number[name]
            _sync(device)
            start = time.perf_counter()
            for _ in range(n):
                fn()
            _sync(device)
            times[name].append((time.perf_counter() - start) / n * 1e6)
    torch.backends.opt_einsum.enabled = True
    return times


def summary(samples: list) -> dict:
    """Median and p10/p90 of a list of per-call times."""
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]  # noqa: E731
    return {"median": statistics.median(ordered), "p10": pick(0.1), "p90": pick(0.9)}


def check_result(spec: str, ops: list) -> str:
    """``""`` when shapecheck's result equals torch.einsum's (values, shape, strides), else what
    differs."""
    ours, theirs = shapecheck.einsum(spec, *ops), torch.einsum(spec, *ops)
    if ours.shape != theirs.shape:
        return "shape %s vs %s" % (tuple(ours.shape), tuple(theirs.shape))
    tol = 1e-3 if ours.dtype == torch.float32 else 1e-9
    if not torch.allclose(ours, theirs, rtol=tol, atol=tol * max(1.0, float(theirs.abs().max()))):
        return "values differ"
    if _strides_that_matter(ours) != _strides_that_matter(theirs):
        return "strides %s vs %s" % (ours.stride(), theirs.stride())
    return ""


def _strides_that_matter(t) -> tuple:
    """The strides of the dims of size above 1 (what a later ``.view()`` depends on)."""
    return tuple((dim, stride) for dim, (size, stride) in enumerate(zip(t.shape, t.stride())) if size > 1)


def case_rows(args, sizes: tuple, dtypes: tuple) -> list:
    """Time every case at every size, dtype and layout."""
    gen = torch.Generator().manual_seed(0)
    rows = []
    cases = [c for c in CASES if c.quick or not args.quick]
    for c in cases:
        for size in sizes:
            for dname in dtypes:
                for layout in LAYOUTS:
                    ops = [make_operand(s, DTYPES[dname], layout, args.device, gen) for s in c.shapes[size]]
                    note = check_result(c.spec, ops)
                    reps = min(args.reps, 7) if size == "large" and args.device == "cpu" else args.reps
                    times = interleaved(anchors(c.spec, ops, c.hand), reps, args.block, args.device)
                    stats = {name: summary(t) for name, t in times.items()}
                    best_name = min(("torch.einsum", "contract_expression"), key=lambda n: stats[n]["median"])
                    ratio = stats["shapecheck"]["median"] / stats[best_name]["median"]
                    rows.append({"case": c.name, "spec": c.spec, "size": size, "dtype": dname,
                                 "layout": layout, "ratio": ratio, "best": best_name,
                                 "stats": stats, "note": note})
                    print("  %-30s %-6s %-7s %-10s %6.2fx  sc %9.2f us  %s" % (
                        c.name[:30], size, dname, layout, ratio, stats["shapecheck"]["median"], note),
                        flush=True)
    return rows


def recheck_rows(args, rows: list, limit: int = 24) -> None:
    """Time again, on fresh operands of the same shapes and layout, the rows over the target
    (worst first, at most ``limit``): on a loaded machine a single row's median can be an
    outlier. The second reading replaces the first, which is kept as ``first_ratio``."""
    gen = torch.Generator().manual_seed(3)
    by_name = {c.name: c for c in CASES}
    over = sorted((r for r in rows if r["ratio"] > ROW_TARGET), key=lambda r: -r["ratio"])[:limit]
    for row in over:
        c = by_name[row["case"]]
        ops = [make_operand(s, DTYPES[row["dtype"]], row["layout"], args.device, gen) for s in c.shapes[row["size"]]]
        reps = args.reps if row["size"] == "large" and args.device == "cpu" else max(args.reps, 41)
        stats = {name: summary(t) for name, t in
                 interleaved(anchors(c.spec, ops, c.hand), reps, args.block, args.device).items()}
        best_name = min(("torch.einsum", "contract_expression"), key=lambda n: stats[n]["median"])
        row.update(first_ratio=row["ratio"], ratio=stats["shapecheck"]["median"] / stats[best_name]["median"],
                   best=best_name, stats=stats)
        print("  %-30s %-6s %-7s %-10s %6.2fx (first %.2fx)" % (
            c.name[:30], row["size"], row["dtype"], row["layout"], row["ratio"], row["first_ratio"]), flush=True)


def dynamic_rows(args) -> list:
    """A never-seen shape on every call (a new sequence length and batch), shapecheck vs torch.einsum."""
    specs: list[tuple[str, str, Callable]] = [
        ("attention scores, new (batch, seq)", "bhid,bhjd->bhij",
         lambda b, n: [(b, 2, n, 8), (b, 2, n, 8)]),
        ("projection, new (batch, seq)", "bnd,de->bne", lambda b, n: [(b, n, 16), (16, 16)]),
        ("matmul, new (rows, cols)", "ij,jk->ik", lambda b, n: [(b, 8), (8, n)]),
        ("ellipsis broadcast, new (batch, seq)", "...ij,...jk->...ik",
         lambda b, n: [(b, 1, n, 4), (1, 2, 4, 3)]),
        ("chain of 5, new outer dims", "ab,bc,cd,de,ef->af",
         lambda b, n: [(b, 3), (3, 3), (3, 3), (3, 3), (3, n)]),
    ]
    if args.quick:
        specs = specs[:3]
    per_block = 40 if args.quick else 50
    reps = 5 if args.quick else 11
    # every (batch, seq) pair is used once, in a shuffled order: warm-up, then each round. Both
    # contenders get the same shapes in the same order (call i of each has shape i), each on its
    # own copy of the operands: with one shared pool (as before round 7) each side got a different
    # random half of the shapes, whose sizes span 1,600x, so the ratio of medians moved by
    # +-10% with the draw alone (1.02-1.12x for a plan measured 8-12 us cheaper per call).
    pairs = [(b, n) for n in range(1, 201) for b in range(1, 9)]
    random.Random(0).shuffle(pairs)
    need = per_block * reps + 4
    rows = []
    for name, spec, shapes_of in specs:
        gen = torch.Generator(device=args.device).manual_seed(1)
        shapes = [shapes_of(b, n) for b, n in pairs[:need]]
        pools = [[[torch.randn(s, device=args.device, generator=gen) for s in call] for call in shapes]
                 for _ in range(2)]
        times = _dynamic_blocks(_fresh_contenders(spec, *pools), reps, per_block, args.device)
        stats = {k: summary(v) for k, v in times.items()}
        ratio = stats["shapecheck"]["median"] / stats["torch.einsum"]["median"]
        paired_ratio = statistics.median(
            ours / theirs for ours, theirs in zip(times["shapecheck"], times["torch.einsum"]))
        rows.append({"case": name, "spec": spec, "ratio": ratio, "paired_ratio": paired_ratio, "stats": stats})
        print("  %-40s %6.2fx  (median of per-shape ratios %.2fx; %s)" % (
            name, ratio, paired_ratio, ", ".join("%s %s" % (k, _fmt(v)) for k, v in stats.items())), flush=True)
    return rows


def _fresh_contenders(spec: str, ours: list, theirs: list) -> dict:
    """shapecheck on the next operands of ``ours`` and torch.einsum on the next of ``theirs``
    (never reused; the two pools hold the same shapes in the same order)."""
    mine, other = iter(ours), iter(theirs)
    return {
        "shapecheck": lambda: shapecheck.einsum(spec, *next(mine)),
        "torch.einsum": lambda: torch.einsum(spec, *next(other)),
    }


def alternating_calls(contenders: dict, calls: int, device: str) -> dict:
    """Per-call times (us) of ``calls`` calls of each contender, alternating call by call (the
    order flips on every round), each call timed alone. On CPU the clock is the calling
    thread's CPU time (``time.thread_time``: torch runs on this one thread here), which time
    spent preempted by another process does not inflate; on CUDA it is the wall clock."""
    times: dict = {name: [] for name in contenders}
    names = list(contenders)
    clock = time.thread_time if device == "cpu" and torch.get_num_threads() == 1 else time.perf_counter
    for i in range(calls):
        for name in (names if i % 2 == 0 else names[::-1]):
            fn = contenders[name]
            start = clock()
            fn()
            _sync(device)
            times[name].append((clock() - start) * 1e6)
    return times


def _dynamic_blocks(contenders: dict, reps: int, per_block: int, device: str) -> dict:
    for fn in contenders.values():  # warm-up: compiles per-spec state, never timed
        for _ in range(4):
            fn()
    return alternating_calls(contenders, reps * per_block, device)


def cyclic_rows(args) -> list:
    """A working set of more distinct shapes than the plan cache holds, called in a cycle."""
    limit = getattr(runtime_einsum, "_MAX_PLANS", 4096)
    count = max(5000, int(limit * 1.25))
    spec = "ij,jk->ik"
    shapes = [((1 + s % 100, 4), (4, 1 + s // 100)) for s in range(count)]
    pool = [[torch.randn(a, device=args.device), torch.randn(b, device=args.device)] for a, b in shapes]
    contenders = {"shapecheck": _cycling(shapecheck.einsum, spec, pool),
                  "torch.einsum": _cycling(torch.einsum, spec, pool)}
    for fn in contenders.values():  # one full cycle each first
        for _ in range(count):
            fn()
    times = alternating_calls(contenders, count // 2 if args.quick else count, args.device)
    stats = {k: summary(v) for k, v in times.items()}
    ratio = stats["shapecheck"]["median"] / stats["torch.einsum"]["median"]
    paired_ratio = statistics.median(
        ours / theirs for ours, theirs in zip(times["shapecheck"], times["torch.einsum"]))
    name = "cycle of %d shapes, %s (plan cache %d)" % (count, spec, limit)
    print("  %-40s %6.2fx  (median of per-shape ratios %.2fx)" % (name, ratio, paired_ratio), flush=True)
    return [{"case": name, "spec": spec, "ratio": ratio, "paired_ratio": paired_ratio, "stats": stats}]


def _cycling(fn: Callable, spec: str, pool: list) -> Callable:
    """``fn(spec, *operands)`` on the next operands of ``pool``, round and round."""
    cursor = itertools.cycle(pool)
    return lambda: fn(spec, *next(cursor))


BACKWARD_CASES = ("attention scores (b h i d)", "projection", "bilinear", "chain of 5",
                  "Tucker reconstruction", "CP reconstruction", "dot", "head mixing")


def _backward_contenders(spec: str, ops: list) -> dict:
    """Forward plus ``torch.autograd.grad`` through shapecheck, torch.einsum and contract_expression."""
    expr = opt_einsum.contract_expression(spec, *[tuple(op.shape) for op in ops])
    grad_out = torch.randn_like(torch.einsum(spec, *ops))
    return {
        "shapecheck": (lambda: torch.autograd.grad(shapecheck.einsum(spec, *ops), ops, grad_out), True),
        "torch.einsum": (lambda: torch.autograd.grad(torch.einsum(spec, *ops), ops, grad_out), True),
        "contract_expression": (lambda: torch.autograd.grad(expr(*ops), ops, grad_out), True),
    }


def backward_rows(args, size: str) -> list:
    """Forward plus backward (``torch.autograd.grad``) against torch.einsum and contract_expression."""
    gen = torch.Generator().manual_seed(1)
    rows = []
    for c in CASES:
        if c.name not in BACKWARD_CASES or (args.quick and c.name not in BACKWARD_CASES[:4]):
            continue
        for layout in LAYOUTS:
            ops = [make_operand(s, torch.float32, layout, args.device, gen).requires_grad_()
                   for s in c.shapes[size]]
            times = interleaved(_backward_contenders(c.spec, ops), args.reps, args.block, args.device)
            stats = {k: summary(v) for k, v in times.items()}
            best_name = min(("torch.einsum", "contract_expression"), key=lambda n: stats[n]["median"])
            ratio = stats["shapecheck"]["median"] / stats[best_name]["median"]
            rows.append({"case": c.name, "spec": c.spec, "size": size, "layout": layout,
                         "ratio": ratio, "best": best_name, "stats": stats})
            print("  %-30s %-6s %-10s %6.2fx" % (c.name[:30], size, layout, ratio), flush=True)
    return rows


MEMORY_CASES = ("chain of 5", "chain of 8", "5-tensor network", "Tucker reconstruction",
                "MPS to full tensor", "attention scores (b s h d)", "bilinear", "CP reconstruction")


def peak_bytes(fn: Callable, device: str) -> int:
    """Peak bytes allocated during one call of ``fn``, its result included (kept alive)."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        out = fn()
        torch.cuda.synchronize()
        del out
        return torch.cuda.max_memory_allocated() - base
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = fn()
    del out
    events = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events()
                    if e.name() == "[memory]")
    current = peak = 0
    for _, nbytes in events:
        current += nbytes
        peak = max(peak, current)
    return peak


def memory_rows(args, size: str) -> list:
    """Peak memory of one call, shapecheck vs torch.einsum (opt_einsum on)."""
    gen = torch.Generator().manual_seed(2)
    rows = []
    for c in CASES:
        if c.name not in MEMORY_CASES:
            continue
        ops = [make_operand(s, torch.float32, "contiguous", args.device, gen) for s in c.shapes[size]]
        shapecheck.einsum(c.spec, *ops)  # the plan is compiled before measuring
        ours = peak_bytes(partial(shapecheck.einsum, c.spec, *ops), args.device)
        theirs = peak_bytes(partial(torch.einsum, c.spec, *ops), args.device)
        ratio = ours / theirs if theirs else float("inf")
        rows.append({"case": c.name, "spec": c.spec, "size": size, "shapecheck_bytes": ours,
                     "torch_bytes": theirs, "ratio": ratio})
        print("  %-30s %-6s %10d B vs %10d B  %5.2fx" % (c.name[:30], size, ours, theirs, ratio), flush=True)
    return rows


def per_call(fn, number: int, repeat: int) -> float:
    """Best per-call time in microseconds over ``repeat`` runs of ``number`` calls (CPU only).

    With one torch thread the clock is this thread's CPU time (``time.thread_time``), which
    time spent preempted by the other processes of a shared machine does not inflate; on an
    idle machine it equals the wall clock."""
    clock = time.thread_time if torch.get_num_threads() == 1 else time.perf_counter
    return min(timeit.Timer(fn, timer=clock).repeat(number=number, repeat=repeat)) / number * 1e6


def paired(ours, theirs, number: int, repeat: int) -> tuple:
    """Time two callables interleaved (ours, theirs, ours, ...); best per-call of each."""
    a, b = [], []
    for _ in range(repeat):
        a.append(per_call(ours, number, 1))
        b.append(per_call(theirs, number, 1))
    return min(a), min(b)


def design_rows(quick: bool) -> list:
    """DESIGN.md's targets: (name, shapecheck us, baseline us, target ratio)."""
    scale = 0.2 if quick else 1.0
    torch.backends.opt_einsum.enabled = True
    rows = []
    n = int(20000 * scale)
    for spec, ops in (("ij,jk->ik", [torch.randn(2, 2), torch.randn(2, 2)]),
                      ("bhid,bhjd->bhij", [torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4)])):
        ours, theirs = paired(partial(shapecheck.einsum, spec, *ops), partial(torch.einsum, spec, *ops), n, 7)
        rows.append(("einsum 2 operands small  %s" % spec, ours, theirs, 0.5))
    chain = "ab,bc,cd,de,ef->af"
    ops5 = [torch.randn(3, 3) for _ in range(5)]
    ours, theirs = paired(lambda: shapecheck.einsum(chain, *ops5), lambda: torch.einsum(chain, *ops5),
                          int(1000 * scale), 5)
    rows.append(("einsum 5-operand chain small, repeated (opt_einsum on)", ours, theirs, 0.2))
    rows += check_rows(quick)
    return rows


def _plain(x: Float[torch.Tensor, "b c"], y: Float[torch.Tensor, "c d"]) -> Float[torch.Tensor, "b d"]:
    return x @ y


def check_rows(quick: bool) -> list:
    """``@check`` overhead (decorated minus bare call) against jaxtyping+beartype's; disabled."""
    if beartype is None:
        return []
    plain = _plain
    scale = 0.2 if quick else 1.0
    x, y = torch.randn(2, 3), torch.randn(3, 4)
    ours_fn = shapecheck.check(plain)
    theirs_fn = jaxtyped(typechecker=beartype)(plain)
    n = int(20000 * scale)
    bare_a, ours = paired(lambda: plain(x, y), lambda: ours_fn(x, y), n, 7)
    theirs = per_call(lambda: theirs_fn(x, y), max(1, n // 10), 7)
    bare = min(bare_a, per_call(lambda: plain(x, y), n, 7))
    # issue 15's 0.1x of jaxtyping+beartype, stricter than DESIGN.md's 0.2x
    rows = [("@check overhead per call  (b c),(c d)->(b d)", ours - bare, theirs - bare, 0.1)]
    previous = os.environ.get("SHAPECHECK_DISABLE")
    os.environ["SHAPECHECK_DISABLE"] = "1"
    try:
        disabled_fn = shapecheck.check(plain)
    finally:
        if previous is None:
            del os.environ["SHAPECHECK_DISABLE"]
        else:
            os.environ["SHAPECHECK_DISABLE"] = previous
    same = disabled_fn is plain
    rows.append(("@check with SHAPECHECK_DISABLE=1: function returned unchanged" + ("" if same else " (NOT)"),
                 0.0 if same else per_call(lambda: disabled_fn(x, y), n, 5) - bare, theirs - bare, 0.0))
    return rows


def _fmt(stat: dict) -> str:
    return "%9.2f [%8.2f-%8.2f]" % (stat["median"], stat["p10"], stat["p90"])


def print_case_table(rows: list, limit: int) -> None:
    """The summary table of the case set, worst ratio first."""
    others = {"torch.einsum(oe off)": "oe-off", "oe.contract": "contract", "einops.einsum": "einops",
              "hand": "hand"}
    print("\n== case set: shapecheck / best of (torch.einsum, contract_expression), worst first ==")
    print("median us [p10-p90]; other anchors as ratios of shapecheck's median to theirs")
    print("%-30s %-6s %-7s %-10s %7s %-28s %-28s %-6s %s" % (
        "case", "size", "dtype", "layout", "ratio", "shapecheck us", "best us", "best",
        "  ".join("%8s" % label for label in others.values())))
    for row in sorted(rows, key=lambda r: -r["ratio"])[:limit]:
        st = row["stats"]
        extra = "  ".join(("%7.2fx" % (st["shapecheck"]["median"] / st[o]["median"])) if o in st
                          else "  absent" for o in others)
        print("%-30s %-6s %-7s %-10s %6.2fx %-28s %-28s %-6s %s%s%s" % (
            row["case"][:30], row["size"], row["dtype"], row["layout"], row["ratio"],
            _fmt(st["shapecheck"]), _fmt(st[row["best"]]),
            "torch" if row["best"] == "torch.einsum" else "expr", extra,
            ("  (first %.2fx)" % row["first_ratio"]) if "first_ratio" in row else "",
            ("  !" + row["note"]) if row["note"] else ""))


def main(argv=None) -> int:
    """Run the benchmark; print the tables and targets; write JSON when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a subset of cases, float32, fewer repetitions")
    parser.add_argument("--large", action="store_true", help="add the large sizes (meant for a GPU)")
    parser.add_argument("--json", metavar="OUT", help="write every measurement to OUT as JSON")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch intra-op threads (default 1: steadier on a shared machine)")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per contender")
    parser.add_argument("--block", type=float, default=None, help="seconds per timed block")
    parser.add_argument("--rows", type=int, default=40, help="rows of the case table to print")
    args = parser.parse_args(argv)
    args.reps = args.reps or (15 if args.quick else 31)
    args.block = args.block or 0.0003
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    print("shapecheck from %s" % Path(shapecheck.__file__).parent)
    print("torch %s, %d threads, device %s, opt_einsum %s, einops %s; python %s" % (
        torch.__version__, torch.get_num_threads(), args.device, opt_einsum.__version__,
        einops.__version__ if einops is not None else "absent", sys.version.split()[0]))
    runtime_einsum.clear_cache()
    sizes = ("small", "medium", "large") if args.large else ("small", "medium")
    dtypes = ("float32",) if args.quick else ("float32", "float64")
    print("\ncase set (%s; %s; %s)" % (", ".join(sizes), ", ".join(dtypes), ", ".join(LAYOUTS)))
    cases = case_rows(args, sizes, dtypes)
    print("\nrechecking the rows over %.2fx" % ROW_TARGET)
    recheck_rows(args, cases)
    print("\ndynamic shapes")
    dynamic = dynamic_rows(args)
    print("\ncyclic working set")
    cyclic = cyclic_rows(args)
    big = "large" if args.large else "medium"
    print("\nforward + backward (%s)" % big)
    backward = backward_rows(args, big)
    print("\npeak memory (%s)" % big)
    memory = memory_rows(args, big)
    print("\nDESIGN.md targets")
    design = design_rows(args.quick) if args.device == "cpu" else []

    print_case_table(cases, args.rows)
    results: list[dict[str, Any]] = []

    def target(name: str, ok: bool, detail: str) -> None:
        results.append({"target": name, "pass": ok, "detail": detail})

    worst = max(cases, key=lambda r: r["ratio"])
    over = [r for r in cases if r["ratio"] > ROW_TARGET]
    target("every case row <= %.2fx best of torch.einsum and contract_expression" % ROW_TARGET, not over,
           "%d of %d rows over; worst %.2fx (%s %s %s %s)" % (
               len(over), len(cases), worst["ratio"], worst["case"], worst["size"], worst["dtype"], worst["layout"]))
    wrong = [r for r in cases if r["note"]]
    target("every result equals torch.einsum's (values, shape, strides)", not wrong,
           "%d of %d rows differ%s" % (len(wrong), len(cases),
                                       (": " + "; ".join("%s %s %s: %s" % (r["case"], r["size"], r["layout"], r["note"])
                                                         for r in wrong[:4])) if wrong else ""))
    for row in dynamic + cyclic:
        target("dynamic shapes <= 1.00x torch.einsum (median of per-shape ratios): " + row["case"],
               row["paired_ratio"] <= 1.0,
               "%.2fx; ratio of medians %.2fx" % (row["paired_ratio"], row["ratio"]))
    for row in backward:
        target("forward+backward <= %.2fx best: %s %s" % (ROW_TARGET, row["case"], row["layout"]),
               row["ratio"] <= ROW_TARGET, "%.2fx of %s" % (row["ratio"], row["best"]))
    for row in memory:
        target("peak memory <= torch.einsum's: " + row["case"], row["ratio"] <= 1.0,
               "%d B vs %d B (%.2fx)" % (row["shapecheck_bytes"], row["torch_bytes"], row["ratio"]))
    for name, ours, theirs, goal in design:
        ratio = ours / theirs if theirs > 0 else float("inf")
        target("DESIGN.md / issue 15: %s <= %.2fx" % (name, goal), ratio <= goal + 1e-9,
               "%.2f us vs %.2f us (%.3fx)" % (ours, theirs, ratio))
    print("\n== targets ==")
    for item in results:
        print("%s  %s  (%s)" % ("PASS" if item["pass"] else "FAIL", item["target"], item["detail"]))
    passed = sum(item["pass"] for item in results)
    print("\n%d of %d targets pass; %.0f s" % (passed, len(results), time.perf_counter() - started))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "torch": torch.__version__, "device": args.device, "cases": cases, "dynamic": dynamic,
            "cyclic": cyclic, "backward": backward, "memory": memory,
            "design": [{"case": n, "shapecheck_us": a, "baseline_us": b, "target": t} for n, a, b, t in design],
            "targets": results}, indent=1))
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
