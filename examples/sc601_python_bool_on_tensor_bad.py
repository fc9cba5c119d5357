"""SC601 python-bool-on-tensor: `and` on two boolean masks.

Run it: `python examples/sc601_python_bool_on_tensor_bad.py` ends with
RuntimeError: Boolean value of Tensor with more than one value is ambiguous.
"""

import torch


def in_unit_interval() -> torch.Tensor:
    x = torch.rand(2, 3) * 2
    above = x > 0
    below = x < 1
    return above and below


if __name__ == "__main__":
    print(in_unit_interval())
