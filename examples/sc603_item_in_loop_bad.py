"""SC603 item-in-loop (opt-in): `.item()` every iteration syncs with the GPU every iteration.

Run it: `python examples/sc603_item_in_loop_bad.py` works; on CUDA each `.item()` waits for
the GPU to finish before the loop can go on.
"""

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def total_loss(steps: int = 10) -> float:
    total = 0.0
    for _ in range(steps):
        loss = torch.randn(32, device=device).pow(2).mean()
        total += loss.item()
    return total


if __name__ == "__main__":
    print(total_loss())
