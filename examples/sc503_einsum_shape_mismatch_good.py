"""SC503 einsum-shape-mismatch, fixed: the contracted index has one size.

Run it: prints torch.Size([2, 3, 6]).
"""

import torch

if __name__ == "__main__":
    a = torch.randn(2, 3, 4)
    b = torch.randn(2, 4, 6)
    print(torch.einsum("bij,bjk->bik", a, b).shape)
