"""SC102 view-multiple-inferred: two `-1` sizes in one view.

Run it: ends with RuntimeError: only one dimension can be inferred.
"""

import torch

if __name__ == "__main__":
    x = torch.arange(12)
    grid = x.view(-1, -1)
    print(grid.shape)
