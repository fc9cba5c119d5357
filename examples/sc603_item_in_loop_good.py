"""SC603 item-in-loop, fixed: accumulate on the device, sync once after the loop.

Run it: `python examples/sc603_item_in_loop_good.py` prints the total.
"""

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def train(steps: int = 10) -> float:
    model = torch.nn.Linear(4, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total = torch.zeros((), device=device)
    for _ in range(steps):
        loss = model(torch.randn(32, 4, device=device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach()
    return total.item()


if __name__ == "__main__":
    print(train())
