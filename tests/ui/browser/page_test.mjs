// The page of `parallex ui` end to end, in Debian's Chromium driven by Playwright:
// an agent made with the CLI gets a folder granted from the page; a sealed run of
// it tries a loopback server outside its rule and the refusal appears live; Pause
// all from the page freezes every run (checked the kill switch's way: `runs --json`
// and the cgroup's freezer), Resume all thaws them; a page from another origin
// cannot make the browser pause anything; the run's report draws its timeline:
// the command and file change of a transcript the run left in its home, and its
// network request, on one axis; a session that links a command to the file it
// changed shows the link (list, line, text report). The agent's page says every
// run is sealed, with no switch.
// Screenshots go to the folder given as the second argument.
//
//   node page_test.mjs PATH/TO/parallex ARTIFACTS_DIR
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { makeWorld, startUi, launchChromium, httpServer, waitFor, frozen } from './harness.mjs';

const [parallex, artifacts] = process.argv.slice(2);
assert.ok(parallex && artifacts, 'usage: node page_test.mjs PATH/TO/parallex ARTIFACTS_DIR');
fs.mkdirSync(artifacts, { recursive: true });

const world = makeWorld(parallex);
let ui, browser, target, attacker;
const figures = [];
const step = (what) => console.log(`[page test] ${what}`);

async function shot(page, name) {
  const file = path.join(artifacts, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  step(`screenshot ${file}`);
}

// The runs of this test as `parallex runs --json` sees them (the kill switch's list).
const liveRuns = () => world.pxJson(['runs']).runs;

// Run `id`'s record folder (RUN-ID/run.json) somewhere under `dir`, or null.
function findRecordFolder(dir, id) {
  let entries = [];
  try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch (_) { return null; }
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const sub = path.join(dir, entry.name);
    if (entry.name === id && fs.existsSync(path.join(sub, 'run.json'))) return sub;
    const found = findRecordFolder(sub, id);
    if (found) return found;
  }
  return null;
}

try {
  const folder = path.join(world.dir, 'project');
  fs.mkdirSync(folder);
  fs.chmodSync(folder, 0o777);
  target = await httpServer();

  // 1. The UI starts; the page is drawn (the runs list).
  browser = await launchChromium(world);   // first: its own start is not the page's
  ui = await startUi(parallex, world.env);
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
  await page.goto(ui.url);
  await page.waitForSelector('body[data-ready="runs"]');
  const firstRender = performance.now() - ui.started;
  figures.push(`parallex ui start to the runs list drawn: ${firstRender.toFixed(0)} ms`);
  assert.equal(new URL(page.url()).search, '', 'the key is exchanged for a cookie and leaves the address');

  // 2a. An agent made from the page (the same checks and messages as `agent new`).
  await page.goto(`${ui.origin}/#/agents`);
  await page.waitForSelector('body[data-ready="agents"]');
  await page.getByLabel('Name').fill('Bad Name!');
  await page.getByLabel('Email its commits use').fill('made@example.com');
  await page.getByRole('button', { name: 'Make agent' }).click();
  const badName = await page.locator('#error:not([hidden])').textContent();
  const cliBad = world.pxFail(['agent', 'new', 'Bad Name!', '--email', 'made@example.com']);
  assert.ok(cliBad.includes(badName.trim()) || badName.includes(cliBad.trim().split('\n')[0].replace(/^parallex: /, '')),
    `the page says what the command says: page "${badName}", command "${cliBad}"`);
  await page.getByLabel('Name').fill('pagemade');
  await page.getByRole('button', { name: 'Make agent' }).click();
  await page.waitForSelector('body[data-ready="agent"]');
  assert.equal(world.pxJson(['agent', 'show', 'pagemade']).name, 'pagemade', 'the page made the agent');

  // 2. An agent (CLI), then a folder granted from the page.
  world.px(['agent', 'new', 'pagetest', '--email', 'pagetest@example.com', '--allow', 'allowed.test']);
  await page.goto(`${ui.origin}/#/agents/pagetest`);
  await page.waitForSelector('body[data-ready="agent"]');
  await page.getByLabel('Folder (absolute path)').fill(folder);
  await page.getByLabel('Access').selectOption('rw');
  await page.getByRole('button', { name: 'Grant folder' }).click();
  await page.locator('table.grants', { hasText: folder }).waitFor();
  const shown = world.pxJson(['agent', 'show', 'pagetest']);
  assert.ok(shown.grants.some((g) => g.path === folder && (g.access || g.mode) === 'rw'),
    `the grant made on the page is the agent's: ${JSON.stringify(shown.grants)}`);
  // A bad grant is refused with the command's own message, shown as it is.
  await page.getByLabel('Folder (absolute path)').fill(path.join(folder, 'no-such-folder'));
  await page.getByRole('button', { name: 'Grant folder' }).click();
  await page.locator('#error:not([hidden])', { hasText: 'does not exist' }).waitFor();
  step(`a bad grant is refused with the command's message: ${await page.textContent('#error')}`);
  // A host allowed from the page, then removed.
  await page.getByLabel('Host').fill('docs.example.test');
  await page.getByRole('button', { name: 'Allow host' }).click();
  await page.locator('ul.hosts', { hasText: 'docs.example.test' }).waitFor();
  assert.ok(world.pxJson(['agent', 'show', 'pagetest']).network.allow.includes('docs.example.test'), 'the host allowed on the page');
  await page.getByRole('button', { name: 'Remove docs.example.test' }).click();
  await waitFor('the host removed', () => !world.pxJson(['agent', 'show', 'pagetest']).network.allow.includes('docs.example.test'), 10000);
  // Sealed is said, not offered: every agent run is sealed on Linux, so there is no switch.
  assert.match(await page.locator('dl.facts').textContent(), /Sealedevery run \(always on: there is no switch\)/, 'the page says every run is sealed');
  assert.equal(await page.getByRole('button', { name: /seal/i }).count(), 0, 'no switch for Sealed');
  await shot(page, '1-agent-granted');

  // 3. A sealed run of the agent tries a loopback server outside its rule; the
  //    refusal appears on the runs page while the run goes on. A second, ad-hoc run
  //    works alongside, so that "every run" means more than one.
  await page.goto(`${ui.origin}/#/runs`);
  await page.waitForSelector('body[data-ready="runs"]');
  //    The agent's run also leaves a Claude Code transcript in its home, as the
  //    harness would (a command and a file it wrote, timed while the run goes
  //    on): its report's timeline has them beside the network request.
  const refusedHost = 'refused.test';
  fs.copyFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-session.jsonl.in'), path.join(folder, 'session.jsonl.in'));
  const writeTranscript = 's=$(date +%s); t() { date -u -d "@$((s+$1))" +%Y-%m-%dT%H:%M:%S.000Z; }; ' +
    'd="$HOME/.claude/projects/-page-test"; mkdir -p "$d" && ' +
    'sed -e "s|@T0@|$(t 1)|g" -e "s|@T1@|$(t 2)|g" -e "s|@T2@|$(t 3)|g" -e "s|@CWD@|$PWD|g" session.jsonl.in ' +
    '> "$d/9a9e0c1d-5c3a-4e59-8d1f-0000000c0de5.jsonl"';
  world.startRun(['agent', 'run', 'pagetest', '--in', folder, '--', 'sh', '-c',
    `${writeTranscript}; curl -s -o /dev/null http://${refusedHost}:${target.port}/; while :; do sleep 0.2; done`],
  { PARALLEX_TEST_RESOLVE: `${refusedHost}=127.0.0.1` });
  // The ad hoc run asks to open a page (its xdg-open is parallex's opener): the
  // page shows the whole address, marked outside the rule, as a link the user may click.
  const openAsked = 'https://sign-in.outside.test/device?code=WXYZ-1234';
  world.startRun(['run', '--in', folder, '--', 'sh', '-c', `xdg-open '${openAsked}'; while :; do sleep 0.2; done`]);
  const openRow = page.locator('li.event[data-type="run.open_requested"]', { hasText: openAsked });
  await openRow.first().waitFor({ timeout: 30000 });
  assert.match(await openRow.first().textContent(), /outside the rule/, 'an address outside the rule is marked');
  assert.equal(await openRow.first().locator('a').getAttribute('href'), openAsked, 'the whole address, as a link');
  const row = page.locator(`li.event[data-type="network.refused"]`, { hasText: `${refusedHost}:${target.port}` });
  await row.first().waitFor({ timeout: 30000 });
  const delay = await row.first().evaluate((li) => Number(li.dataset.painted || li.dataset.shown) - Date.parse(li.dataset.time));
  figures.push(`a refused connection to its row on the page: ${delay} ms`);
  assert.match(await row.first().textContent(), /parallex allow --run \S+ refused\.test/, 'the refusal carries its fix');
  const runs = await waitFor('two runs going', () => { const r = liveRuns(); return r.length === 2 && r; });
  const agentRun = runs.find((r) => r.agent === 'pagetest');
  assert.ok(agentRun, 'the agent run is listed');
  await page.waitForSelector(`section.run[data-run="${agentRun.id}"]`);
  await page.waitForFunction(() => /2 runs going/.test(document.getElementById('runs-going').textContent));
  await shot(page, '2-refused-live');

  // 4. A page served from another origin tries to pause every run with the
  //    browser's cookie: fetch (no-cors and cors) and a form post. Nothing pauses.
  attacker = await httpServer((req, res) => {
    res.setHeader('Content-Type', 'text/html');
    res.end(`<!doctype html><title>not parallex</title>
<form id="f" method="POST" action="${ui.origin}/api/pause-all" enctype="text/plain"><input name='{"a":"' value='"}'></form>
<script>
  const u = ${JSON.stringify(ui.origin + '/api/pause-all')};
  fetch(u, { method: 'POST', mode: 'no-cors', credentials: 'include' }).catch(() => {});
  fetch(u, { method: 'POST', credentials: 'include', headers: { 'Content-Type': 'application/json' }, body: '{}' })
    .then((r) => { document.title = 'read ' + r.status; }, () => { document.title = 'blocked'; });
  setTimeout(() => document.getElementById('f').submit(), 300);
</script>`);
  });
  const evil = await context.newPage();
  await evil.goto(`http://127.0.0.1:${attacker.port}/`);
  await evil.waitForTimeout(2000);
  for (const r of liveRuns()) {
    assert.equal(r.state, 'running', `a page from another origin paused run ${r.id}`);
    assert.ok(!frozen(r), `run ${r.id} is frozen after the other origin's page`);
  }
  step('a page from another origin could not pause any run');
  await evil.close();

  // 5. Pause all from the page: every run frozen, by the kill switch's own check.
  await page.bringToFront();
  await page.getByRole('button', { name: 'Pause all' }).click();
  await page.waitForSelector('#notice:not([hidden])');
  await waitFor('every run paused and frozen', () => {
    const r = liveRuns();
    return r.length === 2 && r.every((x) => x.state === 'paused' && frozen(x));
  }, 15000);
  await page.waitForFunction(() => /\(2 paused\)/.test(document.getElementById('runs-going').textContent), null, { timeout: 10000 });
  step('Pause all froze every run');
  await shot(page, '3-paused-all');

  // 6. Resume all: every run thawed.
  await page.getByRole('button', { name: 'Resume all' }).click();
  await waitFor('every run running again', () => {
    const r = liveRuns();
    return r.length === 2 && r.every((x) => x.state === 'running' && !frozen(x));
  }, 15000);
  step('Resume all thawed every run');

  // 6b. A run in ask mode asks for a host; answered "Approve once" from the page,
  //     its connection goes through (to the loopback server) and the run ends well.
  const asking = world.startRun(['run', '--in', folder, '--ask=60', `--local-servers=${target.port}`, '--allow', 'allowed.test',
    '--', 'curl', '-sf', '-m', '50', '-o', '/dev/null', `http://asked.test:${target.port}/`],
  { PARALLEX_TEST_RESOLVE: `asked.test=127.0.0.1` });
  const asked = page.locator('li.event[data-type="network.asked"]', { hasText: `asked.test:${target.port}` });
  await asked.first().waitFor({ timeout: 30000 });
  await page.waitForFunction(() => /^1 open question/.test(document.getElementById('questions-count').textContent), null, { timeout: 10000 });
  const askRun = liveRuns().find((r) => JSON.stringify(r.command).includes('asked.test'));
  assert.ok(askRun, 'the asking run is listed');
  await shot(page, '3b-asked');
  await asked.first().getByRole('button', { name: 'Approve once' }).click();
  const askExit = await new Promise((resolve) => {
    if (asking.exitCode !== null) resolve(asking.exitCode); else asking.on('exit', resolve);
  });
  assert.equal(askExit, 0, `the approved connection went through (run's stderr: ${asking.stderrText})`);
  await page.locator('li.event[data-type="network.answered"]', { hasText: 'allowed-once' }).first().waitFor({ timeout: 10000 });
  assert.equal(await asked.first().locator('button').count(), 0, 'a closed question keeps no answer buttons');
  step('a question answered from the page let its connection through');

  // 7. Kill the agent's run from its card; its report draws the timeline.
  await page.getByRole('button', { name: `Kill run ${agentRun.id}` }).click();
  await waitFor('the agent run gone', () => !liveRuns().some((r) => r.id === agentRun.id), 30000);
  await page.goto(`${ui.origin}/#/runs/${agentRun.id}/report`);
  await page.waitForSelector('body[data-ready="report"]', { timeout: 30000 });
  const marks = await page.locator('svg.timeline rect.mark').count();
  assert.ok(marks >= 1, `the report's timeline has its network request (marks: ${marks})`);
  assert.ok(await page.locator('svg.hosts rect.bar').count() >= 1, 'the per-host chart has a bar');
  await page.waitForSelector(`text=${refusedHost}`);
  // The transcript's command and file change, on the same axis as the network request.
  const laneMarks = async (lane) => page.locator(`svg.timeline rect.${lane}.mark`).evaluateAll((rs) => rs.map((r) => ({
    x: Number(r.getAttribute('x')), title: r.querySelector('title').textContent })));
  const commandMarks = await laneMarks('command'), fileMarks = await laneMarks('file'), networkMarks = await laneMarks('network');
  const made = commandMarks.find((m) => m.title.includes('make page-test-build'));
  const wrote = fileMarks.find((m) => m.title.includes('page-test-notes.md'));
  assert.ok(made, `the transcript's command is on the timeline: ${JSON.stringify(commandMarks)}`);
  assert.ok(wrote, `the transcript's file change is on the timeline: ${JSON.stringify(fileMarks)}`);
  assert.ok(networkMarks.some((m) => m.title.includes(refusedHost)), 'the refused request is on the same axis');
  assert.ok(wrote.x > made.x, `the file was written after the command ran (x ${wrote.x} after ${made.x})`);
  const report = world.pxJson(['report', '--agent', 'pagetest', '--run', agentRun.id]);
  const activity = report.runs[0].activity;
  assert.ok(activity.commands.some((c) => c.command === 'make page-test-build' && c.at), `the command has its time: ${JSON.stringify(activity.commands)}`);
  await page.locator('table.commands', { hasText: 'make page-test-build' }).waitFor();
  await page.locator('table.changes', { hasText: 'page-test-notes.md' }).waitFor();
  await shot(page, '4-report-timeline');

  // 7b. Where a session links a command to the files it changed, the report lists them
  //     under the command and the timeline draws a line between the two. None of the
  //     bundled parsers gives such links (docs/transcripts.md), so the session is put in
  //     the ended ask run's record as `agent rewind` keeps sessions there (sessions.json,
  //     which the report reads instead of the home's transcripts), at the run's own times.
  const askDir = findRecordFolder(world.home, askRun.id);
  assert.ok(askDir, `the record folder of run ${askRun.id}`);
  const askStart = Date.parse(JSON.parse(fs.readFileSync(path.join(askDir, 'run.json'), 'utf8')).started_at);
  const at = (ms) => new Date(askStart + ms).toISOString();
  const generated = path.join(folder, 'gen', 'a.c');
  fs.writeFileSync(path.join(askDir, 'sessions.json'), JSON.stringify({
    kept_at: at(5000),
    sources: [{ name: 'transcripts (codex)', location: '/kept/by/the/test', status: 'used', message: '', cannot_show: '' }],
    sessions: [{ harness: 'codex', session_id: 'linked-session', parent_session_id: null, cwd: folder, models: [],
      started_at: at(0), ended_at: at(400), files_read: [],
      files_changed: [{ path: generated, tool: 'shell', action: 'create', command: 0 }],
      commands: [{ command: './codegen --out gen', cwd: folder, exit_code: 0, status: 'success', tool: 'shell' }],
      urls: [], web_searches: [], token_usage: null, malformed_lines: 0,
      action_times: { commands: [at(200)], files_changed: [at(300)] } }],
  }));
  await page.goto(`${ui.origin}/#/runs/${askRun.id}/report`);
  const linkedRow = page.locator('table.commands tr', { hasText: './codegen --out gen' });
  await linkedRow.waitFor({ timeout: 30000 });
  assert.equal((await linkedRow.locator('ul.changed li').allTextContents()).join('|'), `changed ${generated}`,
    'the file the command changed is listed under it');
  assert.match(await page.locator('table.changes tr', { hasText: generated }).textContent(), /\.\/codegen --out gen/,
    'the change names the command that made it');
  assert.equal(await page.locator('svg.timeline line.link').count(), 1, 'a line from the command to its file');
  const text = world.px(['report', '--run', askRun.id]);
  assert.ok(text.includes(`changed: ${generated}`), `the text report shows the link:\n${text}`);
  await shot(page, '4b-report-links');

  // 8. A narrow window in dark mode: nothing wider than the window; keyboard reaches Pause all.
  const narrow = await browser.newContext({ viewport: { width: 380, height: 800 }, colorScheme: 'dark' });
  const small = await narrow.newPage();
  await small.goto(ui.url);
  await small.waitForSelector('body[data-ready="runs"]');
  const widths = await small.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.ok(widths[0] <= widths[1], `the page fits a 380 px window (scroll width ${widths[0]})`);
  const bg = await small.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(bg, 'rgb(255, 255, 255)', 'dark mode has a dark background');
  let reached = false;
  for (let i = 0; i < 12 && !reached; i++) {
    await small.keyboard.press('Tab');
    reached = await small.evaluate(() => document.activeElement && document.activeElement.id === 'pause-all');
  }
  assert.ok(reached, 'Tab reaches Pause all');
  await shot(small, '5-narrow-dark');
  await narrow.close();

  // The browser logs every 4xx answer (the bad grant's 400) as an error: only script errors count.
  assert.deepEqual(pageErrors.filter((e) => !/^Failed to load resource/.test(e)), [], 'no script errors on the page');
  for (const f of figures) console.log(`[page test] figure: ${f}`);
  console.log('[page test] PASSED');
} catch (e) {
  console.error(`[page test] FAILED: ${e.stack || e}`);
  if (ui) console.error(`[page test] parallex ui said:\n${ui.output()}`);
  process.exitCode = 1;
} finally {
  if (browser) await browser.close().catch(() => {});
  if (ui) ui.child.kill('SIGTERM');
  if (target) target.server.close();
  if (attacker) attacker.server.close();
  world.cleanup();
}
