"""The run's decisions, in plain Python: what a run asks for (``spec``), which stages run for
which engine and in what order, under which cache keys and perception stamps (``plan``,
``keys``), where stage outputs are stored (``store``), what a world and a run hand back
(``outcome``) and how that becomes the reports of record (``report``, ``record``), the
paid arms' budget and the warm-up before the worlds (``paid``, ``warm``).

Nothing here imports Prefect: ``flows/`` runs the plan as tasks. This package module
imports nothing.
"""
