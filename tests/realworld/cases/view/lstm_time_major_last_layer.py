"""Bug case: LSTM output (seq, batch, hidden) made batch-first by permute and flattened per example.

Source: https://github.com/zichaow/QG-Net/issues/11
What goes wrong: `out.permute(1, 0, 2)` is non-contiguous; `.view(batch, -1)` raises
The fix: `.contiguous().view(batch, -1)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class SeqClassifier(nn.Module):
    def __init__(self, n_in, n_hidden, seq_len, n_classes):
        super().__init__()
        self.lstm = nn.LSTM(n_in, n_hidden)
        self.fc = nn.Linear(n_hidden * seq_len, n_classes)

    def forward(self, x):
        out, _ = self.lstm(x)
        batch = out.size(1)
        out = out.permute(1, 0, 2).view(batch, -1)
        return self.fc(out)


def demo():
    model = SeqClassifier(4, 6, 5, 3)
    return tuple(model(torch.randn(5, 2, 4)).shape) == (2, 3)
