"""SC304 backward-on-non-scalar, fixed: reduce to a scalar loss first.

Run it: `python examples/sc304_backward_on_non_scalar_good.py` prints 2 * x.
"""

import torch


def per_sample_grad() -> torch.Tensor:
    x = torch.randn(8, 3, requires_grad=True)
    per_sample = (x * x).sum(dim=1)
    per_sample.sum().backward()
    return x.grad


if __name__ == "__main__":
    print(per_sample_grad())
