"""The memory layout of an einsum's result, as ``torch.einsum`` lays it out (checked on torch 2.13).

- One operand whose spec only reorders its dims (no repeated index, no summed index:
  ``'nchpwq->nhwpqc'``) is a permuted view of it, like ``permute``: its strides moved with the
  dims, so a later ``.view`` that merges moved dims raises. Any other one-operand spec (a
  diagonal, a trace, a sum) leaves the layout unknown.
- Two operands contracted over at least one index, each index in at most one position of each
  operand and every index the output drops shared by both: torch lays the batched product out
  as (indices of both, indices of the left only, of the right only) and hands back that order,
  or the one with the two single-operand groups swapped. When the output lists its indices in
  either order the result is contiguous; otherwise its order is not certain and stays unknown.
- Everything else (three or more operands, an outer product, a broadcast batch index, an index
  known to be 1) keeps an unknown layout, in an order no later move may take as plain.
"""

from __future__ import annotations

from typing import Optional, Sequence

from shapecheck import strides as L
from shapecheck.einsum_parser import ELLIPSIS, EinsumSpec
from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.facts import CONTIGUOUS, NON_CONTIGUOUS, Fact
from shapecheck.shapes import Shape


def unknown_order(out: Fact) -> Fact:
    """``out`` laid out in an order the linter does not know (not taken as plain by a later move)."""
    return out.with_(layout=NON_CONTIGUOUS, strides=None, perm=None, moved_by=None)


def einsum_layout(spec: EinsumSpec, operands: Sequence[Fact], out: Fact) -> Fact:
    """``out`` (the einsum's result, its shape already set) with the layout torch gives it."""
    if len(operands) == 1:
        return _one_operand(spec, operands[0], out)
    if len(operands) == 2 and _contiguous_pair(spec, operands, out.shape):
        return out.with_(layout=CONTIGUOUS, perm=None, moved_by=None,
                         strides=_plain_strides(out.shape))
    return unknown_order(out)


def _plain_strides(shape: Optional[Shape]) -> Optional[tuple[int, ...]]:
    """Row-major strides when every size is a known int."""
    sizes = O.known_sizes(shape)
    return L.contiguous_strides(sizes) if sizes is not None else None


def _expanded(labels: Sequence[str], rank: Optional[int]) -> Optional[list[str]]:
    """The labels of each dim, the ellipsis spelled out as ``...0``, ``...1``... (numbered from
    the first dim it covers); ``None`` when the ellipsis's length is unknown."""
    if ELLIPSIS not in labels:
        return list(labels)
    if rank is None:
        return None
    width = rank - (len(labels) - 1)
    if width < 0:
        return None
    at = list(labels).index(ELLIPSIS)
    return list(labels[:at]) + [f"...{i}" for i in range(width)] + list(labels[at + 1:])


def _one_operand(spec: EinsumSpec, x: Fact, out: Fact) -> Fact:
    """A pure reordering is a permuted view of ``x``; anything else is of unknown layout."""
    labels = spec.inputs[0]
    rank = x.rank if ELLIPSIS in labels else len(labels)
    ins = _expanded(labels, rank)
    width = (rank - (len(labels) - 1)) if rank is not None and ELLIPSIS in labels else 0
    outs = _expanded(spec.output, (len(spec.output) - 1 + width) if ELLIPSIS in spec.output else None)
    if ins is None or outs is None or len(set(ins)) != len(ins) or sorted(ins) != sorted(outs):
        return unknown_order(out)
    if x.shape is None or x.shape.rank is None:
        x = x.with_(shape=O.rank_only(x.shape, len(ins)))  # the spec names every dim: the rank is known
        if x.shape is None:
            return unknown_order(out)
    order = [ins.index(label) for label in outs]
    moved = O.moved(x, O.permute_shape(x.shape, order), order, f"einsum('{spec.text}')")
    return out.with_(layout=moved.layout, strides=moved.strides, perm=moved.perm, moved_by=moved.moved_by)


def _contiguous_pair(spec: EinsumSpec, operands: Sequence[Fact], shape: Optional[Shape]) -> bool:
    """Whether torch's batched product of two operands hands back a contiguous result."""
    left, right = spec.inputs
    output = spec.output
    if ELLIPSIS in left or ELLIPSIS in right or ELLIPSIS in output:
        return False
    if len(set(left)) != len(left) or len(set(right)) != len(right):
        return False
    if any(op.shape is not None and 1 in op.shape.dims for op in operands):
        return False  # a broadcast index: torch may take another path
    if shape is not None and 1 in shape.dims:
        return False
    summed = [i for i in set(left) | set(right) if i not in output]
    if not summed or any(i not in left or i not in right for i in summed):
        return False
    both = [i for i in output if i in left and i in right]
    left_only = [i for i in output if i in left and i not in right]
    right_only = [i for i in output if i in right and i not in left]
    return list(output) in (both + left_only + right_only, both + right_only + left_only)
