"""The lint engine: files in, sorted diagnostics (and fixes) out.

For each file: read and decode it as Python does, parse it once with libcst, run every selected
rule in the single traversal of :func:`shapecheck.infer.analyze`, and only when that produced
findings resolve line/column positions and the file's suppression comments. A file that cannot
be read, decoded or parsed yields one ``SC000``; a rule that raises yields one ``SC999``; the run
goes on either way. Many files are linted in a process pool; the result is sorted, so it does
not depend on the number of workers. Unchanged files are answered from the result cache
(:mod:`shapecheck.cache`), and a run answered entirely from it never imports the rules or libcst.
"""

from __future__ import annotations

import difflib
import gc
import hashlib
from dataclasses import dataclass, field
from typing import Optional

from shapecheck import noqa
from shapecheck.config import (
    ENGINE_CODES,
    INTERNAL_ERROR,
    PARSE_ERROR,
    Settings,
    engine_code_ignored,
    ignored_for_path,
    matches_any,
    selected_codes,
)
from shapecheck.sources import Decoded, SourceError, collect_files, decode_source, encode_source

#: Fewer files than this are linted in-process even when ``--jobs`` allows a pool.
POOL_THRESHOLD = 4
#: A file is re-linted after fixing at most this many times.
MAX_FIX_PASSES = 10

MODE_CHECK = "check"
MODE_FIX = "fix"
MODE_DIFF = "diff"


@dataclass(frozen=True)
class Diagnostic:
    """One reported problem, with 1-based positions."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    severity: str
    message: str
    fixable: bool = False

    def sort_key(self) -> tuple:
        """Path, then position, then code: the order of every report."""
        return (self.path, self.line, self.column, self.code, self.message)


@dataclass
class FileResult:
    """What linting one file produced."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixes_applied: int = 0
    #: the fixed source, when fixes changed it (fix and diff modes)
    fixed_text: Optional[str] = None
    original_text: Optional[str] = None
    #: in fix mode, the diagnostics of the unfixed text (reported when the fixes cannot be written)
    original_diagnostics: list[Diagnostic] = field(default_factory=list)
    decoded: Optional[Decoded] = None


@dataclass
class LintRun:
    """The outcome of a whole run."""

    diagnostics: list[Diagnostic]
    files: int
    fixes_applied: int = 0
    diffs: list[str] = field(default_factory=list)
    #: for stdin in fix mode: the fixed text to print
    stdin_output: Optional[str] = None


@dataclass(frozen=True)
class FileJob:
    """One file to lint in a worker: its display path and content, or why it has none."""

    path: str
    data: Optional[bytes]
    error: Optional[tuple[str, int, int]] = None
    #: per-file-ignores selectors: findings they cover are not fixed
    ignore: tuple[str, ...] = ()


def _rule_meta(code: str) -> tuple[str, str]:
    if code in ENGINE_CODES:
        return ENGINE_CODES[code], "error"
    from shapecheck.rules.base import get_rule

    rule = get_rule(code)
    return (rule.name, rule.severity) if rule is not None else (code.lower(), "error")


def _engine_diagnostic(path: str, code: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    name, severity = _rule_meta(code)
    return Diagnostic(path, line, column, line, column, code, name, severity, message)


def _first_line(text: str) -> str:
    return " ".join(str(text).split()) or "(no message)"


def _syntax_error(path: str, text: str, exc: Exception) -> Diagnostic:
    """SC000 for a parse failure, positioned by Python's own parser when it agrees it is one."""
    import ast

    line = getattr(exc, "raw_line", 1) or 1
    column = (getattr(exc, "raw_column", 0) or 0) + 1
    message = getattr(exc, "message", None) or str(exc)
    try:
        ast.parse(text)
    except SyntaxError as py_exc:
        if py_exc.lineno:
            line, column = py_exc.lineno, max(py_exc.offset or 1, 1)
            message = py_exc.msg
    except (ValueError, RecursionError, MemoryError):
        pass
    return _engine_diagnostic(path, PARSE_ERROR, f"cannot parse: {_first_line(message)}", line, column)


class _Linter:
    """Lints texts with a fixed list of rule classes (one instance per rule per file)."""

    def __init__(self, rule_classes: list) -> None:
        self.rule_classes = rule_classes
        self.meta = {r.code: (r.name, r.severity) for r in rule_classes}

    def analyze(self, path: str, text: str):
        """Parse and analyse ``text``: ``(module, findings, diagnostics)``.

        ``diagnostics`` holds every finding not suppressed by a comment, positioned; ``findings``
        holds the matching :class:`Finding` objects (same order) for the fixer. ``module`` is
        ``None`` when the text does not parse.
        """
        import libcst as cst

        from shapecheck import infer

        try:
            module = cst.parse_module(text)
        except Exception as exc:  # ParserSyntaxError, or the native parser's other failures
            return None, [], [_syntax_error(path, text, exc)]
        rules = [cls() for cls in self.rule_classes]
        try:
            ctx = infer.analyze(module, rules, text)
        except RecursionError:
            return module, [], [
                _engine_diagnostic(path, INTERNAL_ERROR, "internal error in the analysis walker: "
                                   "the file nests too deeply (RecursionError)")
            ]
        except Exception as exc:
            return module, [], [
                _engine_diagnostic(path, INTERNAL_ERROR, "internal error in the analysis walker: "
                                   f"{type(exc).__name__}: {_first_line(exc)}")
            ]
        diagnostics = []
        crashed = set()
        for code, exc in ctx.crashes:
            if code in crashed:  # one SC999 per rule, naming its first exception
                continue
            crashed.add(code)
            name = self.meta.get(code, ("?", "error"))[0]
            diagnostics.append(
                _engine_diagnostic(
                    path, INTERNAL_ERROR,
                    f"internal error in rule {code} ({name}): {type(exc).__name__}: {_first_line(exc)}",
                )
            )
        if not ctx.findings:
            return module, [], diagnostics
        kept_findings, kept = self._position(path, text, module, ctx.findings)
        return module, kept_findings, kept + diagnostics

    def _position(self, path, text, module, findings):
        from shapecheck.positions import node_positions

        positions = node_positions(module, [f.node for f in findings])
        table = noqa.suppressions(text)
        kept_findings, kept = [], []
        seen = set()
        for finding in findings:
            line, col, end_line, end_col = positions.get(finding.node, (1, 0, 1, 0))
            if finding.offset is not None:
                delta, offset_col = finding.offset
                if delta == 0:
                    col = col + offset_col
                else:
                    line, col = line + delta, offset_col
                end_line, end_col = line, col + 1
            if noqa.is_suppressed(table, line, finding.code):
                continue
            name, severity = self.meta.get(finding.code) or _rule_meta(finding.code)
            diag = Diagnostic(
                path, line, col + 1, end_line, end_col + 1, finding.code, name, severity,
                _first_line(finding.message), finding.fix is not None,
            )
            if diag in seen:  # the same finding reported twice (e.g. by two hooks)
                continue
            seen.add(diag)
            kept.append(diag)
            kept_findings.append(finding)
        return kept_findings, kept

    def lint(self, job: FileJob, mode: str) -> FileResult:
        """Lint one file; in fix and diff modes, also fix it to a fixed point."""
        # A syntax tree holds no reference cycles, yet building one triggers the cyclic
        # collector thousands of times (about 10% of the run): hold it off for one file.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._lint(job, mode)
        finally:
            if gc_was_enabled:
                gc.enable()

    def _lint(self, job: FileJob, mode: str) -> FileResult:
        from shapecheck.fixes import apply_fixes

        result = FileResult(job.path)
        if job.error is not None:
            message, line, column = job.error
            result.diagnostics = [_engine_diagnostic(job.path, PARSE_ERROR, message, line, column)]
            return result
        try:
            decoded = decode_source(job.data or b"")
        except SourceError as exc:
            result.diagnostics = [_engine_diagnostic(job.path, PARSE_ERROR, exc.message, exc.line, exc.column)]
            return result
        text = decoded.text
        module, findings, diagnostics = self.analyze(job.path, text)
        if mode == MODE_CHECK or module is None:
            result.diagnostics = diagnostics
            return result
        result.decoded = decoded
        result.original_text = text
        result.original_diagnostics = diagnostics
        for _ in range(MAX_FIX_PASSES):
            fixes = [
                f.fix for f, d in zip(findings, diagnostics)
                if f.fix is not None and not matches_any(list(job.ignore), d.code, d.name)
            ]
            if not fixes:
                break
            new_module, applied = apply_fixes(module, fixes)
            new_text = new_module.code
            if applied == 0 or new_text == text:
                break
            new_parse = self.analyze(job.path, new_text)
            if new_parse[0] is None:  # a fix that breaks the syntax is not applied
                break
            text, (module, findings, diagnostics) = new_text, new_parse
            result.fixes_applied += applied
        result.diagnostics = diagnostics
        if text != result.original_text:
            result.fixed_text = text
        return result


# --- process pool plumbing -------------------------------------------------------------------

_WORKER: Optional[_Linter] = None
_WORKER_MODE = MODE_CHECK


def _init_worker(codes: list[str], mode: str) -> None:
    global _WORKER, _WORKER_MODE
    from shapecheck.rules.base import get_rule

    _WORKER = _Linter([get_rule(c) for c in codes])
    _WORKER_MODE = mode


def _work(job: FileJob) -> FileResult:
    assert _WORKER is not None
    return _WORKER.lint(job, _WORKER_MODE)


def _run_jobs(linter: _Linter, jobs: list[FileJob], mode: str, workers: int) -> list[FileResult]:
    if workers <= 1 or len(jobs) <= POOL_THRESHOLD:
        return [linter.lint(job, mode) for job in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    # big files first, so that no worker is left with one long file at the end
    order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i].data or b""))
    results: list[Optional[FileResult]] = [None] * len(jobs)
    try:
        with ProcessPoolExecutor(
            max_workers=min(workers, len(jobs)),
            mp_context=multiprocessing.get_context(method),
            initializer=_init_worker,
            initargs=([r.code for r in linter.rule_classes], mode),
        ) as pool:
            for index, result in zip(order, pool.map(_work, [jobs[i] for i in order], chunksize=1)):
                results[index] = result
    except (OSError, BrokenProcessPool):
        # no process pool here (a sandbox without semaphores, a worker killed): lint in-process
        return [linter.lint(job, mode) for job in jobs]
    return [r for r in results if r is not None]


# --- the run ---------------------------------------------------------------------------------


def _keep(settings: Settings, diag: Diagnostic, per_file: list[str]) -> bool:
    if diag.code in ENGINE_CODES:
        if engine_code_ignored(settings.layers, diag.code):
            return False
        return diag.code not in per_file and ENGINE_CODES[diag.code] not in per_file
    return not matches_any(per_file, diag.code, diag.name)


def _unified_diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True),
            fromfile=f"a/{path}", tofile=f"b/{path}",
        )
    )


def run(
    paths: list[str],
    settings: Settings,
    *,
    jobs: int = 1,
    mode: str = MODE_CHECK,
    use_cache: bool = True,
    stdin: Optional[tuple[str, bytes]] = None,
) -> LintRun:
    """Lint ``paths`` (or ``stdin``, a ``(display path, bytes)`` pair) under ``settings``.

    In ``fix`` mode fixed files are written back atomically; in ``diff`` mode the unified diffs
    are returned instead. The cache is used only in check mode.
    """
    codes = selected_codes(settings)
    work: list[FileJob] = []
    if stdin is not None:
        display, data = stdin
        work.append(FileJob(display, data, ignore=tuple(ignored_for_path(settings, display))))
    else:
        files, missing = collect_files(paths, settings.exclude, settings.root)
        for path in missing:
            work.append(FileJob(path, None, ("cannot read: no such file or directory", 1, 1)))
        for path in files:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError as exc:
                work.append(FileJob(path, None, (f"cannot read: {exc.strerror or exc}", 1, 1)))
                continue
            work.append(FileJob(path, data, ignore=tuple(ignored_for_path(settings, path))))

    cache = None
    if use_cache and mode == MODE_CHECK and stdin is None:
        from shapecheck.cache import Cache

        cache = Cache.open(settings.root, codes)
    results: list[FileResult] = []
    to_lint: list[FileJob] = []
    digests: dict[str, str] = {}
    for job in work:
        if cache is not None and job.data is not None:
            digest = hashlib.sha256(job.data).hexdigest()
            digests[job.path] = digest
            cached = cache.get(job.path, digest)
            if cached is not None:
                results.append(FileResult(job.path, cached))
                continue
        to_lint.append(job)
    fresh: list[FileResult] = []
    if to_lint:  # only now are the rules (and libcst) imported
        from shapecheck.rules.base import get_rule

        linter = _Linter([get_rule(code) for code in codes])
        fresh = _run_jobs(linter, to_lint, mode, jobs)
    if cache is not None:
        for result in fresh:
            if result.path in digests:
                cache.put(result.path, digests[result.path], result.diagnostics)
        cache.save()
    results.extend(fresh)

    outcome = LintRun([], files=len(work))
    for result in sorted(results, key=lambda r: r.path):
        per_file = list(ignored_for_path(settings, result.path))
        if result.fixed_text is None:
            outcome.diagnostics.extend(d for d in result.diagnostics if _keep(settings, d, per_file))
            continue
        outcome.fixes_applied += result.fixes_applied
        if mode == MODE_DIFF:
            outcome.diffs.append(_unified_diff(result.path, result.original_text or "", result.fixed_text))
        elif stdin is not None:
            outcome.stdin_output = result.fixed_text
        elif mode == MODE_FIX and result.decoded is not None:
            from shapecheck.sources import atomic_write

            try:
                atomic_write(result.path, encode_source(result.fixed_text, result.decoded))
            except (OSError, UnicodeEncodeError) as exc:
                outcome.fixes_applied -= result.fixes_applied
                reason = getattr(exc, "strerror", None) or str(exc)
                result.diagnostics = result.original_diagnostics + [
                    _engine_diagnostic(result.path, PARSE_ERROR, f"cannot write the fixes: {_first_line(reason)}")
                ]
        outcome.diagnostics.extend(d for d in result.diagnostics if _keep(settings, d, per_file))
    if mode == MODE_FIX and stdin is not None and outcome.stdin_output is None:
        decoded = next((r.original_text for r in results if r.original_text is not None), None)
        outcome.stdin_output = decoded if decoded is not None else stdin[1].decode("utf-8", "replace")
    outcome.diagnostics.sort(key=Diagnostic.sort_key)
    return outcome


def lint_text(text: str, rule_classes: list, path: str = "<string>") -> list[Diagnostic]:
    """Diagnostics for one source string under the given rule classes (noqa applied)."""
    result = _Linter(rule_classes).lint(FileJob(path, text.encode("utf-8")), MODE_CHECK)
    return sorted(result.diagnostics, key=Diagnostic.sort_key)


def fix_text(text: str, rule_classes: list, path: str = "<string>") -> tuple[str, int]:
    """``text`` after every fix of the given rules (to a fixed point), and how many were applied."""
    result = _Linter(rule_classes).lint(FileJob(path, text.encode("utf-8")), MODE_FIX)
    return (result.fixed_text if result.fixed_text is not None else text), result.fixes_applied


__all__ = [
    "Diagnostic",
    "FileResult",
    "LintRun",
    "MODE_CHECK",
    "MODE_DIFF",
    "MODE_FIX",
    "fix_text",
    "lint_text",
    "run",
]
