"""SC306 non-differentiable-loss, fixed: the loss is computed on the logits.

Run it: `python examples/sc306_non_differentiable_loss_good.py` prints the loss.
"""

import torch
import torch.nn.functional as F


def train_step(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    loss = F.cross_entropy(logits, target)
    loss.backward()
    return loss


if __name__ == "__main__":
    logits = torch.randn(4, 3, requires_grad=True)
    print(train_step(logits, torch.tensor([0, 2, 1, 0])))
