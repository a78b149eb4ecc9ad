#!/usr/bin/env python3
"""Writes a synthetic Claude Code projects/ tree or a Codex sessions/ tree of about SIZE_MB.

Lines follow the shapes in docs/transcripts.md: big tool results and file contents dominate,
as in real transcripts. Deterministic (seeded), so runs are comparable.
usage: gen.py claude|codex OUT_DIR SIZE_MB
"""
import json, os, random, sys, uuid

kind, out, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
target = size_mb * 1000 * 1000
rng = random.Random(42)
WORDS = ("const let return import export function async await if else for while class "
         "npm test build src lib util index value error result request response token "
         "café naïve 日本語 données").split()
BLOB = " ".join(rng.choice(WORDS) for _ in range(400000))


def text(n):
    start = rng.randrange(0, len(BLOB) - n - 1)
    return BLOB[start:start + n]


def ts(base, i):
    s = base + i * 2
    return "2026-%02d-%02dT%02d:%02d:%02d.%03dZ" % (1 + (s // 2592000) % 12, 1 + (s // 86400) % 28,
                                                    (s // 3600) % 24, (s // 60) % 60, s % 60, i % 1000)


def claude():
    written, n_session = 0, 0
    while written < target:
        n_session += 1
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        cwd = "/home/dev/project%d" % (n_session % 40)
        d = os.path.join(out, "projects", cwd.replace("/", "-"))
        os.makedirs(d, exist_ok=True)
        base = n_session * 7200
        with open(os.path.join(d, sid + ".jsonl"), "w", encoding="utf-8") as f:
            def line(obj):
                nonlocal written
                s = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
                written += len(s.encode("utf-8"))
                f.write(s)
            common = {"sessionId": sid, "cwd": cwd, "version": "2.1.140", "gitBranch": "main",
                      "userType": "external", "entrypoint": "cli", "isSidechain": False}
            line(dict(common, type="user", uuid=str(uuid.uuid4()), timestamp=ts(base, 0),
                      message={"role": "user", "content": text(300)}))
            for i in range(1, 400):
                tool = rng.choice(["Read", "Bash", "Edit", "Write", "Grep"])
                tid = "toolu_%d_%d" % (n_session, i)
                inp = {"Read": {"file_path": cwd + "/src/f%d.ts" % i},
                       "Bash": {"command": "npm test -- " + text(40), "description": "run"},
                       "Edit": {"file_path": cwd + "/src/f%d.ts" % i, "old_string": text(200), "new_string": text(220)},
                       "Write": {"file_path": cwd + "/src/n%d.ts" % i, "content": text(3000)},
                       "Grep": {"pattern": "foo", "path": cwd}}[tool]
                usage = {"input_tokens": 6, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 20000,
                         "output_tokens": 120, "service_tier": "standard"}
                mid = "msg_%d_%d" % (n_session, i)
                line(dict(common, type="assistant", uuid=str(uuid.uuid4()), timestamp=ts(base, 2 * i),
                          requestId="req_%d_%d" % (n_session, i),
                          message={"model": "claude-sonnet-4-5", "id": mid, "type": "message", "role": "assistant",
                                   "content": [{"type": "thinking", "thinking": text(600), "signature": text(200)}],
                                   "usage": usage}))
                line(dict(common, type="assistant", uuid=str(uuid.uuid4()), timestamp=ts(base, 2 * i),
                          requestId="req_%d_%d" % (n_session, i),
                          message={"model": "claude-sonnet-4-5", "id": mid, "type": "message", "role": "assistant",
                                   "content": [{"type": "tool_use", "id": tid, "name": tool, "input": inp}],
                                   "usage": usage}))
                body = text(rng.choice([500, 2000, 6000]))
                tur = {"Read": {"type": "text", "file": {"filePath": inp.get("file_path", ""), "content": body}},
                       "Bash": {"stdout": body, "stderr": "", "interrupted": False, "isImage": False},
                       "Edit": {"filePath": inp.get("file_path", ""), "oldString": text(200), "newString": text(220),
                                "originalFile": body, "structuredPatch": []},
                       "Write": {"type": "create", "filePath": inp.get("file_path", ""), "content": body},
                       "Grep": {"mode": "files_with_matches", "filenames": [], "numFiles": 0}}[tool]
                is_error = tool == "Bash" and i % 7 == 0
                block = {"tool_use_id": tid, "type": "tool_result",
                         "content": ("Exit code 1\n" if is_error else "") + body[:2000]}
                if is_error:
                    block["is_error"] = True
                line(dict(common, type="user", uuid=str(uuid.uuid4()), timestamp=ts(base, 2 * i + 1),
                          message={"role": "user", "content": [block]}, toolUseResult=tur))
                if i % 25 == 0:
                    line({"type": "progress", "sessionId": sid, "timestamp": ts(base, 2 * i + 1),
                          "data": {"type": "agent_progress", "message": {"type": "assistant",
                                   "message": {"content": [{"type": "tool_use", "id": "x", "name": "Bash",
                                                            "input": {"command": "ls"}}]}}}})
                if written >= target:
                    break


def codex():
    written, n_session = 0, 0
    while written < target:
        n_session += 1
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        d = os.path.join(out, "sessions", "2026", "%02d" % (1 + n_session % 12), "%02d" % (1 + n_session % 28))
        os.makedirs(d, exist_ok=True)
        base = n_session * 7200
        cwd = "/home/dev/repo%d" % (n_session % 30)
        with open(os.path.join(d, "rollout-2026-01-01T00-00-00-%s.jsonl" % sid), "w", encoding="utf-8") as f:
            def line(t, kind, payload):
                nonlocal written
                s = json.dumps({"timestamp": ts(base, t), "type": kind, "payload": payload}, ensure_ascii=False, separators=(",", ":")) + "\n"
                written += len(s.encode("utf-8"))
                f.write(s)
            line(0, "session_meta", {"id": sid, "timestamp": ts(base, 0), "cwd": cwd, "originator": "codex_cli_rs",
                                     "cli_version": "0.171.0", "source": "cli", "model_provider": "openai",
                                     "base_instructions": {"text": text(8000)}})
            line(1, "turn_context", {"cwd": cwd, "model": "gpt-5.2-codex", "effort": "medium"})
            total = 0
            for i in range(1, 500):
                cid = "call_%d_%d" % (n_session, i)
                line(2 * i, "response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": text(200)}],
                                              "encrypted_content": text(1500)})
                if i % 5 == 0:
                    patch = "*** Begin Patch\n*** Update File: src/m%d.py\n@@\n-%s\n+%s\n*** End Patch" % (i, text(300), text(300))
                    line(2 * i, "response_item", {"type": "custom_tool_call", "status": "completed", "call_id": cid,
                                                  "name": "apply_patch", "input": patch})
                    line(2 * i + 1, "response_item", {"type": "custom_tool_call_output", "call_id": cid,
                         "output": json.dumps({"output": "Success. Updated the following files:\nM src/m.py\n",
                                               "metadata": {"exit_code": 0, "duration_seconds": 0.0}})})
                else:
                    line(2 * i, "response_item", {"type": "function_call", "name": "exec_command", "call_id": cid,
                         "arguments": json.dumps({"cmd": "rg -n %s src" % rng.choice(WORDS), "workdir": cwd})})
                    line(2 * i + 1, "response_item", {"type": "function_call_output", "call_id": cid,
                         "output": "Chunk ID: ab\nWall time: 0.1 seconds\nProcess exited with code %d\nOutput:\n%s"
                                   % (i % 3 == 0, text(rng.choice([500, 2000, 5000])))})
                total += 1000
                line(2 * i + 1, "event_msg", {"type": "token_count", "info": {"total_token_usage": {
                    "input_tokens": total, "cached_input_tokens": total // 2, "output_tokens": total // 10,
                    "reasoning_output_tokens": total // 20, "total_tokens": total + total // 10},
                    "last_token_usage": {"input_tokens": 1000}}, "rate_limits": None})
                if written >= target:
                    break


{"claude": claude, "codex": codex}[kind]()
