"""``shapecheck server`` driven end to end over stdio, as an editor drives it (pytest-lsp)."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types as lsp  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

VIEW_BUG = textwrap.dedent(
    """\
    import torch

    x = torch.randn(2, 3, 4)
    y = x.transpose(1, 2)
    z = y.view(2, 12)
    """
)

#: The hover on ``y = x.transpose(1, 2)`` with ``x`` a (2, 3, 4) float tensor on the CPU.
TRANSPOSED_HOVER = (
    "**tensor** `y`\n\n"
    "- shape: `(2, 4, 3)`\n"
    "- layout: non-contiguous, made non-contiguous by `.transpose(1, 2)` (strides `(12, 1, 4)`)\n"
    "- device: cpu\n"
    "- grad: does not require grad\n"
    "- dtype: float"
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "shapecheck", "server"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


async def _open(client: LanguageClient, path: Path, text: str) -> list[lsp.Diagnostic]:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "python", 1, text)))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


def _cli(path: Path) -> list[dict]:
    import subprocess

    done = subprocess.run([sys.executable, "-m", "shapecheck", "lint", "--no-cache", "--format", "json", str(path)],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
    return json.loads(done.stdout)


@pytest.mark.asyncio
async def test_diagnostics_on_open_and_after_a_change_match_the_cli(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "model.py"
    path.write_text(VIEW_BUG)
    found = await _open(client, path, VIEW_BUG)
    assert [(d.code, d.range.start.line, d.range.start.character, d.severity) for d in found] == [
        ("SC101", 4, 4, lsp.DiagnosticSeverity.Error)]
    (cli,) = _cli(path)
    assert (cli["code"], cli["line"], cli["column"]) == ("SC101", 5, 5)
    clauses = cli["message"].split("; ")
    assert found[0].message.splitlines() == [*clauses[:-1], f"help: {clauses[-1]}"]
    assert found[0].code_description.href.endswith("#sc101")
    assert found[0].source == "shapecheck"

    fixed = VIEW_BUG.replace("y.view(2, 12)", "y.reshape(2, 12)")
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version=2, uri=path.as_uri()),
        [lsp.TextDocumentContentChangeWholeDocument(fixed)],
    ))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[path.as_uri()]) == []


@pytest.mark.asyncio
async def test_quick_fix_and_noqa_actions(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "fixable.py"
    found = await _open(client, path, VIEW_BUG)
    assert [d.code for d in found] == ["SC101"]
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(path.as_uri()), found[0].range, lsp.CodeActionContext(found),
    ))
    titles = [a.title for a in actions]
    assert titles == ["Fix SC101 (view-on-non-contiguous)", "Suppress with `# noqa: SC101`"]
    fix_edit = actions[0].edit.changes[path.as_uri()][0]
    lines = VIEW_BUG.splitlines()
    start, end = fix_edit.range.start, fix_edit.range.end
    assert start.line == end.line == 4
    new_line = lines[4][:start.character] + fix_edit.new_text + lines[4][end.character:]
    assert new_line == "z = y.reshape(2, 12)"  # what `shapecheck lint --fix` writes
    noqa_edit = actions[1].edit.changes[path.as_uri()][0]
    assert noqa_edit.range == lsp.Range(lsp.Position(4, 0), lsp.Position(4, len(lines[4])))
    assert noqa_edit.new_text == "z = y.view(2, 12)  # noqa: SC101"


@pytest.mark.asyncio
async def test_noqa_action_extends_an_existing_list(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "listed.py"
    text = VIEW_BUG.replace("y.view(2, 12)", "y.view(2, 12)  # noqa: SC999")
    found = await _open(client, path, text)
    assert [d.code for d in found] == ["SC101"]
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(path.as_uri()), found[0].range, lsp.CodeActionContext(found),
    ))
    suppress = [a for a in actions if a.title.startswith("Suppress")]
    assert suppress[0].edit.changes[path.as_uri()][0].new_text == "z = y.view(2, 12)  # noqa: SC999, SC101"


@pytest.mark.asyncio
async def test_hover_on_a_transposed_tensor(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "hover.py"
    await _open(client, path, VIEW_BUG)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(path.as_uri()), lsp.Position(3, 0),
    ))
    assert hover.contents.kind == lsp.MarkupKind.Markdown
    assert hover.contents.value == TRANSPOSED_HOVER
    assert hover.range == lsp.Range(lsp.Position(3, 0), lsp.Position(3, 1))
    nothing = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(path.as_uri()), lsp.Position(0, 2),
    ))
    assert nothing is None


@pytest.mark.asyncio
async def test_project_configuration_is_honoured(client: LanguageClient, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.shapecheck]\nignore = ["SC101"]\n')
    found = await _open(client, tmp_path / "ignored.py", VIEW_BUG)
    assert found == []


@pytest.mark.asyncio
async def test_noqa_comment_is_honoured(client: LanguageClient, tmp_path: Path):
    text = VIEW_BUG.replace("y.view(2, 12)", "y.view(2, 12)  # noqa: SC101")
    assert await _open(client, tmp_path / "quiet.py", text) == []


@pytest.mark.asyncio
async def test_a_syntax_error_is_sc000_not_a_crash(client: LanguageClient, tmp_path: Path):
    found = await _open(client, tmp_path / "broken.py", "import torch\nx = (1,\n")
    assert [d.code for d in found] == ["SC000"]
    assert found[0].message.startswith("cannot parse:")
    # the server still answers afterwards
    assert (await _open(client, tmp_path / "fine.py", "import torch\n")) == []


@pytest.mark.asyncio
async def test_notebook_document_cells_are_one_program(client: LanguageClient, tmp_path: Path):
    uris = await _open_notebook(client, tmp_path, [
        "import torch\nx = torch.randn(2, 3, 4)\n", "y = x.transpose(1, 2)\nz = y.view(2, 12)\n",
    ])
    assert list(client.diagnostics[uris[0]]) == []
    found = list(client.diagnostics[uris[2]])
    assert [(d.code, d.range.start.line, d.range.start.character) for d in found] == [("SC101", 1, 4)]


async def _open_notebook(client: LanguageClient, tmp_path: Path, sources: list[str]) -> list[str]:
    """Open a notebook document of the code cells ``sources`` with a markdown cell after the
    first; the uris of its cells once every code cell's diagnostics are published."""
    notebook = (tmp_path / "nb.ipynb").as_uri()
    sources = [sources[0], "# Notes", *sources[1:]]
    kinds = [lsp.NotebookCellKind.Code, lsp.NotebookCellKind.Markup] + [lsp.NotebookCellKind.Code] * (len(sources) - 2)
    uris = [f"{notebook}#cell{i}" for i in range(len(sources))]
    client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
        notebook_document=lsp.NotebookDocument(
            uri=notebook, notebook_type="jupyter-notebook", version=1,
            cells=[lsp.NotebookCell(kind=k, document=u) for k, u in zip(kinds, uris)],
        ),
        cell_text_documents=[
            lsp.TextDocumentItem(u, "python" if k == lsp.NotebookCellKind.Code else "markdown", 1, src)
            for u, k, src in zip(uris, kinds, sources)
        ],
    ))
    # the cells' diagnostics come as back-to-back notifications: wait until each cell has had its
    # own (counting notifications can miss some that arrive together)
    code = [u for u, k in zip(uris, kinds) if k == lsp.NotebookCellKind.Code]
    for _ in range(1200):
        if all(u in client.diagnostics for u in code):
            break
        await asyncio.sleep(0.05)
    return uris


@pytest.mark.asyncio
async def test_a_notebook_cell_gets_quick_fix_noqa_related_place_and_hover(client: LanguageClient, tmp_path: Path):
    """`y` is transposed in the first cell and viewed in the third: the finding there points at the
    first cell, offers the fix and the noqa edit of its own cell, and a hover there knows `y`."""
    uris = await _open_notebook(client, tmp_path, [
        "import torch\nx = torch.randn(2, 3, 4)\ny = x.transpose(1, 2)\n", "z = y.view(2, 12)\n",
    ])
    assert list(client.diagnostics[uris[0]]) == []
    (found,) = client.diagnostics[uris[2]]
    assert (found.code, found.range) == ("SC101", lsp.Range(lsp.Position(0, 4), lsp.Position(0, 17)))
    assert list(found.related_information) == [lsp.DiagnosticRelatedInformation(
        lsp.Location(uris[0], lsp.Range(lsp.Position(2, 4), lsp.Position(2, 21))),
        "made non-contiguous here by `transpose(1, 2)`",
    )]
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uris[2]), found.range, lsp.CodeActionContext([found]),
    ))
    assert [a.title for a in actions] == ["Fix SC101 (view-on-non-contiguous)", "Suppress with `# noqa: SC101`"]
    (fix,) = actions[0].edit.changes[uris[2]]
    assert (fix.range, fix.new_text) == (lsp.Range(lsp.Position(0, 4), lsp.Position(0, 10)), "y.reshape")
    (noqa,) = actions[1].edit.changes[uris[2]]
    assert (noqa.range, noqa.new_text) == (
        lsp.Range(lsp.Position(0, 0), lsp.Position(0, 17)), "z = y.view(2, 12)  # noqa: SC101")
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uris[2]), lsp.Position(0, 4),
    ))
    assert hover.contents.value == TRANSPOSED_HOVER
    assert hover.range == lsp.Range(lsp.Position(0, 4), lsp.Position(0, 5))
    nothing = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uris[0]), lsp.Position(0, 2),
    ))
    assert nothing is None


@pytest.mark.asyncio
async def test_a_python_document_gets_its_related_place(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "related.py"
    (found,) = await _open(client, path, VIEW_BUG)
    assert list(found.related_information) == [lsp.DiagnosticRelatedInformation(
        lsp.Location(path.as_uri(), lsp.Range(lsp.Position(3, 4), lsp.Position(3, 21))),
        "made non-contiguous here by `transpose(1, 2)`",
    )]


@pytest.mark.asyncio
async def test_a_code_action_in_a_cell_carries_the_related_places_of_other_cells(client: LanguageClient,
                                                                                  tmp_path: Path):
    """`a` is reduced in the first cell and `b` in the third; `a - b` in the fourth does not
    broadcast. The diagnostic a code action carries is the one published: both related places,
    each in its own cell's document."""
    uris = await _open_notebook(client, tmp_path, [
        "import torch\nx = torch.randn(8, 16, 32)\na = x.sum(1)\n", "b = x.mean(2)\n", "y = a - b\n",
    ])
    (found,) = client.diagnostics[uris[3]]
    assert (found.code, found.range.start) == ("SC202", lsp.Position(0, 4))
    reduced = "reduced here without `keepdim=True`"
    assert list(found.related_information) == [
        lsp.DiagnosticRelatedInformation(lsp.Location(uris[0], lsp.Range(lsp.Position(2, 4), lsp.Position(2, 12))),
                                         reduced),
        lsp.DiagnosticRelatedInformation(lsp.Location(uris[2], lsp.Range(lsp.Position(0, 4), lsp.Position(0, 13))),
                                         reduced),
    ]
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uris[3]), found.range, lsp.CodeActionContext([found]),
    ))
    assert [a.title for a in actions] == ["Suppress with `# noqa: SC202`"]
    assert list(actions[0].diagnostics) == [found]
    (noqa,) = actions[0].edit.changes[uris[3]]
    assert noqa.new_text == "y = a - b  # noqa: SC202"
