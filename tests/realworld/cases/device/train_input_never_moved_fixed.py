"""Fixed twin: MNIST-style train() forgets to move the batch to the device.

Source: https://dev-solve.com/posts/3f078da
What goes wrong: the model was moved with `model.to(device)` but `data` and `target` stay on the CPU; `model(data)`
raises "Expected all tensors to be on the same device"
The fix: `data, target = data.to(device), target.to(device)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True (CUDA simulated: verify.py maps .cuda() to the
meta device).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def train(model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()


def main(device, loader):
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    train(model, device, loader, optimizer, 1)
    return model


def demo():
    loader = [(torch.randn(4, 1, 28, 28), torch.randint(0, 10, (4,)))]
    main(torch.device("meta"), loader)
    return True
