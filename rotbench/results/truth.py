"""A report's truth re-derived from its seed, days and generator.

What a report scores against (each probe's question, attribute, truth, premise and, for a
shared store, user and other users' values; each world's fingerprint, value pools and
never-changing attributes) is not measured: the generator gives it again from the
selection's ``generator_version``, ``days``, ``volume`` and ``users`` and each world's
``seed``. ``truth_problem`` regenerates every world of a report and compares, so a truth
edited in a world file (with the digest the report names re-written) is caught rather than
scored: every command that reads a report's figures refuses such a report
(``rotbench.results.verify``). Regenerating a world takes a fraction of a second; worlds
are kept per process (``derived``), so ``compare``
of reports of one seed generates it once.
"""

from __future__ import annotations

from functools import lru_cache

from rotbench._util.safe_text import printable
from rotbench.results.files.worlds import iter_worlds
from rotbench.results.schema import Report
from rotbench.scoring.models import WorldProbes

WORLD_FIELDS = ("seed", "days", "generator_version", "fingerprint", "pools", "controls",
                "users")
"""The world-level fields of a ``WorldProbes`` that the generator alone decides."""
PROBE_FIELDS = ("day", "attribute", "question", "truth", "unanswerable", "premise", "user",
                "others")
"""The fields of a ``ProbeRecord`` that the generator alone decides (not its hits)."""
SYNTHETIC = "synthetic-1"
"""The generator version of ``rotbench.results.synthetic``'s fixture worlds: a world that
names it is derived from its seed and the selection's days by that module, whatever
generator the selection names (tests record fixture worlds under a real run's settings)."""


class _NoAnswers:
    """An engine that keeps nothing and answers nothing: probing it gives a world's probes
    with their truths and no hits."""

    name = "no-answers"
    version = "0"

    def deposit(self, document) -> None:  # noqa: ANN001 - a Document
        return None

    def query(self, question: str, k: int, user: str | None = None) -> list:
        return []


def skeleton(world: WorldProbes) -> tuple[dict, list[dict]]:
    """What the generator decides in ``world``: (its world-level fields, each probe's
    fields), as plain JSON data."""
    return (world.model_dump(mode="json", include=set(WORLD_FIELDS)),
            [p.model_dump(mode="json", include=set(PROBE_FIELDS)) for p in world.probes])


@lru_cache(maxsize=16)
def derived(seed: int, days: int, generator: str, volume: int,
            users: tuple[str, ...]) -> tuple[dict, list[dict]]:
    """The ``skeleton`` of the world the generator gives for these inputs (``users``: a
    shared store's user ids, () for one user). Raises what generation raises
    (``WorldConfigError``, ``SharedWorldError``) for inputs it refuses."""
    if generator == SYNTHETIC:
        from rotbench.results.synthetic import synthetic_world_probes

        return skeleton(synthetic_world_probes(seed, days, k=1))
    from rotbench.engines.host.guarded import GuardedEngine
    from rotbench.pipeline.generate import generate
    from rotbench.pipeline.probe_shared import probe_any

    world = generate(seed, days, generator, volume, max(len(users), 1), list(users) or None)
    return skeleton(probe_any(world, GuardedEngine(_NoAnswers(), seed, None), 1))


def json_key(probe: dict) -> str:
    """A probe skeleton as one hashable string."""
    import json

    return json.dumps(probe, sort_keys=True)


def _shown(value: object) -> str:
    return printable(repr(value), 160)


def _difference(recorded: tuple[dict, list[dict]], expected: tuple[dict, list[dict]]) -> str:
    """The first difference between two skeletons, in a few words."""
    (head, probes), (want_head, want_probes) = recorded, expected
    for key in WORLD_FIELDS:
        if head.get(key) != want_head.get(key):
            return f"{key}: recorded {_shown(head.get(key))}, derived {_shown(want_head.get(key))}"
    if len(probes) != len(want_probes):
        return f"{len(probes)} probes recorded, {len(want_probes)} derived"
    wrong = [i for i, (a, b) in enumerate(zip(probes, want_probes, strict=True)) if a != b]
    first = probes[wrong[0]]
    want = want_probes[wrong[0]]
    key = next(k for k in PROBE_FIELDS if first.get(k) != want.get(k))
    more = f"; {len(wrong)} probes differ" if len(wrong) > 1 else ""
    return (f"day {first.get('day')}, {_shown(first.get('attribute'))}: {key} recorded "
            f"{_shown(first.get(key))}, derived {_shown(want.get(key))}{more}")


def truth_problem(report: Report) -> str | None:
    """One line when a world of ``report`` is not what its seed, days, generator (and
    volume and users) give; None when every world is. Raises ReportError for a missing or
    damaged world file (``iter_worlds``)."""
    s = report.selection
    volume = getattr(s, "volume", None) or 1
    for world in iter_worlds(report):
        # the fixture worlds of rotbench.results.synthetic stand in any generator's place in tests
        generator = SYNTHETIC if world.generator_version == SYNTHETIC else s.generator_version
        what = f"seed {world.seed}, {s.days} days, generator {printable(generator, 20)}"
        if world.seed not in s.seeds:
            return f"world of seed {world.seed} is not among the selection's seeds"
        try:
            expected = derived(world.seed, s.days, generator, volume, tuple(s.users))
        except ValueError as exc:  # WorldConfigError, SharedWorldError
            return f"{what}: its worlds cannot be derived ({printable(str(exc), 200)})"
        recorded = skeleton(world)
        if generator == SYNTHETIC:  # hand-cut fixtures keep some of its probes: each must be
            known = {json_key(p) for p in expected[1]}  # one of the derived ones
            expected = (expected[0], [p if json_key(p) in known else {} for p in recorded[1]])
        if recorded != expected:
            return (f"its truth is not what {what} give ({_difference(recorded, expected)}): "
                    "a world file was edited")
    return None
