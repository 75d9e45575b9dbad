"""Generator 4's wordings: dependent facts, declared successors, retraction cascades,
relative dates in late documents and premise questions.

Generator 4 keeps the attributes and pools of ``rotbench.world.pools`` and the wordings of
``rotbench.world.pools_v3``; the texts here are the ones only generator 4 says. Every text
is covered by the whole-word uniqueness check (``all_template_texts_v4``).

Placeholders: ``{v}`` the dependent's value, ``{root}`` the root value the statement is
tied to, ``{label}`` the dependent's label, ``{wrong}``/``{new}`` the retracted root value
and the one that still holds, ``{ago}`` a relative date ("three days ago").
"""

from __future__ import annotations

from rotbench.world.pools_v3 import all_template_texts_v3

DEPENDENTS: dict[str, tuple[str, ...]] = {
    "employer": ("manager", "team", "project_codename"),
    "home_city": ("gym", "coffee_shop"),
}
"""Root attribute -> the attributes whose values hang on it (a new job brings a new manager,
team and project; a new city a new gym and coffee place)."""

SUCCESSOR: tuple[str, ...] = (
    "If I ever leave {root}, my {label} will be {v}.",
    "Should {root} stop being part of my life, {v} becomes my {label}.",
    "Plan for the day {root} is behind me: {v} as my {label}.",
    "The moment I'm done with {root}, I'm switching my {label} to {v}.",
    "Once {root} is over for me, {v} takes over as my {label}; that's decided.",
)
"""A declared successor: the dependent's value once the root leaves ``{root}``."""
CONTINGENT: dict[str, tuple[str, ...]] = {
    "manager": ("My manager at {root} is {v}.",
                "As long as I'm at {root}, {v} is my manager.",
                "{v} manages me here at {root}."),
    "team": ("At {root} I'm on the {v} team.",
             "My team at {root} is {v}.",
             "Working at {root} means I sit with the {v} team."),
    "project_codename": ("My project at {root} is {v}.",
                         "While I'm at {root} I work on {v}.",
                         "{root} has me on project {v}."),
    "gym": ("I train at {v}, two blocks from my flat in {root}.",
            "{v} is my gym because it's right by my place in {root}.",
            "Living in {root}, I go to {v}; it's around the corner."),
    "coffee_shop": ("My coffee comes from {v}, the place below my flat in {root}.",
                    "In {root} my regular coffee stop is {v}, next to home.",
                    "{v} is my coffee place, since it's on my street in {root}."),
}
"""A stated tie without a successor: the dependent holds because of the root's value."""
IMPLIED: dict[str, tuple[str, ...]] = {
    "manager": ("My boss {v} called an all-hands at the office today.",
                "{v}, who runs our group at work, signed off my timesheet.",
                "At work, {v} reviews everything I ship."),
    "team": ("Everyone on my floor at the office is {v}; that's my team.",
             "The {v} standup at work dragged on forever.",
             "My colleagues on {v} booked a team lunch near the office."),
    "project_codename": ("At the office we're all heads-down on {v}.",
                         "Work is nothing but {v} deadlines lately.",
                         "My desk at work is covered in {v} sketches."),
    "gym": ("The gym across the road from my building, {v}, got new racks.",
            "{v}, the gym down my street, was packed tonight.",
            "I walk to {v} from my front door in five minutes."),
    "coffee_shop": ("The coffee place next to my building, {v}, knows my order.",
                    "Popped downstairs to {v} for a coffee before work.",
                    "{v}, the café on my block, changed its opening hours."),
}
"""A tie implied only by what the text says about the dependent (near the flat, at work)."""
CASCADE_DEPENDENT: tuple[str, ...] = (
    "Here in {root}, my {label} is {v}.",
    "Since the move to {root}, {v} is my {label}.",
    "New place, new routine: {v} is my {label} now that I'm in {root}.",
    "Settling into {root}: I picked {v} as my {label}.",
)
"""A dependent stated under a root value that is later taken back."""
CASCADE_RETRACTION: dict[str, tuple[str, ...]] = {
    "home_city": (
        "I never actually moved to {wrong}; the lease fell through and I'm still in {new}.",
        "Scratch the move to {wrong}: the flat deal collapsed, I stayed in {new}.",
        "Correction: {wrong} never happened, the landlord pulled out, so I still live "
        "in {new}.",
    ),
}
"""A root taken back after dependents were stated under it (the dependents go with it)."""
RELATIVE_CHANGE: tuple[str, ...] = (
    "I switched my {label} to {v} {ago}.",
    "{ago_cap} I changed my {label} to {v}.",
    "It was {ago} that {v} became my {label}.",
    "Forgot to say: {ago}, my {label} became {v}.",
)
"""A change told relative to the day it was written (in a document delivered late)."""
AGO: dict[int, tuple[str, ...]] = {
    2: ("two days ago",),
    3: ("three days ago",),
    4: ("four days ago",),
    5: ("five days ago",),
    7: ("last week", "a week ago"),
    14: ("two weeks ago",),
}
"""Relative dates by the days they count back from the written day."""
PREMISE_QUESTIONS: dict[str, tuple[str, ...]] = {
    "home_city": ("Does the user still live in {v}?", "How is life in {v} for the user?"),
    "employer": ("Is the user still working at {v}?", "How is the commute to {v}?"),
    "project_codename": ("Is the user still busy with project {v}?",
                         "How is project {v} going for the user?"),
    "code_editor": ("Is the user still coding in {v}?", "Does the user still like {v}?"),
    "manager": ("Does the user still report to {v}?", "How is the user getting on with {v}?"),
    "gym": ("Does the user still work out at {v}?", "Is {v} still the user's gym?"),
    "diet": ("Is the user still following {v}?", "How is {v} working out for the user?"),
    "car": ("Does the user still drive the {v}?", "Is the {v} still running well?"),
    "phone": ("Is the user still using the {v}?", "Does the user's {v} still hold a charge?"),
    "team": ("Is the user still on the {v} team?", "How are things on {v} for the user?"),
    "coffee_shop": ("Does the user still get coffee at {v}?",
                    "Is {v} still the user's coffee place?"),
}
"""Questions that take a value for granted (``{v}``: a superseded value), per attribute."""


def v4_template_texts() -> list[str]:
    """Every fixed text only generator 4 uses (placeholders included)."""
    texts = [*SUCCESSOR, *CASCADE_DEPENDENT, *RELATIVE_CHANGE]
    for group in (CONTINGENT, IMPLIED, CASCADE_RETRACTION, AGO, PREMISE_QUESTIONS):
        for wordings in group.values():
            texts += list(wordings)
    return texts


def all_template_texts_v4() -> list[str]:
    """Every fixed text a generator-4 world can contain (for the invariant check)."""
    return all_template_texts_v3() + v4_template_texts()
