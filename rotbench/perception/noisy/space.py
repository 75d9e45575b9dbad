"""The closed set of claim sentences the noisy arm can hand an engine on generator 4 (and
on generator 5: the same, plus its forget requests, ``generator_5=True``).

Every noisy sentence is an oracle sentence (``oracle_texts(generator_3=True,
generator_4=True)``), possibly changed by the plan's text-changing steps on a kept own
statement (``plan._Planner.own``), in the plan's order:

1. ``update_missed`` (a present fact): the value replaced by another value of the pool;
2. ``distorted_value``: the value replaced by its first word or by another pool value;
3. ``tense_error`` (a plain present or past sentence): re-rendered in the other tense;
4. ``subject_split`` ("User's ..." / "The speaker's ...") or else, for a plain sentence,
   ``value_as_subject`` ("X is the user's ..." / "X was previously the user's ...").

``date_error``, ``check_error`` and ``omission`` change no text; ``relay_adopted`` and
``decoy_adopted`` give the oracle's present sentence. ``noisy_space`` applies exactly these
steps (the plan's own ``_revalue`` and ``_flip_tense``) to every own-statement sentence the
oracle renders, so it holds every ``noisy_texts`` of a generator-4 run under any profile
(tests/perception/noisy/test_space.py checks seeds 42-44 on the three shipped profiles;
seeds 1-100 were checked once by hand). Its texts outside the oracle's are the shipped
``noisy-g4`` vectors (``rotbench.embedding.bundled``).
"""

from __future__ import annotations

from rotbench.contract.perception import ClaimDraft
from rotbench.perception.noisy.plan import _flip_tense, _revalue
from rotbench.perception.oracle import (
    CONDITIONAL,
    FORGET,
    PAST,
    PRESENT,
    RETRACTED,
    SCHEDULED,
    TEMPORARY,
    oracle_texts,
)
from rotbench.world.pools import ATTRIBUTES
from rotbench.world.pools_v4 import DEPENDENTS


def _own_drafts(generator_5: bool = False) -> list[tuple[ClaimDraft, str, bool]]:
    """(draft, label, plain) of every own statement with a slot the oracle can render on
    generator 4: present, past, scheduled, retracted, temporary and declared successor;
    with ``generator_5``, generator 5's forget requests too."""
    roots = {dep: root for root, deps in DEPENDENTS.items() for dep in deps}
    labels = {a.key: a.label for a in ATTRIBUTES}
    out = []
    for a in ATTRIBUTES:
        templates = [(PRESENT, "present", True), (PAST, "past", True),
                     (SCHEDULED, "present", False), (RETRACTED, "past", False),
                     (RETRACTED, "present", False), (TEMPORARY, "present", False)]
        if a.key in roots:
            templates.append((CONDITIONAL.replace("{root_label}", labels[roots[a.key]]),
                              "present", False))
        if generator_5:
            templates.append((FORGET, "past", False))
        for template, tense, plain in templates:
            for value in a.pool:
                out.append((ClaimDraft(subject="the user", slot=a.key, value=value, tense=tense,
                                       sentence=template.format(label=a.label, value=value),
                                       confidence=0.9), a.label, plain))
    return out


def _revalued(d: ClaimDraft, pool: tuple[str, ...]) -> list[ClaimDraft]:
    """``d`` and each ``distorted_value`` of it (first word, or another pool value)."""
    words = d.value.split()
    others = [v for v in pool if v != d.value] + ([words[0]] if len(words) > 1 else [])
    return [d] + [_revalue(d, v) for v in others]


def _closure(draft: ClaimDraft, label: str, plain: bool, pool: tuple[str, ...]) -> set[str]:
    """Every sentence the plan's steps can make of one own-statement ``draft``."""
    stage = [draft]
    if draft.tense == "present" and plain:  # update_missed: another value it replaces
        stage += [_revalue(draft, v) for v in pool if v != draft.value]
    stage = [d for s in stage for d in _revalued(s, pool)]
    if plain:
        stage += [_flip_tense(d, label) for d in stage]
    texts: set[str] = set()
    for d in stage:
        texts.add(d.sentence)
        if d.sentence.startswith("The user"):
            texts.update(name + d.sentence[len("The user"):] for name in ("User", "The speaker"))
        if plain:
            verb = "is" if d.tense == "present" else "was previously"
            texts.add(f"{d.value} {verb} the user's {label}.")
    return texts


def _oracle(generator_5: bool) -> set[str]:
    return set(oracle_texts(generator_3=True, generator_4=True, generator_5=generator_5))


def noisy_space(generator_5: bool = False) -> list[str]:
    """Every sentence the noisy arm can produce on generator 4 (``generator_5``: on
    generator 5, whose forget requests add their own sentences), sorted (the oracle's
    included)."""
    pools = {a.key: a.pool for a in ATTRIBUTES}
    texts = _oracle(generator_5)
    for draft, label, plain in _own_drafts(generator_5):
        texts |= _closure(draft, label, plain, tuple(pools[draft.slot or ""]))
    return sorted(texts)


def noisy_extra(generator_5: bool = False) -> list[str]:
    """``noisy_space`` minus the oracle's texts of the same generator, sorted (the
    ``noisy-g4`` set; ``generator_5``: the ``noisy-g5`` set)."""
    oracle = _oracle(generator_5)
    return [t for t in noisy_space(generator_5) if t not in oracle]
