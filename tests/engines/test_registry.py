"""The engine registry, the engines command, and the harness's checks of an engine's answers."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.contract.engine import Hit
from rotbench.contract.registry import EngineError, EngineInfo
from rotbench.engines import registry
from rotbench.engines.host.guarded import EngineFailure, GuardedEngine, validate_hits
from rotbench.engines.registry import resolve

runner = CliRunner()


def test_builtins_are_registered_through_entry_points() -> None:
    found = registry.registered()
    assert {"reference", "transcript-rag", "latest-wins"} <= set(found)
    assert found["reference"].separable and found["reference"].takes == "claims"
    assert found["transcript-rag"].takes == "documents" and not found["transcript-rag"].paid_calls
    assert found["latest-wins"].factory == "rotbench.engines.baselines.latest_wins:make_engine"


def test_unknown_engine_suggests_the_closest_name() -> None:
    with pytest.raises(EngineError) as err:
        resolve("transcript-ragg")
    assert str(err.value).startswith("unknown engine 'transcript-ragg' (did you mean "
                                     "'transcript-rag'? available: ")


def test_missing_extra_names_the_extra(monkeypatch) -> None:
    info = EngineInfo(name="far", version="1", factory="far_away:make", takes="documents",
                      requires=("no_such_package_here",), extra="far")
    monkeypatch.setattr(registry, "registered", lambda: {"far": info})
    with pytest.raises(EngineError, match=r"engine 'far' is not installed: pip install "
                                          r"'rotbench\[far\]'"):
        resolve("far")


def test_module_factory_is_resolved_from_the_working_directory(tmp_path, monkeypatch) -> None:
    (tmp_path / "mine.py").write_text("def make(context):\n    return None\n")
    monkeypatch.chdir(tmp_path)
    info = resolve("mine:make")
    assert (info.name, info.takes) == ("mine:make", "claims")
    assert info.source_sha256 and info.identity.startswith("mine:make@unversioned#")
    with pytest.raises(EngineError, match="module 'nowhere' not found"):
        resolve("nowhere:make")
    for builtin in ("os:path", "sys:exit"):  # found, but not a module of the user's
        with pytest.raises(EngineError, match=f"module '{builtin.split(':')[0]}' has no source "
                                              r"file \(a module built into Python\?\)"):
            resolve(builtin)


def test_engines_command_lists_every_engine() -> None:
    table = runner.invoke(app, ["engines"])
    assert table.exit_code == 0
    # "raw documents" may wrap in its cell: a missing extra's "no: pip install
    # 'rotbench[...]'" widens the installed column (hindsight's, beside mem0 and particles)
    words = table.output.split()
    assert "transcript-rag" in words and "raw" in words and "documents" in words
    rows = json.loads(runner.invoke(app, ["engines", "--format", "json"]).output)
    by_name = {r["name"]: r for r in rows}
    assert by_name["latest-wins"]["installed"] is True
    assert by_name["reference"]["version"] == "0.6.4"


def test_run_refuses_an_unknown_engine_before_any_work(tmp_path) -> None:
    result = runner.invoke(app, ["run", "--engine", "refrence", "--cache-dir",
                                 str(tmp_path / "c"), "--reports-dir", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.output.strip().startswith(
        "rotbench: error: --engine: unknown engine 'refrence' (did you mean 'reference'?")
    assert not (tmp_path / "c").exists()


def _reason(what: str) -> Exception:
    return ValueError(what)


@pytest.mark.parametrize(("answer", "message"), [
    ("a string", "returned str, not a list of hits"),
    ([Hit(text="a")] * 3, "returned 3 hits for k=2"),
    ([{"txt": "a"}], "malformed hit at position 1: text: Field required"),
    ([Hit(text="a"), {"text": "b", "similarity": "high"}],
     "malformed hit at position 2: similarity: Input should be a valid number"),
])
def test_malformed_answers_are_named(answer, message) -> None:
    with pytest.raises(ValueError) as err:
        validate_hits(answer, 2, _reason)
    assert str(err.value).startswith(message)


def test_hits_are_ranked_by_position_whatever_the_engine_says() -> None:
    hits = validate_hits([Hit(text="b", rank=9), {"text": "a"}], 5, _reason)
    assert [(h.rank, h.text, h.similarity, h.provenance) for h in hits] == [
        (1, "b", None, None), (2, "a", None, None)]


def test_an_object_without_query_is_refused_at_set_up() -> None:
    class Half:
        name = "half"

        def deposit(self, document) -> None: ...

    with pytest.raises(EngineFailure, match=r"^engine half: seed 7, set-up: protocol: Half has "
                                            r"no query\(\)$"):
        GuardedEngine(Half(), 7, 1.0)


@pytest.mark.slow
def test_estimate_counts_only_what_the_engines_use(tmp_path) -> None:
    args = ["run", "--arm", "probe", "--estimate", "--seed", "42", "--cache-dir",
            str(tmp_path / "c"), "--reports-dir", str(tmp_path / "r")]
    rag = runner.invoke(app, [*args, "--engine", "transcript-rag"])
    assert rag.exit_code == 0, rag.output
    assert "total    0 calls" in rag.output
    reference = runner.invoke(app, args)
    assert "check" in reference.output and "total    0 calls" not in reference.output


class _Recording:
    """An as-of engine that notes the thread of every call; ``fail`` raises from query."""

    name = "recording"

    def __init__(self, fail: Exception | None = None) -> None:
        self.threads: set[int] = set()
        self.fail = fail

    def deposit(self, document) -> None: ...

    def query(self, question: str, k: int) -> list[Hit]:
        return self.query_as_of(question, 0, k)

    def query_as_of(self, question: str, day: int, k: int) -> list[Hit]:
        import threading

        self.threads.add(threading.get_ident())
        if self.fail is not None:
            raise self.fail
        return [Hit(text=f"{question} on day {day}")]


@pytest.mark.parametrize(("timeout", "same_thread"), [(None, True), (5.0, False)])
def test_calls_run_on_the_callers_thread_only_without_a_timeout(timeout, same_thread) -> None:
    import threading

    engine = _Recording()
    guard = GuardedEngine(engine, 3, timeout)
    hits = guard.hits(7, "q?", 2, as_of=True)
    guard.close()
    assert [h.text for h in hits] == ["q? on day 7"]
    assert (engine.threads == {threading.get_ident()}) is same_thread


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_an_engine_raising_a_timeout_of_its_own_is_named(timeout) -> None:
    guard = GuardedEngine(_Recording(fail=TimeoutError("backend slow")), 3, timeout)
    with pytest.raises(EngineFailure, match=r"^engine recording: seed 3, day 7: query\('q\?', "
                                            r"k=2\): raised TimeoutError: backend slow "
                                            r"\(at \S+test_registry\.py:\d+ in query_as_of\)$"):
        guard.hits(7, "q?", 2, as_of=True)
    guard.close()


def test_a_hit_s_stored_bytes_count_its_strings_as_json() -> None:
    """``stored_bytes``: 512 bytes of overhead plus each string as JSON, escapes and UTF-8
    included; a string needing no escape is counted without building its JSON, and gets
    the same count."""
    from rotbench.contract.engine import Provenance
    from rotbench.engines.host.guarded import _json_bytes, stored_bytes

    texts = ["", "plain", 'say "hi"', "back\\slash", "tab\tand\nline", "\x00\x1f\x7f",
             "café", "\u2028 and 😀", "x" * 10_000]
    for text in texts:
        assert _json_bytes(text) == len(json.dumps(text, ensure_ascii=False).encode()), text
    assert [_json_bytes(t) for t in texts[:8]] == [2, 7, 12, 13, 16, 15, 7, 14]
    hit = Hit(text='He said "Denver".\n', provenance=Provenance(
        document_uri="session://world-42/day-003/0", claim_id="c-é"))
    [scored] = validate_hits([hit], 1, EngineFailure)
    # text 23 (three escapes), URI 30, lineage "conversation" 14, claim id 6 (é: 2 bytes)
    assert stored_bytes(scored) == 512 + 23 + 30 + 14 + 6
    with pytest.raises(UnicodeEncodeError):
        _json_bytes("lone \ud800")
