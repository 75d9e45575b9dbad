"""``rotbench.engines.host.engine_worker.relay_output``: what a plug-in engine's process writes
reaches the run's stderr as escaped text, a line at a time, and the pipe is always drained."""

from __future__ import annotations

import io
import os
import sys
import threading
import time

import pytest

from rotbench.engines.host.engine_worker import RELAY_LINE_CHARS, relay_output


def relayed(chunks: list[bytes], stderr: object, prefix: str = "") -> None:
    """Write ``chunks`` into a pipe relayed to ``stderr`` (each a separate read), then close
    it and wait for the relay to end."""
    read, write = os.pipe()
    thread = threading.Thread(target=relay_output, args=(os.fdopen(read, "rb"), prefix))

    def engine() -> None:  # a write blocks while the pipe is full
        for chunk in chunks:
            os.write(write, chunk)
            time.sleep(0.02)  # one read each
        os.close(write)

    writer = threading.Thread(target=engine, daemon=True)
    saved, sys.stderr = sys.stderr, stderr
    try:
        thread.start()
        writer.start()
        writer.join(10)
        thread.join(10)
    finally:
        sys.stderr = saved
    assert not writer.is_alive(), "the engine blocked on a full pipe"
    assert not thread.is_alive()


def test_lines_are_escaped_and_split_reads_are_joined() -> None:
    """ESC, BEL and C1 arrive as text; a UTF-8 character and a CRLF split between reads are
    joined; a carriage return ends a line (a progress bar's redraw); a tab stays; the last
    piece without a line end is relayed at the end."""
    out = io.StringIO()
    csi = "\u009b".encode()  # C1 control sequence introducer, as UTF-8
    relayed([b"a\x1b[2Jb\x07\n", b"caf\xc3", b"\xa9" + csi + b"\r", b"\nnext\rbar\tx",
             b"\r\n", csi + b"tail"], out)
    assert out.getvalue() == ("a\\x1b[2Jb\\x07\ncafé\\x9b\nnext\nbar\tx\n\\x9btail\n")


def test_a_long_piece_without_a_line_end_goes_out_without_waiting() -> None:
    out = io.StringIO()
    relayed([b"x" * (RELAY_LINE_CHARS + 1), b"y" * 10], out)
    assert out.getvalue() == "x" * (RELAY_LINE_CHARS + 1) + "\n" + "y" * 10 + "\n"


@pytest.mark.parametrize("stderr", [None, io.StringIO()])
def test_the_pipe_is_drained_when_stderr_cannot_be_written(stderr) -> None:
    """No stderr (``2>&-``) or a closed one: the lines are dropped, never left in the pipe
    (an engine writing more than the pipe holds would block)."""
    if stderr is not None:
        stderr.close()
    relayed([b"z" * 70000 + b"\n"] * 3, stderr)  # more than a pipe's 64 KiB


def test_each_relayed_line_names_the_engine_module_so_none_passes_for_rotbench() -> None:
    """An engine's ``print("rotbench: error: ...")`` reached the terminal as it stood, a
    line rotbench never wrote."""
    from rotbench.engines.host.engine_worker import relay_prefix

    out = io.StringIO()
    relayed([b"rotbench: error: your run failed\nok\x1b[0m"], out, relay_prefix("my\x1bengine"))
    assert out.getvalue() == ("[engine my\\x1bengine] rotbench: error: your run failed\n"
                              "[engine my\\x1bengine] ok\\x1b[0m\n")
