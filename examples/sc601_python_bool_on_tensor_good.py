"""SC601 python-bool-on-tensor, fixed: `&` combines masks elementwise.

Run it: `python examples/sc601_python_bool_on_tensor_good.py` prints a boolean mask.
"""

import torch


def in_unit_interval() -> torch.Tensor:
    x = torch.rand(2, 3) * 2
    above = x > 0
    below = x < 1
    return above & below


if __name__ == "__main__":
    print(in_unit_interval())
