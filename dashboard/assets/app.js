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
  };
  let features = null; // the set of "METHOD /path" of the API, once read

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

  function fmtTime(stamp) {
    if (!stamp) return '';
    const d = new Date(stamp);
    const today = new Date().toDateString() === d.toDateString();
    return today ? d.toLocaleTimeString() : d.toLocaleString();
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

  async function api(method, path) {
    const headers = { Accept: 'application/json' };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = 'Bearer ' + token;
    const res = await fetch(path, { method, headers, credentials: 'omit', cache: 'no-store', redirect: 'error' });
    const text = await res.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch (e) { body = text; }
    if (!res.ok) throw new APIError(res.status, body);
    return body;
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
    features = set;
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
    if (path === '/' || path === '') return { view: 'workflows', state: q.get('state') || '' };
    if ((m = /^\/workflows\/(.+)$/.exec(path))) return { view: 'workflow', id: decodeURIComponent(m[1]), task: q.get('task') || '' };
    if (path === '/queues') return { view: 'queues' };
    if (path === '/workers') return { view: 'workers' };
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
    const views = { workflows: workflowsView, workflow: workflowView, queues: queuesView, queue: queueView, workers: workersView, notfound: notFoundView };
    document.getElementById('nav-workflows').classList.toggle('active', route.view === 'workflows' || route.view === 'workflow');
    document.getElementById('nav-queues').classList.toggle('active', route.view === 'queues' || route.view === 'queue');
    document.getElementById('nav-workers').classList.toggle('active', route.view === 'workers');
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

  async function act(method, path, question) {
    if (question && !window.confirm(question)) return;
    try {
      await api(method, path);
      actionError = '';
    } catch (e) {
      actionError = method + ' ' + path + ': ' + e.message + (e.code ? ' (' + e.code + ')' : '');
    }
    setBanner(actionError);
    refreshNow();
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
    select.addEventListener('change', () => { location.hash = select.value ? '#/?state=' + enc(select.value) : '#/'; });
    const search = h('input', { id: 'search', type: 'search', placeholder: 'workflow ID', 'aria-label': 'workflow ID' });
    const form = h('form', { class: 'toolbar' }, select, search, h('button', { type: 'submit' }, 'Open'));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const id = search.value.trim();
      if (id) location.hash = '#/workflows/' + enc(id);
    });
    const body = h('div', { id: 'workflows' });
    const cursors = ['']; // the cursor of each page shown so far
    const pager = h('div', { class: 'toolbar pager' });
    const root = h('section', {}, h('h1', {}, 'Workflows'), form, body, pager);
    let next = null;

    async function refresh() {
      let path = v1('workflows') + '?limit=' + PAGE;
      if (route.state) path += '&state=' + enc(route.state);
      const cur = cursors[cursors.length - 1];
      if (cur) path += '&cursor=' + enc(cur);
      const page = await api('GET', path);
      next = page.next_cursor;
      fill(body, workflowTable(page.workflows));
      const newer = h('button', { type: 'button', disabled: cursors.length === 1 }, '← Newer');
      newer.addEventListener('click', () => { cursors.pop(); refresh(); });
      const older = h('button', { type: 'button', disabled: !next }, 'Older →');
      older.addEventListener('click', () => { cursors.push(next); refresh(); });
      if (cursors.length > 1 || next) fill(pager, newer, older);
      else fill(pager);
    }
    return { root, refresh };
  }

  function workflowTable(wfs) {
    if (wfs.length === 0) return h('p', { class: 'muted' }, 'No workflows.');
    return h('table', { id: 'workflow-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'ID'), h('th', {}, 'State'), h('th', {}, 'Tasks'), h('th', {}, 'Created'), h('th', {}, 'Ended'))),
      h('tbody', {}, wfs.map((wf) => h('tr', { 'data-workflow': wf.id },
        h('td', { class: 'id' }, h('a', { href: '#/workflows/' + enc(wf.id) }, wf.id)),
        h('td', {}, badge(wf.state)),
        h('td', {}, taskSummary(wf.tasks)),
        h('td', {}, fmtTime(wf.created_at)),
        h('td', {}, fmtTime(wf.ended_at))))));
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
    const dag = h('div', { class: 'dag-wrap', id: 'dag' });
    const tasks = h('div', { id: 'tasks' });
    const job = h('div', { id: 'job' });
    const legend = h('div', { class: 'legend' }, TASK_STATES.map(badge));
    const root = h('section', {}, title, meta, h('h2', {}, 'Tasks'), legend, dag, tasks, job);
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

    // refresh reads the workflow and draws it; it answers whether what
    // the events tell of (its state, its tasks' states and attempts)
    // changed since the last read.
    async function refresh() {
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
        const cancel = wf.state === 'running' && !wf.cancel_requested
          ? h('button', { type: 'button', class: 'danger', id: 'cancel-workflow', onclick: () => act('POST', v1('workflows', wf.id, 'cancel'), 'Cancel workflow ' + wf.id + '?') }, 'Cancel')
          : null;
        const rerun = rerunnable
          ? h('button', { type: 'button', id: 'rerun-workflow', onclick: () => act('POST', v1('workflows', wf.id, 'rerun'), 'Re-run the failed and cancelled tasks of workflow ' + wf.id + ' (and what comes after them)?') }, 'Re-run')
          : null;
        fill(title, 'Workflow ', h('span', { class: 'mono' }, wf.id), badge(wf.state), cancel, rerun);
      }
      fill(meta,
        h('span', {}, h('b', {}, 'created'), fmtTime(wf.created_at)),
        wf.ended_at ? h('span', {}, h('b', {}, 'ended'), fmtTime(wf.ended_at)) : null,
        wf.reason ? h('span', {}, h('b', {}, 'reason'), wf.reason) : null,
        wf.run > 1 ? h('span', { id: 'workflow-run' }, h('b', {}, 'run'), String(wf.run)) : null,
        h('span', {}, h('b', {}, 'tasks'), taskSummary(wf.tasks)),
        wf.fail_fast ? h('span', {}, 'fail fast') : null,
        wf.undo_on_cancel ? h('span', {}, 'undo on cancel') : null,
        wf.cancel_requested ? h('span', { class: 'cancel-requested' }, 'cancel requested') : null);
      fill(dag, drawDAG(wf.tasks, selected, select));
      fill(tasks, taskTable(wf, select));
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
      h('tbody', {}, wf.tasks.map((t) => h('tr', { 'data-task': t.name },
        h('td', { class: 'mono' }, h('a', { href: '#', onclick: (ev) => { ev.preventDefault(); select(t.name); } }, t.name),
          t.added_by ? h('span', { class: 'muted', title: 'added at run time by ' + t.added_by }, ' +' + t.added_by) : null),
        h('td', {}, t.queue),
        h('td', {}, badge(t.state)),
        h('td', { class: 'num' }, t.attempts),
        h('td', { class: 'mono' }, t.on_failure ? h('span', { class: 'on-failure', title: 'runs only when one of these did not complete' }, 'on failure of ' + t.after.join(', ')) : t.after.join(', ')),
        h('td', {}, t.undo ? (t.undo.state ? [badge(t.undo.state), t.undo.attempts > 1 ? ' ×' + t.undo.attempts : ''] : h('span', { class: 'muted' }, 'not started')) : ''),
        h('td', {}, t.error ? h('pre', { class: 'error-text' }, t.error) : null,
          t.undo && t.undo.error ? h('pre', { class: 'error-text' }, 'undo: ' + t.undo.error) : null,
          t.result !== null && t.result !== undefined ? h('pre', {}, fmtValue(t.result)) : null)))));
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
      ['queue', j.queue], ['attempts', j.attempts + ' of ' + j.max_attempts],
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
          h('td', {}, h('span', { class: 'toolbar actions' },
            q.paused
              ? h('button', { type: 'button', class: 'resume', onclick: () => act('POST', v1('queues', q.name, 'resume')) }, 'Resume')
              : h('button', { type: 'button', class: 'pause', onclick: () => act('POST', v1('queues', q.name, 'pause')) }, 'Pause'),
            has('purgeQueue')
              ? h('button', { type: 'button', class: 'danger purge', onclick: () => act('POST', v1('queues', q.name, 'purge'), 'Purge the ready and delayed jobs of queue ' + q.name + '?') }, 'Purge')
              : null)))))));
    }
    return { root, refresh };
  }

  // queueView lists a queue's jobs in one state: the inspector's route
  // (OPTIONAL.listJobs), answering {"jobs": [job], "next_cursor"}.
  function queueView(route) {
    const select = h('select', { id: 'job-state', 'aria-label': 'state' },
      JOB_STATES.map((st) => h('option', { value: st, selected: st === route.state }, st)));
    select.addEventListener('change', () => { location.hash = '#/queues/' + enc(route.name) + '?state=' + enc(select.value); });
    const body = h('div', { id: 'jobs' });
    const root = h('section', {}, h('h1', {}, 'Queue ', h('span', { class: 'mono' }, route.name)), h('div', { class: 'toolbar' }, select), body);
    async function refresh() {
      if (!has('listJobs')) {
        fill(body, h('p', { class: 'muted' }, 'This server cannot list jobs.'));
        return;
      }
      const page = await api('GET', v1('queues', route.name, 'jobs') + '?state=' + enc(route.state) + '&limit=' + PAGE);
      const jobs = page.jobs || [];
      if (jobs.length === 0) {
        fill(body, h('p', { class: 'muted' }, 'No ' + route.state + ' jobs.'));
        return;
      }
      fill(body, h('table', { id: 'job-table' },
        h('thead', {}, h('tr', {}, ['Job', 'State', 'Attempts', 'Created', 'Error', ''].map((c) => h('th', {}, c)))),
        h('tbody', {}, jobs.map((j) => h('tr', { 'data-job': j.id },
          h('td', { class: 'mono' }, j.workflow ? h('a', { href: '#/workflows/' + enc(j.workflow) + (j.task ? '?task=' + enc(j.task) : '') }, j.id) : j.id),
          h('td', {}, badge(j.state)),
          h('td', { class: 'num' }, j.attempts),
          h('td', {}, fmtTime(j.created_at)),
          h('td', {}, j.error ? h('pre', { class: 'error-text' }, j.error) : ''),
          h('td', {}, jobActions(j)))))));
    }
    return { root, refresh };
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

  function drawDAG(tasks, selected, select) {
    const { index, depth, pos, layers } = layout(tasks);
    const slot = NODE_H + (tasks.some((t) => t.undo) ? UNDO_H : 0) + GAP_Y;
    const tallest = Math.max(1, ...layers.map((l) => l.length));
    const width = PAD * 2 + layers.length * NODE_W + Math.max(0, layers.length - 1) * GAP_X;
    const height = PAD * 2 + tallest * slot - GAP_Y;
    const xy = tasks.map((_, i) => ({
      x: PAD + depth[i] * (NODE_W + GAP_X),
      y: PAD + pos[i] * slot + (tallest - layers[depth[i]].length) * slot / 2,
    }));
    const svg = s('svg', { class: 'dag', id: 'dag-svg', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'the workflow\'s tasks and dependencies' },
      s('defs', {}, s('marker', { id: 'arrow', viewBox: '0 0 8 8', refX: 8, refY: 4, markerWidth: 8, markerHeight: 8, orient: 'auto' },
        s('path', { d: 'M0,0 L8,4 L0,8 z' }))));
    const edges = s('g', { class: 'edges' });
    tasks.forEach((t, i) => {
      for (const dep of t.after) {
        const j = index.get(dep);
        if (j === undefined) continue;
        const x1 = xy[j].x + NODE_W, y1 = xy[j].y + NODE_H / 2, x2 = xy[i].x, y2 = xy[i].y + NODE_H / 2;
        const c = GAP_X / 2;
        edges.append(s('path', {
          class: 'edge' + (t.always ? ' always' : '') + (t.on_failure ? ' on-failure' : ''), 'data-from': dep, 'data-to': t.name,
          d: `M${x1},${y1} C${x1 + c},${y1} ${x2 - c},${y2} ${x2},${y2}`, 'marker-end': 'url(#arrow)',
        }));
      }
    });
    svg.append(edges);
    tasks.forEach((t, i) => {
      const { x, y } = xy[i];
      const sub = (t.on_failure ? 'on failure · ' : '') + t.state + (t.attempts > 1 ? ' · attempt ' + t.attempts : '') + (t.queue !== 'default' ? ' · ' + t.queue : '');
      const tip = [t.name + ': ' + t.state, t.attempts ? 'attempts: ' + t.attempts : '', t.error ? 'error: ' + t.error : '',
        t.on_failure ? 'on failure: runs only when a dependency did not complete' : '',
        t.undo ? 'undo: ' + (t.undo.state || 'not started') : '', t.added_by ? 'added at run time by ' + t.added_by : ''].filter(Boolean).join('\n');
      const g = s('g', { class: 'node st-' + t.state + (t.added_by ? ' added' : '') + (t.on_failure ? ' on-failure' : '') + (t.name === selected ? ' selected' : ''), 'data-task': t.name, 'data-state': t.state, tabindex: 0 },
        s('title', {}, tip),
        s('rect', { class: 'box', x, y, width: NODE_W, height: NODE_H, rx: 6 }),
        s('text', { class: 'name', x: x + 10, y: y + 18 }, clip(t.name, 22)),
        s('text', { class: 'sub', x: x + 10, y: y + 35 }, clip(sub, 26)));
      if (t.undo) {
        const ust = t.undo.state || 'none';
        g.append(s('g', { class: 'undo st-' + ust, 'data-undo-state': ust },
          s('rect', { x: x + 12, y: y + NODE_H - 1, width: NODE_W - 24, height: UNDO_H, rx: 4 }),
          s('text', { x: x + 20, y: y + NODE_H + 12 }, '↩ undo ' + (t.undo.state || '—') + (t.undo.attempts > 1 ? ' ×' + t.undo.attempts : ''))));
      }
      g.addEventListener('click', () => select(t.name));
      g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') select(t.name); });
      svg.append(g);
    });
    return svg;
  }

  function clip(text, n) {
    return text.length > n ? text.slice(0, n - 1) + '…' : text;
  }

  // ---- start ------------------------------------------------------------

  takeToken();
  window.addEventListener('hashchange', () => { actionError = ''; takeToken(); show(); });
  // A hidden tab reads nothing and holds no stream open.
  document.addEventListener('visibilitychange', () => { if (document.hidden) stopFeed(); else show(); });
  show();
})();
