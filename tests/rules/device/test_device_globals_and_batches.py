"""SC401/SC402 where the module is a module-level name that functions read (``model =
Net().to(device)`` at module level, ``sample()`` feeding it a fresh CPU tensor), and where the
batch of a known loader is indexed (``batch[0]``) or comes from one of two torchvision datasets.

A module bound once at module level keeps its device inside a function only when every move
the file makes of it (of the instances of its class, or of the name) names that one device and
no call is given the name (a helper or a wrapper may move it). Each invalid case fails the same
way with torch 2.13 when the ``meta`` device stands in for CUDA.
"""

from __future__ import annotations

from functools import partial

from rule_harness import family_rules, finding_lines, findings

DEVICE_RULES = family_rules("SC4")
codes = partial(finding_lines, rules=DEVICE_RULES)
flagged = partial(findings, rules=DEVICE_RULES)

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

GLOBAL_MODEL = HEAD + (
    "class Net(nn.Module):\n"                                            # 4
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(20, 10)\n"
    "    def forward(self, x):\n"
    "        return self.fc(x)\n"                                        # 9
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "model = Net().to(device)\n"                                         # 11
    "def sample():\n"
    "    with torch.no_grad():\n"
    "        z = torch.randn(16, 20){fix}\n"                             # 14
    "        return model(z)\n"                                          # 15
    "{more}\n"
)


def test_global_module_read_in_a_function_keeps_its_device() -> None:
    found = flagged(GLOBAL_MODEL.format(fix="", more=""))
    assert [(c, line) for c, line, _ in found] == [("SC401", 15)]
    assert "`z` is created on the CPU in `sample`" in found[0][2]
    assert "module `model` is on CUDA when it is available" in found[0][2]


def test_global_module_in_the_main_guard_loop() -> None:
    source = GLOBAL_MODEL.format(fix=".to(device)", more=(
        "if __name__ == '__main__':\n"
        "    for epoch in range(3):\n"
        "        sample()\n"
        "        with torch.no_grad():\n"
        "            out = model(torch.randn(4, 20))\n"))                # 21
    assert codes(source) == [("SC401", 20)]


def test_global_module_silent_when_created_on_its_device() -> None:
    assert codes(GLOBAL_MODEL.format(fix=".to(device)", more="")) == []
    fixed = GLOBAL_MODEL.format(fix="", more="").replace("torch.randn(16, 20)", "torch.randn(16, 20, device=device)")
    assert codes(fixed) == []


def test_global_module_moved_elsewhere_is_not_trusted() -> None:
    # moved back to the CPU somewhere: `sample()` may run on a CPU model
    assert codes(GLOBAL_MODEL.format(fix="", more="def save():\n    model.cpu()\n")) == []
    # moved to a device the file does not name
    assert codes(GLOBAL_MODEL.format(fix="", more="def setup(args):\n    model.to(args.device)\n")) == []
    # another instance of the class going to the CPU leaves `model` where its own moves put it
    assert codes(GLOBAL_MODEL.format(fix="", more="cpu_copy = Net().to('cpu')\n")) == [("SC401", 15)]
    # a helper of the file moves what it is given to a device it does not name
    helper = "def place(m, args):\n    m.to(args.device)\nplace(model, args)\n"
    assert codes(GLOBAL_MODEL.format(fix="", more=helper)) == []


SEQUENTIAL = HEAD + (
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "netG = nn.Sequential(nn.Linear(100, 784), nn.Tanh()).to(device)\n"  # 5
    "def generate(b):\n"
    "    noise = torch.randn(b, 100)\n"
    "    return netG(noise)\n"                                           # 8
    "{more}\n"
)


def test_global_torch_module_moved_once() -> None:
    found = flagged(SEQUENTIAL.format(more=""))
    assert [(c, line) for c, line, _ in found] == [("SC401", 8)]
    assert "module `netG` is on CUDA when it is available" in found[0][2]


def test_global_torch_module_given_to_a_call_is_not_trusted() -> None:
    # `wrap(netG)` may move it (or wrap it): the device inside `generate` is unknown
    assert codes(SEQUENTIAL.format(more="wrap(netG)")) == []
    assert codes(SEQUENTIAL.format(more="def offload():\n    netG.cpu()\n")) == []


LOADER = HEAD + (
    "from torch.utils.data import DataLoader, TensorDataset\n"
    "model = nn.Linear(4, 2).cuda()\n"
    "loader = DataLoader(TensorDataset(torch.randn(10, 4), torch.randint(0, 2, (10,))), batch_size=2)\n"
    "for batch in loader:\n"
    "    x, y = batch[0]{fix}, batch[1].cuda()\n"                        # 8
    "    loss = F.cross_entropy(model(x), y)\n"                          # 9
)


def test_indexed_batch_of_a_loader_is_a_cpu_tensor() -> None:
    assert codes(LOADER.format(fix="")) == [("SC401", 9)]
    assert codes(LOADER.format(fix=".cuda()")) == []


VISION = HEAD + (
    "from torchvision import datasets, transforms\n"
    "def main(args):\n"
    "    model = nn.Linear(4, 2).cuda()\n"
    "    if args.dummy:\n"
    "        ds = datasets.FakeData(100, (3, 8, 8), 10, transforms.ToTensor())\n"
    "    else:\n"
    "        ds = datasets.ImageFolder(args.data, transforms.ToTensor())\n"
    "    loader = torch.utils.data.DataLoader(ds, batch_size=4)\n"
    "    for images, target in loader:\n"
    "        {move}\n"                                                   # 13
)


def test_batches_of_either_torchvision_dataset_are_tensors() -> None:
    assert codes(VISION.format(move="images.cuda(non_blocking=True)")) == [("SC402", 13)]
    assert codes(VISION.format(move="images = images.cuda(non_blocking=True)")) == []


METHOD = HEAD + (
    "class VAE(nn.Module):\n"                                            # 4
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc3 = nn.Linear(20, 400)\n"
    "    def decode(self, z):\n"
    "{body}\n"                                                          # 9
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "model = VAE().to(device)\n"
    "with torch.no_grad():\n"
    "    sample = torch.randn(64, 20){fix}\n"
    "    sample = model.decode(sample).cpu()\n"                          # 14 + the body's lines - 1
)
FEEDS = "        h3 = F.relu(self.fc3(z))\n        return torch.sigmoid(h3)"


def test_method_of_a_moved_module_given_a_cpu_tensor() -> None:
    found = flagged(METHOD.format(body=FEEDS, fix=""))
    assert [(c, line) for c, line, _ in found] == [("SC401", 15)]
    assert "module `model` is on CUDA when it is available and `model.decode` gives it to `self.fc3`" \
        in found[0][2]


def test_method_input_silent_when_moved_or_not_surely_fed() -> None:
    assert codes(METHOD.format(body=FEEDS, fix=".to(device)")) == []
    # the method moves its input first
    moves = "        z = z.to(self.fc3.weight.device)\n        return self.fc3(z)"
    assert codes(METHOD.format(body=moves, fix="")) == []
    # the layer runs only on one path: not said at the call (the walk of `decode` with the facts of
    # its one call site speaks inside the branch)
    branch = "        if z.dim() > 1:\n            return self.fc3(z)\n        return z"
    assert not [m for _, _, m in flagged(METHOD.format(body=branch, fix="")) if "gives it to" in m]
    # a layer without parameters does not care where the module is
    relu = "        return self.act(z)"
    with_act = "self.fc3 = nn.Linear(20, 400)\n        self.act = nn.ReLU()"
    assert codes(METHOD.format(body=relu, fix="").replace("self.fc3 = nn.Linear(20, 400)", with_act)) == []


LOSS = HEAD + (
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "model = nn.Linear(10, 1).to(device)\n"
    "criterion = nn.BCEWithLogitsLoss(pos_weight=torch.Tensor([3])){move}\n"   # 6
    "def train(loader):\n"
    "    for x, y in loader:\n"
    "        x, y = x.to(device), y.to(device)\n"
    "        loss = criterion(model(x), y)\n"                            # 10
    "{more}\n"
)


def test_module_level_loss_with_a_cpu_weight_used_in_a_function() -> None:
    found = flagged(LOSS.format(move="", more=""))
    assert [(c, line) for c, line, _ in found] == [("SC401", 10)]
    assert "`criterion` holds `pos_weight` on the CPU" in found[0][2]
    assert codes(LOSS.format(move=".to(device)", more="")) == []
    # moved, or given to a call, somewhere else: where it is when `train` runs is unknown
    assert codes(LOSS.format(move="", more="def place():\n    criterion.cuda()\n")) == []
    assert codes(LOSS.format(move="", more="setup(criterion)\n")) == []
