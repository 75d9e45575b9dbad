"""Engine 0.6.4's rules, on hand-written claims and the user's words of their documents
(fake embedder): ``reconcile.change_sides`` (a value read on both sides of a change is the
side the words do not tell as left), ``reconcile.restatements`` (a restatement read with a
value no user turn names is read as the one held value the words name) and
``reconcile.lost_changes`` (a change perception lost whole is read from the words). Each
case is one of engine 0.6.3's own misses on generator 5 (seeds 42-44, the real embedding
model) cut down; each also runs with its switch off, where engine 0.6.3's answer comes back.
"""

from __future__ import annotations

from test_rules_v5 import fact
from test_rules_v62 import first, run, said

from rotbench.contract.perception import ClaimDraft
from rotbench.embedding import Embedder
from rotbench.reference.reread import Rereader, told_as_left


def car(value: str, tense: str = "present") -> ClaimDraft:
    text = (f"The user's car is {value}." if tense == "present"
            else f"The user's car was previously {value}.")
    return ClaimDraft(subject="the user", slot="car", value=value, tense=tense, sentence=text)


def phone(value: str, tense: str = "present") -> ClaimDraft:
    text = (f"The user's phone is {value}." if tense == "present"
            else f"The user's phone was previously {value}.")
    return ClaimDraft(subject="the user", slot="phone", value=value, tense=tense,
                      sentence=text)


ASK_CAR, ASK_PHONE = "What car does the user drive?", "What phone does the user have?"
ASK_EMPLOYER, ASK_TEAM = "Which company does the user work for?", "Which team is the user on?"


def test_words_that_tell_a_value_as_left() -> None:
    said_ = "my car changed, it was saab and it's skoda now."
    assert told_as_left("saab", said_) and not told_as_left("skoda", said_)
    for words, left, kept in [
            ("switched my phone from pixel to nokia.", "pixel", "nokia"),
            ("no more nokia for me; my phone is pixel now.", "nokia", "pixel"),
            ("update: mediterranean replaced paleo as my diet.", "paleo", "mediterranean"),
            ("out with keto, in with paleo: that's my diet sorted.", "keto", "paleo"),
            ("i cancelled at ironhaus and joined flexpoint.", "ironhaus", "flexpoint")]:
        assert told_as_left(left, words) and not told_as_left(kept, words), words
    # a passing mention tells nothing as left
    assert not told_as_left("saab", "took the saab through the car wash.")


# seed 42, day 86, under good: "it was Saab and it's Skoda now" read as Skoda twice (the past
# side distorted); 0.6.2's rereading read the present side as Saab, the wrong one
CAR = [
    said(80, "Skoda, that's my car at the moment.", car("Skoda")),
    said(82, "My car is Saab now.", car("Saab")),
    said(84, "Took the Saab through the car wash.", car("Saab")),
    said(86, "My car changed, it was Saab and it's Skoda now.",
         car("Skoda"), car("Skoda", "past")),
]


def test_a_change_read_with_one_value_on_both_sides_keeps_the_present_side(
        fake_embedder: Embedder) -> None:
    ledger, config = run(CAR, fake_embedder)
    assert first(ledger, config, fake_embedder, "car", 87, ASK_CAR)[0] == (
        "The user's car is Skoda.")
    assert [(c.value, c.tense) for c in ledger.claims if c.document_uri.endswith("086")] == [
        ("Skoda", "present"), ("Saab", "past")]
    ledger, config = run(CAR, fake_embedder, ["reconcile.change_sides=false"])
    assert first(ledger, config, fake_embedder, "car", 87, ASK_CAR)[0] == (
        "The user's car is Saab.")


# seed 44, days 9-14, under typical: Kestrelworks said once, then a restatement of it read as
# Solvane (no user turn names it), which superseded it and lapsed the team tied to it
TEAM = [
    said(9, "Lynx, that's my team at the moment.", fact("team", "Lynx")),
    said(11, "Badge stopped working at the Kestrelworks front door this morning.",
         fact("employer", "Kestrelworks")),
    said(12, "My team at Kestrelworks is Lynx. Stayed late at Kestrelworks.",
         fact("employer", "Solvane"), fact("team", "Heron")),
    said(14, "My team at Kestrelworks is Lynx.",
         fact("team", "Lynx", tie=("employer", "Kestrelworks"))),
]


def test_a_restatement_read_with_a_value_no_one_said_is_the_held_value_the_words_name(
        fake_embedder: Embedder) -> None:
    ledger, config = run(TEAM, fake_embedder)
    assert first(ledger, config, fake_embedder, "team", 15, ASK_TEAM)[0] == (
        "The user's team is Lynx.")
    assert first(ledger, config, fake_embedder, "employer", 15, ASK_EMPLOYER)[0] == (
        "The user's employer is Kestrelworks.")
    assert [c.value for c in ledger.claims if c.document_uri.endswith("012")] == [
        "Kestrelworks", "Lynx"]
    # off: the misread values stand (in the world, Solvane lapsed Lynx and nothing was
    # served; here the misread team Heron comes first)
    ledger, config = run(TEAM, fake_embedder, ["reconcile.restatements=false"])
    assert first(ledger, config, fake_embedder, "team", 15, ASK_TEAM)[0] == (
        "The user's team is Heron.")


def test_a_value_read_away_can_still_be_named_by_a_later_change(
        fake_embedder: Embedder) -> None:
    # seed 44, day 24, under good: the change to Solvane read as "Kestrelworks was
    # previously" alone; the store knows Solvane only from a restatement read as it
    docs = [*TEAM[1:3], said(24, "I left Kestrelworks and started at Solvane this week.",
                             fact("employer", "Kestrelworks", "past"))]
    ledger, config = run(docs, fake_embedder)
    assert first(ledger, config, fake_embedder, "employer", 25, ASK_EMPLOYER)[0] == (
        "The user's employer is Solvane.")


# seed 44, days 50-57, under typical: the change to Pixel read as "Nokia was previously"
# alone (0.6.2's rereading adds Pixel), then the change back to Nokia lost whole
PHONE = [
    said(40, "My phone is Nokia.", phone("Nokia")),
    said(47, "Dropped my Pixel on the stairs.", phone("Pixel")),
    said(50, "The Nokia update moved all my icons around.", phone("Nokia")),
    said(54, "No more Nokia for me; my phone is Pixel now.", phone("Nokia", "past")),
    said(57, "Switched my phone from Pixel to Nokia."),
]


def test_a_change_perception_lost_whole_is_read_from_the_words(
        fake_embedder: Embedder) -> None:
    ledger, config = run(PHONE, fake_embedder)
    assert first(ledger, config, fake_embedder, "phone", 58, ASK_PHONE)[0] == (
        "The user's phone is Nokia.")
    assert [(c.value, c.tense) for c in ledger.claims if c.document_uri.endswith("057")] == [
        ("Nokia", "present")]
    ledger, config = run(PHONE, fake_embedder, ["reconcile.lost_changes=false"])
    assert first(ledger, config, fake_embedder, "phone", 58, ASK_PHONE)[0] == (
        "The user's phone is Pixel.")


def test_what_the_new_rules_leave_alone() -> None:
    reader = Rereader(lambda d: True, sides=True, restatements=True, lost_changes=True)
    reader.read(said(1, "My phone is Nokia.", phone("Nokia")))
    reader.read(said(2, "My phone is Pixel.", phone("Pixel")))
    # a hedged sentence, a passing mention naming both, a value the words name themselves
    for words in ("I would never switch from Pixel to Nokia.",
                  "Took the Nokia and the Pixel to the repair shop."):
        assert reader.read(said(3, words)) == []
    kept = phone("Fairphone")
    assert reader.read(said(4, "I bought a Fairphone; my phone is Fairphone now.", kept)) == [
        kept]
    # a dated change read with a value no one said is not a restatement
    dated = phone("Pixel").model_copy(update={"valid_from": 3})
    assert reader.read(said(5, "I switched my phone to Nokia two days ago.", dated)) == [dated]


# seed 42, days 13-25, under typical: the team Puma said under the employer Halcyra, then a
# line about someone else's team Lynx read as the user's own retires Puma (day 19); when
# Halcyra gives way to Tidemark (day 22) Puma is already retired and got no lapse, and the
# evidence, which sets the update aside, served Puma from then on (reconcile.retired_lapses)
PUMA = [
    said(13, "Puma is my team at Halcyra.", fact("team", "Puma", tie=("employer", "Halcyra"))),
    said(14, "Standup with the Puma team ran long.",
         fact("team", "Puma", tie=("employer", "Halcyra"))),
    said(16, "Halcyra is where I work.", fact("employer", "Halcyra")),
    said(17, "Priya told me her team is Lynx.",
         fact("team", "Lynx", attribution="source", sentence="Priya's team is Lynx.")),
    said(18, "Long day at Halcyra.", fact("employer", "Halcyra")),
    said(19, "Priya says Lynx is busy this week.", fact("team", "Lynx")),  # read as the user's
    said(22, "I left Halcyra; my employer is Tidemark now.", fact("employer", "Tidemark")),
]


def test_a_retired_tied_claim_still_lapses_when_its_root_changes(
        fake_embedder: Embedder) -> None:
    ledger, config = run(PUMA, fake_embedder)
    lapsed = {c.id for c in ledger.claims if c.value == "Puma"}
    assert ledger.late_ends() == dict.fromkeys(sorted(lapsed), 22)
    assert all(ledger.state(i).retired_how == "update" for i in lapsed)  # the state keeps it
    assert "Puma" not in first(ledger, config, fake_embedder, "team", 25, ASK_TEAM)[0]
    assert first(ledger, config, fake_embedder, "team", 21, ASK_TEAM)[0] == (
        "The user's team is Puma.")  # before the root changed the evidence still serves it
    ledger, config = run(PUMA, fake_embedder, ["reconcile.retired_lapses=false"])
    assert ledger.late_ends() == {}
    assert first(ledger, config, fake_embedder, "team", 25, ASK_TEAM)[0] == (
        "The user's team is Puma.")


def test_a_claim_reinstated_after_its_root_changed_ends_again(
        fake_embedder: Embedder) -> None:
    # Lynx is said under the manager Ingrid and retires Puma; Halcyra gives way to Tidemark
    # (day 22) while Puma is retired; then Ingrid is corrected (day 24), Lynx never held and
    # Puma is reinstated, though its root left two days before
    docs = [*PUMA[:2], PUMA[2],
            said(17, "Ingrid is my manager.", fact("manager", "Ingrid")),
            PUMA[4],
            said(19, "Lynx is my team under Ingrid.",
                 fact("team", "Lynx", tie=("manager", "Ingrid"))),
            PUMA[6],
            said(24, "Ingrid was never my manager; it's Tomasz.",
                 fact("manager", "Tomasz", event="correction", corrects="Ingrid"))]
    ledger, config = run(docs, fake_embedder)
    puma = [c.id for c in ledger.claims if c.value == "Puma"]
    assert [(ledger.state(i).retired_how, ledger.state(i).retired_at,
             ledger.state(i).reinstated_at) for i in puma] == [("dependency", 24, 24)] * 2
    assert not any("Puma" in h for h in first(ledger, config, fake_embedder, "team", 25,
                                               ASK_TEAM)[:1])
    ledger, config = run(docs, fake_embedder, ["reconcile.retired_lapses=false"])
    assert [ledger.state(i).status for i in puma] == ["active"] * 2
    assert first(ledger, config, fake_embedder, "team", 25, ASK_TEAM)[0] == (
        "The user's team is Puma.")
