"""SC404 numpy-on-cuda, fixed: copy to the host with `.cpu()` first.

Run it: `python examples/sc404_numpy_on_cuda_good.py` prints an array.
"""

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def to_array():
    x = torch.randn(3, device=device)
    return x.cpu().numpy()


if __name__ == "__main__":
    print(to_array())
