"""``--estimate``: projected model calls, tokens and dollars of a run, before anything runs."""
