"""Findings inside a function from the facts of its call sites (the re-walk of a callee with
its parameters bound to the join of its calls in the file), through the real linter."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule

RULES = [get_rule(code) for code in ("SC101", "SC301", "SC309", "SC401", "SC403")]

NET = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        return F.log_softmax(self.fc(x.flatten(1)), dim=1)


'''

TRAIN = NET + '''\
def train(model, device, loader, optimizer, epoch):
    for data, target in loader:
        {move}optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()


def main(device, loader):
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(1, 3):
        train(model, device, loader, optimizer, epoch)


def demo():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ds = TensorDataset(torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,)))
    main(device, DataLoader(ds, batch_size=8))


if __name__ == "__main__":
    demo()
'''


def _found(text: str) -> list[tuple[str, int, str]]:
    return [(d.code, d.line, d.message) for d in lint_text(textwrap.dedent(text), RULES)]


def _codes(text: str) -> list[tuple[str, int]]:
    return [(code, line) for code, line, _ in _found(text)]


def test_an_input_never_moved_is_found_through_two_callers():
    found = _found(TRAIN.format(move=""))
    assert [(c, n) for c, n, _ in found] == [("SC401", 19), ("SC401", 20)]
    assert found[0][2].startswith("`data` is a batch of `loader`, on the CPU")
    assert found[0][2].endswith("(with the arguments of the call on line 29)")


def test_the_moved_input_is_silent():
    assert _found(TRAIN.format(move="data, target = data.to(device), target.to(device)\n        ")) == []


def test_a_cpu_batch_with_a_cuda_model():
    text = NET + textwrap.dedent('''\
        def evaluate(model, batch):
            return model(batch).argmax(1)


        model = Net().to("cuda")
        print(evaluate(model, torch.randn(2, 784)))
        ''')
    assert _codes(text) == [("SC401", 17)]


PREDICT = NET + '''\
def predict(model, batch):
    out = model(batch)
    return out.cpu().numpy()


def predict_quietly(model, batch):
    with torch.no_grad():
        out = model(batch)
    return out.cpu().numpy()


'''


def test_numpy_on_the_output_of_a_trainable_module_passed_in():
    found = _found(PREDICT + "preds = predict(Net(), torch.randn(3, 784))\n")
    assert [(c, n) for c, n, _ in found] == [("SC309", 18)]
    assert found[0][2].endswith("(with the arguments of the call on line 27)")


def test_numpy_under_no_grad_in_the_caller_or_the_callee_is_silent():
    text = PREDICT + textwrap.dedent('''\
        model = Net()
        with torch.no_grad():
            preds = predict(model.eval(), torch.randn(3, 784))
        other = predict_quietly(Net(), torch.randn(3, 784))
        ''')
    assert _found(text) == []


def test_callers_that_disagree_give_only_what_they_agree_on():
    text = PREDICT + textwrap.dedent('''\
        a = predict(Net(), torch.randn(3, 784))
        with torch.no_grad():
            b = predict(Net(), torch.randn(3, 784))
        ''')
    assert _found(text) == []


def test_inplace_on_the_weight_of_a_layer_passed_in():
    text = '''\
        import torch
        import torch.nn as nn


        def fuse_into(conv, W):
            conv.weight[:, :, :, :] = W


        def fuse_quietly(conv, W):
            with torch.no_grad():
                conv.weight[:, :, :, :] = W


        fuse_into(nn.Conv2d(3, 8, 3), torch.zeros(8, 3, 3, 3))
        fuse_quietly(nn.Conv2d(3, 8, 3), torch.zeros(8, 3, 3, 3))
        '''
    assert _codes(text) == [("SC301", 6)]


def test_factory_without_device_fed_to_a_generator_on_the_gpu():
    text = NET + textwrap.dedent('''\
        def sample(netG, n, nz, device):
            noise = torch.randn(n, nz)
            return netG(noise)


        def sample_right(netG, n, nz, device):
            noise = torch.randn(n, nz, device=device)
            return netG(noise)


        def run():
            device = torch.device("cuda")
            netG = Net().to(device)
            return sample(netG, 16, 784, device), sample_right(netG, 16, 784, device)
        ''')
    found = _found(text)
    assert [(c, n) for c, n, _ in found] == [("SC401", 18)]
    assert found[0][2].endswith("(with the arguments of the call on line 29)")


def test_a_cpu_instance_of_a_class_moved_elsewhere_is_not_on_the_gpu():
    text = NET + textwrap.dedent('''\
        def predict(model, batch):
            with torch.no_grad():
                return model(batch)


        cpu_out = predict(Net(), torch.randn(3, 784))
        gpu_model = Net().to("cuda")
        ''')
    assert _found(text) == []


def test_layout_from_the_call_site_and_its_disagreeing_twin():
    one = '''\
        import torch


        def flat(x):
            return x.view(-1)


        flat(torch.randn(3, 4).t())
        '''
    assert _codes(one) == [("SC101", 5)]
    two = one + "flat(torch.randn(12))\n"
    assert _found(two) == []


def test_recursion_stays_bounded_and_joins_its_own_calls():
    text = '''\
        import torch


        def walk(x, n):
            if n:
                return walk(x.t(), n - 1)
            return x.view(-1)


        walk(torch.randn(3, 4), 3)
        '''
    assert _found(text) == []


def test_a_library_without_call_sites_is_unchanged():
    text = '''\
        import torch


        def flat(x):
            return x.view(-1)
        '''
    assert _found(text) == []


def test_noqa_on_the_callee_line_suppresses_it():
    text = '''\
        import torch


        def flat(x):
            return x.view(-1)  # noqa: SC101


        flat(torch.randn(3, 4).t())
        '''
    assert _found(text) == []


def test_the_command_reports_the_context_once(tmp_path):
    path = tmp_path / "mnist.py"
    path.write_text(TRAIN.format(move=""))
    done = subprocess.run([sys.executable, "-m", "shapecheck", "lint", "--select", "SC401", "--no-cache",
                           "--output-format", "json", str(path)], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    import json

    rows = json.loads(done.stdout)
    assert [(r["code"], r["line"]) for r in rows] == [("SC401", 19), ("SC401", 20)]
    assert all(r["message"].endswith("(with the arguments of the call on line 29)") for r in rows)


BLOCK = '''\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(32, 8)

    def _heads(self, t):
        return t.{op}(t.size(0), -1)

    def forward(self, x):
        return self.proj(self._heads(x.transpose(0, 1)))


def main():
    blk = Block()
    return blk(torch.randn(4, 2, 8))
'''


def test_a_method_called_from_forward_called_from_a_function():
    found = _found(BLOCK.format(op="view"))
    assert [(c, n) for c, n, _ in found] == [("SC101", 11)]
    assert found[0][2].endswith("(with the arguments of the call on line 14)")
    assert _found(BLOCK.format(op="reshape")) == []


def test_a_caller_with_unknown_arguments_starts_no_walk():
    text = '''\
        import torch


        def flat(x):
            return x.view(-1)


        def use(y):
            return flat(y.float())
        '''
    assert _found(text) == []
