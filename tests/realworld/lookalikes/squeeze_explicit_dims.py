"""Look-alike (correct code): pooled features flattened with squeeze(-1).squeeze(-1).

Source: https://github.com/layumi/Person_reID_baseline_pytorch/issues/77
Why it is correct: squeezing named dims keeps the batch axis even for a batch of one
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, n)

    def forward(self, x):
        x = self.pool(x).squeeze(-1).squeeze(-1)
        return self.fc(x)


def demo():
    return tuple(Head(4, 3)(torch.randn(1, 4, 5, 5)).argmax(dim=1).shape) == (1,)
