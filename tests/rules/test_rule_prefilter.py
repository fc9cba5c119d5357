"""The ``needs`` pre-screen: a rule skips files whose text cannot hold its bug."""

import libcst as cst

from shapecheck.rules.catalog import all_rules, get_rule
from shapecheck.engine.checker import analyze


def test_every_invalid_example_passes_its_rules_screen():
    for rule in all_rules():
        for example in rule.invalid_examples():
            assert rule.applies_to(example.code), (rule.code, example.code)


def test_a_screened_rule_is_skipped_without_its_word():
    einsum_rule = get_rule("SC501")
    assert einsum_rule.needs == ("einsum",)
    assert not einsum_rule.applies_to("import torch\nx = torch.zeros(2)\n")
    assert einsum_rule.applies_to("import torch\ny = torch.einsum('ij', x)\n")


def test_analyze_applies_the_screen_only_when_given_the_text():
    source = "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny.add_(1)\ny.sum().backward()\n"
    rule = get_rule("SC302")
    module = cst.parse_module(source)
    assert [f.code for f in analyze(module, [rule()], source).findings] == ["SC302"]
    assert [f.code for f in analyze(module, [rule()]).findings] == ["SC302"]
    screened = source.replace(".backward()", "")
    module = cst.parse_module(screened)
    assert analyze(module, [rule()], screened).findings == []


def test_rules_without_a_screen_always_apply():
    rule = get_rule("SC101")
    assert rule.needs == ()
    assert rule.applies_to("")
