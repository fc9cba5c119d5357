"""Data loading: datasets whose items are known tensors, ``torch.utils.data.DataLoader`` over
them, and the batches a loop over such a loader binds.

With the default collate function, a batch of a dataset whose items are tuples of tensors (or
numbers) is a list of tensors, each with the batch as its first dim: ``for data, target in
loader`` binds two tensors of rank at least 1. The loader is known only for datasets whose items
are known: ``TensorDataset`` (its tensors' device) and ``torchvision.datasets`` (CPU tensors
after their transforms, unless the file has a ``transforms.Lambda``). A ``collate_fn`` (or
``**kwargs`` in a file that mentions one) and ``batch_size=None`` leave the batches unknown. With
``batch_size=1`` (or none given: the default is 1) and no ``batch_sampler``, every batch has a
first dim of 1 (the loader's ``value`` is 1).
Datasets and loaders are no tensors: their facts have no kind, only ``qual`` (and the device
and grad of the tensors they hold).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.eval.devices import device_of
from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.facts import CPU, NO_GRAD, TENSOR, Fact
from shapecheck.semantic.syntax import CallArgs, is_name
from shapecheck.shapes import Shape

TENSOR_DATASET = "torch.utils.data.TensorDataset"
#: the qual of every ``torchvision.datasets`` dataset (one for all: ``FakeData`` on one path and
#: ``ImageFolder`` on the other still yield CPU tensors)
VISION_DATASET = "torchvision.datasets"
LOADER = "torch.utils.data.DataLoader"
#: the qual of one batch of a known loader (a list of tensors)
BATCH = "torch.utils.data.DataLoader.batch"
#: progress bars that yield the elements of the iterable they wrap
PROGRESS_BARS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm"})


def data_call(ev: Eval, name: str, expr: cst.Call) -> Optional[Fact]:
    """``torch.utils.data.<name>(...)``: a ``TensorDataset`` or a ``DataLoader``; ``None`` for
    anything else."""
    args = CallArgs(expr)
    if name == "TensorDataset":
        tensors = [ev.fact(a) for a in args.pos]
        if args.starred or not tensors or any(t.kind != TENSOR for t in tensors):
            return Fact(qual=TENSOR_DATASET)
        grad = NO_GRAD if all(t.grad == NO_GRAD for t in tensors) else None
        return Fact(qual=TENSOR_DATASET, device=device_of(tensors), grad=grad)
    if name == "DataLoader":
        return _loader(ev, args)
    return None


def torchvision_dataset(ev: Eval, qual: str) -> Optional[Fact]:
    """``torchvision.datasets.<Name>(...)``: items of CPU tensors once transformed (of unknown
    device in a file with a ``transforms.Lambda``, which may move them)."""
    if qual.count(".") != 2 or not qual.split(".")[-1][:1].isupper():
        return None
    return Fact(qual=VISION_DATASET, device=None if ev.model.custom_transform else CPU, grad=NO_GRAD)


def _loader(ev: Eval, args: CallArgs) -> Optional[Fact]:
    if "collate_fn" in args.kw or (args.starred and ev.model.custom_collate):
        return None
    size = args.get(1, "batch_size")
    if size is not None and is_name(size, "None"):
        return None
    data = args.get(0, "dataset")
    ds = ev.fact(data) if data is not None else None
    if ds is None or ds.kind is not None or ds.qual is None:
        return None
    if ds.qual not in (TENSOR_DATASET, VISION_DATASET):
        return None
    one = "batch_sampler" not in args.kw and not args.starred and (
        size is None or type(size) is cst.Integer and size.value == "1")
    return Fact(qual=LOADER, device=ds.device, grad=ds.grad, value=1 if one else None)


def loader_batch(loader: Fact) -> Optional[Fact]:
    """The element a loop over ``loader`` binds, when it is a known loader."""
    if loader.kind is not None or loader.qual != LOADER:
        return None
    return Fact(qual=BATCH, device=loader.device, grad=loader.grad, value=loader.value)


def batch_fields(batch: Fact, count: int) -> Optional[tuple[Fact, ...]]:
    """The tensors ``a, b = batch`` binds from a batch of a known loader (a first dim of 1 when
    the loader's batches hold one sample)."""
    if batch.kind is not None or batch.qual != BATCH:
        return None
    first = 1 if batch.value == 1 else None
    return tuple(Fact(kind=TENSOR, shape=Shape((first,), rest_at=1), device=batch.device, grad=batch.grad)
                 for _ in range(count))


def batch_item(batch: Fact, index: Optional[int]) -> Optional[Fact]:
    """``batch[i]`` of a batch of a known loader (an int index): one of its tensors."""
    if index is None or batch.kind is not None or batch.qual != BATCH:
        return None
    return batch_fields(batch, 1)[0]  # type: ignore[index]


def holds_data(fact: Fact) -> bool:
    """A dataset or loader whose items the facts know (what a helper returning one gives)."""
    return fact.kind is None and fact.qual in (TENSOR_DATASET, VISION_DATASET, LOADER)
