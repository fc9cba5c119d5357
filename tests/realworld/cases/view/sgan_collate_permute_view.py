"""Bug case: trajectory batch permuted in collate_fn, flattened with view in the encoder.

Source: https://github.com/agrimgupta92/sgan/issues/22
What goes wrong: `seq_collate` permutes the stacked trajectories to (seq, batch, 2); the encoder's
`obs_traj.view(-1, 2)` raises on CPU
The fix: `obs_traj.contiguous().view(-1, 2)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


def seq_collate(data):
    obs = torch.stack(data, dim=0)
    return obs.permute(2, 0, 1)


class Encoder(nn.Module):
    def __init__(self, embedding_dim=16):
        super().__init__()
        self.spatial_embedding = nn.Linear(2, embedding_dim)
        self.embedding_dim = embedding_dim

    def forward(self, obs_traj):
        batch = obs_traj.size(1)
        obs_traj_embedding = self.spatial_embedding(obs_traj.view(-1, 2))
        return obs_traj_embedding.view(-1, batch, self.embedding_dim)


def demo():
    data = [torch.randn(2, 8) for _ in range(3)]
    obs_traj = seq_collate(data)
    out = Encoder()(obs_traj)
    return tuple(out.shape) == (8, 3, 16)
