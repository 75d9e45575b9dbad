"""Question noise: seeded errors in reading a world's questions (noise logic ``noisy/2``).

A question is read once per world (an engine caches its frame by the question's text), so a
misreading applies to every checkpoint that asks it. The opportunities are the world's
distinct asked questions that the oracle reads as asking for the user's own value of a slot
(an attribute's question, and on generator 4 a premise question); a near-miss question
(someone else's value) or an unrelated one (a slot no world fills) is not one. Per question,
in this order:

- ``tense_error`` (every such question): the present-tense question read as asking about
  the past (``tense='past'``), so a reader stops preferring present facts;
- ``subject_split`` (every such question): the user named "User" or "the speaker";
- ``value_as_subject`` (a premise question not already split): the premise value read as
  the subject ("Does Ironworks still ... ?" read as asking about Ironworks).

The other kinds do not apply to a question: it states no fact to omit, distort, decoy, relay
or update, no check reads it, and a question carries no date. Each draw is
``draw(seed, profile digest, "question:" + text, 0, kind)``: deterministic per (seed,
profile, question). The rate is the kind's rate in the profile, the same per opportunity
for a question as for a claim (an assumption: no source measures question reading apart).
"""

from __future__ import annotations

from rotbench.contract.perception import QuestionFrame
from rotbench.perception.noisy.profile import NoiseProfile
from rotbench.perception.noisy.record import InjectedError, NoisePlan, draw
from rotbench.perception.oracle import SUBJECT, OracleExtractor
from rotbench.world.models import World

QUESTION_KINDS: tuple[str, ...] = ("tense_error", "subject_split", "value_as_subject")
"""The kinds a question's reading is an opportunity for, in the order they are drawn."""

QUESTION_URI = "question"
"""``InjectedError.document_uri`` of a question's error (its ``fact_index`` is the question's
position among the world's read questions, first asked first)."""


def _render(frame: QuestionFrame) -> str:
    """A frame as one line, e.g. ``subject='the user' slot='gym' tense='present'``."""
    text = f"subject={frame.subject!r} slot={frame.slot!r} tense={frame.tense!r}"
    return text + (f" premise={frame.premise!r}" if frame.premise else "")


def read_questions(world: World, profile: NoiseProfile, plan: NoisePlan) -> None:
    """Draw the question errors of ``world`` under ``profile`` into ``plan``: the perturbed
    frames (``plan.frames``) and errors (``plan.question_errors``) by question text, and
    the per-kind question counts (``plan.question_opportunities``/``question_injected``,
    also added to the kind's totals). Pure."""
    oracle = OracleExtractor(world)
    keys = {a.key for a in world.attributes}
    asked = [q for q in dict.fromkeys(p.question for p in world.probes)]
    index = 0
    for question in asked:
        frame = oracle.read_question(question)
        if frame is None or frame.subject != SUBJECT or frame.slot not in keys:
            continue
        _read_one(world, profile, plan, question, frame, index)
        index += 1


def _read_one(world: World, profile: NoiseProfile, plan: NoisePlan, question: str,
              frame: QuestionFrame, index: int) -> None:
    """The drawn errors of one question (see the module docstring)."""
    uri = f"{QUESTION_URI}:{question}"

    def hit(kind: str) -> bool:
        plan.question_opportunities[kind] += 1
        plan.opportunities[kind] += 1
        if draw(world.seed, profile.digest, uri, 0, kind) < profile.rate(kind):
            plan.question_injected[kind] += 1
            plan.injected[kind] += 1
            return True
        return False

    def record(kind: str, new: QuestionFrame) -> None:
        plan.question_errors.setdefault(question, []).append(InjectedError(
            id=f"{kind}@{QUESTION_URI}#{index}", kind=kind, document_uri=QUESTION_URI,
            fact_index=index, attribute=frame.slot or "", value=frame.premise or "", day=0,
            before=_render(read), after=_render(new)))

    read = frame
    if hit("tense_error"):
        new = read.model_copy(update={"tense": "past"})
        record("tense_error", new)
        read = new
    if hit("subject_split"):
        name = "User" if draw(world.seed, profile.digest, uri, 0, "subject_split:variant") \
            < 0.5 else "the speaker"
        new = read.model_copy(update={"subject": name})
        record("subject_split", new)
        read = new
    elif frame.premise and hit("value_as_subject"):
        new = read.model_copy(update={"subject": frame.premise})
        record("value_as_subject", new)
        read = new
    if read != frame:
        plan.frames[question] = read
