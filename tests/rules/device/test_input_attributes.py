"""SC403 on tensors that ``forward`` reads off an input object (rules/device/input_attributes.py):
DETR's sine position encoding divides by a factory result made without ``device=``; the tensors
a ``NestedTensor`` holds are wherever the caller put it. Correct twins: the factory made on
the mask's device, and ``PackedSequence.batch_sizes`` (a CPU tensor wherever the data is).

The invalid case fails with torch 2.13 when the ``meta`` device stands in for CUDA.
"""

from __future__ import annotations

import subprocess
import sys
from functools import partial

import pytest

from rule_harness import family_rules, finding_lines, findings

DEVICE_RULES = family_rules("SC4")
codes = partial(finding_lines, rules=DEVICE_RULES)
flagged = partial(findings, rules=DEVICE_RULES)

POS = (
    "import torch\n"
    "import torch.nn as nn\n"
    "class NestedTensor:\n"
    "    def __init__(self, tensors, mask):\n"
    "        self.tensors, self.mask = tensors, mask\n"
    "class PositionEmbeddingSine(nn.Module):\n"
    "    def forward(self, tensor_list: NestedTensor):\n"
    "        x = tensor_list.tensors\n"
    "        mask = tensor_list.mask\n"
    "        not_mask = ~mask\n"                                                     # 10
    "        y_embed = not_mask.cumsum(1, dtype=torch.float32)\n"
    "        x_embed = not_mask.cumsum(2, dtype=torch.float32)\n"
    "        dim_t = torch.arange(8, dtype=torch.float32DEVICE)\n"
    "        dim_t = 10000 ** (2 * (dim_t // 2) / 8)\n"
    "        pos_x = x_embed[:, :, :, None] / dim_t\n"                               # 15
    "        pos_y = y_embed[:, :, :, None] / dim_t\n"
    "        return torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)\n"
)
BUGGY = POS.replace("DEVICE", "")
FIXED = POS.replace("DEVICE", ", device=x.device")


def test_a_factory_meeting_a_tensor_of_the_input_object_is_flagged():
    assert codes(BUGGY) == [("SC403", 15), ("SC403", 16)]
    message = flagged(BUGGY)[0][2]
    assert "computed from the input `tensor_list.mask`" in message
    assert "when `tensor_list.mask` is on the GPU" in message


def test_the_fixed_twin_and_cpu_attributes_are_silent():
    assert codes(FIXED) == []
    packed = ("import torch\nimport torch.nn as nn\nclass Steps(nn.Module):\n"
              "    def forward(self, packed, n: int):\n        return torch.arange(n)[:, None] < packed.batch_sizes\n")
    assert codes(packed) == []


def test_no_fix_is_offered_for_an_attribute_of_the_input(tmp_path):
    path = tmp_path / "pos.py"
    path.write_text(BUGGY)
    out = subprocess.run([sys.executable, "-m", "shapecheck", "lint", "--select", "SC403", "--diff", str(path)],
                         capture_output=True, text=True)
    assert "device=" not in out.stdout
    assert path.read_text() == BUGGY


def test_the_buggy_version_fails_off_the_cpu():
    torch = pytest.importorskip("torch")
    scope: dict = {}
    exec(BUGGY, scope)
    mask = torch.zeros(2, 4, 5, dtype=torch.bool, device="meta")
    nested = scope["NestedTensor"](torch.zeros(2, 3, 4, 5, device="meta"), mask)
    with pytest.raises(RuntimeError):
        scope["PositionEmbeddingSine"]()(nested)
    exec(FIXED, scope)
    assert scope["PositionEmbeddingSine"]()(nested).shape == (2, 16, 4, 5)
