"""SC102 view-multiple-inferred, fixed: give every size but one.

Run it: prints torch.Size([3, 4]).
"""

import torch

if __name__ == "__main__":
    x = torch.arange(12)
    grid = x.view(3, -1)
    print(grid.shape)
