"""SC304 backward-on-non-scalar: `backward()` without a gradient on a vector.

Run it: `python examples/sc304_backward_on_non_scalar_bad.py` ends with
RuntimeError: grad can be implicitly created only for scalar outputs.
"""

import torch


def per_sample_grad() -> torch.Tensor:
    x = torch.randn(8, 3, requires_grad=True)
    per_sample = (x * x).sum(dim=1)
    per_sample.backward()
    return x.grad


if __name__ == "__main__":
    print(per_sample_grad())
