#!/usr/bin/env python3
"""A scripted model server on loopback for the end-to-end tests of the real clients.

It answers the Anthropic Messages API (POST /v1/messages, streamed as SSE the way
Claude Code and opencode's Anthropic provider read it), the OpenAI Responses API
(POST /v1/responses, streamed, for Codex's custom provider) and OpenAI's Chat
Completions (POST /v1/chat/completions, what local model servers speak: opencode's
openai-compatible provider, as README points it). Every conversation
follows one script of tool calls in the client's working folder:

  1. read   edit.txt
  2. write  new.txt            (a new file)
  3. edit   edit.txt           ("old line" -> "new line")
  4. run    echo px-e2e-ok      (succeeds)
  5. run    ls /nonexistent-px-e2e   (fails, exit status 2)
  6. a final text answer

With --fetch HOST the script is instead one command, `curl -s http://HOST:PORT/`,
then a final text answer: PORT is a second server of its own (--page-port-file)
that serves --page's text, for the ask-mode tests (HOST resolves to loopback in
the run, outside its rule). --tool-results appends the result of every tool call
the client sends back (JSON lines, once each), so that a test can read what
reached the model.

The server is stateless: the step is the number of tool results already in the
request. Which tool names it uses depends on the tools the client offers, and every
call it makes is appended to --actions (JSON lines) so that the test can say
exactly what the transcript must show.

Usage: fake_model_server.py --port-file FILE --actions FILE --workdir DIR
                            [--cert CERT --key KEY] [--credentials FILE] [--tool-results FILE]
                            [--fetch HOST --page TEXT --page-port-file FILE]

With --cert and --key it speaks HTTPS (the broker's tests: a terminated host
whose server must receive the real key). --credentials appends, per request,
the credential headers it received (x-api-key, authorization), so that a test
can tell the real key from a placeholder.
"""
import argparse
import json
import os
import ssl
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
PAGE_PORT = 0
LOCK = threading.Lock()
GOOD_COMMAND = "echo px-e2e-ok"
BAD_COMMAND = "ls /nonexistent-px-e2e"


def log_action(client, action):
    with LOCK:
        with open(ARGS.actions, "a") as f:
            f.write(json.dumps(dict(action, client=client)) + "\n")


def path(name):
    return os.path.join(ARGS.workdir, name)


# ---- the script, as abstract steps ------------------------------------------------

def step_action(step):
    """The abstract action of step `step` (0-based), or None when the script is done."""
    if ARGS.fetch:
        url = "http://%s:%d/" % (ARGS.fetch, PAGE_PORT)
        return {"kind": "command", "command": "curl -s --max-time 150 " + url, "exit_code": 0} if step == 0 else None
    return [
        {"kind": "read", "path": path("edit.txt")},
        {"kind": "write", "path": path("new.txt"), "content": "created by the fake model\n"},
        {"kind": "edit", "path": path("edit.txt"), "old": "old line", "new": "new line"},
        {"kind": "command", "command": GOOD_COMMAND, "exit_code": 0},
        {"kind": "command", "command": BAD_COMMAND, "exit_code": 2},
    ][step] if step < 5 else None


# ---- Anthropic Messages ------------------------------------------------------------

def anthropic_tool_call(tools, action):
    """(tool name, input) for Claude Code's or opencode's tool set."""
    names = {t.get("name") for t in tools}
    k = action["kind"]
    if "Read" in names:  # Claude Code
        if k == "read":
            return "Read", {"file_path": action["path"]}
        if k == "write":
            return "Write", {"file_path": action["path"], "content": action["content"]}
        if k == "edit":
            return "Edit", {"file_path": action["path"], "old_string": action["old"], "new_string": action["new"]}
        return "Bash", {"command": action["command"], "description": "scripted command"}
    # opencode
    if k == "read":
        return "read", {"filePath": action["path"]}
    if k == "write":
        return "write", {"filePath": action["path"], "content": action["content"]}
    if k == "edit":
        return "edit", {"filePath": action["path"], "oldString": action["old"], "newString": action["new"]}
    return "bash", {"command": action["command"], "description": "scripted command"}


def result_text(content):
    """A tool result's text: a string, or the text blocks of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return json.dumps(content)


SEEN_RESULTS = set()


def log_results(results):
    """(call id, text) of each tool result in a request, appended once each to --tool-results."""
    if not ARGS.tool_results:
        return
    with LOCK:
        with open(ARGS.tool_results, "a") as f:
            for call_id, text in results:
                if call_id not in SEEN_RESULTS:
                    SEEN_RESULTS.add(call_id)
                    f.write(json.dumps({"call_id": call_id, "output": text}) + "\n")


def anthropic_results(messages):
    out = []
    for m in messages:
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            out += [(b.get("tool_use_id"), result_text(b.get("content"))) for b in m["content"]
                    if isinstance(b, dict) and b.get("type") == "tool_result"]
    return out


def openai_results(items):
    return [(i.get("call_id"), result_text(i.get("output"))) for i in items if isinstance(i, dict) and i.get("type") in (
        "function_call_output", "custom_tool_call_output", "local_shell_call_output")]


def count_anthropic_results(messages):
    n = 0
    for m in messages:
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            n += sum(1 for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
    return n


def sse(handler, events):
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    for name, data in events:
        chunk = ""
        if name:
            chunk += "event: " + name + "\n"
        chunk += "data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n"
        handler.wfile.write(chunk.encode())
        handler.wfile.flush()
    handler.close_connection = True


def send_json(handler, value):
    """A whole JSON answer (not streamed)."""
    data = json.dumps(value).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def anthropic_reply(handler, body):
    tools = body.get("tools") or []
    model = body.get("model", "claude-sonnet-4-5")
    messages = body.get("messages") or []
    tool_names = {t.get("name") for t in tools}
    client = "claude-code" if "Read" in tool_names else "opencode"
    # Side requests (titles, quota probes) carry no file tools: a short text answer.
    scripted = bool({"Read", "read"} & tool_names)
    log_results(anthropic_results(messages))
    action = step_action(count_anthropic_results(messages)) if scripted else None
    msg_id = "msg_" + uuid.uuid4().hex[:20]
    usage = {"input_tokens": 12, "output_tokens": 7, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    if action:
        name, tool_input = anthropic_tool_call(tools, action)
        log_action(client, action)
        block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20], "name": name, "input": tool_input}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": "done" if scripted else "Scripted session"}
        stop = "end_turn"
    if not body.get("stream"):
        send_json(handler, {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                            "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage})
        return
    events = [("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": dict(usage, output_tokens=1)}})]
    if block["type"] == "tool_use":
        events.append(("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
    else:
        events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                               "content_block": {"type": "text", "text": ""}}))
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "text_delta", "text": block["text"]}}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 7}}))
    events.append(("message_stop", {"type": "message_stop"}))
    sse(handler, events)


# ---- OpenAI Responses (Codex) --------------------------------------------------------

def tool_names_openai(tools):
    names = set()
    for t in tools:
        names.add(t.get("name") or (t.get("function") or {}).get("name") or t.get("type"))
    return names


def code_mode(items):
    """Codex's code mode (its default model): the tools arrive as an `additional_tools`
    input item whose `functions` namespace holds one freeform `exec` tool running
    JavaScript, with the real tools (exec_command, apply_patch, ...) on its `tools` object."""
    for i in items:
        if isinstance(i, dict) and i.get("type") == "additional_tools":
            for ns in i.get("tools") or []:
                for t in ns.get("tools") or []:
                    if t.get("type") == "custom" and t.get("name") == "exec":
                        return True
    return False


def code_mode_item(action):
    """The step as one JavaScript cell of the `exec` tool. Reads are commands (code mode has
    no read tool); the write step's patch also adds a second file before the first, so the
    patch's order of files is visible in the report."""
    k = action["kind"]
    call_id = "call_" + uuid.uuid4().hex[:20]
    if k == "read":
        action = {"kind": "command", "command": "cat " + action["path"], "exit_code": 0}
        k = "command"
    if k == "command":
        js = ("const r = await tools.exec_command({cmd: " + json.dumps(action["command"]) + ", workdir: " +
              json.dumps(ARGS.workdir) + ", yield_time_ms: 10000});\ntext(r.output);\n")
        done = [dict(action, tool="exec_command")]
    else:
        patch = patch_for(action)
        done = [dict(action, tool="apply_patch")]
        if k == "write":
            second = {"kind": "write", "path": path("a-second.txt"), "content": "second file\n"}
            patch = patch.replace("*** End Patch\n", "") + patch_for(second).replace("*** Begin Patch\n", "")
            done.append(dict(second, tool="apply_patch"))
        js = "const r = await tools.apply_patch(" + json.dumps(patch) + ");\ntext(JSON.stringify(r));\n"
    return {"type": "custom_tool_call", "name": "exec", "call_id": call_id, "input": js,
            "status": "completed"}, done


def count_openai_results(items):
    return sum(1 for i in items if isinstance(i, dict) and i.get("type") in (
        "function_call_output", "custom_tool_call_output", "local_shell_call_output"))


def patch_for(action):
    rel = os.path.relpath(action["path"], ARGS.workdir)
    if action["kind"] == "write":
        lines = "".join("+" + l + "\n" for l in action["content"].rstrip("\n").split("\n"))
        return "*** Begin Patch\n*** Add File: " + rel + "\n" + lines + "*** End Patch\n"
    return ("*** Begin Patch\n*** Update File: " + rel + "\n@@\n-" + action["old"] + "\n+" + action["new"] +
            "\n*** End Patch\n")


def codex_item(tools, action):
    """A Responses output item carrying the step as a call of a tool Codex offered."""
    names = tool_names_openai(tools)
    call_id = "call_" + uuid.uuid4().hex[:20]
    k = action["kind"]
    shell = "exec_command" if "exec_command" in names else ("shell_command" if "shell_command" in names else "shell")
    if k == "read":
        if "read_file" in names:
            return {"type": "function_call", "name": "read_file", "call_id": call_id,
                    "arguments": json.dumps({"file_path": action["path"]})}, dict(action, tool="read_file")
        # No read tool offered: the read becomes a command (which is not a file read).
        action = {"kind": "command", "command": "cat " + action["path"], "exit_code": 0}
        k = "command"
    if k in ("write", "edit"):
        patch = patch_for(action)
        custom = any(t.get("type") == "custom" and t.get("name") == "apply_patch" for t in tools)
        if custom:
            return {"type": "custom_tool_call", "name": "apply_patch", "call_id": call_id, "input": patch,
                    "status": "completed"}, dict(action, tool="apply_patch")
        if "apply_patch" in names:
            return {"type": "function_call", "name": "apply_patch", "call_id": call_id,
                    "arguments": json.dumps({"input": patch})}, dict(action, tool="apply_patch")
        # No patch tool offered: the patch goes through the shell tool as a heredoc,
        # which Codex intercepts and applies as a patch (a file change, not a command).
        action = dict(action, via_shell=True)
        heredoc = "apply_patch <<'EOF'\n" + patch + "EOF\n"
        if shell == "exec_command":
            args = {"cmd": heredoc, "workdir": ARGS.workdir, "yield_time_ms": 10000}
        elif shell == "shell_command":
            args = {"command": heredoc, "workdir": ARGS.workdir}
        else:
            args = {"command": ["apply_patch", patch], "workdir": ARGS.workdir}
        return {"type": "function_call", "name": shell, "call_id": call_id, "arguments": json.dumps(args)}, \
            dict(action, tool="apply_patch")
    if shell == "exec_command":
        args = {"cmd": action["command"], "workdir": ARGS.workdir, "yield_time_ms": 10000}
    elif shell == "shell_command":
        args = {"command": action["command"], "workdir": ARGS.workdir}
    else:
        args = {"command": ["bash", "-lc", action["command"]], "workdir": ARGS.workdir}
    return {"type": "function_call", "name": shell, "call_id": call_id, "arguments": json.dumps(args)}, \
        dict(action, tool=shell)


def openai_reply(handler, body):
    tools = body.get("tools") or []
    items = body.get("input") or []
    names = tool_names_openai(tools)
    cells = code_mode(items)
    scripted = cells or bool(names & {"exec_command", "shell", "shell_command", "apply_patch"})
    log_results(openai_results(items))
    action = step_action(count_openai_results(items)) if scripted else None
    resp_id = "resp_" + uuid.uuid4().hex[:20]
    model = body.get("model", "gpt-test")
    output = []
    if action:
        item, done = code_mode_item(action) if cells else codex_item(tools, action)
        if item:
            item["id"] = "fc_" + uuid.uuid4().hex[:20]
            output.append(item)
            for d in done if isinstance(done, list) else [done]:
                log_action("codex", d)
    if not output:
        output.append({"type": "message", "id": "msg_" + uuid.uuid4().hex[:20], "role": "assistant",
                       "status": "completed",
                       "content": [{"type": "output_text", "text": "done", "annotations": []}]})
    usage = {"input_tokens": 20, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 9,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 29}
    base = {"id": resp_id, "object": "response", "created_at": 0, "model": model, "output": []}
    events = [("response.created", {"type": "response.created", "response": dict(base, status="in_progress")})]
    for i, item in enumerate(output):
        events.append(("response.output_item.added",
                       {"type": "response.output_item.added", "output_index": i, "item": item}))
        events.append(("response.output_item.done",
                       {"type": "response.output_item.done", "output_index": i, "item": item}))
    events.append(("response.completed", {"type": "response.completed",
                                          "response": dict(base, status="completed", output=output, usage=usage)}))
    sse(handler, events)


# ---- OpenAI Chat Completions (what local model servers speak: opencode's openai-compatible provider) ----

def chat_results(messages):
    return [(m.get("tool_call_id"), result_text(m.get("content"))) for m in messages
            if isinstance(m, dict) and m.get("role") == "tool"]


def chat_reply(handler, body):
    tools = [t.get("function") or {} for t in body.get("tools") or [] if isinstance(t, dict)]
    names = {t.get("name") for t in tools}
    # Side requests (titles) carry no file tools: a short text answer.
    scripted = bool({"Read", "read"} & names)
    results = chat_results(body.get("messages") or [])
    log_results(results)
    action = step_action(len(results)) if scripted else None
    model = body.get("model", "local-model")
    message = {"role": "assistant", "content": "done" if scripted else "Scripted session"}
    finish = "stop"
    if action:
        name, tool_input = anthropic_tool_call(tools, action)
        log_action("claude-code" if "Read" in names else "opencode", action)
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_" + uuid.uuid4().hex[:20], "type": "function",
            "function": {"name": name, "arguments": json.dumps(tool_input)}}]}
        finish = "tool_calls"
    usage = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
    reply_id = "chatcmpl-" + uuid.uuid4().hex[:20]
    if not body.get("stream"):
        send_json(handler, {"id": reply_id, "object": "chat.completion", "created": 0, "model": model,
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                            "usage": usage})
        return

    def chunk(delta, finish_reason=None, **extra):
        return None, dict({"id": reply_id, "object": "chat.completion.chunk", "created": 0, "model": model,
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}, **extra)
    delta = dict(message)
    if "tool_calls" in delta:
        delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(delta["tool_calls"])]
    sse(handler, [chunk(delta), chunk({}, finish, usage=usage), (None, "[DONE]")])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        if ARGS.verbose:
            sys.stderr.write("fake-model: " + (fmt % args) + "\n")

    def _empty(self, code=200):
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_HEAD(self):
        self._empty()

    def do_GET(self):
        self.record_credentials()
        if self.path.startswith("/v1/models"):
            send_json(self, {"object": "list", "data": [{"id": "gpt-test", "object": "model"}]})
            return
        self._empty(404)

    def record_credentials(self):
        if not ARGS.credentials:
            return
        with LOCK:
            with open(ARGS.credentials, "a") as f:
                f.write(json.dumps({"method": self.command, "path": self.path,
                                    "x-api-key": self.headers.get("x-api-key", ""),
                                    "authorization": self.headers.get("authorization", "")}) + "\n")

    def do_POST(self):
        self.record_credentials()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        if ARGS.requests:
            with LOCK:
                with open(ARGS.requests, "a") as f:
                    f.write(json.dumps({"path": self.path, "tools": sorted(
                        str(n) for n in tool_names_openai(body.get("tools") or [])),
                        "stream": body.get("stream"),
                        "input_types": [i.get("type") for i in (body.get("input") or []) if isinstance(i, dict)]})
                        + "\n")
        if self.path.startswith("/v1/messages/count_tokens"):
            send_json(self, {"input_tokens": 10})
        elif self.path.startswith("/v1/messages"):
            anthropic_reply(self, body)
        elif self.path.startswith("/v1/responses"):
            openai_reply(self, body)
        elif self.path.startswith("/v1/chat/completions"):
            chat_reply(self, body)
        else:
            self._empty(404)


class PageHandler(BaseHTTPRequestHandler):
    """The page of --fetch: --page's text on every GET."""
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        data = ARGS.page.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def write_atomically(file, text):
    with open(file + ".tmp", "w") as f:
        f.write(text)
    os.rename(file + ".tmp", file)


def main():
    global ARGS, PAGE_PORT
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--actions", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--requests", default="")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--cert", default="")
    p.add_argument("--key", default="")
    p.add_argument("--credentials", default="")
    p.add_argument("--tool-results", default="")
    p.add_argument("--fetch", default="")
    p.add_argument("--page", default="hello from the page")
    p.add_argument("--page-port-file", default="")
    ARGS = p.parse_args()
    if ARGS.fetch:
        page = ThreadingHTTPServer(("127.0.0.1", 0), PageHandler)
        PAGE_PORT = page.server_address[1]
        threading.Thread(target=page.serve_forever, daemon=True).start()
        if ARGS.page_port_file:
            write_atomically(ARGS.page_port_file, str(PAGE_PORT))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if ARGS.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(ARGS.cert, ARGS.key)
        # Each connection's handshake happens in its own thread, on first read.
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    write_atomically(ARGS.port_file, str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
