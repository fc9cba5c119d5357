"""The ``shapecheck`` command: ``lint``, ``rule``, ``einsum`` and ``broadcast``.

Exit status of ``lint``: 0 nothing found, 1 diagnostics (or, with ``--diff``, changes to show),
2 a usage or configuration error, or a file that could not be read or parsed (``SC000``), or an
internal error in a rule (``SC999``). ``--exit-zero`` turns 1 into 0 and leaves 2 alone.

Whatever goes wrong, the command prints one line on stderr and exits 2, never a traceback with
the status 1 that CI reads as "findings": an exception nobody expected is reported as an internal
error naming its type; ``SHAPECHECK_DEBUG=1`` adds the traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, TextIO

from shapecheck.engine.display import escape, escape_path
from shapecheck.frontends import lint_gating
from shapecheck.version import __version__

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_ERROR = 2

#: Set (to anything but ``""`` or ``0``) to print the traceback of an internal error.
DEBUG_ENV = "SHAPECHECK_DEBUG"


class UsageError(Exception):
    """A bad command line: printed as one line, exit status 2."""


class OutputError(Exception):
    """The report could not be written (stdout closed, disk full): exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one clear line and exit status 2."""

    def error(self, message: str):
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _write(text: str, stream: Optional[TextIO]) -> None:
    if stream is None:  # the interpreter was started with this stream closed
        raise OutputError("the output stream is closed")
    try:
        try:
            stream.write(text)
        except UnicodeEncodeError:
            encoding = getattr(stream, "encoding", None) or "ascii"
            stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc.strerror or str(exc)) from None


def _default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _codes(values: Optional[list[str]]) -> Optional[list[str]]:
    """Flatten repeated, comma-separated selector options; ``None`` when never given."""
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``shapecheck`` command."""
    parser = _Parser(
        prog="shapecheck",
        description="Find PyTorch tensor bugs before the code runs.",
    )
    parser.add_argument("--version", action="version", version=f"shapecheck {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    lint = commands.add_parser("lint", help="lint Python files", description="Lint Python files for tensor bugs.")
    lint.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to lint (default: .); - reads stdin")
    lint.add_argument("--select", action="append", metavar="CODES",
                      help="only these rules: codes, code prefixes (SC1) or names, comma-separated")
    lint.add_argument("--extend-select", action="append", metavar="CODES", help="add these rules to the selection")
    lint.add_argument("--ignore", action="append", metavar="CODES", help="leave these rules out")
    lint.add_argument("--exclude", action="append", metavar="GLOB", default=[],
                      help="also skip files and folders matching GLOB")
    lint.add_argument("--format", "--output-format", dest="format", default="full", metavar="FORMAT",
                      choices=["full", "concise", "json", "sarif", "github", "text"],
                      help="full (default: source line and explanation), concise (one line a problem), "
                           "json, sarif, github; text is the old name of full")
    lint.add_argument("--output-file", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    lint.add_argument("--quiet", "-q", action="store_true", help="print the problems only, no summary line")
    lint.add_argument("--fix", action="store_true", help="apply the safe fixes, writing files atomically")
    lint.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    lint.add_argument("--unsafe-fixes", action="store_true",
                      help="with --fix or --diff, apply the unsafe fixes (marked [-]) too: review them")
    lint.add_argument("--exit-zero", action="store_true", help="exit 0 even when problems are found")
    lint.add_argument("--statistics", action="store_true", help="print how many problems each rule found")
    lint.add_argument("--jobs", "-j", type=_positive_int, default=None, metavar="N",
                      help="worker processes (default: the number of CPUs)")
    lint.add_argument("--config", metavar="FILE", help="read settings from FILE instead of the nearest pyproject.toml")
    lint.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    lint.add_argument("--max-file-size", type=_positive_int, default=None, metavar="BYTES",
                      help="skip (and report) files larger than this (default: 2 MiB)")
    lint.add_argument("--stdin-filename", metavar="PATH", help="the path to report (and configure) for stdin")
    lint.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false", default=None,
                      help="also lint files that .gitignore, .ignore or .git/info/exclude ignore")
    lint_gating.add_arguments(lint)

    rule = commands.add_parser("rule", help="show a rule's documentation",
                               description="Print the documentation of a rule, or list every rule.")
    rule.add_argument("rule", nargs="?", metavar="CODE|NAME", help="a rule code (SC101) or name")
    rule.add_argument("--all", action="store_true", help="list every rule: code, name, severity, fixable")

    einsum = commands.add_parser("einsum", help="check an einsum spec against shapes",
                                 description="Parse an einsum spec and compute its output shape.")
    einsum.add_argument("spec", help='the spec, e.g. "bij,bjk->bik"')
    einsum.add_argument("shapes", nargs="*", metavar="SHAPE", help='operand shapes, e.g. "2,3,4"')

    broadcast = commands.add_parser("broadcast", help="broadcast shapes together",
                                    description="Broadcast shapes and explain a failing axis.")
    broadcast.add_argument("shapes", nargs="+", metavar="SHAPE", help='shapes, e.g. "8,1,6" "7,1"')
    commands.add_parser("server", help="run the language server on stdin/stdout",
                        description="Speak the Language Server Protocol on stdin/stdout (needs the `server` extra).")
    return parser


def _lint(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from shapecheck.engine import runner as engine
    from shapecheck.engine.config import ConfigError, Selectors, build_settings
    from shapecheck.frontends.lint_output import report_text, write_file

    _check_lint_options(args)
    paths = args.paths or ["."]
    stdin_mode = "-" in paths
    if stdin_mode and len(paths) > 1:
        raise UsageError("`-` (stdin) cannot be combined with other paths")
    if args.stdin_filename and not stdin_mode:
        if args.paths:
            raise UsageError("--stdin-filename needs `-` as the only path")
        stdin_mode = True
    first = args.stdin_filename or (os.getcwd() if stdin_mode else paths[0])
    cli_layer = Selectors(
        select=_codes(args.select),
        extend_select=_codes(args.extend_select) or [],
        ignore=_codes(args.ignore) or [],
    )
    try:
        settings = build_settings(
            first, args.config, cli_layer, args.exclude,
            use_cache=not args.no_cache and not args.fix and not args.diff and not stdin_mode,
            linted_paths=None if stdin_mode else paths,
        )
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if args.max_file_size is not None:
        settings.max_file_size = args.max_file_size
    if args.respect_gitignore is not None:
        settings.respect_gitignore = args.respect_gitignore
    mode = engine.MODE_DIFF if args.diff else engine.MODE_FIX if args.fix else engine.MODE_CHECK
    stdin = None
    if stdin_mode:
        display = args.stdin_filename or "-"
        stdin = (display.replace(os.sep, "/"), _read_stdin())
    cpus = _default_jobs()
    result = engine.run(
        paths,
        settings,
        jobs=min(args.jobs or cpus, cpus),
        mode=mode,
        use_cache=not args.no_cache,
        stdin=stdin,
        unsafe_fixes=args.unsafe_fixes,
        auto_jobs=args.jobs is None,
    )
    diagnostics = result.diagnostics
    from shapecheck.engine.diagnostics import ENGINE_CODES

    broken = any(d.code in ENGINE_CODES for d in diagnostics)
    if args.add_noqa:
        written = lint_gating.add_noqa_comments(diagnostics, lambda text: _write(text, err))
        return EXIT_ERROR if broken or not written else EXIT_OK
    if mode == engine.MODE_DIFF:
        _write("".join(result.diffs), out)
        fixable = result.fixes_applied
        _write(f"Would fix {fixable} problem{'' if fixable == 1 else 's'}.\n", err)
        if broken:
            return EXIT_ERROR
        return EXIT_FOUND if result.diffs and not args.exit_zero else EXIT_OK
    report_stream = out
    if stdin is not None and mode == engine.MODE_FIX:
        _write(result.stdin_output or "", out)
        report_stream = err
    to_file = args.output_file is not None
    if stdin is not None and mode == engine.MODE_FIX:  # the lines the remaining problems are on
        stdin = (stdin[0], (result.stdin_output or "").encode("utf-8", "surrogateescape"))
    report = report_text(args, diagnostics, result.fixes_applied, mode == engine.MODE_FIX,
                         None if to_file else report_stream, stdin)
    if to_file:
        try:
            write_file(args.output_file, report)
        except OSError as exc:
            raise OutputError(f"{args.output_file}: {exc.strerror or exc}") from None
    else:
        _write(report, report_stream)
    for path, why in result.skipped:
        _write(f"warning: skipped {escape_path(path)}: {why}\n", err)
    for path, line, directive, why in result.noqa_problems:
        _write(f"warning: {escape_path(path)}:{line}: `{escape(directive)}`: {why}; "
               f"it silences only the valid codes it names\n", err)
    if result.files == 0 and stdin is None:
        _write("warning: no Python files found\n", err)
    if broken:
        return EXIT_ERROR
    if lint_gating.fails(diagnostics, args.severity) and not args.exit_zero:
        return EXIT_FOUND
    return EXIT_OK


def _check_lint_options(args: argparse.Namespace) -> None:
    """Refuse combinations of ``lint`` options that would silently do less than asked."""
    if args.fix and args.diff:
        raise UsageError("--fix and --diff cannot be combined: --diff shows the fixes without writing them")
    if lint_gating.check_options(args):
        raise UsageError(lint_gating.check_options(args))
    if args.unsafe_fixes and not (args.fix or args.diff):
        raise UsageError("--unsafe-fixes needs --fix or --diff: it says which fixes those apply")
    if args.statistics and args.diff:
        raise UsageError("--statistics and --diff cannot be combined: --diff prints the fixes, not a report")
    if args.statistics and args.format in ("sarif", "github"):
        raise UsageError(f"--statistics prints counts as text or json; it cannot be combined with "
                         f"--output-format {args.format}")
    if args.output_file == "":
        raise UsageError("--output-file needs a file name")
    if args.config == "":
        raise UsageError("--config needs a file name")
    if "" in args.paths:
        raise UsageError("a PATH argument is empty")
    if args.select is not None and (
        any(not value.strip() for value in args.select) or not _codes(args.select)
    ):
        raise UsageError("--select needs rule codes or names: an empty selection would run no rule")
    try:
        os.getcwd()
    except OSError as exc:
        raise UsageError(f"cannot use the current folder: {exc.strerror or exc}") from None


def _read_stdin() -> bytes:
    stream = sys.stdin
    if stream is None:
        raise UsageError("cannot read stdin: it is closed")
    try:
        return stream.buffer.read()
    except OSError as exc:
        raise UsageError(f"cannot read stdin: {exc.strerror or exc}") from None


def _rule(args: argparse.Namespace, out: TextIO) -> int:
    from shapecheck.frontends.docs import rule_listing, rule_page
    from shapecheck.frontends.engine_codes import documented_codes, engine_code
    from shapecheck.rules.catalog import get_rule

    if args.all:
        if args.rule:
            raise UsageError("give a rule or --all, not both")
        _write(rule_listing(documented_codes()), out)
        return EXIT_OK
    if not args.rule:
        raise UsageError("name a rule (code or name), or use --all")
    rule = get_rule(args.rule) or engine_code(args.rule)
    if rule is None:
        raise UsageError(f"unknown rule `{args.rule}` (see `shapecheck rule --all`)")
    _write(rule_page(rule), out)
    return EXIT_OK


def _server() -> int:
    from shapecheck.server import missing_dependency

    problem = missing_dependency()
    if problem is not None:
        raise UsageError(problem)
    from shapecheck.server.protocol import main as serve

    return serve()


def _algebra(name: str):
    try:
        from shapecheck.frontends import algebra_cli
    except ImportError as exc:
        raise UsageError(f"the `{name}` command is not available in this installation ({exc})") from None
    return algebra_cli


def main(argv: Optional[list[str]] = None) -> int:
    """Run the command line; returns the exit status."""
    out, err = sys.stdout, sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "lint":
            return _lint(args, out, err)
        if args.command == "rule":
            return _rule(args, out)
        if args.command == "einsum":
            return int(_algebra("einsum").einsum_command(args.spec, list(args.shapes), out))
        if args.command == "broadcast":
            return int(_algebra("broadcast").broadcast_command(list(args.shapes), out))
        if args.command == "server":
            return _server()
        raise UsageError("missing command: one of lint, rule, einsum, broadcast (see `shapecheck --help`)")
    except UsageError as exc:
        return _fail(f"shapecheck: error: {exc}", err)
    except KeyboardInterrupt:
        _fail("shapecheck: interrupted", err)
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_ERROR
    except OutputError as exc:
        try:
            sys.stdout = open(os.devnull, "w")  # nothing left to flush at exit
        except OSError:
            pass
        return _fail(f"shapecheck: error: cannot write the output: {exc}", err)
    except MemoryError:
        return _fail("shapecheck: error: out of memory", err)
    except Exception as exc:  # a bug: one line and exit 2, never a traceback with status 1
        if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
            import traceback

            _fail("".join(traceback.format_exc()).rstrip("\n"), err, one_line=False)
        reason = " ".join(str(exc).split())
        if len(reason) > 200:
            reason = reason[:200] + "..."
        detail = f"{type(exc).__name__}: {reason}" if reason else type(exc).__name__
        return _fail(
            f"shapecheck: internal error: {detail} -- please report this bug with the command "
            f"that caused it ({DEBUG_ENV}=1 shows the traceback)",
            err,
        )


def _fail(line: str, err: Optional[TextIO], one_line: bool = True) -> int:
    """Print ``line`` on stderr (escaped to stay one line) when stderr is open; returns 2."""
    try:
        _write((escape(line) if one_line else line) + "\n", err)
    except (OutputError, OSError):
        pass
    return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
