"""SC205 squeeze-without-dim (opt-in): a batch of one loses its batch axis.

Run it: prints torch.Size([]) for the batch of one, where (1,) was meant.
"""

import torch


def probabilities(logits):
    """(batch, 1) logits -> (batch,) probabilities."""
    return torch.sigmoid(logits).squeeze()


if __name__ == "__main__":
    print(probabilities(torch.randn(5, 1)).shape, probabilities(torch.randn(1, 1)).shape)
