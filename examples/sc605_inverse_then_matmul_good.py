"""SC605 inverse-then-matmul, fixed: `torch.linalg.solve` solves the system directly.

Run it: `python examples/sc605_inverse_then_matmul_good.py` prints the solution.
"""

import torch


def solve_system() -> torch.Tensor:
    a = torch.randn(4, 4) + 4 * torch.eye(4)
    b = torch.randn(4)
    return torch.linalg.solve(a, b)


if __name__ == "__main__":
    print(solve_system())
