// weir dashboard (spec/dashboard.md): a single page on the REST API of
// spec/rest.md, served with the API. No build step and no dependencies:
// the DOM is built with createElement and text nodes (never from HTML text),
// and the workflow's DAG is an SVG laid out here.
'use strict';

(() => {
  // The API's bearer token lives in this tab's sessionStorage. It arrives
  // in the URL's fragment (#token=...), which the browser never sends to a
  // server, or from the form shown when the API answers 401.
  const TOKEN_KEY = 'weir.token';
  // The open view is read again this often while the tab is visible.
  const POLL_MS = 1500;
  // A workflow's page follows the event stream (spec/events.md) instead:
  // it reads the workflow again on its events, at most every REREAD_MS,
  // and only every CHECK_MS otherwise, to check that no change came
  // without its event (the namespace's events switched off). A change
  // whose event has not come GRACE_MS later means the stream is not
  // live: the page polls again until an event comes. A stream that
  // fails is opened again after RETRY_MS.
  const REREAD_MS = 250;
  const CHECK_MS = 8000;
  const GRACE_MS = 1000;
  const RETRY_MS = 5000;
  const PAGE = 50;

  const WORKFLOW_STATES = ['running', 'completed', 'failed', 'cancelled', 'compensating', 'compensated', 'compensation_failed'];
  const TASK_STATES = ['waiting', 'pending', 'queued', 'open', 'running', 'completed', 'failed', 'cancelled'];
  const JOB_STATES = ['ready', 'delayed', 'running', 'failed', 'cancelled', 'completed'];

  // Routes the page uses when the API has them (read from
  // /v1/openapi.yaml): the inspector's. Their controls stay hidden
  // otherwise.
  const OPTIONAL = {
    listJobs: 'GET /v1/queues/{name}/jobs',
    purgeQueue: 'POST /v1/queues/{name}/purge',
    retryJob: 'POST /v1/jobs/{id}/retry',
    cancelJob: 'POST /v1/jobs/{id}/cancel',
    deleteJob: 'DELETE /v1/jobs/{id}',
    rerunWorkflow: 'POST /v1/workflows/{id}/rerun',
    events: 'GET /v1/events/stream',
    listWorkers: 'GET /v1/workers',
    signalTask: 'POST /v1/workflows/{id}/signals/{task}',
    deleteWorkflow: 'DELETE /v1/workflows/{id}',
    listSchedules: 'GET /v1/schedules',
    pauseSchedule: 'POST /v1/schedules/{name}/pause',
    resumeSchedule: 'POST /v1/schedules/{name}/resume',
    deleteSchedule: 'DELETE /v1/schedules/{name}',
    limitQueue: 'POST /v1/queues/{name}/limit',
    rateQueue: 'POST /v1/queues/{name}/rate',
    keyLimitQueue: 'POST /v1/queues/{name}/key-limit',
    retryJobs: 'POST /v1/queues/{name}/jobs/retry',
    cancelJobs: 'POST /v1/queues/{name}/jobs/cancel',
    deleteJobs: 'POST /v1/queues/{name}/jobs/delete',
    whoami: 'GET /v1/whoami',
  };
  let features = null; // the set of "METHOD /path" of the API, once read
  // canWrite: the token may write (GET /v1/whoami; a server without the
  // route: assumed). Every write control is shown only when it may.
  let canWrite = true;
  // BULK_MAX is the most jobs one bulk call looks at (spec/rest.md).
  const BULK_MAX = 1000;

  // ---- DOM helpers ----------------------------------------------------

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    setAttrs(el, attrs);
    append(el, children);
    return el;
  }

  const SVG_NS = 'http://www.w3.org/2000/svg';
  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVG_NS, tag);
    setAttrs(el, attrs);
    append(el, children);
    return el;
  }

  function setAttrs(el, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }

  function append(el, children) {
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }

  // fill replaces el's children with children, skipping null, undefined
  // and false (which replaceChildren would write as text).
  function fill(el, ...children) {
    el.replaceChildren();
    append(el, children);
  }

  function badge(state) {
    return h('span', { class: 'badge st-' + state, 'data-state': state }, state.replace('_', ' '));
  }

  // fmtTime writes a time with its date, in the browser's zone:
  // 2026-12-06 14:05:33.
  function fmtTime(stamp) {
    if (!stamp) return '';
    const d = new Date(stamp);
    if (isNaN(d)) return String(stamp);
    const p = (n) => String(n).padStart(2, '0');
    return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + ' ' + p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds());
  }

  // progressBar shows a progress report ({percent, message}): a bar, the
  // percent and the message, as the CLI prints it ("75% step 3 of 4").
  function progressBar(p) {
    if (!p) return null;
    const pct = Math.max(0, Math.min(100, Number(p.percent) || 0));
    return h('span', { class: 'progress', 'data-percent': String(p.percent), title: fmtTime(p.at) },
      h('progress', { max: 100, value: pct }), ' ' + (Math.round(pct * 10) / 10) + '%' + (p.message ? ' ' + p.message : ''));
  }

  function fmtValue(v) {
    if (v === null || v === undefined) return '';
    return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
  }

  const enc = encodeURIComponent;

  // v1 is the API path of segments, each escaped whole: an ID or a name
  // is one segment whatever it holds, so a task's job ID "wf/task" is
  // "wf%2Ftask" (spec/rest.md), and an undo's "wf%2Ftask%2Fundo".
  function v1(...segments) {
    return '/v1/' + segments.map(enc).join('/');
  }

  // ---- the API --------------------------------------------------------

  class APIError extends Error {
    constructor(status, body) {
      const msg = body && typeof body === 'object' && body.message ? body.message : 'HTTP ' + status;
      super(msg);
      this.status = status;
      this.code = body && body.code;
    }
  }

  async function api(method, path, body) {
    const headers = { Accept: 'application/json' };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = 'Bearer ' + token;
    const init = { method, headers, credentials: 'omit', cache: 'no-store', redirect: 'error' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    const text = await res.text();
    let answer = null;
    try { answer = text ? JSON.parse(text) : null; } catch (e) { answer = text; }
    if (!res.ok) throw new APIError(res.status, answer);
    return answer;
  }

  // readFeatures lists the API's routes from its OpenAPI document: a path
  // key at two spaces, its methods at four.
  async function readFeatures() {
    const headers = {};
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = 'Bearer ' + token;
    const res = await fetch(v1('openapi.yaml'), { headers, credentials: 'omit', cache: 'no-store' });
    if (res.status === 401) throw new APIError(res.status, null);
    const set = new Set();
    if (!res.ok) { // no document: only the routes every version has
      features = set;
      return;
    }
    let path = null;
    for (const line of (await res.text()).split('\n')) {
      let m = /^ {2}(\/\S*):\s*$/.exec(line);
      if (m) { path = m[1]; continue; }
      if (/^\S/.test(line)) path = null;
      m = /^ {4}(get|post|put|patch|delete):/.exec(line);
      if (m && path) set.add(m[1].toUpperCase() + ' ' + path);
    }
    canWrite = true;
    if (set.has(OPTIONAL.whoami)) {
      const who = await api('GET', v1('whoami'));
      canWrite = who.access === 'write';
    }
    features = set;
  }

  // writable is el when the token may write, else null (not shown).
  function writable(el) {
    return canWrite ? el : null;
  }

  function has(name) {
    return features !== null && features.has(OPTIONAL[name]);
  }

  // ---- routing and polling --------------------------------------------

  function takeToken() {
    const m = /^#token=([^&]*)/.exec(location.hash);
    if (!m) return;
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
    // Leave no token in the address bar or the history.
    history.replaceState(null, '', location.pathname + location.search + '#/');
  }

  function parseRoute() {
    const raw = location.hash.replace(/^#/, '') || '/';
    const [path, query] = raw.split('?', 2);
    const q = new URLSearchParams(query || '');
    let m;
    if (path === '/' || path === '') return { view: 'workflows', state: q.get('state') || '', name: q.get('name') || '', labels: q.getAll('label'), prefix: q.get('id_prefix') || '' };
    if ((m = /^\/workflows\/(.+)$/.exec(path))) return { view: 'workflow', id: decodeURIComponent(m[1]), task: q.get('task') || '' };
    if (path === '/queues') return { view: 'queues' };
    if (path === '/workers') return { view: 'workers' };
    if (path === '/schedules') return { view: 'schedules' };
    if ((m = /^\/jobs\/(.+)$/.exec(path))) return { view: 'job', id: decodeURIComponent(m[1]) };
    if ((m = /^\/queues\/([^/]+)$/.exec(path))) return { view: 'queue', name: decodeURIComponent(m[1]), state: q.get('state') || 'failed' };
    return { view: 'notfound' };
  }

  let generation = 0;
  let timer = null;
  // actionError is the refusal of the last action (cancel, pause...): it
  // stays above the view until the next action or another view.
  let actionError = '';

  function show() {
    generation++;
    clearTimeout(timer);
    stopFeed();
    const route = parseRoute();
    const views = { workflows: workflowsView, workflow: workflowView, queues: queuesView, queue: queueView, workers: workersView, schedules: schedulesView, job: jobView, notfound: notFoundView };
    document.getElementById('nav-workflows').classList.toggle('active', route.view === 'workflows' || route.view === 'workflow');
    document.getElementById('nav-queues').classList.toggle('active', route.view === 'queues' || route.view === 'queue' || route.view === 'job');
    document.getElementById('nav-workers').classList.toggle('active', route.view === 'workers');
    document.getElementById('nav-schedules').classList.toggle('active', route.view === 'schedules');
    const main = document.getElementById('view');
    const v = views[route.view](route);
    fill(main, v.root);
    poll(generation, v.refresh);
  }

  let pollRefresh = null; // the open view's refresh
  let pollBusy = 0;        // the generation whose poll's read is under way

  async function poll(gen, refresh) {
    if (gen !== generation) return;
    pollRefresh = refresh;
    if (!document.hidden) {
      pollBusy = gen;
      try {
        if (features === null) await readFeatures();
        await refresh();
        if (gen !== generation) return;
        setBanner(actionError);
        document.getElementById('status').textContent = 'updated ' + new Date().toLocaleTimeString();
      } catch (e) {
        if (gen !== generation) return;
        if (e instanceof APIError && e.status === 401) {
          askToken(e);
          return; // polling starts again once a token is given
        }
        setBanner(e instanceof APIError ? e.message + (e.code ? ' (' + e.code + ')' : '') : 'the server does not answer: ' + e.message);
      } finally {
        if (pollBusy === gen) pollBusy = 0;
      }
    }
    if (gen === generation) timer = setTimeout(() => poll(gen, refresh), feed && feed.live() ? CHECK_MS : POLL_MS);
  }

  // pollSoon brings the next poll forward to POLL_MS from now: the open
  // view stopped being live.
  function pollSoon() {
    if (pollBusy === generation || pollRefresh === null) return; // the poll under way sets the next one
    clearTimeout(timer);
    const gen = generation, refresh = pollRefresh;
    timer = setTimeout(() => poll(gen, refresh), POLL_MS);
  }

  function refreshNow() {
    show();
  }

  function setBanner(text) {
    const b = document.getElementById('banner');
    b.textContent = text;
    b.hidden = !text;
  }

  // act sends a write, after question is confirmed (when given), with
  // body as JSON (when given); done(answer), when given, is called with
  // the API's answer. A refusal stays in the banner.
  async function act(method, path, question, body, done) {
    if (question && !window.confirm(question)) return;
    try {
      const answer = await api(method, path, body);
      actionError = '';
      if (done) done(answer);
    } catch (e) {
      actionError = method + ' ' + path + ': ' + e.message + (e.code ? ' (' + e.code + ')' : '');
    }
    setBanner(actionError);
    refreshNow();
  }

  // setNotice says what an action did (a bulk call's counts), until the
  // next view.
  function setNotice(text) {
    const n = document.getElementById('notice');
    n.textContent = text;
    n.hidden = !text;
  }

  function askToken(err) {
    stopFeed();
    const had = sessionStorage.getItem(TOKEN_KEY) !== null;
    const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', placeholder: 'WEIR_TOKEN', id: 'token-input' });
    const form = h('form', { class: 'token card', id: 'token-form' },
      h('h1', {}, 'API token'),
      h('p', {}, had ? 'The API refused the token: ' + err.message : 'The API wants its bearer token (WEIR_TOKEN).'),
      h('p', { class: 'muted' }, 'It is kept in this tab only (sessionStorage) and sent to this server only.'),
      input,
      h('button', { type: 'submit' }, 'Use token'));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      features = null;
      show();
    });
    fill(document.getElementById('view'), form);
    setBanner('');
  }

  // ---- live updates -----------------------------------------------------

  let feed = null; // the open view's event feed, when it follows one

  function stopFeed() {
    if (feed) feed.stop();
    feed = null;
    showMode('');
  }

  // showMode shows in the header how the open view keeps up: 'live' (the
  // event stream), 'polling' (with why, in its title), or nothing.
  function showMode(mode, why) {
    const el = document.getElementById('live');
    el.dataset.mode = mode;
    el.hidden = !mode;
    el.textContent = mode === 'live' ? '● live' : mode === 'polling' ? 'polling · not live' : '';
    el.title = why || '';
  }

  // readStream reads Server-Sent Events from path with fetch, which can
  // send the API's Authorization header (EventSource cannot): opened()
  // when the server answers with the stream, event(id) for each event,
  // until the server ends it (resolves) or it fails or signal aborts it
  // (rejects).
  async function readStream(path, signal, opened, event) {
    const headers = { Accept: 'text/event-stream' };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = 'Bearer ' + token;
    const res = await fetch(path, { headers, credentials: 'omit', cache: 'no-store', redirect: 'error', signal });
    if (!res.ok || !(res.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
      let body = null;
      try { body = await res.json(); } catch (e) { body = null; }
      throw new APIError(res.status, body);
    }
    opened();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf = (buf + value).replace(/\r\n?/g, '\n');
      let end;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        let id = null, data = false;
        for (const line of block.split('\n')) {
          if (line.startsWith('id:')) id = line.slice(3).trim();
          else if (line.startsWith('data:')) data = true;
        }
        if (data) event(id); // a line of only a comment is a keep-alive
      }
    }
  }

  // newFeed follows one workflow's events for its page. reread() reads
  // the workflow with read(), which answers whether the workflow changed
  // since its last read; the page's polling calls it, and so does each
  // event (at most every REREAD_MS). A change that no event announced
  // (GRACE_MS later) means the stream is not live: the namespace's
  // events are off. The page then polls again (POLL_MS) and says so,
  // until an event comes.
  function newFeed(workflow, read) {
    let ctl = null;          // aborts the open stream
    let after = '';          // the last event's ID: a new stream resumes after it
    let events = 0;          // the events received
    let eventsAtRead = 0;    // ... when the last read began
    let mode = '';           // 'live' or 'polling'
    let why = 'connecting to the event stream';
    let silent = false;      // a change came without its event
    let started = false, stopped = false;
    let retry = null, grace = null, kick = null;
    let reading = false, dirty = false, lastRead = 0;

    function setMode(m, reason) {
      const was = mode;
      mode = m;
      why = reason || '';
      if (stopped || feed !== self) return;
      showMode(m, why);
      if (was === 'live' && m !== 'live') pollSoon();
    }

    function connect() {
      if (stopped) return;
      if (features !== null && !has('events')) {
        setMode('polling', 'this server has no event stream');
        return;
      }
      const mine = new AbortController();
      ctl = mine;
      const began = Date.now();
      let path = v1('events', 'stream') + '?workflow=' + enc(workflow);
      if (after) path += '&after=' + enc(after);
      readStream(path, mine.signal,
        () => { if (ctl === mine) setMode(silent ? 'polling' : 'live', silent ? why : 'following the event stream'); },
        (id) => { if (ctl === mine) onEvent(id); },
      ).then(() => {
        // the server's time for one stream is up: open the next
        if (ctl !== mine) return;
        ctl = null;
        if (Date.now() - began > 1000) connect();
        else retry = setTimeout(() => { retry = null; connect(); }, RETRY_MS);
      }, (e) => {
        if (ctl !== mine) return;
        ctl = null;
        setMode('polling', 'the event stream failed: ' + e.message);
        if (e instanceof APIError && (e.status === 404 || e.status === 501)) return; // no stream here
        retry = setTimeout(() => { retry = null; connect(); }, RETRY_MS);
      });
    }

    function onEvent(id) {
      if (id) after = id;
      events++;
      if (feed === self) document.getElementById('live').dataset.events = String(events);
      if (silent || mode !== 'live') {
        silent = false;
        setMode('live', 'following the event stream');
      }
      if (reading) {
        dirty = true;
      } else if (kick === null) {
        kick = setTimeout(() => { kick = null; reread().catch(() => {}); }, Math.max(0, lastRead + REREAD_MS - Date.now()));
      }
    }

    async function reread() {
      const start = events, before = eventsAtRead;
      eventsAtRead = start;
      reading = true;
      lastRead = Date.now();
      let changed;
      try {
        changed = await read();
      } finally {
        reading = false;
        if (dirty && !stopped) {
          dirty = false;
          onEventsRead();
        }
      }
      if (stopped) return;
      document.getElementById('status').textContent = 'updated ' + new Date().toLocaleTimeString();
      if (changed && mode === 'live' && start === before && grace === null) {
        // the workflow changed and no event came since the read before
        grace = setTimeout(() => {
          grace = null;
          if (events === start && mode === 'live') {
            silent = true;
            setMode('polling', 'the workflow changed without an event: the namespace\'s events are off');
          }
        }, GRACE_MS);
      }
      if (!started) {
        started = true; // after the first read: the API's routes are known
        connect();
      }
    }

    // onEventsRead rereads for the events that came during a read.
    function onEventsRead() {
      if (kick === null) kick = setTimeout(() => { kick = null; reread().catch(() => {}); }, REREAD_MS);
    }

    const self = {
      reread,
      live: () => mode === 'live',
      stop() {
        stopped = true;
        if (ctl) ctl.abort();
        ctl = null;
        clearTimeout(retry);
        clearTimeout(grace);
        clearTimeout(kick);
      },
    };
    showMode('polling', why);
    return self;
  }

  // ---- views ----------------------------------------------------------
  // Each view returns {root, refresh}: root is put in the page at once,
  // refresh reads the API and fills it, again every POLL_MS (a workflow's
  // page: on its events, see newFeed).

  function workflowsView(route) {
    const select = h('select', { id: 'state-filter', 'aria-label': 'state' },
      h('option', { value: '' }, 'all states'),
      WORKFLOW_STATES.map((st) => h('option', { value: st, selected: st === route.state }, st.replace('_', ' '))));
    // listHash is the list's route with a state, a name prefix, labels
    // (k=v) and an ID prefix, each left out when empty.
    const listHash = (state, name, labels, prefix) => {
      const q = new URLSearchParams();
      if (state) q.set('state', state);
      if (name) q.set('name', name);
      for (const l of labels) q.append('label', l);
      if (prefix) q.set('id_prefix', prefix);
      const qs = q.toString();
      return qs ? '#/?' + qs : '#/';
    };
    select.addEventListener('change', () => { location.hash = listHash(select.value, route.name, route.labels, idPrefix); });
    // the name and label search: words with '=' are labels (k=v, every one
    // must match), the rest is a name prefix; the API filters (?name=&label=)
    const find = h('input', { id: 'name-search', type: 'search', placeholder: 'name prefix, label k=v', 'aria-label': 'name or label',
      value: [route.name, ...route.labels].filter((x) => x).join(' ') });
    const findForm = h('form', { class: 'toolbar', id: 'name-search-form' }, find, h('button', { type: 'submit' }, 'Search'));
    findForm.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const words = find.value.trim().split(/\s+/).filter((x) => x);
      location.hash = listHash(route.state, words.filter((x) => !x.includes('=')).join(' '), words.filter((x) => x.includes('=')), idPrefix);
    });
    const search = h('input', { id: 'search', type: 'search', placeholder: 'workflow ID or its start', 'aria-label': 'workflow ID', value: route.prefix });
    const form = h('form', { class: 'toolbar' }, select, search, h('button', { type: 'submit' }, 'Open'));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const id = search.value.trim();
      if (id) location.hash = '#/workflows/' + enc(id);
    });
    const body = h('div', { id: 'workflows' });
    // what the ID box holds lists the workflows whose ID starts with it,
    // from the first page (?id_prefix=; the address keeps it without a new
    // history entry); Open opens the workflow of that exact ID
    let idPrefix = route.prefix;
    search.addEventListener('input', () => {
      idPrefix = search.value.trim();
      history.replaceState(null, '', listHash(route.state, route.name, route.labels, idPrefix));
      cursors.length = 1;
      refresh();
    });
    const cursors = ['']; // the cursor of each page shown so far
    let calls = 0; // the newest refresh's number: an older reply is dropped
    const pager = h('div', { class: 'toolbar pager' });
    const root = h('section', {}, h('h1', {}, 'Workflows'), form, findForm, body, pager);
    let next = null;

    async function refresh() {
      let path = v1('workflows') + '?limit=' + PAGE;
      if (route.state) path += '&state=' + enc(route.state);
      if (route.name) path += '&name=' + enc(route.name);
      for (const l of route.labels) path += '&label=' + enc(l);
      const call = ++calls;
      if (!/^[A-Za-z0-9_.@-]{0,128}$/.test(idPrefix)) {
        fill(body, h('p', { class: 'muted' }, 'No workflow ID starts with that: an ID is at most 128 of A-Z a-z 0-9 _ . - @.'));
        fill(pager);
        return;
      }
      if (idPrefix) path += '&id_prefix=' + enc(idPrefix);
      const cur = cursors[cursors.length - 1];
      if (cur) path += '&cursor=' + enc(cur);
      const page = await api('GET', path);
      if (call !== calls) return;
      next = page.next_cursor;
      // by ID prefix the API lists in ID order, else newest first
      const [back, on] = idPrefix ? ['← Previous', 'Next →'] : ['← Newer', 'Older →'];
      // a search examines at most 1,000 workflows a call: an empty page
      // with a cursor is not the end (spec/rest.md, Paging)
      fill(body, page.workflows.length === 0 && next
        ? h('p', { class: 'muted' }, 'No match among the workflows searched so far: ' + on + ' searches further.')
        : workflowTable(page.workflows));
      const newer = h('button', { type: 'button', disabled: cursors.length === 1 }, back);
      newer.addEventListener('click', () => { cursors.pop(); refresh(); });
      const older = h('button', { type: 'button', disabled: !next }, on);
      older.addEventListener('click', () => { cursors.push(next); refresh(); });
      if (cursors.length > 1 || next) fill(pager, newer, older);
      else fill(pager);
    }
    return { root, refresh };
  }

  function workflowTable(wfs) {
    if (wfs.length === 0) return h('p', { class: 'muted' }, 'No workflows.');
    return h('table', { id: 'workflow-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'ID'), h('th', {}, 'Name'), h('th', {}, 'State'), h('th', {}, 'Tasks'), h('th', {}, 'Created'), h('th', {}, 'Ended'))),
      h('tbody', {}, wfs.map((wf) => h('tr', { 'data-workflow': wf.id },
        h('td', { class: 'id' }, h('a', { href: '#/workflows/' + enc(wf.id) }, wf.id)),
        h('td', { class: 'wf-name' }, wf.name || '', labelChips(wf.labels)),
        h('td', {}, badge(wf.state)),
        h('td', {}, taskSummary(wf.tasks)),
        h('td', {}, fmtTime(wf.created_at)),
        h('td', {}, fmtTime(wf.ended_at))))));
  }

  // labelChips shows a workflow's labels, key=value by key, each a link to
  // the list of the workflows that carry it.
  function labelChips(labels) {
    const keys = Object.keys(labels || {}).sort();
    if (keys.length === 0) return null;
    return h('span', { class: 'labels' }, keys.map((k) => h('a', { class: 'label', href: '#/?label=' + enc(k + '=' + labels[k]) }, k + '=' + labels[k])));
  }

  function taskSummary(tasks) {
    const counts = {};
    for (const t of tasks) counts[t.state] = (counts[t.state] || 0) + 1;
    const parts = TASK_STATES.filter((st) => counts[st]).map((st) => counts[st] + ' ' + st);
    return (counts.completed || 0) + '/' + tasks.length + ' done' + (parts.length ? ' · ' + parts.join(', ') : '');
  }

  function workflowView(route) {
    const title = h('h1', {}, 'Workflow ', h('span', { class: 'mono' }, route.id));
    const meta = h('div', { class: 'card meta', id: 'workflow-meta' });
    const graph = dagView((name) => select(name));
    const dag = graph.root;
    const table = taskTableView((name) => select(name));
    const tasks = h('div', { id: 'tasks' }, table.root);
    const job = h('div', { id: 'job' });
    const signals = h('div', { id: 'signals' });
    let signalKey = null;
    const root = h('section', {}, title, meta, signals, h('h2', {}, 'Tasks'), dag, tasks, job);
    let selected = route.task;
    let lastState = null;
    let seen = null; // what the events tell of the workflow, at its last read
    let reads = 0;
    feed = newFeed(route.id, refresh);

    function select(name) {
      selected = name;
      history.replaceState(null, '', '#/workflows/' + enc(route.id) + (name ? '?task=' + enc(name) : ''));
      refresh().catch((e) => setBanner(e.message));
    }

    // refresh reads the workflow (read) and keeps track of the reads
    // under way, so that leave can wait for them.
    const under = new Set();
    async function refresh() {
      const r = read();
      under.add(r);
      try { return await r; } finally { under.delete(r); }
    }

    // leave stops the page's reads and waits for those under way: before
    // the workflow is deleted, so that no read of it comes after.
    async function leave() {
      stopFeed();
      generation++;
      clearTimeout(timer);
      await Promise.all([...under].map((r) => r.catch(() => {})));
    }

    // read reads the workflow and draws it; it answers whether what
    // the events tell of (its state, its tasks' states and attempts)
    // changed since the last read.
    async function read() {
      const my = ++reads;
      const wf = await api('GET', v1('workflows', route.id));
      if (my !== reads) return false; // a later read draws
      const now = wf.state + ' ' + wf.tasks.map((t) => t.state + ':' + t.attempts + (t.undo ? ':' + (t.undo.state || '') + ':' + (t.undo.attempts || 0) : '')).join(' ');
      const changed = seen !== null && now !== seen;
      seen = now;
      // an ended workflow with a failed or cancelled task, not
      // compensated, may have its failed part re-run
      const rerunnable = has('rerunWorkflow') && ['failed', 'cancelled', 'completed'].includes(wf.state) &&
        wf.tasks.some((t) => t.state === 'failed' || t.state === 'cancelled');
      const key = wf.state + (wf.cancel_requested ? '+cancel' : '') + (rerunnable ? '+rerun' : '') + ':' + (wf.run || 1);
      if (key !== lastState) {
        lastState = key;
        const cancel = canWrite && wf.state === 'running' && !wf.cancel_requested
          ? h('button', { type: 'button', class: 'danger', id: 'cancel-workflow', onclick: () => act('POST', v1('workflows', wf.id, 'cancel'), 'Cancel workflow ' + wf.id + '?') }, 'Cancel')
          : null;
        const rerun = canWrite && rerunnable
          ? h('button', { type: 'button', id: 'rerun-workflow', onclick: () => act('POST', v1('workflows', wf.id, 'rerun'), 'Re-run the failed and cancelled tasks of workflow ' + wf.id + ' (and what comes after them)?') }, 'Re-run')
          : null;
        fill(title, 'Workflow ', h('span', { class: 'mono' }, wf.id), badge(wf.state), cancel, rerun, deleteWorkflowButton(wf, leave));
      }
      fill(meta,
        wf.name ? h('span', { id: 'workflow-name' }, h('b', {}, 'name'), wf.name) : null,
        Object.keys(wf.labels || {}).length ? h('span', { id: 'workflow-labels' }, h('b', {}, 'labels'), labelChips(wf.labels)) : null,
        h('span', {}, h('b', {}, 'created'), fmtTime(wf.created_at)),
        wf.ended_at ? h('span', {}, h('b', {}, 'ended'), fmtTime(wf.ended_at)) : null,
        wf.reason ? h('span', {}, h('b', {}, 'reason'), wf.reason) : null,
        wf.run > 1 ? h('span', { id: 'workflow-run' }, h('b', {}, 'run'), String(wf.run)) : null,
        h('span', {}, h('b', {}, 'tasks'), taskSummary(wf.tasks)),
        wf.fail_fast ? h('span', {}, 'fail fast') : null,
        wf.undo_on_cancel ? h('span', {}, 'undo on cancel') : null,
        wf.cancel_requested ? h('span', { class: 'cancel-requested' }, 'cancel requested') : null);
      const open = wf.tasks.filter((t) => t.signal && t.state === 'open').map((t) => t.name);
      if (open.join(' ') !== signalKey) { // drawn again only when they change: typing stays
        signalKey = open.join(' ');
        fill(signals, signalForms(wf.id, open));
      }
      graph.update(wf.tasks, selected);
      table.update(wf);
      if (selected && wf.tasks.some((t) => t.name === selected)) {
        const t = wf.tasks.find((x) => x.name === selected);
        const id = wf.id + '/' + selected;
        fill(job, await jobCard(id), t.undo && t.undo.state ? await jobCard(id + '/undo') : '');
      } else {
        fill(job);
      }
      return changed;
    }
    const f = feed;
    return { root, refresh: () => f.reread() };
  }

  function taskTable(wf, select) {
    return h('table', { id: 'task-table' },
      h('thead', {}, h('tr', {}, ['Task', 'Queue', 'State', 'Attempts', 'After', 'Undo', 'Error or result'].map((c) => h('th', { class: c === 'Attempts' ? 'num' : null }, c)))),
      h('tbody', {}, wf.tasks.map((t) => taskRow(t, select))));
  }

  function taskRow(t, select) {
    return h('tr', { 'data-task': t.name },
      h('td', { class: 'mono' }, h('a', { href: '#', onclick: (ev) => { ev.preventDefault(); select(t.name); } }, t.name),
        t.added_by ? h('span', { class: 'muted', title: 'added at run time by ' + t.added_by }, ' +' + t.added_by) : null),
      h('td', {}, t.queue),
      h('td', {}, badge(t.state), t.progress ? [' ', progressBar(t.progress)] : null),
      h('td', { class: 'num' }, t.attempts),
      h('td', { class: 'mono' }, t.on_failure ? h('span', { class: 'on-failure', title: 'runs only when one of these did not complete' }, 'on failure of ' + t.after.join(', ')) : t.after.join(', ')),
      h('td', {}, t.undo ? (t.undo.state ? [badge(t.undo.state), t.undo.attempts > 1 ? ' ×' + t.undo.attempts : ''] : h('span', { class: 'muted' }, 'not started')) : ''),
      h('td', {}, t.error ? h('pre', { class: 'error-text' }, t.error) : null,
        t.undo && t.undo.error ? h('pre', { class: 'error-text' }, 'undo: ' + t.undo.error) : null,
        t.result !== null && t.result !== undefined ? h('pre', {}, fmtValue(t.result)) : null));
  }

  // taskTableView is a workflow's task table that update(wf) keeps: the
  // rows of the tasks that changed are drawn again, the others stay (the
  // whole table only when the plan's tasks changed). A workflow of more
  // than COLLAPSE_AT tasks shows them a page of COLLAPSE_AT rows at a time.
  function taskTableView(select) {
    const body = h('div', {});
    const pager = h('div', { class: 'toolbar pager', id: 'task-pager' });
    const root = h('div', {}, body, pager);
    let names = null, page = 0, last = null;
    let rows = new Map(); // task name -> {tr, sig}
    function turn(by) {
      page += by;
      if (last) update(last);
    }
    function update(wf) {
      last = wf;
      const many = wf.tasks.length > COLLAPSE_AT;
      const pages = Math.ceil(wf.tasks.length / COLLAPSE_AT);
      page = many ? Math.min(Math.max(0, page), pages - 1) : 0;
      const shown = many ? wf.tasks.slice(page * COLLAPSE_AT, (page + 1) * COLLAPSE_AT) : wf.tasks;
      const now = page + ':' + shown.map((t) => t.name).join('\n');
      if (now !== names) {
        names = now;
        rows = new Map();
        const table = taskTable({ tasks: shown }, select);
        for (const tr of table.querySelectorAll('tbody tr')) rows.set(tr.dataset.task, { tr, sig: null });
        for (const t of shown) rows.get(t.name).sig = JSON.stringify(t);
        fill(body, table);
        if (many) {
          fill(pager,
            h('button', { type: 'button', id: 'task-page-prev', disabled: page === 0, onclick: () => turn(-1) }, '←'),
            h('span', { class: 'muted' }, 'tasks ' + (page * COLLAPSE_AT + 1) + '–' + (page * COLLAPSE_AT + shown.length) + ' of ' + wf.tasks.length),
            h('button', { type: 'button', id: 'task-page-next', disabled: page === pages - 1, onclick: () => turn(1) }, '→'));
        } else {
          fill(pager);
        }
        return;
      }
      for (const t of shown) {
        const r = rows.get(t.name);
        const sig = JSON.stringify(t);
        if (r.sig === sig) continue;
        const tr = taskRow(t, select);
        r.tr.replaceWith(tr);
        r.tr = tr;
        r.sig = sig;
      }
    }
    return { root, update };
  }

  async function jobCard(id) {
    let j;
    try {
      j = await api('GET', v1('jobs', id));
    } catch (e) {
      if (e instanceof APIError && e.status === 404) {
        return h('div', { class: 'card' }, h('h2', {}, 'Job ', h('span', { class: 'mono' }, id)), h('p', { class: 'muted' }, 'No job yet: the task has not been queued.'));
      }
      throw e;
    }
    const rows = [
      ['state', badge(j.state)],
      ['cancel', j.cancel_requested ? h('span', { class: 'cancel-requested' }, 'requested: the worker is told to stop') : ''],
      ['queue', j.queue], ['attempts', j.attempts + ' of ' + j.max_attempts], ['progress', j.progress ? progressBar(j.progress) : ''],
      ['worker', j.worker ? h('span', { class: 'mono' }, j.worker) : ''],
      ['priority', j.priority], ['created', fmtTime(j.created_at)], ['run at', fmtTime(j.run_at)],
      ['lease until', fmtTime(j.lease_deadline)], ['ended', fmtTime(j.ended_at)], ['expires', fmtTime(j.expires_at)],
      ['payload', j.payload !== null ? h('pre', {}, fmtValue(j.payload)) : ''],
      ['result', j.result !== null ? h('pre', {}, fmtValue(j.result)) : ''],
      ['error', j.error ? h('pre', { class: 'error-text' }, j.error) : ''],
    ].filter(([, v]) => v !== '' && v !== null);
    return h('div', { class: 'card job-card', 'data-job': j.id },
      h('h2', {}, j.undo ? 'Undo job ' : 'Job ', h('span', { class: 'mono' }, j.id), ' ', jobActions(j)),
      h('table', {}, h('tbody', {}, rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v))))),
      attemptHistory(j.attempt_history || []));
  }

  // attemptHistory is a job card's table of its last attempts, oldest
  // first (spec/states.md, Attempt history); nothing before the first.
  function attemptHistory(as) {
    if (as.length === 0) return null;
    return h('table', { class: 'attempt-history' },
      h('thead', {}, h('tr', {}, ['#', 'worker', 'started', 'took', 'outcome', 'error'].map((c) => h('th', {}, c)))),
      h('tbody', {}, as.map((a) => h('tr', { 'data-outcome': a.outcome || 'running' },
        h('td', { class: 'num' }, a.attempt), h('td', { class: 'mono' }, a.worker || ''), h('td', {}, fmtTime(a.started_at)),
        h('td', { class: 'num' }, a.duration_ms === null ? '' : (a.duration_ms / 1000).toFixed(3) + ' s'),
        h('td', {}, a.outcome ? badge(a.outcome) : badge('running')),
        h('td', {}, a.error ? h('pre', { class: 'error-text' }, a.error) : null)))));
  }

  // jobActions are the inspector's actions on one job that the store
  // takes for its kind and state (spec/states.md), each shown only when
  // the API has its route: Cancel job on any job that has not ended (a
  // plain, task or undo job; a running one is told to stop) and whose
  // cancel is not requested yet; Retry and Delete on a plain job that
  // ended (Retry: failed or cancelled), never on a task's or an undo's
  // (they run again with their workflow's Re-run, and go with it).
  function jobActions(j) {
    if (!canWrite) return h('span', { class: 'toolbar' });
    const ended = ['completed', 'failed', 'cancelled'].includes(j.state);
    const plain = !j.workflow;
    return h('span', { class: 'toolbar' },
      has('retryJob') && plain && (j.state === 'failed' || j.state === 'cancelled')
        ? h('button', { type: 'button', class: 'retry-job', onclick: () => act('POST', v1('jobs', j.id, 'retry'), 'Retry job ' + j.id + '?') }, 'Retry') : null,
      has('cancelJob') && !ended && !j.cancel_requested
        ? h('button', { type: 'button', class: 'danger cancel-job', onclick: () => act('POST', v1('jobs', j.id, 'cancel'), 'Cancel job ' + j.id + '?') }, 'Cancel job') : null,
      has('deleteJob') && plain && ended
        ? h('button', { type: 'button', class: 'danger delete-job', onclick: () => act('DELETE', v1('jobs', j.id), 'Delete job ' + j.id + '?') }, 'Delete') : null);
  }

  function queuesView() {
    const body = h('div', { id: 'queues' });
    const root = h('section', {}, h('h1', {}, 'Queues'), body);
    async function refresh() {
      const { queues } = await api('GET', v1('queues'));
      if (queues.length === 0) {
        fill(body, h('p', { class: 'muted' }, 'No queues yet.'));
        return;
      }
      fill(body, h('table', { id: 'queue-table' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Queue'), h('th', {}, 'State'), h('th', { class: 'num' }, 'Ready'), h('th', { class: 'num' }, 'Delayed'), h('th', { class: 'num' }, 'Running'), h('th', { class: 'num' }, 'Limit'), h('th', { class: 'num' }, 'Rate'), h('th', { class: 'num', title: 'the most jobs of one concurrency key running at once' }, 'Key limit'), h('th', {}, ''))),
        h('tbody', {}, queues.map((q) => h('tr', { 'data-queue': q.name, 'data-paused': String(q.paused) },
          h('td', { class: 'mono' }, has('listJobs') ? h('a', { href: '#/queues/' + enc(q.name) }, q.name) : q.name),
          h('td', {}, badge(q.paused ? 'paused' : 'active')),
          h('td', { class: 'num' }, q.ready), h('td', { class: 'num' }, q.delayed), h('td', { class: 'num' }, q.running),
          h('td', { class: 'num', 'data-limit': String(q.concurrency || 0) }, q.concurrency ? String(q.concurrency) : '—'),
          h('td', { class: 'num', 'data-rate': q.rate_limit ? q.rate_limit + '/' + q.rate_period_ms : '0' }, q.rate_limit ? q.rate_limit + ' / ' + q.rate_period_ms + ' ms' : '—'),
          h('td', { class: 'num', 'data-key-limit': String(q.key_concurrency || 0) }, q.key_concurrency ? String(q.key_concurrency) : '—'),
          h('td', {}, writable(h('span', { class: 'toolbar actions' },
            q.paused
              ? h('button', { type: 'button', class: 'resume', onclick: () => act('POST', v1('queues', q.name, 'resume')) }, 'Resume')
              : h('button', { type: 'button', class: 'pause', onclick: () => act('POST', v1('queues', q.name, 'pause')) }, 'Pause'),
            has('purgeQueue')
              ? h('button', { type: 'button', class: 'danger purge', onclick: () => act('POST', v1('queues', q.name, 'purge'), 'Purge the ready and delayed jobs of queue ' + q.name + '?') }, 'Purge')
              : null))))))));
    }
    return { root, refresh };
  }

  // queueView lists a queue's jobs in one state: the inspector's route
  // (OPTIONAL.listJobs), answering {"jobs": [job], "next_cursor"}. Above
  // them: the queue's limits, each changed by its route, and the bulk
  // actions on the list's jobs or the ones ticked (one call each, at
  // most BULK_MAX jobs, spec/rest.md "Many jobs of a queue"). The ID box
  // keeps the rows whose ID starts with what it holds (of the page shown:
  // the API lists no prefix).
  function queueView(route) {
    const select = h('select', { id: 'job-state', 'aria-label': 'state' },
      JOB_STATES.map((st) => h('option', { value: st, selected: st === route.state }, st)));
    select.addEventListener('change', () => { location.hash = '#/queues/' + enc(route.name) + '?state=' + enc(select.value); });
    const prefix = h('input', { id: 'job-prefix', type: 'search', placeholder: 'job ID starts with', 'aria-label': 'job ID prefix' });
    // Enter opens the job of that exact ID, whichever list it is in
    prefix.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && prefix.value.trim()) location.hash = '#/jobs/' + enc(prefix.value.trim()); });
    const body = h('div', { id: 'jobs' });
    const limits = h('div', { id: 'queue-limits', class: 'card' });
    const bulk = h('div', { class: 'toolbar', id: 'bulk' });
    const root = h('section', {}, h('h1', {}, 'Queue ', h('span', { class: 'mono' }, route.name)), limits, h('div', { class: 'toolbar' }, select, prefix), bulk, body);
    const selected = new Set(); // the IDs ticked
    let jobs = [];
    let formDrawn = false;
    const name = route.name;
    const qpath = (...rest) => v1('queues', name, ...rest);
    const bulkAction = { retry: ['failed', 'cancelled'], cancel: ['ready', 'delayed', 'running'], delete: ['failed', 'cancelled', 'completed'] };
    const bulkDone = { retry: 'retried', cancel: 'cancelled', delete: 'deleted' };
    const bulkRoute = { retry: 'retryJobs', cancel: 'cancelJobs', delete: 'deleteJobs' };

    function bulkCall(verb, body, question) {
      act('POST', qpath('jobs', verb), question, body, (r) => {
        selected.clear();
        setNotice(r.done.length + ' job(s) ' + bulkDone[verb] + (r.skipped.length ? ', ' + r.skipped.length + ' skipped (' +
          r.skipped.slice(0, 3).map((x) => x.id + ': ' + x.message).join('; ') + (r.skipped.length > 3 ? '; …' : '') + ')' : '') +
          (r.more ? '; more remain: click again' : ''));
      });
    }

    function drawBulk() {
      if (!canWrite) { fill(bulk); return; }
      const btns = [];
      for (const verb of ['retry', 'cancel', 'delete']) {
        if (!has(bulkRoute[verb]) || !bulkAction[verb].includes(route.state)) continue;
        const label = verb[0].toUpperCase() + verb.slice(1);
        btns.push(h('button', { type: 'button', class: (verb === 'retry' ? '' : 'danger ') + 'bulk-' + verb + '-all',
          onclick: () => bulkCall(verb, { state: route.state, limit: BULK_MAX }, label + ' the ' + route.state + ' jobs of queue ' + name + ' (at most ' + BULK_MAX + ')?') },
        label + ' all ' + route.state));
        btns.push(h('button', { type: 'button', class: (verb === 'retry' ? '' : 'danger ') + 'bulk-' + verb + '-selected', disabled: selected.size === 0,
          onclick: () => bulkCall(verb, { ids: [...selected] }, label + ' ' + selected.size + ' job(s) of queue ' + name + '?') },
        label + ' selected (' + selected.size + ')'));
      }
      fill(bulk, btns);
    }

    function drawLimits(q) {
      const rate = q && q.rate_limit ? q.rate_limit + ' per ' + q.rate_period_ms + ' ms' : 'none';
      const line = h('p', { id: 'limits-now', 'data-limit': String(q ? q.concurrency || 0 : 0), 'data-rate': q && q.rate_limit ? q.rate_limit + '/' + q.rate_period_ms : '0', 'data-key-limit': String(q ? q.key_concurrency || 0 : 0) },
        h('b', {}, 'limit '), q && q.concurrency ? String(q.concurrency) + ' running' : 'none', ' · ',
        h('b', {}, 'rate '), rate, ' · ', h('b', {}, 'key limit '), q && q.key_concurrency ? String(q.key_concurrency) + ' running per key' : 'none');
      if (formDrawn) { limits.replaceChild(line, limits.firstChild); return; }
      formDrawn = true;
      const num = (id, label, value) => h('input', { id, type: 'number', min: 0, step: 1, 'aria-label': label, placeholder: label, value: String(value || 0) });
      const form = [];
      if (canWrite && has('limitQueue')) {
        const n = num('limit-input', 'concurrency limit', q && q.concurrency);
        form.push(h('span', { class: 'toolbar' }, 'at most', n, 'running',
          h('button', { type: 'button', class: 'set-limit', onclick: () => act('POST', qpath('limit') + '?concurrency=' + enc(n.value.trim() || '0')) }, 'Set limit')));
      }
      if (canWrite && has('rateQueue')) {
        const n = num('rate-input', 'rate limit', q && q.rate_limit);
        const per = num('rate-period-input', 'period in ms', q && q.rate_period_ms ? q.rate_period_ms : 1000);
        form.push(h('span', { class: 'toolbar' }, 'at most', n, 'starts per', per, 'ms',
          h('button', { type: 'button', class: 'set-rate', onclick: () => {
            const lim = n.value.trim() || '0';
            act('POST', qpath('rate') + '?limit=' + enc(lim) + (lim !== '0' ? '&period_ms=' + enc(per.value.trim()) : ''));
          } }, 'Set rate')));
      }
      if (canWrite && has('keyLimitQueue')) {
        const n = num('key-limit-input', 'per-key limit', q && q.key_concurrency);
        form.push(h('span', { class: 'toolbar' }, 'at most', n, 'running per key',
          h('button', { type: 'button', class: 'set-key-limit', onclick: () => act('POST', qpath('key-limit') + '?concurrency=' + enc(n.value.trim() || '0')) }, 'Set key limit')));
      }
      fill(limits, line, form.length ? h('div', { class: 'limit-form' }, form, h('span', { class: 'muted' }, '0: no limit')) : null);
    }

    function drawJobs() {
      const p = prefix.value.trim();
      const shown = p ? jobs.filter((j) => j.id.startsWith(p)) : jobs;
      if (shown.length === 0) {
        fill(body, h('p', { class: 'muted' }, jobs.length ? 'No ' + route.state + ' job of this page starts with ' + p + '.' : 'No ' + route.state + ' jobs.'));
        return;
      }
      const tick = (j) => {
        const box = h('input', { type: 'checkbox', class: 'select-job', 'data-job': j.id, 'aria-label': 'select ' + j.id, checked: selected.has(j.id) });
        box.addEventListener('change', () => { if (box.checked) selected.add(j.id); else selected.delete(j.id); drawBulk(); });
        return box;
      };
      fill(body, h('table', { id: 'job-table' },
        h('thead', {}, h('tr', {}, [canWrite ? '' : null, 'Job', 'State', 'Attempts', 'Progress', 'Created', 'Error', ''].filter((c) => c !== null).map((c) => h('th', {}, c)))),
        h('tbody', {}, shown.map((j) => h('tr', { 'data-job': j.id },
          canWrite ? h('td', {}, tick(j)) : null,
          h('td', { class: 'mono' }, j.workflow ? h('a', { href: '#/workflows/' + enc(j.workflow) + (j.task ? '?task=' + enc(j.task) : '') }, j.id) : j.id),
          h('td', {}, badge(j.state)),
          h('td', { class: 'num' }, j.attempts),
          h('td', {}, progressBar(j.progress)),
          h('td', {}, fmtTime(j.created_at)),
          h('td', {}, j.error ? h('pre', { class: 'error-text' }, j.error) : ''),
          h('td', {}, jobActions(j)))))));
    }
    prefix.addEventListener('input', drawJobs);

    async function refresh() {
      const { queues } = await api('GET', v1('queues'));
      drawLimits(queues.find((q) => q.name === name));
      if (!has('listJobs')) {
        fill(body, h('p', { class: 'muted' }, 'This server cannot list jobs.'));
        return;
      }
      const page = await api('GET', qpath('jobs') + '?state=' + enc(route.state) + '&limit=' + PAGE);
      jobs = page.jobs || [];
      const ids = new Set(jobs.map((j) => j.id));
      for (const id of [...selected]) if (!ids.has(id)) selected.delete(id);
      drawBulk();
      drawJobs();
    }
    return { root, refresh };
  }

  // jobView shows one job by its ID (GET /v1/jobs/{id}): its card, with
  // its actions; a task's job links to its workflow's page.
  function jobView(route) {
    const body = h('div', { id: 'job' });
    const root = h('section', {}, h('h1', {}, 'Job ', h('span', { class: 'mono' }, route.id)), body);
    async function refresh() {
      const [wf, task] = route.id.split('/', 2);
      try {
        await api('GET', v1('jobs', route.id));
      } catch (e) {
        if (!(e instanceof APIError && e.status === 404)) throw e;
        fill(body, h('p', { class: 'muted' }, 'No job has the ID ' + route.id + '.'));
        return;
      }
      fill(body, await jobCard(route.id),
        task !== undefined ? h('p', {}, h('a', { href: '#/workflows/' + enc(wf) + '?task=' + enc(task) }, 'its workflow ' + wf)) : null);
    }
    return { root, refresh };
  }

  // schedulesView lists the schedules (GET /v1/schedules, spec/rest.md
  // Schedules) with Pause, Resume and Remove.
  function schedulesView() {
    const body = h('div', { id: 'schedules' });
    const root = h('section', {}, h('h1', {}, 'Schedules'), body);
    async function refresh() {
      if (!has('listSchedules')) {
        fill(body, h('p', { class: 'muted' }, 'This server has no schedules.'));
        return;
      }
      let list;
      try {
        list = (await api('GET', v1('schedules'))).schedules;
      } catch (e) {
        if (e instanceof APIError && e.status === 501) {
          fill(body, h('p', { class: 'muted' }, 'This store has no schedules.'));
          return;
        }
        throw e;
      }
      if (list.length === 0) {
        fill(body, h('p', { class: 'muted' }, 'No schedules.'));
        return;
      }
      fill(body, h('table', { id: 'schedule-table' },
        h('thead', {}, h('tr', {}, ['Schedule', 'State', 'When', 'Starts', 'Next', 'Last tick', 'Last started', ''].map((c) => h('th', {}, c)))),
        h('tbody', {}, list.map((sc) => h('tr', { 'data-schedule': sc.name, 'data-paused': String(sc.paused) },
          h('td', { class: 'mono' }, sc.name),
          h('td', {}, badge(sc.paused ? 'paused' : 'active')),
          h('td', { class: 'mono' }, sc.cron ? sc.cron + (sc.tz ? ' (' + sc.tz + ')' : '') : 'every ' + sc.every),
          h('td', {}, sc.job ? 'a job on ' + sc.job.queue : 'a workflow: ' + (sc.tasks || []).join(', ')),
          h('td', {}, sc.paused ? '' : fmtTime(sc.next)),
          h('td', {}, fmtTime(sc.last_tick)),
          h('td', { class: 'mono' }, sc.last_id ? (sc.job ? sc.last_id : h('a', { href: '#/workflows/' + enc(sc.last_id) }, sc.last_id)) : ''),
          h('td', {}, writable(h('span', { class: 'toolbar actions' },
            sc.paused
              ? (has('resumeSchedule') ? h('button', { type: 'button', class: 'resume-schedule', onclick: () => act('POST', v1('schedules', sc.name, 'resume')) }, 'Resume') : null)
              : (has('pauseSchedule') ? h('button', { type: 'button', class: 'pause-schedule', onclick: () => act('POST', v1('schedules', sc.name, 'pause')) }, 'Pause') : null),
            has('deleteSchedule') ? h('button', { type: 'button', class: 'danger delete-schedule', onclick: () => act('DELETE', v1('schedules', sc.name), 'Remove schedule ' + sc.name + '? (The jobs and workflows it started stay.)') }, 'Remove') : null))))))));
    }
    return { root, refresh };
  }

  // signalForms are the forms that signal each open signal task of a
  // workflow (POST /v1/workflows/{id}/signals/{task}): a value (JSON, or
  // else taken as a string; empty: null) completes it, a reason fails it.
  function signalForms(id, open) {
    if (open.length === 0 || !has('signalTask')) return null;
    if (!canWrite) return h('div', { class: 'card' }, h('h2', {}, 'Signals'), h('p', { class: 'muted' }, 'Open, waiting for a signal: ' + open.join(', ') + ' (this token may only read).'));
    return h('div', { class: 'card signals' }, h('h2', {}, 'Signals'), open.map((task) => {
      const value = h('input', { type: 'text', class: 'signal-value-input', placeholder: 'value: JSON, or text', 'aria-label': 'value for ' + task });
      const reason = h('input', { type: 'text', class: 'signal-reason-input', placeholder: 'reason', 'aria-label': 'reason to fail ' + task });
      const path = v1('workflows', id, 'signals', task);
      const send = () => {
        const text = value.value.trim();
        let v = null;
        if (text) { try { v = JSON.parse(text); } catch (e) { v = text; } }
        act('POST', path, null, { value: v });
      };
      const fail = () => {
        const why = reason.value.trim();
        if (!why) { actionError = 'give a reason to fail ' + task; setBanner(actionError); return; }
        act('POST', path, 'Fail task ' + task + ' of ' + id + '?', { fail: why });
      };
      return h('div', { class: 'toolbar signal', 'data-task': task },
        h('span', { class: 'mono' }, task), badge('open'), value,
        h('button', { type: 'button', class: 'signal-value', onclick: send }, 'Send value'), reason,
        h('button', { type: 'button', class: 'danger signal-fail', onclick: fail }, 'Fail'));
    }));
  }

  // deleteWorkflowButton deletes an ended workflow with its jobs
  // (DELETE /v1/workflows/{id}), once its page's reads ended (leave),
  // then shows the list.
  function deleteWorkflowButton(wf, leave) {
    if (!canWrite || !has('deleteWorkflow') || wf.state === 'running' || wf.state === 'compensating') return null;
    return h('button', { type: 'button', class: 'danger', id: 'delete-workflow',
      onclick: async () => {
        if (!window.confirm('Delete workflow ' + wf.id + ' and its jobs?')) return;
        await leave();
        act('DELETE', v1('workflows', wf.id), null, undefined, () => { location.hash = '#/'; });
      } }, 'Delete');
  }

  // workersView lists the live worker processes (GET /v1/workers,
  // spec/rest.md Workers): one row a worker, gone once it stopped or its
  // lease from its last heartbeat passed. Ages are by the store's clock
  // (the reply's now), not the browser's.
  function workersView() {
    const body = h('div', { id: 'workers' });
    const root = h('section', {}, h('h1', {}, 'Workers'), body);
    const ago = (now, stamp) => stamp && now ? Math.max(0, (Date.parse(now) - Date.parse(stamp)) / 1000).toFixed(1) + ' s ago' : '';
    const jobLink = (id) => {
      const [wf, task] = id.split('/', 2);
      return task !== undefined ? h('a', { href: '#/workflows/' + enc(wf) + '?task=' + enc(task), 'data-job': id }, id) : h('span', { 'data-job': id }, id);
    };
    async function refresh() {
      if (!has('listWorkers')) {
        fill(body, h('p', { class: 'muted' }, 'This server cannot list workers.'));
        return;
      }
      const { workers, total, now } = await api('GET', v1('workers'));
      if (workers.length === 0) {
        fill(body, h('p', { class: 'muted' }, 'No worker is running.'));
        return;
      }
      fill(body, h('table', { id: 'worker-table' },
        h('thead', {}, h('tr', {}, ['Worker', 'Host', 'PID', 'Queues', 'Running', 'Jobs', 'Started', 'Last heartbeat', 'Leaves by', 'Version'].map((c) => h('th', {}, c)))),
        h('tbody', {}, workers.map((w) => h('tr', { 'data-worker': w.id, 'data-pid': String(w.pid), 'data-running': String(w.running) },
          h('td', { class: 'mono' }, w.id),
          h('td', {}, w.host),
          h('td', { class: 'num' }, w.pid),
          h('td', { class: 'mono queues' }, w.queues.map((q) => q.name + (q.weight !== 1 ? ' ×' + q.weight : '')).join(', ') + (w.strict_priority ? ' (strict)' : '')),
          h('td', { class: 'num' }, w.running + ' / ' + w.concurrency),
          h('td', { class: 'mono jobs' }, w.running_jobs.flatMap((id, i) => (i ? [' ', jobLink(id)] : [jobLink(id)])),
            w.running > w.running_jobs.length ? ' +' + (w.running - w.running_jobs.length) + ' more' : ''),
          h('td', {}, fmtTime(w.started)),
          h('td', { title: fmtTime(w.last_heartbeat) }, ago(now, w.last_heartbeat)),
          h('td', { 'data-expires': w.expires }, fmtTime(w.expires)),
          h('td', { class: 'mono' }, w.version))))),
        total > workers.length ? h('p', { class: 'muted' }, (total - workers.length) + ' more workers are running (the list holds ' + workers.length + ').') : null);
    }
    return { root, refresh };
  }

  function notFoundView() {
    return { root: h('p', {}, 'No such page. ', h('a', { href: '#/' }, 'Workflows')), refresh: async () => {} };
  }

  // ---- the DAG --------------------------------------------------------

  const NODE_W = 176, NODE_H = 44, UNDO_H = 18, GAP_X = 56, GAP_Y = 18, PAD = 12;

  // layout places each task in a layer (the longest path of dependencies
  // before it) and orders each layer by the mean position of the tasks it
  // depends on, so that edges cross less.
  function layout(tasks) {
    const index = new Map(tasks.map((t, i) => [t.name, i]));
    const depth = new Array(tasks.length).fill(-1);
    function layerOf(i, seen) {
      if (depth[i] >= 0) return depth[i];
      if (seen.has(i)) return 0; // a cycle: the store refuses them, draw anyway
      seen.add(i);
      let d = 0;
      for (const dep of tasks[i].after) {
        const j = index.get(dep);
        if (j !== undefined) d = Math.max(d, layerOf(j, seen) + 1);
      }
      depth[i] = d;
      return d;
    }
    tasks.forEach((_, i) => layerOf(i, new Set()));
    const layers = [];
    tasks.forEach((_, i) => { (layers[depth[i]] = layers[depth[i]] || []).push(i); });
    const pos = new Array(tasks.length).fill(0);
    layers.forEach((layer, l) => {
      if (l > 0) {
        const key = (i) => {
          const ps = tasks[i].after.map((d) => index.get(d)).filter((j) => j !== undefined).map((j) => pos[j]);
          return ps.length ? ps.reduce((a, b) => a + b, 0) / ps.length : 0;
        };
        layer.sort((a, b) => key(a) - key(b) || a - b);
      }
      layer.forEach((i, p) => { pos[i] = p; });
    });
    return { index, depth, pos, layers };
  }

  // A workflow of more tasks than COLLAPSE_AT opens with its groups (below)
  // collapsed; a smaller one opens with them expanded. A chain is
  // CHAIN_MIN tasks or more.
  const COLLAPSE_AT = 100;
  const CHAIN_MIN = 3;
  // The graph's viewport is as tall as the graph drawn at 1:1, within
  // these bounds; the graph pans and zooms in it.
  const VIEW_MIN_H = 120, VIEW_MAX_H = 560;
  const ZOOM_MIN = 0.02, ZOOM_MAX = 3, ZOOM_STEP = 1.25;
  // The minimap is the whole graph within MINI_W × MINI_H px.
  const MINI_W = 200, MINI_H = 120;
  const GROUP_PRECEDENCE = ['failed', 'running', 'open', 'queued', 'pending', 'cancelled', 'waiting'];

  // groupsOf finds what the graph can collapse into one node: chains (a
  // run of tasks each the only dependent of the one before, which is its
  // only dependency) and, among the tasks in no chain, runs of parallel
  // tasks (tasks with the same dependencies and the same dependents: a
  // fan-out, a batch). It answers the groups of two tasks or more, each
  // {id, kind, members (task indexes)}, and each task's group (or null).
  function groupsOf(tasks) {
    const n = tasks.length;
    const index = new Map(tasks.map((t, i) => [t.name, i]));
    const deps = tasks.map((t) => t.after.map((d) => index.get(d)).filter((j) => j !== undefined));
    const kids = tasks.map(() => []);
    deps.forEach((ds, i) => ds.forEach((j) => kids[j].push(i)));
    const groups = [];
    const groupOf = new Array(n).fill(null);
    const next = (u) => kids[u].length === 1 && deps[kids[u][0]].length === 1 ? kids[u][0] : -1;
    for (let i = 0; i < n; i++) {
      if (deps[i].length === 1 && next(deps[i][0]) === i) continue; // not a chain's first task
      const run = [i];
      for (let u = next(i); u >= 0 && run.length <= n; u = next(u)) run.push(u);
      if (run.length >= CHAIN_MIN) {
        const g = { id: 'chain:' + tasks[i].name, kind: 'chain', members: run };
        run.forEach((m) => { groupOf[m] = g; });
        groups.push(g);
      }
    }
    const byKey = new Map();
    for (let i = 0; i < n; i++) {
      if (groupOf[i]) continue;
      const key = deps[i].slice().sort((a, b) => a - b).join(',') + '|' + kids[i].slice().sort((a, b) => a - b).join(',');
      const run = byKey.get(key);
      if (run) run.push(i);
      else byKey.set(key, [i]);
    }
    for (const run of byKey.values()) {
      if (run.length < 2) continue;
      const g = { id: 'group:' + tasks[run[0]].name, kind: 'parallel', members: run };
      run.forEach((m) => { groupOf[m] = g; });
      groups.push(g);
    }
    return { groups, groupOf };
  }

  // groupLabel names a group: a chain by its ends, parallel tasks by the
  // start their names share.
  function groupLabel(tasks, g) {
    const names = g.members.map((i) => tasks[i].name);
    if (g.kind === 'chain') return names[0] + ' → … → ' + names[names.length - 1];
    let p = names[0];
    for (const nm of names) while (!nm.startsWith(p)) p = p.slice(0, -1);
    return (p || names[0]) + '* ×' + names.length;
  }

  // shapeOf is what the layout depends on: the tasks, their dependencies
  // and what draws differently (undo strips, always, on_failure, added).
  function shapeOf(tasks) {
    return tasks.map((t) => t.name + '<' + t.after.join(',') + (t.undo ? '~u' : '') + (t.always ? '~a' : '') + (t.on_failure ? '~f' : '') + (t.added_by ? '~+' : '')).join('\n');
  }

  // dagView is a workflow's graph: an SVG in a viewport of bounded height
  // that pans (drag) and zooms (wheel, buttons, Fit), with groups that
  // collapse into one node and expand again, a box that finds a task and
  // centres it, a minimap that moves the view, and a filter by state that
  // dims the tasks in other states. update(tasks, selected) lays the graph
  // (and the minimap) out again only when the plan's shape or what is
  // collapsed changed; otherwise it changes only the nodes whose task
  // changed (their classes and text, and their minimap box's class), so
  // that a live workflow costs its changes, not its size.
  function dagView(select) {
    const svg = s('svg', { class: 'dag', id: 'dag-svg', role: 'img', 'aria-label': 'the workflow\'s tasks and dependencies' },
      s('defs', {}, s('marker', { id: 'arrow', viewBox: '0 0 8 8', refX: 8, refY: 4, markerWidth: 8, markerHeight: 8, orient: 'auto' },
        s('path', { d: 'M0,0 L8,4 L0,8 z' }))));
    const scene = s('g', { class: 'scene' });
    svg.append(scene);
    const viewport = h('div', { class: 'dag-viewport', id: 'dag-viewport' }, svg);
    const findBox = h('input', { id: 'dag-find', type: 'search', placeholder: 'find a task', 'aria-label': 'find a task' });
    const findSays = h('span', { id: 'dag-find-status', class: 'muted' });
    const findForm = h('form', { class: 'dag-find' }, findBox, findSays);
    const zoomSays = h('span', { id: 'dag-zoom', class: 'muted' });
    const btn = (id, text, title, fn) => h('button', { type: 'button', id, title, onclick: fn }, text);
    const bar = h('div', { class: 'toolbar dag-bar' },
      btn('dag-zoom-out', '−', 'zoom out', () => zoomBy(1 / ZOOM_STEP)),
      btn('dag-zoom-in', '+', 'zoom in', () => zoomBy(ZOOM_STEP)),
      btn('dag-fit', 'Fit', 'fit the graph in view', () => fit()),
      btn('dag-one', '1:1', 'actual size', () => zoomBy(1 / view.k)),
      zoomSays,
      btn('dag-expand-all', 'Expand all', 'draw every task', () => setAll(false)),
      btn('dag-collapse-all', 'Collapse all', 'draw each chain and each run of parallel tasks as one node', () => setAll(true)),
      findForm);
    // the filter by state, which is the legend too: a toggle per state in
    // its colour, with its count of tasks
    const filterSays = h('span', { id: 'dag-filter-status', class: 'muted' });
    const chips = new Map(); // state -> {b, n (the count shown)}
    const clearFilter = btn('dag-filter-clear', 'All', 'highlight every task', () => { filter.clear(); filtered(); });
    clearFilter.hidden = true;
    const filterBar = h('div', { class: 'toolbar dag-bar dag-filter', id: 'dag-filter', role: 'group', 'aria-label': 'the states: click one to highlight its tasks' },
      TASK_STATES.map((st) => {
        const b = h('button', { type: 'button', class: 'filter-state st-' + st, 'data-state': st, 'aria-pressed': 'false', title: 'highlight the ' + st + ' tasks, dim the others',
          onclick: () => toggleState(st) });
        chips.set(st, { b, n: -1 });
        return b;
      }),
      clearFilter, filterSays);
    // the minimap: every node as a box in the graph's coordinates, and the
    // viewport's rectangle; a click or a drag on it moves the view there
    const miniNodes = s('g', { class: 'mini-nodes' });
    const miniView = s('rect', { class: 'mini-view', id: 'dag-minimap-view' });
    const mini = s('svg', { class: 'minimap', role: 'img', 'aria-label': 'the whole graph: click or drag to move the view' }, miniNodes, miniView);
    const miniBox = h('div', { class: 'dag-minimap', id: 'dag-minimap', title: 'the whole graph: click or drag to move the view' }, mini);
    const stage = h('div', { class: 'dag-stage' }, viewport, miniBox);
    const root = h('div', { class: 'dag-wrap', id: 'dag' }, bar, filterBar, stage);

    let tasks = [];
    let selected = null, found = null;
    let shape = null;
    let groups = [], groupOf = [];
    const collapsed = new Set(); // the IDs of the groups collapsed
    const known = new Set();     // the IDs of the groups seen so far
    let nodes = new Map();       // task name -> {g, parts, sig}
    let groupNodes = new Map();  // group ID -> {g, parts, sig}
    let where = new Map();       // task name or group ID -> {x, y}
    let size = { w: 0, h: 0 };
    const view = { k: 1, tx: 0, ty: 0, moved: false };
    const filter = new Set();    // the states highlighted (none: every task)

    function apply() {
      scene.setAttribute('transform', `translate(${view.tx.toFixed(1)},${view.ty.toFixed(1)}) scale(${view.k.toFixed(4)})`);
      zoomSays.textContent = Math.round(view.k * 100) + '%';
      root.dataset.zoom = view.k.toFixed(4);
      // the viewport's rectangle on the minimap, in the graph's coordinates
      const vw = viewport.clientWidth, vh = viewport.clientHeight;
      setAttrs(miniView, { x: (-view.tx / view.k).toFixed(1), y: (-view.ty / view.k).toFixed(1),
        width: (vw / view.k).toFixed(1), height: (vh / view.k).toFixed(1) });
    }

    // showMini shows the minimap when the graph at 1:1 does not fit in the
    // viewport.
    function showMini() {
      miniBox.hidden = !(size.w > viewport.clientWidth + 1 || size.h > viewport.clientHeight + 1);
    }

    // miniTo centres the view on the point of the graph under the pointer
    // on the minimap, at the zoom it has.
    function miniTo(ev) {
      const r = mini.getBoundingClientRect();
      if (!r.width || !r.height) return;
      const gx = (ev.clientX - r.left) / r.width * size.w, gy = (ev.clientY - r.top) / r.height * size.h;
      view.tx = viewport.clientWidth / 2 - gx * view.k;
      view.ty = viewport.clientHeight / 2 - gy * view.k;
      view.moved = true;
      apply();
    }
    let miniDrag = null;
    mini.addEventListener('pointerdown', (ev) => {
      if (ev.button !== 0) return;
      ev.preventDefault();
      miniDrag = ev.pointerId;
      try { mini.setPointerCapture(ev.pointerId); } catch (e) { /* a pointer already gone */ }
      miniTo(ev);
    });
    mini.addEventListener('pointermove', (ev) => { if (ev.pointerId === miniDrag) miniTo(ev); });
    const endMini = (ev) => { if (ev.pointerId === miniDrag) miniDrag = null; };
    mini.addEventListener('pointerup', endMini);
    mini.addEventListener('pointercancel', endMini);

    // the filter: a state toggled in or out repaints every node drawn (a
    // user's click, not an update)
    function toggleState(st) {
      if (filter.has(st)) filter.delete(st);
      else filter.add(st);
      filtered();
    }
    function filtered() {
      for (const [st, c] of chips) c.b.setAttribute('aria-pressed', String(filter.has(st)));
      root.classList.toggle('filtering', filter.size > 0);
      clearFilter.hidden = filter.size === 0;
      root.dataset.filter = [...filter].join(' ');
      for (const [name, e] of nodes) paintTask(e, tasks[index.get(name)]);
      for (const g of groups) {
        const e = groupNodes.get(g.id);
        if (e) paintGroup(e, g);
      }
      countStates();
    }
    const matches = (st) => filter.size === 0 || filter.has(st);

    // countStates writes each state's count of tasks on its toggle (only
    // those that changed) and how many tasks the filter highlights.
    let index = new Map(); // task name -> its index in tasks
    function countStates() {
      const counts = {};
      for (const t of tasks) counts[t.state] = (counts[t.state] || 0) + 1;
      let hit = 0;
      for (const [st, c] of chips) {
        const n = counts[st] || 0;
        if (filter.has(st)) hit += n;
        const off = n === 0 && !filter.has(st);
        if (c.b.disabled !== off) c.b.disabled = off;
        if (c.n === n) continue;
        c.n = n;
        c.b.textContent = st + ' ' + n;
        c.b.dataset.count = String(n);
      }
      const say = filter.size ? hit + ' of ' + tasks.length + ' tasks' : '';
      if (filterSays.textContent !== say) filterSays.textContent = say;
    }

    function zoomAt(px, py, factor) {
      const k = Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, view.k * factor));
      view.tx = px - (px - view.tx) * k / view.k;
      view.ty = py - (py - view.ty) * k / view.k;
      view.k = k;
      view.moved = true;
      apply();
    }

    function zoomBy(factor) {
      zoomAt(viewport.clientWidth / 2, viewport.clientHeight / 2, factor);
    }

    // fit shows the whole graph, at 1:1 at most.
    function fit() {
      const vw = viewport.clientWidth || 800, vh = viewport.clientHeight || VIEW_MAX_H;
      const k = Math.max(ZOOM_MIN, Math.min(1, vw / size.w, vh / size.h));
      view.k = k;
      view.tx = k < 1 ? (vw - size.w * k) / 2 : 0;
      view.ty = (vh - size.h * k) / 2;
      view.moved = false;
      showMini();
      apply();
    }

    // centre puts a task's node (or its group's) in the middle of the
    // viewport, at 1:1 or closer.
    function centre(id) {
      const p = where.get(id);
      if (!p) return;
      const vw = viewport.clientWidth, vh = viewport.clientHeight;
      view.k = Math.max(view.k, 1);
      view.tx = vw / 2 - (p.x + NODE_W / 2) * view.k;
      view.ty = vh / 2 - (p.y + NODE_H / 2) * view.k;
      view.moved = true;
      apply();
    }

    // panning: a drag of the background or of a node (a click that moves
    // less than 4 px is a click)
    let drag = null, dragged = false;
    viewport.addEventListener('pointerdown', (ev) => {
      if (ev.button !== 0) return;
      dragged = false;
      drag = { x: ev.clientX, y: ev.clientY, tx: view.tx, ty: view.ty, id: ev.pointerId, on: false };
    });
    viewport.addEventListener('pointermove', (ev) => {
      if (!drag || ev.pointerId !== drag.id) return;
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (!drag.on && Math.abs(dx) + Math.abs(dy) < 4) return;
      if (!drag.on) {
        drag.on = true;
        try { viewport.setPointerCapture(ev.pointerId); } catch (e) { /* a pointer already gone */ }
        viewport.classList.add('panning');
      }
      view.tx = drag.tx + dx;
      view.ty = drag.ty + dy;
      view.moved = true;
      apply();
    });
    const endDrag = (ev) => {
      if (!drag || ev.pointerId !== drag.id) return;
      dragged = drag.on;
      drag = null;
      // the click a drag ends with comes in this task; none may come
      if (dragged) setTimeout(() => { dragged = false; }, 0);
      viewport.classList.remove('panning');
    };
    viewport.addEventListener('pointerup', endDrag);
    viewport.addEventListener('pointercancel', endDrag);
    viewport.addEventListener('click', (ev) => { // a drag's click selects nothing
      if (dragged) { dragged = false; ev.stopPropagation(); ev.preventDefault(); }
    }, true);
    viewport.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const r = viewport.getBoundingClientRect();
      const dy = ev.deltaMode === 1 ? ev.deltaY * 16 : ev.deltaY;
      zoomAt(ev.clientX - r.left, ev.clientY - r.top, Math.exp(-dy * 0.0015));
    }, { passive: false });

    findForm.addEventListener('submit', (ev) => {
      ev.preventDefault();
      find(findBox.value.trim());
    });

    // find highlights the task named q (else the first whose name
    // contains it), expands its group and centres it.
    function find(q) {
      if (!q) return;
      const lq = q.toLowerCase();
      const t = tasks.find((x) => x.name === q) || tasks.find((x) => x.name.toLowerCase().includes(lq));
      if (!t) {
        findSays.textContent = 'no task matches ' + q;
        return;
      }
      findSays.textContent = '';
      const g = groupOf[tasks.indexOf(t)];
      if (g && collapsed.has(g.id)) {
        collapsed.delete(g.id);
        build();
      }
      const was = found;
      found = t.name;
      if (was && nodes.has(was)) paintTask(nodes.get(was), tasks.find((x) => x.name === was));
      paintTask(nodes.get(t.name), t);
      centre(t.name);
    }

    function setAll(collapse) {
      for (const g of groups) {
        if (collapse) collapsed.add(g.id);
        else collapsed.delete(g.id);
      }
      build();
      fit();
    }

    function toggle(id) {
      if (collapsed.has(id)) collapsed.delete(id);
      else collapsed.add(id);
      build();
      if (!view.moved) fit();
    }

    // build lays the graph out and draws it anew.
    function build() {
      const units = [];          // {id, task (index) or group}
      const unitOf = new Map();  // task index -> unit ID
      const seenUnit = new Set();
      tasks.forEach((t, i) => {
        const g = groupOf[i];
        const id = g && collapsed.has(g.id) ? g.id : t.name;
        unitOf.set(i, id);
        if (seenUnit.has(id)) return;
        seenUnit.add(id);
        units.push(id === t.name ? { id, task: i } : { id, group: g });
      });
      const index = new Map(tasks.map((t, i) => [t.name, i]));
      const links = new Map(); // "from\nto" -> {from, to, cls}
      tasks.forEach((t, i) => {
        for (const d of t.after) {
          const j = index.get(d);
          if (j === undefined) continue;
          const from = unitOf.get(j), to = unitOf.get(i);
          if (from === to) continue;
          const key = from + '\n' + to;
          const cls = 'edge' + (t.always ? ' always' : '') + (t.on_failure ? ' on-failure' : '');
          if (!links.has(key)) links.set(key, { from, to, cls });
        }
      });
      const after = new Map(units.map((u) => [u.id, []]));
      for (const l of links.values()) after.get(l.to).push(l.from);
      const { depth, pos, layers } = layout(units.map((u) => ({ name: u.id, after: after.get(u.id) })));
      const slot = NODE_H + (tasks.some((t) => t.undo) ? UNDO_H : 0) + GAP_Y;
      const tallest = Math.max(1, ...layers.map((l) => l.length));
      size = {
        w: PAD * 2 + layers.length * NODE_W + Math.max(0, layers.length - 1) * GAP_X,
        h: PAD * 2 + tallest * slot - GAP_Y,
      };
      where = new Map(units.map((u, i) => [u.id, {
        x: PAD + depth[i] * (NODE_W + GAP_X),
        y: PAD + pos[i] * slot + (tallest - layers[depth[i]].length) * slot / 2,
      }]));
      const frames = s('g', { class: 'frames' });
      const edges = s('g', { class: 'edges' });
      const taskLayer = s('g', { class: 'nodes' });
      const groupLayer = s('g', { class: 'groups' });
      for (const l of links.values()) {
        const a = where.get(l.from), b = where.get(l.to);
        const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2, c = GAP_X / 2;
        edges.append(s('path', { class: l.cls, 'data-from': l.from, 'data-to': l.to, d: `M${x1},${y1} C${x1 + c},${y1} ${x2 - c},${y2} ${x2},${y2}`, 'marker-end': 'url(#arrow)' }));
      }
      nodes = new Map();
      groupNodes = new Map();
      for (const u of units) {
        const p = where.get(u.id);
        if (u.group) {
          const e = groupNode(u.group, p.x, p.y);
          groupNodes.set(u.group.id, e);
          groupLayer.append(e.g);
        } else {
          const e = taskNode(tasks[u.task], p.x, p.y);
          nodes.set(tasks[u.task].name, e);
          taskLayer.append(e.g);
        }
      }
      // an expanded group: a frame around its tasks, with a button that
      // collapses it
      for (const g of groups) {
        if (collapsed.has(g.id)) continue;
        let x1 = Infinity, y1 = Infinity, x2 = -Infinity, y2 = -Infinity;
        for (const m of g.members) {
          const p = where.get(tasks[m].name);
          x1 = Math.min(x1, p.x); y1 = Math.min(y1, p.y); x2 = Math.max(x2, p.x + NODE_W); y2 = Math.max(y2, p.y + NODE_H + (tasks[m].undo ? UNDO_H - 1 : 0));
        }
        const label = groupLabel(tasks, g);
        const close = s('g', { class: 'collapse', 'data-collapse': g.id, tabindex: 0, role: 'button' },
          s('title', {}, 'collapse ' + label + ' (' + g.members.length + ' tasks) into one node'),
          s('circle', { cx: x2 + 4, cy: y1 - 4, r: 7 }),
          s('text', { x: x2 + 4, y: y1 - 0.5, 'text-anchor': 'middle' }, '−'));
        close.addEventListener('click', () => toggle(g.id));
        close.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') toggle(g.id); });
        frames.append(s('g', { class: 'group-frame ' + g.kind, 'data-group': g.id },
          s('rect', { x: x1 - 5, y: y1 - 5, width: x2 - x1 + 10, height: y2 - y1 + 10, rx: 9 }), close));
      }
      scene.replaceChildren(frames, edges, taskLayer, groupLayer);
      viewport.style.height = Math.round(Math.min(VIEW_MAX_H, Math.max(VIEW_MIN_H, size.h + 2))) + 'px';
      root.dataset.nodes = String(units.length);
      // the minimap, drawn with the layout: the graph's coordinates scaled
      // into MINI_W × MINI_H
      const m = Math.min(MINI_W / size.w, MINI_H / size.h);
      setAttrs(mini, { viewBox: `0 0 ${size.w} ${size.h}`, width: Math.round(size.w * m), height: Math.round(size.h * m) });
      miniNodes.replaceChildren(...[...nodes.values(), ...groupNodes.values()].map((e) => e.mini));
      root.dataset.minimaps = String(Number(root.dataset.minimaps || 0) + 1);
      showMini();
      apply();
    }

    function taskNode(t, x, y) {
      const parts = {
        title: s('title', {}),
        name: s('text', { class: 'name', x: x + 10, y: y + 18 }, clip(t.name, 22)),
        sub: s('text', { class: 'sub', x: x + 10, y: y + 35 }),
      };
      const g = s('g', { 'data-task': t.name, tabindex: 0 }, parts.title,
        s('rect', { class: 'box', x, y, width: NODE_W, height: NODE_H, rx: 6 }), parts.name, parts.sub);
      if (t.undo) {
        parts.undoText = s('text', { x: x + 20, y: y + NODE_H + 12 });
        parts.undo = s('g', {}, s('rect', { x: x + 12, y: y + NODE_H - 1, width: NODE_W - 24, height: UNDO_H, rx: 4 }), parts.undoText);
        g.append(parts.undo);
      }
      g.addEventListener('click', () => select(t.name));
      g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') select(t.name); });
      const dot = s('rect', { x, y, width: NODE_W, height: NODE_H, 'data-task': t.name });
      const e = { g, parts, sig: null, mini: dot };
      paintTask(e, t);
      return e;
    }

    // paintTask sets what a task's node shows from the task, when that
    // changed since it was last painted.
    function paintTask(e, t) {
      const dim = !matches(t.state);
      const sig = [t.state, t.attempts, t.queue, t.error || '', t.undo ? (t.undo.state || '') + ':' + (t.undo.attempts || 0) : '',
        t.name === selected, t.name === found, dim].join('|');
      if (e.sig === sig) return false;
      e.sig = sig;
      const sub = (t.on_failure ? 'on failure · ' : '') + t.state + (t.attempts > 1 ? ' · attempt ' + t.attempts : '') + (t.queue !== 'default' ? ' · ' + t.queue : '');
      e.g.setAttribute('class', 'node st-' + t.state + (t.added_by ? ' added' : '') + (t.on_failure ? ' on-failure' : '') +
        (t.name === selected ? ' selected' : '') + (t.name === found ? ' found' : '') + (dim ? ' dimmed' : ''));
      e.mini.setAttribute('class', 'st-' + t.state + (dim ? ' dimmed' : ''));
      e.g.dataset.state = t.state;
      e.parts.sub.textContent = clip(sub, 26);
      e.parts.title.textContent = [t.name + ': ' + t.state, t.attempts ? 'attempts: ' + t.attempts : '', t.error ? 'error: ' + t.error : '',
        t.on_failure ? 'on failure: runs only when a dependency did not complete' : '',
        t.undo ? 'undo: ' + (t.undo.state || 'not started') : '', t.added_by ? 'added at run time by ' + t.added_by : ''].filter(Boolean).join('\n');
      if (e.parts.undo) {
        const ust = (t.undo && t.undo.state) || 'none';
        e.parts.undo.setAttribute('class', 'undo st-' + ust);
        e.parts.undo.dataset.undoState = ust;
        e.parts.undoText.textContent = '↩ undo ' + ((t.undo && t.undo.state) || '—') + (t.undo && t.undo.attempts > 1 ? ' ×' + t.undo.attempts : '');
      }
      return true;
    }

    function groupNode(g, x, y) {
      const parts = {
        title: s('title', {}),
        sub: s('text', { class: 'sub', x: x + 10, y: y + 33 }),
        strip: s('g', { class: 'strip' }),
      };
      const label = groupLabel(tasks, g);
      const node = s('g', { class: 'group-node', 'data-group': g.id, 'data-kind': g.kind, 'data-count': g.members.length, tabindex: 0, role: 'button' },
        parts.title,
        s('rect', { class: 'box back', x: x + 4, y: y - 4, width: NODE_W, height: NODE_H, rx: 6 }),
        s('rect', { class: 'box', x, y, width: NODE_W, height: NODE_H, rx: 6 }),
        s('text', { class: 'name', x: x + 10, y: y + 17 }, clip(label, 21)),
        parts.sub, parts.strip);
      node.addEventListener('click', () => toggle(g.id));
      node.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') toggle(g.id); });
      const dot = s('rect', { x, y, width: NODE_W, height: NODE_H, 'data-group': g.id });
      const e = { g: node, parts, sig: null, x, y, label, mini: dot };
      paintGroup(e, g);
      return e;
    }

    // paintGroup shows a collapsed group's counts by state: in its text,
    // its tooltip and a strip of the states' colours; its box takes the
    // colour of the state that most needs a look (failed, then running,
    // ...; completed when all are). With a filter, data-matches counts its
    // tasks in the states highlighted, and it is dimmed when it has none.
    function paintGroup(e, g) {
      const counts = {};
      for (const m of g.members) counts[tasks[m].state] = (counts[tasks[m].state] || 0) + 1;
      const present = TASK_STATES.filter((st) => counts[st]);
      const countsSig = present.map((st) => st + ':' + counts[st]).join(' ');
      const hits = filter.size ? present.filter((st) => filter.has(st)).reduce((a, st) => a + counts[st], 0) : -1;
      const sig = countsSig + '|' + hits;
      if (e.sig === sig) return false;
      e.sig = sig;
      const state = GROUP_PRECEDENCE.find((st) => counts[st]) || 'completed';
      e.g.setAttribute('class', 'group-node st-' + state + (hits === 0 ? ' dimmed' : ''));
      e.mini.setAttribute('class', 'st-' + state + (hits === 0 ? ' dimmed' : ''));
      e.g.dataset.state = state;
      e.g.dataset.counts = countsSig;
      if (hits >= 0) e.g.dataset.matches = String(hits);
      else delete e.g.dataset.matches;
      const n = g.members.length;
      e.parts.sub.textContent = clip(n + ' tasks · ' + present.map((st) => counts[st] + ' ' + st).join(', '), 30);
      e.parts.title.textContent = e.label + ' (' + (g.kind === 'chain' ? 'a chain' : 'parallel tasks') + ', ' + n + ' tasks)\n' +
        present.map((st) => counts[st] + ' ' + st).join('\n') + '\nclick to expand';
      const w = NODE_W - 20;
      let x = e.x + 10;
      const bars = present.map((st) => {
        const bw = w * counts[st] / n;
        const r = s('rect', { class: 'seg st-' + st, x: x.toFixed(1), y: e.y + NODE_H - 8, width: bw.toFixed(1), height: 4 });
        x += bw;
        return r;
      });
      e.parts.strip.replaceChildren(...bars);
      return true;
    }

    // update draws tasks: laid out again when the plan's shape changed,
    // else only the nodes whose task changed are painted again. It
    // answers how many nodes it painted.
    function update(next, sel) {
      tasks = next;
      const shapeNow = shapeOf(tasks);
      selected = sel;
      countStates();
      if (shapeNow !== shape) {
        index = new Map(tasks.map((t, i) => [t.name, i]));
        const first = shape === null;
        shape = shapeNow;
        ({ groups, groupOf } = groupsOf(tasks));
        for (const g of groups) {
          if (known.has(g.id)) continue;
          known.add(g.id);
          if (tasks.length > COLLAPSE_AT) collapsed.add(g.id);
        }
        build();
        if (first || !view.moved) requestAnimationFrame(() => { if (!view.moved) fit(); });
        if (first) fit();
        root.dataset.layouts = String(Number(root.dataset.layouts || 0) + 1);
        return nodes.size + groupNodes.size;
      }
      let painted = 0;
      const dirty = new Set();
      tasks.forEach((t, i) => {
        const e = nodes.get(t.name);
        if (e) {
          if (paintTask(e, t)) painted++;
        } else if (groupOf[i]) {
          dirty.add(groupOf[i]);
        }
      });
      for (const g of dirty) {
        const e = groupNodes.get(g.id);
        if (e && paintGroup(e, g)) painted++;
      }
      return painted;
    }

    return { root, update };
  }

  function clip(text, n) {
    return text.length > n ? text.slice(0, n - 1) + '…' : text;
  }

  // ---- start ------------------------------------------------------------

  takeToken();
  window.addEventListener('hashchange', () => { actionError = ''; setNotice(''); takeToken(); show(); });
  // A hidden tab reads nothing and holds no stream open.
  document.addEventListener('visibilitychange', () => { if (document.hidden) stopFeed(); else show(); });
  show();
})();
