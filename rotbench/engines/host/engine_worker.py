"""Plug-in engines in worker processes of their own, speaking plain data over a pipe.

An engine under test that runs inside the run's process shares its modules (a monkeypatched
scorer or hit check), its embedder, its threads, its file descriptors (the supervisor's status
pipe) and its signals. So every engine but rotbench's own (``IN_PROCESS``: the reference engine
and the two baselines) runs in a worker process:

- per engine and run, one *engine server* is started (``python -c``, in a session of its own,
  current folder and ``HOME`` those of the run's sandbox, ``sys.path`` the run's): it imports
  rotbench's boundary modules and the engine's factory module once (and calls the module's
  ``preload_in_server``, when it has one, for what its engine imports only when built), then
  forks one worker per world on request. Starting the server is the per-run cost (about one
  interpreter start-up); a fork per world costs milliseconds;
- each worker starts a session (its own process group), builds the engine with the factory,
  and runs every ``deposit`` / ``query`` / ``close`` the run asks for, copying each answer into
  plain data and checking it (``validate_hits``) before it is sent. Messages are JSON frames
  (embeddings: raw float32 bytes); the run never unpickles what a worker sends, and checks the
  hits again on its side;
- what an engine takes from its ``EngineContext`` (embedder, model client, extractor, checker)
  is a handle in the worker whose calls are answered by the run's own objects, so an engine
  that patches its handle changes only its own figures;
- the run waits for each call at most the engine's timeout. A call past it, a worker that dies
  (a crash, ``os._exit``), or a stray ``KeyboardInterrupt`` in engine code costs that engine
  alone: its worker's process group is killed and the failure names the call;
- at the end of each world the worker's process group is killed, and at the end of the run
  (``stop_servers``, also at exit) every server's; a server dies with the run's process
  (end of file on its control socket, however the run ended) and takes its
  workers' groups with it.

The worker never holds the supervisor's status descriptor: the server is started with only
its control socket open, and the variable naming the descriptor is removed from its
environment. Its standard output and error are one pipe, relayed escaped to the run's
standard error (``relay_output``).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from typing import Any

IN_PROCESS = frozenset({"rotbench.reference.engine:make_engine",
                        "rotbench.engines.baselines.transcript_rag:make_engine",
                        "rotbench.engines.baselines.latest_wins:make_engine"})
"""Factories run in the run's own process (rotbench's reference engine and baselines)."""
OFF_ENV = "ROTBENCH_ENGINES_IN_PROCESS"
"""Set to 1 to run every engine in the run's process (a debugger; no isolation)."""
SERVER_START_SECONDS = 120.0
"""Longest wait for an engine server to start (a Python interpreter importing rotbench's
boundary modules, before the engine's module), seconds."""
HASH_SEED = "0"
"""``PYTHONHASHSEED`` of every engine server (and so of its workers), unless the run's
environment sets one: Python's per-process random string hashing changed the order in which
an engine iterated a set of string ids, and with it the order of tied hits."""
MAX_FRAME_BYTES = 128 << 20
"""Largest message a worker may send the run (bytes); past it the worker is failed."""
MAX_ENCODE_TEXTS = 1_024
"""Most texts one encode request from a worker may carry (its handle splits a longer list)."""
MAX_CALL_TEXTS = 8_192
"""Most texts the run embeds for one engine call (its encode requests together); past it
the engine fails, naming the call."""
MAX_CALL_REQUESTS = 4_096
"""Most handle requests (embeddings, claims, question frames, checks, completions) one
engine call may make; past it the engine fails, naming the call."""
MAX_JUDGE_PAIRS = 1_024
"""Most claim pairs one check request may carry."""


def isolated(info: Any) -> bool:
    """True when the engine of ``info`` (an ``EngineInfo``) runs in a worker process."""
    return info.factory not in IN_PROCESS and not os.environ.get(OFF_ENV)


def kill_group(pid: int) -> None:
    """SIGKILL to process group ``pid`` (gone already: nothing)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


# -- the run's side --------------------------------------------------------------------------

class ServerError(RuntimeError):
    """An engine server could not be started or stopped answering."""


RELAY_LINE_CHARS = 8192
"""Longest piece of an engine's output held back waiting for its line end, characters; a
longer one is relayed as it stands (memory stays bounded whatever the engine writes)."""
RELAY_JOIN_SECONDS = 2.0
"""How long stopping a server waits for the last of its output to be relayed, seconds (a
process the engine left running may hold the pipe open)."""
_LINE_END = re.compile(r"\r\n|\r|\n")


def relay_output(stream, prefix: str = "") -> None:
    """Copy what an engine server and its workers write to their standard output and error
    (one pipe, UTF-8) to the run's standard error, a line at a time, every control character
    but the tab escaped (``rotbench._util.sinks.escape_unsafe``, no cut): an engine's ``print``
    reaches the terminal as text, never as an escape sequence. A carriage return ends a
    line as a newline does (a progress bar's redraws arrive as lines), and a piece longer
    than ``RELAY_LINE_CHARS`` goes out without waiting for its end. The pipe is always drained,
    even once the run's stderr cannot be written (an engine must never block on it); ends at
    end of file (the server and every worker gone). Each line starts with ``prefix``
    (``[engine MODULE] ``, ``relay_prefix``), so that nothing an engine prints can pass for
    a line of rotbench's own (``rotbench: error: ...``)."""
    import codecs

    from rotbench._util.sinks import escape_unsafe

    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pending = ""
    try:
        while True:
            try:
                chunk = os.read(stream.fileno(), 1 << 16)
            except (OSError, ValueError):
                chunk = b""
            text = pending + decoder.decode(chunk, final=not chunk)
            held = "\r" if chunk and text.endswith("\r") else ""  # its "\n" may come next
            *lines, pending = _LINE_END.split(text[:len(text) - len(held)])
            pending += held
            if len(pending) > RELAY_LINE_CHARS or (not chunk and pending):
                lines, pending = [*lines, pending.rstrip("\r")], ""
            for line in lines:
                try:
                    sys.stderr.write(prefix + escape_unsafe(line, keep=("\t",)) + "\n")
                    sys.stderr.flush()
                except Exception:  # noqa: BLE001 - no stderr (2>&-), or a closed one: drop it
                    pass
            if not chunk:
                break
    finally:
        stream.close()


def relay_prefix(module: str) -> str:
    """What each line an engine module's processes write starts with on the run's stderr."""
    from rotbench._util.safe_text import printable

    return f"[engine {printable(module, 80)}] "


class EngineServer:
    """One engine server process for one engine module (see the module text)."""

    def __init__(self, module: str, import_seconds: float | None = None) -> None:
        """Start the server and wait until it has imported ``module``: at most
        ``SERVER_START_SECONDS`` for the interpreter and rotbench's modules, then at most
        ``import_seconds`` (the engine's timeout; None: ``SERVER_START_SECONDS``) for the
        engine's module. Raises ServerError (the server then killed with all it started)."""
        from rotbench._util.lifetime import CHILD_ENV

        ours, theirs = socket.socketpair()
        env = {k: v for k, v in os.environ.items() if k != CHILD_ENV}
        # A fixed string-hash seed: an engine that iterates a set of ids gives the same
        # order, and so the same answers, in every run (Hindsight's graph arm did not).
        env.setdefault("PYTHONHASHSEED", HASH_SEED)
        env["PYTHONUNBUFFERED"] = "1"  # an engine's print reaches the relay as it is made
        env["PYTHONIOENCODING"] = "utf-8:backslashreplace"  # what the relay decodes
        # rotbench's own adapters (peer engines it ships) keep writing where their
        # libraries expect; every other engine is confined where the kernel allows
        roots = [] if module.startswith("rotbench.") else list(_WRITE_ROOTS)
        if roots:  # the engine's temporary files go beneath the folders it may write
            env["TMPDIR"] = roots[0]
        code = ("import json,sys; sys.path[:] = json.loads(sys.argv[1]); "
                "from rotbench.engines.host.engine_worker_side import serve; "
                "serve(int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4]))")
        self.module = module
        self.forked: set[int] = set()
        """Every worker this server forked (their own ends are counted by ``end_worker``)."""
        self.lock = threading.Lock()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", code, json.dumps(sys.path), str(theirs.fileno()),
                 module, json.dumps(roots)], pass_fds=(theirs.fileno(),), env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                start_new_session=True)
        finally:
            theirs.close()
        self.relay = threading.Thread(target=relay_output,
                                      args=(self.process.stdout, relay_prefix(module)),
                                      name="rotbench-engine-output", daemon=True)
        self.relay.start()
        self.ctrl = ours
        if self._signal(SERVER_START_SECONDS) != b"B":
            self.stop()
            raise ServerError("the engine's worker process could not be started")
        limit = SERVER_START_SECONDS if import_seconds is None else import_seconds
        ready = self._signal(limit)
        if ready != b"R":
            self.stop()
            from rotbench._util.safe_text import printable

            raise ServerError(
                f"the engine's module {printable(module, 80)} did not finish importing within "
                f"{limit:g} s (its import counts against --engine-timeout)" if ready is None
                else "the engine's worker process ended while importing the engine's module")

    def _signal(self, seconds: float) -> bytes | None:
        """The server's next one-byte signal, None when none came within ``seconds``
        (b"" when the server ended)."""
        self.ctrl.settimeout(seconds)
        try:
            return self.ctrl.recv(1)
        except TimeoutError:
            return None
        except OSError:
            return b""

    def alive(self) -> bool:
        return self.process.poll() is None

    def fork(self) -> tuple[int, Channel]:
        """A new worker: its pid (also its process group) and the run's end of its pipe."""
        ours, theirs = socket.socketpair()
        with self.lock:
            try:
                self.ctrl.settimeout(SERVER_START_SECONDS)
                socket.send_fds(self.ctrl, [b"W"], [theirs.fileno()])
                reply = b""
                while len(reply) < 8:
                    chunk = self.ctrl.recv(8 - len(reply))
                    if not chunk:
                        raise ServerError("the engine server ended")
                    reply += chunk
            except OSError as exc:
                raise ServerError(f"the engine server stopped answering ({exc})") from None
            finally:
                theirs.close()
        pid = struct.unpack("!q", reply)[0]
        self.forked.add(pid)
        return pid, Channel(ours)

    def stop(self) -> None:
        """Close the control socket (the server then ends every worker and every process
        below it, and exits), then kill the server's own process group and whatever is still
        below it (what the engine's module started at import, in a session of its own or
        not: the server is a subreaper). Processes found running below the server besides
        its workers are counted for the run's note (``ended_notes``)."""
        from rotbench._util.processes import descendants, end_tree, session_of

        pid = self.process.pid
        left = [p for p in descendants(pid) if p not in _WORKERS and p not in self.forked]
        own = sum(session_of(p) not in (pid, None) for p in left)
        _count_ended(self.module, len(left), own)
        end_tree(pid)
        try:
            self.ctrl.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        kill_group(pid)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        relay = getattr(self, "relay", None)
        if relay is not None:  # the engine's last lines, before the run's own
            relay.join(timeout=RELAY_JOIN_SECONDS)


_WRITE_ROOTS: list[str] = []
"""Where servers started now let their engine write (``confine_engines``; empty: no
confinement)."""


def confine_engines(roots: list[str]) -> None:
    """Servers started from now on confine their engine's writes to beneath ``roots`` (the
    first also its ``TMPDIR``; ``rotbench.engines.host.confine``); [] lifts that for later
    servers. Set by the run's sandbox (``rotbench.engines.sandbox.engine_sandbox``)."""
    _WRITE_ROOTS[:] = [str(r) for r in roots]


_SERVERS: dict[tuple, EngineServer] = {}
_SERVERS_LOCK = threading.Lock()
_STARTING: dict[tuple, threading.Lock] = {}
_FAILED: dict[tuple, ServerError] = {}
"""Servers that could not be started, by key: every later world meets the same failure at
once instead of waiting for a second start."""
_WORKERS: set[int] = set()
"""Process groups of the workers alive now (killed by ``stop_servers``)."""
_ENDED: dict[str, list[int]] = {}
"""Processes an engine module's worker or server left running that the run ended, by
module: [count, of which in a session of their own] (``ended_notes``)."""


def _count_ended(module: str, count: int, own_session: int) -> None:
    if count:
        with _SERVERS_LOCK:
            tally = _ENDED.setdefault(module, [0, 0])
            tally[0] += count
            tally[1] += own_session


def ended_notes() -> list[str]:
    """One line per engine module whose processes the run had to end (taken: the tally
    restarts)."""
    from rotbench._util.safe_text import printable

    with _SERVERS_LOCK:
        tallies = sorted(_ENDED.items())
        _ENDED.clear()
    return [f"engine module {printable(module, 80)}: ended {count} process"
            f"{'es' if count != 1 else ''} it had left running"
            + (f" ({own} in a session of {'their' if own != 1 else 'its'} own)" if own else "")
            for module, (count, own) in tallies]


def server_for(module: str, import_seconds: float | None = None) -> EngineServer:
    """The running server for engine module ``module`` in this folder and HOME (started on
    first use, its module's import limited to ``import_seconds``). Raises ServerError (the
    same one again, at once, for a server that could not be started)."""
    key = (module, os.getcwd(), os.environ.get("HOME"))  # the sandbox's: one run's
    with _SERVERS_LOCK:  # one start per key at a time, other engines' servers not held up
        starting = _STARTING.setdefault(key, threading.Lock())
    with starting:
        with _SERVERS_LOCK:
            server = _SERVERS.get(key)
            failed = _FAILED.get(key)
        if failed is not None:
            raise ServerError(str(failed))
        if server is None or not server.alive():
            try:
                server = EngineServer(module, import_seconds)
            except ServerError as exc:
                with _SERVERS_LOCK:
                    _FAILED[key] = exc
                raise
            with _SERVERS_LOCK:
                _SERVERS[key] = server
        return server


def prestart(engines: list[Any], import_seconds: float | None = None) -> None:
    """Start the servers of the isolated engines among ``engines`` (``EngineInfo``s the
    caller resolved, so this thread reads no engine's files) on a background thread, so
    that their start-up overlaps the run's first stages (a world that needs one first waits
    for it to be ready). Whatever fails here is met again, and reported, by the world that
    starts the worker."""

    def start() -> None:
        for info in engines:
            try:
                if isolated(info):
                    server_for(info.factory.partition(":")[0], import_seconds)
            except Exception:  # noqa: BLE001 - reported by the world, not here
                continue

    threading.Thread(target=start, name="rotbench-engine-servers", daemon=True).start()


def start_worker(module: str, import_seconds: float | None = None) -> tuple[int, Channel]:
    """A fresh worker forked by the server of ``module``: (pid = process group, pipe)."""
    pid, conn = server_for(module, import_seconds).fork()
    _WORKERS.add(pid)
    return pid, conn


def end_worker(pid: int, conn: Channel | None = None, module: str | None = None) -> None:
    """End worker ``pid`` and every process below it (its process group, and descendants
    that left it by ``setsid``: the worker is a subreaper, so a double fork stays below
    it), then close its pipe. The worker is stopped first, so it starts nothing while its
    descendants are ended; those found are counted for ``module``'s note."""
    from rotbench._util.processes import descendants, end_tree, group_members, session_of

    try:
        os.kill(pid, signal.SIGSTOP)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    found = sorted((set(descendants(pid)) | set(group_members(pid))) - {pid})
    own = sum(session_of(p) not in (pid, None) for p in found)
    end_tree(pid)
    kill_group(pid)
    if module is not None:
        _count_ended(module, len(found), own)
    _WORKERS.discard(pid)
    if conn is not None:
        try:
            conn.close()
        except OSError:
            pass


def stop_servers() -> None:
    """Kill every worker's and every engine server's process group this process started."""
    for pid in list(_WORKERS):
        end_worker(pid)
    with _SERVERS_LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    for server in servers:
        server.stop()
    with _SERVERS_LOCK:
        _FAILED.clear()


atexit.register(stop_servers)


class FrameTooLarge(OSError):
    """A frame above the size the receiver accepts (``MAX_FRAME_BYTES``)."""


class Channel:
    """Length-prefixed frames over a stream socket (4-byte big-endian length, then the
    bytes). ``recv`` waits at most until a deadline for the *whole* frame, so a worker that
    sends half a frame and stops cannot hold the run past the engine's timeout."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def send(self, data: bytes) -> None:
        self.sock.settimeout(None)
        self.sock.sendall(struct.pack("!I", len(data)) + data)

    def recv(self, deadline: float | None = None, limit: int = MAX_FRAME_BYTES) -> bytes | None:
        """The next frame; None when ``deadline`` (``time.monotonic``) passed first. Raises
        EOFError when the other end closed, OSError for a frame above ``limit`` bytes."""
        head = self._exact(4, deadline)
        if head is None:
            return None
        size = struct.unpack("!I", head)[0]
        if size > limit:
            raise FrameTooLarge(f"sent a reply of {size} bytes, above the {limit >> 20} MiB "
                                "one reply may take")
        return self._exact(size, deadline) if size else b""

    def _exact(self, size: int, deadline: float | None) -> bytes | None:
        chunks, got = [], 0
        while got < size:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self.sock.settimeout(remaining)
            else:
                self.sock.settimeout(None)
            try:
                chunk = self.sock.recv(min(size - got, 1 << 20))
            except TimeoutError:
                return None
            if not chunk:
                raise EOFError("the other end closed")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self.sock.close()


__all__ = ["IN_PROCESS", "Channel", "EngineServer", "ServerError", "end_worker", "ended_notes",
           "isolated",
           "kill_group", "start_worker", "stop_servers"]
