"""SC306 non-differentiable-loss: the loss is computed from `argmax`, which has no gradient.

Run it: `python examples/sc306_non_differentiable_loss_bad.py` ends with
RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn.
"""

import torch
import torch.nn.functional as F


def train_step(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    pred = torch.argmax(logits, dim=1)
    loss = F.mse_loss(pred.float(), target)
    loss.backward()
    return loss


if __name__ == "__main__":
    logits = torch.randn(4, 3, requires_grad=True)
    print(train_step(logits, torch.tensor([0.0, 2.0, 1.0, 0.0])))
