"""SC302 inplace-on-saved-tensor: `exp` saved its output, then the output changed in place.

Run it: `python examples/sc302_inplace_on_saved_tensor_bad.py` ends with
RuntimeError: one of the variables needed for gradient computation has been modified by an
inplace operation.
"""

import torch


def shifted_exp_grad() -> torch.Tensor:
    x = torch.randn(4, requires_grad=True)
    y = x.exp()
    y.add_(1.0)
    y.sum().backward()
    return x.grad


if __name__ == "__main__":
    print(shifted_exp_grad())
