// SPDX-License-Identifier: Apache-2.0
// The kube-verdict console: plain browser JavaScript, no framework and no build step. Every name
// that comes from the cluster is written with textContent or as an attribute value, never as HTML.
'use strict';
(function () {
  const SVG = 'http://www.w3.org/2000/svg';
  const MAX_ROWS = 500;           // flow table rows kept (newest first)
  const POD_NODES = 150;          // up to this many pods the map shows pods, beyond it workloads
  const WORKLOAD_NODES = 400;     // beyond this many workloads the map shows namespaces
  const NAMESPACES_PER_PAGE = 24; // namespace groups per map page
  const REFRESH_MS = 10000;
  const BEND = { allowed: -1, denied: 1, 'would-deny': 1.8, 'would-allow': -1.8 };

  const state = {
    pods: [], podsTotal: 0, byIp: new Map(), flows: [], edges: new Map(),
    page: 0, selected: null, lost: 0, token: sessionStorage.getItem('kv-token') || '',
  };

  const $ = (id) => document.getElementById(id);
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function headers() { return state.token ? { Authorization: 'Bearer ' + state.token } : {}; }

  async function api(path) {
    const r = await fetch(path, { headers: headers(), cache: 'no-store' });
    const body = await r.json().catch(() => ({ code: 'HTTP_' + r.status, message: r.statusText }));
    if (!r.ok) throw new Error((body.code || r.status) + ': ' + (body.message || ''));
    return body;
  }
  function notice(text) {
    const n = $('notice');
    n.hidden = !text;
    n.textContent = text || '';
  }

  // ---- names of pods, workloads and namespaces -------------------------------------------
  function podKey(id, ip) {
    if (id && id.pod) return id.namespace + '/' + id.pod;
    const p = state.byIp.get(ip);
    return p ? p.namespace + '/' + p.name : ip;
  }
  function workloadOf(p) {
    const l = p.labels || {};
    const name = l['app.kubernetes.io/name'] || l['app'] || l['k8s-app'] ||
      p.name.replace(/-[a-z0-9]{8,10}-[a-z0-9]{5}$/, '').replace(/-[a-z0-9]{5}$/, '');
    return p.namespace + '/' + name;
  }
  // What one circle stands for: decided on the pods the namespace filter leaves, so choosing a
  // namespace of a big cluster shows its workloads or pods.
  function grouping() {
    const ns = $('f-namespace').value.trim();
    const pods = ns ? state.pods.filter((p) => p.namespace === ns) : state.pods;
    if (pods.length <= POD_NODES) return 'pod';
    const workloads = new Set(pods.map(workloadOf));
    return workloads.size <= WORKLOAD_NODES ? 'workload' : 'namespace';
  }
  // The map node a pod key (namespace/name, or a bare address) belongs to.
  function nodeOf(key, mode) {
    if (mode === 'pod' || !key.includes('/')) return key;
    const p = state.podsByKey.get(key);
    if (mode === 'namespace') return key.split('/')[0] + '/*';
    return p ? workloadOf(p) + '*' : key;
  }

  // ---- pods and nodes ------------------------------------------------------------------------
  async function loadPods() {
    const all = [];
    let offset = 0, total = 0;
    do {
      const page = await api('/api/pods?offset=' + offset);
      total = page.total;
      all.push(...page.pods);
      offset += page.pods.length;
      if (page.pods.length === 0) break;
    } while (offset < total);
    state.pods = all;
    state.podsTotal = total;
    state.byIp = new Map();
    state.podsByKey = new Map();
    for (const p of all) {
      state.podsByKey.set(p.namespace + '/' + p.name, p);
      for (const ip of p.ips) state.byIp.set(ip, p);
    }
    const list = $('namespaces');
    clear(list);
    for (const ns of [...new Set(all.map((p) => p.namespace))].sort()) {
      const o = el('option'); o.value = ns; list.appendChild(o);
    }
    drawMap();
    // When the first map of every pod was on screen (the frame after it was built; ms since
    // navigation): what bin/bench-console-load reads.
    if (!state.marked) {
      state.marked = true;
      requestAnimationFrame(() => setTimeout(() => performance.mark('kv-map-drawn'), 0));
    }
  }

  async function loadNodes() {
    const r = await api('/api/nodes');
    const rows = $('node-rows');
    clear(rows);
    let inSync = 0;
    for (const n of r.nodes || []) {
      if (n.inSync) inSync++;
      const tr = el('tr');
      tr.dataset.node = n.node;
      for (const v of [n.node, yes(n.connected), yes(n.inSync), n.sentSequence, n.appliedSequence, n.lag,
        n.programmingLatencyP50 || '', n.programmingLatencyP99 || '', n.agentVersion || '',
        n.agentStartTime || '', ago(n.lastContact)]) {
        tr.appendChild(el('td', v));
      }
      tr.lastChild.title = n.lastContact || '';
      tr.children[2].className = n.inSync ? 'good' : 'bad';
      rows.appendChild(tr);
    }
    $('nodes-summary').textContent = (r.nodes || []).length + ' nodes, ' + inSync + ' in sync; source revision ' +
      (r.sourceRevision || '-');
    return r;
  }
  function yes(b) { return b ? 'yes' : 'no'; }
  // "5m43s ago", as `kube-verdict status` says it (by this browser's clock; the time is the title).
  // Idle agents send a heartbeat every 20 s by default, so a growing age means a silent agent.
  function ago(iso) {
    if (!iso) return '';
    const ms = Date.parse(iso);
    if (Number.isNaN(ms)) return iso;
    const s = Math.max(0, Math.floor((Date.now() - ms) / 1000));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    return (h ? h + 'h' : '') + (h || m ? m + 'm' : '') + (s % 60) + 's ago';
  }

  // ---- the flow stream -------------------------------------------------------------------------
  function status(text, cls) {
    const s = $('stream-status');
    s.textContent = text;
    s.className = 'status ' + (cls || '');
  }

  let backoff = 1000;
  let reconnecting = false;
  async function stream() {
    let planned = false, refused = null;
    try {
      const r = await fetch('/api/flows', { headers: headers(), cache: 'no-store' });
      if (!r.ok) {
        const body = await r.json().catch(() => ({}));
        refused = (body.code || r.status) + ': ' + (body.message || r.statusText);
      } else {
        status(reconnecting ? 'live (reconnected)' : 'live', 'live');
        reconnecting = false;
        backoff = 1000;
        const reader = r.body.getReader();
        const decoder = new TextDecoder();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let cut;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const ev = parseEvent(block);
            if (ev.event === 'verdict') addFlow(JSON.parse(ev.data));
            else if (ev.event === 'lost') lost(JSON.parse(ev.data).count);
            else if (ev.event === 'rotate') planned = true;
            else if (ev.event === 'failure') { const f = JSON.parse(ev.data); refused = f.code + ': ' + f.message; }
          }
        }
      }
    } catch (e) {
      // a network error: said below
    }
    if (planned && !refused) {
      setTimeout(stream, 0);
      return;
    }
    reconnecting = true;
    const wait = refused ? 5000 : backoff;
    status((refused ? 'refused (' + refused + ')' : 'disconnected') + ': reconnecting in ' +
      Math.round(wait / 1000) + ' s', 'down');
    backoff = Math.min(backoff * 2, 15000);
    setTimeout(stream, wait);
  }
  function parseEvent(block) {
    const ev = { event: 'message', data: '' };
    for (const line of block.split('\n')) {
      const i = line.indexOf(':');
      if (i <= 0) continue;
      const field = line.slice(0, i), value = line.slice(i + 1).replace(/^ /, '');
      if (field === 'event') ev.event = value;
      else if (field === 'data') ev.data += value;
    }
    return ev;
  }
  function lost(count) {
    state.lost = Number(count) || 0;
    $('map-summary').dataset.lost = state.lost;
    summary();
  }

  // One verdict event as the table and the map use it.
  function flowOf(v) {
    const e = v.explanation || {};
    const t = e.tuple || {};
    const verdict = e.verdict === 'VERDICT_DENY' ? 'denied' : 'allowed';
    // Where a staged policy would decide otherwise (the agent's would-be verdict): the edge's third kind.
    const s = e.staged && e.staged.verdict ? e.staged : null;
    const would = !s ? '' : s.verdict === 'VERDICT_DENY' ? 'would-deny' : 'would-allow';
    return {
      time: v.time || '', node: v.node || '', verdict, would,
      staged: s ? { policy: s.stagedPolicy || null, rule: s.ruleId || '', direction: s.direction || '', reason: s.reason || '' } : null,
      src: podKey(e.source, t.srcIp), dst: podKey(e.destination, t.dstIp),
      srcIp: t.srcIp || '', dstIp: t.dstIp || '', port: t.dstPort || 0,
      protocol: ({ 6: 'TCP', 17: 'UDP', 132: 'SCTP' })[t.protocol] || String(t.protocol || ''),
      deciding: deciding(e, verdict),
    };
  }
  // The map's kind of a flow: what happened, unless a staged policy would change it.
  function kindOf(f) { return f.would || f.verdict; }
  function stagedText(f) {
    if (!f.staged) return '';
    const p = f.staged.policy;
    return (p ? p.name : '(replaced policy)') + (f.staged.rule ? ' ' + f.staged.rule : '') +
      (f.staged.direction ? ' (' + f.staged.direction + ')' : '');
  }
  // The rule that decided (the denying direction's for a deny), else the isolating policies.
  function deciding(e, verdict) {
    const dirs = [['egress', e.egress || {}], ['ingress', e.ingress || {}]];
    const pick = dirs.find(([, d]) => d.evaluated && (verdict === 'denied' ? d.verdict === 'VERDICT_DENY' : d.policy));
    if (!pick) return verdict === 'allowed' ? 'not isolated' : '';
    const [name, d] = pick;
    if (d.policy && d.policy.name) return name + ': ' + d.policy.name + ' ' + (d.ruleId || '');
    return name + ': ' + (d.reason || 'no rule matched');
  }

  function addFlow(v) {
    const f = flowOf(v);
    state.flows.unshift(f);
    if (state.flows.length > MAX_ROWS) state.flows.pop();
    if (matches(f)) {
      $('flow-rows').insertBefore(row(f), $('flow-rows').firstChild);
      while ($('flow-rows').children.length > MAX_ROWS) $('flow-rows').lastChild.remove();
    }
    drawMap();
  }
  function filters() {
    return {
      ns: $('f-namespace').value.trim(), pod: $('f-pod').value.trim(), verdict: $('f-verdict').value,
      policy: $('f-policy').value.trim(), port: $('f-port').value.trim(),
    };
  }
  function matches(f, q) {
    q = q || filters();
    if (q.verdict === 'staged' ? !f.would : q.verdict.startsWith('would-') ? f.would !== q.verdict :
      q.verdict && f.verdict !== q.verdict) return false;
    if (q.ns && !(f.src.startsWith(q.ns + '/') || f.dst.startsWith(q.ns + '/'))) return false;
    if (q.pod && !(f.src.includes(q.pod) || f.dst.includes(q.pod))) return false;
    if (q.policy && !(f.deciding.includes(q.policy) || stagedText(f).includes(q.policy))) return false;
    if (q.port && String(f.port) !== q.port) return false;
    return true;
  }
  function row(f) {
    const tr = el('tr');
    tr.className = 'flow ' + f.verdict;
    for (const [v, cls] of [[f.time, ''], [f.verdict, 'verdict-' + f.verdict], [f.src, ''], [f.dst, ''],
      [f.port + '/' + f.protocol, ''], [f.node, ''], [f.deciding, ''], [f.would, f.would ? 'verdict-' + f.would : ''],
      [stagedText(f), '']]) {
      tr.appendChild(el('td', v, cls));
    }
    tr.addEventListener('click', () => explain(f));
    return tr;
  }
  function redrawTable() {
    const rows = $('flow-rows');
    clear(rows);
    const q = filters();
    for (const f of state.flows) if (matches(f, q)) rows.appendChild(row(f));
  }

  // ---- the map: namespaces as boxes, pods (or workloads) as circles, flows as edges ----------------
  // The legend's counts: flows of each kind that the filters leave.
  function legend(kinds) {
    for (const [kind, n] of Object.entries(kinds)) {
      const item = document.querySelector('#legend [data-kind="' + kind + '"] .legend-count');
      if (item) item.textContent = String(n);
    }
  }
  function summary() {
    const mode = grouping();
    $('map-summary').textContent = state.podsTotal + ' pods (' + (mode === 'pod' ? 'one circle each' :
      'grouped by ' + mode) + '), ' + state.flows.length + ' flows' + (state.lost ? ', ' + state.lost + ' lost' : '');
  }
  function drawMap() {
    const mode = grouping();
    const q = filters();
    const members = new Map(); // namespace -> sorted map node names
    for (const p of state.pods) {
      const ns = p.namespace;
      if (q.ns && ns !== q.ns) continue;
      if (!members.has(ns)) members.set(ns, new Set());
      members.get(ns).add(nodeOf(p.namespace + '/' + p.name, mode));
    }
    const namespaces = [...members.keys()].sort();
    const pages = Math.max(1, Math.ceil(namespaces.length / NAMESPACES_PER_PAGE));
    state.page = Math.min(state.page, pages - 1);
    $('page-label').textContent = 'namespaces page ' + (state.page + 1) + '/' + pages;
    $('map-pager').hidden = pages === 1;
    const shown = namespaces.slice(state.page * NAMESPACES_PER_PAGE, (state.page + 1) * NAMESPACES_PER_PAGE);

    const map = $('map');
    clear(map);
    const pos = new Map();
    const cols = Math.max(1, Math.min(4, Math.ceil(Math.sqrt(shown.length))));
    const boxW = 300, gap = 40, cellW = 150, cellH = 56;
    let x = gap, y = gap, rowH = 0, col = 0;
    const boxes = [];
    for (const ns of shown) {
      const names = [...members.get(ns)].sort();
      // One column up to eight members (edges between namespaces then fan out), two beyond.
      const perRow = names.length <= 8 ? 1 : 2;
      const h = 30 + Math.ceil(names.length / perRow) * cellH;
      boxes.push({ ns, names, x, y, h });
      names.forEach((n, i) => pos.set(n, {
        x: x + (perRow === 1 ? boxW / 2 : 75 + (i % perRow) * cellW), y: y + 48 + Math.floor(i / perRow) * cellH,
      }));
      rowH = Math.max(rowH, h);
      if (++col === cols) { col = 0; x = gap; y += rowH + gap; rowH = 0; } else { x += boxW + gap; }
    }
    const width = cols * (boxW + gap) + gap, height = y + rowH + gap;
    map.setAttribute('width', width);
    map.setAttribute('height', Math.max(height, 120));
    map.setAttribute('viewBox', '0 0 ' + width + ' ' + Math.max(height, 120));
    for (const b of boxes) {
      map.appendChild(svg('rect', { x: b.x, y: b.y, width: boxW, height: b.h, rx: 8, class: 'ns-box' }));
      const label = svg('text', { x: b.x + 10, y: b.y + 18, class: 'ns-label' });
      label.textContent = b.ns;
      map.appendChild(label);
    }
    // Edges, aggregated per (source node, destination node, kind: verdict or would-be verdict).
    const edges = new Map();
    const kinds = { allowed: 0, denied: 0, 'would-deny': 0, 'would-allow': 0 };
    for (const f of state.flows) {
      if (!matches(f, q)) continue;
      const a = nodeOf(f.src, mode), b = nodeOf(f.dst, mode);
      const kind = kindOf(f);
      const key = a + '\u0000' + b + '\u0000' + kind;
      const e = edges.get(key) || { a, b, kind, verdict: f.verdict, count: 0, last: f, ports: new Set(), staged: new Set() };
      e.count++;
      e.ports.add(f.port + '/' + f.protocol);
      if (f.would) e.staged.add(stagedText(f));
      edges.set(key, e);
      kinds[kind]++;
    }
    legend(kinds);
    state.edges = edges;
    const edgeLayer = svg('g', {});
    map.appendChild(edgeLayer);
    for (const [key, e] of edges) {
      const p = pos.get(e.a), r = pos.get(e.b);
      if (!p || !r) continue;
      // Curved by distance, denied and allowed to opposite sides, so the two edges of a pair stay apart.
      // Would-be edges bend further out than the enforced ones of their verdict.
      const bend = BEND[e.kind] * Math.max(14, 0.12 * Math.hypot(r.x - p.x, r.y - p.y));
      const mx = (p.x + r.x) / 2 + bend, my = (p.y + r.y) / 2 - bend;
      const d = p === r ? `M ${p.x} ${p.y - 8} c 30 -40 50 10 8 8` : `M ${p.x} ${p.y} Q ${mx} ${my} ${r.x} ${r.y}`;
      const path = svg('path', {
        d, class: 'edge ' + e.kind + (state.selected === key ? ' selected' : ''),
        'stroke-width': Math.min(8, 1.5 + Math.log2(e.count)), 'data-from': e.a, 'data-to': e.b,
        'data-verdict': e.verdict, 'data-kind': e.kind, 'data-count': e.count,
      });
      const title = svg('title', {});
      title.textContent = e.a + ' → ' + e.b + ': ' + e.verdict + (e.kind !== e.verdict ? ', ' + e.kind.replace('-', ' ') +
        ' by staged ' + [...e.staged].join('; ') : '') + ' ×' + e.count + ' (' + [...e.ports].join(', ') + '), last ' + e.last.time;
      path.appendChild(title);
      path.addEventListener('click', () => { state.selected = key; explain(e.last); drawMap(); });
      edgeLayer.appendChild(path);
      const count = svg('text', { x: p === r ? p.x + 30 : (p.x + r.x) / 2 + bend / 2, y: p === r ? p.y - 24 : (p.y + r.y) / 2 - bend / 2,
        class: 'edge-count ' + e.kind, 'text-anchor': 'middle' });
      count.textContent = '×' + e.count;
      edgeLayer.appendChild(count);
    }
    for (const [name, p] of pos) {
      const group = name.endsWith('*');
      const c = svg('circle', { cx: p.x, cy: p.y, r: 9, class: 'pod' + (group ? ' group' : ''), 'data-name': name });
      const title = svg('title', {});
      title.textContent = name;
      c.appendChild(title);
      if (!group && name.includes('/')) c.addEventListener('click', () => podPanel(name));
      map.appendChild(c);
      const label = svg('text', { x: p.x, y: p.y + 22, 'text-anchor': 'middle', class: 'pod-label' });
      label.textContent = name.length > 24 ? name.slice(0, 23) + '…' : name;
      map.appendChild(label);
    }
    summary();
  }

  // ---- the side panel: a pod, or an explanation ---------------------------------------------------
  function panel(title) {
    const p = $('panel');
    clear(p);
    p.appendChild(el('h2', title));
    return p;
  }
  function list(parent, items) {
    const ul = el('ul');
    for (const i of items) ul.appendChild(el('li', i));
    parent.appendChild(ul);
  }

  async function podPanel(name) {
    const p = panel(name);
    p.dataset.kind = 'pod';
    try {
      const r = await api('/api/pod?name=' + encodeURIComponent(name));
      const d = r.description, n = r.node;
      const enforcing = n.connected && n.inSync && Number(n.lag || 0) === 0;
      p.appendChild(el('p', 'node ' + d.node + ' · ' + (d.ips || []).join(', ')));
      const s = el('p', enforcing ? 'the node enforces its current state' :
        'the node does NOT enforce its current state (' + (n.connected ? 'lag ' + (n.lag || 0) : 'agent not connected') + ')',
      enforcing ? 'good' : 'bad');
      s.id = 'pod-enforcing';
      p.appendChild(s);
      p.appendChild(el('h3', 'labels'));
      list(p, Object.entries(d.labels || {}).map(([k, v]) => k + '=' + v));
      p.appendChild(el('h3', 'what selects it, by tier'));
      const tiers = el('ul');
      for (const t of d.tiers || []) {
        tiers.appendChild(line('li', ['tier ' + t.name + ': ingress ', ...links(t.name, t.ingressPolicies || []),
          '; egress ', ...links(t.name, t.egressPolicies || [])]));
      }
      if (!tiers.children.length) tiers.appendChild(el('li', 'no policy selects it: not isolated'));
      p.appendChild(tiers);
      p.appendChild(el('h3', 'where it is a peer'));
      const uses = [];
      for (const m of d.memberOf || []) {
        for (const u of m.usedBy || []) {
          uses.push((u.policy ? u.policy.name : '') + ' ' + u.ruleId + ' (' + u.direction + (u.namedPort ? ', named port' : '') +
            '): ' + (m.description || m.ipSetId));
        }
      }
      list(p, uses.length ? uses : ['no rule names it as a peer']);
    } catch (e) {
      p.appendChild(el('p', String(e.message), 'bad'));
    }
  }

  // A link to a policy's YAML as the control plane holds it, by the id the trace names it with.
  function policyLink(tier, name) {
    const a = el('a', name, 'policy-link');
    a.href = '#';
    a.dataset.tier = tier;
    a.dataset.name = name;
    a.addEventListener('click', (ev) => { ev.preventDefault(); showPolicy(tier, name); });
    return a;
  }
  function line(tag, parts, cls) {
    const e = el(tag, null, cls);
    for (const part of parts) e.appendChild(typeof part === 'string' ? document.createTextNode(part) : part);
    return e;
  }
  function links(tier, names) {
    const out = [];
    names.forEach((n, i) => { if (i) out.push(', '); out.push(policyLink(tier, n)); });
    return out.length ? out : ['-'];
  }
  async function showPolicy(tier, name) {
    let box = $('policy-view');
    if (!box) {
      box = el('div', null, 'policy-view');
      box.id = 'policy-view';
      $('panel').appendChild(box);
    }
    clear(box);
    box.appendChild(el('h3', 'policy ' + name + ' (tier ' + tier + ')'));
    try {
      const r = await api('/api/policy?' + new URLSearchParams({ tier, name }));
      const head = el('p', r.kind + ' ' + (r.namespace ? r.namespace + '/' : '') + r.name + (r.staged ? ' (staged)' : '') +
        (r.resourceVersion ? ' · resourceVersion ' + r.resourceVersion : '') + ' · as the control plane last applied it');
      head.id = 'policy-head';
      box.appendChild(head);
      const pre = el('pre', r.yaml);
      pre.id = 'policy-yaml';
      box.appendChild(pre);
    } catch (e) {
      const bad = el('p', String(e.message), 'bad');
      bad.id = 'policy-error';
      box.appendChild(bad);
    }
    box.scrollIntoView({ block: 'nearest' });
  }

  async function explain(f) {
    const p = panel(f.src + ' → ' + f.dst + ' ' + f.port + '/' + f.protocol);
    p.dataset.kind = 'explain';
    try {
      const qs = new URLSearchParams({ src: f.srcIp, dst: f.dstIp, port: String(f.port || 80), protocol: f.protocol || 'TCP' });
      const r = await api('/api/explain?' + qs);
      const e = r.explanation;
      const v = el('p', e.verdict === 'VERDICT_DENY' ? 'DENIED' : 'ALLOWED',
        e.verdict === 'VERDICT_DENY' ? 'verdict-denied' : 'verdict-allowed');
      v.id = 'explain-verdict';
      p.appendChild(v);
      for (const [name, d] of [['egress', e.egress || {}], ['ingress', e.ingress || {}]]) {
        p.appendChild(el('h3', name));
        if (!d.evaluated) { list(p, [d.reason || 'not evaluated']); continue; }
        const ul = el('ul');
        for (const t of d.tiers || []) {
          ul.appendChild(line('li', ['tier ' + t.tier + (t.decided ? ' (decided)' : ' (passed)') + ': ',
            ...links(t.tier, t.policies || [])]));
        }
        if (!d.isolated) ul.appendChild(el('li', 'not isolated'));
        p.appendChild(ul);
        if (d.policy && d.policy.name) {
          p.appendChild(line('p', ['deciding: ', policyLink(d.policy.tier, d.policy.name), ' ' + (d.ruleId || '')], 'deciding'));
        } else if (d.isolated) {
          p.appendChild(el('p', 'deciding: the tier default', 'deciding'));
        }
      }
      if (f.staged) {
        // The agent's would-be verdict of this very flow (Explain answers the enforced one only).
        const s = f.staged;
        const staged = line('p', [f.would.replace('-', ' ') + ' by staged ',
          s.policy ? policyLink(s.policy.tier, s.policy.name) : '(a replaced policy)',
          (s.rule ? ' ' + s.rule : '') + (s.direction ? ' (' + s.direction + ')' : '')], 'verdict-' + f.would);
        staged.id = 'explain-staged';
        p.appendChild(staged);
        if (s.reason) p.appendChild(el('p', s.reason, 'hint'));
      }
      p.appendChild(el('h3', 'kube-verdict explain'));
      const pre = el('pre', r.text);
      pre.id = 'explain-text';
      p.appendChild(pre);
    } catch (e) {
      p.appendChild(el('p', String(e.message), 'bad'));
    }
  }

  // ---- matrix ------------------------------------------------------------------------------------
  async function matrix(ev) {
    if (ev) ev.preventDefault();
    const t = $('matrix');
    clear(t);
    const qs = new URLSearchParams({ namespaces: $('m-namespaces').value, port: $('m-port').value, protocol: $('m-protocol').value });
    try {
      const m = await api('/api/matrix?' + qs);
      const head = el('tr');
      head.appendChild(el('th', 'from \\ to'));
      for (const to of m.pods) head.appendChild(el('th', to, 'col'));
      t.appendChild(head);
      for (const from of m.pods) {
        const tr = el('tr');
        tr.appendChild(el('th', from));
        for (const to of m.pods) {
          const ok = m.allowed[from][to];
          const td = el('td', ok ? '.' : 'X', ok ? 'allowed' : 'denied');
          td.dataset.from = from;
          td.dataset.to = to;
          tr.appendChild(td);
        }
        t.appendChild(tr);
      }
      $('matrix-summary').textContent = m.pods.length + ' pods, ' + m.port + '/' + m.protocol + ' ("." allowed, "X" denied)';
    } catch (e) {
      $('matrix-summary').textContent = String(e.message);
    }
  }

  // ---- wiring --------------------------------------------------------------------------------------
  function show(view) {
    for (const b of document.querySelectorAll('.tab')) b.classList.toggle('active', b.dataset.view === view);
    for (const s of document.querySelectorAll('.view')) s.hidden = s.id !== 'view-' + view;
    if (view === 'nodes') loadNodes().catch((e) => notice(e.message));
  }
  async function refresh() {
    try {
      await loadPods();
      if (!$('view-nodes').hidden) await loadNodes();
      notice('');
    } catch (e) {
      notice('cannot read the control plane: ' + e.message +
        (String(e.message).startsWith('UNAUTHENTICATED') ? ' (give a bearer token above, or use kubectl port-forward)' : ''));
    }
  }

  document.addEventListener('DOMContentLoaded', () => {
    for (const b of document.querySelectorAll('.tab')) b.addEventListener('click', () => show(b.dataset.view));
    for (const id of ['f-namespace', 'f-pod', 'f-verdict', 'f-policy', 'f-port']) {
      $(id).addEventListener('input', () => { redrawTable(); drawMap(); });
    }
    $('filters').addEventListener('submit', (e) => e.preventDefault());
    $('matrix-form').addEventListener('submit', matrix);
    $('page-prev').addEventListener('click', () => { state.page = Math.max(0, state.page - 1); drawMap(); });
    $('page-next').addEventListener('click', () => { state.page++; drawMap(); });
    $('token').value = state.token;
    $('token-use').addEventListener('click', () => {
      state.token = $('token').value.trim();
      sessionStorage.setItem('kv-token', state.token);
      refresh();
    });
    refresh();
    stream();
    setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);
  });
})();
