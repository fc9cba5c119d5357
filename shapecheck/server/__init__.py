"""The language server front end (``shapecheck server``): needs the ``server`` extra (pygls).

:mod:`~shapecheck.server.protocol` speaks the protocol; :mod:`~shapecheck.server.document_lint`
lints one open document; :mod:`~shapecheck.server.incremental_parse` re-parses only what an edit
changed.
"""

from __future__ import annotations

#: what to install when pygls is missing
INSTALL_HINT = "pip install 'torch-shapecheck[server]'"


def missing_dependency() -> str | None:
    """Why the server cannot start here (pygls or lsprotocol not installed), or ``None``."""
    try:
        import lsprotocol.types  # noqa: F401
        import pygls.lsp.server  # noqa: F401
    except ImportError as exc:
        return f"the language server needs the `server` extra ({exc.name or exc} is not installed): {INSTALL_HINT}"
    return None
