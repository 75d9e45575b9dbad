"""Engine 0.6.1's rules, on hand-written claims and the user's words of their documents
(fake embedder): ``reconcile.grounding`` (a claim whose value no user turn names decides
nothing) and ``reconcile.passing`` (a value the user's words doubt does not displace a
confirmed value until it is said again), with the word tests of ``rotbench.reference.wording``.
Each rule also runs with its switch off, where engine 0.6.0's answer comes back.
"""

from __future__ import annotations

from test_rules_v6 import ask, city

from rotbench.contract.engine import Document, Turn
from rotbench.contract.extraction import DocumentClaims, Extraction, extract_document
from rotbench.contract.perception import ClaimDraft
from rotbench.embedding import Embedder
from rotbench.perception.oracle import OracleChecker
from rotbench.reference.config import EngineConfig
from rotbench.reference.ledger import Ledger
from rotbench.reference.reconcile import deposit
from rotbench.reference.wording import doubtful, said_as_change, slot_words, unnamed

PORTO, BERGEN = "The user's home city is Porto.", "The user's home city is Bergen."


def said(day: int, words: str, *drafts: ClaimDraft) -> DocumentClaims:
    """A conversation of day ``day`` in which the user said ``words`` and perception read
    ``drafts`` from it."""
    return DocumentClaims(uri=f"session://w/{day:03d}-{drafts[0].value}", day=day,
                          kind="conversation", lineage="conversation", contributor="user",
                          drafts=list(drafts), said=words)


def run(docs, embedder: Embedder, overrides=()) -> tuple[Ledger, EngineConfig]:
    config = EngineConfig().with_overrides(list(overrides))
    extraction = Extraction(extractor_stamp="hand", documents=docs)
    return deposit(extraction, embedder, OracleChecker(), config), config


HOME = [said(2, "I live in Porto.", city("Porto")),
        said(5, "Porto is lovely in spring.", city("Porto"))]


def test_a_value_the_users_words_do_not_name_decides_nothing(fake_embedder: Embedder) -> None:
    misread = said(8, "Back in Porto after a long weekend.", city("Bergen"))
    relayed = said(8, "Can you check what is out there about me?", city("Bergen"))
    # engine 0.6.4's reconcile.restatements reads the misread claim as Porto before it is
    # filed (the words name Porto, a value the store holds); off here, so grounding is what
    # is measured
    plain = ["reconcile.restatements=false"]
    for stray in (misread, relayed):
        ledger, config = run([*HOME, stray], fake_embedder, plain)
        assert ledger.unnamed == [ledger.claims[2].id]
        assert ask(ledger, config, fake_embedder, 9)[0] == PORTO
        ledger, config = run([*HOME, stray], fake_embedder,
                             [*plain, "reconcile.grounding=false"])
        assert ledger.unnamed == []
        assert ask(ledger, config, fake_embedder, 9)[0] == BERGEN
    # the ledger's events are 0.6.0's either way: only the evidence reads the words
    on, _ = run([*HOME, misread], fake_embedder, plain)
    off, _ = run([*HOME, misread], fake_embedder, [*plain, "reconcile.grounding=false"])
    assert on.events == off.events
    ledger, config = run([*HOME, misread], fake_embedder)  # the default: read as Porto
    assert ledger.unnamed == [] and ledger.claims[2].value == "Porto"
    assert ask(ledger, config, fake_embedder, 9)[0] == PORTO


def test_a_value_the_words_doubt_waits_for_a_second_statement(
        fake_embedder: Embedder) -> None:
    sister = said(8, "My sister just told me their home city is Bergen.", city("Bergen"))
    ledger, config = run([*HOME, sister], fake_embedder)
    assert ledger.doubtful == [ledger.claims[2].id]
    assert ask(ledger, config, fake_embedder, 9)[0] == PORTO
    ledger, config = run([*HOME, sister], fake_embedder, ["reconcile.passing=false"])
    assert ask(ledger, config, fake_embedder, 9)[0] == BERGEN
    # said a second time, it displaces Porto; so does a mention the words do not doubt,
    # and a change said as one in words that would otherwise doubt it (someone's "'s")
    for docs in ([*HOME, sister, said(10, "For my sister, Bergen is home.", city("Bergen"))],
                 [*HOME, said(8, "Grabbed a coffee near my flat in Bergen.", city("Bergen"))],
                 [*HOME, said(8, "My landlord's offer won: I moved from Porto to Bergen.",
                              city("Bergen"))]):
        ledger, config = run(docs, fake_embedder)
        assert ask(ledger, config, fake_embedder, 11)[0] == BERGEN
    # one statement in words that do not doubt it confirms Porto; a value said only in
    # doubted words confirms nothing, and yields to the next value at once
    ledger, config = run([HOME[0], sister], fake_embedder)
    assert ask(ledger, config, fake_embedder, 9)[0] == PORTO
    ledger, config = run([sister, said(9, "My home city is Porto.", city("Porto"))],
                         fake_embedder)
    assert ask(ledger, config, fake_embedder, 10)[0] == PORTO


def test_the_words_of_a_document_reach_deposit() -> None:
    document = Document(uri="session://w/1", day=3, timestamp="2026-01-04T09:00:00Z",
                        kind="conversation",
                        turns=[Turn(role="user", text="I moved to Bergen."),
                               Turn(role="assistant", text="Noted: Bergen.")])

    class Reads:
        stamp = "reads"

        def extract(self, document):  # noqa: ANN001, ANN201 - the Extractor protocol
            return [city("Bergen")]

    assert extract_document(document, Reads()).said == "I moved to Bergen."
    page = document.model_copy(update={"kind": "web_page", "uri": "https://a.example/x"})
    assert extract_document(page, Reads()).said is None


def test_the_word_tests() -> None:
    assert slot_words("home_city") == ["home city", "city"]
    assert not unnamed(city("Bergen"), "my flat in bergen")
    assert unnamed(city("Bergen"), "Bergenstrasse is long")  # a whole word only
    assert not unnamed(city("Bergen"), None)  # nothing known: no verdict
    assert doubtful(city("Bergen"), "Maybe one day Bergen could be my home city.")
    assert doubtful(city("Bergen"), "My brother's home city is Bergen. I love Porto.")
    assert not doubtful(city("Bergen"), "Rain again in Bergen. I would rather not talk.")
    assert said_as_change(city("Bergen"), "My home city is Bergen now.", [], [])
    assert said_as_change(city("Bergen"), "Porto to Bergen: done.", [], ["Porto"])
    assert said_as_change(city("Bergen"), "", [city("Porto", tense="past")], [])
    assert not said_as_change(city("Bergen"), "Now that it is warm, Bergen is nice.", [], [])
