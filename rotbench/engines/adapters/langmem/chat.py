"""The chat models rotbench hands LangMem's memory manager (langmem 0.0.30 over trustcall).

LangMem writes memory through tool calls: trustcall binds the tools ``Memory`` (a new
memory), ``PatchDoc`` (JSON patches to one existing memory, by id) and, when deletes are on,
``RemoveDoc`` (drop one existing memory, by id), and shows the model the existing memories
its store search found (at most ``query_limit``, 5 by default) as ``<instance id=ID
schema_type="Memory">{'content': ...}</instance>`` blocks in the system message.

- ``ScriptedChat`` (oracle arm) answers from rotbench's perceived claims of the document
  being added (``ScriptedChat.document``), the way LangMem's instructions ask a model to:
  a claim already held by a shown memory is not written again; a claim that gives a shown
  memory's slot a new value (rotbench's checker: ``new_value_for_slot``) patches that
  memory's content to the new sentence; any other claim is a new ``Memory``. With deletes
  on, every further shown memory the claim makes outdated, and every shown memory repeating
  another, is removed (``RemoveDoc``). It sees only the shown memories: an outdated memory
  the search did not surface stays as it is, which is LangMem's design.
- ``ModelChat`` (paid arms) sends the same messages and tool schemas as one text prompt
  through rotbench's cached, metered model client and reads the tool calls back from a JSON
  answer. trustcall puts a random session id into every prompt, and LangMem names memories by
  random uuids: the session id is replaced by a fixed one and each memory id by an alias
  (``m1``, ``m2``, ... in order of first appearance; tool calls are mapped back), so a prompt
  (and its cache key) is a pure function of the world. The scripted model sees the same text.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict

from rotbench.contract.engine import Document
from rotbench.contract.perception import Checker
from rotbench.engines.adapters.model_side import claim_key

MAX_TOKENS = 2048
"""Output budget of one memory-manager call through rotbench's model client (tokens)."""
TOOLS = ("Memory", "PatchDoc", "RemoveDoc")
"""The tool calls the scripted model answers with."""

_INSTANCE = re.compile(r'<instance id=(\S+) schema_type="([^"]*)">\n(.*?)\n</instance>', re.DOTALL)
_UUID = re.compile(r"\b(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
                   r"|[0-9a-f]{32})\b")
_SESSION = re.compile(r"session_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

Recorder = Callable[[str, str, str, str], None]
"""``on_call(tools offered, system, prompt, answer_json)``."""


class LangMemAnswerError(RuntimeError):
    """A LangMem call could not be answered; the message is one line."""


class ModelCallStopped(BaseException):  # noqa: N818 - not an error trustcall may catch
    """Carries a failed model call out through trustcall.

    trustcall catches every ``Exception`` its model raises while patching memories and asks
    again with the error's text appended, up to LangGraph's recursion limit, each request
    quoting the previous one (measured: hundreds of MB within a few retries). A failed call
    here (a refused or over-budget call, an answer that is not tool calls) is raised as this
    instead, which ``except Exception`` does not catch; the engine turns it back into a
    ``LangMemAnswerError`` with the same one-line message."""


def stable_text(text: str) -> str:
    """``text`` with trustcall's random session ids replaced by ``session_0``."""
    return _SESSION.sub("session_0", text)


def shown_memories(system: str) -> list[tuple[str, str]]:
    """The (id, content) of each existing memory trustcall shows the model, in order."""
    shown = []
    for memory_id, _, body in _INSTANCE.findall(system):
        try:
            value = ast.literal_eval(body.strip())
        except (ValueError, SyntaxError):
            value = body.strip()
        content = value.get("content") if isinstance(value, dict) else value
        shown.append((memory_id, str(content)))
    return shown


def split_messages(messages: list[BaseMessage]) -> tuple[str, str]:
    """(system, prompt) of a chat request: system messages joined, the others as
    ``role: text`` blocks; session ids made stable."""
    system = "\n\n".join(str(m.content) for m in messages if m.type == "system")
    prompt = "\n\n".join(f"{m.type}: {m.content}" for m in messages if m.type != "system")
    return stable_text(system), stable_text(prompt)


def tool_names(tools: list[Any] | None) -> list[str]:
    """Names of the tools bound to a request (OpenAI-style dicts or classes)."""
    names = []
    for tool in tools or []:
        if isinstance(tool, dict):
            names.append(tool.get("function", tool).get("name", ""))
        else:
            names.append(getattr(tool, "name", getattr(tool, "__name__", "")))
    return names



class _RotbenchChat(BaseChatModel):
    """Shared part: tool binding, call counting by tool, recording."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    calls: Counter = Counter()
    on_call: Any = None
    aliases: dict = {}

    @property
    def _llm_type(self) -> str:
        return "rotbench"

    def bind_tools(self, tools: list[Any], *, tool_choice: Any = None, **kwargs: Any):
        """The model with ``tools`` offered on every call (trustcall's seam)."""
        return self.bind(tools=tools, tool_choice=tool_choice, **kwargs)

    def _alias(self, text: str) -> str:
        """``text`` with each memory id (a random uuid) replaced by its alias ``mN``, numbered
        in order of first appearance in this engine's requests."""
        def alias(found: re.Match) -> str:
            return self.aliases.setdefault(found.group(0), f"m{len(self.aliases) + 1}")

        return _UUID.sub(alias, text)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        offered = tool_names(kwargs.get("tools"))
        system, prompt = (self._alias(t) for t in split_messages(messages))
        try:
            calls = self._tool_calls(offered, system, prompt, kwargs.get("tools") or [])
        except Exception as exc:  # noqa: BLE001 - see ModelCallStopped
            from rotbench._util.safe_text import safe_str, type_name

            raise ModelCallStopped(f"{type_name(exc)}: {safe_str(exc)}") from None
        real = {a: r for r, a in self.aliases.items()}
        for call in calls:
            if "json_doc_id" in call["args"]:
                doc = str(call["args"]["json_doc_id"])
                call["args"] = {**call["args"], "json_doc_id": real.get(doc, doc)}
        for call in calls:
            self.calls[call["name"]] += 1
        self.calls["requests"] += 1
        if self.on_call is not None:
            self.on_call(",".join(offered), paid_system(system, offered, kwargs.get("tools")),
                         prompt, self._alias(json.dumps(calls)))
        message = AIMessage(content="", tool_calls=[
            {"name": c["name"], "args": c["args"], "id": f"call_{i}", "type": "tool_call"}
            for i, c in enumerate(calls)])
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _tool_calls(self, offered, system, prompt, tools) -> list[dict]:
        raise NotImplementedError


class ScriptedChat(_RotbenchChat):
    """The oracle arm's memory model (see the module docstring). The engine sets
    ``document`` and ``drafts`` (its perceived claims, as filed ``Claim``s) before each
    ``invoke`` and files every perceived claim in ``claims`` (sentence -> Claim)."""

    checker: Any = None
    document: Document | None = None
    drafts: list = []
    claims: dict = {}

    def __init__(self, checker: Checker, on_call: Recorder | None = None) -> None:
        super().__init__(checker=checker, on_call=on_call, calls=Counter(), drafts=[], claims={},
                         aliases={})

    def _tool_calls(self, offered, system, prompt, tools) -> list[dict]:
        deletes = "RemoveDoc" in offered
        shown = [(i, text, self.claims.get(text.strip())) for i, text in shown_memories(system)]
        calls: list[dict] = []
        touched: set[str] = set()
        if deletes:  # a shown memory repeating an earlier shown one is redundant
            seen: set = set()
            for memory_id, _, claim in shown:
                key = claim_key(claim) if claim is not None else None
                if key is not None and key in seen:
                    calls.append({"name": "RemoveDoc", "args": {"json_doc_id": memory_id}})
                    touched.add(memory_id)
                seen.add(key)
        for new in self.drafts:
            held = [s for s in shown if s[2] is not None and s[0] not in touched]
            if any(claim_key(claim) == claim_key(new) for _, _, claim in held):
                continue  # already remembered: no duplicate extraction
            judged = self.checker.judge([(claim, new) for _, _, claim in held]) if held else []
            outdated = [memory_id for (memory_id, _, _), j in zip(held, judged, strict=True)
                        if j.new_value_for_slot]
            if not outdated:
                calls.append({"name": "Memory", "args": {"content": new.sentence}})
                continue
            calls.append({"name": "PatchDoc", "args": {
                "json_doc_id": outdated[0],
                "planned_edits": "replace the outdated value with the new one",
                "patches": [{"op": "replace", "path": "/content", "value": new.sentence}]}})
            touched.add(outdated[0])
            for memory_id in outdated[1:] if deletes else []:
                calls.append({"name": "RemoveDoc", "args": {"json_doc_id": memory_id}})
                touched.add(memory_id)
        return calls


class ModelChat(_RotbenchChat):
    """The paid arms: one Messages call per LangMem request through rotbench's model client;
    the answer is a JSON list of ``{"name": TOOL, "args": {...}}``."""

    client: Any = None
    model_id: str = ""

    def __init__(self, client: Any, model: str, on_call: Recorder | None = None) -> None:
        super().__init__(client=client, model_id=model, on_call=on_call, calls=Counter(),
                         aliases={})

    def _tool_calls(self, offered, system, prompt, tools) -> list[dict]:
        text = self.client.complete(model=self.model_id,
                                    system=paid_system(system, offered, tools),
                                    prompt=prompt, max_tokens=MAX_TOKENS).text
        return parse_tool_calls(text, offered)


def paid_system(system: str, offered: list[str], tools: list[Any] | None) -> str:
    """The system text of a paid call: LangMem's system text, then the offered tools' JSON
    schemas and how to answer (the recording for the estimate uses the same text)."""
    schemas = json.dumps([t.get("function", t) if isinstance(t, dict) else str(t)
                          for t in tools or []], sort_keys=True)
    return stable_text(f"{system}\n\nAnswer with only a JSON list of tool calls, each "
                       f'{{"name": one of {offered}, "args": {{...}}}}. Tools: {schemas}')


def parse_tool_calls(text: str, offered: list[str]) -> list[dict]:
    """The tool calls in a model's answer (a JSON list, optionally in a code fence). Raises
    LangMemAnswerError (one line) when it is not a list of offered tool calls."""
    from rotbench.engines.adapters.model_side import NotJSON, answer_json

    try:
        calls = answer_json(text)
    except NotJSON as exc:
        raise LangMemAnswerError(str(exc)) from None
    if not isinstance(calls, list) or not all(
            isinstance(c, dict) and c.get("name") in offered and isinstance(c.get("args"), dict)
            for c in calls):
        raise LangMemAnswerError(f"the answer is not a list of tool calls among {offered}")
    return [{"name": c["name"], "args": c["args"]} for c in calls]
