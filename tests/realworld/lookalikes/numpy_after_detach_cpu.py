"""Look-alike (correct code): predictions converted with detach().cpu().numpy().

Source: https://github.com/XiaMooo/Yolo-Detect-Layer-Visualization/issues/1
Why it is correct: detach drops the autograd history and cpu() copies to host memory before numpy()
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def predict(model, batch):
    return model(batch).detach().cpu().numpy()


def demo():
    return predict(nn.Linear(3, 2), torch.randn(4, 3)).shape == (4, 2)
