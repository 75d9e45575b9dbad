"""Results on disk: the report file (``report``) and the world files beside it (``worlds``).

This package module imports nothing.
"""
