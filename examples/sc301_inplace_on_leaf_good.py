"""SC301 inplace-on-leaf, fixed: the update runs under `torch.no_grad()`.

Run it: `python examples/sc301_inplace_on_leaf_good.py` prints the updated weights.
"""

import torch


def sgd_step(lr: float = 0.1) -> torch.Tensor:
    w = torch.randn(3, requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    with torch.no_grad():
        w.sub_(lr * w.grad)
    return w


if __name__ == "__main__":
    print(sgd_step())
