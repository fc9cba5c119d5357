"""Lint speed on real model code, against a bare libcst parse and TorchFix, in one run.

The corpus is every ``modeling_*.py`` of the transformers wheel (``pip download --no-deps
transformers``), extracted flat, or with ``--packages`` at their package paths (then the files
import from each other, and ``--cross-file`` shows what the cross-file pass costs), or the ``.py``
files of ``--corpus DIR``. The files are copied into a scratch
folder (with its own pyproject.toml, so the result cache lives there too) and timed:

1. bare ``libcst.parse_module`` of every file, in this process;
2. ``shapecheck lint --jobs 1 --no-cache`` (a child process, start-up included);
3. ``shapecheck lint --jobs 1`` twice: the first run fills the cache, the second reads it;
4. ``torchfix`` on the same folder (installed in its own venv under benchmarks/_venvs/, since it
   pins an older libcst), with ``--jobs 1`` where it accepts it.

Times are wall-clock and CPU seconds (children's CPU from ``getrusage``). With ``--breakdown`` it
also splits shapecheck's own time into parse, analysis walk and position resolution, in-process.

Run by hand, never in CI:  ``python benchmarks/lint_bench.py --limit 40``
"""

from __future__ import annotations

import argparse
import glob
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_CORPUS = os.path.join(HERE, "_corpus", "transformers")
PACKAGE_CORPUS = os.path.join(HERE, "_corpus", "transformers_packages")
TORCHFIX_VENV = os.path.join(HERE, "_venvs", "torchfix")


def _wheel(target: str) -> str:
    """The newest transformers wheel beside ``target``, downloaded when there is none."""
    wheel_dir = os.path.join(os.path.dirname(target), "wheel")
    os.makedirs(wheel_dir, exist_ok=True)
    wheels = glob.glob(os.path.join(wheel_dir, "transformers-*.whl"))
    if not wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
             "transformers", "-d", wheel_dir],
            check=True,
        )
        wheels = glob.glob(os.path.join(wheel_dir, "transformers-*.whl"))
    return sorted(wheels)[-1]


def _modeling_members(archive: zipfile.ZipFile) -> list[str]:
    return [m for m in archive.namelist()
            if m.rsplit("/", 1)[-1].startswith("modeling_") and m.endswith(".py")]


def build_corpus(target: str) -> str:
    """Download the transformers wheel and extract every ``modeling_*.py`` into ``target``, flat
    (``models/bert/modeling_bert.py`` becomes ``transformers__models__bert__modeling_bert.py``):
    no file of the run imports another, so the cross-file pass only plans."""
    wheel = _wheel(target)
    os.makedirs(target, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        for member in _modeling_members(archive):
            flat = member.replace("/", "__")
            with archive.open(member) as src, open(os.path.join(target, flat), "wb") as dst:
                shutil.copyfileobj(src, dst)
    return target


def build_package_corpus(target: str) -> str:
    """The same files at their paths in the wheel, with an empty ``__init__.py`` in every folder,
    so ``from ...modeling_utils import X`` reaches another file of the run and the cross-file pass
    has real work (about 290 of the 545 files import from modeling_utils or the rope helpers)."""
    wheel = _wheel(target)
    with zipfile.ZipFile(wheel) as archive:
        for member in _modeling_members(archive):
            path = os.path.join(target, member)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with archive.open(member) as src, open(path, "wb") as dst:
                shutil.copyfileobj(src, dst)
    for folder, _, names in os.walk(target):
        if folder != target and "__init__.py" not in names:
            open(os.path.join(folder, "__init__.py"), "w").close()
    return target


def corpus_files(folder: str, limit: int | None) -> list[str]:
    """The ``.py`` files of ``folder`` in name order, at most ``limit`` of them."""
    files = sorted(glob.glob(os.path.join(folder, "**", "*.py"), recursive=True))
    return files[:limit] if limit else files


def stage(files: list[str], root: str) -> str:
    """Copy ``files`` into a scratch project folder, at their paths below ``root`` (packages stay
    packages, so the cross-file pass sees the imports between them); returns its ``src`` folder."""
    scratch = tempfile.mkdtemp(prefix="shapecheck-bench-")
    with open(os.path.join(scratch, "pyproject.toml"), "w") as handle:
        handle.write("[project]\nname = 'bench-corpus'\nversion = '0'\n")
    src = os.path.join(scratch, "src")
    os.makedirs(src)
    for path in files:
        target = os.path.join(src, os.path.relpath(path, root))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy(path, target)
    return src


#: ``shapecheck lint`` with the cross-file pass off (each file linted without the summaries of the
#: files it imports): the benchmark's own switch, the linter has none
_WITHOUT_LINKS = (
    "import sys; import shapecheck.engine.runner as r; r._with_links = lambda work: work; "
    "from shapecheck.frontends.cli import main; sys.argv[0] = 'shapecheck'; sys.exit(main())"
)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_command(
    argv: list[str], cwd: str, env: dict | None = None
) -> tuple[float, float, subprocess.CompletedProcess]:
    """Run ``argv``; returns wall seconds, CPU seconds (with its children) and the process."""
    cpu0, wall0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
    return time.perf_counter() - wall0, _children_cpu() - cpu0, proc


def bare_parse(files: list[str]) -> tuple[float, float, int]:
    """Parse every file with ``libcst.parse_module``; wall, CPU seconds and total lines."""
    import libcst

    texts = []
    for path in files:
        with open(path, "rb") as handle:
            texts.append(handle.read())
    lines = sum(t.count(b"\n") for t in texts)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for data in texts:
        libcst.parse_module(data)
    return time.perf_counter() - wall0, time.process_time() - cpu0, lines


def breakdown(files: list[str], package: str) -> dict:
    """shapecheck's own time per phase, in this process, each as the engine does it: the parse
    (``parse_source``), the walk (given the file's text), positions (only in files with
    findings); the checker is released after each file."""
    sys.path.insert(0, package)
    from shapecheck.engine.config import selected_rules  # the registry first, as the engine does

    rule_classes = selected_rules([])
    from shapecheck.engine import checker
    from shapecheck.engine.parsing import parse_source
    from shapecheck.engine.positions import node_positions
    from shapecheck.engine.sources import decode_source

    totals = {"parse": 0.0, "walk": 0.0, "positions": 0.0, "files_with_findings": 0, "findings": 0,
              "walk_crashes": 0}
    for path in files:
        with open(path, "rb") as handle:
            data = handle.read()
        text = decode_source(data).text
        t0 = time.process_time()
        module = parse_source(text)
        t1 = time.process_time()
        try:
            ctx = checker.analyze(module, [cls() for cls in rule_classes], text)
        except Exception:  # the engine reports this as SC999; here it only costs the file
            totals["walk_crashes"] += 1
            continue
        t2 = time.process_time()
        totals["parse"] += t1 - t0
        totals["walk"] += t2 - t1
        if ctx.findings:
            node_positions(module, [f.node for f in ctx.findings])
            totals["positions"] += time.process_time() - t2
            totals["files_with_findings"] += 1
            totals["findings"] += len(ctx.findings)
        ctx.release()
    totals["rules"] = len(rule_classes)
    return totals


def torchfix_command() -> list[str] | None:
    """The torchfix executable of the benchmark venv, installing it there when missing."""
    exe = os.path.join(TORCHFIX_VENV, "bin", "torchfix")
    if not os.path.exists(exe):
        print("installing torchfix into", TORCHFIX_VENV, file=sys.stderr)
        try:
            subprocess.run([sys.executable, "-m", "venv", TORCHFIX_VENV], check=True)
            subprocess.run([os.path.join(TORCHFIX_VENV, "bin", "pip"), "install", "-q", "torchfix"], check=True)
        except (subprocess.CalledProcessError, OSError) as exc:
            print(f"torchfix unavailable: {exc}", file=sys.stderr)
            return None
    return [exe]


def _row(label: str, wall: float, cpu: float, base: float | None = None) -> str:
    ratio = f"{cpu / base:8.2f}x" if base else " " * 9
    return f"{label:<44} {wall:9.2f} {cpu:9.2f} {ratio}"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one table of times and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="lint the .py files of this folder instead of the wheel's")
    parser.add_argument("--packages", action="store_true",
                        help="the wheel's files at their package paths (imports between them resolve)")
    parser.add_argument("--limit", type=int, help="only the first N files (by name)")
    parser.add_argument("--no-torchfix", action="store_true", help="skip TorchFix")
    parser.add_argument("--breakdown", action="store_true", help="also time parse / walk / positions in-process")
    parser.add_argument("--cross-file", action="store_true",
                        help="also time the lint with the cross-file pass off (no summaries from other files)")
    args = parser.parse_args(argv)

    folder = args.corpus or (PACKAGE_CORPUS if args.packages else DEFAULT_CORPUS)
    if not args.corpus and not glob.glob(os.path.join(folder, "**", "*.py"), recursive=True):
        (build_package_corpus if args.packages else build_corpus)(folder)
    files = corpus_files(folder, args.limit)
    if not files:
        print(f"no .py files in {folder}", file=sys.stderr)
        return 2
    src = stage(files, folder)
    staged = [os.path.join(src, os.path.relpath(f, folder)) for f in files]
    scratch = os.path.dirname(src)
    # a snapshot of the package: every run times the same code (and the same cache key)
    package = os.path.join(scratch, "pkg")
    shutil.copytree(os.path.join(REPO, "shapecheck"), os.path.join(package, "shapecheck"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    # byte-compiled once, as an installed package is: start-up is timed, compiling the linter is not
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(package, "shapecheck")], check=True)
    env = dict(os.environ, PYTHONPATH=package + os.pathsep + os.environ.get("PYTHONPATH", ""))
    shapecheck = [sys.executable, "-m", "shapecheck", "lint", "--jobs", "1", "--exit-zero", "--format", "json"]
    try:
        parse_wall, parse_cpu, lines = bare_parse(staged)
        print(f"corpus: {len(files)} files, {lines} lines (from {folder})\n", flush=True)
        header = f"{'what':<44} {'wall s':>9} {'cpu s':>9} {'vs parse':>9}"
        print(header)
        print("-" * len(header))
        print(_row("libcst.parse_module (bare, in-process)", parse_wall, parse_cpu, parse_cpu), flush=True)

        lint_wall, lint_cpu, proc = timed_command(shapecheck + ["--no-cache", "src"], scratch, env)
        if proc.returncode not in (0,):
            print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
        import json

        found = json.loads(proc.stdout or "[]")
        print(_row("shapecheck lint --jobs 1 --no-cache", lint_wall, lint_cpu, parse_cpu), flush=True)
        if args.cross_file:
            alone = [sys.executable, "-c", _WITHOUT_LINKS] + shapecheck[3:] + ["--no-cache", "src"]
            alone_wall, alone_cpu, alone_proc = timed_command(alone, scratch, env)
            alone_found = json.loads(alone_proc.stdout or "[]")
            print(_row("  the same, cross-file pass off", alone_wall, alone_cpu, parse_cpu), flush=True)
            print(f"  cross-file pass: {lint_cpu - alone_cpu:+.2f}s cpu "
                  f"({(lint_cpu - alone_cpu) / parse_cpu:+.2f}x parse); findings "
                  f"{len(found)} with it, {len(alone_found)} without", flush=True)
        cold_wall, cold_cpu, _ = timed_command(shapecheck + ["src"], scratch, env)
        print(_row("shapecheck lint --jobs 1 (cold cache)", cold_wall, cold_cpu, parse_cpu), flush=True)
        warm_wall, warm_cpu, _ = timed_command(shapecheck + ["src"], scratch, env)
        print(_row("shapecheck lint --jobs 1 (cache warm)", warm_wall, warm_cpu, parse_cpu), flush=True)

        tf_wall = tf_cpu = None
        if not args.no_torchfix:
            command = torchfix_command()
            if command is not None:
                tf_wall, tf_cpu, tf_proc = timed_command(command + ["--jobs", "1", "src"], scratch)
                if tf_proc.returncode not in (0, 1):
                    print(tf_proc.stderr[-2000:], file=sys.stderr)
                print(_row("torchfix --jobs 1", tf_wall, tf_cpu, parse_cpu), flush=True)

        print()
        print(f"shapecheck findings: {len(found)} "
              f"({', '.join(sorted({d['code'] for d in found})) or 'none'})")
        print(f"lint / bare parse (cpu):            {lint_cpu / parse_cpu:6.2f}x   (target <= 1.5x)")
        if tf_cpu:
            print(f"lint / torchfix (cpu):              {lint_cpu / tf_cpu:6.2f}x   (target < 1x)")
        print(f"first run / cached run (wall):      {cold_wall / warm_wall:6.1f}x   (target >= 20x)")
        if args.breakdown:
            parts = breakdown(staged, package)
            print(
                f"\nin-process breakdown ({parts['rules']} rules): parse {parts['parse']:.2f}s, "
                f"walk {parts['walk']:.2f}s ({parts['walk'] / max(parts['parse'], 1e-9):.2f}x parse), "
                f"positions {parts['positions']:.2f}s in {parts['files_with_findings']} files "
                f"with {parts['findings']} findings; walker crashed on {parts['walk_crashes']} files"
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
