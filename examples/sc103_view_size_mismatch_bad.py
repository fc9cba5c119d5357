"""SC103 view-size-mismatch: the target shape holds a different number of elements, or asks for
a negative size (only a single -1, "infer this one", may be negative).

Run it: ends with RuntimeError: shape '[4, 2]' is invalid for input of size 6.
(`rows(x)` would raise too: invalid shape dimension -2 at index 0 of shape [-2, 2].)
"""

import torch


def rows(x):
    return x.view(-2, 2)


if __name__ == "__main__":
    x = torch.arange(6)
    print(x.view(4, 2))
