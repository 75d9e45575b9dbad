"""Power under noise: which faulty engines of tests/faults the metric that names
each catches, by the exact McNemar test against the correct engine its own tests use, on
generator 5's worlds: on the oracle arm and under ``--noise good`` on each of seeds 42, 43
and 44, and under ``--noise typical`` pooled over the three (tests/faults/fault_power.py).

``CAUGHT`` pins the verdicts: one character per column, 'y' caught (b > c, p < 0.05), '.'
not. When the worlds change, re-print it with
``.venv/bin/python benchmarks/bench_fault_power.py --pin`` (which prints the discordant
counts and p-values too) and paste it here, stating in the CHANGELOG which verdicts moved
and why.
"""

from __future__ import annotations

import inspect

import faulty_engines as f2
import faulty_engines_g5 as g5
import faulty_engines_v3 as f3
import faulty_engines_v4 as f4
import faulty_engines_v5 as f5
import pytest
from fault_power import COLUMNS, CORRECT, FAULTS, caught, verdicts

pytestmark = pytest.mark.slow

CAUGHT = {  # oracle-42 oracle-43 oracle-44 good-42 good-43 good-44 typical-pooled
    'g2 DecoyFiler': 'yyyy.yy',
    'g2 ReAddDeletes': 'yyy.y.y',
    'g2 CollateralInvalidation': 'yyyyyyy',
    'g2 Tripler': 'yyyyyyy',
    'g2 RawLines': 'y.yy..y',
    'g2 NeverAbstains': 'yyyyyyy',
    'g3 ArrivalOrder': 'yyyy.yy',
    'g3 SingleValued': 'yyyyy..',
    'g3 TemporaryAsPermanent': 'yyy.yyy',
    'g3 ScheduledNow': 'yyyyyyy',
    'g3 CorrectionIgnored': '..y...y',
    'g3 RetractionIgnored': 'yyy.y.y',
    'g3 RelayAdopted': 'yyyyyyy',
    'g3 WebAsConversation': 'yyyyyyy',
    'g3 OtherPersonAsUser': 'yyyy.yy',
    'g3 HypotheticalAsUser': 'yyyyyyy',
    'g3 SlotBlindInvalidation': 'yyyyyyy',
    'g3 ReAddDeletes': 'yyyyyyy',
    'g3 CollateralInvalidation': 'yyyyyyy',
    'g3 Tripler': 'yyyyyyy',
    'g3 RawLines': 'y.yy...',
    'g3 NeverAbstains': 'yyyyyyy',
    'v5 MemberRetiredOnAdd': 'yyyyy..',
    'v5 SetEndedOnDrop': 'yyyyyyy',
    'v5 MostSimilarRetired': '...yyyy',
    'g4 DependenciesIgnored': 'yyyyyyy',
    'g4 SuccessorsIgnored': 'yyyyyyy',
    'g4 PremiseBySimilarity': 'yyyyyyy',
    'g4 RootOnlyRetraction': 'yyyy...',
    'g4 DatedByDelivery': 'yyyyyyy',
    'g5 DatedByDeliveryG5': 'yyyy.yy',
    'g5 MisreadRelativeDate': 'yyyyyyy',
    'g5 ForgetIgnored': 'yyyyyyy',
    'g5 RedeliveryAsNew': 'yyyyyyy',
    'g5 FirstValueWins': 'yyyyyyy',
    'g5 LastStatementWins': '....y.y',
}

NOT_IN_THE_TABLE = {f2.UserScoped, f2.UserBlind, f5._Retiring}
"""A correct engine for a shared store, the fault that needs one (several users), and the
base of the v5 faults."""


def test_every_faulty_engine_is_in_the_table() -> None:
    """Each engine class the fault modules define is a correct engine of ``CORRECT``, a
    fault of ``FAULTS`` or one of ``NOT_IN_THE_TABLE``."""
    correct = {c for c in CORRECT.values() if inspect.isclass(c)}
    listed = {engine for _name, engine, _c, _w in FAULTS}
    for module in (f2, f3, f4, f5, g5):
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and hasattr(obj, "deposit") and hasattr(obj, "query"):
                assert obj in correct | listed | NOT_IN_THE_TABLE, (module.__name__, name)
    assert len(listed) == len(FAULTS) == len(CAUGHT)


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> dict:
    return verdicts(tmp_path_factory.mktemp("power"))


def test_the_verdicts_are_pinned(table) -> None:
    assert len(COLUMNS) == 7
    assert caught(table) == CAUGHT, \
        "re-pin with: .venv/bin/python benchmarks/bench_fault_power.py --pin"
