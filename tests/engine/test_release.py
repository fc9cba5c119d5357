"""Checker.release: once the findings are read, the file's tree is freed without the cyclic collector."""

from __future__ import annotations

import gc
import libcst as cst

from shapecheck.engine.checker import analyze, forget_memos
from shapecheck.engine.config import selected_rules

CODE = """
import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x).transpose(1, 2)
        return y.view(-1)

def train(model, data):
    out = model(data)
    out.sum().backward()
    return out.mean(1)
"""


def _garbage_after(release: bool) -> int:
    """How many objects the cyclic collector finds once one file's analysis is dropped."""
    gc.collect()
    module = cst.parse_module(CODE)
    checker = analyze(module, [cls() for cls in selected_rules([])], CODE)
    findings = list(checker.findings)
    if release:
        checker.release()
    else:  # what the walk remembers per node outside the checker is not part of its cycles
        forget_memos()
    del module, checker, findings
    return gc.collect()


def test_release_frees_the_tree_without_the_collector() -> None:
    """After ``release`` the tree and the facts go by reference counting; without it, the walk's
    cycles leave them (hundreds of objects here) to the cyclic collector."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        kept = _garbage_after(release=False)
        released = _garbage_after(release=True)
    finally:
        if enabled:
            gc.enable()
    assert kept > 100
    assert released * 10 < kept
