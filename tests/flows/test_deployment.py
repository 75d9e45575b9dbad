"""The scheduled path as a Prefect user runs it, end to end: ``rotbench server`` on a free
loopback port, a process work pool, ``prefect --no-prompt deploy --all`` from the project's
prefect.yaml, a worker, and ``prefect deployment run ... --watch``: the oracle deployment
twice (the second run all cached), and two runs of the live one against the fake Anthropic
API started together: one refused by its budget, one that runs, kept apart by the
deployment's concurrency limit.

Everything runs in subprocesses with their own PREFECT_HOME; the project folder is a
temporary one holding prefect.yaml and links to the code, so the deployment's relative
paths (working directory, cache, reports) land there. Every wait is bounded, and the server
and the worker are always stopped (their whole process groups, killed after 3 s).

Kept short (73 s on two shared cores at a load average of 3-4, 2026-11-30) by overlapping what
does not depend on each other: the worker starts while the deployments are created, the
cold oracle run and the two live ones start together, and the warm oracle run starts as
soon as the cold one is done, beside the live one. The server offers a live run held back
by the concurrency limit again after 1 s (Prefect's default waits 30 s). Each phase's wall
time is printed at the end (``-s``) and written to ``logs/phases.json``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest
import yaml

from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
from rotbench.testing.stack import KEY, Stack
from rotbench.world import generate_world

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

STAGES = {"generate", "extract", "index", "deposit", "probe", "score"}
SEED = [42]
DAYS = 30
"""One short world keeps the test short; the deployments' defaults are seeds 42 43 44 over
90 days."""
FEW_CHECKS = ["reconcile.cross_document=false"]
PREFECT_YAML = Path(__file__).resolve().parents[2] / "prefect.yaml"


def deployment_spec(name: str, **changes) -> dict:
    """The ``spec`` parameter of deployment ``name`` in prefect.yaml with ``changes``: a run's
    ``spec`` replaces the deployment's whole (Prefect merges parameters by name only), so a
    run restates the deployment's fields it keeps, as a user does."""
    deployments = yaml.safe_load(PREFECT_YAML.read_text())["deployments"]
    [found] = [d for d in deployments if d["name"] == name]
    return {**found["parameters"]["spec"], **changes}


LIVE_PARAMS = ["--param", "spec=" + json.dumps(deployment_spec(
    "live-weekly", seeds=[42], days=DAYS, html_path=None, overrides=FEW_CHECKS))]
"""The live deployment on one seed, the world's checks within a document only (fewer
calls through the fake)."""


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """Every run; returns (stack, {run: (watch exit code or None, flow run id)}, final flow
    run of the first three, the fake's single requests, the fake's batches)."""
    tmp = tmp_path_factory.mktemp("deploy")
    with FakeAnthropic(oracle_answerer(generate_world(42, DAYS, "3"))) as fake:  # prefect.yaml
        stack = Stack(tmp, fake.base_url)
        try:
            stack.start()
            runs: dict[str, tuple[int | None, str]] = {}
            # the cold oracle run and two live ones at once: the live deployment's
            # concurrency limit runs one live run at a time (either may go first)
            runs["oracle-cold"] = (None, stack.create_run("oracle-nightly", spec=deployment_spec(
                "oracle-nightly", seeds=SEED, days=DAYS, html_path=None)))
            # (a seed no other run reads, so its calls are never in the call cache)
            runs["refused"] = (None, stack.create_run("live-weekly", spec=deployment_spec(
                "live-weekly", seeds=[7], days=DAYS, budget_calls=3, html_path=None)))
            live = stack.watch("live-weekly", *LIVE_PARAMS)
            finals = {"oracle-cold": stack.wait_final(runs["oracle-cold"][1])}
            stack.mark("cold oracle final")
            # the same oracle run again once the cold one is done (the live one may still
            # be running): every stage from the cache
            warm = stack.watch("oracle-nightly", "--param", "spec=" + json.dumps(
                deployment_spec("oracle-nightly", seeds=SEED, days=DAYS)))
            runs["live"] = stack.watched(live, "live")
            runs["oracle-warm"] = stack.watched(warm, "warm oracle")
            finals.update({name: stack.wait_final(runs[name][1]) for name in ("refused",
                                                                               "live")})
            stack.phases.append(("warm oracle flow time",
                                 stack.flow_run(runs["oracle-warm"][1])["total_run_time"]))
            yield stack, runs, finals, list(fake.requests), fake.batches
        finally:
            stack.stop()
            print("deployment test phases (s):", stack.phases)


def test_oracle_deployment_writes_report_rows_and_artifact(deployed) -> None:
    stack, runs, finals, _, _ = deployed
    run_id = runs["oracle-cold"][1]
    run = finals["oracle-cold"]
    assert run["state_name"] == "Completed", (stack.logs / "worker.log").read_text()[-4000:]
    assert run["name"] == "oracle reference seeds 42"
    # the deployment's tags, and the engine's added by the run itself
    assert {"arm:oracle", "rotbench", "engine:reference"} <= set(run["tags"])
    reports = stack.project / "reports"
    artifact = stack.artifact(run_id, "rotbench-oracle")
    assert artifact["type"] == "markdown"
    [path] = re.findall(r"report: `([^`]+)`", artifact["data"])
    report = json.loads((stack.project / path).read_text())
    assert (stack.project / path).parent == reports
    assert report["selection"]["arm"] == "oracle" and report["selection"]["seeds"] == SEED
    assert report["selection"]["days"] == DAYS
    recall = report["metrics"]["recall_current_at_k"]
    assert f"({recall['numerator']}/{recall['denominator']}) |" in \
        artifact["data"].split("| recall_current_at_k |")[1].splitlines()[0]
    con = duckdb.connect(str(reports / "rotbench.duckdb"), read_only=True)
    try:
        row = con.execute(
            "select numerator, denominator from metrics where run_id = ? and seed is null "
            "and metric = 'recall_current_at_k' and channel is null and checkpoint is null",
            [report["run_id"]]).fetchone()
        probes = con.execute("select count(*) from probes where run_id = ?",
                             [report["run_id"]]).fetchone()
    finally:
        con.close()
    assert row == (recall["numerator"], recall["denominator"]) and row[1] > 0
    assert probes[0] == sum(w["probes"] for w in report["worlds"]) > 0
    # where the report went, in the flow run's log on the server
    lines = stack.log_lines(run_id, "model calls")
    assert (f"engine reference: report written to {path} (run id {report['run_id']}; "
            "database reports/rotbench.duckdb)") in lines
    assert "model calls 0, dollars US$0.0000" in lines


def test_second_oracle_run_is_one_cached_world_task(deployed) -> None:
    stack, runs, _, _, _ = deployed
    cold = stack.task_states(runs["oracle-cold"][1], expected=len(STAGES) + 1)
    assert runs["oracle-warm"][0] == 0
    warm = stack.task_states(runs["oracle-warm"][1], expected=1)
    names = {f"{s} seed 42" for s in STAGES - {"score"}} | {"reference score seed 42",
                                                            "world seed 42"}
    assert set(cold) == names
    assert {cold[n] for n in names} == {"Completed"}
    # nothing changed: the world is one Cached task run, and no stage is looked at again
    assert warm == {"world seed 42": "Cached"}
    # the deployment's html_path (the cold run was given none): the page, linked
    link = stack.artifact(runs["oracle-warm"][1], "rotbench-html-report")
    page = stack.project / "reports" / "oracle-nightly.html"
    assert page.read_text().startswith("<!DOCTYPE")
    assert page.resolve().as_uri() in link["data"]
    # tasks carry no tags: a tagged task asks for concurrency slots, a round trip each
    task_runs = stack.post("/task_runs/filter",
                           {"flow_runs": {"id": {"any_": [runs["oracle-warm"][1]]}}})
    assert [r["tags"] for r in task_runs] == [[]]


def test_live_deployment_is_refused_above_its_budget(deployed) -> None:
    stack, _, finals, _, _ = deployed
    run = finals["refused"]
    assert run["state_type"] == "FAILED"
    assert "BudgetRefused: refused before any model call: projected" in run["state"]["message"]
    assert "exceed the budget of 3 calls" in run["state"]["message"]
    # the projection and the budget, logged before the refusal
    lines = stack.log_lines(run["id"], "projected cost")
    [projected] = [line for line in lines if line.startswith("projected cost")]
    # the default models' list prices are shipped: the projection is in dollars (issue 38)
    assert re.fullmatch(r"projected cost: \d+ calls, US\$\d+\.\d{4}( \(batch price\))?; "
                        r"budget: 3 calls", projected), projected
    assert int(projected.split()[2]) > 3
    assert not any(line.startswith("model calls") for line in lines)
    artifacts = stack.post("/artifacts/filter", {"flow_runs": {"id": {"any_": [run["id"]]}}})
    assert "rotbench-live" not in [a["key"] for a in artifacts]  # no figures: nothing ran


def test_live_deployment_against_the_fake_api_one_run_at_a_time(deployed) -> None:
    """The live deployment runs in batch mode (``batch: true`` in prefect.yaml): every call
    goes in a Message Batch, extraction first as one batch, then the checks in rounds."""
    stack, runs, finals, requests, batches = deployed
    code, _ = runs["live"]
    live, refused = finals["live"], finals["refused"]
    assert code == 0 and live["state_name"] == "Completed"
    assert live["name"] == "live reference seeds 42"
    assert {"arm:live", "paid", "engine:reference"} <= set(live["tags"])
    # the concurrency limit: one of the two live runs started only once the other ended
    first, second = sorted([live, refused], key=lambda r: r["start_time"])
    assert second["start_time"] >= first["end_time"]
    artifact = stack.artifact(live["id"], "rotbench-live")
    calls = int(re.search(r"model calls: (\d+);", artifact["data"]).group(1))
    assert calls > 0 and "cut short" not in artifact["data"]
    # every call the fake answered was the live run's, in batches: the refused one made none
    assert requests == [] and len(batches) >= 2
    assert sum(len(b.requests) for b in batches) == calls
    assert {r.kind for _, r in batches[0].requests} == {"extract", "question"}
    worker = (stack.logs / "worker.log").read_text()
    assert f"batch {batches[0].id} (extraction): submitted {len(batches[0].requests)} " \
        "requests" in worker
    [path] = re.findall(r"report: `([^`]+)`", artifact["data"])
    report = json.loads((stack.project / path).read_text())
    assert report["usage"]["calls"] == calls and report["selection"]["arm"] == "live"
    lines = stack.log_lines(live["id"], "model calls")
    assert any(re.fullmatch(rf"model calls {calls}, dollars US\$\d+\.\d{{4}}.*", x)
               for x in lines), lines
    assert any(re.fullmatch(rf"projected cost: {calls} calls, US\$\d+\.\d{{4}}"
                            r"( \(batch price\))?; "
                            r"budget: 2500 calls", x) for x in lines), lines
    written = [p for d in ("cache", "reports") for p in (stack.project / d).rglob("*")
               if p.is_file()]
    assert any("calls" in p.parts for p in written)
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path


def test_the_nightly_oracle_run_watches_the_default_generator() -> None:
    """``oracle-nightly`` names today's default generator (5 since issue 53); the paid weekly
    series keeps generator 3. Each deployment's one parameter is the run's request, which
    the flow's ``RunSpec`` takes as it is."""
    from rotbench.run.spec import RunSpec
    from rotbench.world.generators.registry import DEFAULT_GENERATOR

    deployments = yaml.safe_load(PREFECT_YAML.read_text())["deployments"]
    assert [set(d["parameters"]) for d in deployments] == [{"spec"}, {"spec"}]
    generators = {d["name"]: RunSpec(**d["parameters"]["spec"]).generator for d in deployments}
    assert generators == {"live-weekly": "3", "oracle-nightly": DEFAULT_GENERATOR}
    assert DEFAULT_GENERATOR == "5"
