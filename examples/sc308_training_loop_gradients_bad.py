"""SC308 training-loop-gradients: the loop never clears `.grad`, so gradients pile up.

Run it: `python examples/sc308_training_loop_gradients_bad.py` runs, but every step applies
the sum of all earlier gradients.
"""

import torch
import torch.nn as nn


def train(steps: int = 5) -> float:
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.MSELoss()
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    for _ in range(steps):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    print(train())
