// A real MCP client, the official TypeScript SDK, driving `parallex mcp` over
// stdio: lists the tools, calls each, answers rewind_agent's elicitation with
// a decline and then an accept, and checks that planted secrets never come
// back. Usage: node client.mjs PATH/TO/parallex
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";

const parallex = process.argv[2];
let failures = 0;
let passes = 0;
function check(cond, what, detail = "") {
  if (cond) {
    passes++;
    console.log(`ok - ${what}`);
  } else {
    failures++;
    console.log(`not ok - ${what}${detail ? `: ${detail}` : ""}`);
  }
}

// A PARALLEX_HOME with one agent laid out as the agent store does it, and
// secrets of every shape redact() knows planted in what the server reads.
const home = fs.mkdtempSync(path.join(os.tmpdir(), "px-mcp-client-"));
const secrets = [
  "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
  "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
  "sk-ant-api03-abcdefghijklmnop_QRSTUV-wxyz0123",
  "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
  "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
  "AKIAIOSFODNN7EXAMPLE",
  "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretbodyline\n-----END RSA PRIVATE KEY-----",
  "https://alice:hunter2hunter2@example.com/repo.git",
];
const secretParts = ["A1b2C3d4E5f6G7h8I9j0", "11ABCDEFG0123456789_abc", "api03-abcdefghijklmnop",
  "proj-abcdefghijklmnopqrstuvwxyz", "sk-abcdefghijklmnopqrstuvwxyz0123", "AKIAIOSFODNN7EXAMPLE",
  "wJalrXUtnFEMI", "MIIEowIBAAKCAQEAsecretbodyline", "hunter2hunter2"];
function addAgent(name, created) {
  const root = path.join(home, "agents", name);
  for (const d of ["home", "keys", "gh", "runs"]) fs.mkdirSync(path.join(root, d), { recursive: true });
  fs.writeFileSync(path.join(root, "agent.yaml"), JSON.stringify({
    version: 1, name, email: `${name}@example.com`, created, repos: [],
    network: { mode: "allowlist", allow: ["github.com"], local_servers: false },
    grants: [], share_harness_config: false, sealed: true,
  }));
  fs.writeFileSync(path.join(root, "keys", "id_ed25519"), "not a key\n");
  fs.writeFileSync(path.join(root, "keys", "id_ed25519.pub"), "ssh-ed25519 AAAA test\n");
  fs.writeFileSync(path.join(root, "home", "notes.txt"), "first\n");
  const run = path.join(root, "runs", "20260101T000000Z-aaaaaa");
  fs.mkdirSync(run, { recursive: true });
  fs.writeFileSync(path.join(run, "run.json"), JSON.stringify({
    id: "20260101T000000Z-aaaaaa", agent: name, command: secrets.join(" "),
    started_at: "2026-01-01T00:00:00.000Z", ended_at: "2026-01-01T00:01:00.000Z",
  }));
  return root;
}
const agentRoot = addAgent("reviewer", secrets.join("\n"));
const notes = () => fs.readFileSync(path.join(agentRoot, "home", "notes.txt"), "utf8");

// A page on loopback for open_browser.
const server = http.createServer((req, res) => {
  res.writeHead(200, { "Content-Type": "text/html" });
  res.end("<html><head><title>MCP loopback</title></head><body>hello-from-loopback</body></html>");
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const pageUrl = `http://127.0.0.1:${server.address().port}/`;

let chromium = false;
for (const c of ["chromium", "chromium-browser", "google-chrome"]) {
  try { execFileSync("sh", ["-c", `command -v ${c}`]); chromium = true; break; } catch {}
}

async function connect({ elicitation, answer }) {
  const client = new Client({ name: "parallex-test-client", version: "1.0.0" },
    { capabilities: elicitation ? { elicitation: {} } : {} });
  const asked = [];
  if (elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return answer();
    });
  }
  const transport = new StdioClientTransport({
    command: parallex, args: ["mcp"], stderr: "inherit",
    env: { ...process.env, PARALLEX_HOME: home, PARALLEX_BROWSER_HEADLESS: "1",
      PARALLEX_RUN: "", PARALLEX_RUN_ID: "", PARALLEX_AGENT: "" },
  });
  await client.connect(transport);
  return { client, asked };
}
const structured = (r) => r.structuredContent ?? {};
const text = (r) => (r.content ?? []).map((c) => c.text ?? "").join("\n");

let answerWith = { action: "decline" };
const { client, asked } = await connect({ elicitation: true, answer: () => answerWith });
try {
  check(client.getServerVersion()?.name === "parallex", "initialize: server is parallex");
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify(["answer_question", "change_run_rule", "list_snapshots",
    "list_workspaces", "open_browser", "read_report", "recent_refusals", "request_access", "rewind_agent",
    "run_questions", "snapshot_agent", "whoami"]), "tools/list lists the twelve tools", names.join(","));
  check(tools.every((t) => t.inputSchema?.type === "object" && t.outputSchema?.type === "object"),
    "every tool has an input and an output schema");

  const who = await client.callTool({ name: "whoami", arguments: {} });
  check(!who.isError && structured(who).inside_run === false, "whoami outside a run: the user", text(who));

  const list = await client.callTool({ name: "list_workspaces", arguments: {} });
  const agents = structured(list).agents ?? [];
  check(!list.isError && agents.length === 1 && agents[0].name === "reviewer" && agents[0].network === "allowlist",
    "list_workspaces lists the agent with its rule", text(list));

  const snap = await client.callTool({ name: "snapshot_agent", arguments: { agent: "reviewer", label: "sdk" } });
  const snapId = structured(snap).snapshot?.id;
  check(!snap.isError && typeof snapId === "string", "snapshot_agent takes a snapshot", text(snap));

  const snaps = await client.callTool({ name: "list_snapshots", arguments: { agent: "reviewer" } });
  check((structured(snaps).snapshots ?? []).some((s) => s.id === snapId), "list_snapshots shows it");

  const report = await client.callTool({ name: "read_report", arguments: { agent: "reviewer" } });
  check(!report.isError && structured(report).agent === "reviewer", "read_report reads the agent's report", text(report));

  fs.writeFileSync(path.join(agentRoot, "home", "notes.txt"), "changed\n");
  answerWith = { action: "decline" };
  const declined = await client.callTool({ name: "rewind_agent", arguments: { agent: "reviewer" } });
  check(asked.length === 1 && asked[0].message.includes(snapId), "rewind_agent asks the user first", JSON.stringify(asked));
  check(!declined.isError && structured(declined).rewound === false && notes() === "changed\n",
    "a declined rewind leaves the agent as it is", text(declined));

  answerWith = { action: "accept", content: { confirm: true } };
  const accepted = await client.callTool({ name: "rewind_agent", arguments: { agent: "reviewer" } });
  check(!accepted.isError && structured(accepted).rewound === true && notes() === "first\n",
    "an accepted rewind puts the home back", text(accepted));

  const page = await client.callTool({ name: "open_browser", arguments: { url: pageUrl } });
  if (chromium) {
    const s = structured(page);
    check(!page.isError && (s.dom ?? "").includes("hello-from-loopback") && s.title === "MCP loopback",
      "open_browser loads a loopback page headless", text(page));
    check(s.profile_removed === true && !fs.existsSync(s.profile_dir), "its throwaway profile is gone afterwards");
  } else {
    check(page.isError && text(page).includes("apt-get install chromium"), "open_browser says how to install Chromium");
  }

  const unknownAgent = await client.callTool({ name: "list_snapshots", arguments: { agent: "nobody" } });
  check(unknownAgent.isError === true && text(unknownAgent).includes("nobody"), "an unknown agent is a tool error");

  for (const [what, req, code] of [
    ["an unknown tool", { name: "format_disk", arguments: {} }, -32602],
    ["a wrong argument type", { name: "list_snapshots", arguments: { agent: 42 } }, -32602],
  ]) {
    try {
      const r = await client.callTool(req);
      check(false, `${what} is a JSON-RPC error`, JSON.stringify(r));
    } catch (e) {
      check(e instanceof McpError && e.code === code, `${what} is JSON-RPC error ${code}`, String(e));
    }
  }
  await client.ping();
  check(true, "the server still answers after bad input");

  // Redaction: nothing the server said holds a planted secret.
  const everything = JSON.stringify([list, report, who, snaps]);
  const leaked = secretParts.filter((p) => everything.includes(p));
  check(leaked.length === 0, "no planted secret comes back", leaked.join(", "));
  check(JSON.stringify(list).includes("[REDACTED:private-key]") && JSON.stringify(list).includes("[REDACTED:url-password]"),
    "the answers carry redaction markers instead");
} catch (e) {
  check(false, "the session ran to the end", e?.stack ?? String(e));
} finally {
  await client.close();
}

// A client without elicitation is refused with the terminal command.
{
  const { client: plain } = await connect({ elicitation: false });
  try {
    const r = await plain.callTool({ name: "rewind_agent", arguments: { agent: "reviewer" } });
    check(r.isError === true && text(r).includes("parallex agent rewind reviewer"),
      "without elicitation, rewind_agent refuses and names the terminal command", text(r));
  } finally {
    await plain.close();
  }
}

server.close();
fs.rmSync(home, { recursive: true, force: true });
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
