"""Fixed twin: fusion head declared for one branch's width after concatenating two branches.

Source: https://github.com/theislab/multimil/issues/77
What goes wrong: the two 64-wide embeddings are concatenated to 128 features, but the head is `nn.Linear(64, n)`;
the matmul raises
The fix: `nn.Linear(2 * hidden, n_classes)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class FusionModel(nn.Module):
    def __init__(self, d_rna, d_atac, hidden, n_classes):
        super().__init__()
        self.rna = nn.Sequential(nn.Linear(d_rna, hidden), nn.ReLU())
        self.atac = nn.Sequential(nn.Linear(d_atac, hidden), nn.ReLU())
        self.head = nn.Linear(2 * hidden, n_classes)

    def forward(self, x_rna, x_atac):
        z = torch.cat([self.rna(x_rna), self.atac(x_atac)], dim=1)
        return self.head(z)


def demo():
    out = FusionModel(10, 7, 64, 3)(torch.randn(4, 10), torch.randn(4, 7))
    return tuple(out.shape) == (4, 3)
