"""SC604 list-of-tensor, fixed: `.tolist()` gives Python numbers.

Run it: `python examples/sc604_list_of_tensor_good.py` prints [3, 1, 4].
"""

import torch


def token_ids():
    ids = torch.tensor([3, 1, 4])
    return ids.tolist()


if __name__ == "__main__":
    print(token_ids())
