"""Showing results: the terminal tables (``render``), comparisons (``compare``), the HTML page
(``html``) and its plots (``plots``, cached by ``plot_cache``).

This package module imports nothing.
"""
