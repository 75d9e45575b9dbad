"""What one ``rotbench run`` asks for, validated before any work starts.

``RunSpec`` crosses the boundary into the Prefect flow (as JSON parameters), so it is a small
pydantic model holding only plain values; engine config overrides stay as ``KEY=VALUE``
strings and are parsed by ``EngineConfig.with_overrides``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rotbench._util.validation import first_error
from rotbench.perception.noisy.profile import NoiseDigest
from rotbench.world.generators.base import DEFAULT_GENERATOR, GENERATOR_VERSIONS, MAX_DAYS, MIN_DAYS

Arm = Literal["oracle", "noisy", "probe", "live"]
ARMS: tuple[str, ...] = ("oracle", "noisy", "probe", "live")
SCRIPTED_ARMS: tuple[str, ...] = ("oracle", "noisy")
"""The arms whose perception is scripted: no model call, and a world's outcome is a pure
function of its inputs (so it is cached as a whole)."""
DEFAULT_ENGINE = "reference"
DEFAULT_SEEDS: tuple[int, ...] = (42, 43, 44)
MAX_SEED = 2**31 - 1
"""Seeds are stored as 32-bit integers in the DuckDB file."""
MAX_INT32 = 2**31 - 1
"""Largest value of a DuckDB INTEGER column (top k, days, ranks are stored as such)."""
MAX_WORLDS = 256
MAX_MODEL_CONCURRENCY = 256
MAX_REPEAT = 20
"""Upper bound of ``--repeat``: each repeat runs every engine stage again on every world."""
"""Upper bounds of ``--max-worlds`` and ``--concurrency`` (the model settings' own bound)."""
CACHE_SUBFOLDERS: tuple[str, ...] = ("prefect", "calls", "embeddings", "scratch")
"""Folders a run writes under the cache folder (stage results, model calls, vectors, the
engines' scratch space)."""


class SpecError(ValueError):
    """A bad run request; the message is one line naming the flag or key."""


class RunSpec(BaseModel):
    """The full request of one run. Units: days, top-k hits, worlds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    arm: Arm = "oracle"
    seeds: list[int] = Field(default_factory=lambda: list(DEFAULT_SEEDS))
    days: int = 90
    top_k: int = 10
    trust_policy: bool = True
    generator: str = Field(default=DEFAULT_GENERATOR, description="World generator version.")
    volume: int = Field(default=1, description="Generators 3 to 5: filler multiplier "
                        "(1 to 100).")
    scorer: str | None = Field(default=None, description="None = the generator's default "
                               "scorer (v6 for generator 3 and later, else v3).")
    overrides: list[str] = Field(default_factory=list, description="Engine config KEY=VALUE.")
    record_claim_text: bool = True
    cache_dir: str = "cache"
    reports_dir: str = "reports"
    db_path: str | None = Field(default=None, description="None = <reports_dir>/rotbench.duckdb.")
    out_path: str | None = None
    max_concurrent_worlds: int = Field(default=4, ge=1)
    model_concurrency: int = Field(
        default=8, ge=1, description="Model calls in flight at once for the whole run: every "
        "world, stage and process together (each holds a slot from request to response, "
        "SDK retries included).")
    model_concurrency_limit: str | None = Field(
        default=None, description="Name of a Prefect global concurrency limit (created by "
        "the user on the server) to draw model-call slots from instead; None: a bound of "
        "model_concurrency made for this run.")
    batch: bool | None = Field(
        default=None, description="Send the paid stages' calls as Message Batches (half "
        "price; extraction one batch per run, checks in rounds). None: the settings file's "
        "choice (off by default).")
    batch_timeout_seconds: float | None = Field(
        default=None, description="Longest wait for one batch, seconds; None: the settings "
        "file's (default 24 h).")
    engines: list[str] = Field(
        default_factory=lambda: [DEFAULT_ENGINE],
        description="Engines under test: registered names or module:factory, in report order.",
    )
    engine_timeout_seconds: float = Field(
        default=60.0, gt=0, le=86_400.0,
        description="Limit on one engine call (deposit or query), seconds (rotbench._util.ranges)."
    )
    llm_settings: str | None = Field(
        default=None, description="JSON file of model settings (probe, live arms): models, "
        "prices, prompt versions, budget. None: $ROTBENCH_LLM_SETTINGS, else the defaults.")
    budget_usd: float | None = Field(
        default=None, description="US dollars this run may spend on model calls; None: the "
        "settings file's budget, else no limit.")
    budget_calls: int | None = Field(
        default=None, description="Model calls this run may make; None: the settings file's "
        "budget, else no limit.")
    dask: str | None = Field(
        default=None, description="Run the worlds on Dask: 'local' (a LocalCluster of worker "
        "processes on this machine) or a scheduler address such as tcp://host:8786. None: "
        "threads in this process.")
    dask_workers: int = Field(default=2, description="Worker processes of a 'local' cluster.")
    html_path: str | None = Field(
        default=None, description="Write the HTML report of the run's reports here at the end.")
    rulings_path: str | None = Field(
        default=None, description="Rulings file for the real pairs; None = "
        "<reports_dir>/rulings.jsonl when it exists.")
    real_pairs: bool = Field(default=True, description="False: read no rulings (--no-real-pairs).")
    users: int = Field(default=1, description="Personas sharing one store per world (--users); "
                       "1: the single-user world, as before.")
    user_ids: list[str] = Field(default_factory=list, description="The personas' ids "
                                "(--user-id); empty: user-1 .. user-N.")
    noise: str | None = Field(
        default=None, description="Noisy arm: the noise profile, a shipped name (good, "
        "typical, spec-live) or a profile file; None on the other arms.")
    noise_digest: NoiseDigest = None
    repeat: int = Field(default=1, description="Times each engine runs on each world, with "
                        "fresh state (--repeat, 1 to MAX_REPEAT); perception is computed once.")

    @property
    def scripted(self) -> bool:
        """True on the arms of scripted perception (``SCRIPTED_ARMS``): no model call."""
        return self.arm in SCRIPTED_ARMS

    def user_id_list(self) -> list[str]:
        """The personas' ids of a shared store (``user_ids``, else user-1 .. user-N)."""
        from rotbench.world.shared import default_user_ids

        return list(self.user_ids) if self.user_ids else default_user_ids(self.users)

    @property
    def scorer_version(self) -> str:
        """The scorer in force: ``scorer``, else the generator's default
        (``rotbench.scoring.lexicons.default_scorer``)."""
        from rotbench.scoring.lexicons import default_scorer

        return self.scorer or default_scorer(self.generator)

    def world_inputs(self) -> tuple:
        """What names a world besides its seed, for cache keys: (generator, days), plus the
        volume when it is not 1 (so keys of earlier runs stay as they were)."""
        return (self.generator, self.days) + ((self.volume,) if self.volume != 1 else ())

    def rulings_file(self) -> Path | None:
        """The rulings file this run reads, or None (``--no-real-pairs``, or no file given
        and none in the reports folder)."""
        if not self.real_pairs:
            return None
        from rotbench.rulings import find_rulings

        return find_rulings(self.rulings_path, self.reports_dir)

    @property
    def db(self) -> Path:
        if self.db_path is None:
            return Path(self.reports_dir) / "rotbench.duckdb"
        return Path(self.db_path)

    def engine_overrides(self) -> list[str]:
        """Overrides in force, the trust flag included (``--no-trust-policy``)."""
        extra = [] if self.trust_policy else ["trust.policy=false"]
        return [*self.overrides, *extra]


def default_cache_dir() -> str:
    """``ROTBENCH_CACHE_DIR`` when set (an empty value is refused later), else ``cache``
    (relative to the working directory)."""
    return os.environ.get("ROTBENCH_CACHE_DIR", RunSpec.model_fields["cache_dir"].default)


def build_spec(*, force: bool = False, cache_flag: str = "--cache-dir", **fields) -> RunSpec:
    """A validated RunSpec from command-line values (see ``validate_spec``).

    ``force``: an existing report at ``--out`` may be replaced. ``cache_flag``: how the
    cache folder was chosen (``--cache-dir`` or ``ROTBENCH_CACHE_DIR``), named in errors.
    Raises SpecError (one line, naming the flag or variable) on any bad value.
    """
    arm = fields.get("arm", "oracle")
    if arm not in ARMS:
        raise SpecError(f"--arm: unknown arm {arm!r} (available: {', '.join(ARMS)})")
    for name, flag, top in (("max_concurrent_worlds", "--max-worlds", MAX_WORLDS),
                            ("model_concurrency", "--concurrency", MAX_MODEL_CONCURRENCY)):
        value = fields.get(name, 1)
        if not 1 <= value <= top:
            raise SpecError(f"{flag} must be between 1 and {top}, got {value}")
    from rotbench._util.ranges import MAX_ENGINE_TIMEOUT_SECONDS, range_problem

    if problem := range_problem("--engine-timeout", fields.get("engine_timeout_seconds", 1.0),
                                0.0, MAX_ENGINE_TIMEOUT_SECONDS, low_open=True):
        raise SpecError(problem)  # also NaN and inf, before RunSpec sees them
    fields.update(_noise_fields(arm, fields.get("noise")))
    spec = RunSpec(**fields)
    validate_spec(spec, force=force, cache_flag=cache_flag)
    return spec


def _noise_fields(arm: str, noise: str | None) -> dict:
    """``rotbench.perception.noisy.arm.noise_fields``, its error as a SpecError."""
    from rotbench.perception.noisy.arm import noise_fields
    from rotbench.perception.noisy.profile import ProfileError

    try:
        return noise_fields(arm, noise)
    except ProfileError as exc:
        raise SpecError(str(exc)) from None


_FLAGS = {"reports_dir": "--reports-dir", "db_path": "--db", "out_path": "--out",
          "html_path": "--html", "rulings_path": "--rulings", "llm_settings": "--llm-settings",
          "engines": "--engine", "overrides": "--set", "user_ids": "--user-id",
          "model_concurrency_limit": "--concurrency-limit", "dask": "--dask"}


def _check_text(spec: RunSpec, cache_flag: str) -> None:
    """Refuse a path or value that is not UTF-8 text (a file name with bytes that do not
    decode, which Python carries as lone surrogates such as ``\udcff``): the run's
    settings travel as JSON (Prefect's API, the report, the pending marker), and JSON
    holds UTF-8 text only. Without this the run failed half-way with a UnicodeEncodeError."""
    from rotbench._util.safe_text import printable

    for name, value in spec.model_dump().items():
        for text in value if isinstance(value, list) else [value]:
            if not isinstance(text, str):
                continue
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                flag = cache_flag if name == "cache_dir" else _FLAGS.get(
                    name, "--" + name.replace("_", "-"))
                raise SpecError(f"{flag} {printable(text, 200)}: not UTF-8 text (the name "
                                "holds bytes that do not decode); rotbench records paths "
                                "and settings as JSON, which holds UTF-8 only: choose "
                                "another name") from None


def validate_spec(spec: RunSpec, *, force: bool = False, cache_flag: str = "--cache-dir") -> None:
    """Check every flag before any work: days, k, seeds, scorer, config keys, and every
    folder and file the run will write (see ``check_run_outputs``).

    Raises SpecError with a one-line message naming the flag. Imports only light modules
    (the scorer registry and the engine config), never torch or prefect.
    """
    _check_text(spec, cache_flag)
    _noise_fields(spec.arm, spec.noise)  # a bad profile, or --noise off the noisy arm
    if spec.noise_digest is not None and spec.arm != "noisy":  # e.g. a deployment parameter
        raise SpecError(f"noise_digest: a noise profile's digest belongs to the noisy arm "
                        f"only (this run is --arm {spec.arm})")
    _check_world_flags(spec)
    _check_runner_flags(spec)
    _check_seeds_and_volume(spec)
    _check_engines(spec)
    _check_paths(spec, cache_flag)
    check_run_outputs(spec, force=force, cache_flag=cache_flag)


def _check_world_flags(spec: RunSpec) -> None:
    """--generator, --days (by the generator's own limits) and --top-k."""
    if spec.generator not in GENERATOR_VERSIONS:
        known = ", ".join(GENERATOR_VERSIONS)
        raise SpecError(f"--generator: unknown generator {spec.generator!r} (available: {known})")
    if spec.days < MIN_DAYS:
        raise SpecError(f"--days must be at least {MIN_DAYS}, got {spec.days}")
    from rotbench.world.generators.base import days_problem

    problem = days_problem(spec.generator, spec.days)
    if problem:
        raise SpecError(f"--days: {problem}")
    if spec.days > MAX_DAYS:
        raise SpecError(f"--days must be at most {MAX_DAYS}, got {spec.days}")
    if not 1 <= spec.top_k <= MAX_INT32:
        raise SpecError(f"--top-k must be between 1 and {MAX_INT32}, got {spec.top_k}")


def _check_runner_flags(spec: RunSpec) -> None:
    """The budget, the call gate, batches, Dask and the model settings file."""
    for flag, value in (("--budget-usd", spec.budget_usd), ("--budget-calls", spec.budget_calls)):
        if value is not None and not value >= 0:
            raise SpecError(f"{flag} must be 0 or more, got {value}")
    if spec.model_concurrency_limit is not None and (
            not spec.model_concurrency_limit.strip()
            or any(c in spec.model_concurrency_limit for c in "/%&<>")):
        raise SpecError(f"--concurrency-limit: {spec.model_concurrency_limit!r} is not a "
                        "Prefect concurrency limit name (non-empty, none of / % & < >)")
    if spec.model_concurrency_limit is not None and spec.arm not in ("probe", "live"):
        raise SpecError(f"--concurrency-limit bounds model calls, which only --arm probe "
                        f"and live make (this run is --arm {spec.arm})")
    if spec.batch_timeout_seconds is not None and not spec.batch_timeout_seconds > 0:
        raise SpecError(f"--batch-timeout must be a number of seconds above 0, got "
                        f"{spec.batch_timeout_seconds}")
    if not 1 <= spec.repeat <= MAX_REPEAT:
        raise SpecError(f"--repeat must be between 1 and {MAX_REPEAT}, got {spec.repeat}")
    if spec.dask_workers < 1:
        raise SpecError(f"--dask-workers must be at least 1, got {spec.dask_workers}")
    from rotbench._util.ranges import spec_problems

    if problems := spec_problems(spec):  # the upper bounds, inf and NaN (rotbench._util.ranges)
        raise SpecError(problems[0])
    if spec.dask is not None and (problem := dask_address_problem(spec.dask)):
        raise SpecError(problem)
    if spec.llm_settings is not None and not Path(spec.llm_settings).is_file():
        what = ("not a regular file" if Path(spec.llm_settings).exists()
                else "no such file")  # a folder or a device was called missing
        raise SpecError(f"--llm-settings {spec.llm_settings}: {what}")


HOST_PORT_TRANSPORTS = ("tcp", "tls", "ws", "wss")
"""Dask transports whose address is a host and a port (checked, and tried before a run)."""


def dask_address_problem(address: str) -> str | None:
    """Why ``--dask ADDRESS`` names no Dask scheduler, in one line (None: 'local', or an
    address Dask itself parses with a transport it knows, e.g. tcp://host:8786). A bad
    scheme used to surface as Prefect's traceback once the flow had started."""
    from rotbench._util.safe_text import printable

    shown = printable(address, 120)
    if address == "local":
        return None
    if "://" not in address and ":" not in address:
        return (f"--dask: expected 'local' or a scheduler address such as tcp://host:8786, "
                f"got {shown!r}")
    from distributed.comm.addressing import parse_address
    from distributed.comm.registry import backends

    try:
        scheme, location = parse_address(address, strict=False)
    except ValueError as exc:
        return f"--dask {shown}: {printable(str(exc), 200)}"
    if scheme not in backends:
        return (f"--dask {shown}: unknown transport {printable(scheme, 40)!r} (Dask knows "
                f"{', '.join(sorted(backends))})")
    if scheme in HOST_PORT_TRANSPORTS:
        from distributed.comm.addressing import parse_host_port

        try:
            parse_host_port(location)
        except (ValueError, TypeError) as exc:
            return f"--dask {shown}: not a host and port ({printable(str(exc), 120)})"
    return None


def dask_unreachable(address: str, timeout_seconds: float = 5.0) -> str | None:
    """Why the scheduler at ``address`` (tcp, tls, ws or wss, with a port) cannot be
    reached, in one line, after trying to open a connection for ``timeout_seconds``; None
    when it answered, for 'local', and for transports without a host and port. Checked
    before the flow starts: Dask itself waits 30 s and the run then failed with Prefect's
    tracebacks."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port

    if address == "local":
        return None
    scheme, location = parse_address(address, strict=False)
    if scheme not in HOST_PORT_TRANSPORTS:
        return None
    try:
        host, port = parse_host_port(location)
    except ValueError:
        return None
    try:
        socket.create_connection((host, port), timeout=timeout_seconds).close()
    except OSError as exc:
        from rotbench._util.safe_text import printable

        return (f"--dask {printable(address, 120)}: no scheduler answers there "
                f"({printable(exc.strerror or str(exc) or type(exc).__name__, 120)})")
    return None


def _check_seeds_and_volume(spec: RunSpec) -> None:
    """--seed (at least one, distinct, in range), the users, --generator and --volume."""
    if not spec.seeds:
        raise SpecError("--seed: at least one seed is required")
    if len(set(spec.seeds)) != len(spec.seeds):
        raise SpecError(f"--seed: duplicate seeds in {spec.seeds}")
    for seed in spec.seeds:
        if not 0 <= seed <= MAX_SEED:
            raise SpecError(f"--seed must be between 0 and {MAX_SEED}, got {seed}")
    validate_users(spec)
    if spec.generator not in GENERATOR_VERSIONS:
        known = ", ".join(GENERATOR_VERSIONS)
        raise SpecError(f"--generator: unknown generator {spec.generator!r} (available: {known})")
    from rotbench.world.generators.base import MAX_DAYS_TIMES_VOLUME, MAX_VOLUME

    if not 1 <= spec.volume <= MAX_VOLUME:
        raise SpecError(f"--volume must be between 1 and {MAX_VOLUME}, got {spec.volume}")
    if spec.days * spec.volume > MAX_DAYS_TIMES_VOLUME:
        raise SpecError(f"--days {spec.days} with --volume {spec.volume}: a world of days x "
                        f"volume {spec.days * spec.volume} is beyond the largest rotbench "
                        f"builds ({MAX_DAYS_TIMES_VOLUME}: --days 3650 --volume 10, or --days "
                        "365 --volume 100)")
    from rotbench.world.generators.registry import generator_spec, volume_generators

    if spec.volume > generator_spec(spec.generator).max_volume:
        raise SpecError(f"--volume: applies to generators {volume_generators()} only (this "
                        f"run uses generator {spec.generator})")


def _check_engines(spec: RunSpec) -> None:
    """--engine (each resolved and its factory checked), --scorer and --set."""
    from rotbench.reference.config import ConfigError, EngineConfig
    from rotbench.scoring import SCORER_VERSIONS

    if not spec.engines:
        raise SpecError("--engine: at least one engine is required")
    if len(set(spec.engines)) != len(spec.engines):
        raise SpecError(f"--engine: duplicate engines in {spec.engines}")
    from rotbench.contract.registry import EngineError
    from rotbench.engines.registry import check_factory, resolve

    configurable = False
    for name in spec.engines:  # every engine before any work: module, factory, callable
        try:
            configurable |= resolve(name).separable
            check_factory(name)
        except EngineError as exc:
            raise SpecError(f"--engine: {exc}") from None
    if spec.overrides and not configurable:
        raise SpecError("--set configures the reference engine, which this run does not run "
                        "(add --engine reference, or drop --set)")
    if spec.scorer is not None and spec.scorer not in SCORER_VERSIONS:
        known = ", ".join(SCORER_VERSIONS)
        raise SpecError(f"--scorer: unknown scorer {spec.scorer!r} (available: {known})")
    try:
        EngineConfig().with_overrides(spec.engine_overrides())
    except ConfigError as exc:
        raise SpecError(f"--set: {exc}") from None


def _check_paths(spec: RunSpec, cache_flag: str) -> None:
    """No empty path; --out with one engine only; --rulings readable and not contradicted."""
    for flag, value in ((cache_flag, spec.cache_dir), ("--reports-dir", spec.reports_dir),
                        ("--db", spec.db_path), ("--out", spec.out_path)):
        if value is not None and not value.strip():
            raise SpecError(f"{flag}: an empty path is not allowed")
    for flag, value in ((cache_flag, spec.cache_dir), ("--reports-dir", spec.reports_dir),
                        ("--db", spec.db_path), ("--out", spec.out_path),
                        ("--html", spec.html_path), ("--rulings", spec.rulings_path)):
        if value:
            _check_lookable(flag, Path(value))
    if spec.out_path and len(spec.engines) > 1:
        raise SpecError(f"--out names one report file, but the {len(spec.engines)} engines "
                        "each write a report of their own: drop --out (each report is "
                        "<reports-dir>/<run id>-<engine>.json) or run one engine per command")
    if spec.rulings_path is not None:
        if not spec.real_pairs:
            raise SpecError("--rulings and --no-real-pairs contradict each other")
        if not spec.rulings_path.strip():
            raise SpecError("--rulings: an empty path is not allowed")
    rulings = spec.rulings_file()
    if rulings is not None:
        from rotbench.rulings import RulingsError, read_rulings

        try:
            read_rulings(rulings)
        except RulingsError as exc:
            raise SpecError(f"--rulings {exc}") from None


def validate_users(spec: RunSpec) -> None:
    """Check ``--users`` and ``--user-id``: a count from 1 to ``MAX_USERS``, on the oracle
    arm when above 1 (a shared store's model calls are not priced yet), and as many distinct
    ids as users, each one rotbench can store (``user_id_problem``). Raises SpecError; an
    id is shown escaped and cut, never as it came."""
    from rotbench._util.safe_text import printable
    from rotbench.world.shared import MAX_USERS, user_id_problem

    if not 1 <= spec.users <= MAX_USERS:
        raise SpecError(f"--users must be between 1 and {MAX_USERS}, got {spec.users}")
    if spec.users > 1 and spec.arm != "oracle":
        raise SpecError(f"--users {spec.users}: a shared store runs on the oracle arm only "
                        "(its model calls are not priced yet)")
    if not spec.user_ids:
        return
    if spec.users == 1:
        raise SpecError("--user-id: names the personas of a shared store, so it needs "
                        "--users 2 or more (one user's world has no ids to name)")
    if len(spec.user_ids) != spec.users:
        raise SpecError(f"--user-id: {len(spec.user_ids)} ids given for --users {spec.users}")
    for uid in spec.user_ids:
        problem = user_id_problem(uid)
        if problem:
            raise SpecError(f"--user-id {printable(uid, 40)!s}: {problem}")
    if len(set(spec.user_ids)) != len(spec.user_ids):
        raise SpecError("--user-id: the ids must be distinct")


def check_run_outputs(spec: RunSpec, *, force: bool = False,
                      cache_flag: str = "--cache-dir") -> None:
    """Every place a run writes, checked for real before it starts: the cache folder and its
    sub-folders, the reports folder, the DuckDB file and ``--out`` (no two the same file,
    never a file of another kind, an existing report only with ``force``).

    Raises SpecError naming the flag.
    """
    from rotbench._util.outputs import OutputError, check_outputs

    cache = Path(spec.cache_dir)
    check_writable_dir(cache_flag, cache)
    for sub in CACHE_SUBFOLDERS:
        check_writable_dir(cache_flag, cache / sub)
    check_writable_dir("--reports-dir", Path(spec.reports_dir))
    check_writable_file("--db", spec.db)
    outputs = [("--db", spec.db, "duckdb")]
    if spec.out_path:
        check_writable_file("--out", Path(spec.out_path))
        outputs.append(("--out", Path(spec.out_path), "report"))
    try:
        check_outputs(outputs, force=force)
    except OutputError as exc:
        raise SpecError(str(exc)) from None
    if spec.db.is_file():
        check_duckdb_file(spec.db)
    if spec.html_path is not None:
        check_html_path(spec)


def check_html_path(spec: RunSpec) -> None:
    """Raise SpecError unless ``--html`` can take the run's HTML page (see
    ``rotbench.results.presentation.html.page_path_problem``) and is none of the run's other
    outputs."""
    from rotbench.results.presentation.html import page_path_problem

    path = Path(spec.html_path or "")
    if not str(spec.html_path).strip():
        raise SpecError("--html: an empty path is not allowed")
    for flag, other in (("--db", spec.db), ("--out", spec.out_path)):
        if other is not None and Path(other).absolute() == path.absolute():
            raise SpecError(f"--html {path}: the same file as {flag}")
    problem = page_path_problem(path)
    if problem:  # run's --force is for --out only: the page is never forced
        problem = problem.replace("(--force replaces it)", "(choose another --html)")
        raise SpecError(f"--html {path}: {problem}")
    check_writable_file("--html", path)


def _check_lookable(flag: str, path: Path) -> None:
    """Raise SpecError when the system would refuse to look at ``path`` at all: a name in it
    longer than the file system takes (checked before anything exists, since a missing
    folder on the way hides it from ``stat``), or a ``stat`` failing for another reason
    than the path not existing yet (a folder on the way that cannot be searched, a loop of
    links)."""
    from rotbench._util.outputs import nearest_existing

    try:
        name_max = os.pathconf(nearest_existing(path, folders_only=True), "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    for part in path.parts:
        if len(os.fsencode(part)) > name_max:
            raise SpecError(f"{flag} {path}: a name in it is {len(os.fsencode(part))} bytes "
                            f"long, more than the file system takes ({name_max})")
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise _cannot_look(flag, path, exc) from None


def _cannot_look(flag: str, path: Path, exc: OSError) -> SpecError:
    """The one line for a path the system will not even look at (a name longer than the
    file system allows, a folder on the way that cannot be searched)."""
    return SpecError(f"{flag} {path}: cannot be looked at ({exc.strerror or exc})")


def check_writable_dir(flag: str, path: Path) -> None:
    """Raise SpecError unless ``path`` is (or can be created as) a writable directory
    (probed by creating and removing a temporary entry), or the system cannot look at it."""
    from rotbench._util.outputs import probe_writable_dir

    try:
        reason = probe_writable_dir(path)
    except OSError as exc:
        raise _cannot_look(flag, path, exc) from None
    if reason is not None:
        raise SpecError(f"{flag} {path}: {reason}")


def check_writable_file(flag: str, path: Path) -> None:
    """Raise SpecError unless ``path`` can be written as a file (its folder may not exist):
    nothing there yet, or a regular file (``/dev/stdout``, a FIFO or a device is refused:
    rotbench writes its files atomically, beside them, and only regular paths take that),
    or when the system cannot look at it."""
    try:
        is_dir = path.is_dir()
    except OSError as exc:
        raise _cannot_look(flag, path, exc) from None
    if is_dir:
        raise SpecError(f"{flag} {path}: is a directory, not a file")
    check_writable_dir(flag, path.parent)
    from rotbench._util.regular import not_regular

    if why := not_regular(path):
        raise SpecError(f"{flag} {path}: {why}; give the path of a file")


def check_duckdb_file(path: Path) -> None:
    """Raise SpecError unless the existing ``path`` is a DuckDB file a run can write to
    (a file locked by another process passes: the run waits for it at the end)."""
    from rotbench.results.database.tables import check_database

    try:
        check_database(path)
    except ValueError as exc:
        raise SpecError(f"--db {path}: {exc}") from None


def spec_from_parameters(params: dict | RunSpec) -> RunSpec:
    """A validated RunSpec from a flow run's ``spec`` parameter (a ``RunSpec``, or the
    mapping of its fields a deployment gives), checked by the same rules as the CLI's.

    Raises SpecError (one line, naming the parameter) on any bad value.
    """
    from pydantic import ValidationError

    if isinstance(params, RunSpec):
        params = params.model_dump()
    try:
        spec = RunSpec.model_validate(params)
    except ValidationError as exc:
        where, msg = first_error(exc, "(parameters)")
        raise SpecError(f"parameter {where}: {msg}") from None
    # a scheduled run rewrites its out_path each time, as an output option does (the CLI
    # checked --force before it started the flow)
    validate_spec(spec, force=True)
    return spec
