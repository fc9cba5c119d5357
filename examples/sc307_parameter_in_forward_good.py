"""SC307 parameter-in-forward, fixed: the weight is an `nn.Parameter` made in `__init__`.

Run it: `python examples/sc307_parameter_in_forward_good.py` shows one parameter.
"""

import torch
import torch.nn as nn


class Scale(nn.Module):
    def __init__(self, features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.weight


if __name__ == "__main__":
    model = Scale(4)
    print(model(torch.randn(2, 4)).shape, "parameters:", len(list(model.parameters())))
