"""Look-alike (correct code): detections padded with boxes.new_zeros(n, 1).

Source: https://github.com/phil-bergmann/tracking_wo_bnw/issues/172
Why it is correct: `new_zeros` creates the column on the boxes' device
Verified with torch 2.13 on CPU: demo() runs clean and returns True (verify.py maps .cuda() to the meta device).
"""
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, boxes):
        boxes = boxes + self.fc(boxes)
        return torch.cat([boxes, boxes.new_zeros(boxes.size(0), 1)], dim=1)


def demo():
    out = Regressor().cuda()(torch.rand(3, 4).cuda())
    return tuple(out.shape) == (3, 5)
