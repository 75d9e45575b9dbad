"""The plug-in ``benchmarks/bench_isolation.py`` times: rotbench's transcript-rag baseline
behind a module of its own (``--engine _isolation_engine:make_engine`` from ``benchmarks/``),
so that rotbench runs it as any plug-in, in a worker process."""

from rotbench.engines.baselines.transcript_rag import make_engine as _make


def make_engine(context):
    return _make(context)
