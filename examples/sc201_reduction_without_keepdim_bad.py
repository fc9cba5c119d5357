"""SC201 reduction-without-keepdim: the row means line up with the columns.

Run it: ends with RuntimeError (16 rows, 8 columns). With a square input it would run and
silently subtract the wrong means.
"""

import torch

if __name__ == "__main__":
    x = torch.randn(16, 8)
    centered = x - x.mean(dim=1)
    print(centered.shape)
