// SPDX-License-Identifier: BSD-2-Clause
// The fabric map (docs/map.md): /api/v1/map drawn on a canvas, switches
// by level (the highest on top), each leaf's hosts as one tile under it,
// the cables between two switches as one line per pair. It shows what
// the API says and nothing else, polls it, and says how old it is.
'use strict';

(function () {
  const POLL_MS = 2000;
  const COLOURS = {
    ok: '#78909c', degraded: '#f9a825', failing: '#e65100', down: '#c62828',
  };
  const BUSY = '#1565c0';
  const PATH = '#8e24aa';
  const JOB = '#00897b';
  const ORDER = ['ok', 'degraded', 'failing', 'down'];

  const canvas = document.getElementById('map');
  const ctx = canvas.getContext('2d');
  const ageEl = document.getElementById('age');
  const countsEl = document.getElementById('counts');
  const details = document.getElementById('details');
  const detailsBody = document.getElementById('details-body');
  const traceStatus = document.getElementById('trace-status');

  let map = null; // the last /api/v1/map
  let lay = null; // its layout
  let lastOk = 0; // Date.now() of the last answer
  let failing = null; // why the last poll failed
  let tr = { x: 0, y: 0, k: 1 }; // zoom
  let fitted = false;
  let path = null; // { switches: Set of GUIDs, pairs: Set, order: [names] }
  let selected = null;
  let overlay = null; // { busy: Map pair -> routes, breaks: Set of GUIDs }
  let job = null; // { id, leaves: Set of switch GUIDs, pairs: Set }
  const started = performance.now();
  let drawnMs = -1;

  function worse(a, b) {
    return ORDER.indexOf(a) > ORDER.indexOf(b) ? a : b;
  }

  // ---- sign-in: with a token set, trace and ping (everything, with
  // --http-token-everywhere) answer 401 until the page has a session
  // cookie. The page then asks for the token once, POSTs it to /signin
  // (never in an address) and goes on with what it was asked to do. ----

  const signinForm = document.getElementById('signin');
  const signinStatus = document.getElementById('signin-status');
  let signingIn = null; // the sign-in under way: every 401 waits for it

  function signIn() {
    if (signingIn) return signingIn;
    signingIn = new Promise(function (resolve) {
      signinForm.hidden = false;
      document.getElementById('signin-token').focus();
      signinForm.onsubmit = function (ev) {
        ev.preventDefault();
        signinStatus.textContent = 'signing in';
        fetch('/signin', {
          method: 'POST', credentials: 'same-origin', cache: 'no-store',
          body: new URLSearchParams(new FormData(signinForm)),
        }).then(function (r) {
          // 303 to /, followed: ok once the cookie is set
          if (!r.ok) throw new Error(r.status === 401 ? 'wrong token' : String(r.status));
          signinForm.reset();
          signinForm.hidden = true;
          signinStatus.textContent = '';
          signingIn = null;
          resolve();
        }).catch(function (e) { signinStatus.textContent = 'sign-in: ' + e.message; });
      };
    });
    return signingIn;
  }

  function getJSON(url) {
    return fetch(url, { credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) {
        if (r.status === 401) return signIn().then(function () { return getJSON(url); });
        return r.json().catch(function () { return null; }).then(function (j) {
          if (!r.ok) {
            const why = j && (j.detail || j.title);
            throw new Error(r.status + (why ? ': ' + why : ''));
          }
          return j;
        });
      });
  }

  // ---- layout: model coordinates, then the zoom on top ----

  function layout(m) {
    const byLevel = new Map();
    const pos = new Map();
    let widest = 1;
    m.switches.forEach(function (s) {
      if (!byLevel.has(s.level)) byLevel.set(s.level, []);
      byLevel.get(s.level).push(s);
    });
    byLevel.forEach(function (list) {
      list.sort(function (a, b) { return a.name < b.name ? -1 : a.name > b.name ? 1 : 0; });
      widest = Math.max(widest, list.length);
    });
    const width = Math.max(1000, widest * 64);
    const top = Math.max(1, m.counts.levels - 1);
    // rows as far apart as the screen's shape allows, so that the whole
    // fabric fills it when fitted, however wide its widest level
    const r = canvas.getBoundingClientRect();
    const aspect = r.width > 0 ? r.height / r.width : 0.6;
    const row = Math.max(130, (width * aspect) / (top + 2));
    byLevel.forEach(function (list, level) {
      // level 0: switches no leaf reaches, below the host tiles
      const y = (level === 0 ? top + 1 : top - level) * row + row / 3;
      const step = width / list.length;
      const w = Math.max(2, Math.min(56, step * 0.8));
      list.forEach(function (s, i) {
        pos.set(s.guid, {
          s: s, x: (i + 0.5) * step, y: y, w: w, h: row * 0.12,
          ty: y + row * 0.3, th: row * 0.18,
        });
      });
    });
    const rows = [];
    byLevel.forEach(function (list, level) {
      rows.push({ level: level, list: list.map(function (s) { return pos.get(s.guid); }) });
    });
    return { pos: pos, rows: rows, width: width, height: (top + 2) * row };
  }

  function fit() {
    const r = canvas.getBoundingClientRect();
    const k = Math.min(r.width / (lay.width + 40), r.height / (lay.height + 40));
    tr = { x: 20 * k, y: 20 * k, k: k };
    zoom.translate([tr.x, tr.y]).scale(tr.k);
    fitted = true;
  }

  // ---- drawing ----

  function resize() {
    const r = canvas.getBoundingClientRect();
    const d = window.devicePixelRatio || 1;
    canvas.width = Math.max(1, Math.round(r.width * d));
    canvas.height = Math.max(1, Math.round(r.height * d));
  }

  function bundleColour(b) {
    if (b.health !== 'ok') return COLOURS[b.health];
    if (b.utilisation !== null && b.utilisation >= 0.5) return BUSY;
    return COLOURS.ok;
  }

  function tileHealth(s) {
    let h = 'ok';
    ORDER.forEach(function (k) { if (s.host_links[k] > 0) h = worse(h, k); });
    if (s.hosts_down > 0) h = worse(h, 'down');
    return h;
  }

  function pairKey(a, b) { return a < b ? a + ' ' + b : b + ' ' + a; }

  function draw() {
    const d = window.devicePixelRatio || 1;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    if (!lay) return;
    ctx.setTransform(d * tr.k, 0, 0, d * tr.k, d * tr.x, d * tr.y);
    const px = 1 / tr.k; // one screen pixel in model units
    // bundles: ok ones first, then the bad, then the path on top
    const late = [];
    map.bundles.forEach(function (b) {
      const on = path && path.pairs.has(pairKey(b.a, b.b));
      if (b.health !== 'ok' || on) { late.push(b); return; }
      line(b, bundleColour(b), px);
    });
    late.forEach(function (b) {
      const on = path && path.pairs.has(pairKey(b.a, b.b));
      line(b, on ? PATH : bundleColour(b), px * (on ? 3 : 2));
    });
    if (job) {
      map.bundles.forEach(function (b) {
        if (job.pairs.has(pairKey(b.a, b.b))) line(b, JOB, px * 3);
      });
    }
    if (overlay) {
      ctx.setLineDash([6 * px, 4 * px]);
      map.bundles.forEach(function (b) {
        if (overlay.busy.has(pairKey(b.a, b.b))) line(b, BUSY, px * 3);
      });
      ctx.setLineDash([]);
    }
    const labels = tr.k > 0.6;
    ctx.font = '10px sans-serif';
    ctx.textAlign = 'center';
    lay.pos.forEach(function (p) {
      const s = p.s;
      ctx.fillStyle = COLOURS[s.health];
      ctx.fillRect(p.x - p.w / 2, p.y - p.h / 2, p.w, p.h);
      if (overlay && overlay.breaks.has(s.guid)) {
        ctx.strokeStyle = COLOURS.down;
        ctx.lineWidth = 4 * px;
        ctx.strokeRect(p.x - p.w / 2 - 3 * px, p.y - p.h / 2 - 3 * px, p.w + 6 * px, p.h + 6 * px);
      }
      if (path && path.switches.has(s.guid)) {
        ctx.strokeStyle = PATH;
        ctx.lineWidth = 3 * px;
        ctx.strokeRect(p.x - p.w / 2, p.y - p.h / 2, p.w, p.h);
      }
      if (s.hosts > 0) {
        const ty = p.ty;
        const th = tileHealth(s);
        ctx.fillStyle = th === 'ok' ? '#cfd8dc' : COLOURS[th];
        ctx.fillRect(p.x - p.w / 2, ty, p.w, p.th);
        ctx.strokeStyle = COLOURS[th];
        ctx.lineWidth = (th === 'ok' ? 1 : 3) * px;
        ctx.strokeRect(p.x - p.w / 2, ty, p.w, p.th);
        if (job && job.leaves.has(s.guid)) {
          ctx.strokeStyle = JOB;
          ctx.lineWidth = 4 * px;
          ctx.strokeRect(p.x - p.w / 2 - 3 * px, ty - 3 * px, p.w + 6 * px, p.th + 6 * px);
        }
        ctx.beginPath();
        ctx.moveTo(p.x, p.y + p.h / 2);
        ctx.lineTo(p.x, ty);
        ctx.strokeStyle = COLOURS[th];
        ctx.lineWidth = px;
        ctx.stroke();
        if (labels) {
          ctx.fillStyle = '#222';
          ctx.fillText(s.hosts_down ? s.hosts + ' (' + s.hosts_down + ' down)' : String(s.hosts),
            p.x, ty + p.th / 2 + 4);
        }
      }
      if (labels) {
        ctx.fillStyle = '#fff';
        ctx.fillText(s.name.slice(0, 10), p.x, p.y + 4);
      }
    });
  }

  function line(b, colour, wpx) {
    const a = lay.pos.get(b.a);
    const c = lay.pos.get(b.b);
    if (!a || !c) return;
    ctx.beginPath();
    ctx.moveTo(a.x, a.y);
    ctx.lineTo(c.x, c.y);
    ctx.strokeStyle = colour;
    ctx.lineWidth = wpx * (1 + Math.log2(b.cables));
    ctx.stroke();
  }

  let pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () {
      pending = false;
      draw();
    });
  }

  // What was drawn, for a test or a person with the console open.
  function summarise() {
    const levelOf = new Map();
    const name = new Map();
    const sum = {
      taken: map.taken, levels: {}, bundles: {}, cables: {}, hosts: 0,
      marked: { switches: [], tiles: [], bundles: [] }, down_tiles: [],
      path: path ? path.order : [], drawn_ms: drawnMs, overlay: null, job: null,
    };
    map.switches.forEach(function (s) {
      levelOf.set(s.guid, s.level);
      name.set(s.guid, s.name);
      sum.levels[s.level] = (sum.levels[s.level] || 0) + 1;
      sum.hosts += s.hosts;
      if (s.health !== 'ok') sum.marked.switches.push(s.name);
      if (s.hosts > 0 && tileHealth(s) !== 'ok') sum.marked.tiles.push(s.name);
      if (s.hosts_down > 0) sum.down_tiles.push(s.name);
    });
    map.bundles.forEach(function (b) {
      const la = levelOf.get(b.a);
      const lb = levelOf.get(b.b);
      const k = Math.min(la, lb) + '-' + Math.max(la, lb);
      sum.bundles[k] = (sum.bundles[k] || 0) + 1;
      sum.cables[k] = (sum.cables[k] || 0) + b.cables;
      if (b.health !== 'ok') sum.marked.bundles.push([name.get(b.a), name.get(b.b)].sort());
    });
    if (job) {
      sum.job = {
        id: job.id,
        leaves: Array.from(job.leaves).map(function (g) { return name.get(g) || g; }).sort(),
        bundles: Array.from(job.pairs).map(function (k) {
          return k.split(' ').map(function (g) { return name.get(g) || g; }).sort();
        }).sort(),
      };
    }
    if (overlay) {
      sum.overlay = {
        busy: Array.from(overlay.busy.keys()).map(function (k) {
          return k.split(' ').map(function (g) { return name.get(g) || g; }).sort();
        }),
        breaks: Array.from(overlay.breaks).map(function (g) { return name.get(g) || g; }),
      };
    }
    canvas.dataset.summary = JSON.stringify(sum);
  }

  // ---- live ----

  function showAge() {
    if (!map) return;
    const age = Math.max(0, (Date.now() - Date.parse(map.taken)) / 1000);
    let text = 'data ' + age.toFixed(0) + ' s old';
    if (failing) text += '; agent unreachable (' + failing + '), retrying';
    ageEl.textContent = text;
    ageEl.classList.toggle('stale', !!failing || age > 60);
  }

  function poll() {
    getJSON('/api/v1/map').then(function (m) {
      failing = null;
      lastOk = Date.now();
      const first = !map;
      map = m;
      lay = layout(m);
      if (first || !fitted) fit();
      countsEl.textContent = m.counts.switches + ' switches, ' + m.counts.hosts + ' hosts, ' +
        m.counts.switch_cables + ' switch cables in ' + m.counts.bundles + ' bundles';
      draw();
      if (drawnMs < 0) drawnMs = performance.now() - started;
      summarise();
      showAge();
      if (selected) refreshDetails();
    }).catch(function (e) {
      failing = e.message;
      showAge();
      if (!map) ageEl.textContent = 'no data yet: ' + e.message + ', retrying';
    }).then(function () {
      window.setTimeout(poll, POLL_MS);
    });
  }

  function loadEndports() {
    getJSON('/api/v1/endports').then(function (eps) {
      const list = document.getElementById('endports');
      list.textContent = '';
      (Array.isArray(eps) ? eps : eps.endports || []).slice(0, 5000).forEach(function (e) {
        const o = document.createElement('option');
        o.value = e.name || e.port_guid;
        list.appendChild(o);
      });
    }).catch(function () { /* the inputs still take GUIDs and LIDs */ });
  }

  // ---- picking and details ----

  function toModel(ev) {
    const r = canvas.getBoundingClientRect();
    return { x: (ev.clientX - r.left - tr.x) / tr.k, y: (ev.clientY - r.top - tr.y) / tr.k };
  }

  function pick(pt) {
    let hit = null;
    lay.pos.forEach(function (p) {
      if (Math.abs(pt.x - p.x) <= p.w / 2 && Math.abs(pt.y - p.y) <= p.h / 2) hit = { switch: p.s };
      else if (p.s.hosts > 0 && Math.abs(pt.x - p.x) <= p.w / 2 && pt.y >= p.ty && pt.y <= p.ty + p.th)
        hit = { tile: p.s };
    });
    if (hit) return hit;
    let best = 6 / tr.k;
    map.bundles.forEach(function (b) {
      const a = lay.pos.get(b.a);
      const c = lay.pos.get(b.b);
      const dx = c.x - a.x;
      const dy = c.y - a.y;
      const l2 = dx * dx + dy * dy || 1;
      const t = Math.max(0, Math.min(1, ((pt.x - a.x) * dx + (pt.y - a.y) * dy) / l2));
      const d = Math.hypot(pt.x - a.x - t * dx, pt.y - a.y - t * dy);
      if (d < best) { best = d; hit = { bundle: b }; }
    });
    return hit;
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function link(href) {
    const a = el('a', href);
    a.href = href;
    return a;
  }

  function table(rows) {
    const t = el('table');
    rows.forEach(function (r) {
      const tr_ = el('tr');
      r.forEach(function (c, i) {
        const td = el(i === 0 ? 'th' : 'td');
        if (c instanceof Node) td.appendChild(c);
        else td.textContent = c === null || c === undefined ? '' : String(c);
        tr_.appendChild(td);
      });
      t.appendChild(tr_);
    });
    return t;
  }

  function health(h) { return el('span', h, 'h-' + h); }

  function nameOf(guid) {
    const p = lay.pos.get(guid);
    return p ? p.s.name : guid;
  }

  function showSwitch(s, hostsOnly) {
    detailsBody.textContent = '';
    detailsBody.appendChild(el('h2', hostsOnly ? 'Hosts of ' + s.name : s.name));
    detailsBody.appendChild(table([
      ['GUID', s.guid], ['LID', s.lid], ['level', s.level], ['ports', s.ports],
      ['health', health(s.health)], ['hosts', s.hosts], ['hosts down', s.hosts_down],
      ['host cables', ORDER.map(function (k) { return k + ' ' + s.host_links[k]; }).join(', ')],
      ['from', link('/api/v1/nodes/' + s.guid)],
    ]));
    const ports = el('div', 'loading ports');
    detailsBody.appendChild(ports);
    getJSON('/api/v1/nodes/' + s.guid).then(function (n) {
      const rows = [['port', 'state', 'width / speed', 'other end', 'tx / rx B/s', 'errors', 'cable']];
      n.ports.forEach(function (p) {
        if (p.port === 0) return;
        const other = p.remote ? p.remote.name + ' [' + p.remote.port + ']' : '';
        const toSwitch = p.remote && lay.pos.has(p.remote.guid);
        if (hostsOnly && (toSwitch || !p.remote)) return;
        const c = p.counters || {};
        const r = c.rates || {};
        rows.push([p.port, p.state + ' / ' + p.phys_state, (p.width || '') + ' ' + (p.speed || ''),
          other, rate(r.transmit_bytes_per_second) + ' / ' + rate(r.receive_bytes_per_second),
          (c.over_threshold || []).join(', ') || (c.error_increments === undefined ? '' : c.error_increments),
          p.remote ? link('/api/v1/links/' + s.guid + '/' + p.port) : '']);
      });
      ports.textContent = '';
      ports.appendChild(table(rows));
    }).catch(function (e) { ports.textContent = 'ports: ' + e.message; });
    events(s.guid);
  }

  function rate(v) {
    if (v === undefined || v === null) return '';
    if (v >= 1e9) return (v / 1e9).toFixed(2) + 'G';
    if (v >= 1e6) return (v / 1e6).toFixed(2) + 'M';
    if (v >= 1e3) return (v / 1e3).toFixed(1) + 'k';
    return v.toFixed(0);
  }

  // The last events naming node @guid (either end).
  function events(guid) {
    const box = el('div', 'loading events');
    detailsBody.appendChild(el('h3', 'Events'));
    detailsBody.appendChild(box);
    getJSON('/api/v1/events').then(function (e) {
      const mine = (e.events || []).filter(function (x) {
        return x.node_guid === guid || x.peer_guid === guid;
      }).slice(-10).reverse();
      box.textContent = '';
      if (!mine.length) { box.textContent = 'none kept'; return; }
      box.appendChild(table([['time', 'kind', 'what']].concat(mine.map(function (x) {
        return [x.time, x.kind, [x.old, '\u2192', x.new, (x.reasons || []).join(','), x.bad_lanes || '']
          .filter(function (v) { return v !== undefined && v !== null && v !== ''; }).join(' ')];
      }))));
    }).catch(function (err) { box.textContent = 'events: ' + err.message; });
  }

  function showBundle(b) {
    detailsBody.textContent = '';
    detailsBody.appendChild(el('h2', nameOf(b.a) + ' \u2013 ' + nameOf(b.b)));
    detailsBody.appendChild(table([
      ['cables', b.cables], ['health', health(b.health)],
      ['by health', ORDER.map(function (k) { return k + ' ' + b.counts[k]; }).join(', ')],
      ['reasons', b.reasons.join(', ') || 'none'],
      ['utilisation', b.utilisation === null ? 'unknown' : (100 * b.utilisation).toFixed(1) + '% (busiest direction, last sweep)'],
    ]));
    const cables = el('div', 'loading cables');
    detailsBody.appendChild(cables);
    getJSON('/api/v1/nodes/' + b.a).then(function (n) {
      const ps = n.ports.filter(function (p) { return p.remote && p.remote.guid === b.b; });
      return Promise.all(ps.map(function (p) {
        return getJSON('/api/v1/links/' + b.a + '/' + p.port).catch(function () { return null; })
          .then(function (k) { return { p: p, k: k }; });
      }));
    }).then(function (list) {
      const rows = [['port', 'other', 'health', 'reasons', 'width/speed', 'BER', 'raw BER', 'API']];
      list.forEach(function (x) {
        const k = x.k;
        rows.push([x.p.port, x.p.remote.port, k ? health(k.health) : '', k ? k.reasons.join(', ') : '',
          k ? (k.width_active || '') + ' ' + (k.speed_active || '') + ' (best ' + (k.width_best || '') + ' ' + (k.speed_best || '') + ')' : '',
          k && k.ber !== null ? k.ber.toExponential(2) : '',
          k && k.raw_ber !== null && k.raw_ber !== undefined ? k.raw_ber.toExponential(2) : '',
          link('/api/v1/links/' + b.a + '/' + x.p.port)]);
      });
      cables.textContent = '';
      cables.appendChild(table(rows));
    }).catch(function (e) { cables.textContent = 'cables: ' + e.message; });
    events(b.a);
  }

  function refreshDetails() {
    if (!selected) return;
    if (selected.switch || selected.tile) {
      const g = (selected.switch || selected.tile).guid;
      const s = map.switches.find(function (x) { return x.guid === g; });
      if (s) showSwitch(s, !!selected.tile);
    } else if (selected.bundle) {
      const b = map.bundles.find(function (x) { return x.a === selected.bundle.a && x.b === selected.bundle.b; });
      if (b) showBundle(b);
    }
  }

  canvas.addEventListener('click', function (ev) {
    if (!lay) return;
    const hit = pick(toModel(ev));
    selected = hit;
    details.hidden = !hit;
    if (hit) refreshDetails();
  });
  document.getElementById('close').addEventListener('click', function () {
    selected = null;
    details.hidden = true;
  });

  // ---- paths ----

  function hopsOf(t) {
    return t && Array.isArray(t.hops) ? t.hops : [];
  }

  function showPath(t) {
    const sw = new Set();
    const pairs = new Set();
    const order = [];
    [hopsOf(t), hopsOf(t.reverse)].forEach(function (hops, dir) {
      let prev = null;
      hops.forEach(function (h) {
        if (h.type !== 'switch') { prev = null; return; }
        sw.add(h.node_guid);
        if (dir === 0) order.push(h.name);
        if (prev) pairs.add(pairKey(prev, h.node_guid));
        prev = h.node_guid;
      });
    });
    path = { switches: sw, pairs: pairs, order: order };
    summarise();
    redraw();
  }

  document.getElementById('trace').addEventListener('submit', function (ev) {
    ev.preventDefault();
    const from = document.getElementById('from').value.trim();
    const to = document.getElementById('to').value.trim();
    if (!to) { traceStatus.textContent = 'a destination is needed'; return; }
    const q = new URLSearchParams({ target: to, reverse: '1' });
    if (from) q.set('source', from);
    traceStatus.textContent = 'tracing';
    getJSON('/api/v1/trace?' + q.toString()).then(function (t) {
      if (t.status && t.status !== 'ok') {
        traceStatus.textContent = t.status + ': ' + (t.reason || '');
      } else {
        traceStatus.textContent = hopsOf(t).length + ' hops';
      }
      showPath(t);
    }).catch(function (e) { traceStatus.textContent = 'trace: ' + e.message; });
  });
  document.getElementById('clear').addEventListener('click', function () {
    path = null;
    traceStatus.textContent = '';
    if (map) summarise();
    redraw();
  });

  // ---- a job's hosts and links (docs/jobs.md) ----

  document.getElementById('job').addEventListener('submit', function (ev) {
    ev.preventDefault();
    const id = document.getElementById('job-id').value.trim();
    const st = document.getElementById('job-status');
    if (!id) {
      job = null;
      st.textContent = '';
      if (map) summarise();
      redraw();
      return;
    }
    getJSON('/api/v1/jobs/' + encodeURIComponent(id)).then(function (j) {
      const leaves = new Set();
      const pairs = new Set();
      // a host port's leaf: the switch its cable goes to
      const leafOf = new Map();
      map.switches.forEach(function (s) { leafOf.set(s.guid, s); });
      return Promise.all(j.ports.map(function (p) {
        return getJSON('/api/v1/links/' + p.guid + '/' + p.port).then(function (k) {
          k.ends.forEach(function (e) { if (leafOf.has(e.guid)) leaves.add(e.guid); });
        }).catch(function () { /* a port without a cable */ });
      })).then(function () {
        (j.links.list || []).forEach(function (l) {
          if (lay.pos.has(l.guid) && l.peer_guid && lay.pos.has(l.peer_guid))
            pairs.add(pairKey(l.guid, l.peer_guid));
        });
        job = { id: j.id, leaves: leaves, pairs: pairs };
        st.textContent = j.hosts + ' hosts on ' + leaves.size + ' leaves, ' + pairs.size +
          ' switch bundles, worst ' + (j.links.worst_health || 'unknown');
        summarise();
        redraw();
      });
    }).catch(function (e) {
      job = null;
      st.textContent = 'job: ' + e.message;
      if (map) summarise();
      redraw();
    });
  });

  // ---- the route census overlaid ----

  function loadOverlay() {
    Promise.all([
      getJSON('/api/v1/routes'),
      getJSON('/api/v1/routes?broken=1&limit=1000').catch(function () { return { pairs: [] }; }),
    ]).then(function (r) {
      // the switch bundles carrying the most routes: the 10 first,
      // and those tied with the 10th (the census' own top_links are
      // mostly host cables, which live in the tiles)
      const busy = new Map();
      const ranked = map.bundles.filter(function (b) { return b.routes > 0; })
        .sort(function (x, y) { return y.routes - x.routes; });
      const floor = ranked.length ? ranked[Math.min(9, ranked.length - 1)].routes : 1;
      ranked.forEach(function (b) {
        if (b.routes >= floor) busy.set(pairKey(b.a, b.b), b.routes);
      });
      const breaks = new Set();
      (r[1].pairs || []).forEach(function (p) { if (p.break) breaks.add(p.break.node_guid); });
      overlay = { busy: busy, breaks: breaks };
      document.getElementById('census-status').textContent = busy.size + ' busiest links, ' +
        (r[1].total || 0) + ' broken pairs';
      if (map) summarise();
      redraw();
    }).catch(function (e) {
      overlay = null;
      document.getElementById('census-status').textContent = 'census: ' + e.message;
      redraw();
    });
  }

  document.getElementById('census').addEventListener('change', function (ev) {
    if (ev.target.checked) loadOverlay();
    else {
      overlay = null;
      document.getElementById('census-status').textContent = '';
      if (map) summarise();
      redraw();
    }
  });

  // Where a switch is on the screen (CSS pixels from the canvas' corner),
  // for a person's script or a test that clicks it.
  window.ibwatchMap = {
    at: function (name) {
      let hit = null;
      if (lay) lay.pos.forEach(function (p) { if (p.s.name === name) hit = p; });
      return hit ? [hit.x * tr.k + tr.x, hit.y * tr.k + tr.y] : null;
    },
  };

  // ---- zoom and start ----

  const zoom = d3.behavior.zoom().scaleExtent([0.01, 50]).on('zoom', function () {
    tr = { x: d3.event.translate[0], y: d3.event.translate[1], k: d3.event.scale };
    redraw();
  });
  d3.select(canvas).call(zoom);
  window.addEventListener('resize', function () { resize(); redraw(); });
  resize();
  window.setInterval(showAge, 1000);
  loadEndports();
  poll();
})();
