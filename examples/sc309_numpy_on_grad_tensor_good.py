"""SC309 numpy-on-grad-tensor, fixed: `.detach()` first.

Run it: `python examples/sc309_numpy_on_grad_tensor_good.py` prints an array.
"""

import torch


def to_array():
    w = torch.randn(3, requires_grad=True)
    scaled = w * 2
    return scaled.detach().numpy()


if __name__ == "__main__":
    print(to_array())
