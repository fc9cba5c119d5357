"""Look-alike (correct code): weight initialisation with in-place methods inside torch.no_grad().

Source: https://github.com/divelab/DIG/issues/164
Why it is correct: `normal_`/`zero_` on parameters are legal under no_grad (this is what nn.init does)
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, nz, nout):
        super().__init__()
        self.fc = nn.Linear(nz, nout)
        with torch.no_grad():
            self.fc.weight.normal_(0, 0.01)
            self.fc.bias.zero_()

    def forward(self, z):
        return torch.tanh(self.fc(z))


def demo():
    return float(Generator(4, 3).fc.weight.std()) < 0.1
