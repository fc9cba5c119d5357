"""SC502 einsum-operand-count, fixed: one operand per term.

Run it: prints torch.Size([2, 2]).
"""

import torch

if __name__ == "__main__":
    a = torch.randn(2, 3)
    print(torch.einsum("ij,jk->ik", a, a.T).shape)
