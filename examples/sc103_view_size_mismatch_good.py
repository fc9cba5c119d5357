"""SC103 view-size-mismatch, fixed: 3 x 2 holds the 6 elements.

Run it: prints a 3 x 2 tensor.
"""

import torch

if __name__ == "__main__":
    x = torch.arange(6)
    print(x.view(3, 2))
