"""Fixed twin: logging a loss computed with reduction='none'.

Source: https://github.com/Naver-AI-Hackathon/AI-Speech/issues/43
What goes wrong: the criterion keeps one loss per sample; `loss.item()` raises for batches
The fix: log `loss.mean().item()`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def evaluate(model, loader):
    criterion = nn.CrossEntropyLoss(reduction="none")
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            loss = criterion(model(x), y)
            total += loss.mean().item()
    return total / len(loader)


def demo():
    return evaluate(nn.Linear(3, 4), [(torch.randn(5, 3), torch.randint(0, 4, (5,)))]) > 0
