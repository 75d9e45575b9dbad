"""The noisy arm's hooks into a run: spec fields, the world runtime, stamps, the engines' arm.

Kept here so the run's own modules change by one call each (``rotbench.run.spec.build_spec``,
``rotbench.run.arm``, the CLI's ``--noise``).
"""

from __future__ import annotations

from rotbench.perception.noisy.profile import DEFAULT_PROFILE, ProfileError, load_profile


def noise_fields(arm: str, noise: str | None) -> dict:
    """``{"noise": ..., "noise_digest": ...}`` of a run on ``arm`` asking for ``noise``
    (None: the default profile on the noisy arm). Raises ProfileError (one line, naming the
    flag, the file and the field) for a bad profile, an empty name (``--noise ""``), or for
    ``--noise`` on another arm."""
    if noise is not None and not noise.strip():
        raise ProfileError("--noise: empty profile name; give good, typical, spec-live or a "
                           "profile .json file (or leave --noise out for typical)")
    if arm != "noisy":
        if noise is not None:
            raise ProfileError(f"--noise applies to --arm noisy only (this run is --arm "
                               f"{arm})")
        return {}
    name = noise or DEFAULT_PROFILE
    try:
        profile = load_profile(name)
    except ProfileError as exc:
        raise ProfileError(f"--noise {exc}") from None
    return {"noise": name, "noise_digest": profile.digest}


def run_profile(spec):
    """The profile of a noisy run, loaded again in the world's process and checked against
    the digest taken when the run was asked for. Raises ProfileError when the file changed
    since (the run would mix two profiles)."""
    profile = load_profile(spec.noise or DEFAULT_PROFILE)
    if spec.noise_digest is not None and profile.digest != spec.noise_digest:
        raise ProfileError(f"{spec.noise}: the profile changed after the run started "
                           f"(digest {profile.digest[:12]}, expected {spec.noise_digest[:12]})")
    return profile


def noisy_runtime(spec):
    """The ``NoisyRuntime`` of one world of the noisy run ``spec``."""
    from rotbench.perception.noisy.perception import NoisyRuntime

    return NoisyRuntime(arm="noisy", cache_dir=spec.cache_dir, profile=run_profile(spec))


def noisy_stamps(spec) -> tuple[str, str]:
    """(extractor stamp, checker stamp) of the noisy run ``spec`` (profile digest inside)."""
    from rotbench.perception.noisy.perception import stamps

    return stamps(run_profile(spec))


def engine_arm(arm: str) -> str:
    """The arm an engine under test is told: 'oracle' for the noisy arm, whose perception
    is scripted like the oracle's (an adapter then takes its scripted answers from the
    arm's claims and checks, which carry the noise), else ``arm`` itself."""
    return "oracle" if arm == "noisy" else arm


def noisy_texts(spec) -> list[str]:
    """Every claim sentence the noisy run ``spec`` hands the engines, over its seeds (the
    worlds are generated and planned here: pure and cheap), so the run's
    embedding warm-up covers them beside the oracle's texts and no index stage has to load
    the model. Empty on the other arms."""
    if spec.arm != "noisy" or spec.users != 1:
        return []
    from rotbench.perception.noisy.perception import world_plan
    from rotbench.world.generators.base import generate_world

    profile = run_profile(spec)
    texts: set[str] = set()
    for seed in spec.seeds:
        plan = world_plan(generate_world(seed, spec.days, spec.generator, spec.volume), profile)
        texts.update(d.sentence for drafts in plan.drafts.values() for d in drafts)
    return sorted(texts)
