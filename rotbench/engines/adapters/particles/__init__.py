"""``particles``: the Particles adapter."""
