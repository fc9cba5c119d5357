"""The lint engine: files in, sorted diagnostics (and fixes) out.

For each file: read and decode it as Python does, parse it once with libcst, run every selected
rule in the single traversal of :func:`shapecheck.engine.checker.analyze`, and only when that produced
findings resolve line/column positions and the file's suppression comments. A file that cannot
be read, decoded or parsed yields one ``SC000``; a rule that raises yields one ``SC999``; the run
goes on either way. Many files are linted in a process pool; the result is sorted, so it does
not depend on the number of workers. Unchanged files are answered from the result cache
(:mod:`shapecheck.engine.cache`), and a run answered entirely from it never imports the rules or libcst.
"""

from __future__ import annotations

import difflib
import gc
import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Optional

from shapecheck.engine import noqa
from shapecheck.engine.collector import RunCollector
from shapecheck.engine.config import (
    Settings,
    engine_code_ignored,
    ignored_for_path,
    matches_any,
    selected_codes,
)
from shapecheck.engine.diagnostics import ENGINE_CODES, INTERNAL_ERROR, PARSE_ERROR, Diagnostic
from shapecheck.engine.file_results import FileResult
from shapecheck.engine.notebook_core import is_notebook
from shapecheck.engine.sources import SourceError, decode_source, discover, display_path, encode_source

#: Fewer files than this are linted in-process even when ``--jobs`` allows a pool.
POOL_THRESHOLD = 4
#: With the default ``--jobs``, fewer bytes to lint than this are linted in-process. Starting a
#: pool of forked workers costs about 0.1 s here and linting runs at 50-150 KB/s a core, so below
#: about 1 s of work the pool cannot win by enough to be worth its start and the risk of
#: contending with other processes (measured on 2 cores; see :func:`auto_workers`).
POOL_MIN_BYTES = 256 * 1024
#: A file is re-linted after fixing at most this many times.
MAX_FIX_PASSES = 10

MODE_CHECK = "check"
MODE_FIX = "fix"
MODE_DIFF = "diff"


@dataclass
class LintRun:
    """The outcome of a whole run."""

    diagnostics: list[Diagnostic]
    files: int
    fixes_applied: int = 0
    diffs: list[str] = field(default_factory=list)
    #: for stdin in fix mode: the fixed text to print
    stdin_output: Optional[str] = None
    #: files named on the command line that were not linted, each with why
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: (path, line, directive, what is wrong) for each malformed suppression comment
    noqa_problems: list[tuple[str, int, str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class FileJob:
    """One file to lint in a worker: its display path and content, or why it has none."""

    path: str
    data: Optional[bytes]
    error: Optional[tuple[str, int, int]] = None
    #: per-file-ignores selectors: findings they cover are not fixed
    ignore: tuple[str, ...] = ()
    #: the functions it imports from other files of the run (:mod:`shapecheck.engine.run_imports`)
    links: tuple = ()
    #: (module name, bytes) of each file those come from
    foreign: tuple[tuple[str, bytes], ...] = ()
    #: other files of the run import functions from it: its parse is kept for them
    shared: bool = False


def _rule_meta(code: str) -> tuple[str, str]:
    if code in ENGINE_CODES:
        return ENGINE_CODES[code], "error"
    from shapecheck.rules.catalog import get_rule

    rule = get_rule(code)
    return (rule.name, rule.severity) if rule is not None else (code.lower(), "error")


def _engine_diagnostic(path: str, code: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    name, severity = _rule_meta(code)
    return Diagnostic(path, line, column, line, column, code, name, severity, message)


def _first_line(text: object) -> str:
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

    def __init__(self, rule_classes: list, unsafe_fixes: bool = False) -> None:
        self.rule_classes = rule_classes
        #: apply unsafe fixes too (``--unsafe-fixes``)
        self.unsafe_fixes = unsafe_fixes
        self.meta = {r.code: (r.name, r.severity) for r in rule_classes}
        #: the opt-in rule of suppressions that silence nothing is selected
        self.reports_unused = noqa.UNUSED_NOQA in self.meta
        #: what runs the analysis of a module (the arguments and result of
        #: :func:`shapecheck.engine.checker.analyze`); ``None``: that function
        self.analyse: Optional[Callable[..., Any]] = None

    def parse(self, path: str, text: str,
              parse: Optional[Callable[[str], Any]] = None) -> tuple[Optional[Any], list[Diagnostic]]:
        """The libcst module of ``text`` and no diagnostic, or ``None`` and the ``SC000`` that
        says why it does not parse (too deeply nested for the parser, or a syntax error)."""
        from shapecheck.engine.guards import nesting_problem
        from shapecheck.engine.parsing import parse_source

        too_deep = nesting_problem(text)  # libcst's parser would crash or run for minutes
        if too_deep is not None:
            message, line, column = too_deep
            return None, [_engine_diagnostic(path, PARSE_ERROR, message, line, column)]
        try:
            return (parse or parse_source)(text), []
        except Exception as exc:  # ParserSyntaxError, or the native parser's other failures
            return None, [_syntax_error(path, text, exc)]

    def analyze(self, path: str, text: str, imported: Optional[dict] = None,
                parse: Optional[Callable[[str], Any]] = None):
        """Parse and analyse ``text``: ``(module, findings, diagnostics)``; ``imported``: the
        functions it imports from other files of the run (see :func:`_imported`); ``parse``:
        what makes the libcst module of ``text`` (default: a full parse).

        ``diagnostics`` holds every finding not suppressed by a comment, positioned; ``findings``
        holds the matching :class:`Finding` objects (same order) for the fixer. ``module`` is
        ``None`` when the text does not parse.
        """

        from shapecheck.engine import checker

        module, refused = self.parse(path, text, parse)
        if module is None:
            return None, [], refused
        rules = [cls() for cls in self.rule_classes]
        try:
            ctx = (self.analyse or checker.analyze)(module, rules, text, imported)
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
        for code, error in ctx.crashes:
            if code in crashed:  # one SC999 per rule, naming its first exception
                continue
            crashed.add(code)
            name = self.meta.get(code, ("?", "error"))[0]
            diagnostics.append(
                _engine_diagnostic(
                    path, INTERNAL_ERROR,
                    f"internal error in rule {code} ({name}): {type(error).__name__}: {_first_line(error)}",
                )
            )
        findings = ctx.findings
        ctx.release()
        if not findings and not self.reports_unused:
            return module, [], diagnostics
        kept_findings, kept = self._position(path, text, module, findings)
        return module, kept_findings, kept + diagnostics

    def _position(self, path, text, module, findings):
        from shapecheck.engine.positions import node_positions, related_places

        nodes = [f.node for f in findings] + [node for f in findings for node, _ in f.related]
        positions = node_positions(module, nodes) if findings else {}
        directives = noqa.directives(text)
        table = noqa.table_of(directives)
        used: dict[int, set[str]] = {}
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
            silencing = noqa.matching_entries(table, line, finding.code)
            if silencing:
                used.setdefault(line, set()).update(silencing)
                continue
            name, severity = self.meta.get(finding.code) or _rule_meta(finding.code)
            diag = Diagnostic(
                path, line, col + 1, end_line, end_col + 1, finding.code, name, severity,
                _first_line(finding.message), finding.fix is not None and finding.fix.safe,
                finding.fix is not None and not finding.fix.safe, finding.condition,
                related_places(finding.related, positions, line),
            )
            if diag in seen:  # the same finding reported twice (e.g. by two hooks)
                continue
            seen.add(diag)
            kept.append(diag)
            kept_findings.append(finding)
        if self.reports_unused:  # after every finding's diagnostic: the fixer pairs them by index
            from shapecheck.rules.catalog import all_rules

            known = [rule.code for rule in all_rules()]
            for directive, message in noqa.unused(directives, used, self.meta, known):
                column = directive.column + 1
                kept.append(_engine_diagnostic(path, noqa.UNUSED_NOQA, message, directive.line, column))
        return kept_findings, kept

    def lint(self, job: FileJob, mode: str) -> FileResult:
        """Lint one file; in fix and diff modes, also fix it to a fixed point.

        The work runs on a thread with a stack of its own (:func:`guards.call_with_fixed_stack`),
        so that the answer for a deeply nested file is the same in a worker process, in this
        process, and from a caller that is already deep in its own stack.
        """
        from shapecheck.engine.guards import call_with_fixed_stack

        # A syntax tree holds no reference cycles, yet building one triggers the cyclic
        # collector thousands of times (about 10% of the run): hold it off for one file.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            return call_with_fixed_stack(self._lint, job, mode)
        finally:
            if gc_was_enabled:
                gc.enable()

    def _lint(self, job: FileJob, mode: str) -> FileResult:
        result = FileResult(job.path)
        if job.error is not None:
            message, line, column = job.error
            result.diagnostics = [_engine_diagnostic(job.path, PARSE_ERROR, message, line, column)]
            return result
        if is_notebook(job.path):
            from shapecheck.engine.notebook_core import lint_data

            return lint_data(self, job.path, job.data or b"", mode != MODE_CHECK, job.ignore)
        try:
            decoded = decode_source(job.data or b"")
        except SourceError as exc:
            result.diagnostics = [_engine_diagnostic(job.path, PARSE_ERROR, exc.message, exc.line, exc.column)]
            return result
        text = decoded.text
        imported = _imported(job)
        module, findings, diagnostics = self.analyze(job.path, text, imported)
        if job.shared and module is not None:
            from shapecheck.semantic.summaries import remember_parse

            remember_parse(text, module)
        if mode == MODE_CHECK or module is None:
            result.diagnostics = diagnostics
            return result
        result.decoded = decoded
        result.original_text = text
        result.original_diagnostics = diagnostics
        text, _, _, diagnostics, result.fixes_applied = self.fix_to_fixed_point(
            job.path, text, module, findings, diagnostics, job.ignore, imported
        )
        result.diagnostics = diagnostics
        if text != result.original_text:
            result.fixed_text = text
        return result

    def fix_to_fixed_point(self, path: str, text: str, module, findings, diagnostics, ignore, imported):
        """Apply the fixes of ``findings`` (paired with ``diagnostics``; none that ``ignore``,
        the per-file-ignores, covers) and re-analyse, until nothing changes: ``(text, module,
        findings, diagnostics, fixes applied)``. A fix that breaks the syntax is not applied."""
        from shapecheck.engine.fixes import apply_fixes

        applied_total = 0
        for _ in range(MAX_FIX_PASSES):
            fixes = [
                f.fix for f, d in zip(findings, diagnostics)
                if f.fix is not None and (f.fix.safe or self.unsafe_fixes)
                and not matches_any(list(ignore), d.code, d.name)
            ]
            if not fixes:
                break
            new_module, applied = apply_fixes(module, fixes)
            new_text = new_module.code
            if applied == 0 or new_text == text:
                break
            new_parse = self.analyze(path, new_text, imported)
            if new_parse[0] is None:
                break
            text, (module, findings, diagnostics) = new_text, new_parse
            applied_total += applied
        return text, module, findings, diagnostics, applied_total


def _imported(job: FileJob) -> Optional[dict]:
    """Local name -> (the other file of the run, the function's name there) for ``job``."""
    if not job.links:
        return None
    from shapecheck.semantic.summaries import ForeignModule

    homes: dict[str, ForeignModule] = {}
    for name, data in job.foreign:
        text = _foreign_text(data)
        if text is not None:
            homes[name] = ForeignModule(name, text)
    return {link.local: (homes[link.module], link.original) for link in job.links if link.module in homes}


#: how many decoded texts of imported files one process keeps (:func:`_foreign_text`)
FOREIGN_TEXTS_KEPT = 8


@lru_cache(maxsize=FOREIGN_TEXTS_KEPT)
def _foreign_text(data: bytes) -> Optional[str]:
    """The decoded text of an imported file (``None``: it does not decode), decoded once for all
    the files of the process that import from it."""
    try:
        return decode_source(data).text
    except SourceError:
        return None


def _with_links(work: list[FileJob]) -> list[FileJob]:
    """The jobs, each with the functions it imports from the other files of the run."""
    from dataclasses import replace

    from shapecheck.engine.run_imports import module_names, plan_links

    readable = [job for job in work if job.data is not None and job.error is None and not is_notebook(job.path)]
    if len(readable) < 2:
        return work
    names = module_names(job.path for job in readable)
    texts: dict[str, Optional[bytes]] = {}
    for job in readable:
        name = names[job.path][0]
        texts[name] = None if name in texts else job.data  # two files of one name: neither
    plan = plan_links(((job.path, (job.data or b"").decode("utf-8", "replace")) for job in readable), names)
    out = []
    imported: set[str] = set()
    for job in work:
        found = {link: texts.get(link.module) for link in plan.get(job.path, ())}
        known = {link.module: data for link, data in found.items() if data is not None}
        if known:
            links = tuple(link for link in found if link.module in known)
            job = replace(job, links=links, foreign=tuple(sorted(known.items())))
            imported.update(known)
        out.append(job)
    return [replace(job, shared=True) if job.path in names and names[job.path][0] in imported else job
            for job in out]


# --- process pool plumbing -------------------------------------------------------------------

_WORKER: Optional[_Linter] = None
_WORKER_MODE = MODE_CHECK
_WORKER_COLLECTOR: Optional[RunCollector] = None


def _init_worker(codes: list[str], mode: str, unsafe_fixes: bool = False) -> None:
    global _WORKER, _WORKER_MODE, _WORKER_COLLECTOR
    from shapecheck.rules.catalog import get_rule

    _WORKER = _Linter([get_rule(c) for c in codes], unsafe_fixes)
    _WORKER_MODE = mode
    _WORKER_COLLECTOR = RunCollector().__enter__()  # a worker lives for one run


def _work(job: FileJob) -> FileResult:
    assert _WORKER is not None and _WORKER_COLLECTOR is not None
    result = _WORKER.lint(job, _WORKER_MODE)
    _WORKER_COLLECTOR.file_done()
    return result


def _tell(on_result: Optional[Callable[[FileResult], None]], result: FileResult) -> FileResult:
    if on_result is not None:
        on_result(result)
    return result


def _run_jobs(
    linter: _Linter, jobs: list[FileJob], mode: str, workers: int,
    on_result: Optional[Callable[[FileResult], None]] = None,
) -> list[FileResult]:
    """Lint ``jobs`` on up to ``workers`` processes; ``on_result`` sees each result once, as it
    comes (``--fix`` writes there).

    When a worker dies (a parser crash, the kernel's OOM killer), the pool breaks: the files
    whose results are missing are linted again, each in a process of its own, so that only the
    file that kills its process goes without a result (an ``SC000`` that says how it died).
    """
    if workers <= 1 or len(jobs) <= POOL_THRESHOLD:
        done: list[FileResult] = []
        with RunCollector() as collector:
            for job in jobs:
                done.append(_tell(on_result, linter.lint(job, mode)))
                collector.file_done()
        return done
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    # big files first, so that no worker is left with one long file at the end
    order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i].data or b""))
    results: list[Optional[FileResult]] = [None] * len(jobs)
    started = False
    try:
        with ProcessPoolExecutor(
            max_workers=min(workers, len(jobs)),
            mp_context=multiprocessing.get_context(method),
            initializer=_init_worker,
            initargs=([r.code for r in linter.rule_classes], mode, linter.unsafe_fixes),
        ) as pool:
            futures = {pool.submit(_work, jobs[i]): i for i in order}
            started = True
            for future in as_completed(futures):
                try:
                    result = future.result()
                except Exception:  # the pool broke: every job still pending fails with it
                    continue
                results[futures[future]] = _tell(on_result, result)
    except OSError:
        pass  # no process pool here (a sandbox without semaphores)
    missing = [i for i in order if results[i] is None]
    if missing and not started:
        for i in missing:
            results[i] = _tell(on_result, linter.lint(jobs[i], mode))
    elif missing:
        for i, result in _lint_alone(linter, [jobs[i] for i in missing], mode, workers, method):
            results[missing[i]] = _tell(on_result, result)
    return [r for r in results if r is not None]


def auto_workers(jobs: list[FileJob], cpus: int) -> int:
    """The workers for the default ``--jobs``: one (in-process) for a small run, else the CPUs
    that the load average says are idle (at least one), so that the default is never slower
    than ``--jobs 1`` by paying for a pool that cannot run in parallel."""
    if len(jobs) <= POOL_THRESHOLD or sum(len(job.data or b"") for job in jobs) < POOL_MIN_BYTES:
        return 1
    try:
        busy = int(os.getloadavg()[0] + 0.5)
    except (AttributeError, OSError):
        busy = 0
    return max(1, min(cpus, cpus - busy + 1))


def _lint_in_child(codes: list[str], mode: str, unsafe_fixes: bool, job: FileJob, channel) -> None:
    try:
        _init_worker(codes, mode, unsafe_fixes)
        channel.send(_work(job))
    finally:
        channel.close()


def _crash_message(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        import signal

        try:
            name = f", {signal.Signals(-exitcode).name}"
        except ValueError:
            name = ""
        how = f"signal {-exitcode}{name}"
    else:
        how = f"exit status {exitcode}"
    return f"cannot parse: the parser crashed on this file ({how}); the other files were linted"


def _lint_alone(linter: _Linter, jobs: list[FileJob], mode: str, workers: int, method: str):
    """``(index, result)`` for each of ``jobs``, each linted in a new process of its own, up to
    ``workers`` at a time; a process that dies gives an ``SC000`` result for its file."""
    import multiprocessing
    from multiprocessing.connection import wait

    context = multiprocessing.get_context(method)
    codes = [r.code for r in linter.rule_classes]
    pending = list(range(len(jobs)))
    running: dict = {}
    while pending or running:
        while pending and len(running) < workers:
            index = pending.pop(0)
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(  # type: ignore[attr-defined]  # every concrete context has it
                target=_lint_in_child, args=(codes, mode, linter.unsafe_fixes, jobs[index], sender),
                daemon=True,
            )
            process.start()
            sender.close()  # the child holds the only writing end: its death reads as EOF
            running[receiver] = (index, process)
        for receiver in wait(list(running)):  # type: ignore[assignment]  # wait() gives back our Connections
            index, process = running.pop(receiver)
            try:
                result = receiver.recv()
            except Exception:  # EOF: the child died without an answer
                result = None
            receiver.close()
            process.join()
            if result is None:
                path = jobs[index].path
                result = FileResult(path, [_engine_diagnostic(path, PARSE_ERROR, _crash_message(process.exitcode))])
            yield index, result


# --- the run ---------------------------------------------------------------------------------


def _keep(settings: Settings, diag: Diagnostic, per_file: list[str]) -> bool:
    if diag.code in ENGINE_CODES:
        if engine_code_ignored(settings.layers, diag.code):
            return False
        return diag.code not in per_file and ENGINE_CODES[diag.code] not in per_file
    return not matches_any(per_file, diag.code, diag.name)


def _unified_diff(path: str, before: str, after: str) -> str:
    from shapecheck.engine.display import escape_path

    shown = escape_path(path)  # a newline in a file name must not forge a header
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True),
            fromfile=f"a/{shown}", tofile=f"b/{shown}",
        )
    )


@dataclass
class _FixWrites:
    """``--fix`` writing fixed files back, each once (see :mod:`shapecheck.engine.writeback`)."""

    #: the files named on the command line, as displayed (followed wherever they lead)
    named: frozenset[str]
    #: real paths of the project root and of the folders named on the command line
    folders: tuple[str, ...]
    #: the bytes each file held when it was read
    read: dict[str, Optional[bytes]]
    #: path -> (why its fixes were not written, or None; whether they are new)
    outcomes: dict[str, tuple[Optional[str], bool]] = field(default_factory=dict)
    #: (device, inode) of every file written, to count a file reached by two names once
    written: set[tuple[int, int]] = field(default_factory=set)

    @classmethod
    def of(cls, paths: list[str], root: str, work: list[FileJob]) -> "_FixWrites":
        """The writer for a run over ``paths`` in the project at ``root`` that read ``work``."""
        named = frozenset(display_path(p) for p in paths if not os.path.isdir(p))
        folders = [os.path.realpath(root)] + [os.path.realpath(p) for p in paths if os.path.isdir(p)]
        return cls(named, tuple(folders), {job.path: job.data for job in work})

    def write(self, result: FileResult) -> None:
        """Write ``result``'s fixed text, if any, over its file, unless that was done already."""
        if result.fixed_text is None or result.decoded is None or result.path in self.outcomes:
            return
        from shapecheck.engine import writeback

        read = self.read.get(result.path)
        try:
            data = encode_source(result.fixed_text, result.decoded)
            within = None if result.path in self.named else self.folders
            identity = writeback.write_fixed(result.path, data, read if read is not None else b"", within)
        except writeback.NotWritten as exc:
            self.outcomes[result.path] = exc.message, False
        except (OSError, UnicodeEncodeError) as exc:
            reason = _first_line(getattr(exc, "strerror", None) or exc)
            self.outcomes[result.path] = f"cannot write the fixes: {reason}", False
        else:
            self.outcomes[result.path] = None, identity not in self.written
            self.written.add(identity)

    def outcome(self, result: FileResult) -> tuple[Optional[str], bool]:
        """Why ``result``'s fixes are not in its file (or ``None``), and whether they are new
        (not written already under another name of the file); writes them if still due."""
        self.write(result)
        return self.outcomes[result.path]


def run(
    paths: list[str],
    settings: Settings,
    *,
    jobs: int = 1,
    mode: str = MODE_CHECK,
    use_cache: bool = True,
    stdin: Optional[tuple[str, bytes]] = None,
    unsafe_fixes: bool = False,
    auto_jobs: bool = False,
) -> LintRun:
    """Lint ``paths`` (or ``stdin``, a ``(display path, bytes)`` pair) under ``settings``.

    In ``fix`` mode fixed files are written back (:mod:`shapecheck.engine.writeback`: atomically, and
    only while a file still holds what was linted); in ``diff`` mode the unified diffs
    are returned instead; ``unsafe_fixes`` applies the unsafe fixes too. The cache is used only
    in check mode. With ``auto_jobs`` (the default ``--jobs``), ``jobs`` is the most workers to
    use and :func:`auto_workers` picks how many.
    """
    from shapecheck.engine.guards import (
        DEFAULT_MAX_FILE_SIZE, NOTEBOOK_MAX_BYTES, FileRefused, read_regular_file, too_large_message,
    )

    codes = selected_codes(settings)
    limit = settings.max_file_size or DEFAULT_MAX_FILE_SIZE
    work: list[FileJob] = []
    skipped: list[tuple[str, str]] = []
    if stdin is not None:
        display, data = stdin
        if len(data) > limit:
            work.append(FileJob(display, None, (too_large_message(len(data), limit), 1, 1)))
        else:
            work.append(FileJob(display, data, ignore=tuple(ignored_for_path(settings, display))))
    else:
        found = discover(paths, settings.exclude, settings.root, settings.respect_gitignore)
        files, unreadable, skipped = found.files, found.unreadable, found.skipped
        for path, why in unreadable:
            work.append(FileJob(path, None, (why, 1, 1)))
        for path in files:
            notebook = is_notebook(path)
            try:  # regular files only (a FIFO would hang the run), and no more than the limit
                data = read_regular_file(path, max(limit, NOTEBOOK_MAX_BYTES) if notebook else limit)
            except FileRefused as exc:
                work.append(FileJob(path, None, (exc.message, 1, 1)))
                continue
            if notebook and len(data) > limit:  # the limit is on its code, not on its outputs
                from shapecheck.engine.notebook_core import code_size

                size = code_size(data)
                if size is not None and size > limit:
                    work.append(FileJob(path, None, (too_large_message(size, limit, "the notebook's code"), 1, 1)))
                    continue
            work.append(FileJob(path, data, ignore=tuple(ignored_for_path(settings, path))))

    if stdin is None:
        work = _with_links(work)
    cache = None
    if use_cache and mode == MODE_CHECK and stdin is None:
        from shapecheck.engine.cache import Cache
        from shapecheck.engine.run_imports import link_digest

        cache = Cache.open(settings.project_root, codes)
    results: list[FileResult] = []
    to_lint: list[FileJob] = []
    digests: dict[str, str] = {}
    foreign_hashes: dict[str, bytes] = {}  # every job of the run has the same bytes for a module
    for job in work:
        if cache is not None and job.data is not None:
            digest = hashlib.sha256(job.data).hexdigest() if not job.links else \
                link_digest(job.data, job.links, dict(job.foreign), foreign_hashes)
            digests[job.path] = digest
            cached = cache.get(job.path, digest)
            if cached is not None:
                results.append(FileResult(job.path, cached))
                continue
        to_lint.append(job)
    fresh: list[FileResult] = []
    if stdin is None and mode != MODE_DIFF:
        from shapecheck.engine.writeback import remove_stale_temps

        remove_stale_temps(os.path.dirname(job.path) for job in work if job.data is not None)
    # --fix writes each file as soon as its result is in, to keep the read-to-write window short
    writes = _FixWrites.of(paths, settings.project_root, work) if mode == MODE_FIX and stdin is None else None
    if to_lint:  # only now are the rules (and libcst) imported
        from shapecheck.rules.catalog import get_rule

        linter = _Linter([get_rule(code) for code in codes], unsafe_fixes)
        workers = auto_workers(to_lint, jobs) if auto_jobs else jobs
        fresh = _run_jobs(linter, to_lint, mode, workers, writes.write if writes is not None else None)
    if cache is not None:
        for result in fresh:
            if result.path in digests:
                cache.put(result.path, digests[result.path], result.diagnostics)
        cache.save()
    results.extend(fresh)

    outcome = LintRun([], files=len(work), skipped=skipped, noqa_problems=_noqa_problems(work, settings))
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
        elif writes is not None and result.decoded is not None:
            problem, new = writes.outcome(result)
            if not new:
                outcome.fixes_applied -= result.fixes_applied
            if problem is not None:
                result.diagnostics = result.original_diagnostics + [
                    _engine_diagnostic(result.path, PARSE_ERROR, problem)
                ]
        outcome.diagnostics.extend(d for d in result.diagnostics if _keep(settings, d, per_file))
    if mode == MODE_FIX and stdin is not None and outcome.stdin_output is None:
        decoded = next((r.original_text for r in results if r.original_text is not None), None)
        outcome.stdin_output = decoded if decoded is not None else stdin[1].decode("utf-8", "replace")
    outcome.diagnostics.sort(key=Diagnostic.sort_key)
    return outcome


_DIRECTIVE_BYTES = re.compile(rb"#\s*(?:noqa|shapecheck:)", re.I)


def _noqa_problems(work: list[FileJob], settings: Settings) -> list[tuple[str, int, str, str]]:
    """The malformed suppression comments of the files read (whether linted or cached)."""
    known = [r.code for r in settings.rules] + list(ENGINE_CODES)
    found: list[tuple[str, int, str, str]] = []
    for job in work:
        if job.data is None or _DIRECTIVE_BYTES.search(job.data) is None:
            continue
        if is_notebook(job.path):
            found.extend(_notebook_noqa_problems(job.path, job.data, known))
            continue
        try:
            text = decode_source(job.data).text
        except SourceError:
            continue
        found.extend((job.path, line, directive, why) for line, directive, why in noqa.problems(text, known))
    return found


def _notebook_noqa_problems(path: str, data: bytes, known: list[str]) -> list[tuple[str, int, str, str]]:
    """The malformed suppression comments of a notebook's code cells, each named
    ``path:cell N`` with its line in that cell."""
    from shapecheck.engine import notebook_core as notebooks

    try:
        program = notebooks.load(notebooks.decode(data)[0]).program
    except notebooks.NotebookError:
        return []
    found = []
    for line, directive, why in noqa.problems(program.text, known):
        cell, cell_line = program.position(line)
        found.append((f"{path}:cell {cell}", cell_line, directive, why))
    return found


def lint_text(text: str, rule_classes: list, path: str = "<string>",
              others: Optional[dict[str, str]] = None) -> list[Diagnostic]:
    """Diagnostics for one source string under the given rule classes (noqa applied);
    ``others``: the texts of the other files of its run, by path (package chains are read from
    the disk, as in a run), whose functions and classes ``text`` may import."""
    job = FileJob(path, text.encode("utf-8"))
    if others:
        job = _with_links([job, *(FileJob(p, t.encode("utf-8")) for p, t in others.items() if p != path)])[0]
    result = _Linter(rule_classes).lint(job, MODE_CHECK)
    return sorted(result.diagnostics, key=Diagnostic.sort_key)


@dataclass(frozen=True)
class FixEdit:
    """One finding's safe fix as a text edit: the 1-based region it replaces (end exclusive)
    and the text that goes there."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str


def fix_edits(text: str, rule_classes: list, path: str = "<string>") -> dict[tuple[int, int, str], FixEdit]:
    """The safe fix of each finding of ``rule_classes`` in ``text``, by the finding's
    ``(line, column, code)`` (as its :class:`Diagnostic` has them); for reports that carry fixes."""
    module, findings, diagnostics = _Linter(rule_classes).analyze(path, text)
    if module is None:
        return {}
    return safe_edits(module, findings, diagnostics)


def safe_edits(module, findings: list, diagnostics: list[Diagnostic]) -> dict[tuple[int, int, str], FixEdit]:
    """The safe fix of each of ``findings`` (paired with ``diagnostics``, as :meth:`_Linter.analyze`
    gives them) as a text edit of ``module``, by the diagnostic's ``(line, column, code)``."""
    from shapecheck.engine.positions import node_positions

    fixed = [(f, d) for f, d in zip(findings, diagnostics) if f.fix is not None and f.fix.safe]
    spans = node_positions(module, [f.fix.node for f, _ in fixed])
    edits = {}
    for finding, diag in fixed:
        span = spans.get(finding.fix.node)
        if span is None:
            continue
        line, col, end_line, end_col = span
        new = module.code_for_node(finding.fix.replacement)
        edits[(diag.line, diag.column, diag.code)] = FixEdit(line, col + 1, end_line, end_col + 1, new)
    return edits


def keeps(settings: Settings, path: str) -> Callable[[Diagnostic], bool]:
    """The test a diagnostic of ``path`` passes to be reported under ``settings``: not covered by
    the path's ``per-file-ignores``, nor an engine code the configuration ignores."""
    per_file = list(ignored_for_path(settings, path))
    return lambda diagnostic: _keep(settings, diagnostic, per_file)


@dataclass
class SourceLint:
    """What :func:`lint_source` found in one text."""

    #: the diagnostics reported under the settings, sorted
    diagnostics: list[Diagnostic]
    #: the safe fix of each reported finding that has one, by the diagnostic's ``(line, column, code)``
    fixes: dict[tuple[int, int, str], FixEdit] = field(default_factory=dict)
    #: the libcst module of the text; ``None`` when it does not parse
    module: Any = None


def _analysed_with_edits(linter: _Linter, path: str, text: str, parse: Optional[Callable[[str], Any]]):
    module, findings, diagnostics = linter.analyze(path, text, None, parse)
    return module, diagnostics, (safe_edits(module, findings, diagnostics) if module is not None else {})


def lint_source(path: str, text: str, settings: Settings, parse: Optional[Callable[[str], Any]] = None,
                analyse: Optional[Callable[..., Any]] = None) -> SourceLint:
    """Lint ``text``, the content of the Python file ``path``, as ``shapecheck lint`` lints a file
    under ``settings``: its selected rules, ``# noqa`` comments, ``per-file-ignores`` and ignored
    engine codes applied; with the text edit of each safe fix. ``parse`` makes the text's libcst
    module when the caller has a faster way (an editor's incremental parse); it may raise the
    parser's error; ``analyse`` runs the analysis of the module (an editor's that reuses the
    last version's, :mod:`shapecheck.engine.unit_reuse`; the arguments and result of
    :func:`shapecheck.engine.checker.analyze`). Runs on a thread with a fixed stack, as the
    command line does."""
    from shapecheck.engine.guards import call_with_fixed_stack
    from shapecheck.rules.catalog import get_rule

    linter = _Linter([get_rule(code) for code in selected_codes(settings)])
    linter.analyse = analyse
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        module, diagnostics, fixes = call_with_fixed_stack(_analysed_with_edits, linter, path, text, parse)
    finally:
        if gc_was_enabled:
            gc.enable()
    kept = sorted(filter(keeps(settings, path), diagnostics), key=Diagnostic.sort_key)
    return SourceLint(kept, fixes, module)


def fix_text(
    text: str, rule_classes: list, path: str = "<string>", unsafe_fixes: bool = False
) -> tuple[str, int]:
    """``text`` after every safe fix of the given rules (and the unsafe ones with
    ``unsafe_fixes``), to a fixed point, and how many were applied."""
    result = _Linter(rule_classes, unsafe_fixes).lint(FileJob(path, text.encode("utf-8")), MODE_FIX)
    return result.after_fixes(text)


__all__ = [
    "Diagnostic",
    "FileResult",
    "LintRun",
    "MODE_CHECK",
    "MODE_DIFF",
    "MODE_FIX",
    "FixEdit",
    "SourceLint",
    "fix_edits",
    "keeps",
    "lint_source",
    "safe_edits",
    "fix_text",
    "lint_text",
    "run",
]
