"""Bug case: a small gradient image rotated with transpose and flattened for a linear classifier.

Source: https://www.marioraach.de/en/blog/pytorch-transpose-view
What goes wrong: `image.transpose(0, 1)` makes the tensor non-contiguous; `.view(1, 8)` raises
The fix: `.reshape(1, 8)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)

    def forward(self, image):
        image_rotated = image.transpose(0, 1)
        image_flat = image_rotated.view(1, 8)
        return self.fc(image_flat)


def demo():
    image = torch.linspace(0, 1, 8).view(2, 4)
    return tuple(Classifier()(image).shape) == (1, 2)
