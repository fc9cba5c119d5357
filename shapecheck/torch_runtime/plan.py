"""Execution plans for ``shapecheck.einsum``: from a spec's structure to torch calls.

A plan is built once per structure (the spec, each operand's rank and size-1 dims, the order
of its strides, the path) and compiled to a small Python function ``bind(shapes)`` that returns
``run(x0, x1, ...)``, whose body is the exact sequence of torch calls the contraction needs; the
sizes (and their products, for reshapes) are read from ``shapes`` once, when the plan is bound
to a call's shapes. Nothing here looks at tensor values, and nothing here imports torch: the
compiled function only calls tensor methods on its arguments.

How a contraction is lowered:

1. every ``...`` becomes one label per broadcast dim, aligned from the right across operands;
2. each operand on its own: a label repeated in a term becomes a diagonal
   (``Tensor.diagonal``), a size-1 dim whose label is larger in another operand is squeezed
   (the value is constant along it, so it broadcasts), and a label used by no other operand nor
   the output is summed away;
3. operands are contracted pairwise along ``path`` (opt_einsum's format). A pair with summed
   labels becomes permute, reshape, ``mm``/``bmm``, reshape (or a single ``matmul`` when it is
   a batched product of matrices; ``bmm`` for a vector product, as torch does; a ``matmul``
   of a transposed view when the summed dims lie between an operand's own dims in memory,
   which flattening would copy); a pair
   without becomes a broadcasting multiply. Summed and batch dims are flattened in the
   operand's memory order, so a reshape after a permute stays a view. Both operand orders are
   tried and the one with fewer calls is kept (a step before the last can be asked for another
   candidate: see ``choices``, which ``layout`` weighs with the kernel cost model); the last
   step's order is the one that lays the result out as ``torch.einsum`` does (``layout``). A
   product of two 1-D operands, one of them strided, is a ``dot``;
4. the result is permuted into the output's order; each temporary is deleted after its last
   use when a later kernel could reuse its memory.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional, Sequence

from shapecheck.torch_runtime.kernel_costs import copy_cost, flatten_cost, mm_cost

ELLIPSIS = "..."


class _Operand:
    """A value of the generated code: its variable name, labels, sizes (one symbol per dim:
    ``"1"`` or the name of a size bound when the plan is bound) and memory order (its labels
    from the largest stride to the smallest, as far as the plan knows it)."""

    __slots__ = ("var", "labels", "sizes", "mem")

    def __init__(self, var: str, labels: list, sizes: list, mem: Optional[list] = None):
        self.var = var
        self.labels = labels
        self.sizes = sizes
        self.mem = list(labels) if mem is None else [label for label in mem if label in labels]


def expand_ellipsis(
    inputs: Sequence[Sequence[str]], output: Sequence[str], shapes: Sequence[Sequence]
) -> tuple[list[list[str]], list[str]]:
    """Replace each ``...`` by labels naming the broadcast dims it covers.

    Ellipsis dims are aligned from the right across operands (as broadcasting does), so the
    k-th dim from the right of every ellipsis gets the same label. The labels contain a dot,
    which no einsum label (letter or identifier) can, so they never collide.
    """
    width = 0
    for term, shape in zip(inputs, shapes):
        if ELLIPSIS in term:
            width = max(width, len(shape) - (len(term) - 1))
    names = ["...%d" % k for k in range(width)]
    new_inputs = []
    for term, shape in zip(inputs, shapes):
        if ELLIPSIS in term:
            covered = len(shape) - (len(term) - 1)
            at = term.index(ELLIPSIS)
            new_inputs.append(list(term[:at]) + names[width - covered:] + list(term[at + 1:]))
        else:
            new_inputs.append(list(term))
    new_output = []
    for label in output:
        if label == ELLIPSIS:
            new_output.extend(names)
        else:
            new_output.append(label)
    return new_inputs, new_output


class _Emitter:
    """Collects the lines of the generated function, names its temporaries and the products of
    sizes that the bind step computes once per shape."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0
        self.products: dict = {}
        self.squeezes: dict = {}  # var -> (source var, source dims kept, source rank)
        self.kernels: list = []  # (batch, m, k, n) size symbols of each product, for the cost model
        self.copies: list = []  # size symbols of each copy into torch's layout, for the cost model
        self.strided: frozenset = frozenset()  # inputs whose innermost stride is more than 1
        self.flattens: list = []  # size symbols of each operand a reshape copies, for the cost model
        self.grad_copies: list = []  # size symbols of each copy only the backward pass makes

    def copy(self) -> "_Emitter":
        twin = _Emitter()
        twin.lines = list(self.lines)
        twin.count = self.count
        twin.products = dict(self.products)
        twin.squeezes = dict(self.squeezes)
        twin.kernels = list(self.kernels)
        twin.copies = list(self.copies)
        twin.strided = self.strided
        twin.flattens = list(self.flattens)
        twin.grad_copies = list(self.grad_copies)
        return twin

    def fresh(self) -> str:
        self.count += 1
        return "t%d" % self.count

    def assign(self, expr: str) -> str:
        var = self.fresh()
        self.lines.append("    %s = %s" % (var, expr))
        return var

    def product(self, sizes: Iterable[str]) -> str:
        """The symbol of the product of ``sizes`` (computed when the plan is bound)."""
        factors = tuple(sorted(size for size in sizes if size != "1"))
        if not factors:
            return "1"
        if len(factors) == 1:
            return factors[0]
        name = self.products.get(factors)
        if name is None:
            name = "p%d" % len(self.products)
            self.products[factors] = name
        return name


def _tuple(values: Sequence[str]) -> str:
    """Python source for a tuple of size symbols."""
    if len(values) == 1:
        return "(%s,)" % values[0]
    return "(" + ", ".join(values) + ")"


def _ints(values: Sequence[str]) -> str:
    """Python source for a size or dim list passed as separate arguments: ``t.reshape(a, b)``
    parses about 1 us faster than ``t.reshape((a, b))`` (torch 2.x, CPU, measured); an empty
    list stays a tuple."""
    return ", ".join(values) if values else "()"


def _permute(em: _Emitter, op: _Operand, order: list) -> _Operand:
    """Permute ``op`` so its labels come in ``order`` (a permutation of its labels)."""
    if order == op.labels:
        return op
    perm = [op.labels.index(label) for label in order]
    rank = len(perm)
    if rank >= 2 and perm == list(range(rank - 2)) + [rank - 1, rank - 2]:
        var = em.assign("%s.mT" % op.var)
    else:
        var = em.assign("%s.permute(%s)" % (op.var, _ints([str(p) for p in perm])))
    return _Operand(var, list(order), [op.sizes[p] for p in perm], op.mem)


def _reshape(em: _Emitter, var: str, current: Sequence[str], target: Sequence[str]) -> str:
    """Reshape ``var`` to ``target`` unless it already has that shape."""
    if list(current) == list(target):
        return var
    return em.assign("%s.reshape(%s)" % (var, _ints(target)))


def _sum_labels(em: _Emitter, op: _Operand, labels: set) -> _Operand:
    """Sum ``op`` over the dims carrying ``labels``."""
    dims = [i for i, label in enumerate(op.labels) if label in labels]
    if not dims:
        return op
    var = em.assign("%s.sum(%s)" % (op.var, str(dims[0]) if len(dims) == 1 else _tuple([str(d) for d in dims])))
    keep = [i for i in range(len(op.labels)) if i not in dims]
    return _Operand(var, [op.labels[i] for i in keep], [op.sizes[i] for i in keep], op.mem)


def _take_diagonals(em: _Emitter, op: _Operand) -> _Operand:
    """Replace every label repeated within one operand by the diagonal over its dims."""
    while True:
        seen: dict = {}
        pair = None
        for i, label in enumerate(op.labels):
            if label in seen:
                pair = (seen[label], i)
                break
            seen[label] = i
        if pair is None:
            return op
        p, q = pair
        label = op.labels[p]
        var = em.assign("%s.diagonal(0, %d, %d)" % (op.var, p, q))
        rest = [i for i in range(len(op.labels)) if i not in (p, q)]
        mem = []
        for held in op.mem:
            if held not in mem:
                mem.append(held)
        op = _Operand(
            var, [op.labels[i] for i in rest] + [label], [op.sizes[i] for i in rest] + [op.sizes[p]], mem
        )


def _squeeze_broadcast(em: _Emitter, op: _Operand, full: dict) -> _Operand:
    """Drop size-1 dims whose label has another size elsewhere: they broadcast."""
    dims = [i for i, label in enumerate(op.labels) if op.sizes[i] == "1" and full[label] != "1"]
    if not dims:
        return op
    keep = [i for i in range(len(op.labels)) if i not in dims]
    sizes = [op.sizes[i] for i in keep]
    var = em.assign("%s.reshape(%s)" % (op.var, _ints(sizes)))
    em.squeezes[var] = (op.var, keep, len(op.labels))
    return _Operand(var, [op.labels[i] for i in keep], sizes, op.mem)


def _in_memory_order(op: _Operand, labels: list) -> list:
    """``labels`` (some of ``op``'s) from the largest stride to the smallest, so that flattening
    them after a permute is a view wherever ``op``'s layout allows it."""
    rank = {label: n for n, label in enumerate(op.mem)}
    return sorted(labels, key=lambda label: rank.get(label, len(rank)))


def _contract_pair(
    em: _Emitter, a: _Operand, b: _Operand, keep: set, layout: Optional[list] = None, mirror: bool = False
) -> Optional[_Operand]:
    """Contract two operands; labels in ``keep`` survive, shared labels not in it are summed.

    The result holds its labels as batch, then ``a``'s own, then ``b``'s own, contiguous in that
    order. ``layout`` (the last step's) names that order; ``None`` is returned when it cannot be
    met with ``a`` first. ``mirror`` lets ``b``'s summed dims lying between its own dims in memory
    run as ``a`` times ``b`` viewed as (outer, summed, inner), broadcast over outer (the result
    then holds outer, ``a``'s own, inner: see :func:`_mirrored_product`)."""
    in_b = set(b.labels)
    in_a = set(a.labels)
    a = _sum_labels(em, a, {label for label in a.labels if label not in in_b and label not in keep})
    b = _sum_labels(em, b, {label for label in b.labels if label not in in_a and label not in keep})
    in_b = set(b.labels)
    in_a = set(a.labels)
    batch = _in_memory_order(a, [label for label in a.labels if label in in_b and label in keep])
    summed = _in_memory_order(a, [label for label in a.labels if label in in_b and label not in keep])
    a_only = _in_memory_order(a, [label for label in a.labels if label not in in_b])
    b_only = _in_memory_order(b, [label for label in b.labels if label not in in_a])
    if layout is not None:
        n_batch, n_a = len(batch), len(a_only)
        if (set(layout[:n_batch]) != set(batch) or set(layout[n_batch:n_batch + n_a]) != set(a_only)
                or set(layout[n_batch + n_a:]) != set(b_only)):
            return None
        batch, a_only, b_only = layout[:n_batch], layout[n_batch:n_batch + n_a], layout[n_batch + n_a:]
    size = dict(zip(a.labels, a.sizes))
    size.update(zip(b.labels, b.sizes))
    batch_sizes = [size[label] for label in batch]
    a_sizes = [size[label] for label in a_only]
    b_sizes = [size[label] for label in b_only]
    out_labels = batch + a_only + b_only
    out_sizes = batch_sizes + a_sizes + b_sizes

    if not summed:
        a = _permute(em, a, batch + a_only)
        b = _permute(em, b, batch + b_only)
        a_var = a.var
        if batch or a_only:
            a_var = _reshape(em, a.var, a.sizes, batch_sizes + a_sizes + ["1"] * len(b_only))
        b_var = b.var
        if a_only and b_only:
            b_var = _reshape(em, b.var, b.sizes, batch_sizes + ["1"] * len(a_only) + b_sizes)
        elif a_only:
            b_var = _reshape(em, b.var, b.sizes, batch_sizes + ["1"] * len(a_only))
        var = em.assign("%s * %s" % (a_var, b_var))
        return _Operand(var, out_labels, out_sizes)

    k = em.product(size[label] for label in summed)
    if not batch and not a_only and not b_only and len(a.labels) == 1 and len(b.labels) == 1 and (
            a.var in em.strided or b.var in em.strided):
        # BLAS's dot reads strided vectors in place, where bmm first copies them (torch 2.13,
        # CPU, 4e6 float32 elements at stride 2: 5.6 ms against 16 ms for bmm or torch.einsum)
        em.kernels.append(((), "1", k, "1"))
        return _Operand(em.assign("%s.dot(%s)" % (a.var, b.var)), [], [])
    m = em.product(a_sizes)
    n = em.product(b_sizes)
    split = _split_around_summed(a, a_only, summed) if not batch and b_only else None
    mirrored = _split_around_summed(b, b_only, summed) if mirror and not batch and a_only and layout is None else None
    if mirrored is not None:
        return _mirrored_product(em, a, b, mirrored, summed, a_only, size, k, m)
    if split is not None:
        return _transposed_product(em, a, b, split, summed, b_only, size, k, n, out_sizes)
    a = _note_permuted(em, a, _permute(em, a, batch + a_only + summed))
    b = _note_permuted(em, b, _permute(em, b, batch + summed + b_only))
    em.kernels.append((tuple(batch_sizes), m, k, n))
    if len(batch) > 1 and len(a_only) == 1 and len(b_only) == 1 and len(summed) == 1:
        _note_flatten(em, a, [batch, a_only, summed])  # matmul folds the batch dims
        _note_flatten(em, b, [batch, summed, b_only])
        var = em.assign("%s.matmul(%s)" % (a.var, b.var))
        return _Operand(var, out_labels, out_sizes)
    if batch or not a_only or not b_only:
        # a vector product runs as torch's bmm does: mm of a 1 x k row is far slower
        nb = em.product(batch_sizes)
        _note_flatten(em, a, [batch, a_only, summed])
        _note_flatten(em, b, [batch, summed, b_only])
        a_var = _reshape(em, a.var, a.sizes, [nb, m, k])
        b_var = _reshape(em, b.var, b.sizes, [nb, k, n])
        var = em.assign("%s.bmm(%s)" % (a_var, b_var))
        var = _reshape(em, var, [nb, m, n], out_sizes)
    else:
        _note_flatten(em, a, [a_only, summed])
        _note_flatten(em, b, [summed, b_only])
        a_var = _reshape(em, a.var, a.sizes, [m, k])
        b_var = _reshape(em, b.var, b.sizes, [k, n])
        var = em.assign("%s.mm(%s)" % (a_var, b_var))
        var = _reshape(em, var, [m, n], out_sizes)
    return _Operand(var, out_labels, out_sizes)


def _note_permuted(em: _Emitter, before: _Operand, after: _Operand) -> _Operand:
    """Record for the backward cost model that a product reads ``after``, a permuted view of
    the intermediate ``before``: its gradient comes back in the permuted layout, which the
    backward of the product that made ``before`` copies (``bi,oij,bj->bo``'s plan that permutes
    ``[o, b, j]`` into ``[b, j, o]``: forward plus backward 2x the one that does not)."""
    if after.var != before.var and before.var.startswith("t"):
        em.grad_copies.append(tuple(before.sizes))
    return after


def _note_flatten(em: _Emitter, op: _Operand, groups: Sequence[Sequence[str]]) -> None:
    """Record for the cost model that viewing ``op`` as the matrices (or batch of matrices)
    ``groups`` (runs of its labels, in its order; the last two form the matrix) copies it: a
    group's labels are not adjacent, outermost first, in its memory order, or its innermost dim
    in memory lies in neither of the matrix's groups (BLAS needs one of them at stride 1). An
    operand whose memory order the plan does not fully know counts as no copy."""
    rank = {label: n for n, label in enumerate(op.mem)}
    if any(label not in rank for group in groups for label in group):
        return
    for group in groups:
        first = rank[group[0]] if group else 0
        if [rank[label] - first for label in group] != list(range(len(group))):
            em.flattens.append(tuple(op.sizes))
            return
    size = dict(zip(op.labels, op.sizes))
    inner = [label for label in op.mem if size.get(label, "1") != "1"]
    if inner and len(groups) > 2 and not any(inner[-1] in group for group in groups[-2:]):
        em.flattens.append(tuple(op.sizes))


def _split_around_summed(a: _Operand, a_only: list, summed: list) -> Optional[tuple[list, list]]:
    """``(outer, inner)`` when ``a``'s memory order is its own labels ``outer``, the summed
    labels, then its own labels ``inner`` (not empty), with ``outer + inner`` the order asked
    for ``a``'s own labels; else ``None``. Flattening ``a_only + summed`` would then copy all of
    ``a`` (e.g. ``bhij,hg->bgij``: (b i j, h) out of (b, h, i j) memory); :func:`_transposed_product`
    multiplies its transposed view instead."""
    mem = list(a.mem)
    if sorted(mem) != sorted(a.labels):
        return None
    n_outer = 0
    while n_outer < len(mem) and mem[n_outer] in a_only:
        n_outer += 1
    outer = mem[:n_outer]
    if mem[n_outer:n_outer + len(summed)] != summed:
        return None
    inner = mem[n_outer + len(summed):]
    if not inner or outer + inner != list(a_only):
        return None
    return outer, inner


def _transposed_product(
    em: _Emitter, a: _Operand, b: _Operand, split: tuple, summed: list, b_only: list, size: dict,
    k: str, n: str, out_sizes: list,
) -> _Operand:
    """``a`` (memory order outer, summed, inner) times ``b``: ``a`` is viewed as
    ``(outer, summed, inner)`` and transposed, which BLAS reads without a copy (measured on CPU,
    torch 2.13, ``bhij,hg->bgij`` at b4 h8 i256 j256 g8: 5.7 ms against 7.7-9.6 ms for the
    copy of ``a`` then ``mm``, as torch.einsum does). The result holds outer, inner, ``b``'s own."""
    outer, inner = split
    a = _permute(em, a, outer + summed + inner)
    _note_flatten(em, a, [outer, summed, inner])
    mi = em.product(size[label] for label in inner)
    em.kernels.append((tuple(size[label] for label in outer), mi, k, n))
    if outer:
        nb = em.product(size[label] for label in outer)
        a_var = em.assign("%s.mT" % _reshape(em, a.var, a.sizes, [nb, k, mi]))
        shape = [nb, mi, n]
    else:
        a_var = em.assign("%s.mT" % _reshape(em, a.var, a.sizes, [k, mi]))
        shape = [mi, n]
    b = _permute(em, b, summed + b_only)
    _note_flatten(em, b, [summed, b_only])
    b_var = _reshape(em, b.var, b.sizes, [k, n])
    if outer:  # bmm, not matmul: see _mirrored_product (forward plus backward 29 ms, not 38)
        var = em.assign("%s.bmm(%s.expand(%s, %s, %s))" % (a_var, b_var, nb, k, n))
    else:
        var = em.assign("%s.mm(%s)" % (a_var, b_var))
    var = _reshape(em, var, shape, out_sizes)
    return _Operand(var, outer + inner + list(b_only), out_sizes)


def _mirrored_product(
    em: _Emitter, a: _Operand, b: _Operand, split: tuple, summed: list, a_only: list, size: dict,
    k: str, m: str,
) -> _Operand:
    """``a`` times ``b`` (memory order outer, summed, inner): ``[m, k]`` times ``b`` viewed as
    ``(outer, k, inner)``, one ``bmm`` of ``a`` expanded over outer with no copy of ``b`` (the
    orientation ``tensordot`` takes for ``bhij,hg->bgij``). The result holds outer, ``a``'s own,
    inner."""
    outer, inner = split
    b = _permute(em, b, outer + summed + inner)
    _note_flatten(em, b, [outer, summed, inner])
    ni = em.product(size[label] for label in inner)
    em.kernels.append((tuple(size[label] for label in outer), m, k, ni))
    a = _permute(em, a, a_only + summed)
    _note_flatten(em, a, [a_only, summed])
    a_var = _reshape(em, a.var, a.sizes, [m, k])
    if outer:
        nb = em.product(size[label] for label in outer)
        b_var = _reshape(em, b.var, b.sizes, [nb, k, ni])
        shape = [nb, m, ni]
        # not matmul: when an operand requires grad, matmul folds ``b``'s batch into its rows,
        # which copies ``b`` transposed (bhij,hg->bgij at b4 h8 i256 j256 g8, forward plus
        # backward: 47 ms against 15 ms for contract_expression; torch 2.13, CPU, measured)
        var = em.assign("%s.expand(%s, %s, %s).bmm(%s)" % (a_var, nb, m, k, b_var))
        em.grad_copies.append((nb, m, k))  # the backward sums the expanded gradient over outer
    else:
        b_var = _reshape(em, b.var, b.sizes, [k, ni])
        shape = [m, ni]
        var = em.assign("%s.mm(%s)" % (a_var, b_var))
    em.lines[-1] += "  # mirrored"
    labels = outer + a_only + inner
    sizes = [size[label] for label in labels]
    var = _reshape(em, var, shape, sizes)
    return _Operand(var, labels, sizes)


def _finish(em: _Emitter, op: _Operand, out: Sequence[str]) -> _Operand:
    """Sum the labels the output drops, then permute into the output's order."""
    out_set = set(out)
    op = _sum_labels(em, op, {label for label in op.labels if label not in out_set})
    return _permute(em, op, list(out))


def label_sizes(inputs: Sequence[Sequence[str]], ones: Sequence[Sequence[bool]]) -> dict:
    """The size symbol of every label after broadcasting: ``"1"`` for a label of size 1 in
    every operand, else the name its size gets when the plan is bound."""
    full: dict = {}
    for term, flags in zip(inputs, ones):
        for label, one in zip(term, flags):
            full.setdefault(label, "1")
            if not one:
                full[label] = "size"
    count = 0
    for label in full:
        if full[label] != "1":
            full[label] = "s%d" % count
            count += 1
    return full


def _fold_reshapes(lines: list[str]) -> list[str]:
    """Drop a reshape whose only use is another reshape (``t2 = t1.reshape(a)`` then
    ``t3 = t2.reshape(b)`` becomes ``t3 = t1.reshape(b)``): one call fewer, the same values."""
    uses: dict = {}
    for line in lines:
        for name in _names(line):
            uses[name] = uses.get(name, 0) + 1
    source: dict = {}
    out: list[str] = []
    for line in lines:
        target, expr = [part.strip() for part in line.split("=", 1)]
        base, dot, rest = expr.partition(".reshape(")
        if dot and base in source:
            expr = source.pop(base) + ".reshape(" + rest
            out = [kept for kept in out if not kept.strip().startswith(base + " = ")]
        if dot and uses.get(target) == 1:
            source[target] = base
        out.append("    %s = %s" % (target, expr))
    return out


def _fold_squeezes(lines: list[str], squeezes: dict) -> list[str]:
    """Drop a squeeze (a reshape that only removes size-1 dims) whose only use is a permute
    whose only use is a reshape: the permute moves the size-1 dims to the front instead, and
    the reshape drops them (one call fewer; size-1 dims change neither values nor whether the
    reshape is a view)."""
    uses: dict = {}
    for line in lines:
        for name in _names(line):
            uses[name] = uses.get(name, 0) + 1
    exprs = {line.split("=", 1)[0].strip(): line.split("=", 1)[1].strip() for line in lines}
    dropped: set = set()
    out = []
    for line in lines:
        target, expr = [part.strip() for part in line.split("=", 1)]
        base, dot, rest = expr.partition(".")
        if base in squeezes and uses.get(base) == 1 and uses.get(target) == 1 and any(
                other.startswith(target + ".reshape(") for other in exprs.values()):
            source, keep, rank = squeezes[base]
            if rest == "mT":
                perm = list(range(len(keep) - 2)) + [len(keep) - 1, len(keep) - 2]
            elif rest.startswith("permute(") and rest.endswith(")"):
                perm = [int(p) for p in rest[len("permute("):-1].split(",")]
            else:
                perm = None
            if perm is not None:
                order = [d for d in range(rank) if d not in keep] + [keep[p] for p in perm]
                line = "    %s = %s.permute(%s)" % (target, source, ", ".join(map(str, order)))
                dropped.add(base)
        out.append(line)
    return [line for line in out if line.split("=", 1)[0].strip() not in dropped]


def _free_dead(lines: list[str], result: str) -> list[str]:
    """Insert ``del`` after each temporary's last use, so a chain holds no dead intermediate."""
    last: dict = {}
    for n, line in enumerate(lines):
        for name in _names(line):
            last[name] = n
    heavy = [n for n, line in enumerate(lines) if any(op in line for op in _KERNELS)]
    out = []
    for n, line in enumerate(lines):
        out.append(line)
        target = line.split("=", 1)[0].strip()
        dead = [name for name, at in last.items() if at == n and name != result and name != target]
        if dead and heavy and heavy[-1] > n:  # only a later kernel can reuse the memory
            out.append("    del " + ", ".join(sorted(dead)))
    return out


_KERNELS = ("mm(", "matmul(", " * ", ".sum(", ".dot(")


def _names(line: str) -> list[str]:
    """The temporaries (``t<n>``) a generated line reads."""
    expr = line.split("=", 1)[1] if "=" in line else line
    found = []
    for token in expr.replace("(", " ").replace(")", " ").replace(",", " ").replace(".", " ").split():
        if token.startswith("t") and token[1:].isdigit():
            found.append(token)
    return found


def build_source(
    inputs: Sequence[Sequence[str]],
    output: Sequence[str],
    ones: Sequence[Sequence[bool]],
    path: Optional[Sequence[tuple[int, int]]] = None,
    memory: Optional[Sequence[Sequence[int]]] = None,
    layout: Optional[Sequence[int]] = None,
    swapped: bool = False,
    strided: Optional[Sequence[bool]] = None,
    choices: Sequence[int] = (),
    counts: Optional[list] = None,
) -> str:
    """Python source of ``bind(shapes)``, which returns a function ``run(x0, x1, ...)``
    computing the einsum for operands of those shapes.

    The plan depends on the structure only: ``inputs`` and ``output`` are label lists (``"..."``
    allowed), ``ones[i][d]`` says whether dim ``d`` of operand ``i`` has size 1 (ranks follow);
    the sizes are read from ``shapes`` by ``bind``, which must already have been validated
    against the spec. ``path`` is the pairwise order for three or more operands (opt_einsum's
    format, each result appended); without it operands are contracted left to right, each
    result put first, as ``torch.einsum`` does. ``memory[i]`` lists operand ``i``'s dims from
    the largest stride to the smallest (summed and batch dims are flattened in that order, so
    a reshape stays a view); ``layout`` lists the output's dims the same way, as the result's
    strides should be (torch.einsum's), when the last step can produce it directly.

    ``swapped`` (two operands, with ``layout``) multiplies them in the other order than the one
    that produces ``layout`` directly, then copies the result into ``layout``: the plan the
    kernel cost model weighs against the direct one (:mod:`kernel_costs`). The source then also
    defines ``cost(shapes)``, that model's estimate in microseconds, as it does for every plan
    with a product.

    ``strided[i]`` says that operand ``i``'s innermost stride is more than 1 (a slice with a
    step): a product of two 1-D inputs, one of them strided, runs as ``dot`` (see
    :func:`_contract_pair`); the caller passes it only for dtypes whose ``dot`` torch has.

    Each step before the last (three or more operands) has candidates: both operand orders,
    then those that multiply a transposed view of the second operand (``_mirrored_product``),
    each group by number of calls; the fewest calls comes first. ``choices[s]`` picks step
    ``s``'s candidate (the first when absent or out of range); ``counts``, when given, receives
    how many candidates each such step had. The plans so chosen differ in the kernels' shapes
    and in which operands a reshape copies, which ``cost(shapes)`` weighs (for three or more
    operands: two operands' orders are weighed on their products and the copy into torch's
    layout, as the model was fitted; counting their reshape copies too picked the slower order
    of ``bhij,hg->bgij`` at b2 h8 i16 j16 g8, 69 us against 35 us).
    """
    shapes_like = [["."] * len(flags) for flags in ones]
    terms, out = expand_ellipsis(inputs, output, shapes_like)
    full = label_sizes(terms, ones)
    em = _Emitter()
    em.strided = frozenset("x%d" % i for i, flag in enumerate(strided or ()) if flag)
    ops = []
    for i, (term, flags) in enumerate(zip(terms, ones)):
        sizes = ["1" if one else full[label] for label, one in zip(term, flags)]
        mem = [term[d] for d in memory[i]] if memory is not None else None
        ops.append(_Operand("x%d" % i, list(term), sizes, mem))
    out_set = set(out)
    ops = [_squeeze_broadcast(em, _take_diagonals(em, op), full) for op in ops]
    for i, op in enumerate(ops):
        elsewhere = set(out_set)
        for j, other in enumerate(ops):
            if j != i:
                elsewhere.update(other.labels)
        ops[i] = _sum_labels(em, op, {label for label in op.labels if label not in elsewhere})
    final_layout = [out[d] for d in layout] if layout is not None else None

    front = path is None
    steps = list(path) if path is not None else []
    steps += [(0, 1)] * (len(ops) - 1 - len(steps))
    live = list(ops)
    step = 0  # steps before the last so far
    for i, j in steps:
        if len(live) < 2:
            break
        i, j = sorted((i, j))
        b = live.pop(j)
        a = live.pop(i)
        keep = set(out_set)
        for other in live:
            keep.update(other.labels)
        last = not live
        best: Optional[tuple[int, _Emitter, _Operand]] = None
        orders: tuple[tuple[_Operand, _Operand], ...] = ((a, b), (b, a))
        if swapped and last and final_layout is not None:
            direct = [pair for pair in orders
                      if _contract_pair(em.copy(), pair[0], pair[1], keep, final_layout) is not None]
            if len(direct) != 1:
                raise ValueError("no other order than the direct one")
            orders = tuple(pair for pair in orders if pair not in direct)
            final_layout = None
        if not last:
            found = _step_candidates(em, orders, keep)
            if counts is not None:
                counts.append(len(found))
            pick = choices[step] if step < len(choices) else 0
            best = found[pick if pick < len(found) else 0]
            step += 1
            orders = ()
        for first, second in orders:
            trial = em.copy()
            result = _contract_pair(trial, first, second, keep, final_layout, swapped)
            if result is None:
                continue
            result = _finish(trial, result, out)
            score = len(trial.lines)
            if best is None or score < best[0]:
                best = (score, trial, result)
        if best is None:  # the layout fits neither order: compute, torch's strides come later
            trial = em.copy()
            result = _contract_pair(trial, a, b, keep)
            assert result is not None  # no layout asked
            best = (0, trial, _finish(trial, result, out))
        _, em, result = best
        if front:
            live.insert(0, result)
        else:
            live.append(result)
    final = live[0] if len(ops) > 1 else _finish(em, live[0], out)
    var = final.var
    if swapped and not any(line.endswith("# mirrored") for line in em.lines):
        raise ValueError("the other order has no mirrored product: it differs only by a copy")
    if swapped and layout is not None:
        inverse = [list(layout).index(d) for d in range(len(layout))]
        var = em.assign("%s.permute(%s).contiguous().permute(%s)" % (
            var, _ints([str(d) for d in layout]), _ints([str(d) for d in inverse])))
        em.copies.append(tuple(full[label] for label in out))
    if var.startswith("x"):
        var = em.assign("%s.view_as(%s)" % (var, var))
    args = ", ".join("x%d" % i for i in range(len(ops)))
    prelude = []
    used = " ".join(em.lines) + " " + " ".join(" ".join(f) for f in em.products)
    for label, symbol in full.items():
        if symbol == "1" or symbol not in used.replace("(", " ").replace(",", " ").replace(")", " ").split():
            continue
        where = next((i, d) for i, (term, flags) in enumerate(zip(terms, ones))
                     for d, (lab, one) in enumerate(zip(term, flags)) if lab == label and not one)
        prelude.append("    %s = shapes[%d][%d]" % (symbol, where[0], where[1]))
    for factors, name in em.products.items():
        prelude.append("    %s = %s" % (name, " * ".join(factors)))
    lines = _free_dead(_fold_reshapes(_fold_squeezes(em.lines, em.squeezes)), var)
    body = ["    " + line for line in lines] + ["        return " + var]
    return "def bind(shapes):\n%s\n    def run(%s):\n%s\n    return run\n%s" % (
        "\n".join(prelude) if prelude else "    pass", args, "\n".join(body), _cost_source(em, terms, ones, full))


def _step_candidates(em: _Emitter, orders: tuple, keep: set) -> list:
    """``(calls, emitter, result)`` for each way to run a step before the last (see
    :func:`build_source`): the plain products of both orders, then the mirrored ones, each
    group stable-sorted by number of calls."""
    plain: list = []
    mirrored: list = []
    for mirror in (False, True):
        for first, second in orders:
            trial = em.copy()
            result = _contract_pair(trial, first, second, keep, None, mirror)
            if result is None:
                continue
            if mirror and not any(line.endswith("# mirrored") for line in trial.lines[len(em.lines):]):
                continue  # the same as the plain product
            (mirrored if mirror else plain).append((len(trial.lines), trial, result))
    return sorted(plain, key=lambda c: c[0]) + sorted(mirrored, key=lambda c: c[0])


def _cost_source(em: _Emitter, terms: list, ones: Sequence[Sequence[bool]], full: dict) -> str:
    """Source of ``cost(shapes)``: the kernel cost model's estimate (microseconds) of the
    plan's products and copies for these shapes; empty when the plan has no product."""
    if not em.kernels:
        return ""
    lines = []
    for label, symbol in full.items():
        if symbol == "1":
            continue
        where = next((i, d) for i, (term, flags) in enumerate(zip(terms, ones))
                     for d, (lab, one) in enumerate(zip(term, flags)) if lab == label and not one)
        lines.append("    %s = shapes[%d][%d]" % (symbol, where[0], where[1]))
    for factors, name in em.products.items():
        lines.append("    %s = %s" % (name, " * ".join(factors)))
    parts = ["mm_cost(%s, %s, %s, %s)" % (" * ".join(batch) or "1", m, k, n) for batch, m, k, n in em.kernels]
    parts += ["copy_cost(%s)" % (" * ".join(sizes) or "1") for sizes in em.copies]
    if len(terms) > 2:  # two operands' orders are weighed without them (see build_source)
        parts += ["flatten_cost(%s)" % (" * ".join(sizes) or "1") for sizes in em.flattens]
    back = ["mm_cost(%s, %s, %s, %s) + mm_cost(%s, %s, %s, %s)" % (
        " * ".join(batch) or "1", m, n, k, " * ".join(batch) or "1", k, m, n) for batch, m, k, n in em.kernels]
    back += ["copy_cost(%s)" % (" * ".join(sizes) or "1") for sizes in em.grad_copies]
    sizes = "\n".join(lines) or "    pass"
    return "def cost(shapes):\n%s\n    return %s\ndef grad_cost(shapes):\n%s\n    return cost(shapes) + %s\n" % (
        sizes, " + ".join(parts), sizes, " + ".join(back))


def compile_plan(source: str, name: str = "shapecheck_einsum_plan") -> Callable:
    """Compile the source from :func:`build_source` into its ``bind(shapes)`` function; the
    source's ``cost(shapes)``, if any, becomes ``bind.cost``, and ``grad_cost(shapes)`` (the same
    plus each product's two backward products, ``dC x B^T`` and ``A^T x dC``, and the copies
    only the backward makes) ``bind.grad_cost``."""
    namespace: dict = {"mm_cost": mm_cost, "copy_cost": copy_cost, "flatten_cost": flatten_cost}
    exec(compile(source, "<%s>" % name, "exec"), namespace)
    bind = namespace["bind"]
    bind.cost = namespace.get("cost")
    bind.grad_cost = namespace.get("grad_cost")
    return bind
