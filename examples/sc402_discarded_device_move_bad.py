"""SC402 discarded-device-move: `x.to(...)` as a statement leaves `x` where it was.

Run it: `python examples/sc402_discarded_device_move_bad.py` prints torch.float32: the
conversion was thrown away.
"""

import torch


def as_half() -> torch.Tensor:
    x = torch.randn(3)
    x.to(torch.float16)
    return x


if __name__ == "__main__":
    print(as_half().dtype)
