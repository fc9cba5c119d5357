"""SC603 item-in-loop (opt-in): `.item()` every training step syncs with the GPU every step.

Run it: `python examples/sc603_item_in_loop_bad.py` works; on CUDA each `.item()` waits for
the GPU to finish before the loop can go on.
"""

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def train(steps: int = 10) -> float:
    model = torch.nn.Linear(4, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total = 0.0
    for _ in range(steps):
        loss = model(torch.randn(32, 4, device=device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total


if __name__ == "__main__":
    print(train())
