"""Look-alike: the DCGAN loop steps the discriminator, then runs it again for the generator.

Source: https://github.com/pytorch/examples/blob/main/dcgan/main.py
Why it is correct: `netD(fake)` for the generator's loss is computed after `optimizerD.step()`,
so the weights it saved are the updated ones; the discriminator's own losses read
`fake.detach()` and are backpropagated before the step
Verified with torch 2.13 on CPU: demo() returns True.
"""
import torch
import torch.nn as nn


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x)))).view(-1)


def demo():
    netG = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
    netD = Discriminator()
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4)
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4)
    for _ in range(2):
        netD.zero_grad()
        errD_real = criterion(netD(torch.randn(32, 16)), torch.ones(32))
        errD_real.backward()
        fake = netG(torch.randn(32, 8))
        errD_fake = criterion(netD(fake.detach()), torch.zeros(32))
        errD_fake.backward()
        optimizerD.step()
        netG.zero_grad()
        errG = criterion(netD(fake), torch.ones(32))
        errG.backward()
        optimizerG.step()
    return True
