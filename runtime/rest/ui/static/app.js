// The wasmconnect web console: a client of the worker's REST API like any other. It polls the
// API, renders the cluster, the connectors and their tasks, and calls the same routes kcctl would
// for the actions. No framework, no build step: this file is served as it is.
'use strict';
(() => {
  // How often the page refreshes, in ms; ?refresh=500 in the page URL changes it.
  const REFRESH_MS = Math.max(200, Number(new URLSearchParams(location.search).get('refresh')) || 2000);
  // How many samples a sparkline keeps.
  const SPARK_POINTS = 60;
  // Config keys whose values are secrets and are never shown: Kafka's PASSWORD settings and the
  // usual names of credentials in connector configs.
  const SECRET_KEY = /(password|passwd|secret|token|credential|jaas|user\.info|api[._-]?key|access[._-]?key|private[._-]?key|\.key$|key\.password|keystore|truststore\.certificates|auth\.info)/i;
  // Counters of records moved per connector, in the order tried: Kafka Connect's names first (the
  // JMX exporter's, as dashboards know them), then wasmconnect's own.
  const THROUGHPUT = [
    'kafka_connect_source_task_metrics_source_record_write_total',
    'kafka_connect_sink_task_metrics_sink_record_send_total',
    'kafka_connect_sink_task_metrics_sink_record_read_total',
    'wasmconnect_source_records_written_total',
    'wasmconnect_sink_records_put_total',
  ];
  // Gauges of consumer lag have "lag" as a word of their name.
  const LAG = /(^|_)lag(_|$)/;
  const AUTH_KEY = 'wasmconnect.console.authorization';

  const $ = (sel, root = document) => root.querySelector(sel);
  const enc = encodeURIComponent;

  // el builds an element: el('td', {class: 'num'}, 'text', childNode, [more]).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat(Infinity)) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  // --- The API -------------------------------------------------------------------------------

  class HTTPError extends Error {
    constructor(status, message) { super(message); this.status = status; }
  }

  const credentials = {
    get() { return sessionStorage.getItem(AUTH_KEY) || ''; },
    set(v) { sessionStorage.setItem(AUTH_KEY, v); },
    clear() { sessionStorage.removeItem(AUTH_KEY); },
  };

  // api calls the REST API with the signed-in user's credentials. credentials: 'omit' keeps the
  // browser from asking for a password in its own dialog on a 401: the console has its form.
  async function api(method, path, body) {
    const headers = { Accept: 'application/json' };
    const auth = credentials.get();
    if (auth) headers.Authorization = auth;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const resp = await fetch(path, {
      method, headers, credentials: 'omit', cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await resp.text();
    if (!resp.ok) {
      let msg = text;
      try { msg = JSON.parse(text).message || text; } catch (_) { /* not JSON */ }
      throw new HTTPError(resp.status, `${method} ${path}: ${resp.status} ${msg}`);
    }
    return (resp.headers.get('Content-Type') || '').includes('json') && text ? JSON.parse(text) : text;
  }

  // --- What the page knows -----------------------------------------------------------------------

  const model = {
    session: null, // GET /session
    server: null, // GET /
    workers: null, // GET /workers
    connectors: {}, // GET /connectors?expand=status&expand=info
    changes: [], // GET /state-changes, newest first
    reconciler: null, // GET /reconciler
    spark: {}, // connector -> {through: [records/s], lag: [records], last: {sum, at}}
    errors: {}, // what failed in the last refresh, by part
    loaded: false,
    needsSignIn: false,
    confirm: null, // {connector, action} waiting for a second click
    busy: '', // the action running, "connector/action"
  };

  // refresh reads everything the page shows. It returns false if the credentials changed while
  // it ran (the user signed in or out): what it read is then discarded.
  async function refresh() {
    const used = credentials.get();
    const parts = {
      server: api('GET', '/'),
      workers: api('GET', '/workers'),
      connectors: api('GET', '/connectors?expand=status&expand=info'),
      changes: api('GET', '/state-changes'),
      reconciler: api('GET', '/reconciler'),
      metrics: api('GET', '/metrics'),
    };
    if (!model.session) parts.session = api('GET', '/session');
    const names = Object.keys(parts);
    const results = await Promise.allSettled(Object.values(parts));
    if (credentials.get() !== used) return false;
    model.errors = {};
    results.forEach((r, i) => {
      const name = names[i];
      if (r.status === 'rejected') {
        if (r.reason instanceof HTTPError && r.reason.status === 401) model.needsSignIn = true;
        model.errors[name] = r.reason.message;
        return;
      }
      if (name === 'metrics') sample(r.value);
      else model[name] = r.value;
    });
    if (model.needsSignIn) {
      if (credentials.get()) showError('The worker refused these credentials: sign in again.');
      credentials.clear();
      model.session = null;
    }
    model.loaded = true;
    return true;
  }

  // --- Metrics -----------------------------------------------------------------------------------

  // parseMetrics reads the Prometheus text format: [{name, labels, value}].
  function parseMetrics(text) {
    const out = [];
    for (const line of text.split('\n')) {
      if (!line || line[0] === '#') continue;
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
      if (!m) continue;
      const labels = {};
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
      for (let l; (l = re.exec(m[2] || ''));) {
        labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
      }
      out.push({ name: m[1], labels, value: Number(m[3]) });
    }
    return out;
  }

  // sample adds one point to each connector's sparklines: the records per second moved by this
  // worker's tasks since the last scrape, and the consumer lag.
  function sample(text) {
    const now = performance.now();
    const byConnector = {};
    for (const s of parseMetrics(text)) {
      const c = s.labels.connector;
      if (!c || !Number.isFinite(s.value)) continue;
      const m = (byConnector[c] ||= { counters: {}, lag: {} });
      if (THROUGHPUT.includes(s.name)) m.counters[s.name] = (m.counters[s.name] || 0) + s.value;
      else if (LAG.test(s.name) && !/_(bucket|sum|count)$/.test(s.name)) m.lag[s.name] = (m.lag[s.name] || 0) + s.value;
    }
    for (const [c, m] of Object.entries(byConnector)) {
      const sp = (model.spark[c] ||= { through: [], lag: [], last: null });
      const counter = THROUGHPUT.find((n) => n in m.counters);
      if (counter !== undefined) {
        const sum = m.counters[counter];
        if (sp.last && sum >= sp.last.sum && now > sp.last.at) push(sp.through, ((sum - sp.last.sum) * 1000) / (now - sp.last.at));
        sp.last = { sum, at: now };
      }
      const lagName = Object.keys(m.lag).sort()[0];
      if (lagName !== undefined) push(sp.lag, m.lag[lagName]);
    }
  }

  function push(a, v) {
    a.push(v);
    if (a.length > SPARK_POINTS) a.shift();
  }

  function sparkline(points, kind, unit) {
    const w = 120, h = 24;
    const NS = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('class', `spark ${kind}`);
    svg.setAttribute('width', w);
    svg.setAttribute('height', h);
    svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
    if (points.length === 0) return el('span', { class: 'muted', dataset: { spark: kind } }, 'no data');
    const max = Math.max(...points, 1);
    // The newest point is at the right edge; a line that is not full yet grows to the left.
    const step = w / (SPARK_POINTS - 1);
    const x0 = w - (points.length - 1) * step;
    const line = document.createElementNS(NS, 'polyline');
    line.setAttribute('points', points.map((v, i) => `${(x0 + i * step).toFixed(1)},${(h - 1 - (v / max) * (h - 2)).toFixed(1)}`).join(' '));
    svg.append(line);
    const last = points[points.length - 1];
    return el('span', { dataset: { spark: kind } }, svg, el('span', { class: 'spark-value' }, `${fmtNum(last)} ${unit}`));
  }

  function fmtNum(v) {
    if (v >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
    if (v >= 1e4) return `${(v / 1e3).toFixed(1)}k`;
    return v >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1);
  }

  // --- Actions -----------------------------------------------------------------------------------

  // The REST API's actions on a connector, and when each makes sense.
  const ACTIONS = [
    { name: 'pause', label: 'Pause', done: 'Paused', method: 'PUT', path: (n) => `/connectors/${enc(n)}/pause`, when: (s) => s !== 'PAUSED' && s !== 'STOPPED' },
    { name: 'resume', label: 'Resume', done: 'Resumed', method: 'PUT', path: (n) => `/connectors/${enc(n)}/resume`, when: (s) => s === 'PAUSED' || s === 'STOPPED' },
    { name: 'restart', label: 'Restart', done: 'Restarted', method: 'POST', path: (n) => `/connectors/${enc(n)}/restart?includeTasks=true&onlyFailed=false`, when: (s) => s !== 'STOPPED' },
    { name: 'stop', label: 'Stop', done: 'Stopped', method: 'PUT', path: (n) => `/connectors/${enc(n)}/stop`, when: (s) => s !== 'STOPPED' },
    { name: 'delete', label: 'Delete', done: 'Deleted', method: 'DELETE', path: (n) => `/connectors/${enc(n)}`, when: () => true, confirm: true },
  ];

  function actionButtons(name, state) {
    if (!model.session || !model.session.may_change) return null;
    const c = model.confirm;
    if (c && c.connector === name) {
      const a = ACTIONS.find((x) => x.name === c.action);
      return el('span', { class: 'actions' },
        `${a.label} ${name}?`,
        el('button', { class: 'danger', dataset: { action: `confirm-${a.name}`, connector: name }, onclick: () => run(name, a) }, `Yes, ${a.label.toLowerCase()}`),
        el('button', { dataset: { action: 'cancel', connector: name }, onclick: () => { model.confirm = null; render(); } }, 'Cancel'));
    }
    return el('span', { class: 'actions' }, ACTIONS.filter((a) => a.when(state)).map((a) => el('button', {
      class: a.confirm ? 'danger' : undefined,
      disabled: model.busy !== '',
      dataset: { action: a.name, connector: name },
      onclick: () => {
        if (a.confirm) { model.confirm = { connector: name, action: a.name }; render(); } else run(name, a);
      },
    }, a.label)));
  }

  async function run(name, a) {
    model.confirm = null;
    model.busy = `${name}/${a.name}`;
    render();
    try {
      await api(a.method, a.path(name));
      flash(`${a.done} ${name}.`);
      if (a.name === 'delete' && location.hash.startsWith('#/connectors/')) location.hash = '#/';
    } catch (e) {
      showError(e.message);
    } finally {
      model.busy = '';
    }
    await tick();
  }

  function flash(msg) {
    const f = $('#flash');
    f.textContent = msg;
    f.hidden = false;
    clearTimeout(flash.timer);
    flash.timer = setTimeout(() => { f.hidden = true; }, 4000);
  }

  function showError(msg) {
    const e = $('#error');
    e.textContent = msg;
    e.hidden = !msg;
  }

  // --- Views -------------------------------------------------------------------------------------

  function stateBadge(s) { return el('span', { class: `state ${s}` }, s); }
  function fmtTime(t) { return t ? new Date(t).toLocaleString() : ''; }
  function taskName(c, t) { return t === undefined || t === null ? c : `${c}-${t}`; }

  function sectionErrors(...parts) {
    const msgs = parts.map((p) => model.errors[p]).filter(Boolean);
    return msgs.length ? el('p', { class: 'muted' }, msgs.join('; ')) : null;
  }

  function viewSignIn() {
    const form = el('form', { class: 'signin', id: 'signin' },
      el('label', { for: 'user' }, 'User'), el('input', { id: 'user', name: 'user', autocomplete: 'username' }),
      el('label', { for: 'password' }, 'Password'), el('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password' }),
      el('label', { for: 'token' }, 'or bearer token'), el('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off' }),
      el('span'), el('button', { type: 'submit', id: 'signin-submit' }, 'Sign in'));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const token = $('#token').value.trim();
      const user = $('#user').value;
      credentials.set(token ? `Bearer ${token}` : `Basic ${btoa(unescape(enc(`${user}:${$('#password').value}`)))}`);
      model.needsSignIn = false;
      model.session = null;
      showError('');
      await tick();
    });
    return el('section', {}, el('h2', {}, 'Sign in'),
      el('p', {}, 'This worker needs credentials. Sign in with a user of its rest.auth.basic.file, or a token of its rest.auth.tokens.file.'), form);
  }

  function viewCluster() {
    const w = model.workers;
    const out = [];
    if (w) {
      const facts = el('dl', { class: 'facts' },
        el('dt', {}, 'This worker'), el('dd', { class: 'mono', id: 'worker-id' }, w.worker_id),
        el('dt', {}, 'Group'), el('dd', { class: 'mono' }, w.group_id || '(standalone)'),
        el('dt', {}, 'Generation'), el('dd', { id: 'generation' }, w.generation >= 0 ? w.generation : 'none (not in a group)'),
        el('dt', {}, 'Leader'), el('dd', { id: 'leader' }, w.leader ? 'this worker' : (w.leader_url ? el('a', { href: `${w.leader_url.replace(/\/$/, '')}/ui` }, w.leader_url) : 'unknown')));
      out.push(el('section', { id: 'cluster' }, el('h2', {}, 'Cluster'), facts,
        w.error ? el('p', { class: 'muted' }, `Not part of the group's work: ${w.error}`) : null,
        viewMembers(w)));
    } else {
      out.push(el('section', { id: 'cluster' }, el('h2', {}, 'Cluster'), sectionErrors('workers')));
    }
    out.push(viewConnectorList());
    out.push(viewChanges(10));
    return out;
  }

  // workFromStatus groups the connectors and tasks by the worker their status names, which every
  // worker knows: the cluster's work as seen from a worker that is not the leader.
  function workFromStatus() {
    const by = {};
    const at = (id) => (by[id] ||= { connectors: [], tasks: [] });
    for (const [name, c] of Object.entries(model.connectors)) {
      if (!c.status) continue;
      if (c.status.connector.worker_id) at(c.status.connector.worker_id).connectors.push(name);
      for (const t of c.status.tasks || []) if (t.worker_id) at(t.worker_id).tasks.push({ connector: name, task: t.id });
    }
    return Object.keys(by).sort().map((id) => ({ url: id, member: '', version: '', a: by[id], refused: '' }));
  }

  function viewMembers(w) {
    const members = w.workers && w.workers.length ? w.workers : null;
    const rows = members
      ? members.map((m) => ({ url: m.url, member: m.member_id, version: m.version, a: m.assignment, refused: m.refused }))
      : workFromStatus();
    return el('div', {},
      el('h3', {}, members ? `Members (${members.length})` : 'Work by worker'),
      members ? null : el('p', { class: 'muted' }, 'From the connectors\' status. Only the leader lists every member with its version, idle ones too; open the console on the leader to see them.'),
      el('table', { id: 'members' },
        el('thead', {}, el('tr', {}, el('th', {}, 'Worker'), members ? el('th', {}, 'Version') : null, el('th', {}, 'Connectors'), el('th', {}, 'Tasks'), el('th', {}, ''))),
        el('tbody', {}, rows.map((m) => el('tr', { dataset: { worker: m.url } },
          el('td', { class: 'mono' }, m.url, m.member ? el('div', { class: 'muted' }, m.member) : null),
          members ? el('td', {}, m.version || '') : null,
          el('td', {}, ((m.a && m.a.connectors) || []).join(', ')),
          el('td', {}, ((m.a && m.a.tasks) || []).map((t) => taskName(t.connector, t.task)).join(', ')),
          el('td', { class: 'muted' }, m.refused ? `refused: ${m.refused}` : ''))))));
  }

  function connectorState(c) { return (c.status && c.status.connector && c.status.connector.state) || 'UNASSIGNED'; }

  function taskSummary(tasks) {
    if (!tasks || !tasks.length) return el('span', { class: 'muted' }, 'no tasks');
    const counts = {};
    for (const t of tasks) counts[t.state] = (counts[t.state] || 0) + 1;
    return el('span', {}, Object.entries(counts).map(([s, n]) => el('span', {}, `${n} `, stateBadge(s), ' ')));
  }

  function viewConnectorList() {
    const names = Object.keys(model.connectors).sort();
    const rows = names.map((name) => {
      const c = model.connectors[name];
      const st = connectorState(c);
      const tasks = (c.status && c.status.tasks) || [];
      const sp = model.spark[name] || { through: [], lag: [] };
      return el('tr', { dataset: { connector: name } },
        el('td', {}, el('a', { href: `#/connectors/${enc(name)}`, class: 'name' }, name)),
        el('td', {}, (c.info && c.info.type) || (c.status && c.status.type) || ''),
        el('td', { class: 'state-cell' }, el('span', { class: `state ${st}` }, st)),
        el('td', {}, taskSummary(tasks)),
        el('td', { class: 'mono' }, [...new Set([c.status && c.status.connector.worker_id, ...tasks.map((t) => t.worker_id)].filter(Boolean))].join(', ')),
        el('td', {}, sparkline(sp.through, 'through', 'rec/s')),
        el('td', {}, sparkline(sp.lag, 'lag', 'behind')),
        el('td', {}, actionButtons(name, st)));
    });
    return el('section', { id: 'connectors' },
      el('h2', {}, `Connectors (${names.length})`), sectionErrors('connectors', 'metrics'),
      names.length === 0 && !model.errors.connectors ? el('p', { class: 'muted' }, 'No connectors yet: create one with POST /connectors, or declare it in an HCL file.') : null,
      names.length ? el('table', {},
        el('thead', {}, el('tr', {}, ['Name', 'Type', 'State', 'Tasks', 'Workers', 'Throughput (this worker)', 'Lag', model.session && model.session.may_change ? 'Actions' : ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows)) : null);
  }

  function maskedConfig(config) {
    return Object.keys(config || {}).sort().map((k) => {
      const v = config[k];
      // A config provider reference (${file:...}) names where the secret is, not the secret.
      const secret = SECRET_KEY.test(k) && !/^\$\{[^}]*\}$/.test(v);
      return el('tr', { dataset: { key: k } }, el('td', { class: 'mono' }, k),
        el('td', { class: secret ? 'masked' : 'mono' }, secret ? '[hidden]' : v));
    });
  }

  function trace(key, text) {
    if (!text) return null;
    let first = text.split('\n')[0];
    if (first.length > 140) first = `${first.slice(0, 140)}…`;
    return el('details', { dataset: { key } }, el('summary', {}, first), el('pre', {}, text));
  }

  function viewConnector(name) {
    const c = model.connectors[name];
    if (!c) {
      return el('section', {}, el('h2', {}, name), el('p', { class: 'muted' },
        model.errors.connectors || 'No such connector (it may have been deleted).'), el('a', { href: '#/' }, 'All connectors'));
    }
    const st = connectorState(c);
    const tasks = (c.status && c.status.tasks) || [];
    const sp = model.spark[name] || { through: [], lag: [] };
    const rec = model.reconciler && model.reconciler.connectors && model.reconciler.connectors[name];
    return [
      el('section', { id: 'connector', dataset: { connector: name } },
        el('h2', {}, name, ' ', el('span', { class: `state ${st}`, id: 'connector-state' }, st)),
        el('dl', { class: 'facts' },
          el('dt', {}, 'Type'), el('dd', {}, (c.info && c.info.type) || ''),
          el('dt', {}, 'Class'), el('dd', { class: 'mono' }, (c.info && c.info.config && c.info.config['connector.class']) || ''),
          el('dt', {}, 'Worker'), el('dd', { class: 'mono' }, (c.status && c.status.connector.worker_id) || ''),
          el('dt', {}, 'Throughput'), el('dd', {}, sparkline(sp.through, 'through', 'rec/s')),
          el('dt', {}, 'Lag'), el('dd', {}, sparkline(sp.lag, 'lag', 'behind')),
          rec ? [el('dt', {}, 'Declared in'), el('dd', { class: 'mono' }, `${rec.declared || ''} (${rec.result})`)] : null),
        trace(`${name}/connector`, c.status && c.status.connector.trace),
        el('h3', {}, 'Actions'), actionButtons(name, st) || el('p', { class: 'muted' }, model.session ? 'Your user may only read.' : '')),
      el('div', { class: 'grid2' },
        el('section', { id: 'tasks' }, el('h2', {}, `Tasks (${tasks.length})`),
          el('table', {}, el('thead', {}, el('tr', {}, el('th', {}, 'Task'), el('th', {}, 'State'), el('th', {}, 'Worker'))),
            el('tbody', {}, tasks.map((t) => el('tr', { dataset: { task: t.id } },
              el('td', { class: 'nowrap' }, taskName(name, t.id)),
              el('td', {}, stateBadge(t.state), trace(`${name}/${t.id}`, t.trace)),
              el('td', { class: 'mono' }, t.worker_id)))))),
        el('section', { id: 'config' }, el('h2', {}, 'Config'),
          el('table', {}, el('tbody', {}, maskedConfig(c.info && c.info.config))))),
      viewChanges(50, name),
    ];
  }

  function viewChanges(limit, only) {
    const list = model.changes.filter((ch) => !only || ch.connector === only).slice(0, limit);
    return el('section', { id: 'changes' },
      el('h2', {}, only ? 'State changes' : 'Recent state changes'), sectionErrors('changes'),
      list.length === 0 ? el('p', { class: 'muted' }, 'None seen yet.') : el('table', {},
        el('thead', {}, el('tr', {}, ['Time', 'Instance', 'State', 'Worker', 'Generation'].map((h) => el('th', {}, h)))),
        el('tbody', {}, list.map((ch) => el('tr', {},
          el('td', { class: 'nowrap' }, fmtTime(ch.time)),
          el('td', { class: 'nowrap' }, el('a', { href: `#/connectors/${enc(ch.connector)}` }, taskName(ch.connector, ch.task))),
          el('td', {}, stateBadge(ch.state), trace(`change/${ch.time}/${ch.connector}/${ch.task}`, ch.trace)),
          el('td', { class: 'mono' }, ch.worker_id || ''),
          el('td', { class: 'num' }, ch.generation))))));
  }

  function viewReconciler() {
    const r = model.reconciler;
    if (!r) return el('section', { id: 'reconciler' }, el('h2', {}, 'HCL reconciler'), sectionErrors('reconciler'));
    if (r.message && !r.dir) return el('section', { id: 'reconciler' }, el('h2', {}, 'HCL reconciler'), el('p', {}, r.message));
    const conns = Object.keys(r.connectors || {}).sort();
    return el('section', { id: 'reconciler' },
      el('h2', {}, 'HCL reconciler'),
      el('dl', { class: 'facts' },
        el('dt', {}, 'Directory'), el('dd', { class: 'mono' }, r.dir),
        el('dt', {}, 'Owner'), el('dd', { class: 'mono' }, r.owner || ''),
        el('dt', {}, 'Active'), el('dd', {}, r.active ? 'yes (this worker leads)' : 'no (the leader reconciles)'),
        el('dt', {}, 'Drift'), el('dd', {}, `${r.drift}, ${r.drift_count} REST change(s) to owned connectors seen`),
        el('dt', {}, 'Prune'), el('dd', {}, r.prune ? 'yes' : 'no'),
        el('dt', {}, 'Last run'), el('dd', {}, r.last_run ? `${fmtTime(r.last_run)} (${r.last_run_ms.toFixed(1)} ms, run ${r.runs})` : 'not yet'),
        el('dt', {}, 'Files'), el('dd', { class: 'mono' }, (r.files || []).join(', ') || 'none')),
      r.error ? el('p', { class: 'muted' }, r.error) : null,
      (r.file_errors || []).length ? [el('h3', {}, 'Problems in the files (the last valid desired state stays in force)'),
        el('ul', { id: 'file-errors' }, r.file_errors.map((p) => el('li', { class: 'mono' },
          `${p.file}${p.line ? `:${p.line}` : ''}${p.column ? `:${p.column}` : ''}: ${p.message}`)))] : null,
      el('h3', {}, `Declared connectors (${conns.length})`),
      el('table', {}, el('thead', {}, el('tr', {}, ['Connector', 'Declared', 'State', 'Result', 'Last action', 'Message', 'Updated'].map((h) => el('th', {}, h)))),
        el('tbody', {}, conns.map((n) => {
          const c = r.connectors[n];
          return el('tr', { dataset: { connector: n } },
            el('td', {}, el('a', { href: `#/connectors/${enc(n)}` }, n)), el('td', { class: 'mono' }, c.declared || ''),
            el('td', {}, c.state || ''), el('td', {}, c.result), el('td', {}, c.last_action || ''),
            el('td', {}, c.message || '', c.next_retry ? ` (attempt ${c.attempts}, next ${fmtTime(c.next_retry)})` : ''),
            el('td', {}, fmtTime(c.updated)));
        }))));
  }

  function renderHeader() {
    const s = model.server;
    $('#server').textContent = s ? `${s.version}${s.kafka_cluster_id ? ` · cluster ${s.kafka_cluster_id}` : ''}` : '';
    const ses = model.session;
    const box = el('span', {});
    if (ses) {
      box.append(el('span', { id: 'who' }, ses.auth ? `${ses.user || 'anonymous'} (${ses.role})` : 'no authentication'));
      if (ses.auth && credentials.get()) {
        box.append(el('button', { id: 'signout', onclick: () => { credentials.clear(); model.session = null; model.connectors = {}; tick(); } }, 'Sign out'));
      } else if (ses.auth) { // an anonymous reader may sign in to do more
        box.append(el('button', { id: 'signin-open', onclick: () => { model.needsSignIn = true; render(); } }, 'Sign in'));
      }
    }
    morphChildren($('#session'), box);
    const view = currentView().view;
    for (const a of document.querySelectorAll('header nav a')) a.classList.toggle('current', a.dataset.view === view);
  }

  function currentView() {
    const h = decodeURIComponent(location.hash.replace(/^#\/?/, ''));
    if (h.startsWith('connectors/')) return { view: 'connector', name: h.slice('connectors/'.length) };
    if (h === 'changes' || h === 'reconciler') return { view: h };
    return { view: 'cluster' };
  }

  function render() {
    renderHeader();
    const main = $('#main');
    if (model.needsSignIn) {
      if (!$('#signin')) main.replaceChildren(viewSignIn());
      return;
    }
    const v = currentView();
    let content;
    switch (v.view) {
      case 'connector': content = viewConnector(v.name); break;
      case 'changes': content = viewChanges(500); break;
      case 'reconciler': content = viewReconciler(); break;
      default: content = viewCluster();
    }
    morphChildren(main, el('div', {}, content));
    document.body.dataset.loaded = 'true';
  }

  // morph makes the page's node from equal to the freshly built node to, changing only what
  // differs, so that a refresh does not take away the button under the mouse, the text being
  // selected or the trace the user opened. Elements are the same when their tag, id and data-*
  // attributes are: their listeners then do the same thing.
  function morph(from, to) {
    if (from.nodeType !== to.nodeType || from.nodeName !== to.nodeName ||
        (from.nodeType === Node.ELEMENT_NODE && !sameElement(from, to))) {
      from.replaceWith(to);
      return;
    }
    if (from.nodeType !== Node.ELEMENT_NODE) {
      if (from.nodeValue !== to.nodeValue) from.nodeValue = to.nodeValue;
      return;
    }
    for (const a of [...from.attributes]) {
      // Whether a trace is open is the user's choice.
      if (!to.hasAttribute(a.name) && !(a.name === 'open' && from.nodeName === 'DETAILS')) from.removeAttribute(a.name);
    }
    for (const a of [...to.attributes]) if (from.getAttribute(a.name) !== a.value) from.setAttribute(a.name, a.value);
    morphChildren(from, to);
  }

  function morphChildren(from, to) {
    const have = [...from.childNodes], want = [...to.childNodes];
    want.forEach((n, i) => (i < have.length ? morph(have[i], n) : from.append(n)));
    for (const n of have.slice(want.length)) n.remove();
  }

  function sameElement(a, b) {
    return a.id === b.id && JSON.stringify({ ...a.dataset }) === JSON.stringify({ ...b.dataset });
  }

  // tick refreshes and renders now; the loop does it every REFRESH_MS. A tick asked for while
  // one runs joins it.
  let running = null;
  async function tick() {
    if (!running) {
      running = (async () => {
        try {
          while (!model.needsSignIn && !(await refresh()));
        } catch (e) {
          showError(e.message);
        }
        render();
      })();
      running.finally(() => { running = null; });
    }
    return running;
  }

  window.addEventListener('error', (e) => showError(`console error: ${e.message}`));
  window.addEventListener('unhandledrejection', (e) => showError(`console error: ${e.reason}`));
  window.addEventListener('hashchange', () => { model.confirm = null; render(); });
  tick();
  setInterval(tick, REFRESH_MS);
})();
