"""Module state: where the file moves the instances of its module classes, and which methods
see them there (:mod:`shapecheck.semantic.module_state`)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from shapecheck.engine.checker import analyze
from shapecheck.semantic.facts import CUDA, MAYBE_CUDA, MPS

HEAD = "import torch\nimport torch.nn as nn\n"

CLASSES = """\
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(2)])
"""


def placements(code: str) -> dict[str, tuple[str, str]]:
    source = HEAD + CLASSES + textwrap.dedent(code)
    checker = analyze(cst.parse_module(source), [], source)
    return {name: (device, note) for name, (device, note) in checker.model.placements.items()}


@pytest.mark.parametrize(
    "code, device",
    [
        ("Net().cuda()\n", CUDA),
        ("m = Net()\nm.to('cuda:0')\n", CUDA),
        ("m = Net()\nm = m.to(torch.device('mps'))\n", MPS),
        ("dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nm = Net().to(dev)\n", MAYBE_CUDA),
        ("def main():\n    dev = 'cpu'\n    if torch.cuda.is_available():\n        dev = 'cuda'\n"
         "    Net().to(dev)\n", MAYBE_CUDA),
        ("dev = 'cuda'\ndef main():\n    net = nn.DataParallel(Net())\n    net.to(device=dev)\n", CUDA),
        ("m = Net().float().cuda().eval()\n", CUDA),
        ("if torch.accelerator.is_available():\n    d = torch.accelerator.current_accelerator()\nelse:\n"
         "    d = torch.device('cpu')\nNet().to(d)\n", MAYBE_CUDA),
        ("def main(rank):\n    Net().to(f'cuda:{rank}')\n", CUDA),
    ],
)
def test_a_moved_class_and_its_submodules_are_placed(code, device):
    placed = placements(code)
    assert placed["Net"][0] == device and placed["Block"][0] == device
    assert placed["Block"][1].startswith("`Block` is a submodule of `Net`, moved to")


@pytest.mark.parametrize(
    "code",
    [
        "Net()\n",
        "Net().to('cpu')\n",
        "Net().to(torch.float16)\n",
        "def main(device):\n    Net().to(device)\n",
        "def main(args):\n    Net().to(args.device)\n",
        "Block = None\nNet().cuda() if False else None\n",
    ],
)
def test_no_move_to_an_accelerator_places_nothing(code):
    assert "Block" not in placements(code)


def test_the_note_names_the_line_of_the_move():
    assert placements("x = 1\nmodel = Net().cuda()\n")["Net"][1] == "`Net` is moved to CUDA at line 12"


def test_a_base_class_runs_on_its_subclass_instances():
    placed = placements("class Deep(Net):\n    pass\nDeep().cuda()\n")
    assert placed["Net"][1] == "`Net` is a base class of `Deep`, moved to CUDA at line 13"
    assert placed["Block"][1] == "`Block` is a submodule of `Deep`, moved to CUDA at line 13"


def test_a_class_that_moves_itself_is_not_placed():
    code = "class Self(nn.Module):\n    def to(self, *a):\n        return self\nSelf().cuda()\n"
    assert "Self" not in placements(code)


def test_a_plain_list_does_not_register_its_modules():
    code = "class Holder(nn.Module):\n    def __init__(self):\n        super().__init__()\n" \
        "        self.items = [Block()]\nHolder().cuda()\n"
    placed = placements(code)
    assert "Holder" in placed and "Block" not in placed


@pytest.mark.parametrize(
    "code, device, note",
    [
        ("def train(model, device):\n    model = model.to(device)\ndef main():\n    net = Net()\n"
         "    train(net, 'cuda')\n", CUDA, "`Net` is moved to CUDA at line 12 in `train`, called at line 15"),
        ("def train(model):\n    model.cuda()\ndef fit(m):\n    train(m)\nfit(Net())\n", CUDA,
         "`Net` is moved to CUDA at line 12 in `train`, called at line 15"),
        ("dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
         "class Trainer:\n    def __init__(self, model, device=dev):\n        self.model = model.to(device)\n"
         "Trainer(Net())\n", MAYBE_CUDA, "`Net` is moved to CUDA when it is available at line 14 in "
         "`Trainer.__init__`, called at line 15"),
    ],
)
def test_a_function_that_moves_its_parameter_places_the_classes_it_is_given(code, device, note):
    placed = placements(code)
    assert placed["Net"] == (device, note) and placed["Block"][0] == device


@pytest.mark.parametrize(
    "code",
    [
        "def train(model, device):\n    model.to(device)\ndef main(args):\n    train(Net(), args.device)\n",
        "def train(model, device):\n    model.to(device)\n",
        "def train(model, other):\n    other.cuda()\ntrain(Net(), nn.Linear(2, 2))\n",
        "def train(model):\n    model = nn.Linear(2, 2)\n    model.cuda()\ntrain(Net())\n",
        "def train(model):\n    model.cuda()\ndef train(model):\n    pass\ntrain(Net())\n",
    ],
)
def test_a_function_moves_nothing_it_is_not_surely_given(code):
    assert "Net" not in placements(code)
