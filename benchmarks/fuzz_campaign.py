"""A fuzz campaign against the linter: generated and mutated programs through the real engine.

Cases come from three sources: programs that hypothesmith generates from Python's grammar (and,
a few, from libcst's node types), random chains of torch ops with odd arguments (negative, zero
and huge sizes, wrong types, out-of-range dims), and mutants of real files (``examples/*.py`` and the small
torch programs below) with lines deleted, duplicated, swapped, re-indented or spliced in,
numbers replaced by negative, zero or huge ones, identifiers and operators swapped, tricky
torch lines injected, and the text truncated at random points.

Each case is linted with every rule (opt-in ones too) in a worker process with a per-case
timeout: ``lint_text``, then ``fix_text``, whose output must parse (when the input did) and be a
fixed point, and must equal the input when nothing fixable was found. Then the real command runs
over the whole tree of cases: ``--jobs 1`` against ``--jobs 2``, with and without the result
cache, and ``--fix`` twice on a copy, while files outside the tree are watched.

It prints, all expected zero:

- crashes: an SC999, an exception out of the engine, a worker that died, a traceback from the
  command;
- hangs: a case that took longer than ``--timeout`` seconds;
- wrong results: fix output that does not parse, a fix that is not idempotent, output that
  differs between ``-j1`` and ``-j2`` or with the cache, ``--fix`` writing other text than the
  engine's fix;
- data lost: a file outside the tree changed, or a fix that changed a file without a fixable
  finding.

Run by hand, never in CI:  ``python benchmarks/fuzz_campaign.py --cases 3000 --seed 1``
(``--keep DIR`` saves every failing case). The CI suite ``tests/robustness/test_fuzz.py`` runs a
bounded slice of the same generators.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import keyword
import multiprocessing
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Iterator, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

CRASH = "crash"
HANG = "hang"
WRONG = "wrong result"
DATA_LOST = "data lost"
CATEGORIES = (CRASH, HANG, WRONG, DATA_LOST)

#: small programs shaped like real torch code, to be mutated beside examples/*.py
SNIPPETS = (
    '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / (c // self.heads) ** 0.5
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


if __name__ == "__main__":
    m = Attention(16)
    print(m(torch.randn(2, 5, 16)).shape)
''',
    '''import torch
from torch import nn, optim

model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
opt = optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(64, 8)
target = torch.randn(64, 1)
for step in range(10):
    opt.zero_grad()
    pred = model(data)
    loss = ((pred - target) ** 2).mean()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(step, loss.item())
weights = model[0].weight.data
print(weights.numpy().shape)
''',
    '''import torch


def normalize(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    mean = x.mean(dim=1, keepdim=True)
    var = x.var(dim=1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps)


def pairwise(a, b):
    diff = a.unsqueeze(1) - b.unsqueeze(0)
    return diff.pow(2).sum(-1)


x = torch.rand(4, 6)
y = normalize(x)
z = pairwise(x, torch.rand(3, 6))
w = torch.cat([x, y], dim=0).reshape(2, 4, 6).permute(2, 0, 1)
print(z.shape, w.flatten(1).shape, torch.einsum("ij,kj->ik", x, y).shape)
''',
    '''import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def conv_out(size, kernel, stride=1, padding=0):
    return (size + 2 * padding - kernel) // stride + 1


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.head = torch.nn.Linear(8 * 16 * 16, 10)
        self.scale = torch.nn.Parameter(torch.ones(10))

    def forward(self, images):
        h = torch.relu(self.conv(images))
        h = h.view(h.size(0), -1)
        return self.head(h) * self.scale


net = Net().to(device)
batch = torch.zeros(2, 3, 16, 16, device=device)
logits = net(batch)
probs = logits.softmax(-1).detach().cpu().numpy()
print(np.argmax(probs, axis=1), conv_out(16, 3, padding=1))
''',
    '''import torch

a = torch.randn(3, 3, dtype=torch.float64)
b = torch.randn(3, 2, dtype=torch.float64)
sol = torch.inverse(a) @ b
q = torch.zeros(5).cuda() if torch.cuda.is_available() else torch.zeros(5)
q.double()
mask = torch.arange(6).view(2, 3) > 2
vals = torch.where(mask, torch.ones(2, 3), torch.zeros(2, 3))
idx = vals.argmax(dim=1)
top, where = vals.max(1)
total = sum([v.item() for v in vals.flatten()])
print(sol.shape, idx, top, where, total, vals.squeeze().shape)
''',
)

#: lines that exercise rules, injected at random places
TORCH_LINES = (
    "x = torch.zeros(-1) + torch.zeros(-1)",
    "y = x.view(-3, -1) - x",
    "z = torch.empty(2, -3).reshape(-2)",
    "t = torch.rand(4, 3).t().view(12)",
    "t = torch.arange(6).view(-1, -1)",
    "s = torch.randn((-1,)).new_zeros(-2)",
    "e = torch.einsum('ij,jk->ik', torch.rand(2, 3), torch.rand(4, 5))",
    "m = torch.rand(2, 3) @ torch.rand(4, 5)",
    "b = torch.rand(2, 3) + torch.rand(4)",
    "r = x - x.mean(dim=1)",
    "x.data.zero_()",
    "x.cuda()",
    "x.double()",
    "n = x.numpy()",
    "v = torch.inverse(a) @ b",
    "w = torch.zeros(3)",
    "p = torch.nn.Parameter(torch.zeros(2, 2))",
    "p.add_(1)",
    "loss.backward()",
    "k = x.squeeze().item()",
    "c = torch.cat([x, x.T], dim=-1)",
    "g = x.expand(2, -2, 3)",
    "h = x.repeat(-1, 2)",
    "u = x.unsqueeze(-7).sum(9)",
    "f = torch.full((0, -1), 1.0).view(0, -1)",
    "d = torch.eye(-1, 3) * torch.linspace(0, 1, -4)",
    "o = torch.ones(10 ** 30).view(2 ** 64, -1)",
)

#: replacements for an int literal: negative, zero, huge, odd spellings
NUMBERS = ("-1", "-2", "-3", "-7", "0", "1", "2", "3", "64", "4096", "2**31", "10**30",
           "-9223372036854775808", "18446744073709551616", "9" * 60, "0x7fffffff", "1_000", "0b101",
           "-0", "(-1)", "True", "1.5", "-1e308", "1e400")

_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")
_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_OPERATORS = ("+", "-", "*", "@", "/", "//", "%", "**")
_SWAPS = ((".view(", ".reshape("), (".transpose(", ".permute("), (".sum(", ".mean("),
          ("dim=", "keepdim="), ("-1", "-2"), ("(", "(("), ("torch.", "np."))


def seed_sources() -> list[tuple[str, str]]:
    """``(name, text)`` of every file mutated: ``examples/*.py`` and :data:`SNIPPETS`."""
    found = []
    for path in sorted(glob.glob(os.path.join(REPO, "examples", "*.py"))):
        with open(path, encoding="utf-8") as handle:
            found.append((os.path.basename(path), handle.read()))
    found.extend((f"snippet{i}.py", text) for i, text in enumerate(SNIPPETS))
    return found


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def mutate_once(text: str, rng: random.Random, donors: list[str]) -> str:
    """``text`` with one random mutation applied."""
    lines = text.split("\n")
    op = rng.choice(("delete", "duplicate", "swap", "number", "number", "name", "truncate", "indent",
                     "operator", "splice", "inject", "inject", "replace"))
    i = rng.randrange(len(lines))
    if op == "delete" and len(lines) > 1:
        del lines[i]
    elif op == "duplicate":
        lines.insert(i, lines[i])
    elif op == "swap":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "number":
        spots = list(_NUMBER.finditer(text))
        if spots:
            m = rng.choice(spots)
            return text[: m.start()] + rng.choice(NUMBERS) + text[m.end():]
    elif op == "name":
        names = sorted({m.group() for m in _NAME.finditer(text)} - set(keyword.kwlist))
        if len(names) >= 2:
            a, b = rng.sample(names, 2)
            if rng.random() < 0.5:
                return re.sub(rf"\b{re.escape(a)}\b", b, text)
            spots = [m for m in _NAME.finditer(text) if m.group() == a]
            m = rng.choice(spots)
            return text[: m.start()] + b + text[m.end():]
    elif op == "truncate":
        return text[: rng.randrange(len(text) + 1)]
    elif op == "indent":
        lines[i] = ("    " + lines[i]) if rng.random() < 0.5 else lines[i][4:]
    elif op == "operator":
        if rng.random() < 0.5:
            a, b = rng.choice(_SWAPS)
            if a in text:
                spots = [m.start() for m in re.finditer(re.escape(a), text)]
                at = rng.choice(spots)
                return text[:at] + b + text[at + len(a):]
        spots = list(re.finditer(r"(?<=\s)(\+|-|\*|@|/)(?=\s)", text))
        if spots:
            m = rng.choice(spots)
            return text[: m.start()] + rng.choice(_OPERATORS) + text[m.end():]
    elif op == "splice" and donors:
        donor = rng.choice(donors).split("\n")
        k = rng.randrange(len(donor))
        chunk = donor[k: k + rng.randint(1, 4)]
        lines[i:i] = [_indent_of(lines[i]) + c.lstrip() if rng.random() < 0.7 else c for c in chunk]
    elif op == "inject":
        lines.insert(i, _indent_of(lines[i]) + rng.choice(TORCH_LINES))
    elif op == "replace":
        lines[i] = _indent_of(lines[i]) + rng.choice(TORCH_LINES)
    return "\n".join(lines)


def compiles(text: str) -> bool:
    """True when CPython compiles ``text``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning: 'int' object is not subscriptable...
        try:
            compile(text, "<case>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return False
    return True


def mutants(count: int, seed: int, valid_share: float = 0.8) -> Iterator[tuple[str, str]]:
    """``count`` mutated programs ``(name, text)``, the same for the same seed; about
    ``valid_share`` of them compile (mutations are retried until they do), the rest need not."""
    rng = random.Random(seed)
    sources = seed_sources()
    donors = [text for _name, text in sources]
    for n in range(count):
        name, text = rng.choice(sources)
        want_valid = rng.random() < valid_share
        for _attempt in range(8):
            out = text
            for _step in range(rng.randint(1, 4)):
                out = mutate_once(out, rng, donors)
            if out != text and (not want_valid or compiles(out)):
                break
        if out == text:
            out = text + rng.choice(TORCH_LINES) + "\n"
        yield f"m{n:05d}_{name}", out


#: what the random op chains call: Tensor methods and attributes, and torch functions
CHAIN_METHODS = (
    "view", "reshape", "flatten", "transpose", "permute", "t", "movedim", "unsqueeze", "squeeze",
    "expand", "expand_as", "repeat", "contiguous", "clone", "detach", "cuda", "cpu", "to", "double",
    "float", "long", "add", "mul", "sub", "div", "pow", "add_", "mul_", "zero_", "relu", "exp",
    "softmax", "sum", "mean", "max", "min", "argmax", "std", "norm", "sort", "topk", "matmul", "mm",
    "bmm", "new_zeros", "new_full", "new_tensor", "size", "dim", "numel", "item", "narrow",
    "masked_fill", "requires_grad_", "backward", "numpy", "tolist", "chunk", "split", "unbind",
    "gather", "index_select", "unflatten", "type_as", "view_as", "reshape_as", "inverse",
)
CHAIN_ATTRIBUTES = ("T", "mT", "shape", "data", "grad", "device", "dtype", "requires_grad", "is_leaf")
CHAIN_FUNCTIONS = (
    "zeros", "ones", "empty", "rand", "randn", "full", "randint", "arange", "linspace", "eye",
    "tensor", "zeros_like", "randperm", "einsum", "cat", "stack", "where", "matmul", "bmm",
    "broadcast_to", "reshape", "transpose", "sum", "mean", "max", "inverse", "linalg.solve",
    "linalg.inv", "nn.functional.linear", "nn.functional.softmax", "nn.functional.pad",
    "nn.functional.cross_entropy", "nn.Parameter", "nn.Linear", "no_grad",
)
CHAIN_VALUES = (
    "-1", "-2", "0", "1", "2", "3", "-7", "2**70", "10**30", "9" * 50, "1.5", "None", "True",
    "'cuda'", "'cpu'", "'ij,jk->ik'", "'i,i->'", "'...'", "(2, -1)", "(-3,)", "[]", "()", "x",
    "y", "x.shape", "x.shape[0]", "x.size(-1)", "torch.float64", "slice(None)", "...", "y.T",
    "[x, y]", "(x, x)", "lambda: x", "dim=-1", "keepdim=True", "dim=(0, -1)", "size=(2, -2)",
    "device='cuda'", "dtype=torch.float64", "requires_grad=True", "out=x", "*x.shape", "**k",
)
_CHAIN_TAILS = ("0", "-1", ":, None", "..., 0", "::-1", "1:-1", "None", "x > 0", "[0, 1]",
                "0, 0, 0, 0", "::0", "10**20:")
_CHAIN_STATEMENTS = ("{t}.backward()", "{t}.add_(1)", "if {t}: pass", "{t}.cuda()", "{t}.double()",
                     "print({t}.item())", "{t}.data.zero_()", "{t}.numpy()", "{t}[0] = 1",
                     "{t} += {t}", "del {t}", "assert {t}.shape == (2, 3)")


def _chain_args(rng: random.Random) -> str:
    picked = [rng.choice(CHAIN_VALUES) for _ in range(rng.randint(0, 4))]
    positional = [a for a in picked if "=" not in a.replace("==", "") and not a.startswith("**")]
    keywords = list({a.split("=")[0]: a for a in picked if "=" in a.replace("==", "")}.values())
    return ", ".join(positional + keywords + [a for a in picked if a.startswith("**")][:1])


def _chain_expr(rng: random.Random, names: list[str]) -> str:
    if rng.random() < 0.3:
        text = f"torch.{rng.choice(CHAIN_FUNCTIONS)}({_chain_args(rng)})"
    elif rng.random() < 0.15:
        text = f"{rng.choice(names)}.{rng.choice(CHAIN_ATTRIBUTES)}"
    else:
        text = f"{rng.choice(names)}.{rng.choice(CHAIN_METHODS)}({_chain_args(rng)})"
    if rng.random() < 0.3:
        other = rng.choice(names + ["2", "-1", "torch.zeros(-1)", "torch.rand(3, 1)"])
        text = f"{text} {rng.choice(('+', '-', '*', '@', '/', '==', '//', '**'))} {other}"
    if rng.random() < 0.15:
        text = f"{text}[{rng.choice(_CHAIN_TAILS)}]"
    return text


def op_chains(count: int, seed: int) -> Iterator[tuple[str, str]]:
    """``count`` random programs ``(name, text)`` of torch op chains with odd arguments
    (negative, zero and huge sizes, wrong types, out-of-range dims), at module level, in a
    function, in a loop or in a module's ``forward``; the same for the same seed."""
    rng = random.Random(seed ^ 0x5EED)
    for n in range(count):
        names = ["x", "y"]
        body = []
        for i in range(rng.randint(1, 10)):
            target = rng.choice(names + [f"v{i}"])
            body.append(f"{target} = {_chain_expr(rng, names)}")
            if target not in names:
                names.append(target)
            if rng.random() < 0.15:
                body.append(rng.choice(_CHAIN_STATEMENTS).format(t=rng.choice(names)))
        head = ["import torch", "import torch.nn as nn", "x = torch.rand(2, 3)",
                "y = torch.zeros(3, 2, requires_grad=True)"]
        where = rng.choice(("module", "function", "loop", "forward"))
        if where == "module":
            lines = head + body
        elif where == "function":
            lines = head + ["def f(x, y, k=None):"] + ["    " + b for b in body] + [f"    return {names[-1]}"]
        elif where == "loop":
            lines = head + ["for step in range(3):"] + ["    " + b for b in body]
        else:
            lines = head + ["class M(nn.Module):", "    def __init__(self):", "        super().__init__()",
                            "        self.w = nn.Parameter(torch.rand(3, 3))", "    def forward(self, x, y=None):",
                            "        k = {}"] + ["        " + b.replace("y", "self.w") for b in body] + \
                    [f"        return {names[-1].replace('y', 'self.w')}"]
        yield f"c{n:05d}.py", "\n".join(lines) + "\n"


def grammar_programs(count: int, seed: int, from_node: bool = False) -> list[str]:
    """``count`` programs generated by hypothesmith (from the grammar, or from libcst nodes)."""
    if count <= 0:
        return []
    import hypothesmith
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed

    found: list[str] = []
    strategy = hypothesmith.from_node() if from_node else hypothesmith.from_grammar()

    @hypothesis_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(source: str) -> None:
        found.append(source)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hypothesmith compiles what it draws: SyntaxWarnings
        collect()
    return found[:count]


# ---------------------------------------------------------------------------------------------
# one case, in-process


def check_case(text: str) -> tuple[list[tuple[str, str]], str]:
    """Lint and fix ``text`` with every rule: ``(problems, fixed text)``, where each problem is
    ``(category, what)`` and ``fixed`` is what ``--fix`` must write."""
    from shapecheck.engine.runner import fix_text, lint_text
    from shapecheck.rules.catalog import all_rules

    rules = all_rules()
    problems: list[tuple[str, str]] = []
    try:
        found = lint_text(text, rules, path="case.py")
    except Exception as exc:  # anything out of the engine is the finding
        return [(CRASH, "lint_text raised " + _exception_line(exc))], text
    problems.extend((CRASH, f"{d.line}:{d.column} {d.message}") for d in found if d.code == "SC999")
    try:
        fixed, _count = fix_text(text, rules, path="case.py")
    except Exception as exc:
        return problems + [(CRASH, "fix_text raised " + _exception_line(exc))], text
    if fixed == text:
        return problems, fixed
    if not any(d.fixable for d in found):
        problems.append((DATA_LOST, "the fix changed a file that had no fixable finding"))
    if compiles(text) and not compiles(fixed):
        problems.append((WRONG, "the fixed text does not compile"))
    try:
        again, _count = fix_text(fixed, rules, path="case.py")
    except Exception as exc:
        return problems + [(CRASH, "fix_text of the fixed text raised " + _exception_line(exc))], fixed
    if again != fixed:
        problems.append((WRONG, "the fix is not idempotent: a second pass changes the text"))
    return problems, fixed


def _exception_line(exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" at {os.path.basename(where.filename)}:{where.lineno}" if where else ""
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}{at}"


# ---------------------------------------------------------------------------------------------
# cases in a worker process, with a timeout


def _serve(conn) -> None:
    import resource

    limit = 4 * 1024 ** 3
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass
    while True:
        try:
            text = conn.recv()
        except EOFError:
            return
        if text is None:
            return
        try:
            conn.send(check_case(text))
        except BaseException as exc:  # MemoryError, RecursionError out of pickling...
            conn.send(([(CRASH, "worker: " + _exception_line(exc))], text))


class Worker:
    """A process that checks cases one at a time; one that hangs or dies is replaced."""

    def __init__(self) -> None:
        self._context = multiprocessing.get_context("fork")
        self._start()

    def _start(self) -> None:
        self.conn, child = self._context.Pipe()
        self.proc = self._context.Process(target=_serve, args=(child,), daemon=True)
        self.proc.start()
        child.close()

    def check(self, text: str, timeout: float) -> tuple[list[tuple[str, str]], str]:
        """``check_case(text)`` run in the worker; a hang or a death is a problem."""
        try:
            self.conn.send(text)
            if not self.conn.poll(timeout):
                self._restart()
                return [(HANG, f"no answer in {timeout:g} s")], text
            return self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            self.proc.join(5)
            code = self.proc.exitcode
            self._restart()
            return [(CRASH, f"the worker died (exit code {code})")], text

    def _restart(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()
        self._start()

    def close(self) -> None:
        """Stop the worker."""
        try:
            self.conn.send(None)
        except (OSError, BrokenPipeError):
            pass
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)


# ---------------------------------------------------------------------------------------------
# the real command over a tree of cases


def lint_command(args: list[str], cwd: str, timeout: float) -> subprocess.CompletedProcess:
    """``python -m shapecheck lint ARGS`` from ``cwd``; a timeout comes back with ``returncode``
    ``None``."""
    try:
        return subprocess.run([sys.executable, "-m", "shapecheck", "lint", *args], cwd=cwd,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(exc.cmd, None, exc.stdout or "", exc.stderr or "")


def snapshot(root: str, skip: tuple[str, ...]) -> dict[str, str]:
    """Path -> sha256 (or ``link:target``) of every file under ``root`` outside ``skip``."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in skip]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                found[path] = "link:" + os.readlink(path)
                continue
            with open(path, "rb") as handle:
                found[path] = hashlib.sha256(handle.read()).hexdigest()
    return found


def _command_problems(what: str, proc: subprocess.CompletedProcess, timeout: float) -> list[tuple[str, str]]:
    if proc.returncode is None:
        return [(HANG, f"{what}: no exit in {timeout:g} s")]
    problems = []
    if proc.returncode not in (0, 1, 2):
        problems.append((CRASH, f"{what}: exit code {proc.returncode}: {proc.stderr.strip()[-300:]}"))
    if "Traceback" in proc.stderr:
        problems.append((CRASH, f"{what}: traceback: {proc.stderr.strip()[-300:]}"))
    if "SC999" in proc.stdout:
        problems.append((CRASH, f"{what}: an SC999 in the output"))
    return problems


def check_tree(cases: dict[str, tuple[str, str]], workdir: str, jobs: int = 2,
               timeout: float = 600.0, with_cache: bool = True) -> list[tuple[str, str]]:
    """Write ``cases`` (file name -> (text, expected fixed text)) to a tree under ``workdir``
    and run the real command over it: ``-j1`` against ``-j{jobs}``, with and without the cache
    (filled, then read; unless ``with_cache`` is false), then ``--fix`` twice on a copy, while
    the files beside the tree are watched."""
    problems: list[tuple[str, str]] = []
    tree = os.path.join(workdir, "tree")
    outside = os.path.join(workdir, "outside")
    os.makedirs(outside, exist_ok=True)
    for name, data in (("victim.py", "import torch\nx = torch.zeros(3)\nx.cuda()\n"),
                       ("results.json", "{}\n"), ("rules-1.txt", "keep\n")):
        with open(os.path.join(outside, name), "w", encoding="utf-8") as handle:
            handle.write(data)
    for i, (name, (text, _fixed)) in enumerate(sorted(cases.items())):
        folder = os.path.join(tree, f"part{i // 200:03d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, name), "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    with open(os.path.join(tree, "pyproject.toml"), "w", encoding="utf-8") as handle:
        handle.write("[tool.shapecheck]\n")
    fixtree = os.path.join(workdir, "fixtree")
    shutil.copytree(tree, fixtree)
    watched = (tree, fixtree)
    before = snapshot(workdir, watched)

    base = ["--select", "ALL", "--format", "json"]
    runs = {}
    variants = [("-j1 --no-cache", ["-j1", "--no-cache"]), (f"-j{jobs} --no-cache", [f"-j{jobs}", "--no-cache"])]
    if with_cache:
        variants += [(f"-j{jobs} cache fill", [f"-j{jobs}"]), (f"-j{jobs} cache read", [f"-j{jobs}"])]
    for label, extra in variants:
        proc = lint_command(base + extra + ["tree"], workdir, timeout)
        problems.extend(_command_problems(label, proc, timeout))
        runs[label] = proc
    reference = runs["-j1 --no-cache"]
    for label, proc in runs.items():
        if proc.returncode is not None and reference.returncode is not None and \
                (proc.stdout, proc.returncode) != (reference.stdout, reference.returncode):
            problems.append((WRONG, f"`{label}` differs from `-j1 --no-cache`: "
                                    f"{_first_difference(reference.stdout, proc.stdout)}"))

    for attempt in ("first", "second"):
        proc = lint_command(["--select", "ALL", "--fix", "--no-cache", f"-j{jobs}", "fixtree"], workdir, timeout)
        problems.extend(_command_problems(f"--fix ({attempt})", proc, timeout))
        for i, (name, (text, fixed)) in enumerate(sorted(cases.items())):
            path = os.path.join(fixtree, f"part{i // 200:03d}", name)
            with open(path, encoding="utf-8", newline="") as handle:
                now = handle.read()
            if now != fixed:
                kind = DATA_LOST if fixed == text else WRONG
                problems.append((kind, f"--fix ({attempt}) wrote other text than the engine's fix to {name}"))
    after = snapshot(workdir, watched)
    for path in sorted(set(before) | set(after)):
        if before.get(path) != after.get(path):
            problems.append((DATA_LOST, f"{os.path.relpath(path, workdir)} outside the tree was "
                                        f"{'changed' if path in before and path in after else 'created or deleted'}"))
    return problems


def _first_difference(a: str, b: str) -> str:
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return f"line {i + 1}: {x.strip()[:120]!r} vs {y.strip()[:120]!r}"
    return f"{len(a.splitlines())} lines vs {len(b.splitlines())} lines"


# ---------------------------------------------------------------------------------------------


@dataclass
class Tally:
    """What the campaign found."""

    tried: int = 0
    compiled: int = 0
    problems: dict = field(default_factory=lambda: {c: [] for c in CATEGORIES})

    def add(self, name: str, found: list[tuple[str, str]]) -> None:
        """Record ``found`` for case ``name``."""
        for category, what in found:
            self.problems[category].append((name, what))


def main(argv: Optional[list[str]] = None) -> int:
    """Run the campaign; exit 1 when anything was found."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000, help="how many cases (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grammar-share", type=float, default=0.15,
                        help="share of cases generated by hypothesmith (default 0.15)")
    parser.add_argument("--chain-share", type=float, default=0.25,
                        help="share of cases that are random torch op chains (default 0.25)")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per case (default 20)")
    parser.add_argument("--jobs", type=int, default=2, help="--jobs of the command runs (default 2)")
    parser.add_argument("--batch", type=int, default=1000, help="cases per command-run tree")
    parser.add_argument("--keep", metavar="DIR", help="save every failing case here")
    args = parser.parse_args(argv)

    start = time.time()
    n_grammar = int(args.cases * args.grammar_share)
    n_node = n_grammar // 10
    cases: list[tuple[str, str]] = []
    print(f"generating {n_grammar - n_node} + {n_node} hypothesmith programs ...", flush=True)
    cases += [(f"g{i:05d}.py", s) for i, s in enumerate(grammar_programs(n_grammar - n_node, args.seed))]
    cases += [(f"n{i:05d}.py", s) for i, s in enumerate(grammar_programs(n_node, args.seed, from_node=True))]
    n_chains = int(args.cases * args.chain_share)
    cases += list(op_chains(n_chains, args.seed))
    cases += list(mutants(args.cases - len(cases), args.seed))

    tally = Tally()
    worker = Worker()
    checked: dict[str, tuple[str, str]] = {}
    try:
        for n, (name, text) in enumerate(cases, start=1):
            found, fixed = worker.check(text, args.timeout)
            tally.tried += 1
            tally.compiled += compiles(text)
            tally.add(name, found)
            if found and args.keep:
                os.makedirs(args.keep, exist_ok=True)
                with open(os.path.join(args.keep, name), "w", encoding="utf-8", newline="") as handle:
                    handle.write(text)
            if not any(c in (HANG, CRASH) for c, _ in found):
                checked[name] = (text, fixed)
            if n % 250 == 0:
                print(f"  {n} cases, {time.time() - start:.0f} s", flush=True)
    finally:
        worker.close()

    names = sorted(checked)
    for first in range(0, len(names), args.batch):
        batch = {name: checked[name] for name in names[first: first + args.batch]}
        with tempfile.TemporaryDirectory(prefix="shapecheck-fuzz-") as workdir:
            print(f"  command runs over {len(batch)} files ...", flush=True)
            tally.add(f"tree{first // args.batch}", check_tree(batch, workdir, jobs=args.jobs))

    print()
    print(f"fuzz campaign: seed {args.seed}, {time.time() - start:.0f} s")
    print(f"cases tried:    {tally.tried} ({n_grammar} hypothesmith, {n_chains} op chains, "
          f"{tally.tried - n_grammar - n_chains} mutated; {tally.compiled} compile)")
    print(f"crashes:        {len(tally.problems[CRASH])}")
    print(f"hangs:          {len(tally.problems[HANG])}")
    print(f"wrong results:  {len(tally.problems[WRONG])}")
    print(f"data lost:      {len(tally.problems[DATA_LOST])}")
    for category in CATEGORIES:
        for name, what in tally.problems[category][:20]:
            print(f"  {category}: {name}: {what}")
    return 1 if any(tally.problems.values()) else 0


if __name__ == "__main__":
    sys.path.insert(0, REPO)
    sys.exit(main())
