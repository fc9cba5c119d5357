"""SC309 numpy-on-grad-tensor: `.numpy()` on a tensor that requires grad.

Run it: `python examples/sc309_numpy_on_grad_tensor_bad.py` ends with
RuntimeError: Can't call numpy() on Tensor that requires grad.
"""

import torch


def to_array():
    w = torch.randn(3, requires_grad=True)
    scaled = w * 2
    return scaled.numpy()


if __name__ == "__main__":
    print(to_array())
