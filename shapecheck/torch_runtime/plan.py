"""Execution plans for ``shapecheck.einsum``: from a validated spec and shapes to torch calls.

A plan is built once per (spec, shapes, dtypes, devices) and compiled to a small Python
function whose body is the exact sequence of torch calls the contraction needs, with every
size and permutation baked in as a constant. Nothing here looks at tensor values, and nothing
here imports torch: the compiled function only calls tensor methods on its arguments.

How a contraction is lowered:

1. every ``...`` becomes one label per broadcast dim, aligned from the right across operands;
2. each operand on its own: a label repeated in a term becomes a diagonal
   (``Tensor.diagonal``), a size-1 dim whose label is larger in another operand is squeezed
   (the value is constant along it, so it broadcasts), and a label used by no other operand nor
   the output is summed away;
3. operands are contracted pairwise along ``path`` (opt_einsum's format). A pair with summed
   labels becomes permute, reshape, ``mm``/``bmm``, reshape (or a single ``matmul`` when it is
   a batched product of matrices); a pair without becomes a broadcasting multiply. Both
   operand orders are tried and the one with fewer calls is kept;
4. the result is permuted into the output's order.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional, Sequence

ELLIPSIS = "..."


class _Operand:
    """A value of the generated code: its variable name, labels and sizes (one per dim)."""

    __slots__ = ("var", "labels", "sizes")

    def __init__(self, var: str, labels: list, sizes: list):
        self.var = var
        self.labels = labels
        self.sizes = sizes


def expand_ellipsis(
    inputs: Sequence[Sequence[str]], output: Sequence[str], shapes: Sequence[Sequence[int]]
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
    """Collects the lines of the generated function and names its temporaries."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def copy(self) -> "_Emitter":
        twin = _Emitter()
        twin.lines = list(self.lines)
        twin.count = self.count
        return twin

    def fresh(self) -> str:
        self.count += 1
        return "t%d" % self.count

    def assign(self, expr: str) -> str:
        var = self.fresh()
        self.lines.append("    %s = %s" % (var, expr))
        return var


def _tuple(values: Sequence[int]) -> str:
    """Python source for a tuple of ints."""
    if len(values) == 1:
        return "(%d,)" % values[0]
    return "(" + ", ".join(str(v) for v in values) + ")"


def _prod(values: Iterable[int]) -> int:
    n = 1
    for v in values:
        n *= v
    return n


def _permute(em: _Emitter, op: _Operand, order: list) -> _Operand:
    """Permute ``op`` so its labels come in ``order`` (a permutation of its labels)."""
    if order == op.labels:
        return op
    perm = [op.labels.index(label) for label in order]
    rank = len(perm)
    if rank >= 2 and perm == list(range(rank - 2)) + [rank - 1, rank - 2]:
        var = em.assign("%s.mT" % op.var)
    else:
        var = em.assign("%s.permute(%s)" % (op.var, _tuple(perm)))
    return _Operand(var, list(order), [op.sizes[p] for p in perm])


def _reshape(em: _Emitter, var: str, current: Sequence[int], target: Sequence[int]) -> str:
    """Reshape ``var`` to ``target`` unless it already has that shape."""
    if list(current) == list(target):
        return var
    return em.assign("%s.reshape(%s)" % (var, _tuple(target)))


def _sum_labels(em: _Emitter, op: _Operand, labels: set) -> _Operand:
    """Sum ``op`` over the dims carrying ``labels``."""
    dims = [i for i, label in enumerate(op.labels) if label in labels]
    if not dims:
        return op
    var = em.assign("%s.sum(%s)" % (op.var, _tuple(dims)))
    keep = [i for i in range(len(op.labels)) if i not in dims]
    return _Operand(var, [op.labels[i] for i in keep], [op.sizes[i] for i in keep])


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
        op = _Operand(
            var, [op.labels[i] for i in rest] + [label], [op.sizes[i] for i in rest] + [op.sizes[p]]
        )


def _squeeze_broadcast(em: _Emitter, op: _Operand, full: dict) -> _Operand:
    """Drop size-1 dims whose label has another size elsewhere: they broadcast."""
    dims = [i for i, label in enumerate(op.labels) if op.sizes[i] == 1 and full[label] != 1]
    if not dims:
        return op
    keep = [i for i in range(len(op.labels)) if i not in dims]
    sizes = [op.sizes[i] for i in keep]
    var = em.assign("%s.reshape(%s)" % (op.var, _tuple(sizes)))
    return _Operand(var, [op.labels[i] for i in keep], sizes)


def _contract_pair(em: _Emitter, a: _Operand, b: _Operand, keep: set) -> _Operand:
    """Contract two operands; labels in ``keep`` survive, shared labels not in it are summed."""
    in_b = set(b.labels)
    in_a = set(a.labels)
    a = _sum_labels(em, a, {label for label in a.labels if label not in in_b and label not in keep})
    b = _sum_labels(em, b, {label for label in b.labels if label not in in_a and label not in keep})
    in_b = set(b.labels)
    in_a = set(a.labels)
    batch = [label for label in a.labels if label in in_b and label in keep]
    summed = [label for label in a.labels if label in in_b and label not in keep]
    a_only = [label for label in a.labels if label not in in_b]
    b_only = [label for label in b.labels if label not in in_a]
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
            a_var = _reshape(em, a.var, a.sizes, batch_sizes + a_sizes + [1] * len(b_only))
        b_var = b.var
        if a_only and b_only:
            b_var = _reshape(em, b.var, b.sizes, batch_sizes + [1] * len(a_only) + b_sizes)
        elif a_only:
            b_var = _reshape(em, b.var, b.sizes, batch_sizes + [1] * len(a_only))
        var = em.assign("%s * %s" % (a_var, b_var))
        return _Operand(var, out_labels, out_sizes)

    k = _prod(size[label] for label in summed)
    m = _prod(a_sizes)
    n = _prod(b_sizes)
    a = _permute(em, a, batch + a_only + summed)
    b = _permute(em, b, batch + summed + b_only)
    if len(batch) > 1 and len(a_only) == 1 and len(b_only) == 1 and len(summed) == 1:
        var = em.assign("%s.matmul(%s)" % (a.var, b.var))
        return _Operand(var, out_labels, out_sizes)
    if batch:
        nb = _prod(batch_sizes)
        a_var = _reshape(em, a.var, a.sizes, [nb, m, k])
        b_var = _reshape(em, b.var, b.sizes, [nb, k, n])
        var = em.assign("%s.bmm(%s)" % (a_var, b_var))
        var = _reshape(em, var, [nb, m, n], out_sizes)
    else:
        a_var = _reshape(em, a.var, a.sizes, [m, k])
        b_var = _reshape(em, b.var, b.sizes, [k, n])
        var = em.assign("%s.mm(%s)" % (a_var, b_var))
        var = _reshape(em, var, [m, n], out_sizes)
    return _Operand(var, out_labels, out_sizes)


def _finish(em: _Emitter, op: _Operand, out: Sequence[str]) -> _Operand:
    """Sum the labels the output drops, then permute into the output's order."""
    out_set = set(out)
    op = _sum_labels(em, op, {label for label in op.labels if label not in out_set})
    return _permute(em, op, list(out))


def label_sizes(inputs: Sequence[Sequence[str]], shapes: Sequence[Sequence[int]]) -> dict:
    """The size of every label after broadcasting (a size-1 dim yields to any other size)."""
    full: dict = {}
    for term, shape in zip(inputs, shapes):
        for label, n in zip(term, shape):
            if full.get(label, 1) == 1:
                full[label] = n
    return full


def build_source(
    inputs: Sequence[Sequence[str]],
    output: Sequence[str],
    shapes: Sequence[Sequence[int]],
    path: Optional[Sequence[tuple[int, int]]] = None,
) -> str:
    """Python source of a function ``run(x0, x1, ...)`` computing the einsum.

    ``inputs`` and ``output`` are label lists (``"..."`` allowed), ``shapes`` the operands'
    sizes, which must already have been validated against the spec. ``path`` is the pairwise
    order for three or more operands (opt_einsum's format); left to right when omitted.
    """
    terms, out = expand_ellipsis(inputs, output, shapes)
    full = label_sizes(terms, shapes)
    em = _Emitter()
    ops = [
        _Operand("x%d" % i, list(term), list(shape)) for i, (term, shape) in enumerate(zip(terms, shapes))
    ]
    out_set = set(out)
    ops = [_squeeze_broadcast(em, _take_diagonals(em, op), full) for op in ops]
    for i, op in enumerate(ops):
        elsewhere = set(out_set)
        for j, other in enumerate(ops):
            if j != i:
                elsewhere.update(other.labels)
        ops[i] = _sum_labels(em, op, {label for label in op.labels if label not in elsewhere})

    steps = list(path) if path is not None else []
    steps += [(0, 1)] * (len(ops) - 1 - len(steps))
    live = list(ops)
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
        best: Optional[tuple[_Emitter, _Operand]] = None
        for first, second in ((a, b), (b, a)):
            trial = em.copy()
            result = _contract_pair(trial, first, second, keep)
            if last:
                result = _finish(trial, result, out)
            if best is None or len(trial.lines) < len(best[0].lines):
                best = (trial, result)
        assert best is not None  # the loop above ran twice
        em, result = best
        live.append(result)
    final = live[0] if len(ops) > 1 else _finish(em, live[0], out)
    var = final.var
    if var.startswith("x"):
        var = em.assign("%s.view(%s)" % (var, _tuple(final.sizes)))
    args = ", ".join("x%d" % i for i in range(len(ops)))
    body = em.lines + ["    return " + var]
    return "def run(%s):\n%s\n" % (args, "\n".join(body))


def compile_plan(source: str, name: str = "shapecheck_einsum_plan") -> Callable:
    """Compile the source from :func:`build_source` into a function."""
    namespace: dict = {}
    exec(compile(source, "<%s>" % name, "exec"), namespace)
    return namespace["run"]
