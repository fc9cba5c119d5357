"""Bug case: Grad-CAM backpropagates the class score of a whole batch.

Source: https://github.com/1Konny/gradcam_plus_plus-pytorch/issues/7
What goes wrong: `score = logit[:, class_idx]` has one value per image; `score.backward()` raises for batches
The fix: `score.sum().backward()`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class GradCAM:
    def __init__(self, model, layer):
        self.model = model
        self.activations = None
        layer.register_forward_hook(self.save)

    def save(self, module, inp, out):
        self.activations = out
        out.retain_grad()

    def __call__(self, x, class_idx):
        logit = self.model(x)
        score = logit[:, class_idx]
        self.model.zero_grad()
        score.backward()
        weights = self.activations.grad.mean(dim=(2, 3), keepdim=True)
        return torch.relu((weights * self.activations).sum(1))


def demo():
    conv = nn.Conv2d(3, 4, 3)
    model = nn.Sequential(conv, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
    cam = GradCAM(model, conv)(torch.randn(2, 3, 8, 8), 1)
    return tuple(cam.shape) == (2, 6, 6)
