"""The backward-save state of each scope (what ops saved for backward, in-place changes, backward
passes run): updated statement by statement, joined at if/try/match/loops like the bindings."""

from __future__ import annotations

import textwrap

import libcst as cst

from shapecheck.engine.checker import analyze
from shapecheck.semantic.backward_saves import BackwardSaves, join_saves
from shapecheck.semantic.saved_tensors import names_read, saved_roles

HEAD = "import torch\nx = torch.randn(3, requires_grad=True)\nw = torch.randn(3)\n"


class _Probe:
    """At each ``reveal(expr)``: the saved tensors of ``expr`` changed since, as
    ``(op, name, role, changing line)``; the backward pass that freed ``expr``'s graph (its line);
    and the values ``expr`` was assigned from."""

    code = "PROBE"

    def __init__(self) -> None:
        self.seen: list[tuple[list, object, list]] = []

    def visit_Call(self, node, ctx) -> None:
        if not (isinstance(node.func, cst.Name) and node.func.value == "reveal"):
            return
        expr = node.args[0].value
        changed = [(r.op, r.binding[0], r.role, ctx.source(n).strip()) for r, n in ctx.changed_saves(expr)]
        freed = ctx.freed_by_backward(expr.value) if isinstance(expr, cst.Name) else None
        values = [ctx.source(v) for v in ctx.assigned_values(expr.value)] if isinstance(expr, cst.Name) else []
        self.seen.append((changed, ctx.source(freed) if freed is not None else None, values))


def _reveal(code: str) -> list[tuple[list, object, list]]:
    probe = _Probe()
    checker = analyze(cst.parse_module(HEAD + textwrap.dedent(code)), [probe])
    assert checker.crashes == []
    return probe.seen


def _changed(code: str) -> list:
    return [changed for changed, _freed, _values in _reveal(code)]


def test_ops_save_what_torch_saves_and_in_place_changes_are_recorded():
    assert _changed("""\
        y = x.exp()
        z = x * w
        s = x + 1
        y.add_(1)
        w[0] = 0.0
        s.mul_(2)
        reveal(y)
        reveal(z)
        reveal(s)
        x.grad
    """) == [
        [("x.exp()", "y", "result", "y.add_(1)")],
        [("x * w", "w", "other", "w[0] = 0.0")],
        [],
    ]


def test_the_first_change_counts_and_augmented_assignment_and_out_change_in_place():
    assert _changed("""\
        y = torch.sigmoid(x)
        y += 1
        y.mul_(2)
        reveal(y)
        h = x.tanh()
        torch.exp(x, out=h)
        reveal(h)
        x.grad
    """) == [
        [("torch.sigmoid(x)", "y", "result", "y += 1")],
        [("x.tanh()", "h", "result", "torch.exp(x, out=h)")],
    ]


def test_nothing_is_saved_without_grad_and_a_new_binding_is_a_new_tensor():
    assert _changed("""\
        with torch.no_grad():
            y = x.exp()
        y.add_(1)
        reveal(y)
        z = x.exp()
        z = z + 1
        z.add_(1)
        reveal(z)
        x.grad
    """) == [[], []]


def test_a_change_on_one_branch_only_is_dropped_at_the_join():
    assert _changed("""\
        def f(flag):
            y = x.exp()
            if flag:
                y.add_(1)
            reveal(y)
            z = x.exp()
            if flag:
                z.add_(1)
            else:
                z.mul_(2)
            reveal(z)
            x.grad
    """) == [[], [("x.exp()", "z", "result", "z.add_(1)")]]


def test_loops_try_and_match_join_with_the_paths_that_skip_them():
    assert _changed("""\
        def f(items, flag):
            y = x.exp()
            for _ in items:
                y.add_(1)
            reveal(y)
            z = x.exp()
            try:
                z.add_(1)
            except ValueError:
                pass
            reveal(z)
            v = x.exp()
            try:
                v.add_(1)
            finally:
                pass
            reveal(v)
            u = x.exp()
            match flag:
                case 1:
                    u.add_(1)
            reveal(u)
            t = x.exp()
            for _ in items:
                t.add_(1)
                reveal(t)
            x.grad
    """) == [[], [], [("x.exp()", "v", "result", "v.add_(1)")], [],
             [("x.exp()", "t", "result", "t.add_(1)")]]


def test_a_name_bound_differently_on_two_paths_keeps_both_values_and_no_saves():
    seen = _reveal("""\
        def f(m, flag):
            loss = m(x).sum()
            if flag:
                loss = m(x).mean()
            loss.add_(1)
            reveal(loss)
            other = m(x).sum()
            if flag:
                other += 1
            reveal(other)
            x.grad
    """)
    assert seen[0][2] == ["m(x).mean()", "m(x).sum()"]  # the paths in order: the if body first
    assert seen[1][2] == []


def test_a_backward_pass_frees_its_binding_on_every_path():
    seen = _reveal("""\
        def f(m, flag):
            a = m(x).sum()
            a.backward()
            reveal(a)
            b = m(x).sum()
            b.backward(retain_graph=True)
            reveal(b)
            c = m(x).sum()
            if flag:
                c.backward()
            reveal(c)
            d = m(x).sum()
            if flag:
                d.backward()
            else:
                d.backward()
            reveal(d)
            e = m(x).sum()
            with torch.autocast("cpu"):
                e.backward()
            reveal(e)
    """)
    assert [freed for _changed, freed, _values in seen] == ["a.backward()", None, None, "d.backward()",
                                                           "e.backward()"]


def test_the_silent_loop_pass_records_nothing_twice():
    probe_state: list[BackwardSaves] = []

    class Probe(_Probe):
        def visit_Call(self, node, ctx) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "reveal":
                probe_state.append(ctx._scopes.top.saves)

    code = HEAD + "for _ in range(2):\n    y = x.exp()\n    y.add_(1)\nreveal(y)\nx.grad\n"
    analyze(cst.parse_module(code), [Probe()])
    (state,) = probe_state
    assert [r.op for records in state.shared.saved.values() for r in records] == ["x.exp()"]


def test_files_without_a_backward_pass_keep_no_records():
    assert _changed("y = x.exp()\ny.add_(1)\nreveal(y)\n") == [[]]


def test_plain_functions_keep_records_for_what_they_return():
    # a plain function's result may be differentiated by its caller: its saves are kept
    assert _changed("""\
        def f():
            y = x.exp()
            y.add_(1)
            reveal(y)
        x.grad
    """) == [[("x.exp()", "y", "result", "y.add_(1)")]]


def test_join_of_one_state_is_itself_and_roles_follow_the_tables():
    state = BackwardSaves()
    assert join_saves([state]) is state
    assert saved_roles("exp", True, None) == frozenset({"result"})
    assert saved_roles("exp", None, None) is None
    assert saved_roles("mul", False, False) == frozenset()
    assert names_read(cst.parse_expression("a.b * c[d] + f(e=g)")) >= {"a.b", "c", "d", "f"}


def test_a_record_changed_on_every_path_that_made_it_stays_changed():
    assert _changed("""\
        def f(items, flag):
            h = x * 1
            for _ in items:
                h = x.tanh()
                h += 1
            reveal(h)
            if flag:
                y = x.exp()
                y.add_(1)
            else:
                y = x * 2
            reveal(y)
            z = x * 1
            try:
                z = x.exp()
                int("a")
                z.add_(1)
            except ValueError:
                pass
            reveal(z)
            x.grad
    """) == [[("x.tanh()", "h", "result", "h += 1")], [("x.exp()", "y", "result", "y.add_(1)")], []]


def test_a_list_holds_the_records_of_its_elements():
    assert _changed("""\
        def f(items):
            hs = [x.sigmoid(), x * 2]
            hs[0] += 1
            reveal(hs)
            gs = []
            g = x.relu()
            gs.append(g)
            gs[0] = gs[0] * 2
            reveal(gs)
            gs[0][0] = 0.0
            reveal(gs)
            ks = []
            for _ in items:
                ks.append(x.exp())
            ks[-1].mul_(0)
            ks[-1][0] = 0.0
            reveal(ks)
            x.grad
    """) == [[("x.sigmoid()", "hs", "result", "hs[0] += 1")], [],
             [("x.relu()", "g", "result", "gs[0][0] = 0.0")], [("x.exp()", "ks", "result", "ks[-1].mul_(0)")]]


def test_a_loop_variable_is_a_new_binding_holding_what_the_list_elements_saved():
    assert _changed("""\
        def f(lst):
            h = x.exp()
            for h in lst:
                h += 1
                reveal(h)
            hs = [x.sigmoid() for _ in lst]
            for g in hs:
                g += 1
                reveal(hs)
            x.grad
    """) == [[], [("x.sigmoid()", "hs", "result", "g += 1")]]


def test_forward_and_the_methods_it_calls_are_differentiated():
    from shapecheck.semantic.backward_saves import differentiated

    cls = cst.parse_module(textwrap.dedent("""\
        class Net:
            def forward(self, x):
                return self.gate(x)
            def gate(self, x):
                return x
            def predict(self, x):
                return x
        class Guarded:
            def forward(self, x):
                with torch.no_grad():
                    return self.gate(x)
            def gate(self, x):
                return x
    """)).body
    methods = {(c.name.value, m.name.value): (m, c) for c in cls for m in c.body.body}  # type: ignore[attr-defined]
    assert [differentiated(*methods[k]) for k in [("Net", "forward"), ("Net", "gate"), ("Net", "predict"),
                                                 ("Guarded", "gate")]] == [True, True, False, False]


def test_forward_of_a_module_records_saves_without_a_backward_call():
    code = """\
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
            def forward(self, x):
                y = torch.sigmoid(self.fc(x))
                y[0] = 0.0
                reveal(y)
                return y
    """
    assert _changed(code) == [[("torch.sigmoid(self.fc(x))", "y", "result", "y[0] = 0.0")]]


def test_an_in_place_call_in_an_assigned_value_changes_the_old_binding():
    assert _changed("""\
        import torch.nn.functional as F
        y = torch.sigmoid(x)
        y = F.relu(y, inplace=True)
        reveal(y)
        z = x * 2
        z = F.relu(z, inplace=True)
        reveal(z)
        x.grad
    """) == [[("torch.sigmoid(x)", "y", "result", "F.relu(y, inplace=True)")], []]


def test_below_gives_a_comparisons_operands_last_first_without_its_operators():
    from shapecheck.semantic.saved_tensors import below

    expr = cst.parse_expression("f(a) < g(b) == h.c")
    calls = [cst.Module([]).code_for_node(n) for n in below(expr) if type(n) is cst.Call]
    assert calls == ["g(b)", "f(a)"]
    assert not any(isinstance(n, (cst.ComparisonTarget, cst.LessThan)) for n in below(expr))


def test_a_legacy_retain_variables_keeps_the_graph():
    seen = _reveal("""\
        def f(m):
            b = m(x).sum()
            b.backward(retain_variables=True)
            reveal(b)
    """)
    assert [freed for _changed, freed, _values in seen] == [None]


def test_an_optimizer_step_changes_the_weights_its_modules_saved():
    # D's layer saved its weight (its input requires grad); opt_D covers D, opt_G does not; a call
    # after the step saved the new weight; a module holding the stepped one is left alone
    seen = _changed("""\
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(3, 3)
                self.head = nn.Linear(3, 1)
            def forward(self, v):
                return self.head(self.body(v))
        D = nn.Sequential(nn.Linear(3, 1), nn.Sigmoid())
        net = Net()
        opt_D = torch.optim.Adam(D.parameters())
        opt_G = torch.optim.SGD([{"params": net.parameters()}], lr=0.1)
        opt_part = torch.optim.SGD(net.head.parameters(), lr=0.1)
        before = D(x * 2)
        on_data = D(w)
        whole = net(x * 2)
        opt_G.zero_grad()
        opt_D.step()
        opt_part.step()
        after = D(x * 2)
        reveal(before)
        reveal(on_data)
        reveal(after)
        reveal(whole)
        opt_G.step()
        reveal(whole)
        whole.sum().backward()
    """)
    assert seen == [[("D(x * 2)", "D", "weights", "opt_D.step()")], [], [], [],
                    [("net(x * 2)", "net", "weights", "opt_G.step()")]]
