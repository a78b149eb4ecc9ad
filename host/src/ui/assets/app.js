// The page of `parallex ui`: a client of the server's JSON API (the same JSON the
// `--json` commands print) and of its event stream. No framework and no build
// step: the executable embeds this file as it is. Text from runs (hosts, paths,
// command lines) only ever goes into the page as text nodes, never as HTML.
'use strict';

// ---------- small helpers ----------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'text') node.textContent = v;
    else node.setAttribute(k, String(v));
  }
  for (const c of children.flat(Infinity)) if (c) node.append(c);
  return node;
}

function fmtDuration(ms) {
  if (ms === null || ms === undefined || isNaN(ms)) return '';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

function fmtBytes(n) {
  if (n === null || n === undefined) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (isNaN(d)) return String(iso);
  return d.toLocaleTimeString(undefined, { hour12: false }) + '.' + String(d.getMilliseconds()).padStart(3, '0');
}

function commandText(c) {
  if (Array.isArray(c)) return c.join(' ');
  return c ? String(c) : '';
}

// The list a response holds: the API answers some lists bare and some (as the
// commands print them) inside an object.
function listOf(data, key) {
  if (Array.isArray(data)) return data;
  if (data && Array.isArray(data[key])) return data[key];
  return [];
}

function runStarted(r) { return r.started || r.started_at || r.since || r.time || null; }
function runEnded(r) { return r.ended || r.ended_at || null; }
function runAgent(r) { return r.agent ? r.agent : null; }

// ---------- the API ----------

// Every error is shown as the API says it ({"error": "..."}), the same message
// the command would print.
class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status || 0;
  }
}

async function api(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(`Parallex UI could not be reached (${e.message}). Is \`parallex ui\` still running?`);
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = null; }
  if (!res.ok) {
    const msg = data && data.error ? data.error : `${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`;
    throw new ApiError(msg, res.status);
  }
  return data;
}

function showError(e) {
  const box = document.getElementById('error');
  box.textContent = e instanceof Error ? e.message : String(e);
  box.hidden = false;
  document.getElementById('notice').hidden = true;
}
function showNotice(text) {
  const box = document.getElementById('notice');
  box.textContent = text;
  box.hidden = false;
  document.getElementById('error').hidden = true;
  clearTimeout(showNotice.timer);
  showNotice.timer = setTimeout(() => { box.hidden = true; }, 6000);
}
function clearMessages() {
  document.getElementById('error').hidden = true;
}

// Runs an action from a button: disables it meanwhile, shows the API's error.
async function act(button, fn) {
  if (button) button.disabled = true;
  clearMessages();
  try {
    return await fn();
  } catch (e) {
    showError(e);
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

// ---------- live state: runs, questions and the event stream ----------

const state = {
  runs: new Map(),       // id -> run as /api/runs gives it
  events: new Map(),     // run id -> [event], oldest first
  seen: new Set(),       // the stream's lines already taken (a reconnect replays)
  answered: new Set(),   // "run/question" of the questions closed
  questions: [],
  loadedRuns: false,
};
const MAX_EVENTS_PER_RUN = 500;

async function refreshRuns() {
  const data = await api('GET', '/api/runs');
  const runs = listOf(data, 'runs');
  state.runs = new Map(runs.map((r) => [r.id, r]));
  state.loadedRuns = true;
  // The decisions of runs no longer listed (neither going nor recent) are let go.
  if (state.events.size > 100) for (const id of [...state.events.keys()]) if (!state.runs.has(id)) state.events.delete(id);
  drawBar();
}

async function refreshQuestions() {
  try {
    const data = await api('GET', '/api/questions');
    state.questions = listOf(data, 'questions');
  } catch (_) {
    state.questions = [];
  }
  drawBar();
  if (currentView && currentView.onQuestions) currentView.onQuestions();
}

function runGoing(r) {
  const s = String(r.state || '').toLowerCase();
  return !runEnded(r) && (s === 'running' || s === 'paused' || s === 'frozen' || s === 'starting' || s === '');
}

function drawBar() {
  const going = [...state.runs.values()].filter(runGoing).length;
  const paused = [...state.runs.values()].filter((r) => runGoing(r) && (r.paused || r.state === 'paused')).length;
  document.getElementById('runs-going').textContent =
    `${going} run${going === 1 ? '' : 's'} going` + (paused ? ` (${paused} paused)` : '');
  const q = state.questions.length;
  const qa = document.getElementById('questions-count');
  qa.textContent = `${q} open question${q === 1 ? '' : 's'}`;
  qa.classList.toggle('hot', q > 0);
}

// The stream's event types (docs/events.md). An `event:` line names the type, and
// EventSource hands a named event only to a listener for that name.
const EVENT_TYPES = [
  'run.start', 'run.end', 'run.open_requested',
  'network.allowed', 'network.refused', 'network.failed', 'network.asked', 'network.answered',
  'rule.changed', 'request.allowed', 'request.refused', 'request.failed',
  'credential.swapped', 'credential.exfiltration_refused', 'seal.refused',
  'file.moved_aside', 'decoy.touched',
  'killswitch.paused', 'killswitch.resumed', 'killswitch.killed', 'killswitch.leftovers_killed',
];
const eventListeners = new Set();   // views that draw events live

let refreshTimer = null;
function refreshSoon() {
  // A run started, ended or was paused: read the list again, once for a burst.
  if (refreshTimer) return;
  refreshTimer = setTimeout(async () => {
    refreshTimer = null;
    try { await refreshRuns(); } catch (_) { /* the poll retries */ }
    for (const l of eventListeners) if (l.onRuns) l.onRuns();
  }, 150);
}

function takeEvent(raw) {
  if (state.seen.has(raw)) return;
  state.seen.add(raw);
  // A page left open for days: forget the oldest lines (a Set keeps insertion order).
  if (state.seen.size > 20000) {
    for (const old of state.seen) { state.seen.delete(old); if (state.seen.size <= 15000) break; }
  }
  let ev;
  try { ev = JSON.parse(raw); } catch (_) { return; }
  if (!ev || !ev.run) return;
  ev.shownAt = Date.now();
  let list = state.events.get(ev.run);
  if (!list) { list = []; state.events.set(ev.run, list); }
  list.push(ev);
  if (list.length > MAX_EVENTS_PER_RUN) list.splice(0, list.length - MAX_EVENTS_PER_RUN);
  const t = ev.type || '';
  if (t.startsWith('run.start') || t === 'run.end' || t.startsWith('killswitch.')) refreshSoon();
  if (t === 'network.answered') {
    const k = `${ev.run}/${ev.question}`;
    state.answered.add(k);
    // The question is closed: its row keeps what was asked, not the buttons.
    for (const b of document.querySelectorAll('li.event[data-question]')) if (b.dataset.question === k) b.querySelector('.actions')?.remove();
  }
  if (t === 'network.asked' || t === 'network.answered') refreshQuestions();
  for (const l of eventListeners) l.onEvent(ev);
}

function startStream() {
  // The last hour: a run's recent decisions are on its card when the page opens.
  const since = new Date(Date.now() - 3600 * 1000).toISOString();
  const source = new EventSource('/api/events?since=' + encodeURIComponent(since));
  const handler = (m) => takeEvent(m.data);
  source.onmessage = handler;
  for (const t of EVENT_TYPES) source.addEventListener(t, handler);
  source.onerror = () => { document.body.dataset.stream = 'reconnecting'; };
  source.onopen = () => { document.body.dataset.stream = 'open'; };
}

// ---------- one event as a row ----------

function hostPort(ev) {
  if (!ev.host) return '';
  return ev.port ? `${ev.host}:${ev.port}` : ev.host;
}

function eventClass(t) {
  if (t.endsWith('.allowed') || t === 'credential.swapped' || t === 'killswitch.resumed') return 'allowed';
  if (t.endsWith('.refused') || t.endsWith('.failed') || t === 'killswitch.killed') return 'refused';
  if (t === 'network.asked') return 'asked';
  if (t === 'file.moved_aside') return 'moved';
  if (t === 'decoy.touched') return 'decoy';
  if (t === 'run.open_requested') return 'open';
  return '';
}

// An address a run asked to open, shown whole. Opening it stays the user's click
// (a plain link: the page never opens it by itself), marked when outside the rule.
function openRequest(ev) {
  const url = String(ev.url || '');
  // in_rule: the host inside the run's network rule; absent for an address that is not http(s).
  const outside = ev.in_rule === false;
  let link;
  try {
    const u = new URL(url);
    link = (u.protocol === 'https:' || u.protocol === 'http:')
      ? el('a', { href: url, rel: 'noopener noreferrer', target: '_blank', class: 'mono' }, url)
      : el('code', {}, url);
  } catch (_) {
    link = el('code', {}, url);
  }
  return [
    'asks to open ', link, ' ',
    outside ? el('span', { class: 'outside tag', title: 'This address is outside the run\'s network rule' }, 'outside the rule')
      : ev.in_rule === true ? el('span', { class: 'tag' }, 'inside the rule') : '',
  ];
}

function answerButtons(ev) {
  const q = ev.question;
  const answer = (answerValue, forValue) => (e) => act(e.currentTarget, async () => {
    await api('POST', `/api/questions/${encodeURIComponent(q)}`, { answer: answerValue, for: forValue, run: ev.run });
    showNotice(`Question ${q} of run ${ev.run}: ${answerValue} ${forValue === 'once' ? 'once' : forValue === 'run' ? 'for the run' : 'always'}.`);
    refreshQuestions();
  });
  return el('span', { class: 'actions' },
    el('button', { type: 'button', onclick: answer('approve', 'once') }, 'Approve once'),
    el('button', { type: 'button', onclick: answer('approve', 'run') }, 'Approve for the run'),
    el('button', { type: 'button', onclick: answer('approve', 'always') }, 'Approve always'),
    el('button', { type: 'button', class: 'danger', onclick: answer('deny', 'once') }, 'Deny'));
}

function eventRow(ev) {
  const t = ev.type || 'event';
  const body = [];
  const hp = hostPort(ev);
  switch (t) {
    case 'network.allowed':
      body.push('allowed ', el('code', {}, hp), ev.method ? ` (${ev.method})` : '');
      break;
    case 'network.refused': {
      body.push('refused ', el('code', {}, hp), ev.reason ? ` — ${ev.reason}` : '');
      // A host alone is allowed on ports 80 and 443; another port is named.
      const rule = ev.port && ev.port !== 80 && ev.port !== 443 ? hp : ev.host;
      const fix = ev.fix || ev.hint || (ev.host ? `parallex allow --run ${ev.run} ${rule}` : '');
      if (fix) body.push(el('span', { class: 'fix' }, 'Fix: ', el('code', {}, fix)));
      // The same fix as a button while the run goes on (`parallex allow --run`).
      const r = state.runs.get(ev.run);
      if (ev.host && r && runGoing(r)) {
        body.push(el('span', { class: 'actions' }, el('button', { type: 'button', 'aria-label': `Allow ${rule} for run ${ev.run}`,
          onclick: (e) => act(e.currentTarget, async () => {
            await api('POST', `/api/runs/${encodeURIComponent(ev.run)}/allow`, { host: rule });
            showNotice(`Run ${ev.run} may now reach ${rule}.`);
          }) }, `Allow ${rule} for this run`)));
      }
      break;
    }
    case 'network.failed':
      body.push('failed ', el('code', {}, hp), ev.reason ? ` — ${ev.reason}` : '');
      break;
    case 'network.asked':
      body.push(`asks (question ${ev.question}) for `, el('code', {}, hp), ev.reason ? ` — ${ev.reason}` : '');
      if (!state.answered.has(`${ev.run}/${ev.question}`)) body.push(answerButtons(ev));
      break;
    case 'network.answered':
      body.push(`question ${ev.question} for `, el('code', {}, hp), `: ${ev.answer || ''}`, ev.by ? ` by ${ev.by}` : '');
      break;
    case 'rule.changed':
      body.push(`rule: ${ev.change || ''} `, el('code', {}, ev.rule || ''), ev.by ? ` by ${ev.by}` : '');
      break;
    case 'file.moved_aside':
      body.push('moved aside ', el('code', {}, ev.path || ''), ev.why ? ` — ${ev.why}` : '');
      break;
    case 'decoy.touched':
      body.push('decoy touched: ', el('code', {}, ev.path || ''), ev.access ? ` (${ev.access})` : '',
        ev.process ? ` by ${ev.process}` : '');
      break;
    case 'run.open_requested':
      body.push(...openRequest(ev));
      break;
    case 'run.start':
      body.push('started ', el('code', {}, ev.command || ''));
      break;
    case 'run.end':
      body.push(`ended: ${ev.status || ''}`, ev.exit_code !== undefined ? ` (exit ${ev.exit_code})` : '',
        ev.error ? ` — ${ev.error}` : '');
      break;
    default:
      if (t.startsWith('request.') || t.startsWith('credential.')) {
        body.push(`${t.split('.')[1]} `, ev.method ? `${ev.method} ` : '', el('code', {}, hp + (ev.path || '')));
      } else if (t.startsWith('killswitch.')) {
        body.push(t.slice('killswitch.'.length), ev.by ? ` by ${ev.by}` : '', ev.ms !== undefined ? ` in ${Number(ev.ms).toFixed(1)} ms` : '');
      } else if (t === 'seal.refused') {
        body.push('seal refused ', el('code', {}, ev.call || ''), ev.count ? ` ×${ev.count}` : '');
      } else {
        body.push(t);
      }
  }
  const li = el('li', { class: `event ${eventClass(t)}`, 'data-type': t,
    'data-question': t === 'network.asked' ? `${ev.run}/${ev.question}` : null, 'data-time': ev.time || '', 'data-shown': ev.shownAt || Date.now() },
    el('span', { class: 't' }, fmtTime(ev.time)), ...body);
  // When the row was first drawn: the test and bench/ui read it against the event's time.
  requestAnimationFrame(() => { if (!li.dataset.painted) li.dataset.painted = String(Date.now()); });
  return li;
}

// ---------- views ----------

const main = () => document.getElementById('main');
let currentView = null;

function setView(title, nav, ...content) {
  if (currentView && currentView.leave) currentView.leave();
  currentView = null;
  const m = main();
  m.replaceChildren(...content);
  document.title = `${title} · Parallex`;
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function runLink(id) { return el('a', { href: `#/runs/${encodeURIComponent(id)}`, class: 'mono' }, id); }
function agentLink(name) { return el('a', { href: `#/agents/${encodeURIComponent(name)}` }, name); }

function runActions(r) {
  const id = r.id;
  const post = (what) => (e) => act(e.currentTarget, async () => {
    await api('POST', `/api/runs/${encodeURIComponent(id)}/${what}`);
    showNotice(`Run ${id}: ${what === 'kill' ? 'killed' : what + 'd'}.`);
    await refreshRuns();
    if (currentView && currentView.onRuns) currentView.onRuns();
  });
  if (!runGoing(r)) return el('span', { class: 'actions' });
  const paused = r.paused || r.state === 'paused';
  return el('span', { class: 'actions' },
    paused ? el('button', { type: 'button', onclick: post('resume'), 'aria-label': `Resume run ${id}` }, 'Resume')
           : el('button', { type: 'button', onclick: post('pause'), 'aria-label': `Pause run ${id}` }, 'Pause'),
    el('button', { type: 'button', class: 'danger', onclick: post('kill'), 'aria-label': `Kill run ${id}` }, 'Kill'));
}

function runFacts(r) {
  const started = runStarted(r);
  const ended = runEnded(r);
  const dur = started ? ((ended ? Date.parse(ended) : Date.now()) - Date.parse(started)) : null;
  const facts = [
    ['Agent', runAgent(r) ? agentLink(r.agent) : 'ad hoc'],
    ['Command', el('code', {}, commandText(r.command))],
    ['Folder', el('code', {}, r.folder || r.run_folder || '')],
    ['State', el('span', { class: `state ${String(r.state || '').toLowerCase()}` }, r.state || (ended ? 'ended' : ''))],
    ['Duration', el('span', { class: 'duration', 'data-started': started || '', 'data-ended': ended || '' }, fmtDuration(dur))],
  ];
  if (r.exit !== null && r.exit !== undefined) facts.push(['Exit', String(r.exit)]);
  if (r.cpu_seconds !== null && r.cpu_seconds !== undefined) facts.push(['CPU', `${Number(r.cpu_seconds).toFixed(1)} s`]);
  if (r.memory_bytes !== null && r.memory_bytes !== undefined) facts.push(['Memory', fmtBytes(r.memory_bytes)]);
  return el('dl', { class: 'facts' }, facts.map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

// Durations of running runs tick without asking the server.
setInterval(() => {
  for (const d of document.querySelectorAll('.duration[data-started]')) {
    if (!d.dataset.started || d.dataset.ended) continue;
    d.textContent = fmtDuration(Date.now() - Date.parse(d.dataset.started));
  }
}, 1000);

// #/runs: every run going now and recently, each with its live decisions.
function viewRuns() {
  const list = el('div', { id: 'runs-list' });
  const questions = el('div', { id: 'questions' });
  setView('Runs', 'runs', el('h1', {}, 'Runs, live'), questions, list);

  // Cards stay across redraws (only their facts and buttons are redrawn), so the
  // live rows and the keyboard focus survive the list being read again.
  const cards = new Map();
  function card(r) {
    let c = cards.get(r.id);
    if (!c) {
      const events = el('ol', { class: 'events', 'aria-label': `Decisions of run ${r.id}` });
      for (const ev of (state.events.get(r.id) || []).filter(notNoise)) events.append(eventRow(ev));
      const actions = el('span');
      const facts = el('div');
      const node = el('section', { class: 'card run', 'data-run': r.id },
        el('header', {}, el('h2', {}, runLink(r.id)), actions,
          el('a', { href: `#/runs/${encodeURIComponent(r.id)}/report` }, 'Report')),
        facts, events);
      c = { node, events, actions, facts, key: '' };
      cards.set(r.id, c);
    }
    const key = JSON.stringify(r);
    if (c.key !== key) {
      const focused = c.actions.contains(document.activeElement) ? document.activeElement.textContent : null;
      c.actions.replaceChildren(runActions(r));
      c.facts.replaceChildren(runFacts(r));
      c.node.dataset.state = r.state || '';
      c.key = key;
      if (focused) {
        const again = [...c.actions.querySelectorAll('button')].find((b) => b.textContent === focused) || c.actions.querySelector('button');
        if (again) again.focus();
      }
    }
    return c.node;
  }
  function draw() {
    const runs = [...state.runs.values()].sort((a, b) =>
      (runGoing(b) - runGoing(a)) || String(runStarted(b) || b.id).localeCompare(String(runStarted(a) || a.id)));
    for (const id of [...cards.keys()]) if (!state.runs.has(id)) cards.delete(id);
    const nodes = runs.map(card);
    if (!nodes.length) {
      list.replaceChildren(el('p', { class: 'muted' }, 'No runs going or recent. Start one with `parallex run` or `parallex agent run`.'));
    } else if (nodes.length !== list.children.length || nodes.some((n, i) => list.children[i] !== n)) {
      list.replaceChildren(...nodes);
    }
    drawQuestions(questions);
    document.body.dataset.ready = 'runs';
  }
  currentView = {
    onEvent(ev) {
      const c = cards.get(ev.run);
      if (!c) { refreshSoon(); return; }
      if (notNoise(ev)) c.events.append(eventRow(ev));
    },
    onRuns: draw,
    onQuestions: () => drawQuestions(questions),
    leave() { eventListeners.delete(currentView); },
  };
  eventListeners.add(currentView);
  if (state.loadedRuns) draw();
  refreshRuns().then(draw, showError);
  refreshQuestions().then(() => drawQuestions(questions));
}

// The run's own lines that are not decisions (its start and end) stay off the cards.
function notNoise(ev) { return ev.type !== 'run.start'; }

function drawQuestions(box) {
  // Drawn again only when the open questions change, so a focused button keeps its focus.
  const key = state.questions.map((q) => `${q.run}/${q.question ?? q.number ?? q.id}`).join(' ');
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  if (!state.questions.length) { box.replaceChildren(); return; }
  box.replaceChildren(el('h2', {}, 'Open questions'),
    ...state.questions.map((q) => {
      const n = q.question ?? q.number ?? q.id;
      return el('div', { class: 'card question', 'data-question': n },
        el('div', {}, `Question ${n}: run `, runLink(q.run), q.agent ? ` (${q.agent})` : '', ' asks for ',
          el('code', {}, hostPort(q)), (q.reason || q.rule_reason) ? ` — ${q.reason || q.rule_reason}` : ''),
        q.process ? el('div', { class: 'muted' }, el('code', {}, q.process)) : null,
        q.asked_at ? el('div', { class: 'muted' }, `Asked at ${fmtTime(q.asked_at)}` +
          (q.seconds_left !== undefined ? `; refused by itself ${q.seconds_left} s after the list was read unless answered.` : '')) : null,
        answerButtons({ run: q.run, question: n }));
    }));
}

// #/runs/ID: one run, all its decisions as they happen, its rule changed live.
async function viewRun(id) {
  const events = el('ol', { class: 'events', id: 'run-events', 'aria-label': 'Decisions' });
  const head = el('div');
  const summary = el('div');
  const allowForm = el('form', { class: 'inline' },
    el('label', {}, 'Host', el('input', { name: 'host', required: true, placeholder: 'example.com[:443]', autocomplete: 'off' })),
    el('button', { type: 'submit', name: 'allow' }, 'Allow for this run'),
    el('button', { type: 'submit', name: 'deny', class: 'danger' }, 'Deny for this run'));
  allowForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const what = e.submitter && e.submitter.name === 'deny' ? 'deny' : 'allow';
    const host = allowForm.elements.host.value.trim();
    act(e.submitter, async () => {
      await api('POST', `/api/runs/${encodeURIComponent(id)}/${what}`, { host });
      showNotice(`Run ${id}: ${what} ${host}.`);
    });
  });
  setView(`Run ${id}`, 'runs', el('h1', {}, 'Run ', el('code', {}, id)), head,
    el('p', {}, el('a', { href: `#/runs/${encodeURIComponent(id)}/report` }, 'Its report')),
    summary, el('h2', {}, 'Network rule, while it runs'), allowForm,
    el('h2', {}, 'Decisions, live'), events);

  async function drawHead() {
    let r;
    try {
      r = await api('GET', `/api/runs/${encodeURIComponent(id)}`);
    } catch (e) {
      showError(e);
      r = state.runs.get(id);
      if (!r) return;
    }
    head.replaceChildren(el('section', { class: 'card run', 'data-run': id, 'data-state': r.state || '' },
      el('header', {}, runActions(r)), runFacts(r)));
    drawRecordSummary(summary, r);
  }
  for (const ev of state.events.get(id) || []) events.append(eventRow(ev));
  currentView = {
    onEvent(ev) { if (ev.run === id) events.append(eventRow(ev)); },
    onRuns: drawHead,
    leave() { eventListeners.delete(currentView); },
  };
  eventListeners.add(currentView);
  await drawHead();
  document.body.dataset.ready = 'run';
}

// What GET /api/runs/ID adds to a run: its record's summary.
function drawRecordSummary(box, r) {
  const parts = [];
  const list = (title, items, fmt) => {
    if (!Array.isArray(items) || !items.length) return;
    parts.push(el('h3', {}, title), el('ul', {}, items.map((x) => el('li', {}, fmt(x)))));
  };
  list('Files moved aside', r.moved_aside || r.files_moved_aside, (x) => [el('code', {}, x.path || String(x)), x.why ? ` — ${x.why}` : '']);
  list('Decoys touched', r.decoys_touched, (x) => [el('code', {}, x.path || String(x)), x.access ? ` (${x.access})` : '']);
  list('Pages it asked to open', r.open_requests, (x) => openRequest(typeof x === 'string' ? { url: x } : x));
  box.replaceChildren(...parts);
}

// ---------- report ----------

function table(headers, rows, cls) {
  return el('table', { class: cls },
    el('thead', {}, el('tr', {}, headers.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, rows.map((r) => el('tr', {}, r.map((c, i) => el('td', { 'data-label': headers[i] }, c))))));
}

// ---------- the report's timeline ----------
// One run on one time axis (GET /api/runs/ID/report's "timeline", built by
// report/timeline.cpp): the commands and file changes its harness's transcripts
// gave a time, and the events of its record (network requests above all). One
// lane each for commands, file changes and network requests, one mark an item,
// a thin line from a command down to each file it changed (where the transcript
// linked them); a mark's <title> says what it was. The same items are listed
// as a table below the chart, for the keyboard and for reading.

// A timeline item's detail as text: for a command its exit and the files it
// changed, for a file change its action and the command that made it, for an
// event its gist (why, status, who).
function detailText(d) {
  if (d === null || d === undefined) return '';
  if (typeof d !== 'object') return String(d);
  const parts = [];
  for (const k of ['reason', 'status', 'exit_code', 'answer', 'access', 'why', 'by', 'tool']) {
    if (d[k] !== undefined && d[k] !== null && d[k] !== '') parts.push(`${k.replace('_', ' ')} ${d[k]}`);
  }
  if (d.port) parts.unshift(`port ${d.port}`);
  if (Array.isArray(d.files_changed) && d.files_changed.length) parts.push(`changed ${d.files_changed.join(', ')}`);
  if (d.by_command) parts.push(`by the command ${firstLine(d.by_command)}`);
  return parts.join(', ');
}

// A command's first line, cut at 80 characters (whole ones: never half a letter).
function firstLine(text) {
  const line = String(text || '').split('\n')[0];
  const chars = Array.from(line);
  return chars.length > 80 ? chars.slice(0, 79).join('') + '…' : line;
}

function timelineChart(items) {
  const lanes = ['command', 'file', 'network'];
  const laneNames = { command: 'Commands', file: 'Files', network: 'Network' };
  const times = items.map((i) => Date.parse(i.t)).filter((t) => !isNaN(t));
  const width = 720, left = 80, right = 10, laneH = 26, top = 10;
  const height = top + lanes.length * laneH + 28;
  const chart = svg('svg', { class: 'chart timeline', viewBox: `0 0 ${width} ${height}`, role: 'img',
    'aria-label': `Timeline of ${items.length} commands, file changes and network requests` });
  if (!times.length) return chart;
  const t0 = Math.min(...times), t1 = Math.max(...times);
  const span = Math.max(t1 - t0, 1);
  const x = (t) => left + ((t - t0) / span) * (width - left - right);
  const laneTop = (lane) => top + lanes.indexOf(lane) * laneH + 5;
  lanes.forEach((lane, i) => {
    const y = top + i * laneH;
    chart.append(svg('text', { x: 0, y: y + laneH / 2 + 4, text: laneNames[lane] }),
      svg('line', { class: 'axis', x1: left, x2: width - right, y1: y + laneH / 2, y2: y + laneH / 2 }));
  });
  // Where each command of the report's list is drawn, for the lines to the files it changed.
  const commandAt = new Map();
  for (const it of items) {
    if (it.kind === 'command' && it.detail && Number.isInteger(it.detail.command)) commandAt.set(it.detail.command, Date.parse(it.t));
  }
  for (const it of items) {
    const by = it.kind === 'file' && it.detail ? it.detail.command : null;
    const t = Date.parse(it.t);
    if (!Number.isInteger(by) || !commandAt.has(by) || isNaN(t)) continue;
    chart.append(svg('line', { class: 'link', x1: x(commandAt.get(by)), y1: laneTop('command') + laneH - 10,
      x2: x(t), y2: laneTop('file') }));
  }
  for (const it of items) {
    const t = Date.parse(it.t);
    if (isNaN(t) || !lanes.includes(it.kind)) continue;
    const refused = it.kind === 'network' && /refus|denied|blocked/i.test(`${it.text} ${detailText(it.detail)}`);
    // The run's own events in the commands' lane (its start, a pause, its end): hollow, not a command.
    const runEvent = it.kind === 'command' && it.detail && typeof it.detail.type === 'string';
    const mark = svg('rect', { class: `${it.kind}${refused ? ' refused' : ''}${runEvent ? ' event' : ''} mark`, x: x(t) - 2, y: laneTop(it.kind),
      width: 4, height: laneH - 10, rx: 1 });
    const detail = detailText(it.detail);
    mark.append(svg('title', { text: `${fmtTime(it.t)} ${firstLine(it.text)}${detail ? ' — ' + detail : ''}` }));
    chart.append(mark);
  }
  const yAxis = top + lanes.length * laneH + 4;
  chart.append(svg('line', { class: 'axis', x1: left, x2: width - right, y1: yAxis, y2: yAxis }),
    svg('text', { x: left, y: yAxis + 16, text: fmtTime(new Date(t0).toISOString()) }),
    svg('text', { x: width - right, y: yAxis + 16, 'text-anchor': 'end', text: `${fmtTime(new Date(t1).toISOString())} (+${fmtDuration(t1 - t0)})` }));
  return chart;
}

// The report's commands, each with its time and, under it, the files it changed
// (where its session linked them); and its file changes, each with the command
// that made it.
function commandsTable(cmds) {
  return table(['Time', 'Command', 'Folder', 'Exit', 'Status'], cmds.map((c) => {
    const changed = c.files_changed || [];
    return [fmtTime(c.at), [el('code', {}, c.command || ''),
      changed.length ? el('ul', { class: 'changed', 'aria-label': 'Files it changed' },
        changed.map((f) => el('li', {}, 'changed ', el('code', {}, f)))) : null],
    el('code', {}, c.cwd || ''), c.exit_code === null || c.exit_code === undefined ? '' : String(c.exit_code), c.status || ''];
  }), 'commands');
}

function changesTable(changed, cmds) {
  return table(['Time', 'File', 'Action', 'Tool', 'Made by'], changed.map((f) => {
    const by = Number.isInteger(f.command) && cmds[f.command] ? cmds[f.command] : null;
    return [fmtTime(f.at), el('code', {}, f.from ? `${f.from} → ${f.path || ''}` : f.path || ''), f.action || '', f.tool || '',
      by ? el('code', {}, firstLine(by.command)) : ''];
  }), 'changes');
}

// Requests per host as horizontal bars.
function hostsChart(hosts) {
  const rows = [...hosts].sort((a, b) => b.requests - a.requests).slice(0, 30);
  const width = 720, label = 260, barH = 20, gap = 6;
  const height = Math.max(1, rows.length) * (barH + gap) + 4;
  const max = Math.max(1, ...rows.map((h) => h.requests || 0));
  const chart = svg('svg', { class: 'chart hosts', viewBox: `0 0 ${width} ${height}`, role: 'img',
    'aria-label': `Requests per host, ${rows.length} hosts` });
  rows.forEach((h, i) => {
    const y = i * (barH + gap);
    const w = ((h.requests || 0) / max) * (width - label - 50);
    const name = String(h.host);
    chart.append(svg('text', { x: 0, y: y + barH - 6, text: name.length > 38 ? name.slice(0, 37) + '…' : name }),
      svg('rect', { class: 'bar', x: label, y, width: Math.max(w, 1), height: barH, rx: 2 },
        svg('title', { text: `${name}: ${h.requests}` })),
      svg('text', { x: label + w + 6, y: y + barH - 6, text: String(h.requests) }));
  });
  return chart;
}

async function viewReport(id) {
  setView(`Report ${id}`, 'runs', el('h1', {}, 'Report of run ', runLink(id)), el('p', { class: 'muted' }, 'Loading…'));
  let rep;
  try {
    rep = await api('GET', `/api/runs/${encodeURIComponent(id)}/report`);
  } catch (e) {
    showError(e);
    main().lastChild.textContent = '';
    return;
  }
  const run = (rep.runs && rep.runs[0]) || {};
  const act_ = run.activity || {};
  const content = [el('h1', {}, 'Report of run ', runLink(id))];
  for (const p of rep.problems || []) content.push(el('p', { class: 'outside' }, p));
  content.push(el('dl', { class: 'facts' },
    [['Agent', run.agent ? agentLink(run.agent) : 'ad hoc'], ['Command', el('code', {}, commandText(run.command))],
      ['Folder', el('code', {}, run.run_folder || '')], ['Seal', run.seal || ''], ['Network', run.network || ''],
      ['Status', `${run.status || ''}${run.exit_status !== undefined && run.exit_status !== null ? ` (exit ${run.exit_status})` : ''}`],
      ['Duration', fmtDuration(run.duration_ms)]].map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])));

  const timeline = rep.timeline || [];
  content.push(el('h2', {}, 'Timeline'),
    el('div', { class: 'legend' }, el('span', { class: 'command' }, 'command'), el('span', { class: 'file' }, 'file change'),
      el('span', { class: 'network' }, 'network request'), el('span', { class: 'refused' }, 'refused'),
      el('span', { class: 'link' }, 'a command to the files it changed'), el('span', { class: 'event' }, 'the run’s start, pause, end')),
    timelineChart(timeline));
  // A transcript that gives no time for a command or a change: listed below, not on the axis.
  const untimed = (act_.commands || []).filter((c) => !c.at).length + (act_.files_changed || []).filter((f) => !f.at).length;
  if (untimed) content.push(el('p', { class: 'muted' }, `${untimed} command(s) or file change(s) have no time in their transcript: they are in the lists below, not on the timeline.`));
  if (timeline.length) {
    content.push(el('details', {}, el('summary', {}, `The timeline as a list (${timeline.length})`),
      table(['Time', 'Kind', 'What', 'Detail'], timeline.map((i) => [fmtTime(i.t), i.kind, el('code', {}, firstLine(i.text)), detailText(i.detail)]), 'timeline-list')));
  } else {
    content.push(el('p', { class: 'muted' }, 'Nothing on the timeline: no command, file change or network request was recorded.'));
  }

  const hosts = rep.hosts || [];
  content.push(el('h2', {}, 'Requests per host'));
  content.push(hosts.length ? hostsChart(hosts) : el('p', { class: 'muted' }, 'No network requests.'));
  const hh = run.hosts || {};
  const hostRows = [];
  for (const [verdict, list] of [['reached', hh.reached], ['refused', hh.refused], ['failed', hh.failed]]) {
    for (const h of list || []) hostRows.push([el('code', {}, `${h.host}:${h.port}`), verdict, String(h.connections ?? ''), (h.reasons || []).join(', ')]);
  }
  if (hostRows.length) content.push(table(['Host', 'Verdict', 'Connections', 'Why'], hostRows));

  content.push(el('h2', {}, 'Commands'));
  const cmds = act_.commands || [];
  content.push(cmds.length ? commandsTable(cmds) : el('p', { class: 'muted' }, 'No commands in the transcripts.'));

  content.push(el('h2', {}, 'Files changed'));
  const changed = act_.files_changed || [];
  content.push(changed.length ? changesTable(changed, cmds) : el('p', { class: 'muted' }, 'None recorded.'));
  content.push(el('h2', {}, 'Files read'));
  const read = act_.files_read || [];
  content.push(read.length ? el('ul', {}, read.map((f) => el('li', {}, el('code', {}, f)))) : el('p', { class: 'muted' }, 'None recorded.'));

  content.push(el('h2', {}, 'Commits'));
  const commits = run.commits || [];
  content.push(commits.length ? table(['Commit', 'Author', 'Message'],
    commits.map((c) => [el('code', {}, String(c.short_id || c.id || '').slice(0, 12)), (c.author && c.author.name) || '', c.summary || String(c.message || '').split('\n')[0]]))
    : el('p', { class: 'muted' }, 'No commits.'));
  content.push(el('h2', {}, 'Sessions'));
  const sessions = run.sessions || [];
  content.push(sessions.length ? table(['Harness', 'Session', 'Folder'],
    sessions.map((s) => [s.harness || '', el('code', {}, s.session_id || ''), el('code', {}, s.cwd || '')]))
    : el('p', { class: 'muted' }, 'No harness sessions.'));
  if (rep.limits) content.push(el('p', { class: 'muted' }, rep.limits));
  main().replaceChildren(...content);
  document.body.dataset.ready = 'report';
}

// ---------- agents ----------

async function viewAgents() {
  setView('Agents', 'agents', el('h1', {}, 'Agents'), el('p', { class: 'muted' }, 'Loading…'));
  let agents;
  try {
    agents = listOf(await api('GET', '/api/agents'), 'agents');
  } catch (e) { showError(e); return; }
  const form = el('form', { class: 'inline', id: 'new-agent' },
    el('label', {}, 'Name', el('input', { name: 'name', required: true, autocomplete: 'off' })),
    el('label', {}, 'Email its commits use', el('input', { name: 'email', type: 'email', required: true, autocomplete: 'off' })),
    el('button', { type: 'submit' }, 'Make agent'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    act(e.submitter, async () => {
      const name = form.elements.name.value.trim();
      await api('POST', '/api/agents', { name, email: form.elements.email.value.trim() });
      location.hash = `#/agents/${encodeURIComponent(name)}`;
    });
  });
  main().replaceChildren(el('h1', {}, 'Agents'),
    agents.length ? table(['Agent', 'Network', 'Token', 'Email'], agents.map((a) => [
      agentLink(a.name), networkText(a.network), tokenText(a.github_token ?? a.token), a.email || '']), 'agents')
      : el('p', { class: 'muted' }, 'No agents yet.'),
    el('h2', {}, 'A new agent'), form);
  document.body.dataset.ready = 'agents';
}

function networkText(n) {
  if (!n) return '';
  const parts = [n.mode || ''];
  if (n.allow && n.allow.length) parts.push(n.allow.join(', '));
  if (n.local_servers) parts.push(`local servers: ${n.local_servers === true ? 'every port' : n.local_servers}`);
  return parts.join(' · ');
}
// The token's value never reaches the page: only whether there is one.
function tokenText(t) {
  if (t === undefined || t === null || t === 'none' || t === false || t === 'absent') return 'absent';
  return 'present';
}

async function viewAgent(name) {
  const enc = encodeURIComponent(name);
  setView(`Agent ${name}`, 'agents', el('h1', {}, 'Agent ', name), el('p', { class: 'muted' }, 'Loading…'));
  let a;
  try {
    a = await api('GET', `/api/agents/${enc}`);
  } catch (e) { showError(e); main().lastChild.textContent = ''; return; }
  const reload = () => viewAgent(name);

  const grantForm = el('form', { class: 'inline', id: 'grant-form' },
    el('label', {}, 'Folder (absolute path)', el('input', { name: 'path', required: true, placeholder: '/home/you/project', autocomplete: 'off' })),
    el('label', {}, 'Access', el('select', { name: 'mode' },
      el('option', { value: 'ro' }, 'read-only'), el('option', { value: 'rw' }, 'read-write'))),
    el('button', { type: 'submit' }, 'Grant folder'));
  grantForm.addEventListener('submit', (e) => {
    e.preventDefault();
    act(e.submitter, async () => {
      const path = grantForm.elements.path.value.trim();
      await api('POST', `/api/agents/${enc}/grant`, { path, mode: grantForm.elements.mode.value });
      showNotice(`Granted ${path} to ${name}.`);
      await reload();
    });
  });
  const hostForm = el('form', { class: 'inline', id: 'allow-form' },
    el('label', {}, 'Host', el('input', { name: 'host', required: true, placeholder: 'api.example.com', autocomplete: 'off' })),
    el('button', { type: 'submit' }, 'Allow host'));
  hostForm.addEventListener('submit', (e) => {
    e.preventDefault();
    act(e.submitter, async () => {
      const host = hostForm.elements.host.value.trim();
      await api('POST', `/api/agents/${enc}/allow`, { host });
      showNotice(`${name} may now reach ${host}.`);
      await reload();
    });
  });

  const grants = a.grants || [];
  const allow = (a.network && a.network.allow) || [];
  const grantsBox = grants.length ? table(['Folder', 'Access', ''], grants.map((g) => [
    el('code', {}, g.path), (g.access || g.mode) === 'rw' ? 'read-write' : 'read-only',
    el('button', { type: 'button', 'aria-label': `Ungrant ${g.path}`, onclick: (e) => act(e.currentTarget, async () => {
      await api('POST', `/api/agents/${enc}/ungrant`, { path: g.path });
      showNotice(`Took back ${g.path} from ${name}.`);
      await reload();
    }) }, 'Ungrant')]), 'grants') : el('p', { class: 'muted' }, 'No folders granted.');
  const hostsBox = allow.length ? el('ul', { class: 'hosts' }, allow.map((h) => el('li', {}, el('code', {}, h), ' ',
    el('button', { type: 'button', 'aria-label': `Remove ${h}`, onclick: (e) => act(e.currentTarget, async () => {
      await api('POST', `/api/agents/${enc}/disallow`, { host: h });
      showNotice(`${name} may no longer reach ${h}.`);
      await reload();
    }) }, 'Remove')))) : el('p', { class: 'muted' }, 'No hosts allowed.');

  const lastRun = a.last_run || lastRunOf(name);
  const facts = [
    ['Email', a.email || ''], ['Key', el('code', {}, a.key_fingerprint || '')],
    // Nothing to turn on: on Linux every run of an agent is sealed, and only a run
    // started with --unsealed is not (that run's report says so). No switch, then.
    ['Sealed', ['every run (always on: there is no switch); only a run started with ', el('code', {}, '--unsealed'),
      ' (', el('code', {}, `parallex agent run ${name} --unsealed`), ') is not, and its report says so']],
    ['GitHub token', tokenText(a.github_token ?? a.token)],
    ['Network', networkText(a.network)], ['Home', el('code', {}, a.home || '')],
    ['Last run', lastRun ? runLink(typeof lastRun === 'string' ? lastRun : lastRun.id) : 'none'],
  ];
  const snapsBox = el('div', { id: 'snapshots' });
  const snapButton = el('button', { type: 'button', onclick: (e) => act(e.currentTarget, async () => {
    await api('POST', `/api/agents/${enc}/snapshot`);
    showNotice(`Snapshot of ${name} taken.`);
    await drawSnapshots(name, snapsBox);
  }) }, 'Take a snapshot');

  main().replaceChildren(el('h1', {}, 'Agent ', name),
    el('dl', { class: 'facts' }, facts.map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])),
    el('h2', {}, 'Folders it can reach'), grantsBox, grantForm,
    el('h2', {}, 'Hosts it can reach'), hostsBox, hostForm,
    el('h2', {}, 'Snapshots of its home'), el('div', { class: 'actions' }, snapButton), snapsBox);
  document.body.dataset.ready = 'agent';
  drawSnapshots(name, snapsBox);
}

function lastRunOf(name) {
  const runs = [...state.runs.values()].filter((r) => r.agent === name)
    .sort((a, b) => String(runStarted(b) || b.id).localeCompare(String(runStarted(a) || a.id)));
  return runs[0] || null;
}

async function drawSnapshots(name, box) {
  const enc = encodeURIComponent(name);
  let snaps;
  try {
    snaps = listOf(await api('GET', `/api/agents/${enc}/snapshots`), 'snapshots');
  } catch (e) {
    // A server without the snapshot endpoints: say which commands do it.
    if (e.status === 404 || e.status === 405) {
      box.replaceChildren(el('p', { class: 'muted' }, 'This parallex ui does not serve snapshots: ',
        el('code', {}, `parallex agent snapshots ${name}`), ' lists them, ', el('code', {}, `parallex agent rewind ${name}`), ' rewinds.'));
    } else {
      showError(e);
    }
    return;
  }
  const confirmBox = el('div', { id: 'rewind', 'aria-live': 'polite' });
  // A rewind is shown as a dry run first; the real one needs a second, explicit click.
  const rewind = (id) => (e) => act(e.currentTarget, async () => {
    const dry = await api('POST', `/api/agents/${enc}/rewind`, { snapshot: id, dry_run: true });
    const yes = el('button', { type: 'button', class: 'danger', onclick: (ev) => act(ev.currentTarget, async () => {
      const done = await api('POST', `/api/agents/${enc}/rewind`, { snapshot: id, dry_run: false });
      confirmBox.replaceChildren(el('p', {}, `Rewound ${name} to ${id}.`), el('pre', { class: 'result' }, JSON.stringify(done, null, 2)));
      showNotice(`Rewound ${name} to ${id}.`);
      drawSnapshots(name, box);
    }) }, `Rewind ${name} to ${id}`);
    const no = el('button', { type: 'button', onclick: () => confirmBox.replaceChildren() }, 'Cancel');
    confirmBox.replaceChildren(el('h3', {}, `Rewinding to ${id} would do this (dry run):`),
      el('pre', { class: 'result' }, JSON.stringify(dry, null, 2)), el('div', { class: 'actions' }, yes, no));
    yes.focus();
  });
  box.replaceChildren(snaps.length ? table(['Snapshot', 'Time', 'Kind', 'Files', 'Size', ''], snaps.slice().reverse().map((s) => [
    el('code', {}, s.id), s.time || '', s.kind || '', String(s.files ?? ''), fmtBytes(s.bytes),
    el('button', { type: 'button', onclick: rewind(s.id), 'aria-label': `Rewind to ${s.id}` }, 'Rewind…')]), 'snapshots')
    : el('p', { class: 'muted' }, 'No snapshots yet.'), confirmBox);
}

// ---------- routing and the bar ----------

function route() {
  clearMessages();
  delete document.body.dataset.ready;
  const parts = (location.hash.replace(/^#\/?/, '') || 'runs').split('/').map(decodeURIComponent);
  if (parts[0] === 'agents' && parts[1]) return viewAgent(parts[1]);
  if (parts[0] === 'agents') return viewAgents();
  if (parts[0] === 'runs' && parts[1] && parts[2] === 'report') return viewReport(parts[1]);
  if (parts[0] === 'runs' && parts[1]) return viewRun(parts[1]);
  return viewRuns();
}

function allSwitch(what) {
  return (e) => act(e.currentTarget, async () => {
    const res = await api('POST', `/api/${what}`);
    const runs = listOf(res, 'runs');
    const failed = runs.filter((r) => r.ok === false);
    const verb = what === 'pause-all' ? 'Paused' : 'Resumed';
    showNotice(`${verb} ${runs.length - failed.length} run${runs.length - failed.length === 1 ? '' : 's'}.` +
      (res && res.note ? ` ${res.note}.` : ''));
    if (failed.length) showError(failed.map((r) => `${r.id}: ${r.error}`).join('\n'));
    await refreshRuns();
    if (currentView && currentView.onRuns) currentView.onRuns();
  });
}

function start() {
  document.getElementById('pause-all').addEventListener('click', allSwitch('pause-all'));
  document.getElementById('resume-all').addEventListener('click', allSwitch('resume-all'));
  // The skip link focuses the content without touching the address (it names the view).
  document.querySelector('.skip').addEventListener('click', (e) => {
    e.preventDefault();
    document.getElementById('main').focus();
  });
  window.addEventListener('hashchange', route);
  startStream();
  route();
  refreshQuestions();
  // CPU, memory and state change without an event: read the list every 5 s.
  setInterval(() => {
    refreshRuns().then(() => { if (currentView && currentView.onRuns && document.body.dataset.ready === 'runs') currentView.onRuns(); }, () => {});
  }, 5000);
}

document.addEventListener('DOMContentLoaded', start);
