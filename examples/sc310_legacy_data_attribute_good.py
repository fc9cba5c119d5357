"""SC310 legacy-data-attribute, fixed: change parameters under `torch.no_grad()`.

Run it: `python examples/sc310_legacy_data_attribute_good.py` prints the shrunk weights.
"""

import torch
import torch.nn as nn


def shrink(layer: nn.Linear, factor: float = 0.5) -> None:
    with torch.no_grad():
        layer.weight.mul_(factor)


if __name__ == "__main__":
    layer = nn.Linear(3, 2)
    shrink(layer)
    print(layer.weight)
