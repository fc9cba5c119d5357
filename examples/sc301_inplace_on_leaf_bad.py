"""SC301 inplace-on-leaf: an in-place update of a leaf that requires grad.

Run it: `python examples/sc301_inplace_on_leaf_bad.py` ends with
RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.
"""

import torch


def sgd_step(lr: float = 0.1) -> torch.Tensor:
    w = torch.randn(3, requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    w.sub_(lr * w.grad)
    return w


if __name__ == "__main__":
    print(sgd_step())
