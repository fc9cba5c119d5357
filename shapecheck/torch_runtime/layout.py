"""Structural einsum plans for ``shapecheck.einsum``, with ``torch.einsum``'s output strides.

A plan is compiled once per structure: the spec, each operand's rank, which of its dims have
size 1, the order of its strides, the dtype and device, and the pairwise path. It returns a
``bind(shapes)`` that fixes the sizes of one call's shapes, so a shape never seen before costs a
validation and a bind, not a compile.

``torch.einsum`` returns a permuted view of the result it computes (the last pairwise product
holds the dims shared by both operands, then the left operand's own, then the right one's,
swapped when the right one's all come first in the output; a single operand comes back as a
view or a reduction). Rather than re-derive that rule, each structure is probed once: both
torch and the plan run on tiny operands of the same structure, and the plan is asked to
produce torch's memory order in its last step. Where it cannot, the structure runs
``torch.einsum``'s own kernel (with the cached path), so the strides always agree.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Optional, Sequence

import torch

from shapecheck.torch_runtime.plan import build_source, compile_plan, expand_ellipsis

_STRUCTURES: OrderedDict = OrderedDict()
_MAX_STRUCTURES = 1024
_VF_EINSUM = torch._VF.einsum  # type: ignore[attr-defined]


NO_ONES = [(False,) * rank for rank in range(65)]
_CONTIGUOUS = [tuple(range(rank)) for rank in range(65)]


def clear_structures() -> None:
    """Forget every compiled structural plan."""
    _STRUCTURES.clear()


def memory_order(strides: Sequence[int], sizes: Sequence[int]) -> tuple:
    """The dims from the largest stride to the smallest; among equal strides a dim of size 1
    comes after the others (where a contiguous layout puts it)."""
    return tuple(sorted(range(len(strides)), key=lambda d: (-strides[d], sizes[d] == 1, d)))


class Structure:
    """One structure's compiled plan: ``bind(shapes)`` gives the function for one call's
    shapes, ``source`` is the code it runs, ``fits(shapes)`` tells whether shapes of this
    structure (ranks and size-1 dims already equal) bind every label to one size."""

    __slots__ = ("bind", "source", "fits")

    def __init__(self, bind: Callable, source: str, fits: Callable):
        self.bind = bind
        self.source = source
        self.fits = fits


def structure_key(parsed, operands: Sequence, shapes: Sequence, path) -> tuple:
    """What a structural plan depends on besides the sizes (see the module docstring)."""
    top = len(NO_ONES)
    ones = tuple(NO_ONES[len(shape)] if 1 not in shape and len(shape) < top
                 else tuple(n == 1 for n in shape) for shape in shapes)
    memory = tuple(_CONTIGUOUS[len(shape)] if 1 not in shape and len(shape) < top and op.is_contiguous()
                   else _signature(op.stride(), shape) for op, shape in zip(operands, shapes))
    return (parsed.text, parsed.form, ones, memory, tuple(op.dtype for op in operands),
            tuple(op.device for op in operands), None if path is None else tuple(path))


def _signature(strides: Sequence[int], shape: Sequence[int]) -> tuple:
    """How an operand's strides relate, for a layout other than plain contiguous: its
    :func:`memory_order`, then per dim in that order whether the next inner one has the same
    stride (``"e"``), packs it densely (``"d"``) or leaves a gap (``"g"``), and for the innermost
    whether its stride is 0, 1 or more. torch's elementwise kernels pick the result's layout
    from these relations (size-1 dims included), so operands that share them share it."""
    order = memory_order(strides, shape)
    relation = []
    for outer, inner in zip(order, order[1:]):
        if strides[outer] == strides[inner]:
            relation.append("e")
        elif strides[outer] == strides[inner] * shape[inner]:
            relation.append("d")
        else:
            relation.append("g")
    if order:
        last = strides[order[-1]]
        relation.append("0" if last == 0 else "1" if last == 1 else "g")
    return (order, "".join(relation))


def _strided(memory: tuple, dtype) -> Optional[list]:
    """Per operand, whether its innermost stride is more than 1 (its key's signature ends in
    ``"g"``), for the dtypes whose ``Tensor.dot`` torch has on every device; else ``None``."""
    if dtype not in _DOT_DTYPES:
        return None
    return [bool(entry) and isinstance(entry[0], tuple) and entry[1][-1:] == "g" for entry in memory]


_DOT_DTYPES = (torch.float32, torch.float64, torch.complex64, torch.complex128)


def _orders(memory: tuple) -> list:
    """Each operand's memory order from its key entry (a plain order or a signature)."""
    return [entry[0] if entry and isinstance(entry[0], tuple) else entry for entry in memory]


def cached_structure(key: tuple) -> Optional[Structure]:
    """The compiled plan of a structure seen before, else ``None``."""
    entry = _STRUCTURES.get(key)
    if entry is not None:
        _STRUCTURES.move_to_end(key)
    return entry


def plan_for_structure(parsed, operands: Sequence, shapes: Sequence[tuple], path) -> Structure:
    """The :class:`Structure` for these validated operands of one floating or complex dtype,
    compiled on first sight."""
    key = structure_key(parsed, operands, shapes, path)
    entry = cached_structure(key)
    if entry is None:
        _, ones, memory, dtypes, devices, _ = key[1:]
        entry = _compile(parsed, ones, memory, dtypes[0], devices[0], path)
        while len(_STRUCTURES) >= _MAX_STRUCTURES:
            _STRUCTURES.popitem(last=False)
        _STRUCTURES[key] = entry
    return entry


def _size_test(parsed, ones: tuple) -> Callable:
    """``fits(shapes)``: every label's dims of size other than 1 are equal."""
    terms, _ = expand_ellipsis(parsed.inputs, parsed.output, list(ones))
    where: dict = {}
    for i, (term, flags) in enumerate(zip(terms, ones)):
        for d, (label, one) in enumerate(zip(term, flags)):
            if not one:
                where.setdefault(label, []).append("s[%d][%d]" % (i, d))
    tests = ["%s == %s" % (places[0], other) for places in where.values() for other in places[1:]]
    return eval("lambda s: " + (" and ".join(tests) if tests else "True"))  # noqa: S307


def _equation(parsed) -> str:
    """The spec as torch.einsum's letters equation."""
    return parsed.text if parsed.form == "letters" else parsed.letters()


def _probe_operands(parsed, ones: tuple, memory: tuple, dtype, device) -> list:
    """Tiny operands of the same structure: each label gets its own small size (size-1 dims
    stay 1), each operand the same order of strides."""
    terms, _ = expand_ellipsis(parsed.inputs, parsed.output, list(ones))
    sizes: dict = {}
    probes = []
    for term, flags, entry in zip(terms, ones, memory):
        shape = [1 if one else sizes.setdefault(label, 2 + len(sizes)) for label, one in zip(term, flags)]
        if entry and isinstance(entry[0], tuple):
            order, relation = entry
        else:
            order, relation = entry, "d" * max(len(entry) - 1, 0) + "1"
        strides = [0] * len(shape)
        step = {"0": 0, "1": 1}.get(relation[-1], 2) if order else 1
        span = 1
        for k in range(len(order) - 1, -1, -1):
            d = order[k]
            if k < len(order) - 1:
                inner = order[k + 1]
                mark = relation[k]
                step = strides[inner] if mark == "e" else max(strides[inner], 1) * shape[inner] + (mark == "g")
            strides[d] = step
            span += (shape[d] - 1) * step
        base = torch.zeros(span, dtype=dtype, device=device)
        probes.append(base.as_strided(shape, strides))
    return probes


def _torch_run(equation: str, path) -> Callable:
    """torch.einsum's own kernel with this path (opt_einsum's format) or left to right."""
    if path is None:
        def run(*operands):
            return _VF_EINSUM(equation, operands)
    else:
        flat = [i for step in path for i in step]

        def run(*operands):
            return _VF_EINSUM(equation, operands, path=flat)
    return run


def _compile(parsed, ones: tuple, memory: tuple, dtype, device, path) -> Structure:
    """Compile one structure's plan, checked against torch's strides on probe operands."""
    equation = _equation(parsed)
    fallback = _torch_run(equation, path)
    try:
        probes = _probe_operands(parsed, ones, memory, dtype, device)
        want = fallback(*probes)
    except RuntimeError:  # probes too large to build (ranks near torch's limit): torch runs it
        return _torch_structure(parsed, ones, equation, path, fallback)
    layout: Optional[tuple] = memory_order(want.stride(), want.shape)
    if _contiguous_strides(want.shape, layout or ()) != want.stride():
        layout = None
    try:
        source = build_source(parsed.inputs, parsed.output, ones, path, _orders(memory), layout,
                              strided=_strided(memory, dtype))
        bind = compile_plan(source)
        got = bind([tuple(p.shape) for p in probes])(*probes)
        if got.shape == want.shape and got.stride() == want.stride():
            direct = Structure(bind, source, _size_test(parsed, ones))
            if len(ones) > 2:
                return _with_step_choices(direct, parsed, ones, memory, layout, path, probes, got, dtype)
            return _with_other_order(direct, parsed, ones, memory, layout, probes, got)
    except Exception:  # a plan torch's kernels reject: torch.einsum decides (and explains)
        pass
    return _torch_structure(parsed, ones, equation, path, fallback)


def _with_other_order(direct: Structure, parsed, ones: tuple, memory: tuple, layout, probes, want) -> Structure:
    """``direct``, or for two operands whose other order multiplies without copying an operand
    (``build_source(swapped=True)``, e.g. ``bhij,hg->bgij`` as ``[g, h] x [b, h, i j]``) a
    structure whose ``bind`` takes, for each call's sizes, the plan the kernel cost model
    (:mod:`kernel_costs`) says is cheaper, the other order's copy into torch's layout counted.
    The other plan must give the direct one's values and strides on the probe operands."""
    if len(ones) != 2 or layout is None or getattr(direct.bind, "cost", None) is None:
        return direct
    try:
        source = build_source(parsed.inputs, parsed.output, ones, None, _orders(memory), layout, swapped=True)
    except ValueError:  # no other order that avoids a copy of an operand
        return direct
    other = compile_plan(source)
    got = other([tuple(p.shape) for p in probes])(*probes)
    if got.shape != want.shape or got.stride() != want.stride() or not torch.allclose(got, want):
        return direct
    bind_direct, cost_direct, cost_other = direct.bind, direct.bind.cost, other.cost  # type: ignore[attr-defined]

    def bind(shapes):
        return other(shapes) if cost_other(shapes) < cost_direct(shapes) else bind_direct(shapes)

    def source_for(shapes):
        return source if cost_other(shapes) < cost_direct(shapes) else direct.source
    bind.cost = cost_direct  # type: ignore[attr-defined]
    bind.source_for = source_for  # type: ignore[attr-defined]
    text = "%s# when the kernel cost model (kernel_costs.py) rates it cheaper for the sizes:\n%s" % (
        direct.source, source)
    return Structure(bind, text, direct.fits)


_MAX_VARIANTS = 6
_MAX_CLASSES = 4096
_VARIANTS_FROM_US = 1000.0


def _with_step_choices(direct: Structure, parsed, ones: tuple, memory: tuple, layout, path, probes, want,
                       dtype) -> Structure:
    """``direct``'s plan for three or more operands, in a structure whose ``bind`` takes, for
    calls the kernel cost model (:mod:`kernel_costs`) rates at ``_VARIANTS_FROM_US`` or more,
    the plan it rates cheapest among ``direct`` and the plans that differ from it in one step
    before the last (the other operand order, or a product of a transposed view: see
    ``build_source``'s ``choices``), at most ``_MAX_VARIANTS`` in all, compiled on the first
    such call (about 5 ms each). The pick is made once per size class (the bit length of every
    size) and kept, once weighing the forward pass only and once with the backward (see
    ``compile_plan``'s ``grad_cost``): when they differ, the bound run takes the second when
    autograd records the call. The model counts each plan's products and the operands its reshapes copy,
    which ``direct`` (the fewest calls per step) does not weigh: for ``bi,oij,bj->bo`` at b256
    i128 j128 o64 it copies ``oij`` to flatten ``o j``, where ``[b, i] x [o, i, j]`` reads it in
    place. Each plan must give ``direct``'s strides on the probe operands."""
    cost_direct = getattr(direct.bind, "cost", None)
    if cost_direct is None:
        return direct
    built: list = []
    plain = (cost_direct, direct.bind, direct.source)

    def variants() -> list:
        if not built:
            built.extend(_step_variants(plain, parsed, ones, memory, layout, path, probes, want, dtype))
        return built

    def cheapest(shapes, grad: bool):
        plans = variants()
        best, least = plans[0], _rate(plans[0], shapes, grad)
        for plan in plans[1:]:
            cost = _rate(plan, shapes, grad)
            if cost < least:
                best, least = plan, cost
        return best

    picked: dict = {}  # (size class, grad) -> the plan picked for the first call of that class

    def pick(sizes: tuple, shapes, grad: bool):
        plan = picked.get((sizes, grad))
        if plan is None:
            if len(picked) >= _MAX_CLASSES:
                picked.clear()
            plan = picked[sizes, grad] = plain if cost_direct(shapes) < _VARIANTS_FROM_US else cheapest(shapes, grad)
        return plan

    def choose(shapes, grad: bool = False):
        # the class of a call's sizes: each size's bit length. Weighing every plan costs about
        # 10 us each (torch 2.13, CPU); a class reuses the first weighing's pick
        return pick(tuple([n.bit_length() for shape in shapes for n in shape]), shapes, grad)

    def bind_cheapest(shapes):
        sizes = tuple([n.bit_length() for shape in shapes for n in shape])
        forward = pick(sizes, shapes, False)
        backward = pick(sizes, shapes, True)
        if backward is forward:
            return forward[1](shapes)
        return _grad_switch(forward[1](shapes), backward[1](shapes))

    def source_for(shapes):
        return choose(shapes)[2]
    bind_cheapest.cost = cost_direct  # type: ignore[attr-defined]
    bind_cheapest.choose = choose  # type: ignore[attr-defined]
    bind_cheapest.source_for = source_for  # type: ignore[attr-defined]
    bind_cheapest.variants = lambda: [plan[1] for plan in variants()]  # type: ignore[attr-defined]
    text = direct.source + (
        "# for calls the kernel cost model (kernel_costs.py) rates at %.0f us or more, the cheapest of\n"
        "# this plan and the ones that take another candidate in one step before the last\n" % _VARIANTS_FROM_US)
    return Structure(bind_cheapest, text, direct.fits)


def _rate(plan: tuple, shapes, grad: bool) -> float:
    """The kernel cost model's estimate of ``plan`` (``(cost, bind, source)``) for these shapes,
    its backward pass included when ``grad``."""
    if grad:
        return plan[1].grad_cost(shapes)
    return plan[0](shapes)


def _grad_switch(forward: Callable, backward: Callable) -> Callable:
    """A run that calls ``backward`` (the plan picked for forward plus backward) when autograd
    records the call (grad enabled and an operand requires grad), ``forward`` otherwise."""
    is_grad_enabled = torch.is_grad_enabled

    def run(*operands):
        if is_grad_enabled() and any(op.requires_grad for op in operands):
            return backward(*operands)
        return forward(*operands)
    return run


def _step_variants(plain: tuple, parsed, ones: tuple, memory: tuple, layout, path, probes, want, dtype) -> list:
    """``[(cost, bind, source)]``: ``plain`` (the fewest-calls plan), then each plan that takes
    another candidate in one step before the last and gives ``plain``'s strides on the probes."""
    orders, strided = _orders(memory), _strided(memory, dtype)
    counts: list = []
    build_source(parsed.inputs, parsed.output, ones, path, orders, layout, strided=strided, counts=counts)
    shapes = [tuple(p.shape) for p in probes]
    plans = [plain]
    seen = {plain[2]}
    for step, count in enumerate(counts):
        for pick in range(1, count):
            if len(plans) >= _MAX_VARIANTS:
                return plans
            choices = [0] * step + [pick]
            try:
                source = build_source(parsed.inputs, parsed.output, ones, path, orders, layout,
                                      strided=strided, choices=choices)
                if source in seen:
                    continue
                seen.add(source)
                bind = compile_plan(source)
                got = bind(shapes)(*probes)
            except Exception:  # a variant torch's kernels reject: the others remain
                continue
            cost = getattr(bind, "cost", None)
            if cost is not None and got.shape == want.shape and got.stride() == want.stride():
                plans.append((cost, bind, source))
    return plans


def _torch_structure(parsed, ones: tuple, equation: str, path, fallback: Callable) -> Structure:
    """The structure that runs torch.einsum's own kernel (``fallback``)."""
    args = ", ".join("x%d" % i for i in range(len(ones)))
    if path is None:
        call = "torch._VF.einsum(%r, (%s,))" % (equation, args)
    else:
        call = "torch._VF.einsum(%r, (%s,), path=%r)" % (equation, args, [i for s in path for i in s])
    source = "def bind(shapes):\n    def run(%s):\n        return %s\n    return run\n" % (args, call)
    return Structure(lambda shapes: fallback, source, _size_test(parsed, ones))


def _contiguous_strides(shape: Sequence[int], order: Sequence[int]) -> tuple:
    """The strides of a tensor of ``shape`` laid out contiguously with dims in ``order``."""
    strides = [0] * len(shape)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    return tuple(strides)
