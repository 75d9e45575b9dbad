"""Noise profiles: the shipped ones load with a source per rate; every bad profile is refused
with one line naming the file and the field, and ``rotbench run`` then runs nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.perception.noisy import BUILTIN_PROFILES, KINDS, ProfileError, load_profile
from rotbench.perception.noisy.profile import PROFILE_DIR


def test_shipped_profiles_name_every_kind_with_a_source() -> None:
    for name in BUILTIN_PROFILES:
        profile = load_profile(name)
        assert profile.name == name
        for kind in KINDS:
            assert 0.0 <= profile.rate(kind) <= 1.0
            assert getattr(profile.kinds, kind).source.strip()
    typical, good = load_profile("typical"), load_profile("good")
    assert (typical.rate("omission"), good.rate("omission")) == (0.57, 0.26)  # HaluMem
    assert (typical.rate("update_missed"), good.rate("update_missed")) == (0.74, 0.38)
    assert len({load_profile(n).digest for n in BUILTIN_PROFILES}) == 3


def _profile(tmp_path: Path, edit) -> Path:
    data = json.loads((PROFILE_DIR / "typical.json").read_text())
    edit(data)
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data))
    return path


def _rate_out_of_range(d: dict) -> None:
    d["kinds"]["omission"]["rate"] = 1.5


def _missing_kind(d: dict) -> None:
    del d["kinds"]["tense_error"]


def _unknown_key(d: dict) -> None:
    d["kinds"]["omission"]["weight"] = 2


BAD = [
    (_rate_out_of_range, "field kinds.omission.rate: Input should be less than or equal to 1"),
    (_missing_kind, "field kinds.tense_error: missing kind (every kind needs a rate and a "
                    "source)"),
    (_unknown_key, "field kinds.omission.weight: Extra inputs are not permitted"),
]


@pytest.mark.parametrize(("edit", "message"), BAD, ids=["rate", "missing-kind", "unknown-key"])
def test_bad_profile_is_one_line_naming_file_and_field(tmp_path, edit, message) -> None:
    path = _profile(tmp_path, edit)
    with pytest.raises(ProfileError) as info:
        load_profile(str(path))
    assert str(info.value) == f"{path}: {message}"


def test_unknown_profile_name() -> None:
    with pytest.raises(ProfileError) as info:
        load_profile("optimistic")
    assert str(info.value) == ("'optimistic': unknown noise profile; available: good, "
                               "typical, spec-live, or a path to a profile .json file")


@pytest.mark.parametrize("case", ["name", "rate", "missing-kind", "unknown-key"])
def test_run_refuses_a_bad_profile_before_anything_runs(tmp_path, case) -> None:
    edits = {"rate": _rate_out_of_range, "missing-kind": _missing_kind,
             "unknown-key": _unknown_key}
    noise = "optimistic" if case == "name" else str(_profile(tmp_path, edits[case]))
    reports, cache = tmp_path / "reports", tmp_path / "cache"
    result = CliRunner().invoke(app, ["run", "--arm", "noisy", "--noise", noise, "--seed",
                                      "42", "--reports-dir", str(reports), "--cache-dir",
                                      str(cache)])
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("rotbench: error: --noise ")
    assert noise in lines[0]
    assert ("field kinds." in lines[0]) != (case == "name")
    assert not reports.exists() and not cache.exists()


def test_noise_on_another_arm_is_refused(tmp_path) -> None:
    result = CliRunner().invoke(app, ["run", "--noise", "good", "--reports-dir",
                                      str(tmp_path / "r"), "--cache-dir", str(tmp_path / "c")])
    assert result.exit_code != 0
    assert "--noise applies to --arm noisy only (this run is --arm oracle)" in result.output


def test_estimate_says_zero_calls(tmp_path) -> None:
    result = CliRunner().invoke(app, ["run", "--arm", "noisy", "--estimate", "--seed", "42",
                                      "--reports-dir", str(tmp_path / "r"), "--cache-dir",
                                      str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == ("arm noisy (typical): 0 model calls, $0.00 (scripted "
                                     "perception with seeded errors only)")


def test_the_docs_rate_table_is_the_shipped_profiles() -> None:
    page = (Path(__file__).parents[3] / "docs" / "noisy-arm.md").read_text()
    profiles = [load_profile(n) for n in ("good", "typical", "spec-live")]
    for kind in KINDS:
        row = f"| `{kind}` | " + " | ".join(f"{p.rate(kind):g}" for p in profiles) + " |"
        assert row in page, row


@pytest.mark.parametrize("noise", ["", "  "])
def test_an_empty_noise_name_is_refused_before_any_work(noise: str, tmp_path) -> None:
    reports, cache = tmp_path / "r", tmp_path / "c"
    result = CliRunner().invoke(app, ["run", "--arm", "noisy", "--noise", noise, "--seed", "42",
                                      "--reports-dir", str(reports), "--cache-dir", str(cache)])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert (result.exit_code, lines) == (2, [
        "rotbench: error: --noise: empty profile name; give good, typical, spec-live or a "
        "profile .json file (or leave --noise out for typical)"])
    assert not reports.exists() and not cache.exists()


def _set(kind_field: str, value):
    def edit(d: dict) -> None:
        d["kinds"]["omission"][kind_field] = value
    return edit


@pytest.mark.parametrize(("edit", "message"), [
    (_set("rate", True), "field kinds.omission.rate: not a number (a JSON number from 0 to 1, "
                         "not true or a string)"),
    (_set("rate", "0.5"), "field kinds.omission.rate: not a number (a JSON number from 0 to "
                          "1, not true or a string)"),
    (_set("source", " "), "field kinds.omission.source: blank (say where the rate comes from)"),
], ids=["true", "string", "blank-source"])
def test_a_rate_that_is_not_a_number_or_a_blank_source_is_refused(tmp_path, edit,
                                                                  message) -> None:
    """``true`` was read as 1.0, ``"0.5"`` as 0.5 and a blank citation accepted."""
    path = _profile(tmp_path, edit)
    with pytest.raises(ProfileError) as info:
        load_profile(str(path))
    assert str(info.value) == f"{path}: {message}"


def test_a_key_given_twice_is_refused_naming_its_line(tmp_path) -> None:
    """JSON keeps the last of two equal keys; the profile took the second omission rate
    without a word."""
    text = (PROFILE_DIR / "typical.json").read_text()
    path = tmp_path / "twice.json"
    path.write_text(text.replace('"kinds": {', '"kinds": {\n "omission": {"rate": 0.9, '
                                 '"source": "x"},', 1))
    # the shipped omission line, one line lower below the inserted one
    second = 1 + next(i for i, line in enumerate(text.splitlines(), 1) if '"omission"' in line)
    with pytest.raises(ProfileError) as info:
        load_profile(str(path))
    assert str(info.value) == f"{path}: line {second}: key 'omission' given twice in one object"
    assert load_profile(str(PROFILE_DIR / "typical.json")).rate("omission") == 0.57
