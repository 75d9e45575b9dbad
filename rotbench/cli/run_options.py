"""The options of ``rotbench run``, one annotated type each (typer reads the ``Annotated``
metadata), so that the command itself reads as its parameter list and one call. Paths are
taken as text: typer would turn an empty path into "." silently.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer


class OutputFormat(StrEnum):
    table = "table"
    json = "json"



OptArm = Annotated[
        str, typer.Option(help="oracle or noisy (free), probe or live (model calls).")
    ]
OptNoise = Annotated[str | None, typer.Option(
        help="Noisy arm: noise profile, good, typical (default) or spec-live, or a "
        "profile .json file.")]
OptSeed = Annotated[
        list[int] | None,
        typer.Option("--seed", help="World seed; repeat for several. Default: 42 43 44."),
    ]
OptDays = Annotated[int, typer.Option(
        help="Simulated days per world (at least 30; generator 4 asks each new kind five "
        "times or more from 90).")]
OptTopK = Annotated[int, typer.Option("--top-k", help="Hits kept per question.")]
OptNoTrustPolicy = Annotated[
        bool, typer.Option("--no-trust-policy", help="Neutral trust for every source.")
    ]
OptGenerator = Annotated[
        str, typer.Option(help="World generator version: 1 to 5 (default: 5; 1 to 4 "
                          "reproduce their pinned figures).")
    ]
OptVolume = Annotated[
        int, typer.Option(help="Generators 3 to 5: multiply the filler sessions (1 to 100).")
    ]
OptScorer = Annotated[str | None, typer.Option(
        help="Scorer version (default: v6 for generator 3 and later, else "
             "v3).")]
OptSet = Annotated[
        list[str] | None,
        typer.Option("--set", help="Engine config KEY=VALUE, e.g. query.relevance_floor=0.3."),
    ]
OptFormat = Annotated[
        OutputFormat,
        typer.Option("--format", help="table (default) or json (the report of record on "
                     "stdout; with several engines one JSON array of their reports)."),
    ]
OptOut = Annotated[str | None, typer.Option(help="Also write the report here.")]
OptDb = Annotated[
        str | None, typer.Option(help="DuckDB results file (default: reports/rotbench.duckdb).")
    ]
OptCacheDir = Annotated[
        str | None,
        typer.Option("--cache-dir", help="Cache folder (default: $ROTBENCH_CACHE_DIR or ./cache)."),
    ]
OptReportsDir = Annotated[
        str, typer.Option("--reports-dir", help="Where the reports (<run-id>-<engine>.json) go.")
    ]
OptNoClaimText = Annotated[
        bool, typer.Option("--no-claim-text", help="Do not record hit texts in the report.")
    ]
OptIntervals = Annotated[bool, typer.Option(help="Show 95% Wilson intervals.")]
OptEstimate = Annotated[
        bool, typer.Option(help="Print projected model calls, tokens and dollars, then exit.")
    ]
OptYes = Annotated[bool, typer.Option("--yes", help="Skip the cost confirmation.")]
OptMaxWorlds = Annotated[int, typer.Option("--max-worlds", help="Worlds run at once.")]
OptConcurrency = Annotated[
        int, typer.Option(help="Model calls in flight at once for the whole run (probe and "
                          "live arms): all worlds, stages and Dask workers together; a call "
                          "holds its slot from request to response, SDK retries included.")
    ]
OptConcurrencyLimit = Annotated[
        str | None,
        typer.Option("--concurrency-limit", help="Draw those slots from this Prefect global "
                     "concurrency limit instead (create it on the server first: prefect gcl "
                     "create NAME --limit 8); shared by every run naming it."),
    ]
OptEngine = Annotated[
        list[str] | None,
        typer.Option("--engine", help="Engine under test: a registered name (see `rotbench "
                     "engines`) or module:factory; repeat to compare. Default: reference."),
    ]
OptEngineTimeout = Annotated[
        float, typer.Option("--engine-timeout", help="Limit on one engine call, seconds.")
    ]
OptHtml = Annotated[
        str | None,
        typer.Option("--html", help="At the end, write the HTML report here (with every engine "
                     "of the run side by side; plots also beside it as SVG and PNG)."),
    ]
OptLlmSettings = Annotated[
        str | None,
        typer.Option("--llm-settings",
                     help="JSON file: models, prices (US$ per million tokens), prompt "
                     "versions, budget (default: $ROTBENCH_LLM_SETTINGS)."),
    ]
OptBudgetUsd = Annotated[
        float | None,
        typer.Option("--budget-usd", help="Refuse a paid run projected above this many US "
                     "dollars, and stop calling once it is spent (default: the settings file's)."),
    ]
OptBudgetCalls = Annotated[
        int | None,
        typer.Option("--budget-calls", help="The same limit in model calls."),
    ]
OptBatch = Annotated[
        bool | None,
        typer.Option("--batch/--no-batch", help="Send the paid stages' calls as Message "
                     "Batches: half price, answers within 24 h (extraction one batch per "
                     "run, checks in rounds). Default: the settings file's (off)."),
    ]
OptBatchTimeout = Annotated[
        float | None,
        typer.Option("--batch-timeout", help="Longest wait for one batch, seconds (default "
                     "86400, the API's own expiry); past it the run stops and a rerun "
                     "collects the batch."),
    ]
OptDask = Annotated[
        str | None,
        typer.Option("--dask", help="Run the worlds on Dask: bare --dask starts a LocalCluster "
                     "of worker processes; --dask tcp://HOST:8786 uses that scheduler."),
    ]
OptDaskWorkers = Annotated[
        int, typer.Option("--dask-workers", help="Worker processes of the local cluster.")
    ]
OptForce = Annotated[
        bool, typer.Option("--force", help="Let --out replace an existing report.")
    ]
OptStrict = Annotated[
        bool, typer.Option("--strict", help="Exit 3 when the run is degraded (model calls "
                           "failed, so some checks or extractions are missing).")
    ]
OptRulings = Annotated[
        str | None,
        typer.Option("--rulings", help="Rulings on real pairs (JSON Lines) to score the checks "
                     "against (probe, live). Default: <reports-dir>/rulings.jsonl if present."),
    ]
OptNoRealPairs = Annotated[
        bool, typer.Option("--no-real-pairs", help="Read no rulings file.")
    ]
OptUsers = Annotated[
        int, typer.Option("--users", help="Personas sharing ONE store per world (oracle arm); "
                          "the report adds cross-user leak figures. Default 1: one user.")
    ]
OptEach = Annotated[
        bool, typer.Option("--each", help="Several engines: print every engine's full report "
                           "before the comparison (default: one comparison table per family).")
    ]
OptUserId = Annotated[
        list[str] | None,
        typer.Option("--user-id", help="The personas' ids, one per --users (default user-1, "
                     "user-2, ...): opaque data, never a path."),
    ]
OptRepeat = Annotated[
        int, typer.Option("--repeat", help="Run each engine N times on the same worlds, with "
                          "fresh state each time (perception is computed once); the report "
                          "adds each figure's median and range, the flaky questions and "
                          "pass^N. Default 1.")
    ]
