"""Bug case: soft actor-critic updates the Q network before the policy loss that reads it.

Source: https://github.com/rail-berkeley/rlkit/pull/109
What goes wrong: the policy loss goes through `self.qf(obs, new_actions)`, whose layers saved
their weights; `self.qf_optimizer.step()` changes them in place before `policy_loss.backward()`,
which raises since torch 1.5
The fix: optimize the policy first (its backward, then its step), then the Q network
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class QNetwork(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=64):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim + act_dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, obs, act):
        h = F.relu(self.fc1(torch.cat([obs, act], dim=1)))
        h = F.relu(self.fc2(h))
        return self.out(h)


class SACTrainer:
    def __init__(self, obs_dim=6, act_dim=2):
        self.policy = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, act_dim), nn.Tanh())
        self.qf = QNetwork(obs_dim, act_dim)
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.qf_optimizer = torch.optim.Adam(self.qf.parameters(), lr=3e-4)

    def train_step(self, obs, actions, q_target):
        new_actions = self.policy(obs)
        policy_loss = -self.qf(obs, new_actions).mean()
        qf_loss = F.mse_loss(self.qf(obs, actions), q_target)
        self.qf_optimizer.zero_grad()
        qf_loss.backward()
        self.qf_optimizer.step()
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()


def demo():
    trainer = SACTrainer()
    trainer.train_step(torch.randn(16, 6), torch.randn(16, 2), torch.randn(16, 1))
    return True
