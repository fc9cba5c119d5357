"""Fixed twin: bidirectional GRU output made batch-first by transpose, then flattened for the decoder.

Source: https://github.com/geyang/deep-auto-punctuation/issues/3
What goes wrong: `gru_output.transpose(0, 1)` is non-contiguous; `.view(-1, hidden * 2)` raises
The fix: `.contiguous()` before the view
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class GruRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.gru = nn.GRU(input_size, hidden_size, bidirectional=True)
        self.decoder = nn.Linear(hidden_size * 2, output_size)

    def forward(self, x, hidden):
        gru_output, hidden = self.gru(x, hidden)
        gru_output = gru_output.transpose(0, 1)
        output = self.decoder(gru_output.contiguous().view(-1, self.hidden_size * 2))
        return output, hidden


def demo():
    model = GruRNN(4, 8, 3)
    out, _ = model(torch.randn(5, 2, 4), torch.zeros(2, 2, 8))
    return tuple(out.shape) == (10, 3)
