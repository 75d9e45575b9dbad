"""The run database (DuckDB): its tables and writes (``tables``) and example queries
(``queries``).

This package module imports nothing.
"""
