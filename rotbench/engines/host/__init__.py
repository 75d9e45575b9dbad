"""The engine host: where an engine under test runs and how the harness talks to it.

``guarded`` wraps every call (its own thread, a timeout, answers checked: ``GuardedEngine``,
``validate_hits``); ``engine_worker`` is the parent's side of an engine server (a process per
engine, the channel, ending its process group), ``engine_worker_side`` the child's side;
``isolated`` gives the stages an engine that lives in such a server; ``confine`` keeps a
plug-in's processes from writing outside their folders.

This package module imports nothing.
"""
