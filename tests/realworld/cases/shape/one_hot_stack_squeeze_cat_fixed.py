"""Fixed twin: one-hot view encodings stacked and squeezed before concatenation with features.

Source: https://github.com/echonet/EchoPrime/pull/14
What goes wrong: `torch.stack([...]).squeeze()` turns (1, 1, 11) into (11,) for a single video; `torch.cat` with the
(1, 512) features raises
The fix: drop the stack/squeeze and keep the (N, 11) one-hot
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn.functional as F


def encode_study(features, out_views):
    views = F.one_hot(out_views, num_classes=11).float()
    return torch.cat([features, views], dim=1)


def demo():
    out = encode_study(torch.randn(1, 512), torch.tensor([3]))
    return tuple(out.shape) == (1, 523)
