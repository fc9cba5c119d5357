"""Facts of data: ``batch[i]`` of a known loader, a loader returned by a helper of the file, the
legacy constructors (``torch.Tensor([3])``), ``torch.tensor([ids])``. (Module-level modules as
functions see them: tests/rules/device/test_device_globals_and_batches.py, since ``reveal(model)``
itself gives the module away.)"""

from __future__ import annotations

from semantic_probe import one

from shapecheck.semantic.eval.data_loading import LOADER, VISION_DATASET
from shapecheck.semantic.facts import CPU, TENSOR
from shapecheck.shapes import Shape, format_shape

LOADER_CODE = """
import torch
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.randn(10, 4), torch.randn(10)), batch_size=2)
for batch in loader:
    reveal(batch[{index}])
"""


def test_indexed_batch_is_a_tensor_of_the_loader() -> None:
    f = one(LOADER_CODE.format(index="0"))
    assert (f.kind, f.device, f.shape) == (TENSOR, CPU, Shape((None,), rest_at=1))
    assert one(LOADER_CODE.format(index="-1")).kind == TENSOR
    assert one(LOADER_CODE.format(index="i")).kind is None  # an index the analysis cannot read


def test_batches_of_one_sample_have_a_first_dim_of_one() -> None:
    """``batch_size=1``, or none given (the default is 1): every batch holds one sample."""
    one_sample = Shape((1,), rest_at=1)
    assert one(LOADER_CODE.replace("batch_size=2", "batch_size=1").format(index="0")).shape == one_sample
    assert one(LOADER_CODE.replace(", batch_size=2", "").format(index="1")).shape == one_sample
    sampled = LOADER_CODE.replace("batch_size=2", "batch_sampler=sampler").format(index="0")
    assert one(sampled).shape == Shape((None,), rest_at=1)


def test_loader_returned_by_a_helper_of_the_file() -> None:
    code = """
    import torch
    from torchvision import datasets, transforms
    def make(batch_size):
        return torch.utils.data.DataLoader(datasets.MNIST("d", transform=transforms.ToTensor()), batch_size)
    def main():
        reveal(make(64))
    """
    f = one(code)
    assert (f.kind, f.qual, f.device) == (None, LOADER, CPU)


def test_torchvision_datasets_join_to_one_kind() -> None:
    code = """
    import torch
    from torchvision import datasets, transforms
    if flag:
        ds = datasets.FakeData(10, (3, 8, 8), 2, transforms.ToTensor())
    else:
        ds = datasets.ImageFolder("d", transforms.ToTensor())
    reveal(ds)
    """
    f = one(code)
    assert (f.qual, f.device) == (VISION_DATASET, CPU)


def test_legacy_constructors() -> None:
    def summary(expr: str):
        f = one(f"import torch\nreveal({expr})")
        return f.kind, f.device, format_shape(f.shape) if f.shape is not None else None

    assert summary("torch.Tensor([3])") == (TENSOR, CPU, "(1,)")
    assert summary("torch.LongTensor([[1], [2]])") == (TENSOR, CPU, "(2, 1)")
    assert summary("torch.FloatTensor(2, 3)") == (TENSOR, CPU, "(2, 3)")
    assert summary("torch.Tensor(values)")[0] is None  # a tensor, an array or a size: unknown
    assert summary("torch.Tensor([3], device='cuda')")[0] is None


def test_tensor_of_a_list_display_has_at_least_one_dim() -> None:
    f = one("import torch\nreveal(torch.tensor([tokenizer.encode(text)]))")
    assert (f.kind, f.device, f.shape) == (TENSOR, CPU, Shape((1,), rest_at=1))
