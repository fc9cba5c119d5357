"""SC501 einsum-syntax: an output index used twice.

Run it: ends with RuntimeError: einsum(): output subscript k appears more than once in the output.
"""

import torch

if __name__ == "__main__":
    a = torch.randn(2, 3)
    b = torch.randn(3, 4)
    print(torch.einsum("ij,jk->ikk", a, b))
