// What the page's browser test (page_test.mjs) and its bench (bench/ui/) share:
// a Parallex home of their own, `parallex ui --no-open` started and its address
// read, Debian's Chromium driven by playwright-core, a loopback HTTP server.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
export const CHROMIUM = process.env.PARALLEX_TEST_CHROMIUM || '/usr/bin/chromium';

export function loadPlaywright() {
  return require('playwright-core');
}

// A fresh PARALLEX_HOME (agents, run records) and XDG_RUNTIME_DIR (the runs' control
// sockets, the pause switch), so `pause --all` reaches only this test's runs.
export function makeWorld(parallex) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'px-ui-page-'));
  fs.chmodSync(dir, 0o755);
  const home = path.join(dir, 'home');
  const runtime = path.join(dir, 'runtime');
  fs.mkdirSync(home);
  fs.mkdirSync(runtime, { mode: 0o700 });
  const env = { ...process.env, PARALLEX_HOME: home, XDG_RUNTIME_DIR: runtime };
  delete env.BROWSER;
  const px = (args, opts = {}) => execFileSync(parallex, args, { env: { ...env, ...(opts.env || {}) }, encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'], timeout: opts.timeout || 60000 });
  const pxJson = (args) => JSON.parse(px([...args, '--json']));
  // A command that must fail: its stderr (what it told the user).
  const pxFail = (args) => {
    try { px(args); } catch (e) { return String(e.stderr || ''); }
    throw new Error(`parallex ${args.join(' ')} succeeded where it should have failed`);
  };
  const children = [];
  const startRun = (args, extraEnv = {}) => {
    const child = spawn(parallex, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderrText = '';
    child.stderr.on('data', (d) => { child.stderrText += d; });
    children.push(child);
    return child;
  };
  const cleanup = () => {
    try { px(['kill', '--all']); } catch (_) { /* none left */ }
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { dir, home, env, px, pxJson, pxFail, startRun, children, cleanup };
}

// Starts `parallex ui --no-open`; resolves when it printed its address.
export function startUi(parallex, env) {
  const started = performance.now();
  const child = spawn(parallex, ['ui', '--no-open'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`parallex ui printed no address in 20 s:\n${out}`)), 20000);
    const take = (d) => {
      out += d;
      const m = out.match(/Parallex UI: (http:\/\/127\.0\.0\.1:(\d+)\/\?key=[0-9a-f]+)/);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1], origin: `http://127.0.0.1:${m[2]}`, port: Number(m[2]), started, output: () => out });
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`parallex ui exited (${code}) before printing its address:\n${out}`)); });
  });
}

// In the world's folder: Chromium writes its crash database and caches under
// HOME (~/.config/chromium), which must stay the user's own.
export async function launchChromium(world) {
  const { chromium } = loadPlaywright();
  // Chromium's own sandbox needs user namespaces it cannot have as root.
  const args = process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [];
  const home = path.join(world.dir, 'chromium-home');
  fs.mkdirSync(home, { recursive: true });
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_CACHE_HOME: path.join(home, '.cache') };
  return chromium.launch({ executablePath: CHROMIUM, args, env });
}

// A loopback HTTP server answering every request with `body`; resolves its port.
export function httpServer(handler) {
  const server = http.createServer(handler || ((req, res) => { res.end('hello from the loopback\n'); }));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port })));
}

export async function waitFor(what, fn, timeoutMs = 30000, everyMs = 100) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) { last = e; }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

// The kill switch's own check that a run is frozen (docs/kill-switch.md): its
// cgroup says `frozen 1`; without a cgroup (the process-tree fallback, e.g. an
// unprivileged user without a delegated cgroup) every process of the tree from
// the run's first process is stopped (state T), as the supervisor's walk sees them.
export function frozen(run) {
  if (run.cgroup && fs.existsSync(path.join(run.cgroup, 'cgroup.events'))) {
    return /^frozen 1$/m.test(fs.readFileSync(path.join(run.cgroup, 'cgroup.events'), 'utf8'));
  }
  const pids = runTree(run.child_pid);
  return pids.length > 0 && pids.every((pid) => {
    try {
      return /^State:\s+[Tt]/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    } catch (_) { return true; }   // gone: not running either
  });
}

// `pid` and its descendants, through /proc/PID/task/*/children.
function runTree(pid) {
  const out = [];
  const unvisited = pid ? [pid] : [];
  while (unvisited.length) {
    const p = unvisited.pop();
    out.push(p);
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${p}/task`); } catch (_) { continue; }
    for (const t of tasks) {
      try {
        for (const c of fs.readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim().split(/\s+/)) if (c) unvisited.push(Number(c));
      } catch (_) { /* the task ended */ }
    }
  }
  return out;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export function which(tool) {
  try { return execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(); } catch (_) { return ''; }
}
