"""SC603 item-in-loop, fixed: accumulate on the device, sync once after the loop.

Run it: `python examples/sc603_item_in_loop_good.py` prints the total.
"""

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def total_loss(steps: int = 10) -> float:
    total = torch.zeros((), device=device)
    for _ in range(steps):
        loss = torch.randn(32, device=device).pow(2).mean()
        total += loss.detach()
    return total.item()


if __name__ == "__main__":
    print(total_loss())
