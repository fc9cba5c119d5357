"""SC203 matmul-shape-mismatch, fixed: (1, 3) @ (3, 1) is the inner product.

Run it: prints a 1 x 1 tensor.
"""

import torch

if __name__ == "__main__":
    a = torch.randn(3, 1)
    b = torch.randn(3, 1)
    print(a.T @ b)
