"""Bug case: RNN cell masks its tanh hidden state in place.

Source: https://github.com/JDAI-CV/LIO/issues/9
What goes wrong: tanh saves its output; `h.mul_(mask)` modifies it and the backward pass raises
The fix: `h = h * mask`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class MaskedRNNCell(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.ih = nn.Linear(n_in, n_hidden)
        self.hh = nn.Linear(n_hidden, n_hidden)

    def forward(self, x, h, mask):
        h = torch.tanh(self.ih(x) + self.hh(h))
        h.mul_(mask)
        return h


def demo():
    cell = MaskedRNNCell(3, 4)
    h = torch.zeros(2, 4)
    for t in range(3):
        h = cell(torch.randn(2, 3), h, torch.ones(2, 1))
    h.sum().backward()
    return cell.ih.weight.grad is not None
