"""SC403 on factories without ``device=`` as real model code writes them: a causal mask compared
with a number (``self.bias[:, :T, :T] == 0``), a parameter cast with ``.to(x.dtype)``, a random
index built on the CPU and given to ``torch.gather``, constants of a helper whose parameter the
body uses as a tensor; and the correct twins.

Each invalid case fails with torch 2.13 when the ``meta`` device stands in for CUDA ("Tensor on
device cpu is not on the expected device meta!"), except ``gather``, whose CPU index meets a CUDA
input only on CUDA ("Expected all tensors to be on the same device ... argument index"), by
reasoning.
"""

from __future__ import annotations

from functools import partial

from rule_harness import family_rules, finding_lines, findings
from shapecheck.engine.runner import lint_text

DEVICE_RULES = family_rules("SC4")
codes = partial(finding_lines, rules=DEVICE_RULES)
flagged = partial(findings, rules=DEVICE_RULES)

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

BOW = HEAD + (
    "class CausalBoW(nn.Module):\n"                                     # 4
    "    def __init__(self, n):\n"
    "        super().__init__()\n"
    "        self.register_buffer('bias', torch.tril(torch.ones(n, n)).view(1, n, n))\n"
    "    def forward(self, x):\n"
    "        B, T, C = x.size()\n"
    "        att = torch.zeros((B, T, T){device})\n"                     # 10
    "        att = att.masked_fill(self.bias[:, :T, :T] == 0, float('-inf'))\n"  # 11
    "        att = F.softmax(att, dim=-1)\n"
    "        return att @ x\n"                                           # 13
)


def test_factory_meets_a_buffer_compared_with_a_number() -> None:
    found = flagged(BOW.format(device=""))
    assert [(c, line) for c, line, _ in found] == [("SC403", 11), ("SC403", 13)]
    assert "meets `self.bias[:, :T, :T] == 0`, a registered tensor of the module" in found[0][2]
    assert codes(BOW.format(device=", device=x.device")) == []


CLS = HEAD + (
    "class ViT(nn.Module):\n"                                           # 4
    "    def __init__(self, width):\n"
    "        super().__init__()\n"
    "        self.class_embedding = nn.Parameter(torch.randn(width))\n"
    "    def forward(self, x):\n"
    "        cls = self.class_embedding.to({cast}) + torch.zeros(x.shape[0], 1, x.shape[-1], dtype=x.dtype{device})\n"
    "        return cls\n"
)


def test_parameter_cast_to_a_dtype_keeps_its_device() -> None:
    assert codes(CLS.format(cast="x.dtype", device="")) == [("SC403", 9)]
    assert codes(CLS.format(cast="torch.float16", device="")) == [("SC403", 9)]
    assert codes(CLS.format(cast="x.dtype", device=", device=x.device")) == []
    # moved to a device it names: where the parameter is then is not the module's business
    assert codes(CLS.format(cast="'cpu'", device="")) == []


MASKING = HEAD + (
    "class MAE(nn.Module):\n"                                            # 4
    "    def random_masking(self, x, keep):\n"
    "        N, L, D = x.shape\n"
    "        noise = torch.rand(N, L{device})\n"
    "        ids_shuffle = torch.argsort(noise, dim=1)\n"
    "        ids_keep = ids_shuffle[:, :keep]\n"
    "        return torch.gather(x, dim=1, index=ids_keep.unsqueeze(-1).repeat(1, 1, D))\n"  # 10
)


def test_random_index_made_on_the_cpu_given_to_gather() -> None:
    found = flagged(MASKING.format(device=""))
    assert [(c, line) for c, line, _ in found] == [("SC403", 10)]
    assert "`torch.gather` raises RuntimeError" in found[0][2]
    assert codes(MASKING.format(device=", device=x.device")) == []


NORMALIZE = HEAD + (
    "class Normalize(nn.Module):\n"                                      # 4
    "    def normalize_batch(self, batch):\n"
    "        mean = torch.tensor([0.485, 0.456, 0.406]){move}.view(-1, 1, 1)\n"
    "        batch = batch.div_(255.0)\n"
    "        return batch - mean\n"                                       # 8
)


def test_method_whose_parameter_is_used_as_a_tensor() -> None:
    assert codes(NORMALIZE.format(move="")) == [("SC403", 8)]
    assert codes(NORMALIZE.format(move=".to(batch.device)")) == []


def test_parameter_used_as_a_tensor_outside_a_module_class_stays_silent() -> None:
    # a plain function may belong to a CPU-only script: its tensors need not move
    plain = HEAD + (
        "def fit(x, y):\n    w = torch.zeros(x.size(1), requires_grad=True)\n"
        "    return ((x @ w - y) ** 2).mean()\n")
    assert codes(plain) == []


def test_parameter_that_may_be_an_array_stays_silent() -> None:
    # `np.asarray(batch)` says `batch` may be an array: no evidence that it is a tensor
    source = "import numpy as np\n" + NORMALIZE.format(move="").replace(
        "        batch = batch.div_(255.0)\n", "        print(np.asarray(batch))\n        batch = batch.div_(255.0)\n")
    assert codes(source) == []


COVARIANCE = HEAD + (
    "class Gaussian(nn.Module):\n"                                      # 4
    "    def __init__(self, d):\n"
    "        super().__init__()\n"
    "        self.d = d\n"
    "        self.L = nn.Parameter(torch.randn(d, d))\n"
    "    def forward(self, x):\n"
    "        cov = self.L @ self.L.t()\n"
    "        cov = cov + 1e-4 * torch.eye(self.d{device})\n"               # 11
    "        return x @ cov\n"
)


def test_factory_meets_a_tensor_computed_from_a_parameter() -> None:
    found = flagged(COVARIANCE.format(device=""))
    assert [(c, line) for c, line, _ in found] == [("SC403", 11)]
    assert "meets `cov`, computed from `self.L`, a tensor of the module, which moves with it" in found[0][2]
    assert codes(COVARIANCE.format(device=", device=self.L.device")) == []


def test_a_name_rebound_to_something_else_no_longer_counts() -> None:
    rebound = COVARIANCE.format(device="").replace("        cov = cov + ", "        cov = make_covariance()\n"
                                                    "        cov = cov + ")
    # not at the `+` (line 12); the sum is the CPU side when it meets the input `x` (line 13)
    assert codes(rebound) == [("SC403", 13)]


MOVED = HEAD + (
    "def train(args, loader):\n"                                        # 4
    "    device = args.device\n"
    "    netG = nn.Sequential(nn.Linear(100, 784), nn.Tanh()).to(device)\n"
    "    netD = nn.Sequential(nn.Linear(784, 1), nn.Sigmoid()).to(device)\n"
    "    criterion = nn.BCELoss()\n"
    "    for data, _ in loader:\n"
    "        real = data.to(device)\n"
    "        label = torch.ones(real.size(0), 1{device})\n"
    "        errD = criterion(netD(real), label)\n"                      # 12
    "        fake = netG(torch.randn(real.size(0), 100{device}))\n"      # 13
)


def test_factory_meets_what_the_function_moved_to_its_device() -> None:
    found = flagged(MOVED.format(device=""))
    assert [(c, line) for c, line, _ in found] == [("SC403", 12), ("SC403", 13)]
    assert "meets `netD(real)`, which is on `device` (moved there in this function)" in found[0][2]
    assert "is given to `netG`, which is on `device`" in found[1][2]
    assert codes(MOVED.format(device=", device=device")) == []


def test_moved_to_the_cpu_or_cast_is_no_evidence() -> None:
    assert codes(MOVED.format(device="").replace(".to(device)", ".to('cpu')")) == []
    assert codes(MOVED.format(device="").replace(".to(device)", ".to(torch.float64)")) == []
    # an unknown callable given the moved tensor says nothing about where its result is
    unknown = HEAD + (
        "def step(netD, data, device, criterion):\n    real = data.to(device)\n"
        "    return criterion(netD(real), torch.ones(real.size(0), 1))\n")
    assert codes(unknown) == []


LEGACY = HEAD + (
    "class Encoder(nn.Module):\n"                                        # 4
    "    def __init__(self, table):\n"
    "        super().__init__()\n"
    "        self.src_emb = nn.Embedding(5, 8)\n"
    "        self.pos_emb = nn.Embedding.from_pretrained(table, freeze=True)\n"
    "    def forward(self, enc_inputs: torch.Tensor):\n"
    "        pos = {pos}\n"                                                 # 10
    "        return self.src_emb(enc_inputs) + self.pos_emb(pos)\n"        # 11
)


def test_a_legacy_constructor_is_made_on_the_cpu_and_gets_no_fix() -> None:
    # nlp-tutorial's Transformer: the positions of a frozen pretrained table, built with
    # torch.LongTensor in forward (which takes no CUDA device)
    source = LEGACY.format(pos="torch.LongTensor([[1, 2, 3, 4, 0]])")
    diagnostics = [d for d in lint_text(source, DEVICE_RULES) if d.code == "SC403"]
    assert [(d.line, d.fixable) for d in diagnostics] == [(11, False)]
    message = diagnostics[0].message
    assert "(`torch.LongTensor` makes CPU tensors only)" in message
    assert "create it with `torch.tensor(..., dtype=torch.long, device=...)` instead" in message
    assert codes(LEGACY.format(pos="torch.tensor([[1, 2, 3, 4, 0]], device=enc_inputs.device)")) == []
