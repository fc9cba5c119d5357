"""SC201 reduction-without-keepdim, fixed: keepdim=True keeps the reduced axis as size 1.

Run it: prints torch.Size([16, 8]) and row means of (almost) zero.
"""

import torch

if __name__ == "__main__":
    x = torch.randn(16, 8)
    centered = x - x.mean(dim=1, keepdim=True)
    columns = x - x.mean(dim=0)
    print(centered.shape, centered.mean(dim=1).abs().max().item() < 1e-5, columns.shape)
