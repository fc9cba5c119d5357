"""``shapecheck server``: the Language Server Protocol over stdio, on pygls.

Diagnostics are published when a document opens and, debounced by :data:`DEBOUNCE_S`, after it
changes (a newer version cancels the pending lint of an older one; a lint that finishes after a
newer version arrived is not published). Code actions offer each safe fix (the edit ``--fix``
makes) and ``# noqa: CODE`` for each finding; a hover on an expression shows what the linter
knows about the tensor (:mod:`shapecheck.engine.hover_facts`). All analysis runs on one worker
thread, one request at a time (the analysis keeps per-file caches that are not shared safely).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Mapping, Optional

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from shapecheck.engine.config import ConfigError, Settings
from shapecheck.engine.diagnostics import ENGINE_CODES, Diagnostic
from shapecheck.server.document_lint import DocumentLint, lint_document, noqa_edit, settings_for
from shapecheck.version import __version__

__all__ = ["DEBOUNCE_S", "ShapecheckServer", "build_server", "to_lsp_diagnostic"]

#: how long a typing burst must pause before the document is linted
DEBOUNCE_S = 0.2
SOURCE = "shapecheck"


def _severity(severity: str) -> lsp.DiagnosticSeverity:
    if severity == "error":
        return lsp.DiagnosticSeverity.Error
    if severity == "warning":
        return lsp.DiagnosticSeverity.Warning
    return lsp.DiagnosticSeverity.Information


def full_message(diagnostic: Diagnostic) -> str:
    """The message as the CLI's ``full`` format explains it: the headline, then each further
    clause, the condition under which it does not hold, and the fix hint, one a line."""
    from shapecheck.frontends.text_output import message_parts

    if diagnostic.code in ENGINE_CODES:
        return diagnostic.message
    parts = message_parts(diagnostic.message)
    lines = [parts.headline, *parts.details]
    if diagnostic.condition and diagnostic.condition not in diagnostic.message:
        lines.append(f"holds unless {diagnostic.condition}")
    if parts.hint:
        lines.append(f"help: {parts.hint}")
    return "\n".join(lines)


def _client_range(document: TextDocument, line: int, column: int, end_line: int, end_column: int) -> lsp.Range:
    """An LSP range for 1-based lines and 1-based character columns (end exclusive)."""
    server_range = ServerTextRange(
        ServerTextPosition(max(line - 1, 0), max(column - 1, 0)),
        ServerTextPosition(max(end_line - 1, 0), max(end_column - 1, 0)),
    )
    return document.range_to_client_units(server_range)


def _related_information(document: TextDocument, diagnostic: Diagnostic,
                         cells: Mapping[int, TextDocument]) -> Optional[list[lsp.DiagnosticRelatedInformation]]:
    """The places a finding comes from (in a notebook, each in its own cell's document), then
    the calls whose arguments it was made with; ``None`` when there are none."""
    from shapecheck.frontends.text_output import message_parts

    if diagnostic.code in ENGINE_CODES:
        return None
    related = []
    for place in diagnostic.related:
        where = document if place.cell is None or place.cell == diagnostic.cell else cells.get(place.cell)
        if where is not None:
            span = _client_range(where, place.line, place.column, place.end_line, place.end_column)
            related.append(lsp.DiagnosticRelatedInformation(lsp.Location(where.uri, span), place.label))
    related.extend(
        lsp.DiagnosticRelatedInformation(
            lsp.Location(document.uri, _client_range(document, n, 1, n, 1)),
            "the call whose arguments the finding was made with",
        )
        for n in message_parts(diagnostic.message).call_lines
    )
    return related or None


def to_lsp_diagnostic(document: TextDocument, diagnostic: Diagnostic,
                      cells: Optional[Mapping[int, TextDocument]] = None) -> lsp.Diagnostic:
    """The protocol's form of one of the linter's diagnostics in ``document``; in a notebook,
    ``cells`` holds the document of each code cell by number, for places in other cells."""
    from shapecheck.frontends.report import INFO_URI
    from shapecheck.frontends.sarif import help_uri

    related = _related_information(document, diagnostic, cells or {})
    return lsp.Diagnostic(
        range=_client_range(document, diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column),
        message=full_message(diagnostic),
        severity=_severity(diagnostic.severity),
        code=diagnostic.code,
        code_description=lsp.CodeDescription(href=help_uri(INFO_URI, diagnostic.code)),
        source=SOURCE,
        related_information=related,
        data={"line": diagnostic.line, "column": diagnostic.column, "code": diagnostic.code},
    )


class ShapecheckServer(LanguageServer):
    """The language server: the last lint of each open document, and the one analysis thread."""

    def __init__(self) -> None:
        sync = lsp.NotebookDocumentSyncOptions(notebook_selector=[lsp.NotebookDocumentFilterWithCells(
            cells=[lsp.NotebookCellLanguage("python")], notebook="jupyter-notebook",
        )])
        super().__init__("shapecheck", __version__, notebook_document_sync=sync)
        #: uri -> (version, lint) of the last lint published
        self.lints: dict[str, tuple[Optional[int], DocumentLint]] = {}
        #: uri -> the debounced lint waiting to run
        self.pending: dict[str, asyncio.Task] = {}
        #: cell uri -> the uri of each code cell by number, as the notebook's last published lint
        #: numbered them (a finding's related places in other cells point at those documents)
        self.cell_uris: dict[str, dict[int, str]] = {}
        self.analysis = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shapecheck-analysis")

    def settings(self, path: str) -> Optional[Settings]:
        """The settings of ``path``; a configuration error is shown to the user and gives ``None``."""
        try:
            return settings_for(path)
        except ConfigError as exc:
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, f"shapecheck: {exc}"))
            return None

    async def lint(self, uri: str, delay: float = 0.0) -> None:
        """Lint the current text of ``uri`` (after ``delay`` seconds) and publish the diagnostics,
        unless the document changed in the meantime."""
        if delay:
            await asyncio.sleep(delay)
        document = self.workspace.get_text_document(uri)
        version, text, path = document.version, document.source, document.path
        settings = self.settings(path)
        if settings is None:
            return
        previous = self.lints.get(uri)
        parsed = previous[1].parsed if previous is not None else None
        record = previous[1].record if previous is not None else None
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(self.analysis, lint_document, path, text, settings, parsed, record)
        current = self.workspace.get_text_document(uri)
        if current.version != version or current.source != text:
            return  # a newer version is on its way
        self.lints[uri] = (version, result)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=[to_lsp_diagnostic(document, d) for d in result.diagnostics],
        ))

    async def lint_notebook(self, notebook_uri: str, delay: float = 0.0) -> None:
        """Lint the code cells of a notebook document as one program (after ``delay`` seconds)
        and publish each cell's diagnostics on that cell."""
        if delay:
            await asyncio.sleep(delay)
        notebook = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        if notebook is None:
            return
        from shapecheck.server.notebook_lint import lint_notebook_cells

        path = to_fs_path(notebook_uri) or notebook_uri
        settings = self.settings(path)
        if settings is None:
            return
        cells = self.code_cells(notebook)
        versions = notebook.version
        loop = asyncio.get_running_loop()
        by_cell = await loop.run_in_executor(self.analysis, lint_notebook_cells, path, cells, settings)
        current = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        if current is None or current.version != versions:
            return
        documents = {number: self.workspace.get_text_document(uri) for number, uri, _ in cells}
        numbering = {number: uri for number, uri, _ in cells}
        for number, cell_uri, _ in cells:
            document = documents[number]
            lint = by_cell.get(cell_uri, DocumentLint([]))
            self.lints[cell_uri] = (document.version, lint)
            self.cell_uris[cell_uri] = numbering
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                uri=cell_uri, diagnostics=[to_lsp_diagnostic(document, d, documents) for d in lint.diagnostics],
            ))

    def cell_documents(self, uri: str) -> Optional[dict[int, TextDocument]]:
        """The document of each code cell by number when ``uri`` is a notebook cell, numbered as
        the notebook's last published lint numbered them (``None`` for a Python document)."""
        numbering = self.cell_uris.get(uri)
        if numbering is None:
            return None
        return {number: self.workspace.get_text_document(cell) for number, cell in numbering.items()}

    def code_cells(self, notebook: lsp.NotebookDocument) -> list[tuple[int, str, str]]:
        """``(number among all cells, 1-based; uri; source)`` of each code cell of ``notebook``."""
        return [(number, cell.document, self.workspace.get_text_document(cell.document).source)
                for number, cell in enumerate(notebook.cells, start=1) if cell.kind == lsp.NotebookCellKind.Code]

    def schedule_notebook(self, notebook_uri: str, delay: float) -> None:
        """Lint a notebook after ``delay``, cancelling the lint still waiting for an older version."""
        self.schedule(notebook_uri, delay, self.lint_notebook)

    def forget(self, uri: str) -> None:
        """Cancel the lint of ``uri`` still waiting for its debounce, if any."""
        waiting = self.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()

    def schedule(self, uri: str, delay: float, how=None) -> None:
        """Lint ``uri`` after ``delay``, cancelling the lint still waiting for an older version."""
        self.forget(uri)
        self.pending[uri] = asyncio.ensure_future((how or self.lint)(uri, delay))


def _code_actions(server: ShapecheckServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    uri = params.text_document.uri
    found = server.lints.get(uri)
    if found is None:
        return []
    document = server.workspace.get_text_document(uri)
    lint = found[1]
    wanted = params.range
    cells = server.cell_documents(uri)
    actions: list[lsp.CodeAction] = []
    noqa_actions: list[lsp.CodeAction] = []
    for diagnostic in lint.diagnostics:
        shown = to_lsp_diagnostic(document, diagnostic, cells)  # as published, places in other cells too
        if shown.range.end.line < wanted.start.line or shown.range.start.line > wanted.end.line:
            continue
        fix = lint.fixes.get((diagnostic.line, diagnostic.column, diagnostic.code))
        if fix is not None:
            edit = lsp.TextEdit(_client_range(document, fix.line, fix.column, fix.end_line, fix.end_column), fix.text)
            actions.append(lsp.CodeAction(
                title=f"Fix {diagnostic.code} ({diagnostic.name})",
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[shown],
                is_preferred=True,
                edit=lsp.WorkspaceEdit(changes={uri: [edit]}),
            ))
        if diagnostic.code in ENGINE_CODES:
            continue
        suppress = noqa_edit(document.source, diagnostic.line, diagnostic.code)
        if suppress is not None:
            line, new_text = suppress
            old = document.lines[line - 1].rstrip("\r\n")
            edit = lsp.TextEdit(_client_range(document, line, 1, line, len(old) + 1), new_text)
            noqa_actions.append(lsp.CodeAction(
                title=f"Suppress with `# noqa: {diagnostic.code}`",
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[shown],
                edit=lsp.WorkspaceEdit(changes={uri: [edit]}),
            ))
    return actions + noqa_actions


def _hover(server: ShapecheckServer, params: lsp.HoverParams) -> Optional[lsp.Hover]:
    from shapecheck.engine.hover_facts import hover_markdown
    from shapecheck.server.incremental_parse import parse_document

    document = server.workspace.get_text_document(params.text_document.uri)
    notebook = server.workspace.get_notebook_document(cell_uri=document.uri)
    if notebook is not None:
        return _cell_hover(server, notebook, document, params.position)
    text = document.source
    found = server.lints.get(document.uri)
    parsed = found[1].parsed if found is not None else None
    try:
        module = parsed.module if parsed is not None and parsed.text == text else parse_document(text).module
    except Exception:  # the text does not parse: nothing to say
        return None
    position = document.position_codec.position_from_client_units(document.lines, params.position)
    shown = hover_markdown(module, position.line + 1, position.character, text)
    if shown is None:
        return None
    markdown, (line, column, end_line, end_column) = shown
    return lsp.Hover(
        contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown),
        range=_client_range(document, line, column + 1, end_line, end_column + 1),
    )


def _cell_hover(server: ShapecheckServer, notebook: lsp.NotebookDocument, document: TextDocument,
                position: lsp.Position) -> Optional[lsp.Hover]:
    """The hover in a code cell of ``notebook``: the cells analysed as one program, so that the
    facts of earlier cells reach the cursor."""
    from shapecheck.server.notebook_lint import hover_in_notebook

    where = document.position_codec.position_from_client_units(document.lines, position)
    shown = hover_in_notebook(server.code_cells(notebook), document.uri, where.line + 1, where.character)
    if shown is None:
        return None
    markdown, (line, column, end_line, end_column) = shown
    return lsp.Hover(
        contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown),
        range=_client_range(document, line, column + 1, end_line, end_column + 1),
    )


def build_server() -> ShapecheckServer:
    """A server with every feature registered."""
    server = ShapecheckServer()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ShapecheckServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0.0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ShapecheckServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_S)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: ShapecheckServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0.0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ShapecheckServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.forget(uri)
        ls.lints.pop(uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: ShapecheckServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
        ls.schedule_notebook(params.notebook_document.uri, 0.0)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: ShapecheckServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
        ls.schedule_notebook(params.notebook_document.uri, DEBOUNCE_S)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: ShapecheckServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
        ls.forget(params.notebook_document.uri)
        for cell in params.cell_text_documents:
            ls.cell_uris.pop(cell.uri, None)
            if ls.lints.pop(cell.uri, None) is not None:
                ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: ShapecheckServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
        ls.schedule_notebook(params.notebook_document.uri, 0.0)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]),
    )
    async def code_action(ls: ShapecheckServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(ls.analysis, _code_actions, ls, params)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: ShapecheckServer, params: lsp.HoverParams) -> Optional[lsp.Hover]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(ls.analysis, _hover, ls, params)

    return server


def main() -> int:
    """Serve the protocol on stdin/stdout until the client exits."""
    build_server().start_io()
    return 0
