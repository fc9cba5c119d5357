"""SC602 item-on-non-scalar: `.item()` on a tensor with several elements.

Run it: `python examples/sc602_item_on_non_scalar_bad.py` ends with
RuntimeError: a Tensor with 3 elements cannot be converted to Scalar.
"""

import torch


def best_score() -> float:
    scores = torch.tensor([0.1, 0.7, 0.2])
    return scores.item()


if __name__ == "__main__":
    print(best_score())
