"""Fixed twin: graph convolution multiplies node features by an (out, in) adjacency.

Source: https://github.com/huankoh/CST-GL/issues/10
What goes wrong: `einsum("ncvl,vw->ncwl", x, A)` expects A as (in_nodes, out_nodes); the learned A is (out_nodes,
in_nodes), so subscript v has two sizes and einsum raises
The fix: pass `A.t()`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class NodeProjection(nn.Module):
    def __init__(self, n_in_nodes, n_out_nodes):
        super().__init__()
        self.A = nn.Parameter(torch.randn(n_out_nodes, n_in_nodes))

    def forward(self, x):
        return torch.einsum("ncvl,vw->ncwl", x, self.A.t())


def demo():
    out = NodeProjection(65, 38)(torch.randn(2, 4, 65, 3))
    return tuple(out.shape) == (2, 4, 38, 3)
