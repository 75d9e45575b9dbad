"""``make published``: run every installed built-in engine on the default worlds on each
shipped arm and write ``rotbench/published/data/<arm>.json.gz``.

    python -m rotbench.published.regenerate [--engine NAME]... [--arm KEY]...
        [--runs-dir DIR] [--out DIR] [--from-runs] [--page PAGE.md [--page-only]] [--verify]

Each arm is one ``rotbench run`` of every engine (the command is kept in each manifest,
without the folder options, which do not change a figure), and one more with ``--repeat N``
for the engines that vary from run to run (``REPEATS``: Hindsight, three runs); the reports
go under ``--runs-dir/<arm>/`` and are turned into the shipped records
(``rotbench.published.build``).
A record already shipped for an engine not run here (Hindsight, run from its own
environment: ``make published-hindsight``) is kept while its questions are still the
arm's; one on other worlds is dropped and named. ``--from-runs`` re-reads the reports of
the last run under ``--runs-dir`` instead of running again. ``--verify`` writes nothing: it
runs every engine once and compares each record with the shipped one (``verify``; exit 1
when one differs; `make verify-published-hindsight` for Hindsight from its own environment).
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
from rotbench.published.store import DATA, PublishedError, arm_path, load_arm

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


REPEATS: dict[str, int] = {"hindsight": 3}
"""``--repeat`` of the engines that vary from run to run: their record is a repeated run
(each figure's median and range, the flaky questions, pass^N); every other engine's is a
single run. Engines of different counts run as separate ``rotbench run`` commands."""


def run_command(key: str, engines: list[str], repeat: int = 1) -> list[str]:
    """The ``rotbench run`` arguments of one arm (without the folder options)."""
    arm, noise = ARMS[key]
    args = ["rotbench", "run", "--arm", arm, *(["--noise", noise] if noise else [])]
    for engine in engines:
        args += ["--engine", engine]
    return [*args, "--engine-timeout", f"{TIMEOUT:g}",
            *(["--repeat", str(repeat)] if repeat > 1 else [])]


def by_repeat(engines: list[str], repeats: dict[str, int] | None = None) -> dict[int, list[str]]:
    """``engines`` grouped by their ``--repeat`` count (``REPEATS``; 1 for the rest), single
    runs first, each group in the given order."""
    repeats = REPEATS if repeats is None else repeats
    groups: dict[int, list[str]] = {}
    for engine in engines:
        groups.setdefault(repeats.get(engine, 1), []).append(engine)
    return dict(sorted(groups.items()))


def _run(key: str, engines: list[str], runs_dir: Path, repeats: dict[str, int] | None = None
         ) -> list[tuple[Path, str]]:
    """Run one arm into ``runs_dir/<key>``: one ``rotbench run`` per ``--repeat`` count
    (``by_repeat``). Its reports are listed in ``last-run.txt``, each group's files followed
    by a line '# <command>'. Returns every report with the command that made it."""
    folder = runs_dir / key
    folder.mkdir(parents=True, exist_ok=True)
    exe = Path(sys.executable).parent / "rotbench"
    listing = []
    for repeat, group in by_repeat(engines, repeats).items():
        before = set(folder.glob("*.json"))
        command = run_command(key, group, repeat)
        full = [str(exe), *command[1:], "--reports-dir", str(folder), "--db",
                str(folder / "rotbench.duckdb"), "--cache-dir", str(runs_dir / "cache")]
        print(f"published: {key}: {shlex.join(command)}", file=sys.stderr, flush=True)
        done = subprocess.run(full, check=False, stdout=subprocess.DEVNULL)
        if done.returncode != 0:
            raise SystemExit(f"published: {key}: the run failed (exit {done.returncode}; its "
                             f"errors above); nothing written for arm {key}")
        listing += [p.name for p in sorted(set(folder.glob("*.json")) - before)]
        listing.append("# " + shlex.join(command))
    (folder / "last-run.txt").write_text("\n".join(listing) + "\n", encoding="utf-8")
    return _last_run(key, runs_dir)


def _last_run(key: str, runs_dir: Path) -> list[tuple[Path, str]]:
    """The reports of the last run of arm ``key`` under ``runs_dir``, each with its command
    (the '# <command>' line after it in ``last-run.txt``)."""
    out: list[tuple[Path, str]] = []
    waiting: list[Path] = []
    for line in (runs_dir / key / "last-run.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            out += [(path, line[2:]) for path in waiting]
            waiting = []
        elif line:
            waiting.append(runs_dir / key / line)
    return out


def verify(keys: list[str], engines: list[str], runs_dir: Path, out: Path,
           from_runs: bool = False) -> int:
    """Run each arm again (every engine once) and compare every record it gives with the
    shipped one (``rotbench.published.verify``: figure for figure, or, for a record of a
    repeated run, by its departures from the record's steady questions; a repeated run of
    yours is checked run by run); prints each difference, and each figure outside a
    repeated record's range, and returns how many records differ (an engine with no shipped
    record counts as one)."""
    from rotbench.published.build import record_of
    from rotbench.published.verify import departures, differences, range_notes
    from rotbench.results.repeats import run_reports
    from rotbench.results.verify import load_checked

    differ = 0
    for key in keys:
        if not from_runs:
            _run(key, engines, runs_dir, repeats={})
        shipped = load_arm(key, out)
        by_name = {r.manifest.engine_source: r for r in shipped.records}
        for path, _ in _last_run(key, runs_dir):
            report = load_checked(path, lambda line: print(line, file=sys.stderr))
            name = report.selection.engine_source
            if name not in by_name:
                print(f"published: {key}: {name}: no shipped record", file=sys.stderr)
                differ += 1
                continue
            questions, record = list(shipped.questions), by_name[name]
            for run in run_reports(report):
                fresh = record_of(run, questions, "")
                found = differences(record, fresh, questions)
                if record.report.repeats is None:
                    how = "equal figure for figure"
                else:
                    moved, steady = departures(record, fresh, questions)
                    how = (f"{moved} of {steady} steady questions answered otherwise (its "
                           f"runs alone: {', '.join(map(str, record.lone_departures or []))})")
                print(f"published: {key}: {name}: "
                      f"{f'{len(found)} differences' if found else how}", file=sys.stderr)
                for line in found:
                    print(f"  {line}", file=sys.stderr)
                for line in range_notes(record, fresh):
                    print(f"  outside its runs' range (not a difference): {line}",
                          file=sys.stderr)
                differ += bool(found)
    return differ


def regenerate(keys: list[str], engines: list[str], runs_dir: Path, out: Path,
               from_runs: bool = False) -> dict[str, int]:
    """Run and write each arm's file; returns its size in bytes by arm key."""
    from rotbench.results.verify import load_checked

    sizes = {}
    for key in keys:
        ran = _run(key, engines, runs_dir) if not from_runs else _last_run(key, runs_dir)
        reports = [(load_checked(p, lambda line: print(line, file=sys.stderr)), command)
                   for p, command in ran]
        # a missing file keeps nothing; a file that cannot be read stops here (PublishedError)
        # rather than dropping every record it holds
        kept = list(load_arm(key, out).records) if arm_path(key, out).is_file() else []
        made = arm_file(reports)
        same = [r for r in kept if r.manifest.worlds == made.records[0].manifest.worlds
                and r.manifest.generator_version == made.records[0].manifest.generator_version]
        for r in kept:
            if r not in same and r.manifest.engine_source not in {
                    m.manifest.engine_source for m in made.records}:
                print(f"published: {key}: dropped {r.manifest.engine_source} (other worlds; "
                      "run it again)", file=sys.stderr)
        data = arm_bytes(arm_file(reports, same))
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
        try:
            regenerate(args.arm or list(ARMS), engines, args.runs_dir, args.out,
                       args.from_runs)
        except PublishedError as exc:
            raise SystemExit(f"published: {exc}") from None
    if args.page is not None:
        size = write_page(args.page, args.out)
        print(f"published: wrote {args.page} ({size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
