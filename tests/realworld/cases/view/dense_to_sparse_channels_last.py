"""Bug case: dense feature map made channels-last and flattened to (points, channels).

Source: https://github.com/facebookresearch/SparseConvNet/issues/220
What goes wrong: `aa = input.permute(0, 2, 3, 1)` is not contiguous; `aa.view(-1, input.size(1))` raises
The fix: `aa.reshape(-1, input.size(1))`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class DenseToSparse(nn.Module):
    def forward(self, input):
        aa = input.permute(0, 2, 3, 1)
        aa = aa.view(-1, input.size(1))
        mask = aa.abs().sum(1) > 0
        return aa[mask]


def demo():
    feats = DenseToSparse()(torch.randn(2, 3, 4, 4))
    return feats.shape[1] == 3
