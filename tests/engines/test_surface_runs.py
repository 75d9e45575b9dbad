"""Whole runs of question-reading plug-ins (``tests.pipeline.surface_engine``)
in their worker processes and in the run's process (``ROTBENCH_ENGINES_IN_PROCESS=1``) give
the same reports: every figure, every world's hits, and the same surface in ``config``
(but the handles' type names).

Before the change, the reference engine as a plug-in (``surface_engine:reference``) failed at
set-up in its worker (its handle had no ``stamp``), and the small probe engine
(``surface_engine:make_engine``) got ``current_first`` 110/195 and ``answered_unanswerable``
91/91 there against 111/195 and 19/91 in the run's process (seeds 42-44, 90 days, oracle
arm). The second run of each pair starts from the first one's stored vectors, so that both
rank by the same floats (MiniLM's float32 output varies in its last bits with how texts are
batched)."""

from __future__ import annotations

import shutil

import pytest
from flow_helpers import figures, run_flow

from rotbench.engines.host.engine_worker import OFF_ENV

pytestmark = pytest.mark.slow

E = "tests.pipeline.surface_engine:"
ENGINES = [E + "reference", E + "make_engine"]
VARYING = {"run_id", "created_at", "stages", "timings"}
"""Report fields that differ between any two runs."""


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """``pair(name, **flow_fields)``: the reports of the run in workers and of the run in
    process, each by engine name."""

    def run(name: str, **fields) -> tuple[dict, dict]:
        reports = []
        roots = [tmp_path_factory.mktemp(f"{name}-worker"),
                 tmp_path_factory.mktemp(f"{name}-in-process")]
        for root, in_process in zip(roots, (False, True), strict=True):
            if in_process:
                shutil.copytree(roots[0] / "cache" / "embeddings", root / "cache" / "embeddings")
            with pytest.MonkeyPatch.context() as patch:
                if in_process:
                    patch.setenv(OFF_ENV, "1")
                else:
                    patch.delenv(OFF_ENV, raising=False)
                _, outcome = run_flow(root, engines=ENGINES, **fields)
            assert outcome.failures == []
            reports.append({r.selection.engine: r for r in outcome.reports})
        return reports[0], reports[1]

    return run


def same_reports(worker, local) -> None:
    """Everything equal but the run's identity and times, and the handles' type names."""
    assert sorted(worker) == sorted(local) == ["reference-plugin", "surface-probe"]
    for name in worker:
        a, b = (r.model_dump(mode="json", exclude=VARYING) for r in (worker[name], local[name]))
        types = [(c.pop("surface.extractor_type"), c.pop("surface.checker_type"))
                 for c in (a["selection"]["config"], b["selection"]["config"])]
        assert types[0] == ("QuestionReaderHandle", "CheckerHandle")
        assert a == b


def test_question_readers_report_the_same_in_their_workers(pair) -> None:
    """Seeds 42-44, 90 days, generator 4, oracle arm: the reference engine as a plug-in gets
    195/195 ``current_first`` and answers none of the 91 unanswerable questions wherever it
    runs; the probe engine 111/195 and 19/91."""
    worker, local = pair("oracle", seeds=[42, 43, 44], days=90, generator="4")
    same_reports(worker, local)
    got = {name: {m: figures(r)[m] for m in ("current_first", "answered_unanswerable")}
           for name, r in worker.items()}
    assert got == {"reference-plugin": {"current_first": (195, 195),
                                        "answered_unanswerable": (0, 91)},
                   "surface-probe": {"current_first": (111, 195),
                                     "answered_unanswerable": (19, 91)}}


def test_the_noisy_arm_reports_the_same_in_workers(pair) -> None:
    """Seed 42, 30 days, generator 3, the noisy arm's ``good`` profile: the misread questions
    are the arm's own, read in the worker by the run's extractor."""
    worker, local = pair("noisy", seeds=[42], days=30, generator="3", arm="noisy",
                         noise="good")
    same_reports(worker, local)
    assert worker["surface-probe"].selection.config["surface.extractor_stamp"].startswith(
        "oracle-extractor/2+noisy/")
