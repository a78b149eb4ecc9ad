// The page's two figures, measured in Debian's Chromium (tests/ui/browser's harness):
//  - from starting `parallex ui --no-open` to the runs list drawn (LAUNCHES times);
//  - from a refused connection (the proxy's event time) to its row drawn on the
//    runs page, with RUNS sealed runs working at once, each refusing a new name
//    every 0.5 s for SECONDS.
//
//   node bench/ui/live.mjs PATH/TO/parallex [RUNS=10] [SECONDS=20] [LAUNCHES=5]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { makeWorld, startUi, launchChromium, waitFor, median } =
  await import(path.join(here, '../../tests/ui/browser/harness.mjs'));

const [parallex, runsArg, secondsArg, launchesArg] = process.argv.slice(2);
if (!parallex) { console.error('usage: node bench/ui/live.mjs PATH/TO/parallex [RUNS] [SECONDS] [LAUNCHES]'); process.exit(2); }
const RUNS = Number(runsArg || 10), SECONDS = Number(secondsArg || 20), LAUNCHES = Number(launchesArg || 5);
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

const world = makeWorld(parallex);
const browser = await launchChromium(world);
try {
  // 1. Start to first render, a fresh `parallex ui` and a fresh page each time.
  const starts = [], printed = [];
  for (let i = 0; i < LAUNCHES; i++) {
    const ui = await startUi(parallex, world.env);
    printed.push(performance.now() - ui.started);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(ui.url);
    await page.waitForSelector('body[data-ready="runs"]');
    starts.push(performance.now() - ui.started);
    await context.close();
    ui.child.kill('SIGTERM');
  }

  // 2. RUNS runs refusing a new name every 0.5 s; the page shows each refusal.
  const folder = path.join(world.dir, 'project');
  fs.mkdirSync(folder);
  const ui = await startUi(parallex, world.env);
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  await page.goto(ui.url);
  await page.waitForSelector('body[data-ready="runs"]');
  const from = Date.now();
  for (let r = 0; r < RUNS; r++) {
    world.startRun(['run', '--in', folder, '--allow', 'allowed.test', '--', 'sh', '-c',
      `i=0; while :; do i=$((i+1)); curl -s -o /dev/null -m 2 http://r${r}-$i.refused.test/; sleep 0.5; done`]);
  }
  await waitFor(`${RUNS} runs going`, () => world.pxJson(['runs']).runs.length === RUNS, 60000);
  await page.waitForTimeout(SECONDS * 1000);
  const rows = await page.$$eval('li.event[data-type="network.refused"]', (lis) =>
    lis.map((li) => ({ time: Date.parse(li.dataset.time), painted: Number(li.dataset.painted || li.dataset.shown) })));
  const live = rows.filter((r) => r.time >= from).map((r) => r.painted - r.time);
  ui.child.kill('SIGTERM');

  console.log(`| figure | median | p95 | max | n |`);
  console.log(`|---|---|---|---|---|`);
  console.log(`| \`parallex ui --no-open\` to its address printed (ms) | ${median(printed).toFixed(0)} | ${pct(printed, 0.95).toFixed(0)} | ${Math.max(...printed).toFixed(0)} | ${printed.length} |`);
  console.log(`| \`parallex ui --no-open\` to the runs list drawn (ms) | ${median(starts).toFixed(0)} | ${pct(starts, 0.95).toFixed(0)} | ${Math.max(...starts).toFixed(0)} | ${starts.length} |`);
  console.log(`| a refused connection to its row drawn, ${RUNS} runs working (ms) | ${median(live)} | ${pct(live, 0.95)} | ${Math.max(...live)} | ${live.length} |`);
  const assets = path.join(here, '../../host/src/ui/assets');
  const sizes = fs.readdirSync(assets).map((f) => `${f} ${fs.statSync(path.join(assets, f)).size} B`);
  console.log(`\nassets: ${sizes.join(', ')}`);
} finally {
  await browser.close();
  world.cleanup();
}
