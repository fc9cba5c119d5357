"""SC305 grad-on-integer-tensor: `torch.tensor([1, 2])` is int64 and cannot require grad.

Run it: `python examples/sc305_grad_on_integer_tensor_bad.py` ends with
RuntimeError: Only Tensors of floating point and complex dtype can require gradients.
"""

import torch


def make_weights() -> torch.Tensor:
    return torch.tensor([1, 2, 3], requires_grad=True)


if __name__ == "__main__":
    print(make_weights())
