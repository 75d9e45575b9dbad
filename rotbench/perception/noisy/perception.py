"""The noisy arm's perception: the oracle's, with a world's ``NoisePlan`` applied.

``NoisyExtractor`` hands out the plan's drafts (the oracle's drafts with the drawn errors
applied) and reads questions as the oracle does except where the plan misreads one;
``NoisyChecker`` answers as the oracle checker except on pairs whose newer claim the plan
marks for ``check_error``, where both answers are flipped when the pair names two values (a
contradiction missed or invented; a past-tense statement read as a new value; a pair naming
one value is never read as a change). Neither calls a model: each holds
a ``RefusingClient``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from rotbench.contract.engine import Document
from rotbench.contract.model_client import ModelClient, RefusingClient
from rotbench.contract.perception import Claim, ClaimDraft, Judgement, QuestionFrame, value_key
from rotbench.perception.arms import ArmRuntime
from rotbench.perception.noisy.plan import NoisePlan, plan_world
from rotbench.perception.noisy.profile import NoiseProfile
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.world.models import World

NOISY_VERSION = "noisy/3"
"""Version of the noise logic (``plan.py``, ``questions.py``, ``NoisyChecker``; 2: questions
are read with noise; 3: no perceived correction, declared change or wrong check names one
value on both sides); it enters both stamps."""

_plans: dict[tuple[str, str], NoisePlan] = {}
_plans_lock = threading.Lock()


def world_plan(world: World, profile: NoiseProfile) -> NoisePlan:
    """``plan_world`` memoised per (world fingerprint, profile digest) in this process
    (extraction and deposit read the same plan); the last 64 plans are kept."""
    key = (world.fingerprint, profile.digest)
    with _plans_lock:
        plan = _plans.get(key)
    if plan is None:
        plan = plan_world(world, profile)
        with _plans_lock:
            if len(_plans) >= 64:
                _plans.pop(next(iter(_plans)))
            _plans[key] = plan
    return plan


def stamps(profile: NoiseProfile) -> tuple[str, str]:
    """(extractor stamp, checker stamp) of the noisy arm under ``profile``: the oracle's
    stamps with the noise version and the profile's digest, so every stage key that reads
    perception changes with the profile."""
    tail = f"+{NOISY_VERSION}:{profile.name}:{profile.digest}"
    return OracleExtractor.stamp + tail, OracleChecker.stamp + tail


class NoisyExtractor:
    """Claims of a world's documents as the noisy arm perceives them (see the module
    docstring). ``extract`` raises KeyError for a document that is not in the world."""

    in_process = True

    def __init__(self, world: World, profile: NoiseProfile,
                 client: ModelClient | None = None) -> None:
        self.client: ModelClient = client if client is not None else RefusingClient()
        self.stamp = stamps(profile)[0]
        self.plan = world_plan(world, profile)
        self._oracle = OracleExtractor(world, self.client)

    @property
    def refused(self) -> int:
        """Model calls refused by the client (0 unless something tried to call a model)."""
        return int(getattr(self.client, "refused", 0))

    def read_question(self, question: str) -> QuestionFrame | None:
        """The frame of ``question``: the plan's misread frame when the question drew an
        error (``rotbench.perception.noisy.questions``), else the oracle's."""
        frame = self.plan.frames.get(question)
        return frame if frame is not None else self._oracle.read_question(question)

    def extract(self, document: Document) -> list[ClaimDraft]:
        """The plan's drafts of ``document``, in turn order."""
        if document.uri not in self.plan.drafts:
            raise KeyError(f"document {document.uri!r} is not a session of this world")
        return list(self.plan.drafts[document.uri])


class NoisyChecker:
    """The oracle's judgements, both flipped on same-slot pairs of two values whose newer
    claim the plan marks (``NoisePlan.wrong_checks``)."""

    def __init__(self, world: World, profile: NoiseProfile,
                 client: ModelClient | None = None) -> None:
        self.client: ModelClient = client if client is not None else RefusingClient()
        self.stamp = stamps(profile)[1]
        self.plan = world_plan(world, profile)

    @property
    def refused(self) -> int:
        """Model calls refused by the client (0 unless something tried to call a model)."""
        return int(getattr(self.client, "refused", 0))

    def judge_pair(self, older: Claim, newer: Claim) -> Judgement:
        """The judgement on one (older, newer) pair. A pair naming one value (case and
        spacing aside) is never flipped: a wrong check may miss or invent a change of value,
        but cannot have a value contradict or replace itself."""
        j = OracleChecker.judge_pair(older, newer)
        wrong = (newer.document_uri, newer.sentence) in self.plan.wrong_checks
        if wrong and older.slot is not None and older.slot == newer.slot \
                and value_key(older.value) != value_key(newer.value):
            return Judgement(contradicts=not j.contradicts,
                             new_value_for_slot=not j.new_value_for_slot)
        return j

    def judge(self, pairs: list[tuple[Claim, Claim]]) -> list[Judgement]:
        """One judgement per (older, newer) pair, in order."""
        return [self.judge_pair(older, newer) for older, newer in pairs]


@dataclass
class NoisyRuntime(ArmRuntime):
    """The runtime of a noisy-arm world: scripted perception with ``profile``'s errors;
    every part holds the refusing client."""

    profile: NoiseProfile | None = field(default=None)

    def perception(self, world: World):
        """The (``NoisyExtractor``, ``NoisyChecker``) pair for ``world``."""
        assert self.profile is not None
        return (NoisyExtractor(world, self.profile, self.refusing),
                NoisyChecker(world, self.profile, self.refusing))
