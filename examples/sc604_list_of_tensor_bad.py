"""SC604 list-of-tensor: `list(t)` gives 0-dim tensors, not numbers.

Run it: `python examples/sc604_list_of_tensor_bad.py` prints
[tensor(3), tensor(1), tensor(4)] instead of [3, 1, 4].
"""

import torch


def token_ids():
    ids = torch.tensor([3, 1, 4])
    return list(ids)


if __name__ == "__main__":
    print(token_ids())
