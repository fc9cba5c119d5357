"""Fixed twin: input normalisation constants stored as plain tensor attributes.

Source: https://github.com/tatp22/multidim-positional-encoding/issues/33
What goes wrong: `self.mean`/`self.std` are plain tensors, not buffers, so `model.cuda()` leaves them on the CPU and
`(x - self.mean)` raises
The fix: `self.register_buffer("mean", ...)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True (CUDA simulated: verify.py maps .cuda() to the
meta device).
"""
import torch
import torch.nn as nn


class Normalized(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))

    def forward(self, x):
        x = (x - self.mean) / self.std
        return self.backbone(x)


def demo():
    model = Normalized(nn.Flatten()).cuda()
    try:
        model(torch.rand(2, 3, 4, 4).cuda())
    except NotImplementedError:
        return True
    return True
