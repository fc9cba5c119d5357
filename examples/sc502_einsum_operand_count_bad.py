"""SC502 einsum-operand-count: two terms, one operand.

Run it: ends with RuntimeError: einsum(): more operands were provided than specified (or fewer).
"""

import torch

if __name__ == "__main__":
    a = torch.randn(2, 3)
    print(torch.einsum("ij,jk->ik", a))
