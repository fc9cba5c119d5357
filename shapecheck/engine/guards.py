"""Guards that keep one hostile file from taking a run down.

Three things can sink a run that only reads source files: a file that is not a regular file (a
FIFO blocks ``read`` forever, ``/dev/zero`` never ends), a file so large that its syntax tree
exhausts memory, and a file so deeply nested that libcst's native parser overflows its stack (a
signal, not an exception: the whole process dies) or takes minutes. This module holds the checks
that stop each of them before the file reaches the parser, and :func:`call_with_fixed_stack`,
which runs the parser and the analysis on a thread of their own so that what they can do never
depends on how deep the caller's stack already is (``--jobs 1``, a worker process, a test).

Nesting is measured by :func:`nesting_problem`: one pass of a small regex-driven scanner over the
text that follows Python's tokenizer for strings (f-strings and their nested fields included),
comments and brackets, and counts the tokens that make a syntax tree deeper (operators, ``.``,
closing brackets, ``not``, ``lambda``, ``if``/``else``). The measure is an upper bound of how
deep the expression tree can be, and costs a few percent of a libcst parse.

The limits were measured on libcst 1.9 (CPython 3.11, 8 MiB main-thread stack), each case in a
process of its own: the native parser dies with SIGSEGV at about 1,250 nested brackets and
7,000 chained ``+``; ``a and a and ...`` and ``elif`` chains (which CPython keeps flat or allows
to about 3,000) crash it at 60,000 to 100,000. Its time grows about with the cube of a chain's
length: 1,000 chained ``+`` take 0.3 s, 1,000 ``[0]`` subscripts 4.3 s, 1,000 ``.a()`` calls 3.9 s
(500: 0.1 s, 0.6 s and 0.7 s), and memory grows with it (2,976 ``lambda:`` take 1.6 GB). No
file of the standard library or of 16,000 installed ones (torch, sympy, ...) reaches a limit.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import threading
from typing import Callable, Optional, TypeVar

from shapecheck.engine.sources import read_error

#: Files larger than this many bytes are not linted (``max-file-size`` / ``--max-file-size``).
DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024
#: A notebook's outputs (embedded images) do not count against that limit, its code does: the
#: file itself may be this large.
NOTEBOOK_MAX_BYTES = 64 * 1024 * 1024
#: The deepest an expression may nest, as estimated by :func:`nesting_problem`.
MAX_EXPRESSION_DEPTH = 500
#: The longest ``if``/``elif`` chain (libcst nests every ``elif`` in the previous one).
MAX_ELIF_CHAIN = 1000
#: Python's own limits: the tokenizer's 200 nested brackets and 100 levels of indentation.
MAX_BRACKETS = 200
MAX_INDENT = 100

#: The stack of the thread that parses and analyses a file, and the recursion limit it runs with.
ANALYSIS_STACK_SIZE = 256 * 1024 * 1024
ANALYSIS_RECURSION_LIMIT = 20_000


class FileRefused(Exception):
    """A file that is not linted: why, as the one-line message of its ``SC000``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):.1f} MiB"
    if count >= 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count} bytes"


def too_large_message(size: int, limit: int, what: str = "the file") -> str:
    """The ``SC000`` message of a file (or of ``what`` in it) over the size limit: why, and how
    to lift it."""
    return (
        f"not linted: {what} is {_size(size)}, over the {_size(limit)} limit "
        f"(raise it with `max-file-size = {size}` under [tool.shapecheck] "
        f"or `--max-file-size {size}`)"
    )


def read_regular_file(path: str, max_size: int) -> bytes:
    """The bytes of ``path``, a regular file (or a link to one) of at most ``max_size`` bytes.

    Raises :class:`FileRefused` for anything else. The file is opened without blocking, so that
    a FIFO cannot hang the run, and checked with ``fstat`` on the open descriptor, so that it
    cannot be swapped between the check and the read; at most ``max_size + 1`` bytes are read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise FileRefused(read_error(exc)) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise FileRefused("cannot read: is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"not linted: not a regular file ({_file_kind(info.st_mode)})")
        if info.st_size > max_size:
            raise FileRefused(too_large_message(info.st_size, max_size))
        chunks = []
        left = max_size + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        raise FileRefused(read_error(exc)) from None
    finally:
        os.close(fd)
    if len(data) > max_size:  # it grew while being read
        raise FileRefused(too_large_message(len(data), max_size))
    return data


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


# --- nesting -----------------------------------------------------------------------------------

# Code, one token a match. A "low" operator is a binary one that binds more loosely than ``*``:
# it ends the run of tightly binding ones (``*``, ``**``, unary ops, ``.``, calls, subscripts)
# before it, since no path down the tree passes through two runs; every low one counts.
# Every alternative starts with a literal character, which lets the regex engine skip the rest
# of the text quickly (a capturing group or a class in front would make it try every position).
_CODE = re.compile(
    r"""
      \n | \r\n? | \\\r?\n | \#[^\r\n]*
    | '''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''
    | '[^'\\\r\n]*(?:\\(?:\r\n|[\s\S])[^'\\\r\n]*)*' | '
    | \"\"\"[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*\"\"\"
    | "[^"\\\r\n]*(?:\\(?:\r\n|[\s\S])[^"\\\r\n]*)*" | "
    | \( | \[ | \{ | \) | \] | \} | , | :=? | ;
    | l(?<!\wl)ambda\b | a(?<!\wa)(?:nd|wait)\b | o(?<!\wo)r\b | n(?<!\wn)ot\b
    | i(?<!\wi)[fns]\b | e(?<!\we)lse\b
    | -[>=]? | \+=? | \*\*?=? | //?=? | %=? | @=? | ~ | \. | <<?=? | >>?=? | ==? | !=? | \|=? | \^=? | &=?
    """,
    re.VERBOSE,
)

_NL, _SKIP, _STRING, _OPEN, _CLOSE, _COMMA, _COLON, _SEMI, _LAMBDA, _LOW, _HIGH, _SIGN = range(1, 13)
#: the kind of every token that is not a string, a comment or a line break
_KINDS = {
    "(": _OPEN, "[": _OPEN, "{": _OPEN, ")": _CLOSE, "]": _CLOSE, "}": _CLOSE,
    ",": _COMMA, ":": _COLON, ";": _SEMI, "lambda": _LAMBDA, "await": _HIGH,
    "-": _SIGN, "+": _SIGN, "*": _HIGH, "**": _HIGH, "/": _HIGH, "//": _HIGH, "%": _HIGH,
    "@": _HIGH, "~": _HIGH, ".": _HIGH,
    # assignments and keyword arguments separate what they join, as a comma does
    "=": _COMMA, **{op + "=": _COMMA for op in ("+", "-", "*", "/", "//", "%", "@", "&", "|", "^", ">>", "<<", "**")},
}
#: by first character: line breaks, comments and line continuations, string literals
_FIRST = {"\n": _NL, "\r": _NL, "#": _SKIP, "\\": _SKIP, "'": _STRING, '"': _STRING}
_PREFIX_LETTERS = frozenset("rRbBuUfFtT")


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _string_prefix(text: str, start: int) -> str:
    """The prefix letters (``rb``, ``f``...) of the string literal whose quote is at ``start``."""
    begin = start
    while begin > 0 and start - begin < 2 and text[begin - 1] in _PREFIX_LETTERS:
        begin -= 1
    while begin < start and begin > 0 and _is_word(text[begin - 1]):
        begin += 1  # letters that end a name (``if"x"``) are no prefix
    return text[begin:start]


def _is_binary(text: str, start: int) -> bool:
    """Whether the ``+`` or ``-`` at ``start`` follows an operand (a binary operator), as far as
    one character tells: a name, a closing bracket or a quote; never the ``e`` of ``1e-5``."""
    index = start - 1
    while index >= 0 and text[index] in " \t":
        index -= 1
    if index < 0:
        return False
    char = text[index]
    return char in ")]}'\"" or (_is_word(char) and char not in "eE")


def _fstring_literal(quote: str) -> "re.Pattern[str]":
    end_of_line = r"|(\r\n|\r|\n)" if len(quote) == 1 else r"|(?!)()"
    return re.compile(
        r"(\\[\\'\"{}]|\\(?:\r\n|\r|\n)|\{\{|\}\})|(\{)|(\})|(" + re.escape(quote) + ")" + end_of_line
    )


# the literal text of an f-string (or of a format spec) after its opening quote: 1 nothing,
# 2 a field opens, 3 a field closes, 4 the closing quote, 5 an end of line that ends it unclosed
_FSTRING = {quote: _fstring_literal(quote) for quote in ("'", '"', "'" * 3, '"' * 3)}
_INDENT = re.compile(r"[ \t\f]*")
# a line that may be indented 100 levels or more (a tab may count for 8 columns)
_DEEP_INDENT = re.compile(r"^(?:[ \f]*\t|[ \t\f]{%d})" % MAX_INDENT, re.MULTILINE)
_BLANK_OR_ELIF = re.compile(r"(?P<blank>[#\r\n\\])|(?P<elif>elif\b)")


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


class _Lines:
    """Indentation levels and ``elif`` chains, looked at where each logical line starts."""

    def __init__(self) -> None:
        self.indents: list[int] = []
        self.elif_runs: dict[int, int] = {}

    def problem(self, text: str, pos: int) -> Optional[tuple[str, int, int]]:
        """What is wrong with the logical line that starts at ``pos``, or ``None``."""
        indent = _INDENT.match(text, pos)
        assert indent is not None  # the pattern matches the empty string
        start = indent.end()
        after = _BLANK_OR_ELIF.match(text, start)
        if start >= len(text) or (after is not None and after.group("blank")):
            return None
        width = len(indent.group().expandtabs(8))
        indents = self.indents
        while indents and width < indents[-1]:
            indents.pop()
        if width > (indents[-1] if indents else 0):
            indents.append(width)
            if len(indents) >= MAX_INDENT:
                return ("cannot parse: too many levels of indentation (Python allows "
                        f"{MAX_INDENT - 1})", *_line_col(text, start))
        is_elif = after is not None and after.group("elif") is not None
        runs = self.elif_runs
        if runs:
            for key in [k for k in runs if k > width or (k == width and not is_elif)]:
                del runs[key]
        if is_elif:
            runs[width] = runs.get(width, 0) + 1
            if runs[width] > MAX_ELIF_CHAIN:
                return (f"not linted: an if/elif chain of more than {MAX_ELIF_CHAIN} branches is "
                        "too long to parse safely; split it up", *_line_col(text, start))
        return None


def nesting_problem(text: str) -> Optional[tuple[str, int, int]]:
    """Why ``text`` nests too deeply to be parsed safely, with a 1-based line and column, or
    ``None``.

    Deeper than Python's own limits (200 nested brackets, 100 levels of indentation) is not
    Python at all; an expression deeper than :data:`MAX_EXPRESSION_DEPTH` or an ``elif`` chain
    longer than :data:`MAX_ELIF_CHAIN` would make libcst's parser crash or run for minutes.
    The depth of an expression is bounded by the loosely binding operators of its statement (or
    bracket, or list item) plus the longest run of tightly binding ones, summed over the
    brackets and f-string fields that enclose it.
    """
    lines: Optional[_Lines] = None
    if text.count("elif") > MAX_ELIF_CHAIN or _DEEP_INDENT.search(text):
        lines = _Lines()  # otherwise no line can be a problem
        problem = lines.problem(text, 0)
        if problem is not None:
            return problem
    # one entry per context: an int counts the brackets open in a code context (the file, or a
    # field of an f-string when the entry below it is a str); a str is the quote of an
    # f-string's literal text, or ":" and the quote for a format spec
    frames: list = [0]
    saved: list[tuple[int, int, int]] = []
    base = low = run = floor = 0
    deepest = brackets = 0
    pos, size = 0, len(text)
    while pos < size:
        frame = frames[-1]
        if type(frame) is str:  # the literal text of an f-string or of a format spec
            spec = frame.startswith(":")
            match = _FSTRING[frame.lstrip(":")].search(text, pos)
            if match is None:
                break
            pos = match.end()
            kind = match.lastindex
            if kind == 2:  # a field opens
                frames.append(0)
                saved.append((low, run, floor))
                base += low + run + 1
                low = run = floor = 0
            elif kind == 3 and spec:  # the end of a format spec ends its field too
                frames.pop()
                frames.pop()
                low, run, floor = saved.pop()
                base -= low + run + 1
                run += 1
            elif kind is not None and kind >= 4:  # the closing quote, or an end of line
                while type(frames[-1]) is str and frames[-1].startswith(":"):
                    frames.pop()
                    frames.pop()
                    low, run, floor = saved.pop()
                    base -= low + run + 1
                    run += 1
                frames.pop()
            continue
        in_field = len(frames) > 1
        opened = frame
        stop = False
        for match in _CODE.finditer(text, pos):
            token = match.group()
            kind = _KINDS.get(token) or _FIRST.get(token[0], _LOW)
            if kind == _HIGH:
                run += 1
            elif kind == _LOW:
                low += 1
                run = 0
            elif kind == _SIGN:
                if _is_binary(text, match.start()):
                    low += 1
                    run = 0
                else:
                    run += 1
            elif kind == _STRING:
                prefix = _string_prefix(text, match.start())
                if "f" in prefix or "F" in prefix or "t" in prefix or "T" in prefix:
                    quote = text[match.start():match.start() + 3]
                    quote = quote if quote in ("'" * 3, '"' * 3) else quote[0]
                    frames[-1] = opened
                    frames.append(quote)
                    pos, stop = match.start() + len(quote), True
            elif kind == _OPEN:
                opened += 1
                brackets += 1
                if brackets > MAX_BRACKETS:
                    return (f"cannot parse: too many nested parentheses (Python allows {MAX_BRACKETS})",
                            *_line_col(text, match.start()))
                saved.append((low, run, floor))
                base += low + run + 1
                low = run = floor = 0
            elif kind == _CLOSE:
                if opened > 0:
                    opened -= 1
                    brackets -= 1
                    low, run, floor = saved.pop()
                    base -= low + run + 1
                    run += 1
                elif in_field and match.group() == "}":  # the end of an f-string field
                    frames.pop()
                    low, run, floor = saved.pop()
                    base -= low + run + 1
                    run += 1
                    pos, stop = match.end(), True
            elif kind == _COMMA:
                low, run = floor, 0
            elif kind == _NL:
                if opened == 0 and not in_field:
                    low = run = floor = 0
                    if lines is not None:
                        problem = lines.problem(text, match.end())
                        if problem is not None:
                            return problem
            elif kind == _COLON:
                floor = 0
                if in_field and opened == 0:  # a format spec
                    frames.append(":" + frames[-2])
                    pos, stop = match.end(), True
            elif kind == _LAMBDA:
                low += 1
                run = 0
                floor = low  # a comma between a lambda's parameters ends nothing
            elif kind == _SEMI:
                if opened == 0 and not in_field:
                    low = run = floor = 0
            if base + low + run > deepest:
                deepest = base + low + run
                if deepest > MAX_EXPRESSION_DEPTH:
                    return (f"not linted: an expression nests more than {MAX_EXPRESSION_DEPTH} "
                            "levels deep, too deep to parse safely; split it into smaller statements",
                            *_line_col(text, match.start()))
            if stop:
                break
        if not stop:
            break
    return None


# --- a stack of known size ---------------------------------------------------------------------

T = TypeVar("T")
_STACK_LOCK = threading.Lock()
_ON_ANALYSIS_THREAD = threading.local()


def call_with_fixed_stack(function: Callable[..., T], *args) -> T:
    """``function(*args)`` on a new thread with a :data:`ANALYSIS_STACK_SIZE` stack and the
    recursion limit set to :data:`ANALYSIS_RECURSION_LIMIT`: the same room in every process,
    whatever the caller's depth. Its exception, if any, is raised here.

    Where no such thread can be made (a platform without ``threading.stack_size``, or too
    little address space), ``function`` runs on the caller's thread.
    """
    if getattr(_ON_ANALYSIS_THREAD, "active", False):
        return function(*args)
    outcome: list = []

    def body() -> None:
        _ON_ANALYSIS_THREAD.active = True
        try:
            outcome.append((True, function(*args)))
        except BaseException as exc:  # handed to the caller, which raises it
            outcome.append((False, exc))

    with _STACK_LOCK:  # the stack size and the recursion limit are process-wide settings
        old_limit = sys.getrecursionlimit()
        try:
            old_size = threading.stack_size(ANALYSIS_STACK_SIZE)
        except (ValueError, RuntimeError):
            return function(*args)
        try:
            sys.setrecursionlimit(ANALYSIS_RECURSION_LIMIT)
            thread = threading.Thread(target=body, name="shapecheck-analysis", daemon=True)
            try:
                thread.start()
            except RuntimeError:  # cannot start a thread with that stack
                sys.setrecursionlimit(old_limit)
                threading.stack_size(old_size)
                return function(*args)
            thread.join()
        finally:
            sys.setrecursionlimit(old_limit)
            threading.stack_size(old_size)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value
