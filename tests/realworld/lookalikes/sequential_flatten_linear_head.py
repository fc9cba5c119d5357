"""Look-alike: a CNN written as one nn.Sequential, flattened straight into its Linear layer.

Source: https://theneuralbase.pages.dev/pytorch/learn/intermediate/flattening-before-linear-layers/
Why it is correct: a 3x3 convolution with padding 1 keeps 32x32 images at 32x32 and the 2x2
pooling halves them, so `nn.Flatten(start_dim=1)` gives 64 * 16 * 16 features, the number
the Linear layer takes
Verified with torch 2.13 on CPU: demo() returns True.
"""
import torch
import torch.nn as nn


def demo():
    model = nn.Sequential(
        nn.Conv2d(in_channels=3, out_channels=64, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(kernel_size=2),
        nn.Flatten(start_dim=1),
        nn.Linear(in_features=64 * 16 * 16, out_features=10),
    )
    output = model(torch.randn(32, 3, 32, 32))
    return output.shape == (32, 10)
