"""SC308 training-loop-gradients, fixed: `optimizer.zero_grad()` once per step.

Run it: `python examples/sc308_training_loop_gradients_good.py` prints the last loss.
"""

import torch
import torch.nn as nn


def train(steps: int = 5) -> float:
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.MSELoss()
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    print(train())
