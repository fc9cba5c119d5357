"""Fixed twin: decoder writes each step into a preallocated buffer it also reads from.

Source: https://github.com/Seanny123/da-rnn/issues/14
What goes wrong: `self.fc(outputs[:, t - 1])` saves a view of `outputs` for backward; `outputs[:, t] = h` then bumps
the buffer's version and backward raises
The fix: collect the steps in a list and `torch.stack` them
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc = nn.Linear(hidden, hidden)

    def forward(self, h0, steps):
        outputs = [h0]
        for t in range(1, steps):
            h = torch.tanh(self.fc(outputs[t - 1]))
            outputs.append(h)
        return torch.stack(outputs, dim=1)


def demo():
    dec = Decoder(4)
    dec(torch.randn(2, 4), 4).sum().backward()
    return dec.fc.weight.grad is not None
