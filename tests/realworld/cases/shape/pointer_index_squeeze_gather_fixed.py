"""Fixed twin: start indices squeezed before a gather over the sequence.

Source: https://github.com/tiangexiang/CurveNet/pull/25
What goes wrong: `start_index.squeeze()` turns (1, 1, K) into (K,) for batch 1; the following gather on a (B, N, C)
tensor raises
The fix: `start_index.squeeze(1)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def gather_start_points(features, start_index):
    idx = start_index.squeeze(1)
    idx = idx.unsqueeze(-1).expand(-1, -1, features.size(-1))
    return torch.gather(features, 1, idx)


def demo():
    feats = torch.randn(1, 10, 4)
    start = torch.randint(0, 10, (1, 1, 3))
    return tuple(gather_start_points(feats, start).shape) == (1, 3, 4)
