"""Engine 0.6.3's rules, on hand-written claims and the user's words of their documents
(fake embedder): ``reconcile.dreams`` (a daydream or an idea weighed doubts a value),
``reconcile.root_evidence`` (a lapse stands only while the root slot's evidence says its root
value left), ``reconcile.grounded_ties`` (a tie carried by a claim no user turn names ends no
earlier statement), ``reconcile.undated_plans`` (a scheduled change read without its day is
no statement of the current value) and ``reconcile.recent_members`` (of a set's members
stated equally often, the one stated last ranks first). Each case is one of engine 0.6.2's
own misses on generator 5 (seeds 42-44) cut down; each also runs with its switch off, where
engine 0.6.2's answer comes back.
"""

from __future__ import annotations

from test_rules_v5 import fact
from test_rules_v62 import ASK_LANGUAGE, diet, first, language, run, said

from rotbench.contract.perception import ClaimDraft
from rotbench.embedding import Embedder
from rotbench.reference.wording import doubtful, said_as_change

TIDEMARK = [
    said(11, "Badge stopped working at the Tidemark front door.", fact("employer", "Tidemark")),
    said(12, "The Falcon folks had pizza. Stayed late at Tidemark.",
         fact("employer", "Tidemark"), fact("team", "Falcon")),
    said(13, "Long planning meeting at Tidemark today.", fact("employer", "Tidemark")),
    said(14, "Everyone on my floor at the office is Falcon; that's my team.",
         fact("team", "Falcon", tie=("employer", "Tidemark"))),
    # a daydream read as the user's employer (seed 43, day 14, under good)
    said(14, "I keep daydreaming about Halcyra as my employer; nothing is decided.",
         fact("employer", "Halcyra")),
]


def test_words_of_a_daydream_doubt_the_value_they_name() -> None:
    halcyra = fact("employer", "Halcyra")
    words = "I keep daydreaming about Halcyra as my employer; nothing is decided."
    assert doubtful(halcyra, words, dreams=True)
    assert not doubtful(halcyra, words)  # 0.6.2's words
    keto = diet("Keto")
    idea = "I'm considering Keto as my diet, but it's only an idea."
    assert not said_as_change(keto, idea, [], ["Paleo"], dreams=True)
    assert said_as_change(keto, idea, [], ["Paleo"])  # "my diet" beside the value, no hedge


def test_a_daydream_does_not_displace_a_confirmed_employer(fake_embedder: Embedder) -> None:
    ledger, config = run(TIDEMARK, fake_embedder)
    assert first(ledger, config, fake_embedder, "employer", 15,
                 "Which company does the user work for?")[0] == "The user's employer is Tidemark."
    ledger, config = run(TIDEMARK, fake_embedder, ["reconcile.dreams=false"])
    assert first(ledger, config, fake_embedder, "employer", 15,
                 "Which company does the user work for?")[0] == "The user's employer is Halcyra."


def test_a_lapse_stands_only_while_the_root_evidence_says_the_root_left(
        fake_embedder: Embedder) -> None:
    ledger, config = run(TIDEMARK, fake_embedder)
    lapsed = {e.claim_id for e in ledger.events if getattr(e, "how", None) == "dependency"}
    assert len(lapsed) == 2  # deposit still files the lapse of both Falcon claims
    hits = first(ledger, config, fake_embedder, "team", 15, "Which team is the user on?")
    assert hits[0] == "The user's team is Falcon."
    ledger, config = run(TIDEMARK, fake_embedder, ["reconcile.root_evidence=false"])
    assert first(ledger, config, fake_embedder, "team", 15, "Which team is the user on?") == []


def coffee(value: str, **extra) -> ClaimDraft:
    return ClaimDraft(subject="the user", slot="coffee_shop", value=value, tense="present",
                      sentence=f"The user's coffee shop is {value}.", **extra)


CUPOLA = [
    said(2, "I live in Hobart.", fact("home_city", "Hobart")),
    said(5, "For your notes: my coffee shop is Cupola.", coffee("Cupola")),
    said(11, "Out with Hobart, in with Bergen: that's my home city sorted.",
         fact("home_city", "Bergen")),
    said(12, "The new barista at Cupola makes a great cortado.", coffee("Cupola")),
    said(14, "Grabbed a flat white at Cupola before stand-up.", coffee("Cupola")),
    # Roastwell read as the old value, Cupola, keeping its tie (seed 43, day 18, under good)
    said(18, "Since the move to Bergen, Roastwell is my coffee shop.",
         coffee("Cupola", depends_on={"slot": "home_city", "value": "Bergen"})),
    said(19, "I never actually moved to Bergen; the lease fell through and I'm still in "
         "Hobart.", fact("home_city", "Hobart", event="correction", corrects="Bergen")),
]
ASK_COFFEE = "Which coffee shop does the user go to?"


def test_a_tie_no_user_turn_names_ends_no_earlier_statement(fake_embedder: Embedder) -> None:
    ledger, config = run(CUPOLA, fake_embedder)
    cascaded = [e.claim_id for e in ledger.events if getattr(e, "how", None) == "cascade"]
    assert len(cascaded) == 4  # deposit ends the tied claim and the three before it
    hits = first(ledger, config, fake_embedder, "coffee_shop", 25, ASK_COFFEE)
    assert hits[0] == "The user's coffee shop is Cupola."
    ledger, config = run(CUPOLA, fake_embedder, ["reconcile.grounded_ties=false"])
    assert first(ledger, config, fake_embedder, "coffee_shop", 25, ASK_COFFEE) == []


PALEO = [
    said(5, "Paleo, that's my diet at the moment.", diet("Paleo")),
    # the day of the change lost (seed 43, day 16, under good)
    said(16, "Starting Friday 6 February, Mediterranean is going to be my diet.",
         diet("Mediterranean").model_copy(update={
             "event": "scheduled",
             "sentence": "The user's diet is scheduled to become Mediterranean."})),
    said(17, "I'm considering Keto as my diet, but it's only an idea.", diet("Keto")),
]


def test_an_undated_plan_is_no_statement_of_the_current_value(
        fake_embedder: Embedder) -> None:
    ledger, config = run(PALEO, fake_embedder)
    assert first(ledger, config, fake_embedder, "diet", 25,
                 "What diet does the user follow?")[0] == "The user's diet is Paleo."
    ledger, config = run(PALEO, fake_embedder, ["reconcile.undated_plans=false"])
    assert first(ledger, config, fake_embedder, "diet", 25, "What diet does the user follow?"
                 )[0] == "The user's diet is scheduled to become Mediterranean."
    ledger, config = run(PALEO, fake_embedder, ["reconcile.dreams=false"])
    assert first(ledger, config, fake_embedder, "diet", 25,
                 "What diet does the user follow?")[0] == "The user's diet is Keto."


SET = [
    said(2, "My evening lessons are in Finnish.",
         language("Finnish", sentence="The user is learning the language Finnish.")),
    said(17, "Another language on the pile: Tagalog.", language("Tagalog")),
]


def test_of_members_stated_equally_often_the_latest_ranks_first(
        fake_embedder: Embedder) -> None:
    ledger, config = run(SET, fake_embedder)
    hits = first(ledger, config, fake_embedder, "language", 35, ASK_LANGUAGE)
    assert hits == ["The user's study language is Tagalog.",
                    "The user is learning the language Finnish."]
    ledger, config = run(SET, fake_embedder, ["reconcile.recent_members=false"])
    hits = first(ledger, config, fake_embedder, "language", 35, ASK_LANGUAGE)
    assert hits == ["The user is learning the language Finnish.",
                    "The user's study language is Tagalog."]
