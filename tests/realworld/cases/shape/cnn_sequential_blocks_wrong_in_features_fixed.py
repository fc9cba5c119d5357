"""Fixed twin: the classifier takes the 32 x 7 x 7 features the convolution blocks leave.

Source: https://androidkt.com/fix-runtimeerror-mat1-and-mat2-shapes-cannot-be-multiplied/
What goes wrong: nothing; two 5x5 convolutions (padding 2) and two 2x2 poolings leave 32 x 7 x 7
features per 28x28 image, the number the Linear layer takes
The fix: `nn.Linear(32 * 7 * 7, 10)`
Verified with torch 2.13 on CPU: demo() returns True.
"""
import torch
import torch.nn as nn


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Sequential(
            nn.Conv2d(in_channels=1, out_channels=16, kernel_size=5, stride=1, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2),
        )
        self.conv2 = nn.Sequential(
            nn.Conv2d(16, 32, 5, 1, 2),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.out = nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = self.conv2(x)
        x = x.view(x.size(0), -1)
        output = self.out(x)
        return output, x


def demo():
    cnn = CNN()
    output, _ = cnn(torch.randn(2, 1, 28, 28))
    return output.shape == (2, 10)
