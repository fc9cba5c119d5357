"""SC404 numpy-on-cuda: `.numpy()` on a tensor that lives on the GPU.

Run it on a machine with CUDA: `python examples/sc404_numpy_on_cuda_bad.py` ends with
TypeError: can't convert cuda:0 device type tensor to numpy.
"""

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def to_array():
    x = torch.randn(3, device=device)
    return x.numpy()


if __name__ == "__main__":
    print(to_array())
