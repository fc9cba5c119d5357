"""SC203 matmul-shape-mismatch: (3, 1) @ (3, 1).

Run it: ends with RuntimeError: mat1 and mat2 shapes cannot be multiplied (3x1 and 3x1).
"""

import torch

if __name__ == "__main__":
    a = torch.randn(3, 1)
    b = torch.randn(3, 1)
    print(a @ b)
