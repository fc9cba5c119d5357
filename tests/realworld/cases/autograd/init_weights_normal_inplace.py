"""Bug case: custom weight init calls normal_ on parameters outside no_grad.

Source: https://github.com/divelab/DIG/issues/164
What goes wrong: `self.fc.weight.normal_(0, 0.01)` is an in-place op on a leaf parameter with grad mode on and
raises
The fix: use `nn.init.normal_` (which runs under no_grad)
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, nz, nout):
        super().__init__()
        self.fc = nn.Linear(nz, nout)
        self.reset_parameters()

    def reset_parameters(self):
        self.fc.weight.normal_(0, 0.01)
        nn.init.zeros_(self.fc.bias)

    def forward(self, z):
        return torch.tanh(self.fc(z))


def demo():
    g = Generator(4, 3)
    return float(g.fc.weight.std()) < 0.1
