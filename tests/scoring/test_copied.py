"""``scoring.models.copied`` gives what pydantic's ``model_copy(update=...)`` gives: the same
class, fields, fields set and (empty) extra and private parts; a model with a private part,
or one that copies itself its own way, is handed to ``model_copy``."""

from __future__ import annotations

from pydantic import BaseModel, PrivateAttr

from rotbench.scoring.models import ProbeRecord, ScoredHit, copied


def _state(model: BaseModel) -> tuple:
    return (type(model), model.__dict__, model.__pydantic_fields_set__,
            model.__pydantic_extra__, model.__pydantic_private__)


def test_a_record_copies_as_model_copy_does() -> None:
    hit = ScoredHit(rank=2, text="I live in Porto", similarity=0.5)
    probe = ProbeRecord(day=3, attribute=None, question="What is my cat called?", truth=None,
                        hits=[hit])
    for model, update in ((hit, {"perception_errors": ["e1"]}),
                          (probe, {"perception_errors": ["e1", "e2"], "hits": []}),
                          (probe, {})):
        got = copied(model, update)
        assert got is not model
        assert _state(got) == _state(model.model_copy(update=update))
    assert copied(hit, {"rank": 5}).model_fields_set == {"rank", "text", "similarity"}
    assert hit.rank == 2  # the original is untouched


def test_a_model_with_a_private_part_takes_model_copy() -> None:
    class Kept(BaseModel):
        name: str
        _seen: int = PrivateAttr(default=0)

    kept = Kept(name="a")
    kept._seen = 4
    got = copied(kept, {"name": "b"})
    assert (got.name, got._seen) == ("b", 4)
    assert _state(got) == _state(kept.model_copy(update={"name": "b"}))
