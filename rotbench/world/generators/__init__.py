"""The world generators, one module per version: ``base`` (versions 1 and 2 and the dispatch),
``v3`` and ``v4``."""
