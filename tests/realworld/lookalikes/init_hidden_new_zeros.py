"""Look-alike (correct code): RNN hidden state created from a parameter with new_zeros.

Source: https://github.com/LucasAlegre/morl-baselines/issues/153
Why it is correct: `weight.new_zeros` inherits the parameter's device and dtype
Verified with torch 2.13 on CPU: demo() runs clean and returns True (verify.py maps .cuda() to the meta device).
"""
import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ninp, nhid, nlayers):
        super().__init__()
        self.rnn = nn.GRU(ninp, nhid, nlayers)
        self.nhid = nhid
        self.nlayers = nlayers

    def forward(self, input, hidden):
        return self.rnn(input, hidden)

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def demo():
    model = RNNModel(4, 5, 2).cuda()
    hidden = model.init_hidden(3)
    try:
        model(torch.randn(6, 3, 4).cuda(), hidden)
    except NotImplementedError:
        pass
    return hidden.device.type == "meta"
