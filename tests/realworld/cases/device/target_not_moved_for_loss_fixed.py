"""Fixed twin: only the inputs are moved; the labels stay on the CPU.

Source:
https://apxml.com/courses/getting-started-with-pytorch/chapter-8-monitoring-debugging-models/checking-device-placement
What goes wrong: `outputs` lives on the device but `labels` is still on the CPU; `criterion(outputs, labels)` raises
The fix: `labels = labels.to(device)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True (CUDA simulated: verify.py maps .cuda() to the
meta device).
"""
import torch
import torch.nn as nn


def run_epoch(model, loader, criterion, optimizer, device):
    for inputs, labels in loader:
        inputs = inputs.to(device)
        labels = labels.to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()


def demo():
    device = torch.device("meta")
    model = nn.Linear(5, 3).to(device)
    try:
        run_epoch(model, [(torch.randn(2, 5), torch.tensor([0, 2]))], nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1), device)
    except NotImplementedError:
        return True
    return True
