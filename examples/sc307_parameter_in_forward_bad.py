"""SC307 parameter-in-forward: a fresh `requires_grad` tensor on every call never trains.

Run it: `python examples/sc307_parameter_in_forward_bad.py` shows that the optimizer sees no
parameter at all.
"""

import torch
import torch.nn as nn


class Scale(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = torch.ones(x.shape[-1], requires_grad=True)
        return x * weight


if __name__ == "__main__":
    model = Scale()
    print(model(torch.randn(2, 4)).shape, "parameters:", len(list(model.parameters())))
