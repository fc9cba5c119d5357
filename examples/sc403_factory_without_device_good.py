"""SC403 factory-without-device, fixed: the mask is created on the input's device.

Run it: `python examples/sc403_factory_without_device_good.py` prints torch.Size([2, 5, 5]).
"""

import torch
import torch.nn as nn


class CausalScores(nn.Module):
    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        n = scores.shape[-1]
        mask = torch.ones(n, n, device=scores.device).triu(1)
        return scores - mask * 1e9


if __name__ == "__main__":
    print(CausalScores()(torch.randn(2, 5, 5)).shape)
