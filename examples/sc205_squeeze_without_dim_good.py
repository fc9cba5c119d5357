"""SC205 squeeze-without-dim, fixed: squeeze only the axis meant.

Run it: prints torch.Size([5]) torch.Size([1]).
"""

import torch


def probabilities(logits):
    """(batch, 1) logits -> (batch,) probabilities."""
    return torch.sigmoid(logits).squeeze(-1)


if __name__ == "__main__":
    print(probabilities(torch.randn(5, 1)).shape, probabilities(torch.randn(1, 1)).shape)
