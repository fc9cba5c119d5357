"""SC103 view-size-mismatch: the target shape holds a different number of elements.

Run it: ends with RuntimeError: shape '[4, 2]' is invalid for input of size 6.
"""

import torch

if __name__ == "__main__":
    x = torch.arange(6)
    print(x.view(4, 2))
