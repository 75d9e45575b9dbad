"""The rulings format: reading the shipped file, one-line errors, appending, scoring cells."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rotbench.contract.perception import Claim, Judgement
from rotbench.perception.model._prompts import CHECK_PROMPTS
from rotbench.perception.oracle import OracleChecker
from rotbench.rulings import (
    Ruling,
    RulingClaim,
    RulingsError,
    append_ruling,
    find_rulings,
    outcome,
    read_rulings,
    score_real_pairs,
)

DATA = Path(__file__).parents[1] / "data" / "rulings.jsonl"


def _line(**changes) -> dict:
    base = json.loads(DATA.read_text().splitlines()[2])
    for dotted, value in changes.items():
        target = base
        *path, last = dotted.split("__")
        for part in path:
            target = target[part]
        if value is KeyError:
            del target[last]
        else:
            target[last] = value
    return base


def test_shipped_file_reads_with_the_later_ruling_in_effect() -> None:
    f = read_rulings(DATA)
    assert len(f.rulings) == 6
    assert [r.ruling for r in f.effective] == ["replacement", "coexist", "coexist",
                                                "replacement", "replacement"]
    assert f.effective[0].note == "corrected: the Brompton was sold"
    assert f.effective[3].key == "otherengine:card-0412"
    assert f.rulings[0].key == f.rulings[5].key == f.effective[0].key
    assert len(f.sha256) == 64


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: invalid JSON at column 2"),
        ("[1, 2]", "line 2: expected a JSON object, got list"),
        (json.dumps(_line(ruling="maybe")),
         "line 2: field ruling: Input should be 'coexist' or 'replacement'"),
        (json.dumps(_line(older__date="2026-13-01")), "line 2: field older.date: "),
        (json.dumps(_line(newer__text=KeyError)), "line 2: field newer.text: Field required"),
        (json.dumps(_line(schema_version=2)),
         "line 2: field schema_version: version 2 is newer than this rotbench reads (1); "
         "upgrade rotbench"),
        (json.dumps(_line(schema_version=True)),
         "line 2: field schema_version: unknown version True"),
        (json.dumps(_line(schema_version="1")),  # it said "unknown version '1' (... reads 1)"
         "line 2: field schema_version: version '1' is a string; write the number 1"),
        (json.dumps(_line(newer__date="2025-12-31")),
         "line 2: field newer: date 2025-12-31 is before the older claim's 2026-01-09"),
        (json.dumps(_line(colour="red")), "line 2: field colour: Extra inputs are not permitted"),
        (json.dumps(_line(ruled_at="2026-11-20T09:18:00")), "line 2: field ruled_at: "),
    ],
)
def test_a_bad_line_is_one_line_naming_file_line_and_field(tmp_path: Path, line: str,
                                                           message: str) -> None:
    path = tmp_path / "r.jsonl"
    good = DATA.read_text().splitlines()[0]
    path.write_text(f"{good}\n{line}\n{good}\n")
    with pytest.raises(RulingsError) as err:
        read_rulings(path)
    text = str(err.value)
    assert text.startswith(f"{path}: {message}"), text
    assert "\n" not in text


def test_control_characters_in_a_bad_field_do_not_reach_the_terminal(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({**_line(), "\x1b[2Jx": 1}) + "\n")
    with pytest.raises(RulingsError) as err:
        read_rulings(path)
    assert "\x1b" not in str(err.value) and "\\x1b[2Jx" in str(err.value)


def test_append_is_whole_lines_and_refuses_a_broken_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "rulings.jsonl"
    ruling = read_rulings(DATA).rulings[1]
    written = append_ruling(path, ruling)
    assert len(written.rulings) == 1 and path.read_text().count("\n") == 1
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # hand-edited, no final newline
    second = append_ruling(path, ruling.model_copy(update={"ruling": "replacement"}))
    assert [r.ruling for r in second.rulings] == ["coexist", "replacement"]
    assert [r.ruling for r in second.effective] == ["replacement"]
    assert read_rulings(path).sha256 == second.sha256
    broken = path.read_bytes() + b'{"schema_version": 1\n'
    path.write_bytes(broken)
    with pytest.raises(RulingsError, match="line 3: invalid JSON"):
        append_ruling(path, ruling)
    assert path.read_bytes() == broken
    assert sorted(p.name for p in path.parent.iterdir()) == [".rulings.jsonl.lock",
                                                              "rulings.jsonl"]


def test_default_file_is_found_only_when_present(tmp_path: Path) -> None:
    assert find_rulings(None, tmp_path) is None
    (tmp_path / "rulings.jsonl").write_text("")
    assert find_rulings(None, tmp_path) == tmp_path / "rulings.jsonl"
    assert find_rulings("x.jsonl", tmp_path) == Path("x.jsonl")
    assert read_rulings(tmp_path / "rulings.jsonl").rulings == ()


def test_a_ledger_claim_round_trips_to_the_same_check_prompt() -> None:
    claim = Claim(id="c00007", subject="the user", slot="car", value="Skoda", tense="present",
                  attribution="own", sentence="The user's car is Skoda.",
                  document_uri="session://world-42/day-040/0", lineage="conversation",
                  contributor="user", day=40)
    other = claim.model_copy(update={"id": "c00031", "value": "Polestar", "day": 52,
                                     "sentence": "The user's car is Polestar."})
    ruled = RulingClaim.from_claim(claim)
    assert str(ruled.date) == "2026-02-14" and ruled.day == 40
    prompt = CHECK_PROMPTS["check-v1"]
    again = (ruled.as_claim("x"), RulingClaim.from_claim(other).as_claim("y"))
    assert prompt.render(*again) == prompt.render(claim, other)


def test_every_cell_of_the_table() -> None:
    yes, no, none = True, False, None
    cells = {
        ("coexist", yes, yes): "false_positive", ("coexist", yes, no): "agree",
        ("coexist", no, yes): "agree", ("coexist", no, no): "agree",
        ("replacement", yes, yes): "agree", ("replacement", no, yes): "miss",
        ("replacement", yes, no): "miss", ("replacement", none, yes): "undecided",
        ("coexist", yes, none): "undecided",
    }
    for (ruling, c, s), expected in cells.items():
        assert outcome(ruling, Judgement(contradicts=c, new_value_for_slot=s)) == expected


def test_scripted_checks_on_the_shipped_pairs() -> None:
    block = score_real_pairs(read_rulings(DATA).effective, OracleChecker())
    counts = {k: (r.numerator, r.denominator) for k, r in block.rates.items()}
    assert counts == {"agree": (3, 5), "false_positive": (1, 2), "miss": (1, 3),
                      "undecided": (0, 5)}
    assert block.table == {"coexist": {"retire": 1, "keep": 1, "undecided": 0},
                           "replacement": {"retire": 2, "keep": 1, "undecided": 0}}
    assert Ruling.model_validate(read_rulings(DATA).rulings[0].model_dump()).key == \
        block.pairs[0].pair_id
