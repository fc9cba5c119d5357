"""Fixed twin: global max pooling over time with torch.max passed straight to a Linear.

Source: https://github.com/Project-MONAI/MONAI/issues/8040
What goes wrong: `torch.max(h, dim=1)` returns a (values, indices) named tuple; `self.fc(pooled)` raises TypeError
The fix: `torch.max(h, dim=1).values`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class TextCNN(nn.Module):
    def __init__(self, vocab, dim, n_classes):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.conv = nn.Conv1d(dim, dim, 3, padding=1)
        self.fc = nn.Linear(dim, n_classes)

    def forward(self, tokens):
        h = torch.relu(self.conv(self.emb(tokens).transpose(1, 2)))
        pooled = torch.max(h, dim=2).values
        return self.fc(pooled)


def demo():
    return tuple(TextCNN(20, 8, 3)(torch.randint(0, 20, (2, 7))).shape) == (2, 3)
