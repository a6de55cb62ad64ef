"""ChatGPT's data export (Settings › Data controls › Export data): a zip whose `conversations.json`
holds every conversation. It holds no memory file: the memories are read out of the conversations.

The file is a list of conversations, `{"title", "create_time", "mapping": {node id: {"id", "parent",
"children", "message"}}, "current_node", ...}`, each message `{"author": {"role", "name"},
"create_time", "content": {"content_type", "parts"}, "recipient", "channel", "metadata"}`, times in
Unix seconds. In them:

- a memory ChatGPT saved is an assistant message to its memory tool, `"recipient": "bio"`, the
  memory its `parts`; the tool (`role` tool, `name` bio) answers "Model set context updated.";
- the custom instructions come with each conversation, in a hidden message whose metadata's
  `user_context_message_data` holds `about_user_message` (what the owner told ChatGPT about
  themselves) and `about_model_message` (how they want it to answer);
- a conversation of 2024 opens with the memory as it then stood, a message of `content_type`
  `model_editable_context` whose `model_set_context` is the "Model Set Context" list of dated entries.

Facts: each memory saved, its time the message's, its source `import:chatgpt:conversations.json#TITLE`;
each line of the custom instructions, once (they have no time: the earliest conversation holding
them gives theirs), source `...#custom instructions: about you` or `...: how to answer`; the entries of
the newest snapshot of the memory, each with its date (plain_list.py), source `...#Model Set Context`.
Every node is read, on every branch: a memory saved in an answer the owner then regenerated was
saved all the same. The rest (the chat, the tool's answers, the instructions again, older
snapshots) is counted as not memories, a conversation at a time. A conversation is numbered by its
place in the file, from 1: that number is its facts' "line"."""

from __future__ import annotations

from datetime import datetime, timezone

from . import Malformed, Parsed, load_json, plain_list
from .facts import DATE, MAX_SOURCE, candidate
from .markdown_memory import entries

SOURCE = "import:chatgpt:conversations.json"
INSTRUCTIONS = {"about_user_message": "custom instructions: about you",
                "about_model_message": "custom instructions: how to answer"}


def is_export(data: object) -> bool:
    """A list of conversations: objects with a title and a mapping (the first 50 looked at)."""
    return isinstance(data, list) and bool(data) and all(isinstance(c, dict) and "mapping" in c and "title" in c
                                                         for c in data[:50])


def read(text: str, mapping: dict) -> Parsed:
    data = load_json(text)
    if not isinstance(data, list):
        raise Malformed("line 1: not ChatGPT's conversations.json: a list of conversations, each with a title and a mapping")
    parsed = Parsed(columns=["title", "bio", "user_context_message_data", "model_set_context"])
    conversations = []
    for n, c in enumerate(data, start=1):
        if isinstance(c, dict) and isinstance(c.get("mapping"), dict):
            conversations.append((n, c, [node["message"] for node in c["mapping"].values()
                                         if isinstance(node, dict) and isinstance(node.get("message"), dict)]))
        else:
            parsed.refused.append((n, "not a conversation: it has no mapping"))
    conversations.sort(key=lambda found: seconds(found[1].get("create_time")))  # the file's order is not time's
    snapshot = newest_snapshot(conversations)
    seen: set[tuple[str, str]] = set()  # the custom instructions read already
    for n, c, messages in conversations:
        title = c.get("title") if isinstance(c.get("title"), str) and c["title"].strip() else "untitled"
        before, used = len(parsed.refused), 0  # used: the messages memories were read from
        for m in sorted(messages, key=lambda m: seconds(m.get("create_time"), c.get("create_time"))):
            if memory(m):
                used += 1
                fact(parsed, n, said(m), f"{SOURCE}#{title}"[:MAX_SOURCE], m.get("create_time"), c)
            elif m is snapshot:
                used += 1
                found, _ = plain_list.entries(m["content"]["model_set_context"])
                for _, text, date in found:
                    fact(parsed, n, text, f"{SOURCE}#Model Set Context", date or m.get("create_time"), c)
            elif isinstance(m.get("metadata"), dict) and isinstance(m["metadata"].get("user_context_message_data"), dict):
                used += instructions(parsed, n, m["metadata"]["user_context_message_data"], seen, c)
        parsed.refused[before:] = [(line, f"{title}: {why}") for line, why in parsed.refused[before:]]
        if len(messages) > used:
            rest = len(messages) - used
            parsed.not_memories.append((n, f"{title}: {rest} message{'s' if rest != 1 else ''} of the conversation, "
                                           "none a memory"))
    parsed.refused.sort(key=lambda refused: refused[0])
    parsed.not_memories.sort(key=lambda counted: counted[0])
    return parsed


def memory(m: dict) -> bool:
    author = m.get("author") if isinstance(m.get("author"), dict) else {}
    return m.get("recipient") == "bio" and author.get("role") == "assistant"


def said(m: dict) -> str:
    """The text of a message: its parts that are text, else a `text` field."""
    content = m.get("content") if isinstance(m.get("content"), dict) else {}
    parts = content.get("parts") if isinstance(content.get("parts"), list) else []
    text = "\n".join(p for p in parts if isinstance(p, str))
    return text if text.strip() or not isinstance(content.get("text"), str) else content["text"]


def newest_snapshot(conversations: list) -> dict | None:
    """The last message holding the memory as it stood, in the newest conversation that has one."""
    for _, _, messages in reversed(conversations):
        found = [m for m in messages if isinstance(m.get("content"), dict)
                 and m["content"].get("content_type") == "model_editable_context"
                 and isinstance(m["content"].get("model_set_context"), str)]
        if found:
            return max(found, key=lambda m: seconds(m.get("create_time")))
    return None


def instructions(parsed: Parsed, n: int, data: dict, seen: set, c: dict) -> int:
    """The custom instructions' lines, each field's text once: 1 when some were read, else 0."""
    used = 0
    for field, section in INSTRUCTIONS.items():
        text = data.get(field)
        if not isinstance(text, str) or not text.strip() or (field, text.strip()) in seen:
            continue
        seen.add((field, text.strip()))
        used = 1
        for e in entries(text):
            fact(parsed, n, e.text, f"{SOURCE}#{section}", e.time, c)
    return used


def seconds(*values: object) -> float:
    """The first of `values` that is a time in Unix seconds, for ordering; none sorts last."""
    return next((float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)), float("inf"))


def fact(parsed: Parsed, n: int, text: str, source: str, time: object, c: dict) -> None:
    """A candidate fact at `time`, else at its conversation's time: Unix seconds, or the date a line
    opens with ("2024-09-02", which candidate() checks); any other time is refused with the conversation's
    number."""
    value = time if time is not None else c.get("create_time")
    try:
        if isinstance(value, str) and DATE.fullmatch(value):
            when = value
        elif isinstance(value, bool) or not isinstance(value, (int, float, type(None))):
            raise ValueError
        else:
            when = None if value is None else datetime.fromtimestamp(value, timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):  # (text, NaN, a year past 9999)
        parsed.refused.append((n, "its time is not a time in Unix seconds"))
        return
    candidate(parsed, n, text, source, None, when)
