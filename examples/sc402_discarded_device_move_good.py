"""SC402 discarded-device-move, fixed: assign the result back.

Run it: `python examples/sc402_discarded_device_move_good.py` prints torch.float16.
"""

import torch


def as_half() -> torch.Tensor:
    x = torch.randn(3)
    x = x.to(torch.float16)
    return x


if __name__ == "__main__":
    print(as_half().dtype)
