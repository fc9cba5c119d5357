"""SC401 cross-device-operation: the model moves to the GPU, its input stays on the CPU.

Run it on a machine with CUDA: `python examples/sc401_cross_device_operation_bad.py` ends with
RuntimeError: Expected all tensors to be on the same device. Without CUDA it passes, which is
how this bug reaches production.
"""

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def predict() -> torch.Tensor:
    model = nn.Linear(4, 2).to(device)
    x = torch.randn(8, 4)
    return model(x)


if __name__ == "__main__":
    print(predict().shape)
