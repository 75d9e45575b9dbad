"""The noisy arm: the oracle's scripted perception with seeded perception errors at
published rates (docs/noisy-arm.md). Free: no model is ever called.

- ``profile``: ``NoiseProfile``, ``load_profile`` and the shipped profiles (``good``,
  ``typical`` (the default), ``spec-live``), each rate with its source;
- ``record``: the seeded draw, ``InjectedError`` and ``NoisePlan``;
- ``plan``: ``plan_world``, the per-world decision of which error hits which claim;
- ``questions``: the questions' share of a plan (misread question frames);
- ``perception``: ``NoisyExtractor``, ``NoisyChecker`` and the arm's ``NoisyRuntime``;
- ``attribution``: the per-probe error ids and the ``perception_noise`` counts of a report.

See docs/noisy-arm.md.
"""

from rotbench.perception.noisy.profile import (
    BUILTIN_PROFILES,
    DEFAULT_PROFILE,
    KINDS,
    NoiseProfile,
    ProfileError,
    load_profile,
)

__all__ = ["BUILTIN_PROFILES", "DEFAULT_PROFILE", "KINDS", "NoiseProfile", "ProfileError",
           "load_profile"]
