"""rotbench's private helpers, used across its rooms and by nothing outside rotbench.

Outside text: ``sinks`` is the one rule of what is escaped for each place text is written
(terminal, CSV, markdown, HTML); ``safe_text`` (terminal lines, table cells, the console) and
``outputs.terminal_safe`` are built on it. Files: ``atomic`` (whole-or-nothing writes),
``regular`` (reading only regular files), ``json_input`` (the one JSON reader for outside
input), ``outputs`` (what a command writes, checked first). Numbers and fields from outside:
``ranges``, ``validation``. Processes: ``lifetime`` (a child ends with its parent),
``processes`` (who a pid names now), ``ports``. A run's housekeeping: ``collector`` (garbage
collector settings), ``progress``.

This package module imports nothing.
"""
