"""Seeded bugs in real code: how many single-line bugs the linter catches in context.

The real files are NOT part of this repository. ``seeds.toml`` names each one by repository,
commit and path; the files are read from bare git snapshots under ``/work/.mirror/<owner>+<name>``
(bring a repository there first with the session's ``fetch`` tool, or point ``--mirror`` at a
folder of ``<owner>+<name>`` git directories, e.g. made with ``git clone --bare``).

For every file the original text is linted first (all rules, ``--select SC`` semantics); its
diagnostics are the baseline. Then every seed is applied alone (one line replaced by one line, a
line emptied, or for a control two lines swapped) and the file is linted again, in-process through
the engine API, in the context of its folder: the other ``.py`` files of its directory at that
commit are staged beside it and are the other files of the run, so that what it imports from them
(``from model import Net``) is known, as ``shapecheck lint <repo>`` would see it
(``--alone`` lints each file by itself). A diagnostic is *new* when the baseline has none with its
line and code (on the edited lines, which a swap reorders, with its code alone). Then:

* a bug seed is **caught** when a new diagnostic carries the seed's
  expected code on the seeded line or on one of the lines its ``report_at`` names (where torch
  raises, e.g. the ``backward()`` of a training loop whose ``zero_grad()`` was deleted);
* **other code**: not caught, but a new diagnostic with another code lands on those lines;
* **elsewhere**: not caught, but the expected code appears as a new diagnostic on another line;
* a **control** (a harmless edit) passes when it adds no diagnostic at all.

Usage::

    python benchmarks/seeded/run.py                 # table per kind, overall, misses
    python benchmarks/seeded/run.py --json out.json # also write every result
    python benchmarks/seeded/run.py --only nanogpt  # seeds whose id contains the text
    python benchmarks/seeded/run.py --show ID       # print the seeded line and the new findings
    python benchmarks/seeded/run.py --check         # only validate seeds.toml against the files
    python benchmarks/seeded/run.py --alone         # each file by itself, without its folder

Exit status: 0, or 2 when a seed cannot be applied (its ``old`` text is missing or ambiguous) or
a file cannot be read from its snapshot.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Optional

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SEEDS = os.path.join(HERE, "seeds.toml")
DEFAULT_MIRROR = "/work/.mirror"


class SeedError(Exception):
    """A seed that cannot be applied to its file, or a file that cannot be read."""


@dataclass
class Source:
    """One real file, named by repository, commit and path."""

    key: str
    repo: str
    commit: str
    path: str
    text: str = ""


@dataclass
class Seed:
    """One edit: a bug with its expected code, or a harmless control."""

    id: str
    file: str
    old: str
    new: str
    kind: str
    code: Optional[str]
    why: str
    occurrence: int = 0
    delete: bool = False
    report_at: list[str] = field(default_factory=list)
    verified: str = "reasoning"

    @property
    def control(self) -> bool:
        """Whether this edit is harmless (it must add no diagnostic)."""
        return self.code is None


def load_seeds(path: str) -> tuple[dict[str, Source], list[Seed]]:
    """The files and seeds of a seeds.toml."""
    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    sources = {
        f["key"]: Source(f["key"], f["repo"], f["commit"], f["path"]) for f in data.get("file", [])
    }
    seeds = []
    for table, is_control in (("seed", False), ("control", True)):
        for s in data.get(table, []):
            seeds.append(Seed(
                id=s["id"], file=s["file"], old=s["old"], new=s.get("new", ""),
                kind="control" if is_control else s["kind"],
                code=None if is_control else s["code"], why=s["why"],
                occurrence=s.get("occurrence", 0), delete=s.get("delete", False),
                report_at=list(s.get("report_at", [])), verified=s.get("verified", "reasoning"),
            ))
    return sources, seeds


def git_dir(mirror: str, repo: str) -> str:
    """The git directory of a snapshot (bare, or a clone with a work tree)."""
    base = os.path.join(mirror, repo.replace("/", "+"))
    for candidate in (os.path.join(base, "repo", ".git"), os.path.join(base, "repo"), base):
        if os.path.isfile(os.path.join(candidate, "HEAD")):
            return candidate
    raise SeedError(f"no snapshot of {repo} under {mirror} (fetch it first)")


def read_source(mirror: str, source: Source) -> str:
    """The text of one file at its recorded commit."""
    gdir = git_dir(mirror, source.repo)
    try:
        out = subprocess.run(
            ["git", "--git-dir", gdir, "show", f"{source.commit}:{source.path}"],
            check=True, capture_output=True,
        )
    except subprocess.CalledProcessError as exc:
        where = f"{source.repo}@{source.commit[:10]}:{source.path}"
        raise SeedError(f"{where}: {exc.stderr.decode().strip()}") from exc
    return out.stdout.decode("utf-8")


def _line_of(text: str, needle: str, occurrence: int, what: str) -> int:
    """The 0-based line where the ``occurrence``-th match of ``needle`` starts (``0``: the only
    match, which must be unique)."""
    start = -1
    for _ in range(max(occurrence, 1)):
        start = text.find(needle, start + 1)
        if start < 0:
            raise SeedError(f"{what}: `{needle}` not found (occurrence {max(occurrence, 1)})")
    if occurrence == 0 and text.find(needle, start + 1) >= 0:
        raise SeedError(f"{what}: `{needle}` occurs more than once; give `occurrence`")
    return text.count("\n", 0, start)


def apply_seed(text: str, seed: Seed) -> tuple[str, list[int], range]:
    """The seeded text, the 1-based lines where a finding counts (seeded lines, report_at) and
    the range of edited lines."""
    lines = text.split("\n")
    first = _line_of(text, seed.old, seed.occurrence, seed.id)
    # a deletion empties the first line of the match; the rest of ``old`` only locates it
    span = 1 if seed.delete else seed.old.count("\n") + 1
    old_block = "\n".join(lines[first:first + span])
    if seed.delete:
        indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        new_lines = [""]
        candidate = lines[:first] + new_lines + lines[first + 1:]
        try:
            compile("\n".join(candidate), seed.id, "exec")
        except SyntaxError:
            new_lines = [indent + "pass"]
    else:
        if seed.new.count("\n") != seed.old.count("\n"):
            raise SeedError(f"{seed.id}: `new` must have as many lines as `old`")
        new_lines = old_block.replace(seed.old, seed.new, 1).split("\n")
        if "\n".join(new_lines) == old_block:
            raise SeedError(f"{seed.id}: the edit changes nothing")
    seeded = lines[:first] + new_lines + lines[first + span:]
    edited = range(first + 1, first + span + 1)
    at = list(edited)
    for needle in seed.report_at:
        at.append(_line_of(text, needle, 0, f"{seed.id} report_at") + 1)
    return "\n".join(seeded), at, edited


def read_siblings(mirror: str, source: Source) -> dict[str, str]:
    """The other ``.py`` files of the directory of ``source`` at its commit, by file name."""
    gdir = git_dir(mirror, source.repo)
    folder = os.path.dirname(source.path)
    listing = subprocess.run(
        ["git", "--git-dir", gdir, "ls-tree", "--name-only", source.commit, f"{folder}/" if folder else "."],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    siblings = {}
    for path in listing:
        if path.endswith(".py") and path != source.path:
            shown = subprocess.run(["git", "--git-dir", gdir, "show", f"{source.commit}:{path}"],
                                   check=True, capture_output=True)
            siblings[os.path.basename(path)] = shown.stdout.decode("utf-8", "replace")
    return siblings


def make_linter() -> Any:
    """A function linting one text with every rule (``--select SC``), with the texts of the
    other files of its run (by path, staged on disk)."""
    from shapecheck.engine.config import Selectors, selected_rules
    from shapecheck.lint import lint_text

    rules = selected_rules([Selectors(select=["SC"])])

    def lint(text: str, path: str, others: Optional[dict[str, str]] = None) -> list[Any]:
        return lint_text(text, rules, path, others)

    return lint


def _key(d: Any, edited: range) -> tuple:
    """Line and code; inside the edited lines (which a swap may reorder) the code alone."""
    return ("edited", d.code) if d.line in edited else (d.line, d.code)


def new_findings(base: list[Any], after: list[Any], edited: range) -> list[Any]:
    """Diagnostics of ``after`` not in ``base`` (with multiplicity)."""
    left = Counter(_key(d, edited) for d in base)
    fresh = []
    for d in after:
        key = _key(d, edited)
        if left[key] > 0:
            left[key] -= 1
        else:
            fresh.append(d)
    return fresh


def judge(seed: Seed, fresh: list[Any], at: list[int]) -> str:
    """caught / other-code / elsewhere / missed for a bug; pass / FAIL for a control."""
    if seed.control:
        return "pass" if not fresh else "FAIL"
    if any(d.code == seed.code and d.line in at for d in fresh):
        return "caught"
    if any(d.line in at for d in fresh):
        return "other-code"
    if any(d.code == seed.code for d in fresh):
        return "elsewhere"
    return "missed"


def run(seeds_path: str, mirror: str, only: Optional[str], check_only: bool,
        alone: bool = False) -> tuple[list[dict], list[str]]:
    """Lint every file and seed (with its folder, unless ``alone``); the per-seed results and the
    problems met."""
    sources, seeds = load_seeds(seeds_path)
    problems: list[str] = []
    for source in sources.values():
        try:
            source.text = read_source(mirror, source)
        except SeedError as exc:
            problems.append(str(exc))
    selected = [s for s in seeds if only is None or only in s.id]
    lint = None if check_only else make_linter()
    baselines: dict[str, list[Any]] = {}
    contexts: dict[str, dict[str, str]] = {}
    results = []
    with tempfile.TemporaryDirectory(prefix="seeded-") as scratch:
        for seed in selected:
            found = sources.get(seed.file)
            if found is None:
                problems.append(f"{seed.id}: unknown file `{seed.file}`")
                continue
            source = found
            if not source.text:
                continue
            try:
                seeded, at, edited = apply_seed(source.text, seed)
                compile(seeded, seed.id, "exec")
            except (SeedError, SyntaxError) as exc:
                problems.append(f"{seed.id}: {exc}")
                continue
            if lint is None:
                continue
            display = os.path.join(scratch, seed.file, os.path.basename(source.path))
            if seed.file not in baselines:
                os.makedirs(os.path.dirname(display), exist_ok=True)
                with open(display, "w", encoding="utf-8") as handle:
                    handle.write(source.text)
                others: dict[str, str] = {}
                if not alone:
                    for name, text in read_siblings(mirror, source).items():
                        staged = os.path.join(os.path.dirname(display), name)
                        with open(staged, "w", encoding="utf-8") as handle:
                            handle.write(text)
                        others[staged] = text
                contexts[seed.file] = others
                baselines[seed.file] = lint(source.text, display, others)
            fresh = new_findings(baselines[seed.file], lint(seeded, display, contexts[seed.file]), edited)
            results.append({
                "id": seed.id, "file": seed.file, "repo": source.repo, "path": source.path,
                "kind": seed.kind, "code": seed.code, "lines": at, "verified": seed.verified,
                "verdict": judge(seed, fresh, at), "why": seed.why,
                "seeded_line": seeded.split("\n")[at[0] - 1].strip(),
                "new": [{"line": d.line, "code": d.code, "message": d.message, "condition": d.condition}
                        for d in fresh],
            })
    return results, problems


def report(results: list[dict], show: Optional[str]) -> None:
    """Print the table per kind, the overall rate, the controls and the misses."""
    bugs = [r for r in results if r["code"] is not None]
    controls = [r for r in results if r["code"] is None]
    per_kind: dict[str, Counter] = defaultdict(Counter)
    for r in bugs:
        per_kind[r["kind"]][r["verdict"]] += 1
    print(f"{'kind':<22}{'seeds':>6}{'caught':>8}{'other':>7}{'elsewh':>8}{'missed':>8}{'rate':>8}")
    total: Counter = Counter()
    for kind in sorted(per_kind):
        c = per_kind[kind]
        n = sum(c.values())
        total.update(c)
        print(f"{kind:<22}{n:>6}{c['caught']:>8}{c['other-code']:>7}{c['elsewhere']:>8}"
              f"{c['missed']:>8}{c['caught'] / n:>8.0%}")
    n = sum(total.values())
    if n:
        print(f"{'overall':<22}{n:>6}{total['caught']:>8}{total['other-code']:>7}{total['elsewhere']:>8}"
              f"{total['missed']:>8}{total['caught'] / n:>8.0%}")
    failed = [r for r in controls if r["verdict"] == "FAIL"]
    print(f"\ncontrols: {len(controls)}, with a new finding: {len(failed)}")
    for r in failed:
        for d in r["new"]:
            print(f"  {r['id']}: line {d['line']} {d['code']} {d['message'][:110]}")
    misses = [r for r in bugs if r["verdict"] != "caught"]
    if misses:
        print(f"\nnot caught ({len(misses)}):")
        for r in misses:
            got = ", ".join(f"{d['code']}@{d['line']}" for d in r["new"]) or "nothing new"
            print(f"  {r['id']:<28} {r['code']} {r['verdict']:<10} {got}")
    for r in results:
        if show is not None and r["id"] == show:
            print(f"\n{r['id']} ({r['path']}, lines {r['lines']}): {r['seeded_line']}")
            for d in r["new"]:
                print(f"  {d['line']} {d['code']} {d['message']}")


def main(argv: Optional[list[str]] = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default=DEFAULT_SEEDS, help="the seeds file (default: seeds.toml here)")
    parser.add_argument("--mirror", default=DEFAULT_MIRROR, help="folder of <owner>+<name> git snapshots")
    parser.add_argument("--only", help="only the seeds whose id contains this text")
    parser.add_argument("--show", help="print the new findings of this seed")
    parser.add_argument("--json", help="write every result to this file")
    parser.add_argument("--check", action="store_true", help="only check that every seed applies")
    parser.add_argument("--alone", action="store_true", help="lint each file by itself, without its folder")
    args = parser.parse_args(argv)
    results, problems = run(args.seeds, args.mirror, args.only, args.check, args.alone)
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    if not args.check:
        report(results, args.show)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"results": results, "problems": problems}, handle, indent=1)
    return 2 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
