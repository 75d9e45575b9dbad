"""Every shipped record this environment can run equals a cold run today, figure for
figure, on every shipped arm (issue 59, item 1): the peers take minutes, so this runs only
when asked, `make verify-published` (ROTBENCH_VERIFY_PUBLISHED=1;
ROTBENCH_VERIFY_ENGINES=a,b restricts the engines). Hindsight's, from its own environment:
`make verify-published-hindsight` (``python -m rotbench.published.regenerate --verify``),
or this file there with ROTBENCH_VERIFY_ENGINES=hindsight; its record is a repeated run,
checked by its departures from the record's steady questions (``rotbench.published.verify``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from published_helpers import run_arm, shipped_differences  # noqa: E402

from rotbench.published.models import ARMS  # noqa: E402
from rotbench.published.regenerate import installed  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("ROTBENCH_VERIFY_PUBLISHED") != "1",
                       reason="minutes of peer runs: make verify-published"),
]


@pytest.mark.parametrize("key", list(ARMS))
def test_every_installed_engines_record_equals_a_run(key, tmp_path) -> None:
    only = [e for e in os.environ.get("ROTBENCH_VERIFY_ENGINES", "").split(",") if e]
    engines = only or installed()
    problems = {}
    for report in run_arm(key, engines, tmp_path):
        found = shipped_differences(key, report)
        if found:
            problems[report.selection.engine_source] = found[:5]
    assert problems == {}
