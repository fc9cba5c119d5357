"""SC605 inverse-then-matmul: forming the inverse to solve a linear system.

Run it: `python examples/sc605_inverse_then_matmul_bad.py` works, but slower and less
accurately than a solve, especially for ill-conditioned matrices.
"""

import torch


def solve_system() -> torch.Tensor:
    a = torch.randn(4, 4) + 4 * torch.eye(4)
    b = torch.randn(4)
    return torch.inverse(a) @ b


if __name__ == "__main__":
    print(solve_system())
