"""Reports of record shipped with the package: every built-in engine, baseline and peer
adapter on the default worlds (seeds 42 43 44; the oracle arm and the noisy arm under the
``good`` and ``typical`` profiles), trimmed to what ``rotbench compare`` and the results
page need (each figure, each question's outcome, the top behaviours) and a manifest of what
ran.

``models``: the shipped shapes (validated on every load); ``build``: a report of record to a
shipped record; ``store``: reading the shipped files; ``regenerate``: ``make published``.
"""
