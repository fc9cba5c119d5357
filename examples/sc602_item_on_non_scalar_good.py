"""SC602 item-on-non-scalar, fixed: reduce to one element first.

Run it: `python examples/sc602_item_on_non_scalar_good.py` prints 0.7 (about).
"""

import torch


def best_score() -> float:
    scores = torch.tensor([0.1, 0.7, 0.2])
    return scores.max().item()


if __name__ == "__main__":
    print(best_score())
