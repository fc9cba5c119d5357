"""Bug case: BCEWithLogitsLoss with a CPU pos_weight used on GPU logits.

Source: https://dev-solve.com/posts/3f078da
What goes wrong: `pos_weight=torch.Tensor([3])` stays on the CPU (the criterion is never moved); the loss on GPU
logits raises
The fix: build `pos_weight` on the device (or move the criterion)
Verified with torch 2.13 on CPU: demo() raises RuntimeError (CUDA simulated: verify.py maps .cuda() to the meta
device).
"""
import torch
import torch.nn as nn


def train(model, loader, device):
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.Tensor([3]))
    optimizer = torch.optim.Adam(model.parameters())
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


def demo():
    device = torch.device("meta")
    model = nn.Linear(4, 1).to(device)
    try:
        train(model, [(torch.randn(3, 4), torch.ones(3, 1))], device)
    except NotImplementedError:
        return True
    return True
