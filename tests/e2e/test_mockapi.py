"""The scripted mock API on its own (no CLIs needed): wire formats, turn logic, rules, recording."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.mockapi import Call, MockAPI, Reply, Rule, bash, call, edit, read, reply, say, write

CLAUDE_TOOLS = [{"name": n, "input_schema": {"type": "object"}} for n in ("Bash", "Write", "Edit", "Read")]
PI_TOOLS = [
    {"name": "bash", "input_schema": {"properties": {"command": {}}}},
    {"name": "write", "input_schema": {"properties": {"path": {}, "content": {}}}},
    {"name": "edit", "input_schema": {"properties": {"path": {}, "edits": {}}}},
    {"name": "read", "input_schema": {"properties": {"path": {}}}},
]
CODEX_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {}}}},
    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
]


@pytest.fixture
def mock() -> Iterator[MockAPI]:
    with MockAPI() as m:
        yield m


def post(mock: MockAPI, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> bytes:
    req = urllib.request.Request(
        mock.base_url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", **(headers or {})},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 200
        data: bytes = resp.read()
        return data


def sse(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in data.decode().split("\n\n"):
        if not chunk.strip():
            continue
        name = next(line[7:] for line in chunk.splitlines() if line.startswith("event: "))
        payload = next(line[6:] for line in chunk.splitlines() if line.startswith("data: "))
        events.append((name, json.loads(payload)))
    return events


def anthropic(mock: MockAPI, messages: list[dict[str, Any]], tools: Any = CLAUDE_TOOLS) -> dict[str, Any]:
    """POST a streamed /v1/messages request and rebuild the message from its events."""
    events = sse(
        post(mock, "/v1/messages", {"model": "m", "stream": True, "messages": messages, "tools": tools})
    )
    assert events[0][0] == "message_start" and events[-1][0] == "message_stop"
    msg = events[0][1]["message"]
    blocks: list[dict[str, Any]] = []
    for name, data in events:
        if name == "content_block_start":
            blocks.append(dict(data["content_block"]))
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[data["index"]]["text"] += delta["text"]
            else:
                blocks[data["index"]]["input"] = json.loads(delta["partial_json"])
        elif name == "message_delta":
            msg["stop_reason"] = data["delta"]["stop_reason"]
    msg["content"] = blocks
    return dict(msg)


def tool_result(tool_use_id: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use_id, "content": "ok"}]}


def test_anthropic_turns_tool_rounds_and_retries(mock: MockAPI) -> None:
    mock.set_script([[bash("ls"), say("first")], [say("second")]])
    convo: list[dict[str, Any]] = [{"role": "user", "content": "do it"}]
    m1 = anthropic(mock, convo)
    assert m1["stop_reason"] == "tool_use"
    (use,) = m1["content"]
    assert use["type"] == "tool_use" and use["name"] == "Bash" and use["input"]["command"] == "ls"
    assert anthropic(mock, convo)["content"][0]["input"]["command"] == "ls"  # a retry: same reply
    convo += [{"role": "assistant", "content": m1["content"]}, tool_result(use["id"])]
    m2 = anthropic(mock, convo)
    assert m2["stop_reason"] == "end_turn" and m2["content"] == [{"type": "text", "text": "first"}]
    convo += [{"role": "assistant", "content": m2["content"]}, {"role": "user", "content": "again"}]
    convo.append({"role": "system", "content": "hook context HOOK-MARKER"})
    assert anthropic(mock, convo)["content"][0]["text"] == "second"
    convo += [{"role": "assistant", "content": [{"type": "text", "text": "second"}]}]
    convo.append({"role": "user", "content": "past the script"})
    assert anthropic(mock, convo)["content"][0]["text"] == "Done."
    assert [r.decision for r in mock.model_requests()] == ["turn", "turn", "turn", "turn", "extra"]
    assert mock.turns_used == 3
    assert "HOOK-MARKER" in mock.all_text()
    assert len(mock.requests_containing("HOOK-MARKER")) == 2


def test_anthropic_reminder_only_user_message_does_not_start_a_turn(mock: MockAPI) -> None:
    mock.set_script([[bash("ls"), say("end")], [say("wrong turn")]])
    convo: list[dict[str, Any]] = [{"role": "user", "content": "do it"}]
    use = anthropic(mock, convo)["content"][0]
    convo += [{"role": "assistant", "content": [use]}, tool_result(use["id"])]
    convo.append(
        {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"}]}
    )
    assert anthropic(mock, convo)["content"][0]["text"] == "end"


def test_anthropic_rules_side_requests_and_plain_json(mock: MockAPI) -> None:
    mock.set_script([[say("main")]], rules=[Rule("SUB-TASK", (read("/x"), say("sub done")))])
    sub = anthropic(mock, [{"role": "user", "content": "SUB-TASK: look"}])
    assert sub["content"][0]["name"] == "Read" and sub["content"][0]["input"] == {"file_path": "/x"}
    side = json.loads(
        post(mock, "/v1/messages", {"model": "m", "messages": [{"role": "user", "content": "t"}]})
    )
    assert side["content"] == [{"type": "text", "text": "ok"}]  # no tools offered: a side request
    plain = json.loads(
        post(
            mock,
            "/v1/messages",
            {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": CLAUDE_TOOLS},
        )
    )
    assert plain["content"][0]["text"] == "main"
    assert [r.decision for r in mock.model_requests()] == ["rule", "side", "turn"]
    assert mock.turns_used == 1


def test_pi_tool_names_and_arguments(mock: MockAPI) -> None:
    mock.set_script(
        [
            [
                reply(bash("ls"), write("/p/a", "x"), edit("/p/a", "x", "y"), read("/p/a")),
                call("custom", {"k": 1}),
            ]
        ]
    )
    convo: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    blocks = anthropic(mock, convo, PI_TOOLS)["content"]
    assert [(b["name"], b["input"]) for b in blocks] == [
        ("bash", {"command": "ls"}),
        ("write", {"path": "/p/a", "content": "x"}),
        ("edit", {"path": "/p/a", "edits": [{"oldText": "x", "newText": "y"}]}),
        ("read", {"path": "/p/a"}),
    ]
    convo += [{"role": "assistant", "content": blocks}, *(tool_result(b["id"]) for b in blocks)]
    assert anthropic(mock, convo, PI_TOOLS)["content"][0]["name"] == "custom"


def responses(mock: MockAPI, items: list[dict[str, Any]], tools: Any = CODEX_TOOLS) -> list[dict[str, Any]]:
    """POST a streamed /v1/responses request; the output items of `response.completed`."""
    body = {"model": "gpt-5.5", "stream": True, "input": items, "tools": tools}
    events = sse(post(mock, "/v1/responses", body, {"session-id": "s1"}))
    names = [n for n, _ in events]
    assert names[0] == "response.created" and names[-1] == "response.completed"
    done = [d["item"] for n, d in events if n == "response.output_item.done"]
    output: list[dict[str, Any]] = events[-1][1]["response"]["output"]
    assert output == done
    return output


def test_openai_exec_command_and_apply_patch(mock: MockAPI) -> None:
    mock.set_script([[bash("echo hi"), write("/p/n.txt", "a\nb\n"), edit("/p/n.txt", "b", "c"), say("fin")]])
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
    ]
    (c1,) = responses(mock, items)
    assert c1["type"] == "function_call" and c1["name"] == "exec_command"
    assert json.loads(c1["arguments"]) == {"cmd": "echo hi"}
    items += [c1, {"type": "function_call_output", "call_id": c1["call_id"], "output": "hi"}]
    (c2,) = responses(mock, items)
    assert c2["type"] == "custom_tool_call" and c2["name"] == "apply_patch"
    assert c2["input"] == "*** Begin Patch\n*** Add File: /p/n.txt\n+a\n+b\n*** End Patch\n"
    items += [c2, {"type": "custom_tool_call_output", "call_id": c2["call_id"], "output": "ok"}]
    (c3,) = responses(mock, items)
    assert "*** Update File: /p/n.txt\n@@\n-b\n+c\n" in c3["input"]
    items += [c3, {"type": "custom_tool_call_output", "call_id": c3["call_id"], "output": "ok"}]
    (m,) = responses(mock, items)
    assert m["type"] == "message" and m["content"][0]["text"] == "fin"


def test_openai_patch_falls_back_to_shell_without_apply_patch_tool(mock: MockAPI) -> None:
    mock.set_script([[write("/p/n.txt", "a\n")]])
    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]
    (c,) = responses(mock, items, tools=CODEX_TOOLS[:1])
    assert c["name"] == "exec_command"
    assert json.loads(c["arguments"])["cmd"].startswith("apply_patch <<'PATCH'\n*** Begin Patch\n")


def test_other_endpoints_answer_harmlessly(mock: MockAPI) -> None:
    counted = json.loads(post(mock, "/v1/messages/count_tokens", {"messages": []}))
    assert counted == {"input_tokens": 100}
    with urllib.request.urlopen(mock.base_url + "/v1/models", timeout=10) as resp:
        assert json.loads(resp.read())["data"][0]["id"] == "mock-model"
    assert json.loads(post(mock, "/api/event_logging/batch", {"events": [1]})) == {}
    assert [r.decision for r in mock.requests] == ["other", "other", "other"]
    assert mock.model_requests() == []


def test_a_broken_script_step_gets_a_text_reply_not_an_error(mock: MockAPI) -> None:
    mock.set_script([[Reply(calls=(Call("write", {"path": "/p/a"}),))]])  # no "content": a bug
    msg = anthropic(mock, [{"role": "user", "content": "go"}])
    assert msg["content"][0]["text"].startswith("mockapi error: KeyError")
    assert mock.model_requests()[0].decision.startswith("error")


def _fn(name: str, props: list[str], required: list[str] | None = None) -> dict[str, Any]:
    params = {"type": "object", "properties": {p: {} for p in props}, "required": required or props}
    return {"type": "function", "function": {"name": name, "parameters": params}}


QWEN_TOOLS = [
    _fn("run_shell_command", ["command", "description"], ["command"]),
    _fn("write_file", ["file_path", "content"]),
    _fn("edit", ["file_path", "old_string", "new_string"]),
    _fn("read_file", ["file_path", "offset"], ["file_path"]),
]
OPENCODE_TOOLS = [
    _fn("bash", ["command", "description"]),
    _fn("write", ["filePath", "content"]),
    _fn("edit", ["filePath", "oldString", "newString"]),
    _fn("read", ["filePath"]),
]
COPILOT_TOOLS = [
    _fn("bash", ["command", "description", "mode"], ["command", "description"]),
    _fn("create", ["path", "file_text"]),
    _fn("edit", ["path", "old_str", "new_str"], ["path"]),
    _fn("view", ["path"]),
]
KIMI_TOOLS = [
    _fn("Shell", ["command", "timeout"], ["command"]),
    _fn("WriteFile", ["path", "content", "mode"], ["path", "content"]),
    _fn("StrReplaceFile", ["path", "edit"], ["path", "edit"]),
    _fn("ReadFile", ["path"]),
]


def chat(
    mock: MockAPI, messages: list[dict[str, Any]], tools: Any = QWEN_TOOLS, usage: bool = True
) -> dict[str, Any]:
    """POST a streamed /v1/chat/completions request; the assistant message rebuilt from its chunks."""
    body: dict[str, Any] = {"model": "m", "stream": True, "messages": messages, "tools": tools}
    if usage:
        body["stream_options"] = {"include_usage": True}
    raw = post(mock, "/v1/chat/completions", body).decode()
    events = [e for e in raw.split("\n\n") if e.strip()]
    assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"
    chunks = [json.loads(e[6:]) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    if usage:
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
        chunks = chunks[:-1]
    else:
        assert all(c["choices"] for c in chunks)
    message: dict[str, Any] = {"role": "assistant", "content": "", "tool_calls": []}
    for c in chunks:
        (choice,) = c["choices"]
        delta = choice["delta"]
        message["content"] += delta.get("content") or ""
        message["tool_calls"] += delta.get("tool_calls") or []
        message["finish_reason"] = choice["finish_reason"]
    assert [t["index"] for t in message["tool_calls"]] == list(range(len(message["tool_calls"])))
    return message


def calls_of(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(t["function"]["name"], json.loads(t["function"]["arguments"])) for t in message["tool_calls"]]


def test_chat_turns_tool_rounds_usage_and_done(mock: MockAPI) -> None:
    mock.set_script([[reply(bash("ls"), read("/p/a"), text="Looking."), say("first")], [say("second")]])
    convo: list[dict[str, Any]] = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": [{"type": "text", "text": "<system-reminder>skills</system-reminder>"}]},
        {"role": "user", "content": [{"type": "text", "text": "do it"}]},
    ]
    m1 = chat(mock, convo)
    assert m1["finish_reason"] == "tool_calls" and m1["content"] == "Looking."
    assert calls_of(m1) == [("run_shell_command", {"command": "ls"}), ("read_file", {"file_path": "/p/a"})]
    assert calls_of(chat(mock, convo, usage=False)) == calls_of(m1)  # a retry: same reply
    convo.append({"role": "assistant", "content": "Looking.", "tool_calls": m1["tool_calls"]})
    convo += [{"role": "tool", "tool_call_id": t["id"], "content": "ok"} for t in m1["tool_calls"]]
    # Qwen's hook context after a tool result is a user message of its own: context, not a prompt.
    convo.append(
        {"role": "user", "content": "<qwen:user-prompt-submit-context>x</qwen:user-prompt-submit-context>"}
    )
    m2 = chat(mock, convo)
    assert m2["finish_reason"] == "stop" and m2["content"] == "first" and m2["tool_calls"] == []
    convo += [{"role": "assistant", "content": "first"}, {"role": "user", "content": "again CHAT-MARKER"}]
    assert chat(mock, convo)["content"] == "second"
    assert [r.decision for r in mock.model_requests("chat")] == ["turn"] * 4
    assert [r.step for r in mock.model_requests("chat")] == [0, 0, 1, 0]
    assert mock.turns_used == 2 and mock.model_requests("openai") == []
    assert len(mock.requests_containing("CHAT-MARKER")) == 1


def test_chat_tool_names_and_arguments_follow_the_offered_schema(mock: MockAPI) -> None:
    steps = reply(bash("ls"), write("/p/a", "x"), edit("/p/a", "x", "y"), read("/p/a"))
    mock.set_script([[steps], [steps], [steps], [steps]])
    qwen = calls_of(chat(mock, [{"role": "user", "content": "q"}], QWEN_TOOLS))
    assert qwen == [
        ("run_shell_command", {"command": "ls"}),
        ("write_file", {"file_path": "/p/a", "content": "x"}),
        ("edit", {"file_path": "/p/a", "old_string": "x", "new_string": "y"}),
        ("read_file", {"file_path": "/p/a"}),
    ]
    opencode = calls_of(chat(mock, [{"role": "user", "content": "o"}], OPENCODE_TOOLS))
    assert opencode == [
        ("bash", {"command": "ls", "description": "Run a command"}),
        ("write", {"filePath": "/p/a", "content": "x"}),
        ("edit", {"filePath": "/p/a", "oldString": "x", "newString": "y"}),
        ("read", {"filePath": "/p/a"}),
    ]
    copilot = calls_of(chat(mock, [{"role": "user", "content": "c"}], COPILOT_TOOLS))
    assert copilot == [
        ("bash", {"command": "ls", "description": "Run a command"}),
        ("create", {"path": "/p/a", "file_text": "x"}),
        ("edit", {"path": "/p/a", "old_str": "x", "new_str": "y"}),
        ("view", {"path": "/p/a"}),
    ]
    kimi = calls_of(chat(mock, [{"role": "user", "content": "k"}], KIMI_TOOLS))
    assert kimi == [
        ("Shell", {"command": "ls"}),
        ("WriteFile", {"path": "/p/a", "content": "x"}),
        ("StrReplaceFile", {"path": "/p/a", "edit": {"old": "x", "new": "y"}}),
        ("ReadFile", {"path": "/p/a"}),
    ]


def test_chat_title_request_and_plain_json(mock: MockAPI) -> None:
    mock.set_script([[call("custom_tool", {"k": 1})]])
    title = json.loads(
        post(
            mock,
            "/v1/chat/completions",
            {"model": "m", "messages": [{"role": "user", "content": "Generate a title for: fix it"}]},
        )
    )
    assert title["object"] == "chat.completion"
    assert title["choices"][0]["message"] == {
        "role": "assistant",
        "content": "ok",
    }  # no tools: a side request
    plain = json.loads(
        post(
            mock,
            "/v1/chat/completions",
            {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": OPENCODE_TOOLS},
        )
    )
    (choice,) = plain["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert calls_of(choice["message"]) == [("custom_tool", {"k": 1})]
    assert [r.decision for r in mock.model_requests("chat")] == ["side", "turn"]


GEMINI_TOOLS = [
    {
        "functionDeclarations": [
            {"name": "run_shell_command", "parametersJsonSchema": {"properties": {"command": {}}}},
            {"name": "write_file", "parametersJsonSchema": {"properties": {"file_path": {}, "content": {}}}},
            {
                "name": "replace",
                "parametersJsonSchema": {
                    "properties": {"file_path": {}, "instruction": {}, "old_string": {}, "new_string": {}}
                },
            },
            {"name": "read_file", "parametersJsonSchema": {"properties": {"absolute_path": {}}}},
        ]
    }
]
GEMINI_PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


def gemini(mock: MockAPI, contents: list[dict[str, Any]], tools: Any = GEMINI_TOOLS) -> dict[str, Any]:
    """POST a streamed Gemini request and return the one `data:` event's candidate content."""
    data = post(mock, GEMINI_PATH, {"contents": contents, "tools": tools}).decode()
    events = [json.loads(line[6:]) for line in data.splitlines() if line.startswith("data: ")]
    assert len(events) == 1 and "event:" not in data
    content: dict[str, Any] = events[0]["candidates"][0]["content"]
    return content


def test_gemini_tools_turns_and_hook_context(mock: MockAPI) -> None:
    mock.set_script(
        [
            [
                reply(bash("ls"), write("/p/a.txt", "x\n")),
                reply(edit("/p/a.txt", "x", "y"), read("/p/a.txt")),
                say("Done here."),
            ]
        ]
    )
    prompt = {
        "role": "user",
        "parts": [{"text": "fix it"}, {"text": "<hook_context>[Session Activity] a</hook_context>"}],
    }
    first = gemini(mock, [prompt])
    assert first["role"] == "model"
    assert [p["functionCall"] for p in first["parts"]] == [
        {"name": "run_shell_command", "args": {"command": "ls"}},
        {"name": "write_file", "args": {"file_path": "/p/a.txt", "content": "x\n"}},
    ]
    # A retry of the prompt with another hook context is the same prompt, the same step.
    retry = dict(
        prompt, parts=[{"text": "fix it"}, {"text": "<hook_context>[Session Activity] b</hook_context>"}]
    )
    assert gemini(mock, [retry]) == first
    result = {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {}}}]}
    second = gemini(mock, [prompt, first, result])
    edit_call, read_call = (p["functionCall"] for p in second["parts"])
    assert edit_call["name"] == "replace" and edit_call["args"]["old_string"] == "x"
    assert edit_call["args"]["instruction"]  # offered as required
    assert read_call == {"name": "read_file", "args": {"absolute_path": "/p/a.txt"}}
    third = gemini(mock, [prompt, first, result, second, result])
    assert third["parts"] == [{"text": "Done here."}]
    assert [r.api for r in mock.model_requests()] == ["gemini"] * 4
    assert "[Session Activity] a" in mock.requests[0].text()


def test_gemini_side_requests_and_other_methods(mock: MockAPI) -> None:
    mock.set_script([[bash("ls")]])
    # No tools (a routing or summary request): a short text, no turn used.
    side = gemini(mock, [{"role": "user", "parts": [{"text": "classify"}]}], tools=[])
    assert side["parts"] == [{"text": "ok"}] and mock.turns_used == 0
    plain = json.loads(
        post(
            mock,
            "/v1beta/models/m:generateContent",
            {"contents": [{"role": "user", "parts": [{"text": "go"}]}], "tools": GEMINI_TOOLS},
        )
    )
    assert plain["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == "run_shell_command"
    assert json.loads(post(mock, "/v1beta/models/m:countTokens", {"contents": []})) == {"totalTokens": 100}
