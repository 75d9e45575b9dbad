"""``Additive`` models leave their added fields out of JSON while they are empty, in
pydantic's core serializer (no Python dict per instance). The bytes are pinned: every
fingerprint and cache key rests on them."""

from __future__ import annotations

from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.world.models import Additive


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def test_empty_added_fields_are_left_out_and_others_kept_in_field_order() -> None:
    hit = ScoredHit(rank=1, text="The user lives in Oslo.", cls="current")
    assert hit.model_dump_json() == (
        '{"rank":1,"text":"The user lives in Oslo.","score":null,"similarity":null,'
        '"provenance":null,"cls":"current","poison_channels":[]}')
    full = hit.model_copy(update={"values": ["oslo"], "framed_past": False})
    assert full.model_dump_json() == (
        '{"rank":1,"text":"The user lives in Oslo.","score":null,"similarity":null,'
        '"provenance":null,"cls":"current","poison_channels":[],"values":["oslo"],'
        '"framed_past":false}')
    assert full.model_dump()["values"] == ["oslo"] and "decoy_kinds" not in full.model_dump()


def test_an_empty_tuple_or_set_set_without_validation_is_left_out_too() -> None:
    hit = ScoredHit(rank=2, text=None).model_copy(update={"values": (), "decoy_kinds": set()})
    assert '"values"' not in hit.model_dump_json()
    assert '"decoy_kinds"' not in hit.model_dump_json()


def test_a_world_s_probes_round_trip_byte_for_byte() -> None:
    probe = ProbeRecord(day=3, attribute=None, question="Blood type?", truth=None,
                        hits=[ScoredHit(rank=1, text="x", cls="none")])
    world = WorldProbes(seed=7, days=30, generator_version="1", fingerprint="f",
                        pools={"home_city": ["Oslo"]}, probes=[probe])
    data = world.model_dump_json()
    assert data == ('{"seed":7,"days":30,"generator_version":"1","fingerprint":"f",'
                    '"pools":{"home_city":["Oslo"]},"probes":[{"day":3,"attribute":null,'
                    '"question":"Blood type?","truth":null,"hits":[{"rank":1,"text":"x",'
                    '"score":null,"similarity":null,"provenance":null,"cls":"none",'
                    '"poison_channels":[]}]}]}')
    assert WorldProbes.model_validate_json(data).model_dump_json() == data


def test_no_additive_model_serialises_through_python() -> None:
    models = _subclasses(Additive)
    assert len(models) >= 10
    for model in models:
        assert not model.__pydantic_decorators__.model_serializers, model.__name__
        for name in model.added_fields:
            assert model.model_fields[name].exclude_if is not None, (model.__name__, name)
