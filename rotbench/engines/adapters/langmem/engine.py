"""``langmem`` and ``langmem-deletes``: LangMem (langchain-ai, langmem 0.0.30) on rotbench's
worlds.

One LangGraph ``InMemoryStore`` per world (nothing is written to disk), indexed with
rotbench's MiniLM (``index={"dims": 384, "embed": ...}``, LangGraph's default field ``$``:
the stored value as JSON), and one ``create_memory_store_manager`` over it with the
namespace ``("memories", "{langgraph_user_id}")``. Each document is one ``invoke`` of the
manager: LangMem searches the store with the document's last message, shows the model the 5
nearest memories, and applies the tool calls the model answers with (new ``Memory``,
``PatchDoc``, and with deletes on ``RemoveDoc``); see ``chat`` for the models.

- ``langmem``: the factory's default, deletes off (``enable_deletes=False``).
- ``langmem-deletes``: the same with ``enable_deletes=True``.

LangMem keeps no world time (its store's timestamps are the wall clock), so, as its
documentation suggests, the document's written date opens the message text ("[written
2026-03-01] ..."). A conversation's turns keep their roles (a tool turn becomes an
assistant message marked as tool output); a web page is one assistant message naming the
page's host. A query is the store's own search (``store.search(namespace, query=...,
limit=k)``, cosine over the stored JSON); each hit is the memory's content, with rotbench's
raw cosine of question and content as ``similarity`` and the provenance of the claim whose
sentence it holds.

Several users in one store: the manager's namespace template is filled from
``config["configurable"]["langgraph_user_id"]``, the document's user (``user_label``:
LangGraph refuses a label holding a period, so such an id is passed as a digest), and a
question for a user searches that user's namespace.

LangMem, LangGraph and trustcall are imported with this module, which the engine server
imports once per run (``rotbench.engines.host.engine_worker``), so each world's worker is forked
with them loaded. Imported in the factory instead, they took about 2 CPU seconds per world,
inside the factory call's time limit: at a load of 14 on two cores the import alone passed
the 60 s limit (``engine langmem: seed 42, set-up: factory: no answer within 60 s``).
"""

from __future__ import annotations

import logging
from importlib.metadata import version
from typing import Any

import numpy as np
from langgraph.store.memory import InMemoryStore
from langmem import create_memory_store_manager

from rotbench.contract.context import EngineContext
from rotbench.contract.engine import Document, Hit, Provenance
from rotbench.contract.extraction import lineage_of
from rotbench.contract.perception import Claim
from rotbench.engines.adapters.langmem import chat as _chat  # noqa: F401 - preloaded
from rotbench.engines.adapters.mem0.engine import messages_of

USER_ID = "the-user"
"""The ``langgraph_user_id`` of a single-user world."""
CALL_TOOLS = ("Memory", "PatchDoc", "RemoveDoc")
"""Tool calls whose counts ``config`` always lists."""


def user_label(user: str | None) -> str:
    """The namespace label of ``user``'s memories: ``USER_ID`` for None, the id itself when
    LangGraph accepts it as a label (a non-empty string without a period), else ``'u-'`` and
    32 hex digits of its sha256 (one label per user, stable across runs)."""
    if user is None:
        return USER_ID
    if user and "." not in user:
        return user
    import hashlib

    return "u-" + hashlib.sha256(user.encode("utf-8")).hexdigest()[:32]


def dated_messages(document: Document) -> list[dict[str, str]]:
    """The document as LangMem messages, the first one opened by its written date."""
    messages = messages_of(document)
    head = messages[0]
    messages[0] = {**head, "content": f"[written {document.timestamp[:10]}] {head['content']}"}
    return messages


class LangMemEngine:
    """One LangMem store and memory manager for one world
    (``rotbench.contract.engine.MemoryEngine``). ``deletes``: ``enable_deletes``; ``chat``
    replaces the model (default: scripted on the oracle arm, the model client on paid arms).
    """

    def __init__(self, context: EngineContext, *, deletes: bool, chat: Any = None) -> None:
        from rotbench.engines.adapters.langmem.chat import ModelChat, ScriptedChat
        from rotbench.engines.builtin import LANGMEM, LANGMEM_DELETES

        info = LANGMEM_DELETES if deletes else LANGMEM
        self.name, self.version = info.name, info.version
        self.context = context
        if chat is None:
            from rotbench.engines.adapters.model_side import model_side

            chat = model_side(context, ScriptedChat, ModelChat)
        self.chat = chat
        logging.getLogger("trustcall").setLevel(logging.CRITICAL)
        context.embedder.encode(["the user"])  # load the model outside the timed calls
        self.store = InMemoryStore(index={"dims": 384, "embed": self._embed})
        self.manager = create_memory_store_manager(
            chat, namespace=("memories", "{langgraph_user_id}"), store=self.store,
            enable_deletes=deletes)
        self.deletes = deletes
        self.filed: dict[str | None, dict[str, Claim]] = {}  # user -> sentence -> claim
        self.written: dict[str, Document] = {}  # memory key -> the document that last wrote it
        self._serial = 0
        self._settings = {"langmem": version("langmem"), "trustcall": version("trustcall"),
                          "enable_deletes": deletes, "query_limit": 5}

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return np.asarray(self.context.embedder.encode(list(texts)), np.float64).tolist()

    @property
    def config(self) -> dict:
        """Versions, the delete setting, and this world's tool calls by name (``calls_<Tool>``)
        and model requests."""
        calls = self.chat.calls
        return {**self._settings, **{f"calls_{t}": calls.get(t, 0) for t in CALL_TOOLS},
                "requests": calls.get("requests", 0)}

    @staticmethod
    def _config(user: str | None) -> dict:
        return {"configurable": {"langgraph_user_id": user_label(user)}}

    def deposit(self, document: Document) -> None:
        from rotbench.engines.adapters.langmem.chat import (
            LangMemAnswerError,
            ModelCallStopped,
            ScriptedChat,
        )

        if isinstance(self.chat, ScriptedChat):  # only the scripted model reads claims
            drafts = []
            lineage = lineage_of(document)
            for draft in self.context.claims(document):
                self._serial += 1
                claim = Claim(**draft.model_dump(), id=f"c{self._serial}",
                              document_uri=document.uri, lineage=lineage,
                              contributor=document.contributor, day=document.day)
                drafts.append(claim)
                self.filed.setdefault(document.user, {})[claim.sentence.strip()] = claim
            self.chat.claims = self.filed.get(document.user, {})
            self.chat.drafts, self.chat.document = drafts, document
        namespace = ("memories", user_label(document.user))
        before = self._contents(namespace)
        try:
            self.manager.invoke({"messages": dated_messages(document)},
                                config=self._config(document.user))
        except ModelCallStopped as stopped:
            raise LangMemAnswerError(str(stopped)) from None
        finally:
            if isinstance(self.chat, ScriptedChat):
                self.chat.drafts, self.chat.document = [], None
        for key, text in self._contents(namespace).items():
            if before.get(key) != text:  # written (added or patched) by this document
                self.written[key] = document

    def _contents(self, namespace: tuple[str, str]) -> dict[str, str]:
        return {item.key: self._text(item.value)
                for item in self.store.search(namespace, limit=100_000)}

    def query(self, question: str, k: int, user: str | None = None) -> list[Hit]:
        """The store's search over ``user``'s memories (``USER_ID`` for one user)."""
        if k <= 0:
            return []
        namespace = ("memories", user_label(user))
        found = self.store.search(namespace, query=question, limit=k)
        texts = [self._text(item.value) for item in found]
        if not texts:
            return []
        vectors = np.asarray(self.context.embedder.encode([question, *texts]), np.float64)
        cosines = vectors[1:] @ vectors[0]
        return [Hit(text=text, score=item.score, similarity=float(cos),
                    provenance=self._provenance(text, item.key, user))
                for item, text, cos in zip(found, texts, cosines, strict=True)]

    @staticmethod
    def _text(value: dict) -> str:
        content = value.get("content")
        if isinstance(content, dict):
            content = content.get("content", content)
        return str(content)

    def _provenance(self, text: str, key: str, user: str | None) -> Provenance:
        """The document that last wrote the memory (its claim's, when the scripted model's
        claim is known: the same document unless a later one repeated it)."""
        claim = self.filed.get(user, {}).get(text.strip())
        if claim is not None:
            return Provenance(document_uri=claim.document_uri, day=claim.day, status="active",
                              lineage=claim.lineage, claim_id=key)
        document = self.written.get(key)
        if document is None:
            return Provenance(claim_id=key, lineage=None, status="active")
        return Provenance(document_uri=document.uri, day=document.day, status="active",
                          lineage=lineage_of(document), claim_id=key)

    def close(self) -> None:
        """Drop the store (it lives in memory only)."""
        self.store = None


def make_default(context: EngineContext) -> LangMemEngine:
    """Factory of ``langmem`` (deletes off, LangMem's default)."""
    return LangMemEngine(context, deletes=False)


def make_deletes(context: EngineContext) -> LangMemEngine:
    """Factory of ``langmem-deletes`` (``enable_deletes=True``)."""
    return LangMemEngine(context, deletes=True)
