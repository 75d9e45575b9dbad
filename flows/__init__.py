"""Prefect wiring of rotbench's pipeline stages. Nothing here decides anything: every stage
is a plain function in ``rotbench``; this package only turns them into cached tasks and
subflows."""
