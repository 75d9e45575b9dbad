"""Scripted perception: what the oracle extractor renders and how the oracle checker judges."""

from __future__ import annotations

import pytest

from rotbench.contract.engine import Document
from rotbench.contract.model_client import RefusingClient
from rotbench.contract.perception import FORGET_ANY, Checker, Claim, Extractor
from rotbench.perception.oracle import TEMPLATES, OracleChecker, OracleExtractor
from rotbench.world.invariants import check_pools, value_pattern
from rotbench.world.models import Fact, Turn
from rotbench.world.pools import ATTRIBUTES, all_template_texts
from tests.reference.engine_helpers import POOLS, documents, fact, make_world, page, session


def _claim(slot: str, value: str, tense: str = "present", attribution: str = "own") -> Claim:
    return Claim(
        subject="the user",
        slot=slot,
        value=value,
        tense=tense,
        attribution=attribution,
        sentence=f"{slot} {value}",
        id=f"{slot}-{value}-{tense}-{attribution}",
        document_uri="session://x",
        lineage="conversation",
        contributor="user",
        day=1,
    )


def test_templates_hold_no_pool_value() -> None:
    # the shipped pools against every fixed text a world or an oracle claim can contain
    check_pools({a.key: a.pool for a in ATTRIBUTES}, [*all_template_texts(), *TEMPLATES])
    # the small hand-built pools of these tests (too small for check_pools' size rule)
    test_values = [v for _, p in POOLS.values() for v in p]
    for template in TEMPLATES:
        text = template.replace("{label}", " ").replace("{value}", " ")
        assert [v for v in test_values if value_pattern(v).search(text)] == []


def test_extractor_renders_each_channel() -> None:
    world = make_world(
        [
            session(2, [fact("home_city", "Porto"), fact("car", "Saab", tense="past")]),
            session(3, [fact("diet", "Keto", channel="relay")]),
            session(4, [fact("diet", "Paleo", channel="tool_turn")]),
            page(5, "people-finder.example", [fact("car", "Dacia")]),
        ]
    )
    extractor = OracleExtractor(world)
    got = [
        [(d.sentence, d.tense, d.attribution, d.slot, d.value) for d in extractor.extract(doc)]
        for doc in documents(world)
    ]
    assert got == [
        [
            ("The user's home city is Porto.", "present", "own", "home_city", "Porto"),
            ("The user's car was previously Saab.", "past", "own", "car", "Saab"),
        ],
        [
            (
                "According to a web search result, the user's diet is Keto.",
                "present",
                "source",
                "diet",
                "Keto",
            )
        ],
        [],
        [("The user's car is Dacia.", "present", "own", "car", "Dacia")],
    ]
    drafts = extractor.extract(documents(world)[0])
    assert {(d.subject, d.confidence) for d in drafts} == {("the user", 0.9)}
    assert isinstance(extractor, Extractor)


def test_a_forget_request_carries_the_value_only_when_its_text_names_it() -> None:
    """A reader of "please forget where I live" cannot know which city: value "*"; a
    request that names the city carries it."""
    said = {3: "Please forget where I live.", 4: "Forget that I lived in Porto, please."}
    world = make_world([
        session(day, [Fact(turn=0, attribute="home_city", value="Porto", tense="past",
                           event="forget")]).model_copy(
            update={"turns": [Turn(role="user", text=text)]})
        for day, text in said.items()])
    got = [(d.value, d.tense, d.event, d.sentence) for doc in documents(world)
           for d in OracleExtractor(world).extract(doc)]
    assert got == [
        (FORGET_ANY, "past", "forget", "The user asked the assistant to forget their home city."),
        ("Porto", "past", "forget", "The user asked the assistant to forget their home city.")]


def test_extractor_dedupes_and_refuses_unknown_documents() -> None:
    world = make_world([session(2, [fact("car", "Saab"), fact("car", "Saab")])])
    extractor = OracleExtractor(world)
    assert len(extractor.extract(documents(world)[0])) == 1
    stranger = documents(world)[0].model_copy(update={"uri": "session://elsewhere"})
    with pytest.raises(KeyError, match="session://elsewhere"):
        extractor.extract(Document.model_validate(stranger.model_dump()))


@pytest.mark.parametrize(
    ("older", "newer", "expected"),
    [
        (("car", "Saab"), ("car", "Mazda"), (True, True)),
        (("car", "Saab"), ("car", "saab"), (False, False)),
        (("car", "Saab"), ("diet", "Keto"), (False, False)),
        (("car", "Saab", "past"), ("car", "Mazda"), (False, True)),
        (("car", "Saab"), ("car", "Mazda", "past"), (False, False)),
        (("car", "Saab", "past"), ("car", "Mazda", "past"), (False, False)),
        (("car", "Saab"), ("car", "Mazda", "present", "source"), (False, False)),
        (("car", "Saab", "present", "source"), ("car", "Mazda"), (False, True)),
    ],
)
def test_checker_truth_table(older: tuple, newer: tuple, expected: tuple) -> None:
    [judgement] = OracleChecker().judge([(_claim(*older), _claim(*newer))])
    assert (judgement.contradicts, judgement.new_value_for_slot) == expected


def test_oracle_perception_never_calls_its_client() -> None:
    client = RefusingClient()
    world = make_world([session(2, [fact("car", "Saab")])])
    extractor, checker = OracleExtractor(world, client), OracleChecker(client)
    extractor.extract(documents(world)[0])
    checker.judge([(_claim("car", "Saab"), _claim("car", "Mazda"))])
    assert (extractor.refused, checker.refused, client.refused) == (0, 0, 0)
    assert isinstance(checker, Checker)
    assert (extractor.stamp, checker.stamp) == ("oracle-extractor/2", "oracle-checker/1")


def test_oracle_reads_every_question_a_world_asks() -> None:
    """The question tables stay in step with the generator's questions: every probe of both
    generators gets a frame; only attribute questions name the user and a slot of the world."""
    from rotbench.contract.perception import QuestionFrame
    from rotbench.world import generate_world
    from rotbench.world.pools import (
        NEAR_MISS_FRAMES,
        NEAR_MISS_QUESTIONS,
        UNANSWERABLE_QUESTIONS,
        UNRELATED_SLOTS,
    )

    assert set(NEAR_MISS_FRAMES) == set(NEAR_MISS_QUESTIONS)
    assert set(UNRELATED_SLOTS) == set(UNANSWERABLE_QUESTIONS)
    for generator in ("1", "2"):
        world = generate_world(42, generator=generator)
        reader = OracleExtractor(world)
        keys = {a.key for a in world.attributes}
        for probe in world.probes:
            frame = reader.read_question(probe.question)
            assert isinstance(frame, QuestionFrame), probe.question
            asks_user_slot = frame.subject == "the user" and frame.slot in keys
            assert asks_user_slot == (probe.attribute is not None), probe.question
            if probe.attribute is not None:
                assert frame.slot == probe.attribute
    reader = OracleExtractor(generate_world(42, generator="2"))
    assert reader.read_question("Who is the user?") is None


def test_oracle_texts_hold_every_text_a_scripted_world_embeds() -> None:
    """Pinned: 703 texts (7 templates x 97 pool values, 12 attribute questions, 4 unrelated
    and 8 near-miss questions); every seed's index texts are among them, both generators."""
    from rotbench.contract.extraction import world_documents
    from rotbench.perception.oracle import oracle_texts
    from rotbench.pipeline.extract import extract_concurrently
    from rotbench.pipeline.index import index_texts
    from rotbench.world import generate_world

    texts = oracle_texts()
    assert len(texts) == 703 == 7 * 97 + 12 + 4 + 8
    assert texts == sorted(set(texts))
    seen: set[str] = set()
    for generator in ("1", "2"):
        for seed in (42, 43, 44, 1000):
            world = generate_world(seed, generator=generator)
            extraction = extract_concurrently(world_documents(world),
                                              OracleExtractor(world),
                                              concurrency=1,
                                              questions=[p.question for p in world.probes])
            seen.update(index_texts(world, extraction))
    assert seen <= set(texts)
    assert len(seen) == 219  # these 8 worlds alone already need a third of them


def test_generator_3_oracle_texts_hold_every_text_its_worlds_embed() -> None:
    """Generator 3 (the default): its scheduled, retracted and temporary sentences join the
    warm-up (3 templates x 97 pool values more), so its index stages find every text
    embedded too (before, the warm-up held only the 703 and every gen-3 index stage loaded
    the model for the rest)."""
    from rotbench.contract.extraction import world_documents
    from rotbench.perception.oracle import oracle_texts
    from rotbench.pipeline.extract import extract_concurrently
    from rotbench.pipeline.index import index_texts
    from rotbench.world import generate_world

    texts = oracle_texts(generator_3=True)
    assert len(texts) == 994 == 703 + 3 * 97
    seen: set[str] = set()
    for seed in (42, 43, 44, 1000):
        world = generate_world(seed, generator="3")
        extraction = extract_concurrently(world_documents(world),
                                          OracleExtractor(world),
                                          concurrency=1,
                                          questions=[p.question for p in world.probes])
        seen.update(index_texts(world, extraction))
    assert seen <= set(texts) and not seen <= set(oracle_texts())
