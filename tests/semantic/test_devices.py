"""Device facts: factories, moves, joins, ``same-as``, the default device of the file, and
modules that move themselves."""

from __future__ import annotations

import pytest

from semantic_probe import one, one_with_head, reveal

from shapecheck.semantic.facts import CPU, CUDA, MAYBE_CUDA, MODULE, TENSOR, SameDeviceAs


def test_device_facts():
    code = """
    import torch
    import torch.nn as nn
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    reveal(dev)
    reveal(torch.zeros(3))
    reveal(torch.zeros(3, device="cuda:0"))
    reveal(torch.zeros(3).cuda())
    reveal(torch.zeros(3).to(dev))
    x = torch.zeros(2)
    reveal(torch.ones(2, device=x.device))
    reveal(torch.ones(2).to(torch.float16))
    model = nn.Linear(2, 2)
    built = model  # reveal() is an unknown function: it could change the module passed to it
    reveal(built)
    model.cuda()
    reveal(model)
    name = "cuda"
    reveal(name)
    """
    facts = [f for f, _ in reveal(code)]
    assert [f.device for f in facts] == [
        "maybe-cuda", "cpu", "cuda", "cuda", "maybe-cuda", "cpu", "cpu", "cpu", "cuda", "cuda"]
    assert facts[0].kind == "device" and facts[-1].kind == "device"
    assert facts[7].kind == "module" and facts[7].qual == "torch.nn.Linear"


def test_device_same_as_for_unknown_tensor():
    code = """
    import torch
    def f(x):
        reveal(torch.zeros(3, device=x.device))
    """
    assert one(code).device == SameDeviceAs("x")


@pytest.mark.parametrize(
    "code, expected",
    [
        ("reveal(torch.zeros(3))", CPU),
        ("with torch.device('cuda'):\n    reveal(torch.zeros(3))", None),
        ("with torch.device('cuda'):\n    pass\nreveal(torch.zeros(3))", None),
        ("def make():\n    return torch.zeros(3)\nwith torch.device('cuda:0'):\n    x = make()\n"
         "reveal(torch.ones(2))", None),
        ("reveal(torch.zeros(3))\ndef setup():\n    torch.set_default_device('cuda')", None),
        ("torch.set_default_device('cuda')\nreveal(nn.Linear(3, 2))", None),
        ("torch.set_default_tensor_type(torch.cuda.FloatTensor)\nreveal(torch.arange(3))", None),
        ("torch.set_default_device('cuda')\nreveal(torch.zeros(3).cpu())", CPU),
        ("torch.set_default_device('cuda')\nreveal(torch.zeros(3, device='cpu'))", CPU),
        ("reveal(nn.Linear(3, 2))", CPU),
        ("reveal(nn.Linear(3, 2, device='cuda'))", CUDA),
        ("reveal(nn.ReLU())", None),
        ("reveal(nn.ReLU().cuda())", None),
        ("m = nn.Dropout()\nm.cuda()\nreveal(m)", None),
    ],
)
def test_default_device_facts(code, expected):
    assert one_with_head(code).device == expected


MOVING = """
class Moves(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.cuda()
class MovesLater(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        if device is not None:
            self.to(device)
class Stays(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
class Helper(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2))
    def to_gpu(self):
        self.cuda()
        return self
class Child(Moves):
    pass
"""


@pytest.mark.parametrize(
    "expr, expected",
    [("Moves()", None), ("MovesLater(None)", None), ("Stays()", CPU), ("Helper()", None),
     ("Child()", None), ("Stays().cuda()", CUDA)],
)
def test_local_modules_that_move_themselves_are_not_on_the_cpu(expr, expected):
    f = one_with_head(MOVING + f"reveal({expr})\n")
    assert (f.kind, f.device) == (MODULE, expected)


LOADER = (
    "from torch.utils.data import DataLoader, TensorDataset\n"
    "from torchvision import datasets, transforms\n"
    "xs, ys = torch.randn(100, 4), torch.randn(100)\n"
)


@pytest.mark.parametrize(
    "code, expected",
    [
        # the fields of a batch of a TensorDataset: tensors of rank >= 1 on the dataset's device
        ("loader = DataLoader(TensorDataset(xs, ys), batch_size=8)\nfor data, target in loader:\n"
         "    reveal(data)", (TENSOR, CPU, "(?, ...)")),
        ("loader = DataLoader(TensorDataset(xs.cuda(), ys.cuda()), batch_size=8)\nfor data, target in loader:\n"
         "    reveal(target)", (TENSOR, CUDA, "(?, ...)")),
        # no batch_size: the default, one sample per batch
        ("loader = DataLoader(TensorDataset(xs, ys))\nfor i, (data, target) in enumerate(loader):\n"
         "    reveal(data)", (TENSOR, CPU, "(1, ...)")),
        ("loader = DataLoader(TensorDataset(xs, ys))\nfor batch in loader:\n    data, target = batch\n"
         "    reveal(data)", (TENSOR, CPU, "(1, ...)")),
        ("ds = datasets.MNIST('data', transform=transforms.ToTensor())\n"
         "for data, target in DataLoader(ds, batch_size=64, shuffle=True):\n    reveal(data)",
         (TENSOR, CPU, "(?, ...)")),
        ("from tqdm import tqdm\nloader = DataLoader(TensorDataset(xs, ys))\n"
         "for step, (data, target) in enumerate(tqdm(loader, desc='train')):\n    reveal(target)",
         (TENSOR, CPU, "(1, ...)")),
        # the batch itself is a list, not a tensor
        ("loader = DataLoader(TensorDataset(xs, ys))\nfor batch in loader:\n    reveal(batch)", (None, CPU, None)),
        # unknown: a collate function, no batching, a dataset of unknown items, a loader parameter
        ("loader = DataLoader(TensorDataset(xs, ys), collate_fn=f)\nfor data, target in loader:\n"
         "    reveal(data)", (None, None, None)),
        ("loader = DataLoader(TensorDataset(xs, ys), batch_size=None)\nfor data, target in loader:\n"
         "    reveal(data)", (None, None, None)),
        ("def run(ds):\n    for data, target in DataLoader(ds):\n        reveal(data)", (None, None, None)),
        ("def run(loader):\n    for data, target in loader:\n        reveal(data)", (None, None, None)),
        ("kw = {'batch_size': 2}\ncollate_fn = None\nfor data, target in DataLoader(TensorDataset(xs, ys), **kw):\n"
         "    reveal(data)", (None, None, None)),
        ("kw = {'batch_size': 2}\nfor data, target in DataLoader(TensorDataset(xs, ys), **kw):\n"
         "    reveal(data)", (TENSOR, CPU, "(?, ...)")),
        # a transforms.Lambda may move the images anywhere
        ("ds = datasets.MNIST('data', transform=transforms.Lambda(lambda x: x.cuda()))\n"
         "for data, target in DataLoader(ds):\n    reveal(data)", (TENSOR, None, "(1, ...)")),
    ],
)
def test_data_loader_batches(code, expected):
    f = one_with_head(LOADER + code)
    assert (f.kind, f.device, str(f.shape) if f.shape is not None else None) == expected


def test_current_accelerator_is_cuda_when_available():
    f = one_with_head(
        "if torch.accelerator.is_available():\n    device = torch.accelerator.current_accelerator()\n"
        "else:\n    device = torch.device('cpu')\nreveal(device)"
    )
    assert f.device == MAYBE_CUDA


def test_the_meta_device_is_a_device_of_its_own():
    code = """
    import torch
    import torch.nn as nn
    reveal(torch.device("meta"))
    reveal(torch.zeros(3, device="meta"))
    reveal(torch.zeros(3).to("meta"))
    reveal(nn.Linear(2, 2).to(torch.device("meta")))
    x = torch.zeros(3).to("meta") if torch.cuda.is_available() else torch.zeros(3)
    reveal(x)
    """
    facts = [f for f, _ in reveal(code)]
    assert [f.device for f in facts] == ["meta", "meta", "meta", "meta", None]
