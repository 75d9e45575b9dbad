"""Generator 4's figures on hand-built probes: exact numerators and denominators, the
by-kind keys, and that reports of older worlds do not carry them."""

from __future__ import annotations

from rotbench.scoring import compute_metrics, score_world
from rotbench.scoring.metrics import FAMILIES, better_label, families_for
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.scoring.tally import tally_world
from rotbench.world.models import Truth

POOLS = {"manager": ["Ingrid", "Tomasz", "Leopold", "Ravindra"],
         "gym": ["Ironworks", "Gritbox", "Pulsegym"]}
NEW = ("successor_first", "dependent_stale_first", "premise_stale_first",
       "cascade_asserted_at_k")


def truth(attribute: str = "manager", **kw) -> Truth:
    base = dict(attribute=attribute, day=30, current="Leopold", superseded=["Ravindra"],
                poison=[], changed=True, latest_phrasing="restatement")
    return Truth(**{**base, **kw})


SUCCESSOR = truth(cases=["successor"])
UNKNOWN = truth(current=None, superseded=["Ravindra"], unknown_since=14,
                previously="Ravindra", cases=["contingent"])
IMPLIED = truth(current=None, superseded=["Ravindra"], unknown_since=14,
                previously="Ravindra", cases=["implied"])
CASCADE = truth("gym", current="Pulsegym", superseded=["Gritbox"], cascaded=["Gritbox"],
                cases=["cascade"])


def hits(*texts: str) -> list[ScoredHit]:
    return [ScoredHit(rank=i + 1, text=t) for i, t in enumerate(texts)]


def probe(t: Truth, texts: tuple[str, ...], premise: str | None = None) -> ProbeRecord:
    return ProbeRecord(day=30, attribute=t.attribute, question="q", truth=t,
                       hits=hits(*texts), premise=premise)


def world(probes: list[ProbeRecord], generator: str = "4") -> WorldProbes:
    return score_world(WorldProbes(seed=1, days=90, generator_version=generator,
                                   fingerprint="x", pools=POOLS, probes=probes), "v4")


PROBES = [
    # successor: the declared value first (right), then the old one first (wrong)
    probe(SUCCESSOR, ("The user's manager will be Leopold once their employer changes.",)),
    probe(SUCCESSOR, ("The user's manager is Ravindra.", "The user's manager is Leopold.")),
    # contingent: old value as current (wrong), as history (right), nothing (abstains)
    probe(UNKNOWN, ("The user's manager is Ravindra.",)),
    probe(UNKNOWN, ("The user's manager was previously Ravindra.",
                    "The user's manager is Ravindra.")),
    probe(IMPLIED, ()),
    # premise: the named old value served as current first (wrong), the current first
    probe(SUCCESSOR, ("The user's manager is Ravindra.",), premise="Ravindra"),
    probe(SUCCESSOR, ("The user's manager is Leopold.", "The user's manager is Ravindra."),
          premise="Ravindra"),
    # cascade: the cascaded value anywhere in the top k as current (wrong); as history (fine)
    probe(CASCADE, ("The user's gym is Pulsegym.", "The user's gym is Gritbox.")),
    probe(CASCADE, ("The user's gym is Pulsegym.", "The user's gym was previously Gritbox.")),
]


def test_figures_of_generator_4() -> None:
    bundle = compute_metrics([world(PROBES)])
    got = {m: (bundle.metrics[m].numerator, bundle.metrics[m].denominator) for m in NEW}
    assert got == {"successor_first": (2, 4), "dependent_stale_first": (1, 3),
                   "premise_stale_first": (1, 2), "cascade_asserted_at_k": (1, 2)}
    kinds = {k: {m: (r.numerator, r.denominator) for m, r in v.items()}
             for k, v in bundle.by_kind.items() if k in (
                 "successor", "contingent", "implied", "premise", "cascade", "relative_date")}
    assert kinds == {
        "successor": {"successor_first": (2, 4), "current_first": (2, 4)},
        "contingent": {"dependent_stale_first": (1, 2), "stale_over_current": (1, 2)},
        "implied": {"dependent_stale_first": (0, 1), "stale_over_current": (0, 1)},
        "premise": {"premise_stale_first": (1, 2), "current_first": (1, 2),
                    "stale_over_current": (1, 2)},
        "cascade": {"cascade_asserted_at_k": (1, 2), "current_first": (2, 2),
                    "stale_over_current": (0, 2)},
        "relative_date": {"late_stale_first": (0, 0), "stale_over_current": (0, 0),
                          "stale_retained_at_k": (0, 0), "current_first": (0, 0)},
    }
    assert bundle.by_checkpoint[30]["successor_first"].numerator == 2
    assert tally_world(world(PROBES)).bundle() == bundle


def test_older_worlds_do_not_carry_them() -> None:
    bundle = compute_metrics([world(PROBES, generator="3")])
    assert not set(NEW) & set(bundle.metrics)
    assert "successor" not in bundle.by_kind and "premise" not in bundle.by_kind
    assert tally_world(world(PROBES, generator="3")).bundle() == bundle


def test_family_and_direction() -> None:
    assert FAMILIES["Dependents"] == NEW
    assert better_label("successor_first") == "higher"
    assert [better_label(m) for m in NEW[1:]] == ["lower"] * 3

    class R:
        def __init__(self, metrics):
            self.metrics = metrics

    assert "Dependents" not in families_for([R({"current_first": 1})])
    assert "Dependents" in families_for([R({"successor_first": 1})])


def test_a_premise_question_on_the_day_a_value_became_current_is_not_in_current_lost() -> None:
    """current_lost counts a value current at an EARLIER checkpoint; a premise question
    shares its checkpoint with the attribute's own question, which is not earlier."""
    t15 = truth(day=15, current="Ravindra", superseded=[], changed=False)
    t30 = truth(day=30)  # Leopold current from day 30 on
    probes = [ProbeRecord(day=15, attribute="manager", question="q", truth=t15,
                          hits=hits("The user's manager is Ravindra.")),
              ProbeRecord(day=30, attribute="manager", question="q", truth=t30, hits=[]),
              ProbeRecord(day=30, attribute="manager", question="p", truth=t30, hits=[],
                          premise="Ravindra")]
    lost = compute_metrics([world(probes)]).metrics["current_lost"]
    assert (lost.numerator, lost.denominator) == (0, 0)
    later = [*probes, ProbeRecord(day=45, attribute="manager", question="q",
                                  truth=truth(day=45), hits=[])]
    lost = compute_metrics([world(later)]).metrics["current_lost"]
    assert (lost.numerator, lost.denominator) == (1, 1)
