"""Generator 3's wordings: at least six per statement kind, indirect ones among them.

Generator 3 keeps the attributes and pools of ``rotbench.world.pools`` and draws its
sentences from the attribute's own wordings there plus the ones here: label-generic wordings
(``{label}`` is the attribute's label) and one or two indirect wordings per attribute, which
name the value without naming the attribute ("I signed the lease on a flat in {v}" for a home
city). Every text here is covered by the whole-word uniqueness check (``all_template_texts_v3``).

Placeholders: ``{v}`` a value, ``{old}``/``{new}`` the two sides of a change, ``{wrong}`` the
value being corrected, ``{when}`` the rendered effective date of a scheduled change.
"""

from __future__ import annotations

from rotbench.world.pools import ATTRIBUTES, DECOY_TEMPLATES, all_template_texts

MULTI_VALUED = "language"
"""The set-valued attribute of generator 3: the languages the user is learning."""

PRESENT_GENERIC: tuple[str, ...] = (
    "For your notes: my {label} is {v}.",
    "These days my {label} is {v}.",
    "{v}, that's my {label} at the moment.",
)
PRESENT_INDIRECT: dict[str, tuple[str, ...]] = {
    "home_city": ("I signed the lease on a flat in {v}.", "The tram in {v} was packed again."),
    "employer": ("My badge at {v} stopped working this morning.",
                 "Payday at {v} can't come soon enough."),
    "project_codename": ("Standup for {v} ran long today.",),
    "code_editor": ("I spent the evening writing plugins for {v}.",),
    "manager": ("{v} approved my leave request today.",),
    "gym": ("My locker at {v} is jammed again.",),
    "diet": ("Found a great {v} recipe for dinner.",),
    "car": ("Filled up the {v} on the way home.",),
    "phone": ("Dropped my {v} but the screen survived.",),
    "team": ("The {v} retro ran over time.",),
    "coffee_shop": ("The queue at {v} was out the door.",),
    "language": ("My {v} tutor gave me homework.",),
}
TRANSITION_GENERIC: tuple[str, ...] = (
    "Switched my {label} from {old} to {new}.",
    "Out with {old}, in with {new}: that's my {label} sorted.",
    "Update: {new} replaced {old} as my {label}.",
    "My {label} changed, it was {old} and it's {new} now.",
    "No more {old} for me; my {label} is {new} now.",
)
RESTATEMENT_GENERIC: tuple[str, ...] = (
    "My {label} is {new} now.",
    "New {label}: {new}.",
    "It's {new} for my {label} these days.",
    "Quick one: {new} is my {label} now.",
    "I've gone with {new} as my {label}.",
)
PAST_GENERIC: tuple[str, ...] = (
    "My {label} used to be {v}, a while back.",
    "Years ago my {label} was {v}.",
    "Back then, {v} was my {label}.",
    "I remember when {v} was my {label}.",
)
CORRECTION_SAME_SESSION: tuple[str, ...] = (
    "Sorry, I misspoke: my {label} is {new}, not {wrong}.",
    "Wait, scratch that. It's {new}, not {wrong}, for my {label}.",
    "Correction: I meant {new}. {wrong} was a slip; my {label} is {new}.",
    "Ugh, wrong word. My {label} is {new}. Forget {wrong}.",
    "Let me fix that: {new} is my {label}; I said {wrong} by mistake.",
    "Hold on, I got that wrong: not {wrong} but {new} is my {label}.",
)
CORRECTION_LATER: tuple[str, ...] = (
    "Sorry, I told you wrong last week: my {label} is {new}, not {wrong}.",
    "Small correction to something I said before: my {label} is {new}, never {wrong}.",
    "I mixed things up earlier. It was always {new}, not {wrong}, for my {label}.",
    "Please fix your notes: my {label} is {new}; {wrong} was a mistake on my part.",
    "Turns out I misspoke the other day: {new} is my {label}, not {wrong}.",
    "Earlier I said {wrong} for my {label}; that was wrong, it's {new}.",
)
WRONG_STATEMENT: tuple[str, ...] = (
    "I switched my {label} to {v} this week.",
    "My {label} is {v} now.",
    "Heads-up, my {label} is {v} as of this week.",
    "New {label} for me: {v}.",
    "I went with {v} as my {label}.",
    "I've moved my {label} over to {v}.",
)
RETRACTION_GENERIC: tuple[str, ...] = (
    "I no longer have a {label}: {v} is over for me.",
    "Scratch {v} from your notes, I have no {label} at the moment.",
    "{v} is done and I haven't replaced it; no {label} for now.",
    "I'm without a {label} these days, since I let {v} go.",
    "As of this week there's no {label} in my life; I ended things with {v}.",
)
RETRACTION_SPECIFIC: dict[str, str] = {
    "home_city": "I gave up my flat in {v}; no fixed home for now, I'm living out of a bag.",
    "employer": "I left {v} and I'm between jobs now.",
    "project_codename": "Project {v} wrapped up and I'm on no project right now.",
    "code_editor": "I uninstalled {v}; no editor on this machine for now.",
    "manager": "{v} left the company and nobody is my manager right now.",
    "gym": "I cancelled my {v} membership; no gym for me now.",
    "diet": "I stopped following {v}; no special diet now.",
    "car": "I sold my {v} and don't have a car now.",
    "phone": "I handed back my {v} and have no phone for a while.",
    "team": "I left the {v} team and I'm on no team now.",
    "coffee_shop": "I quit coffee, so no more {v} for me.",
}
TEMPORARY_GENERIC: tuple[str, ...] = (
    "Just for this week my {label} is {v}, then back to normal.",
    "Temporarily, {v} is my {label}, only until the weekend.",
    "For a few days {v} stands in as my {label}; it won't last.",
    "Short-term thing: my {label} is {v} until the weekend.",
    "This week only, {v} is my {label}.",
)
TEMPORARY_SPECIFIC: dict[str, str] = {
    "home_city": "I'm in {v} this week for a conference.",
    "employer": "I'm doing a short contract at {v} this week, on the side.",
    "project_codename": "I'm helping out on project {v} for a few days.",
    "code_editor": "On this loaner laptop I'm stuck with {v} for the week.",
    "manager": "{v} is covering for my manager this week.",
    "gym": "I'm on a guest pass at {v} this week.",
    "diet": "I'm eating {v} for a week as an experiment.",
    "car": "I'm driving a loaner {v} while mine is in the shop.",
    "phone": "I'm borrowing a {v} while my phone is repaired.",
    "team": "I'm on loan to the {v} team for this sprint.",
    "coffee_shop": "While my usual place is closed I'm getting coffee at {v}.",
}
SCHEDULED_DATED: tuple[str, ...] = (
    "Heads-up: my {label} becomes {v} on {when}.",
    "From {when}, my {label} will be {v}.",
    "Starting {when}, {v} is going to be my {label}.",
    "It's settled: on {when} my {label} switches to {v}.",
)
SCHEDULED_RELATIVE: dict[int, tuple[str, ...]] = {
    10: ("In ten days my {label} switches to {v}.",),
    14: ("In two weeks {v} takes over as my {label}.",),
    21: ("Three weeks from today my {label} will be {v}.",),
}
"""Relative scheduled wordings by the days between the session and the effective day."""
SCHEDULED_NEXT_MONTH: tuple[str, ...] = ("Next month I'm moving my {label} over to {v}.",)
"""Takes effect on the first day of the calendar month after the session's timestamp."""
SCHEDULED_SPECIFIC: dict[str, str] = {
    "employer": "I start at {v} on {when}.",
    "home_city": "I've signed for a place in {v}; I move there on {when}.",
    "car": "My new {v} gets delivered on {when}.",
    "phone": "My {v} arrives on {when}; I switch then.",
}
MEMBER_ADD: tuple[str, ...] = (
    "I've also started learning {v}.",
    "On top of everything, I've picked up {v} as well.",
    "Added {v} to my study languages this week.",
    "I'm now learning {v} too, alongside the others.",
    "Signed up for a {v} course as well.",
    "Another language on the pile: {v}.",
)
MEMBER_DROP: tuple[str, ...] = (
    "I gave up {v}; I'm not learning it any more.",
    "I dropped {v} from my study languages.",
    "No more {v} lessons for me, I stopped.",
    "I quit studying {v} this week.",
    "{v} is off the list, I stopped learning it.",
    "I've stopped my {v} course for good.",
)
DECOY_TEMPLATES_V3: dict[str, tuple[str, ...]] = {
    "other_person": (*DECOY_TEMPLATES["other_person"],
                     "My {who} just told me their {label} is {v}.",
                     "For my {who}, the {label} is {v}.",
                     "My {who} keeps going on about {v}, their {label}.",
                     "Did I mention my {who}'s {label}? It's {v}."),
    "hypothetical": (*DECOY_TEMPLATES["hypothetical"],
                     "Maybe one day {v} could be my {label}.",
                     "I'm considering {v} as my {label}, but it's only an idea.",
                     "If things were different, {v} would be my {label}."),
    "negation": (*DECOY_TEMPLATES["negation"],
                 "My {label} is definitely not {v}.",
                 "No, {v} has never been my {label}.",
                 "Don't write down {v} as my {label}; it isn't."),
    "suggestion": (*DECOY_TEMPLATES["suggestion"],
                   "How about {v} as your {label}?",
                   "I'd recommend {v} as your {label}.",
                   "One suggestion: make {v} your {label}.",
                   "Maybe consider {v} as your {label}?"),
}
RELAY_TURNS_V3: tuple[str, ...] = (
    "I had a look. Your {label} is {v}, it seems.",
    "Found something: your {label} is {v}.",
    "According to what I found, your {label} is {v}.",
    "A search result lists your {label} as {v}.",
    "Looks like your {label} is {v}, going by one page.",
    "Your {label}, from what comes up, is {v}.",
)
TOOL_TURNS_V3: tuple[str, ...] = (
    "lookup: {label} = {v}",
    "match 1 of 3 | {label}: {v}",
    "{label}: {v}; confidence high",
    "record found. {label} -> {v}",
    "{{\"{label}\": \"{v}\"}}",
    "result: {v} ({label})",
)
WEB_PAGES_V3: tuple[str, ...] = (
    "Member spotlight. Their {label} is {v}. More news below.",
    "About this person: {label}, {v}. Last edited by a volunteer.",
    "Team notes. {label}: {v}. Comments are closed.",
    "Community page. Listed {label}: {v}.",
    "Profile card: {label} {v}. Updated yearly.",
    "Newsletter. Our member's {label} is {v}, we hear.",
)
FILLER_EXCHANGES: tuple[tuple[str, str], ...] = (
    ("The weather app says fog again tomorrow.", "Good day for a slow walk."),
    ("I read that volcanoes can make their own lightning.", "Yes, ash clouds carry charge."),
    ("I'm trying to drink more water.", "A bottle on the desk helps."),
    ("Do you know a good way to fold fitted sheets?", "Tuck the corners into each other."),
    ("The bakery down the street had sourdough today.", "Fresh sourdough is hard to beat."),
    ("I reorganised my bookshelf by colour.", "That sounds pleasingly tidy."),
    ("How long should tea steep?", "Three to five minutes for most black teas."),
    ("I learned that octopuses have three hearts.", "And blue blood, too."),
    ("My plants finally got some sun.", "They'll be glad of it."),
    ("Any tips for falling asleep faster?", "Dim lights and no screens for an hour."),
    ("The river was high after the storm.", "Stay clear of the banks for a bit."),
    ("I tried a new crossword app.", "Crosswords are good for the mind."),
)
"""Chit-chat and facts about unrelated topics (``--volume`` multiplies how many a world has).
They carry no attribute value and answer no probe question."""


def v3_template_texts() -> list[str]:
    """Every fixed text only generator 3 uses (placeholders included)."""
    texts: list[str] = [*PRESENT_GENERIC, *TRANSITION_GENERIC, *RESTATEMENT_GENERIC,
                        *PAST_GENERIC, *CORRECTION_SAME_SESSION, *CORRECTION_LATER,
                        *WRONG_STATEMENT, *RETRACTION_GENERIC, *TEMPORARY_GENERIC,
                        *SCHEDULED_DATED, *SCHEDULED_NEXT_MONTH, *MEMBER_ADD, *MEMBER_DROP,
                        *RELAY_TURNS_V3, *TOOL_TURNS_V3, *WEB_PAGES_V3]
    for group in (PRESENT_INDIRECT, DECOY_TEMPLATES_V3, SCHEDULED_RELATIVE):
        for wordings in group.values():
            texts += list(wordings)
    for group in (RETRACTION_SPECIFIC, TEMPORARY_SPECIFIC, SCHEDULED_SPECIFIC):
        texts += list(group.values())
    for user, assistant in FILLER_EXCHANGES:
        texts += [user, assistant]
    return texts


def all_template_texts_v3() -> list[str]:
    """Every fixed text a generator-3 world can contain (for the invariant check)."""
    return all_template_texts() + v3_template_texts()


def wordings(kind: str, key: str) -> tuple[str, ...]:
    """The wordings of statement ``kind`` for attribute ``key`` that generator 3 draws from
    (the attribute's own from ``pools`` first). ``kind``: present, transition, restatement,
    past, correction_same, correction_later, wrong, retraction, temporary, member_add,
    member_drop. Raises KeyError for another kind."""
    spec = next(a for a in ATTRIBUTES if a.key == key)
    if kind == "present":
        return (*spec.present, *PRESENT_GENERIC, *PRESENT_INDIRECT.get(key, ()))
    if kind == "transition":
        return (spec.transition, *TRANSITION_GENERIC)
    if kind == "restatement":
        return (spec.restatement, *RESTATEMENT_GENERIC)
    if kind == "past":
        return (*spec.past, *PAST_GENERIC)
    if kind == "retraction":
        specific = RETRACTION_SPECIFIC.get(key)
        return (*RETRACTION_GENERIC, *((specific,) if specific else ()))
    if kind == "temporary":
        specific = TEMPORARY_SPECIFIC.get(key)
        return (*TEMPORARY_GENERIC, *((specific,) if specific else ()))
    return {
        "correction_same": CORRECTION_SAME_SESSION,
        "correction_later": CORRECTION_LATER,
        "wrong": WRONG_STATEMENT,
        "member_add": MEMBER_ADD,
        "member_drop": MEMBER_DROP,
    }[kind]
