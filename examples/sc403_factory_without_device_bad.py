"""SC403 factory-without-device: a CPU mask meets the input inside `forward`.

Run it: on the CPU it works; with the model and input on CUDA, `forward` raises
RuntimeError: Expected all tensors to be on the same device.
"""

import torch
import torch.nn as nn


class CausalScores(nn.Module):
    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        n = scores.shape[-1]
        mask = torch.ones(n, n).triu(1)
        return scores - mask * 1e9


if __name__ == "__main__":
    print(CausalScores()(torch.randn(2, 5, 5)).shape)
