"""SC302 inplace-on-saved-tensor, fixed: a new tensor instead of an in-place change.

Run it: `python examples/sc302_inplace_on_saved_tensor_good.py` prints exp(x).
"""

import torch


def shifted_exp_grad() -> torch.Tensor:
    x = torch.randn(4, requires_grad=True)
    y = x.exp()
    y = y + 1.0
    y.sum().backward()
    return x.grad


if __name__ == "__main__":
    print(shifted_exp_grad())
