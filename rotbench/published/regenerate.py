"""``make published``: run every installed built-in engine on the default worlds on each
shipped arm and write ``rotbench/published/data/<arm>.json.gz``.

    python -m rotbench.published.regenerate [--engine NAME]... [--arm KEY]...
        [--runs-dir DIR] [--out DIR] [--from-runs] [--page PAGE.md [--page-only]] [--verify]

Each arm is one ``rotbench run`` of every engine (the command is kept in each manifest,
without the folder options, which do not change a figure); the reports go under
``--runs-dir/<arm>/`` and are turned into the shipped records (``rotbench.published.build``).
A record already shipped for an engine not run here (Hindsight, run from its own
environment: ``make published-hindsight``) is kept while its questions are still the
arm's; one on other worlds is dropped and named. ``--from-runs`` re-reads the reports of
the last run under ``--runs-dir`` instead of running again. ``--verify`` writes nothing: it
compares each run's records with the shipped ones, figure for figure (exit 1 when one
differs; `make verify-published-hindsight` for Hindsight from its own environment).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

from rotbench._util.atomic import write_atomic
from rotbench.published.build import arm_bytes, arm_file
from rotbench.published.models import ARMS
from rotbench.published.store import DATA, PublishedError, load_arm

ENGINES: tuple[str, ...] = (
    "reference", "transcript-rag", "latest-wins", "mem0-raw", "mem0", "particles",
    "benchd:echo", "graphiti", "graphiti-current", "langmem", "langmem-deletes", "hindsight")
"""Every built-in engine, baseline and peer adapter (benchd through its echo adapter)."""

TIMEOUT = 600.0
"""``--engine-timeout`` of the runs: a peer on two shared cores can take minutes a world."""


def installed(engines: tuple[str, ...] = ENGINES) -> list[str]:
    """Those of ``engines`` whose packages this environment has."""
    from rotbench.engines.registry import registered

    known = registered()
    return [e for e in engines if (info := known.get(e.split(":")[0])) and info.installed]


def run_command(key: str, engines: list[str]) -> list[str]:
    """The ``rotbench run`` arguments of one arm (without the folder options)."""
    arm, noise = ARMS[key]
    args = ["rotbench", "run", "--arm", arm, *(["--noise", noise] if noise else [])]
    for engine in engines:
        args += ["--engine", engine]
    return [*args, "--engine-timeout", f"{TIMEOUT:g}"]


def _run(key: str, engines: list[str], runs_dir: Path) -> str:
    """Run one arm into ``runs_dir/<key>`` (the reports it wrote listed in its
    ``last-run.txt``, with the command); returns the command."""
    folder = runs_dir / key
    folder.mkdir(parents=True, exist_ok=True)
    before = set(folder.glob("*.json"))
    command = run_command(key, engines)
    exe = Path(sys.executable).parent / "rotbench"
    full = [str(exe), *command[1:], "--reports-dir", str(folder), "--db",
            str(folder / "rotbench.duckdb"), "--cache-dir", str(runs_dir / "cache")]
    print(f"published: {key}: {shlex.join(command)}", file=sys.stderr, flush=True)
    done = subprocess.run(full, check=False, stdout=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"published: {key}: the run failed (exit {done.returncode}; its "
                         f"errors above); nothing written for arm {key}")
    made = sorted(set(folder.glob("*.json")) - before)
    (folder / "last-run.txt").write_text("\n".join(p.name for p in made) + "\n" +
                                         "# " + shlex.join(command) + "\n", encoding="utf-8")
    return shlex.join(command)


def _last_run(key: str, runs_dir: Path) -> tuple[list[Path], str]:
    lines = (runs_dir / key / "last-run.txt").read_text(encoding="utf-8").splitlines()
    return ([runs_dir / key / line for line in lines if line and not line.startswith("#")],
            next(line[2:] for line in lines if line.startswith("# ")))


def verify(keys: list[str], engines: list[str], runs_dir: Path, out: Path,
           from_runs: bool = False) -> int:
    """Run each arm again and compare every record it gives with the shipped one, figure
    for figure (``rotbench.published.verify``); prints each difference and returns how
    many records differ (an engine with no shipped record counts as one)."""
    from rotbench.published.build import record_of
    from rotbench.published.verify import differences
    from rotbench.results.verify import load_checked

    differ = 0
    for key in keys:
        if not from_runs:
            _run(key, engines, runs_dir)
        shipped = load_arm(key, out)
        by_name = {r.manifest.engine_source: r for r in shipped.records}
        for path in _last_run(key, runs_dir)[0]:
            report = load_checked(path, lambda line: print(line, file=sys.stderr))
            name = report.selection.engine_source
            if name not in by_name:
                print(f"published: {key}: {name}: no shipped record", file=sys.stderr)
                differ += 1
                continue
            found = differences(by_name[name], record_of(report, list(shipped.questions), ""))
            print(f"published: {key}: {name}: "
                  f"{'equal figure for figure' if not found else f'{len(found)} differences'}",
                  file=sys.stderr)
            for line in found:
                print(f"  {line}", file=sys.stderr)
            differ += bool(found)
    return differ


def regenerate(keys: list[str], engines: list[str], runs_dir: Path, out: Path,
               from_runs: bool = False) -> dict[str, int]:
    """Run and write each arm's file; returns its size in bytes by arm key."""
    from rotbench.results.verify import load_checked

    sizes = {}
    for key in keys:
        command = _run(key, engines, runs_dir) if not from_runs else None
        paths, recorded = _last_run(key, runs_dir)
        reports = [load_checked(p, lambda line: print(line, file=sys.stderr)) for p in paths]
        try:
            kept = list(load_arm(key, out).records)
        except PublishedError:
            kept = []
        made = arm_file(reports, command or recorded)
        same = [r for r in kept if r.manifest.worlds == made.records[0].manifest.worlds
                and r.manifest.generator_version == made.records[0].manifest.generator_version]
        for r in kept:
            if r not in same and r.manifest.engine_source not in {
                    m.manifest.engine_source for m in made.records}:
                print(f"published: {key}: dropped {r.manifest.engine_source} (other worlds; "
                      "run it again)", file=sys.stderr)
        data = arm_bytes(arm_file(reports, command or recorded, same))
        write_atomic(out / f"{key}.json.gz", data)
        sizes[key] = len(data)
        print(f"published: wrote {out / f'{key}.json.gz'} ({len(data)} bytes)", file=sys.stderr)
    return sizes


REGENERATE = "make published"
"""The command that rewrites the shipped files and the docs page (named on the page)."""


def write_page(path: Path, folder: Path | None = None) -> int:
    """Write the docs page of the shipped files in ``folder`` (default: the package's) to
    ``path``; returns its size in bytes."""
    from rotbench.published.page import arms_in_order, page_markdown, shipped_rows
    from rotbench.published.store import shipped_arms

    arms = {key: load_arm(key, folder) for key in shipped_arms(folder)}
    text = page_markdown(shipped_rows(arms), arms_in_order(arms), REGENERATE)
    write_atomic(path, text.encode())
    return len(text.encode())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", action="append", default=[])
    parser.add_argument("--arm", action="append", default=[], choices=list(ARMS))
    parser.add_argument("--runs-dir", type=Path, default=Path("build") / "published-runs")
    parser.add_argument("--out", type=Path, default=DATA)
    parser.add_argument("--from-runs", action="store_true")
    parser.add_argument("--page", type=Path, default=None,
                        help="Then write the docs page (markdown) of --out here.")
    parser.add_argument("--page-only", action="store_true", help="Run nothing: only --page.")
    parser.add_argument("--verify", action="store_true",
                        help="Write nothing: compare each run's records with the shipped ones "
                        "(exit 1 when one differs).")
    args = parser.parse_args(argv)
    if args.verify:
        engines = args.engine or installed()
        sys.exit(1 if verify(args.arm or list(ARMS), engines, args.runs_dir, args.out,
                             args.from_runs) else 0)
    if not args.page_only:
        engines = args.engine or installed()
        regenerate(args.arm or list(ARMS), engines, args.runs_dir, args.out, args.from_runs)
    if args.page is not None:
        size = write_page(args.page, args.out)
        print(f"published: wrote {args.page} ({size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
