"""SC401 cross-device-operation, fixed: the input is created on the model's device.

Run it: `python examples/sc401_cross_device_operation_good.py` prints torch.Size([8, 2]) with
or without CUDA.
"""

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def predict() -> torch.Tensor:
    model = nn.Linear(4, 2).to(device)
    x = torch.randn(8, 4, device=device)
    return model(x)


if __name__ == "__main__":
    print(predict().shape)
