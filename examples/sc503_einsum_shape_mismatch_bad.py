"""SC503 einsum-shape-mismatch: index j is 4 in one operand and 5 in the other.

Run it: ends with RuntimeError: einsum(): subscript j has size 5 for operand 1 which does not
broadcast with previously seen size 4.
"""

import torch

if __name__ == "__main__":
    a = torch.randn(2, 3, 4)
    b = torch.randn(2, 5, 6)
    print(torch.einsum("bij,bjk->bik", a, b))
