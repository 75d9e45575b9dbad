"""Constants and small helpers shared by the llm tests (imported as ``llm_helpers``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rotbench.contract.engine import Document
from rotbench.contract.extraction import world_documents
from rotbench.perception.model import RETRY_MARKER, LLMSettings
from rotbench.reference.config import EngineConfig
from rotbench.world.models import World

SECRET_KEY = "sk-ant-api03-ROTBENCH-FAKE-KEY-do-not-leak-5f1c9e2b7a"
"""The distinctive fake API key every test runs with; it must never be written anywhere."""

FAST_CONFIG = EngineConfig().with_overrides(["reconcile.update_floor=0.6"])
"""With the bag-of-words test embedder, the default 0.45 floor sends ~1100 pairs of world 42
to the checker; 0.6 keeps every decision the same with ~320 pairs (a faster test)."""


PRICED = LLMSettings(prices={"claude-haiku-4-5": (1.0, 5.0), "claude-sonnet-4-6": (3.0, 15.0)})
"""Model settings with both default models priced (US dollars per million tokens in, out)."""


@contextmanager
def oracle_fake(world: World) -> Iterator:
    """A fake Anthropic server that answers every prompt about ``world`` as the oracle."""
    from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer

    with FakeAnthropic(oracle_answerer(world)) as server:
        yield server


def assert_invalid_twice(extractor, fake, message: str) -> None:
    """``extractor`` asked once and retried once, the retry quoting ``message`` (the first
    answer's one-line reason), and recorded one ``invalid_answer`` failure naming it."""
    first, retry = fake.requests
    assert not first.is_retry and retry.is_retry
    assert message in retry.prompt.split(RETRY_MARKER, 1)[1]
    (failure,) = extractor.stats.failures
    assert failure.kind == "invalid_answer" and message in failure.reason
    assert "\n" not in failure.reason and "first at claims.0" in failure.reason


def assert_claim_refused(extractor, fake, answers, document: Document, claim: dict,
                         message: str) -> None:
    """A model answering ``claim`` (over ``CLAIM_BASE``) on every call gets no claim from
    ``extractor`` for ``document``: asked once, retried once quoting ``message``, one
    ``invalid_answer`` failure (``assert_invalid_twice``)."""
    answers.texts = [answer_json(claim)]
    assert extractor.extract(document) == []
    assert_invalid_twice(extractor, fake, message)


def monday_conversation(text: str) -> Document:
    """A conversation of day 14, Monday 19 January 2026 (the epoch is 2026-01-05): the
    user says ``text``, the assistant "Noted."."""
    from rotbench.world.models import Turn

    return Document(uri="conv://t/1", day=14, timestamp="2026-01-19T10:00:00Z",
                    kind="conversation", turns=[Turn(role="user", text=text),
                                                Turn(role="assistant", text="Noted.")])


def live_extractor(fake, version: str, slots: dict[str, str]):
    """A ``LiveExtractor`` asking ``fake`` with prompt ``version`` (model
    claude-sonnet-4-6, no cache) for ``slots``."""
    from rotbench.perception.model import AnthropicClient, LiveExtractor

    return LiveExtractor(AnthropicClient(base_url=fake.base_url), "claude-sonnet-4-6",
                         version, slots=slots)


def documents(world: World) -> list[Document]:
    return world_documents(world)


def drafts_of(docs: list[Document], extractor) -> list[list]:
    """Each document's drafts, extracted with up to 8 documents in flight."""
    from rotbench.pipeline.extract import extract_concurrently

    return [d.drafts for d in extract_concurrently(docs, extractor, 8).documents]


CLAIM_BASE = {"subject": "the user", "tense": "present", "attribution": "own"}
"""The fields every hand-written extraction answer shares unless a test says otherwise."""


class Answers:
    """The fake's answers, in order (the last one repeats); ``served`` counts them."""

    def __init__(self) -> None:
        self.texts: list[str] = ['{"claims": []}']
        self.served = 0

    def __call__(self, req) -> str:
        text = self.texts[min(self.served, len(self.texts) - 1)]
        self.served += 1
        return text


def answer_json(*claims: dict) -> str:
    """An extraction answer holding ``claims``, each over ``CLAIM_BASE``."""
    return json.dumps({"claims": [{**CLAIM_BASE, **c} for c in claims]})


BAD_FIELDS_FILE = Path(__file__).resolve().parents[2] / "data" / "extract_bad_fields.json"
"""The hand-written claims with a bad field, per extract prompt version, and the one-line
reason each is refused with (``bad_field_cases``)."""


def bad_field_cases(version: str) -> dict[str, tuple[dict, str]]:
    """The bad-field cases of extract prompt ``version`` ('extract-v3' or 'extract-v4'), in
    the file's order: case name -> (the claim the model answers, over ``CLAIM_BASE``; the
    reason the extractor gives for refusing it).

    ``BAD_FIELDS_FILE`` is a JSON object: version -> case name -> ``{"claim": {field: value},
    "message": str}``. Raises ``KeyError`` for a version the file has no cases for."""
    cases = json.loads(BAD_FIELDS_FILE.read_text(encoding="utf-8"))[version]
    return {name: (case["claim"], case["message"]) for name, case in cases.items()}


def claim_draft(**fields):
    """The ``ClaimDraft`` a claim of ``fields`` over ``CLAIM_BASE`` parses into."""
    from rotbench.contract.perception import ClaimDraft

    return ClaimDraft(**{**CLAIM_BASE, **fields})


def assert_probe_estimate_exact(world: World, fake, embedder, tmp_path, settings,
                                engine_config) -> tuple:
    """On the probe arm, ``world``'s check-only estimate is exact: the live checker against
    ``fake`` (answering as the oracle) decides as the oracle does, gets only check calls,
    exactly as many as projected (two per pair judged). Returns (the estimate, the live
    perception) for a test's further checks."""
    from rotbench.estimate.perception import estimate
    from rotbench.perception.model import AnthropicClient, build_perception
    from rotbench.perception.oracle import OracleChecker, OracleExtractor
    from rotbench.pipeline.extract import extract_concurrently
    from rotbench.reference.reconcile import deposit

    extraction = extract_concurrently(documents(world), OracleExtractor(world), concurrency=1)
    oracle_ledger = deposit(extraction, embedder, OracleChecker(), engine_config)
    est = estimate(world, "probe", settings, embedder=embedder, engine_config=engine_config)
    assert set(est.stages) == {"check"} and est.stages["check"].projection == "exact"
    live = build_perception("probe", settings, cache_dir=tmp_path,
                            client=AnthropicClient(base_url=fake.base_url))
    ledger = deposit(extraction, embedder, live.checker(world), engine_config)
    assert (ledger.claims, ledger.events, ledger.counts) == (
        oracle_ledger.claims, oracle_ledger.events, oracle_ledger.counts)
    received = fake.count(("contradiction", "slot"))
    assert received > 0 and fake.count() == received  # no extraction on the probe arm
    assert est.stages["check"].calls == received == 2 * oracle_ledger.counts.pairs_judged
    return est, live


def oracle_and_estimate(world: World, embedder, settings, engine_config):
    """``world`` read and decided by the oracle, and its live-arm estimate: (documents,
    questions, the oracle's extraction, its ledger, the estimate)."""
    from rotbench.estimate.perception import estimate
    from rotbench.perception.oracle import OracleChecker, OracleExtractor
    from rotbench.pipeline.extract import extract_concurrently
    from rotbench.reference.reconcile import deposit

    docs = documents(world)
    questions = [p.question for p in world.probes]
    oracle = extract_concurrently(docs, OracleExtractor(world),
                                  concurrency=1, questions=questions)
    oracle_ledger = deposit(oracle, embedder, OracleChecker(), engine_config)
    est = estimate(world, "live", settings, embedder=embedder, engine_config=engine_config)
    return docs, questions, oracle, oracle_ledger, est


def assert_live_estimate_matches(world: World, fake, embedder, tmp_path, settings,
                                 engine_config, prompt_version: str):
    """On the live arm, ``world``'s estimate names the calls made: the live perception
    against ``fake`` (answering as the oracle) reads ``world`` with ``prompt_version``, reads
    documents and questions as the oracle does and decides as it does, and the estimated
    extract calls and tokens equal the metered ones (prompt-cache tokens in sum), the check
    calls the fake's. Returns the estimate."""
    from rotbench.perception.model import AnthropicClient, build_perception
    from rotbench.pipeline.extract import extract_concurrently
    from rotbench.reference.reconcile import deposit

    docs, questions, oracle, oracle_ledger, est = oracle_and_estimate(
        world, embedder, settings, engine_config)
    live = build_perception("live", settings, cache_dir=tmp_path,
                            client=AnthropicClient(base_url=fake.base_url))
    extractor = live.extractor(world)
    assert extractor.prompt_version == prompt_version
    extraction = extract_concurrently(docs, extractor, 8, questions)
    assert extraction.documents == oracle.documents
    assert extraction.questions == oracle.questions
    ledger = deposit(extraction, embedder, live.checker(world), engine_config)
    assert (ledger.claims, ledger.events, ledger.counts) == (
        oracle_ledger.claims, oracle_ledger.events, oracle_ledger.counts)
    metered = live.meter.stage("extract")
    assert est.stages["extract"].calls == fake.count(("extract", "question")) == metered.calls
    assert est.stages["extract"].input_tokens == metered.input_tokens
    assert est.stages["extract"].output_tokens == metered.output_tokens
    # the prompt cache: the same prefix tokens; the fake writes once, the estimate counts a
    # write for each of the first ``concurrency`` calls (they may all be in flight at once)
    stage = est.stages["extract"]
    assert stage.cache_write_tokens + stage.cache_read_tokens == (
        metered.cache_creation_input_tokens + metered.cache_read_input_tokens)
    assert stage.cache_write_tokens >= metered.cache_creation_input_tokens
    assert est.stages["check"].calls == fake.count(("contradiction", "slot"))
    return est
