"""SC501 einsum-syntax, fixed: each output index once.

Run it: prints torch.Size([2, 4]).
"""

import torch

if __name__ == "__main__":
    a = torch.randn(2, 3)
    b = torch.randn(3, 4)
    print(torch.einsum("ij,jk->ik", a, b).shape)
