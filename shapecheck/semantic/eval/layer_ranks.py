"""The shape of the result of a layer or ``F`` function that keeps its input's rank: which dims
it keeps (``torch_api.FUNCTIONAL_KEPT_DIMS``, ``NN_KEPT_DIMS``), every other size unknown."""

from __future__ import annotations

from typing import Optional, cast

from shapecheck.semantic.facts import CONTIGUOUS, NON_CONTIGUOUS, TENSOR, TUPLE, Fact
from shapecheck.shapes import Dim, Shape


def kept_shape(shape: Optional[Shape], how: Optional[str], name: str) -> Optional[Shape]:
    """The result shape of op ``name`` (``"max_pool2d"``, ``"Conv2d"``) on an input of ``shape``
    that keeps ``how`` of its dims (``"all"``, ``"batch_channel"``, ``"batch"`` or ``None``). The
    result's dim order is ``eval.layout.input_order_layout``'s business."""
    if shape is None:
        return None
    spatial = int(name[-2]) if name[-1:] == "d" and name[-2:-1].isdigit() else None
    if shape.rest_at is not None and spatial is not None and len(shape.dims) == spatial + 2:
        shape = Shape(shape.dims)  # at least N + 2 dims, and an op over N spatial dims takes at most N + 2
    if shape.rest_at is not None:
        return Shape((None,) * len(shape.dims), rest_at=shape.rest_at)
    if how == "all":
        return shape
    rank = len(shape.dims)
    batched = name in ("interpolate", "Upsample") or (spatial is not None and rank == spatial + 2)
    unbatched = spatial is not None and rank == spatial + 1
    kept: tuple[int, ...] = ()
    if how == "batch_channel":
        kept = (0, 1) if batched else (0,) if unbatched else ()
    elif how == "batch" and batched:
        kept = (0,)
    dims: list[Dim] = [d if i in kept else None for i, d in enumerate(shape.dims)]
    return Shape(tuple(dims))



#: the recurrent layers whose call returns ``(output, h_n)`` (``(output, (h_n, c_n))`` for LSTM)
RECURRENT_LAYERS = frozenset({"RNN", "LSTM", "GRU"})


def recurrent_output(x: Fact, lstm: bool, seq_first: bool, base: Fact) -> Fact:
    """``rnn(x)`` for an ``nn.RNN``/``LSTM``/``GRU``: the pair ``(output, h_n)`` (``h_n`` a pair
    ``(h_n, c_n)`` for an LSTM). ``output`` has the input's rank (2 unbatched, 3 batched; for a
    tensor of unknown rank, at least 2) and its sizes but the last, and ``h_n`` its rank; an
    input of unknown kind may be a ``PackedSequence``, and so may the results: their kind stays
    unknown, and so does their rank unless the input's is known.
    A layer built with ``batch_first=False`` (``seq_first``) returns a contiguous output; with
    ``batch_first=True`` the CPU kernel of torch 2.13 returns a transposed one, so its order is
    left unknown. ``base`` carries the device and grad of the results."""
    rank = x.shape.rank if x.shape is not None else None
    if rank not in (2, 3):
        rank = None
    # every dim but the last is the input's (sequence and batch, in the input's order)
    kind = TENSOR if x.kind == TENSOR else None
    shape: Optional[Shape] = Shape(cast(Shape, x.shape).dims[:-1] + (None,)) if rank is not None \
        else Shape((None, None), rest_at=2) if kind == TENSOR else None
    # batch_first: laid out in an order that depends on the kernel, so no later transpose is
    # taken to start from a plain tensor
    out = base.with_(kind=kind, shape=shape, layout=CONTIGUOUS if seq_first else NON_CONTIGUOUS,
                     strides=None, perm=None, moved_by=None)
    h = base.with_(kind=kind, shape=Shape((None,) * rank) if rank is not None else None, layout=None,
                   strides=None, perm=None, moved_by=None)
    state = Fact(kind=TUPLE, elems=(h, h)) if lstm else h
    return Fact(kind=TUPLE, elems=(out, state))


#: the rank of the parameters of ``torch.nn`` layers (what ``reset_parameters`` creates)
_WEIGHT_RANKS = {
    "Linear": 2, "Bilinear": 3, "Embedding": 2, "EmbeddingBag": 2,
    "Conv1d": 3, "Conv2d": 4, "Conv3d": 5, "ConvTranspose1d": 3, "ConvTranspose2d": 4, "ConvTranspose3d": 5,
    "BatchNorm1d": 1, "BatchNorm2d": 1, "BatchNorm3d": 1, "GroupNorm": 1, "InstanceNorm1d": 1,
    "InstanceNorm2d": 1, "InstanceNorm3d": 1, "PReLU": 1,
}


def parameter_shape(layer: str, attr: str) -> Optional[Shape]:
    """The rank (every size unknown) of parameter ``attr`` of an ``nn.<layer>``: a weight's
    rank from the table, a bias 1-d; the weights of ``RNN``/``LSTM``/``GRU`` 2-d, their biases
    1-d; ``None`` when not known."""
    if layer in RECURRENT_LAYERS or layer in ("RNNCell", "LSTMCell", "GRUCell"):
        rank = 2 if attr.startswith("weight_") else 1 if attr.startswith("bias_") or attr == "bias" else None
    elif attr == "bias":
        rank = 1 if layer in _WEIGHT_RANKS and layer not in ("Embedding", "EmbeddingBag", "PReLU") else None
    elif attr in ("running_mean", "running_var"):
        rank = 1 if layer.startswith(("BatchNorm", "InstanceNorm")) else None
    else:
        rank = _WEIGHT_RANKS.get(layer) if attr == "weight" else None
    return Shape((None,) * rank) if rank is not None else None
