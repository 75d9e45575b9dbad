"""Engine 0.6.0's rules, one test per rule, on hand-written claims (fake embedder):
corroboration (a stray statement displaced by the next mention of the value it displaced,
whatever the checker said; a value said once and not again within the wait yields to a value
said four times or more, ``reconcile.confirmation``; the user named "the speaker" or read as
their value; a slot known only by a declared successor; a question read as about "the
speaker" asks about the user),
forget requests (no framing served, history included, until
the value is stated again; a statement delivered late meets the request), re-delivery (the
same content again files nothing) and every member (one member said often crowds no other
member out of the top k). Each test also runs with its switch off and shows engine
0.5.0's behaviour (on 0.5.0 itself every test fails: the switches and the digest do not
exist there).
"""

from __future__ import annotations

from rotbench.contract.engine import Document, Turn
from rotbench.contract.extraction import DocumentClaims, Extraction, content_digest
from rotbench.contract.perception import (
    FORGET_ANY,
    ClaimDraft,
    Dependency,
    Judgement,
    QuestionFrame,
)
from rotbench.embedding import Embedder
from rotbench.perception.oracle import OracleChecker
from rotbench.reference.config import EngineConfig
from rotbench.reference.ledger import Ending, Ledger
from rotbench.reference.query import query_ledger
from rotbench.reference.reconcile import deposit

QUESTION = "Which city does the user live in?"


def city(value: str, tense: str = "present", subject: str = "the user",
         sentence: str | None = None, **extra) -> ClaimDraft:
    text = (f"The user's home city is {value}." if tense == "present"
            else f"The user's home city was previously {value}.")
    return ClaimDraft(subject=subject, slot="home_city", value=value, tense=tense,
                      sentence=sentence or text, **extra)


def forget(value: str) -> ClaimDraft:
    return ClaimDraft(subject="the user", slot="home_city", value=value, tense="past",
                      event="forget",
                      sentence="The user asked the assistant to forget their home city.")


def doc(day: int, *drafts: ClaimDraft, delivered: int | None = None,
        digest: str | None = None, uri: str | None = None) -> DocumentClaims:
    return DocumentClaims(uri=uri or f"session://t/{day:03d}-{delivered or day:03d}-"
                          f"{drafts[0].value}-{drafts[0].tense}", day=day,
                          kind="conversation", lineage="conversation", contributor="user",
                          drafts=list(drafts), delivered_day=delivered, digest=digest)


class NeverUpdate:
    """A checker that calls no pair an update (a model missing every change)."""

    stamp = "never-update"

    def judge(self, pairs):  # noqa: ANN001, ANN201 - the Checker protocol
        return [Judgement(contradicts=False, new_value_for_slot=False) for _ in pairs]


def run(docs, embedder: Embedder, overrides=(), checker=None) -> tuple[Ledger, EngineConfig]:
    config = EngineConfig().with_overrides(list(overrides))
    extraction = Extraction(extractor_stamp="hand",
                            documents=sorted(docs, key=lambda d: d.arrival))
    return deposit(extraction, embedder, checker or OracleChecker(), config), config


def ask(ledger: Ledger, config: EngineConfig, embedder: Embedder, day: int,
        slot: str = "home_city", question: str = QUESTION) -> list[str]:
    frame = QuestionFrame(subject="the user", slot=slot)
    return [h.text for h in query_ledger(ledger, question, day, 10, config, embedder, frame)]


# ---- corroboration -------------------------------------------------------------------------

def test_a_stray_statement_yields_to_the_next_mention_whatever_the_checker(
        fake_embedder: Embedder) -> None:
    # the stray was read with more confidence than the mentions around it
    docs = [doc(2, city("Porto")), doc(5, city("Porto")), doc(8, city("Bergen", confidence=1.0)),
            doc(11, city("Porto"))]
    ledger, config = run(docs, fake_embedder, checker=NeverUpdate())
    # the checker retired nothing: Porto and Bergen both stand as present facts
    assert ask(ledger, config, fake_embedder, 9)[0] == "The user's home city is Bergen."
    assert ask(ledger, config, fake_embedder, 12)[0] == "The user's home city is Porto."
    ledger, config = run(docs, fake_embedder, ["reconcile.corroboration=false"],
                         checker=NeverUpdate())
    # 0.5.0: present facts by score, then day: the stray Bergen still comes first on day 12
    assert ask(ledger, config, fake_embedder, 12)[0] == "The user's home city is Bergen."


def test_a_value_said_once_and_never_again_yields_to_a_confirmed_one(
        fake_embedder: Embedder) -> None:
    # Porto said four times, two days apart (wait: 14 days, the floor); Bergen once on day 8
    porto = [doc(day, city("Porto")) for day in (0, 2, 4, 6)]
    docs = [*porto, doc(8, city("Bergen"))]
    ledger, config = run(docs, fake_embedder)
    assert ask(ledger, config, fake_embedder, 9)[0] == "The user's home city is Bergen."
    assert ask(ledger, config, fake_embedder, 22)[0] == "The user's home city is Bergen."
    # 15 days and no second statement of Bergen: Porto stands again
    assert ask(ledger, config, fake_embedder, 23)[0] == "The user's home city is Porto."
    ledger, config = run(docs, fake_embedder, ["reconcile.confirmation=false"])
    assert ask(ledger, config, fake_embedder, 23)[0] == "The user's home city is Bergen."
    # said again (day 20), Bergen is confirmed; a value said three times anchors nothing;
    # a change named as one (a correction) needs no confirmation
    for changed in ([*docs, doc(20, city("Bergen"))],
                    [*porto[1:], doc(8, city("Bergen"))],
                    [*porto, doc(8, city("Bergen", event="correction", corrects="Porto"))]):
        ledger, config = run(changed, fake_embedder)
        assert ask(ledger, config, fake_embedder, 40)[0] == "The user's home city is Bergen."


def test_the_speaker_and_a_value_read_as_subject_are_the_user(fake_embedder: Embedder) -> None:
    docs = [doc(2, city("Porto")), doc(8, city("Bergen")),
            doc(11, city("Porto", subject="Porto",
                         sentence="Porto is the user's home city.")),
            doc(14, city("Tallinn", subject="the speaker",
                         sentence="The speaker's home city is Tallinn."))]
    ledger, config = run(docs, fake_embedder)
    assert ask(ledger, config, fake_embedder, 12)[0] == "Porto is the user's home city."
    assert ask(ledger, config, fake_embedder, 15)[0] == "The speaker's home city is Tallinn."
    assert [c.subject for c in ledger.claims] == ["the user"] * 4
    ledger, config = run(docs, fake_embedder, ["reconcile.corroboration=false"])
    assert ask(ledger, config, fake_embedder, 15)[0] == "The user's home city is Bergen."
    assert [c.subject for c in ledger.claims][2:] == ["Porto", "the speaker"]


def test_a_question_read_as_about_the_speaker_asks_about_the_user(
        fake_embedder: Embedder) -> None:
    docs = [doc(2, city("Porto")), doc(5, city("Porto", subject="the speaker",
                                                  sentence="The speaker's home city is Porto."))]
    speaker = QuestionFrame(subject="the speaker", slot="home_city")
    ledger, config = run(docs, fake_embedder)
    for day, served in ((3, ["The user's home city is Porto."]),
                        (6, ["The speaker's home city is Porto.",
                             "The user's home city is Porto."])):
        got = query_ledger(ledger, QUESTION, day, 10, config, fake_embedder, speaker)
        assert [h.text for h in got] == served
    ledger, config = run(docs, fake_embedder, ["reconcile.corroboration=false"])
    # 0.5.0: "the speaker" is a subject of its own, of which nothing is known on day 3
    assert query_ledger(ledger, QUESTION, 3, 10, config, fake_embedder, speaker) == []


def test_a_slot_known_only_by_a_declared_successor_is_answered_with_it(
        fake_embedder: Embedder) -> None:
    said = ClaimDraft(subject="the user", slot="home_city", value="Oslo", tense="present",
                      mood="conditional", depends_on=Dependency(slot="employer", value="Acme"),
                      sentence="The user's home city will be Oslo once their employer changes.")
    ledger, config = run([doc(3, said)], fake_embedder)
    assert ask(ledger, config, fake_embedder, 5) == [
        "The user's home city will be Oslo once their employer changes."]
    ledger, config = run([doc(3, said)], fake_embedder, ["reconcile.corroboration=false"])
    assert ask(ledger, config, fake_embedder, 5) == []  # 0.5.0 abstains


# ---- forget requests -----------------------------------------------------------------------

def test_a_forgotten_value_is_served_in_no_framing_until_said_again(
        fake_embedder: Embedder) -> None:
    docs = [doc(2, city("Porto")), doc(6, city("Bergen")), doc(9, city("Bergen", "past")),
            doc(12, forget("Bergen")), doc(20, city("Bergen"))]
    ledger, config = run(docs, fake_embedder)
    day9 = ask(ledger, config, fake_embedder, 9)
    assert day9[0] == "The user's home city is Bergen."
    after = ask(ledger, config, fake_embedder, 13)
    assert not any("Bergen" in text for text in after)
    assert "The user's home city was previously Porto." not in after  # never said: none
    ended = [e for e in ledger.events if isinstance(e, Ending) and e.how == "forget"]
    assert [(ledger.claim(e.claim_id).sentence, e.day) for e in ended] == [
        ("The user's home city is Bergen.", 12),
        ("The user's home city was previously Bergen.", 12)]
    assert ledger.counts.forgotten == 2
    assert ask(ledger, config, fake_embedder, 21)[0] == "The user's home city is Bergen."
    ledger, config = run(docs, fake_embedder, ["reconcile.forget=false"])
    assert ask(ledger, config, fake_embedder, 13)[0] == "The user's home city is Bergen."


def test_a_statement_delivered_after_the_request_but_said_before_meets_it(
        fake_embedder: Embedder) -> None:
    docs = [doc(2, city("Bergen")), doc(12, forget("Bergen")),
            doc(5, city("Bergen"), delivered=15)]
    ledger, config = run(docs, fake_embedder)
    assert not any("Bergen" in text for text in ask(ledger, config, fake_embedder, 16))
    assert ledger.counts.forgotten == 2


def test_a_request_naming_no_value_forgets_every_value_said_before_it(
        fake_embedder: Embedder) -> None:
    # "please forget where I live": the text names no value, so the claim's value is "*"
    docs = [doc(2, city("Porto")), doc(6, city("Bergen")), doc(9, city("Porto", "past")),
            doc(12, forget(FORGET_ANY)), doc(5, city("Oslo"), delivered=15),
            doc(20, city("Lisbon"))]
    ledger, config = run(docs, fake_embedder)
    assert ask(ledger, config, fake_embedder, 9)[:2] == [
        "The user's home city is Bergen.", "The user's home city was previously Porto."]
    for day in (13, 16, 21):  # the current value, an older one, one said before but late
        served = ask(ledger, config, fake_embedder, day)
        assert not any(v in text for text in served for v in ("Porto", "Bergen", "Oslo")), day
    assert ask(ledger, config, fake_embedder, 21)[0] == "The user's home city is Lisbon."
    assert ask(ledger, config, fake_embedder, 16) == [  # the request alone
        "The user asked the assistant to forget their home city."]
    ended = [e for e in ledger.events if isinstance(e, Ending) and e.how == "forget"]
    assert [(ledger.claim(e.claim_id).sentence, e.day) for e in ended] == [
        ("The user's home city is Bergen.", 12),  # Porto was retired by Bergen already
        ("The user's home city was previously Porto.", 12),
        ("The user's home city is Oslo.", 15)]
    ledger, config = run(docs, fake_embedder, ["reconcile.forget=false"])
    assert ask(ledger, config, fake_embedder, 13)[0] == "The user's home city is Bergen."


# ---- re-delivery ---------------------------------------------------------------------------

def test_a_document_delivered_again_unchanged_files_nothing(fake_embedder: Embedder) -> None:
    first = Document(uri="session://t/a", day=4, timestamp="2026-01-05T09:00:00Z",
                     kind="conversation", turns=[Turn(role="user", text="I live in Porto.")])
    again = first.model_copy(update={"uri": "session://t/a-again", "delivered_day": 30})
    assert content_digest(first) == content_digest(again)
    assert content_digest(first) != content_digest(
        first.model_copy(update={"turns": [Turn(role="user", text="I live in Oslo.")]}))
    digest = content_digest(first)
    # the copy was perceived wrong (Porto cut to a stray value): it must move nothing
    docs = [doc(4, city("Porto"), digest=digest, uri="session://t/a"),
            doc(20, city("Bergen")),
            doc(4, city("Lisbon"), delivered=30, digest=digest, uri="session://t/a-again")]
    ledger, config = run(docs, fake_embedder)
    assert (ledger.counts.documents, ledger.counts.redelivered) == (3, 1)
    assert [c.value for c in ledger.claims] == ["Porto", "Bergen"]
    assert ask(ledger, config, fake_embedder, 31)[0] == "The user's home city is Bergen."
    ledger, config = run(docs, fake_embedder, ["reconcile.redelivery=false"])
    assert [c.value for c in ledger.claims] == ["Porto", "Bergen", "Lisbon"]


# ---- each member ---------------------------------------------------------------------------

def language(value: str, **extra) -> ClaimDraft:
    return ClaimDraft(subject="the user", slot="language", value=value, tense="present",
                      multi_valued=True, sentence=f"The user's study language is {value}.",
                      **extra)


def test_a_member_said_often_crowds_no_other_member_out(fake_embedder: Embedder) -> None:
    # Welsh joins on day 3; Tagalog is then mentioned in passing every day for twelve days
    docs = [doc(2, language("Tagalog")), doc(3, language("Welsh", event="member_add")),
            *(doc(day, language("Tagalog")) for day in range(4, 16))]
    question = "Which languages is the user studying?"
    tagalog, welsh = (f"The user's study language is {v}." for v in ("Tagalog", "Welsh"))
    ledger, config = run(docs, fake_embedder)
    got = ask(ledger, config, fake_embedder, 20, "language", question)
    assert got[:2] == [tagalog, welsh] and got[2:] == [tagalog] * 8
    # 0.5.0's order (by support, then score and day): thirteen Tagalogs fill the top ten
    for off in (["query.each_member=false"],
                ["query.each_member=false", "reconcile.corroboration=false"]):
        ledger, config = run(docs, fake_embedder, off)
        assert ask(ledger, config, fake_embedder, 20, "language", question) == [tagalog] * 10
