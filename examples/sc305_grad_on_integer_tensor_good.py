"""SC305 grad-on-integer-tensor, fixed: float literals make a float tensor.

Run it: `python examples/sc305_grad_on_integer_tensor_good.py` prints the weights.
"""

import torch


def make_weights() -> torch.Tensor:
    return torch.tensor([1.0, 2.0, 3.0], requires_grad=True)


if __name__ == "__main__":
    print(make_weights())
