"""Perception: how an arm reads documents (extractor) and judges claim pairs (checker).

- ``protocol``: the seams (``Extractor``, ``Checker``) and the shapes they return (``Claim``,
  ``ClaimDraft``, ``Judgement``, ``QuestionFrame``);
- ``oracle``: scripted perception read from the world's truth (the ``oracle`` arm, no calls);
- ``model``: model-backed perception for the ``probe`` and ``live`` arms, the model-client
  seam, the call cache, usage metering, estimates and the spending limit;
- ``arms``: which extractor and checker each arm uses.

This package module imports nothing.
"""
