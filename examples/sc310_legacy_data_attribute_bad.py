"""SC310 legacy-data-attribute: `.data` changes a parameter behind autograd's back.

Run it: `python examples/sc310_legacy_data_attribute_bad.py` runs, but autograd never sees the
change: had a graph saved the weight, nothing would warn you that its gradient needed the old
values.
"""

import torch
import torch.nn as nn


def shrink(layer: nn.Linear, factor: float = 0.5) -> None:
    layer.weight.data.mul_(factor)


if __name__ == "__main__":
    layer = nn.Linear(3, 2)
    shrink(layer)
    print(layer.weight)
