"""The persona's attributes: value pools and the sentence templates that mention them.

Every value is a distinctive proper noun; ``rotbench.world.invariants.check_pools`` proves that
no value occurs (as a whole word, ignoring case) inside another value or inside any fixed text
below. That is what lets scoring find a value in a hit by plain whole-word matching.

Template placeholders: ``{v}`` a value, ``{old}``/``{new}`` the two sides of a change.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AttributeSpec:
    """Static description of one attribute: what generation needs besides randomness."""

    key: str
    label: str
    question: str
    pool: tuple[str, ...]
    present: tuple[str, ...]
    """Ways the user states the current value in the present tense."""
    transition: str
    """A change naming old and new."""
    restatement: str
    """A change stating only the new value."""
    past: tuple[str, ...]
    """Ways the user mentions a superseded value in the past tense (honest history)."""


ATTRIBUTES: tuple[AttributeSpec, ...] = (
    AttributeSpec(
        key="home_city",
        label="home city",
        question="Which city does the user live in?",
        pool=(
            "Ljubljana",
            "Bergen",
            "Tallinn",
            "Porto",
            "Valparaiso",
            "Winnipeg",
            "Hobart",
            "Nagasaki",
            "Tbilisi",
        ),
        present=(
            "I live in {v}.",
            "Home for me is {v} these days.",
            "The rent here in {v} keeps going up.",
        ),
        transition="Big news: I just moved from {old} to {new}.",
        restatement="I live in {new} now.",
        past=(
            "Back when I lived in {v}, the winters felt endless.",
            "I used to live in {v}, years of my life in that place.",
        ),
    ),
    AttributeSpec(
        key="employer",
        label="employer",
        question="Which company does the user work for?",
        pool=(
            "Veltrix",
            "Norrbyte",
            "Quillon",
            "Ambergrid",
            "Solvane",
            "Kestrelworks",
            "Halcyra",
            "Tidemark",
        ),
        present=("I work at {v}.", "My employer is {v}.", "Another long week at {v}."),
        transition="I left {old} and started at {new} this week.",
        restatement="I work for {new} now.",
        past=(
            "When I was still working at {v}, the commute was brutal.",
            "I used to work for {v}, before all this.",
        ),
    ),
    AttributeSpec(
        key="project_codename",
        label="project codename",
        question="What is the codename of the user's current project?",
        pool=(
            "Bluejay",
            "Marzipan",
            "Obsidian",
            "Tangerine",
            "Wolfram",
            "Sextant",
            "Quasar",
            "Juniper",
        ),
        present=(
            "My project is codenamed {v}.",
            "I'm heads-down on project {v}.",
            "The {v} project eats all my time.",
        ),
        transition="They moved me off project {old} and onto project {new}.",
        restatement="My project is {new} now.",
        past=(
            "Project {v} was a mess back when I was on it.",
            "I used to be on project {v}, and it taught me a lot.",
        ),
    ),
    AttributeSpec(
        key="code_editor",
        label="code editor",
        question="Which code editor does the user use?",
        pool=("Neovim", "Emacs", "Zed", "Helix", "Kakoune", "Sublime", "Vscodium", "Geany"),
        present=(
            "I write all my code in {v}.",
            "My editor is {v}.",
            "I tweaked my {v} config again last night.",
        ),
        transition="I finally switched editors, from {old} to {new}.",
        restatement="I code in {new} now.",
        past=(
            "Back when I used {v}, my config was hundreds of lines.",
            "I used to write everything in {v}.",
        ),
    ),
    AttributeSpec(
        key="manager",
        label="manager",
        question="Who is the user's manager?",
        pool=(
            "Ingrid",
            "Tomasz",
            "Hiroshi",
            "Adaeze",
            "Marisol",
            "Leopold",
            "Svetlana",
            "Ravindra",
        ),
        present=(
            "My manager is {v}.",
            "I have a one-on-one with {v}, my boss, tomorrow.",
            "{v} runs our team and signs off on my work.",
        ),
        transition="Reorg news: my manager changed from {old} to {new}.",
        restatement="I report to {new} now.",
        past=("When {v} was my manager, our one-on-ones ran long.", "I used to report to {v}."),
    ),
    AttributeSpec(
        key="gym",
        label="gym",
        question="Which gym does the user go to?",
        pool=(
            "Ironhaus",
            "Peakform",
            "Liftworks",
            "Gritbox",
            "Corestone",
            "Flexpoint",
            "Barbelle",
            "Pulsegym",
        ),
        present=("I train at {v}.", "My gym is {v}.", "Leg day at {v} wrecked me."),
        transition="I cancelled at {old} and joined {new}.",
        restatement="I go to {new} now.",
        past=(
            "Back when I trained at {v}, the showers were always cold.",
            "I used to be a member at {v}.",
        ),
    ),
    AttributeSpec(
        key="diet",
        label="diet",
        question="What diet does the user follow?",
        pool=(
            "Paleo",
            "Keto",
            "Vegan",
            "Kosher",
            "Pescatarian",
            "Mediterranean",
            "Vegetarian",
            "Halal",
        ),
        present=("I eat {v}.", "My diet is {v}.", "Meal prep is easy when you eat {v}."),
        transition="I changed my diet from {old} to {new}.",
        restatement="I eat {new} now.",
        past=(
            "Back when I ate {v}, groceries cost a fortune.",
            "I used to eat {v}, for a good while.",
        ),
    ),
    AttributeSpec(
        key="car",
        label="car",
        question="What car does the user drive?",
        pool=("Skoda", "Polestar", "Rivian", "Subaru", "Lancia", "Dacia", "Saab", "Mazda"),
        present=("I drive a {v}.", "My car is a {v}.", "My {v} needs new tyres."),
        transition="I sold my {old} and bought a {new}.",
        restatement="I drive a {new} now.",
        past=("Back when I drove a {v}, road trips were cramped.", "I used to own a {v}."),
    ),
    AttributeSpec(
        key="phone",
        label="phone",
        question="What phone does the user have?",
        pool=("Zenfone", "Pixel", "Fairphone", "Xperia", "Galaxy", "Nokia", "Oneplus", "Motorola"),
        present=(
            "My phone is a {v}.",
            "I'm typing this on my {v}.",
            "The battery on my {v} lasts two days.",
        ),
        transition="I replaced my {old} with a {new}.",
        restatement="I use a {new} now.",
        past=("Back when I had a {v}, the camera was terrible.", "I used to carry a {v}."),
    ),
    AttributeSpec(
        key="team",
        label="team",
        question="Which team is the user on?",
        pool=("Falcon", "Orca", "Lynx", "Heron", "Badger", "Otter", "Puma", "Condor"),
        present=("I'm on the {v} team.", "My team is {v}.", "Team {v} shipped a release today."),
        transition="I transferred from team {old} to team {new}.",
        restatement="I'm on team {new} now.",
        past=("When I was on team {v}, standups took forever.", "I used to be on the {v} team."),
    ),
    AttributeSpec(
        key="coffee_shop",
        label="coffee shop",
        question="Which coffee shop does the user go to?",
        pool=(
            "Brewhaven",
            "Roastwell",
            "Cremalux",
            "Steamline",
            "Grindhouse",
            "Mokatown",
            "Cupola",
            "Beanstalk",
        ),
        present=(
            "My usual coffee spot is {v}.",
            "I grabbed a flat white at {v}.",
            "The baristas at {v} know my order.",
        ),
        transition="I gave up on {old}; {new} is my coffee place now.",
        restatement="I get my coffee at {new} now.",
        past=(
            "Back when {v} was my coffee place, I knew every barista.",
            "I used to get coffee at {v}.",
        ),
    ),
    AttributeSpec(
        key="language",
        label="study language",
        question="Which language is the user learning?",
        pool=(
            "Tagalog",
            "Hungarian",
            "Icelandic",
            "Swahili",
            "Basque",
            "Finnish",
            "Georgian",
            "Welsh",
        ),
        present=(
            "I'm learning {v}.",
            "My evening lessons are in {v}.",
            "{v} grammar is breaking my brain.",
        ),
        transition="I dropped {old} and started learning {new}.",
        restatement="I'm studying {new} now.",
        past=(
            "Back when I studied {v}, I did flashcards every night.",
            "I used to take {v} lessons.",
        ),
    ),
)

UNANSWERABLE_QUESTIONS: tuple[str, ...] = (
    "What is the name of the user's dog?",
    "What is the user's favorite board game?",
    "What is the user's blood type?",
    "Which musical instrument does the user play?",
)

ASSISTANT_ACKS: tuple[str, ...] = (
    "Thanks for telling me, I'll keep that in mind.",
    "Got it, noted.",
    "Good to know!",
    "Understood. Anything else on your mind?",
)

NOISE_EXCHANGES: tuple[tuple[str, str], ...] = (
    ("Any idea for a quick dinner tonight?", "A frittata with whatever vegetables you have."),
    ("It rained all day and I stayed in.", "Sounds like a good day for a book."),
    ("Can you remind me how to boil an egg properly?", "Nine minutes for hard, six for soft."),
    ("I watched a documentary about octopuses.", "They are remarkable problem solvers."),
    ("My neighbour is renovating again.", "Noise-cancelling headphones might help."),
    ("What's a good stretch for a stiff neck?", "Slow chin tucks, a few times a day."),
    ("I finally cleaned out my inbox.", "That must feel great."),
    ("Tell me a fun fact.", "Honey found in ancient tombs is still edible."),
)

RELAY_REQUEST = "Can you search the web and see what is public about me?"
RELAY_TURN = "I ran a web search. One result, a profile page, says your {label} is {v}."
TOOL_REQUEST = "Look me up online, would you?"
TOOL_CALL = "Calling the web_search tool."
TOOL_TURN = "web_search result: profile snippet. {label}: {v}."
TOOL_AFTER = "That is what the search tool returned."
WEB_PAGE = "Public profile page. The user's {label} is {v}. Last updated by the site operator."
UNTRUSTED_DOMAINS: tuple[str, ...] = ("people-finder.example", "staff-directory.example")


# ---- generator 2 ----------------------------------------------------------------------------
# Decoys: a pool value the user never holds, said so that it is not the user's fact.
# ``{who}`` is a person the user knows; ``{label}`` the attribute's label; ``{v}`` the value.

DECOY_PEOPLE: tuple[str, ...] = ("sister", "brother", "neighbour", "colleague")
"""People whose facts appear as decoys. Disjoint from the people of the near-miss
questions, so that no near-miss question is ever answerable."""

DECOY_TEMPLATES: dict[str, tuple[str, ...]] = {
    "other_person": (
        "My {who}'s {label} is {v}.",
        "Funny thing: my {who}'s {label} is {v}.",
    ),
    "hypothetical": (
        "If I ever changed my {label}, I would pick {v}.",
        "Someday I might make {v} my {label}, but not this year.",
        "I keep daydreaming about {v} as my {label}; nothing is decided.",
    ),
    "negation": (
        "I would never pick {v} as my {label}.",
        "{v} as my {label}? Not a chance.",
        "People keep guessing my {label} is {v}, but it is not.",
    ),
    "suggestion": (
        "Have you thought about {v} as your {label}?",
        "You could try {v} as your {label}.",
    ),
}
"""Decoy wordings by kind. A suggestion is the assistant's turn; the others are the user's."""

DECOY_SUGGESTION_OPENERS: tuple[str, ...] = (
    "I'm in a rut lately. Any ideas for a change?",
    "Give me one suggestion to shake things up.",
)
DECOY_SUGGESTION_DECLINES: tuple[str, ...] = (
    "No thanks, I'm happy with things as they are.",
    "Nah, I'll stick with what I have.",
)

# Untrusted values in varied wording: no fixed word names the channel. Attribution is
# something an engine must add or keep; only some relay wordings carry it themselves.
RELAY_REQUESTS_V2: tuple[str, ...] = (
    "Can you check what is out there about me?",
    "What comes up if you look me up?",
)
RELAY_TURNS_V2: tuple[str, ...] = (
    "I had a look. Your {label} is {v}, it seems.",
    "Found something: your {label} is {v}.",
    "According to what I found, your {label} is {v}.",
)
TOOL_REQUESTS_V2: tuple[str, ...] = ("Check me out, would you?", "Run a quick lookup on me.")
TOOL_CALLS_V2: tuple[str, ...] = ("Running a lookup now.", "One moment, checking.")
TOOL_TURNS_V2: tuple[str, ...] = (
    "lookup: {label} = {v}",
    "match 1 of 3 | {label}: {v}",
    "{label}: {v}; confidence high",
)
TOOL_AFTERS_V2: tuple[str, ...] = ("Here is what came back.", "That is all I got.")
WEB_PAGES_V2: tuple[str, ...] = (
    "Member spotlight. Their {label} is {v}. More news below.",
    "About this person: {label}, {v}. Last edited by a volunteer.",
    "Team notes. {label}: {v}. Comments are closed.",
)

NEAR_MISS_QUESTIONS: tuple[str, ...] = (
    "Which city does the user's best friend live in?",
    "Which company does the user's partner work for?",
    "What car does the user's father drive?",
    "What phone does the user's mother have?",
    "Which gym does the user's roommate go to?",
    "What diet does the user's cousin follow?",
    "Which language is the user's landlord learning?",
    "Which coffee shop does the user's uncle go to?",
)
"""Unanswerable questions close to an attribute the world knows, about someone the world
never gives a fact for (never one of ``DECOY_PEOPLE``)."""

NEAR_MISS_FRAMES: dict[str, tuple[str, str]] = {
    "Which city does the user's best friend live in?": ("the user's best friend", "home_city"),
    "Which company does the user's partner work for?": ("the user's partner", "employer"),
    "What car does the user's father drive?": ("the user's father", "car"),
    "What phone does the user's mother have?": ("the user's mother", "phone"),
    "Which gym does the user's roommate go to?": ("the user's roommate", "gym"),
    "What diet does the user's cousin follow?": ("the user's cousin", "diet"),
    "Which language is the user's landlord learning?": ("the user's landlord", "language"),
    "Which coffee shop does the user's uncle go to?": ("the user's uncle", "coffee_shop"),
}
"""What each near-miss question asks: (whose, which attribute key). Ground truth for the
oracle's question reading; a test keeps it in step with ``NEAR_MISS_QUESTIONS``."""

UNRELATED_SLOTS: dict[str, str] = {
    "What is the name of the user's dog?": "dog_name",
    "What is the user's favorite board game?": "favorite_board_game",
    "What is the user's blood type?": "blood_type",
    "Which musical instrument does the user play?": "instrument",
}
"""The slot each unrelated unanswerable question asks about: a slot no world ever fills.
Ground truth for the oracle's question reading."""


def v2_template_texts() -> list[str]:
    """Every fixed text only generator 2 uses (placeholders included)."""
    texts: list[str] = list(DECOY_PEOPLE)
    for wordings in DECOY_TEMPLATES.values():
        texts += list(wordings)
    texts += list(DECOY_SUGGESTION_OPENERS) + list(DECOY_SUGGESTION_DECLINES)
    for group in (RELAY_REQUESTS_V2, RELAY_TURNS_V2, TOOL_REQUESTS_V2, TOOL_CALLS_V2,
                  TOOL_TURNS_V2, TOOL_AFTERS_V2, WEB_PAGES_V2, NEAR_MISS_QUESTIONS):
        texts += list(group)
    return texts


def all_template_texts() -> list[str]:
    """Every fixed text a world can contain, placeholders included (for the invariant check)."""
    texts: list[str] = v2_template_texts()
    for a in ATTRIBUTES:
        texts += [a.label, a.question, *a.present, a.transition, a.restatement, *a.past]
    texts += list(UNANSWERABLE_QUESTIONS) + list(ASSISTANT_ACKS)
    for user, assistant in NOISE_EXCHANGES:
        texts += [user, assistant]
    texts += [RELAY_REQUEST, RELAY_TURN, TOOL_REQUEST, TOOL_CALL, TOOL_TURN, TOOL_AFTER, WEB_PAGE]
    texts += list(UNTRUSTED_DOMAINS)
    return texts
