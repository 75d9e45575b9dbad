"""Engine 0.6.2's rules, on hand-written claims and the user's words of their documents
(fake embedder): ``reconcile.rereading`` (a forget request or a member drop whose value the
words do not name, or a value told as past with no present value beside it, read again
against the words) and
``reconcile.unfiled_roots`` (a correction of a root value the store never filed ends what is
tied to it). Each case is one of engine 0.6.1's own misses on generator 5 under ``good``
noise (seed 42's study languages, seed 43's diet, seed 44's gym) or under ``typical``
(seed 44's forget request), cut down; each also runs
with its switch off, where engine 0.6.1's answer comes back.
"""

from __future__ import annotations

from test_rules_v5 import ask, fact

from rotbench.contract.extraction import DocumentClaims, Extraction
from rotbench.contract.perception import ClaimDraft, QuestionFrame
from rotbench.embedding import Embedder
from rotbench.perception.oracle import OracleChecker
from rotbench.reference.config import EngineConfig
from rotbench.reference.ledger import Ledger
from rotbench.reference.query import query_ledger
from rotbench.reference.reconcile import deposit
from rotbench.reference.reread import Rereader


def said(day: int, words: str, *drafts: ClaimDraft) -> DocumentClaims:
    """A conversation of day ``day`` in which the user said ``words`` and perception read
    ``drafts`` from it."""
    return DocumentClaims(uri=f"session://w/{day:03d}", day=day, kind="conversation",
                          lineage="conversation", contributor="user", drafts=list(drafts),
                          said=words)


def run(docs, embedder: Embedder, overrides=()) -> tuple[Ledger, EngineConfig]:
    config = EngineConfig().with_overrides(list(overrides))
    return deposit(Extraction(extractor_stamp="hand", documents=docs), embedder,
                   OracleChecker(), config), config


def diet(value: str, tense: str = "present") -> ClaimDraft:
    text = (f"The user's diet is {value}." if tense == "present"
            else f"The user's diet was previously {value}.")
    return ClaimDraft(subject="the user", slot="diet", value=value, tense=tense, sentence=text)


def language(value: str, **extra) -> ClaimDraft:
    return ClaimDraft(subject=extra.pop("subject", "the user"), slot="language", value=value,
                      tense=extra.pop("tense", "present"), multi_valued=True,
                      sentence=extra.pop("sentence", f"The user's study language is {value}."),
                      **extra)


def first(ledger: Ledger, config: EngineConfig, embedder: Embedder, slot: str, day: int,
          question: str) -> list[str]:
    frame = QuestionFrame(subject="the user", slot=slot)
    return [h.text for h in query_ledger(ledger, question, day, 10, config, embedder, frame)]


# ---- rereading: a forget request the words do not name --------------------------------------

def gym(value: str, **extra) -> ClaimDraft:
    return fact("gym", value, **extra)


FORGET = [
    said(12, "Did a spin class at Pulsegym.", gym("Pulsegym")),
    said(13, "Crowded at Pulsegym tonight.", gym("Pulsegym")),
    # the request names no gym; perception gave it one (seed 44, day 26, under typical)
    said(26, "Please forget which gym I go to.",
         gym("Barbelle", tense="past", event="forget",
             sentence="The user asked the assistant to forget their gym.")),
]


def test_a_forget_request_whose_value_the_words_do_not_name_names_none(
        fake_embedder: Embedder) -> None:
    ledger, config = run(FORGET, fake_embedder)
    assert ledger.claims[-1].value == "*"
    assert not any("Pulsegym" in h for h in ask(ledger, config, fake_embedder, "gym", 30))
    ledger, config = run(FORGET, fake_embedder, ["reconcile.rereading=false"])
    assert ask(ledger, config, fake_embedder, "gym", 30)[0] == "The user's gym is Pulsegym."


# ---- rereading: a member drop the words do not name ----------------------------------------

LANGUAGES = [
    said(2, "I'm learning Tagalog.", language("Tagalog")),
    said(4, "Did twenty minutes of Tagalog flashcards.", language("Tagalog")),
    said(6, "I've picked up Welsh as well.", language("Welsh")),
    said(8, "Signed up for an Icelandic course as well.", language("Icelandic")),
    # "Tagalog" misread as "Welsh", and Welsh taken for the subject (seed 42, day 46)
    said(10, "I've stopped my Tagalog course for good.",
         language("Welsh", subject="Welsh", tense="past", event="member_drop",
                  sentence="Welsh was previously the user's study language.")),
]
ASK_LANGUAGE = "Which language is the user learning?"


def test_a_drop_the_words_do_not_name_is_of_the_member_they_name(
        fake_embedder: Embedder) -> None:
    ledger, config = run(LANGUAGES, fake_embedder)
    drop = ledger.claims[-1]
    assert (drop.value, drop.subject, drop.sentence) == (
        "Tagalog", "the user", "Tagalog was previously the user's study language.")
    hits = first(ledger, config, fake_embedder, "language", 11, ASK_LANGUAGE)
    assert set(hits[:2]) == {"The user's study language is Welsh.",
                             "The user's study language is Icelandic."}
    assert "The user's study language is Tagalog." not in hits
    ledger, config = run(LANGUAGES, fake_embedder, ["reconcile.rereading=false"])
    assert ledger.claims[-1].value == "Welsh"  # as perceived: Tagalog stands, first
    hits = first(ledger, config, fake_embedder, "language", 11, ASK_LANGUAGE)
    assert hits[0] == "The user's study language is Tagalog."
    assert "The user's study language is Welsh." not in hits


# ---- rereading: a value told as past with no present value beside it -----------------------

DIET = [
    said(2, "I eat Mediterranean.", diet("Mediterranean")),
    said(4, "Found a great Mediterranean recipe blog.", diet("Mediterranean")),
    said(10, "Out with Mediterranean, in with Paleo: that's my diet sorted.",
         diet("Paleo"), diet("Mediterranean", "past")),
    said(12, "Cooked a big Paleo batch on Sunday.", diet("Paleo")),
    said(14, "I eat Paleo.", diet("Paleo")),
    # the new value read as the old one beside the old one told as past (seed 43, day 64)
    said(20, "My diet changed, it was Paleo and it's Mediterranean now.",
         diet("Paleo"), diet("Paleo", "past")),
    said(22, "Hard to eat Mediterranean at a conference buffet.", diet("Mediterranean")),
    # the new value dropped, the old one told as past alone (seed 43, day 86)
    said(30, "Out with Mediterranean, in with Paleo: that's my diet sorted.",
         diet("Mediterranean", "past")),
]
ASK_DIET = "What diet does the user follow?"


def test_a_value_told_as_past_alone_gives_way_to_the_value_the_words_name(
        fake_embedder: Embedder) -> None:
    ledger, config = run(DIET, fake_embedder)
    on = [first(ledger, config, fake_embedder, "diet", day, ASK_DIET)[0] for day in (21, 31)]
    assert on == ["The user's diet is Mediterranean.", "The user's diet is Paleo."]
    # day 20: the present claim read as Mediterranean; day 30: a present claim of Paleo added
    assert [(c.value, c.tense) for c in ledger.claims if c.document_uri.endswith("020")] == [
        ("Mediterranean", "present"), ("Paleo", "past")]
    assert [(c.value, c.tense) for c in ledger.claims if c.document_uri.endswith("030")] == [
        ("Mediterranean", "past"), ("Paleo", "present")]
    ledger, config = run(DIET, fake_embedder, ["reconcile.rereading=false"])
    off = [first(ledger, config, fake_embedder, "diet", day, ASK_DIET)[0] for day in (21, 31)]
    assert off == ["The user's diet is Paleo.", "The user's diet is Mediterranean."]


def test_what_the_rereading_leaves_alone() -> None:
    reader = Rereader(lambda d: d.subject == "the user")
    for doc in DIET[:2]:
        reader.read(doc)
    reader.read(said(5, "I tried Keto once.", diet("Keto")))
    cases = [
        # a history: the words name no other value
        said(40, "Back then, Paleo was my diet.", diet("Paleo", "past")),
        # a change read right: a present claim of another value stands beside the past one
        said(41, "Out with Mediterranean, in with Keto.", diet("Keto"),
             diet("Mediterranean", "past")),
        # the words name two other values the store holds: which one is not said
        said(42, "Mediterranean is over; Keto or Paleo next.", diet("Mediterranean", "past")),
        # the words do not name the value told as past
        said(43, "Keto from now on.", diet("Mediterranean", "past")),
        # a value the store never held
        said(44, "Out with Mediterranean, in with Halal.", diet("Mediterranean", "past")),
    ]
    reader.read(said(6, "I eat Paleo.", diet("Paleo")))
    for doc in cases:
        assert reader.read(doc) == doc.drafts, doc.said
    # a page's words are never the user's
    page = DIET[-1].model_copy(update={"lineage": "a.example", "kind": "web_page"})
    assert reader.read(page) == page.drafts


# ---- unfiled_roots: a correction of a root value the store never filed ----------------------

GYM = [
    said(2, "Home for me is Nagasaki.", fact("home_city", "Nagasaki")),
    said(3, "Did a spin class at Pulsegym.", fact("gym", "Pulsegym")),
    said(5, "Grocery prices in Nagasaki are silly.", fact("home_city", "Nagasaki")),
    # the move to Hobart read as Nagasaki: the store never files Hobart (seed 44, day 14)
    said(14, "Big news: I just moved from Nagasaki to Hobart.",
         fact("home_city", "Nagasaki")),
    said(16, "Now that I'm in Hobart, my gym is Ironhaus.",
         fact("gym", "Ironhaus", tie=("home_city", "Hobart"))),
    said(21, "Scratch the move to Hobart: I stayed in Nagasaki.",
         fact("home_city", "Nagasaki", event="correction", corrects="Hobart")),
]


def test_a_correction_of_a_value_never_filed_ends_what_is_tied_to_it(
        fake_embedder: Embedder) -> None:
    ledger, config = run(GYM, fake_embedder)
    assert ask(ledger, config, fake_embedder, "gym", 25)[0] == "The user's gym is Pulsegym."
    ironhaus = next(c for c in ledger.claims if c.value == "Ironhaus")
    state = ledger.state(ironhaus.id)
    assert (state.retired_how, state.retired_at) == ("cascade", 21)
    # a claim tied to Hobart filed after the correction meets the same end on arrival
    late = said(23, "Now that I'm in Hobart, my gym is Ironhaus.",
                fact("gym", "Ironhaus", tie=("home_city", "Hobart")))
    ledger, config = run([*GYM, late], fake_embedder)
    assert ask(ledger, config, fake_embedder, "gym", 25)[0] == "The user's gym is Pulsegym."
    for overrides in (["reconcile.unfiled_roots=false"], ["reconcile.cascade=false"]):
        ledger, config = run(GYM, fake_embedder, overrides)
        assert ask(ledger, config, fake_embedder, "gym", 25)[0] == "The user's gym is Ironhaus."

