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
  // Above GROUP_MIN switches the map groups them (pods, docs/map.md),
  // drawn as blocks while a switch's place on the screen is narrower
  // than GROUP_STEP_PX. ?group=0: never; ?group=PX: any fabric, blocks
  // below PX pixels (6 for ?group=1).
  const params = new URLSearchParams(window.location.search);
  const groupArg = params.get('group');
  const GROUP_MIN = groupArg === '0' ? Infinity : groupArg ? 0 : 300;
  const GROUP_STEP_PX = groupArg && Number(groupArg) > 1 ? Number(groupArg) : 6;
  const MARK_PX = 10; // a fault is never smaller on screen
  const HOT = 0.9; // a bundle this busy is listed as trouble
  const LIST_MAX = 100; // cables of each health listed; the rest counted
  const TITLE = document.title;

  const canvas = document.getElementById('map');
  const ctx = canvas.getContext('2d');
  const ageEl = document.getElementById('age');
  const countsEl = document.getElementById('counts');
  const details = document.getElementById('details');
  const detailsBody = document.getElementById('details-body');
  const traceStatus = document.getElementById('trace-status');
  const troubleBox = document.getElementById('trouble');
  const troubleList = document.getElementById('trouble-list');
  const badge = document.getElementById('badge');

  let map = null; // the last /api/v1/map
  let lay = null; // its layout
  let lastOk = 0; // Date.now() of the last answer
  let failing = null; // why the last poll failed
  let tr = { x: 0, y: 0, k: 1 }; // zoom
  let fitted = false;
  let aspect = 0; // the canvas' height over its width for the layout
  let path = null; // { switches: Set of GUIDs, pairs: Set, order: [names] }
  let selected = null;
  let overlay = null; // { busy: Map pair -> routes, breaks: Set of GUIDs }
  let job = null; // { id, leaves: Set of switch GUIDs, pairs: Set }
  let trouble = []; // what is not healthy, worst first (troubleItems())
  let focus = null; // the trouble item clicked: { bundle } | { tile } | { switch }
  let following = false; // the view stays on the focus until the user moves it
  const started = performance.now();
  let drawnMs = -1;

  function worse(a, b) {
    return ORDER.indexOf(a) > ORDER.indexOf(b) ? a : b;
  }

  const getJSON = window.ibwatchApi.getJSON;
  const el = window.ibwatchApi.el;
  const table = window.ibwatchApi.table;

  // ---- layout: model coordinates, then the zoom on top ----

  function byName(a, b) { return a.name < b.name ? -1 : a.name > b.name ? 1 : 0; }

  // The groups of a big fabric, as its topology draws them: leaves that
  // share the switches above them form a pod with those switches (each
  // joins the pod of most of the leaves it serves); the other levels go
  // by name, GROUP_SIZE at a time. Map GUID -> group key.
  const GROUP_SIZE = 16;
  function groups(m, byLevel) {
    const level = new Map();
    const up = new Map();
    const g = new Map();
    m.switches.forEach(function (s) { level.set(s.guid, s.level); });
    m.bundles.forEach(function (b) {
      const la = level.get(b.a);
      const lb = level.get(b.b);
      const add = function (lo, hi) {
        if (!up.has(lo)) up.set(lo, []);
        up.get(lo).push(hi);
      };
      if (la === 1 && lb === 2) add(b.a, b.b);
      else if (lb === 1 && la === 2) add(b.b, b.a);
    });
    const leaves = byLevel.get(1) || [];
    const keys = new Set();
    leaves.forEach(function (s) {
      const k = 'pod ' + (up.get(s.guid) || []).sort().join(',');
      g.set(s.guid, k);
      keys.add(k);
    });
    const chunk = function (list, tag) {
      list.forEach(function (s, i) { g.set(s.guid, tag + Math.floor(i / GROUP_SIZE)); });
    };
    // every leaf under the same switches (two levels): no pods
    if (keys.size < 2 || keys.size > leaves.length / 2) chunk(leaves, 'leaves ');
    const votes = new Map();
    m.bundles.forEach(function (b) {
      [[b.a, b.b], [b.b, b.a]].forEach(function (x) {
        if (level.get(x[0]) !== 2 || level.get(x[1]) !== 1) return;
        if (!votes.has(x[0])) votes.set(x[0], new Map());
        const v = votes.get(x[0]);
        const k = g.get(x[1]);
        v.set(k, (v.get(k) || 0) + b.cables);
      });
    });
    byLevel.forEach(function (list, lv) {
      if (lv === 1) return;
      const rest = [];
      list.forEach(function (s) {
        let best = null;
        let most = 0;
        if (lv === 2 && votes.has(s.guid)) {
          votes.get(s.guid).forEach(function (n, k) {
            if (n > most || (n === most && k < best)) { best = k; most = n; }
          });
        }
        if (best !== null && best.startsWith('pod ')) g.set(s.guid, best);
        else rest.push(s);
      });
      chunk(rest, 'level ' + lv + ' ');
    });
    return g;
  }

  function layout(m) {
    const byLevel = new Map();
    const pos = new Map();
    let widest = 1;
    m.switches.forEach(function (s) {
      if (!byLevel.has(s.level)) byLevel.set(s.level, []);
      byLevel.get(s.level).push(s);
    });
    byLevel.forEach(function (list) { list.sort(byName); });
    const grouped = m.switches.length > GROUP_MIN;
    const group = grouped ? groups(m, byLevel) : null;
    if (grouped) {
      // a group's switches side by side, groups in the order of their
      // first name
      const first = new Map();
      m.switches.slice().sort(byName).forEach(function (s) {
        const k = group.get(s.guid);
        if (!first.has(k)) first.set(k, s.name);
      });
      byLevel.forEach(function (list) {
        list.sort(function (a, b) {
          const fa = first.get(group.get(a.guid));
          const fb = first.get(group.get(b.guid));
          return fa < fb ? -1 : fa > fb ? 1 : byName(a, b);
        });
      });
    }
    byLevel.forEach(function (list) { widest = Math.max(widest, list.length); });
    const width = Math.max(1000, widest * 64);
    const top = Math.max(1, m.counts.levels - 1);
    // rows as far apart as the screen's shape allows, so that the whole
    // fabric fills it when fitted, however wide its widest level; the
    // shape as first seen (or at the last resize), so that a header
    // that wraps differently does not move the map under the user
    if (!aspect) {
      const r = canvas.getBoundingClientRect();
      aspect = r.width > 0 && r.height > 0 ? r.height / r.width : 0.6;
    }
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
    const out = {
      pos: pos, rows: rows, width: width, height: (top + 2) * row,
      step: width / widest, grouped: grouped, blocks: [], blockOf: new Map(), links: [],
    };
    if (grouped) blocks(m, out, group);
    return out;
  }

  // Each group's run of switches on its row as one block, with the
  // worst health inside (its switches and, for leaves, their tiles);
  // the bundles between two blocks as one line with the worst health.
  function blocks(m, out, group) {
    out.rows.forEach(function (r) {
      let cur = null;
      r.list.forEach(function (p) {
        const k = group.get(p.s.guid);
        if (!cur || cur.key !== k) {
          cur = {
            i: out.blocks.length, key: k, level: r.level, members: [], x0: p.x - p.w / 2, x1: p.x + p.w / 2,
            y: p.y, h: p.h, ty: p.ty, th: p.th, health: 'ok', tile: null, hosts: 0, down: 0,
          };
          out.blocks.push(cur);
        }
        cur.members.push(p);
        cur.x1 = p.x + p.w / 2;
        cur.health = worse(cur.health, p.s.health);
        if (p.s.hosts > 0) {
          cur.tile = worse(cur.tile || 'ok', tileHealth(p.s));
          cur.hosts += p.s.hosts;
          cur.down += p.s.hosts_down;
        }
        out.blockOf.set(p.s.guid, cur);
      });
    });
    const pairs = new Map();
    m.bundles.forEach(function (b) {
      const x = out.blockOf.get(b.a);
      const y = out.blockOf.get(b.b);
      if (!x || !y || x === y) return;
      const k = Math.min(x.i, y.i) + ' ' + Math.max(x.i, y.i);
      let l = pairs.get(k);
      if (!l) {
        l = { a: x, b: y, cables: 0, health: 'ok' };
        pairs.set(k, l);
      }
      l.cables += b.cables;
      l.health = worse(l.health, b.health);
    });
    out.links = Array.from(pairs.values());
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
    lay.drawnGrouped = lay.grouped && lay.step * tr.k < GROUP_STEP_PX;
    if (lay.drawnGrouped) drawBlocks(px);
    else drawSwitches(px);
    drawOverlays(px);
    drawFaults(px);
  }

  // Every switch, tile and bundle: the grey first, the bad on top.
  function drawSwitches(px) {
    const late = [];
    map.bundles.forEach(function (b) {
      if (b.health !== 'ok') { late.push(b); return; }
      line(b, bundleColour(b), px);
    });
    late.forEach(function (b) { line(b, bundleColour(b), px * 2); });
    const labels = tr.k > 0.6;
    ctx.font = '10px sans-serif';
    ctx.textAlign = 'center';
    lay.pos.forEach(function (p) {
      const s = p.s;
      ctx.fillStyle = COLOURS[s.health];
      ctx.fillRect(p.x - p.w / 2, p.y - p.h / 2, p.w, p.h);
      if (s.hosts > 0) {
        const ty = p.ty;
        const th = tileHealth(s);
        ctx.fillStyle = th === 'ok' ? '#cfd8dc' : COLOURS[th];
        ctx.fillRect(p.x - p.w / 2, ty, p.w, p.th);
        ctx.strokeStyle = COLOURS[th];
        ctx.lineWidth = (th === 'ok' ? 1 : 3) * px;
        ctx.strokeRect(p.x - p.w / 2, ty, p.w, p.th);
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

  // A big fabric zoomed out: each group a block, the bundles between two
  // blocks one line, each coloured by the worst inside.
  function drawBlocks(px) {
    const bad = [];
    lay.links.forEach(function (l) {
      if (l.health !== 'ok') { bad.push(l); return; }
      blockLine(l, COLOURS.ok, px);
    });
    bad.forEach(function (l) { blockLine(l, COLOURS[l.health], px * 2); });
    ctx.font = '11px sans-serif';
    ctx.textAlign = 'center';
    lay.blocks.forEach(function (b) {
      const w = b.x1 - b.x0;
      ctx.fillStyle = COLOURS[b.health];
      ctx.fillRect(b.x0, b.y - b.h / 2, w, b.h);
      ctx.strokeStyle = '#fff';
      ctx.lineWidth = px;
      ctx.strokeRect(b.x0, b.y - b.h / 2, w, b.h);
      if (b.tile) {
        ctx.fillStyle = b.tile === 'ok' ? '#cfd8dc' : COLOURS[b.tile];
        ctx.fillRect(b.x0, b.ty, w, b.th);
        ctx.strokeStyle = COLOURS[b.tile];
        ctx.strokeRect(b.x0, b.ty, w, b.th);
      }
      if (w * tr.k > 60) {
        ctx.fillStyle = '#fff';
        ctx.fillText(b.members.length + ' switches', (b.x0 + b.x1) / 2, b.y + 4);
        if (b.tile) {
          ctx.fillStyle = '#222';
          ctx.fillText(b.hosts + ' hosts' + (b.down ? ', ' + b.down + ' down' : ''),
            (b.x0 + b.x1) / 2, b.ty + b.th / 2 + 4);
        }
      }
    });
  }

  function blockLine(l, colour, wpx) {
    ctx.beginPath();
    ctx.moveTo((l.a.x0 + l.a.x1) / 2, l.a.y);
    ctx.lineTo((l.b.x0 + l.b.x1) / 2, l.b.y);
    ctx.strokeStyle = colour;
    ctx.lineWidth = wpx * (1 + Math.log2(l.cables) / 2);
    ctx.stroke();
  }

  // The traced path, a job, the census: the switches and bundles they
  // name, whether the map is grouped or not.
  function drawOverlays(px) {
    map.bundles.forEach(function (b) {
      const k = pairKey(b.a, b.b);
      if (path && path.pairs.has(k)) line(b, PATH, px * 3);
      if (job && job.pairs.has(k)) line(b, JOB, px * 3);
    });
    if (overlay) {
      ctx.setLineDash([6 * px, 4 * px]);
      map.bundles.forEach(function (b) {
        if (overlay.busy.has(pairKey(b.a, b.b))) line(b, BUSY, px * 3);
      });
      ctx.setLineDash([]);
    }
    lay.pos.forEach(function (p) {
      const s = p.s;
      if (overlay && overlay.breaks.has(s.guid)) ring(p.x, p.y, p.w, p.h, COLOURS.down, px, 4);
      if (path && path.switches.has(s.guid)) ring(p.x, p.y, p.w, p.h, PATH, px, 3);
      if (job && job.leaves.has(s.guid) && s.hosts > 0)
        ring(p.x, p.ty + p.th / 2, p.w, p.th, JOB, px, 4);
    });
  }

  // A rectangle at (x, y), at least MARK_PX on screen, outlined.
  function ring(x, y, w, h, colour, px, lw) {
    const W = Math.max(w, MARK_PX * px) + 6 * px;
    const H = Math.max(h, MARK_PX * px) + 6 * px;
    ctx.strokeStyle = colour;
    ctx.lineWidth = lw * px;
    ctx.strokeRect(x - W / 2, y - H / 2, W, H);
  }

  // A fault, filled, at least MARK_PX on screen, in a white halo so that
  // its colour stands out of the grey around it.
  function mark(x, y, w, h, colour, px) {
    const W = Math.max(w, MARK_PX * px);
    const H = Math.max(h, MARK_PX * px);
    ctx.fillStyle = '#fff';
    ctx.fillRect(x - W / 2 - 2 * px, y - H / 2 - 2 * px, W + 4 * px, H + 4 * px);
    ctx.fillStyle = colour;
    ctx.fillRect(x - W / 2, y - H / 2, W, H);
  }

  // What is not healthy, drawn last: every bad bundle on its own with a
  // halo, every bad switch and tile as a mark, the focus ringed.
  function drawFaults(px) {
    // the worst last, on top of the rest
    const sev = function (h) { return ORDER.indexOf(h); };
    map.bundles.filter(function (b) { return b.health !== 'ok'; })
      .sort(function (x, y) { return sev(x.health) - sev(y.health); })
      .forEach(function (b) {
        const w = Math.max(3 * px, 2 * px * (1 + Math.log2(b.cables)));
        line(b, '#fff', w + 4 * px, true);
        line(b, COLOURS[b.health], w, true);
      });
    // a switch or tile drawn big enough already shows its colour (and
    // its name): marked only when small, or hidden in a block
    const small = function (w, h) {
      return lay.drawnGrouped || w * tr.k < MARK_PX || h * tr.k < MARK_PX;
    };
    const marks = [];
    lay.pos.forEach(function (p) {
      const s = p.s;
      if (s.health !== 'ok' && small(p.w, p.h)) marks.push([sev(s.health), p.x, p.y, p.w, p.h, s.health]);
      if (s.hosts > 0) {
        const th = tileHealth(s);
        if (th !== 'ok' && small(p.w, p.th)) marks.push([sev(th), p.x, p.ty + p.th / 2, p.w, p.th, th]);
      }
    });
    marks.sort(function (x, y) { return x[0] - y[0]; }).forEach(function (m) {
      mark(m[1], m[2], m[3], m[4], COLOURS[m[5]], px);
    });
    const f = focusBox();
    if (f) {
      const W = Math.max(f.w, 24 * px) + 12 * px;
      const H = Math.max(f.h, 24 * px) + 12 * px;
      ctx.strokeStyle = '#fff';
      ctx.lineWidth = 6 * px;
      ctx.strokeRect(f.x - W / 2, f.y - H / 2, W, H);
      ctx.strokeStyle = '#000';
      ctx.lineWidth = 3 * px;
      ctx.strokeRect(f.x - W / 2, f.y - H / 2, W, H);
    }
  }

  // The focus' place in model units: { x, y, w, h }, or null.
  function focusBox() {
    if (!focus || !lay) return null;
    if (focus.bundle) {
      const a = lay.pos.get(focus.bundle[0]);
      const c = lay.pos.get(focus.bundle[1]);
      if (!a || !c) return null;
      return { x: (a.x + c.x) / 2, y: (a.y + c.y) / 2, w: Math.abs(a.x - c.x) / 4, h: Math.abs(a.y - c.y) / 4 };
    }
    const p = lay.pos.get(focus.tile || focus.switch);
    if (!p) return null;
    if (focus.tile) return { x: p.x, y: p.ty + p.th / 2, w: p.w, h: p.th };
    return { x: p.x, y: p.y, w: p.w, h: p.h };
  }

  // Bundle @b's line, @wpx wide for each doubling of its cables (or
  // @wpx itself when @exact).
  function line(b, colour, wpx, exact) {
    const a = lay.pos.get(b.a);
    const c = lay.pos.get(b.b);
    if (!a || !c) return;
    ctx.beginPath();
    ctx.moveTo(a.x, a.y);
    ctx.lineTo(c.x, c.y);
    ctx.strokeStyle = colour;
    ctx.lineWidth = exact ? wpx : wpx * (1 + Math.log2(b.cables));
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
      grouped: !!lay.drawnGrouped, blocks: lay.blocks.length,
      trouble: trouble.map(function (t) { return { kind: t.kind, health: t.health, text: t.text }; }),
      focus: focus ? focus.text : null,
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
      if (following && focusBox()) {
        const f = focusBox();
        centre(f.x, f.y, tr.k);
      }
      countsEl.textContent = m.counts.switches + ' switches, ' + m.counts.hosts + ' hosts, ' +
        m.counts.switch_cables + ' switch cables in ' + m.counts.bundles + ' bundles';
      draw();
      if (drawnMs < 0) drawnMs = performance.now() - started;
      summarise();
      showAge();
      loadTrouble();
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


  // ---- trouble first: what is not healthy, worst first (trouble.js
  // makes the list, this fetches it, shows it and goes to an item) ----

  const isSwitch = function (g) { return lay.pos.has(g); };
  const cableTarget = function (k) { return window.ibwatchTrouble.cableTarget(k, isSwitch); };
  const endName = window.ibwatchTrouble.endName;

  function troubleItems(links, eps, broken, counts) {
    return window.ibwatchTrouble.items({
      links: links, endports: eps, broken: broken, counts: counts, bundles: map.bundles,
      isSwitch: isSwitch, nameOf: nameOf, hot: HOT,
    });
  }

  let troubleBusy = false;
  // the snapshot the list was made from: every answer it asks for is
  // that snapshot's, so a poll that brings the same one asks nothing
  let troubleTaken = null;
  // the endports down, asked again only when the leaves' counts of hosts
  // down change (the whole list is big on a big fabric)
  let epsKey = '';
  let epsDown = null;
  function loadTrouble() {
    if (troubleBusy || map.taken === troubleTaken) return;
    troubleBusy = true;
    const taken = map.taken;
    const bad = map.switches.some(function (s) { return s.health !== 'ok'; }) ||
      map.bundles.some(function (b) { return b.health !== 'ok'; });
    const key = map.switches.filter(function (s) { return s.hosts_down > 0; })
      .map(function (s) { return s.guid + ':' + s.hosts_down; }).join(',');
    const none = Promise.resolve(null);
    const eps = !key ? none : key === epsKey && epsDown ? Promise.resolve(epsDown)
      : getJSON('/api/v1/endports').then(function (r) {
        epsDown = (Array.isArray(r) ? r : r.endports || [])
          .filter(function (e) { return e.state === 'down'; });
        epsKey = key;
        return epsDown;
      });
    Promise.all([
      bad ? getJSON('/api/v1/links?health=down&limit=' + LIST_MAX) : none,
      bad ? getJSON('/api/v1/links?health=failing&limit=' + LIST_MAX) : none,
      bad ? getJSON('/api/v1/links?health=degraded&limit=' + LIST_MAX) : none,
      eps,
      // the census, once there is one (its bundles count routes): a 503
      // before would be a console error for nothing
      map.bundles.some(function (b) { return b.routes !== null; })
        ? getJSON('/api/v1/routes').catch(function () { return null; }) : none,
    ]).then(function (r) {
      const links = [];
      const counts = {};
      r.slice(0, 3).forEach(function (x) {
        if (!x) return;
        links.push.apply(links, x.links || []);
        Object.assign(counts, x.counts || {});
      });
      const eps = r[3] || [];
      const sum = r[4] && r[4].summary;
      const nbroken = sum ? (sum.unreachable || 0) + (sum.looping || 0) : 0;
      return (nbroken ? getJSON('/api/v1/routes?broken=1&limit=1').catch(function () { return null; })
        : none).then(function (br) {
        trouble = troubleItems(links, eps, br || (nbroken ? { total: nbroken, pairs: [] } : null), counts);
        troubleTaken = taken;
        showTrouble();
        summarise();
      });
    }).catch(function () { /* the next poll tries again */ }).then(function () {
      troubleBusy = false;
    });
  }

  function showTrouble() {
    let n = 0;
    let hot = 0;
    trouble.forEach(function (t) {
      if (t.kind === 'hot') hot++;
      else n += t.kind === 'more' ? t.count : 1;
    });
    document.title = (n ? '(' + n + ') ' : '') + TITLE;
    badge.hidden = trouble.length === 0;
    badge.textContent = n + (n === 1 ? ' problem' : ' problems') + (hot ? ', ' + hot + ' hot' : '');
    badge.className = 'badge ' + (trouble.length ? 'h-' + trouble[0].health : '');
    troubleBox.hidden = trouble.length === 0 || troubleBox.dataset.closed === '1';
    window.ibwatchTrouble.render(troubleList, trouble, function (i) {
      if (trouble[i]) goTo(trouble[i]);
    });
  }

  // Centre the map on trouble item @t, ring it and open its details.
  function goTo(t) {
    if (t.kind === 'more') {
      window.open('/api/v1/links?health=' + t.health, '_blank', 'noopener');
      return;
    }
    const then = function (target) {
      focus = target ? Object.assign({ text: t.text }, target) : null;
      const f = focusBox();
      if (f) centre(f.x, f.y, Math.max(tr.k, GROUP_STEP_PX * 1.5 / lay.step));
      following = !!f;
      summarise();
      redraw();
      details.hidden = false;
      selected = null;
      if (t.link) showCable(t.link.guid, t.link.port);
      else if (t.kind === 'routes' && !(target && target.switch)) {
        detailsBody.textContent = '';
        detailsBody.appendChild(el('h2', 'Broken routes'));
        detailsBody.appendChild(el('p', t.text));
        detailsBody.appendChild(link('/api/v1/routes?broken=1'));
      } else if (target && target.bundle) {
        const b = map.bundles.find(function (x) { return x.a === target.bundle[0] && x.b === target.bundle[1]; });
        if (b) { selected = { bundle: b }; showBundle(b); }
      } else if (target && target.switch) {
        const sw = map.switches.find(function (x) { return x.guid === target.switch; });
        if (sw) { selected = { switch: sw }; showSwitch(sw, false); }
      }
    };
    if (t.target || !t.link) { then(t.target); return; }
    // an endport: its cable says which leaf it hangs from
    getJSON('/api/v1/links/' + t.link.guid + '/' + t.link.port)
      .then(function (k) { then(cableTarget(k)); })
      .catch(function () { then(null); });
  }

  badge.addEventListener('click', function () {
    troubleBox.dataset.closed = troubleBox.hidden ? '0' : '1';
    troubleBox.hidden = !troubleBox.hidden;
  });
  document.getElementById('trouble-close').addEventListener('click', function () {
    troubleBox.dataset.closed = '1';
    troubleBox.hidden = true;
  });

  // ---- picking and details ----

  function toModel(ev) {
    const r = canvas.getBoundingClientRect();
    return { x: (ev.clientX - r.left - tr.x) / tr.k, y: (ev.clientY - r.top - tr.y) / tr.k };
  }

  function pick(pt) {
    let hit = null;
    const px = 1 / tr.k;
    // a fault's mark first: it may be bigger than its switch
    lay.pos.forEach(function (p) {
      const s = p.s;
      const half = MARK_PX * px / 2;
      if (s.health !== 'ok' && Math.abs(pt.x - p.x) <= Math.max(p.w / 2, half) &&
          Math.abs(pt.y - p.y) <= Math.max(p.h / 2, half)) hit = { switch: s };
      else if (s.hosts > 0 && tileHealth(s) !== 'ok' &&
               Math.abs(pt.x - p.x) <= Math.max(p.w / 2, half) &&
               Math.abs(pt.y - p.ty - p.th / 2) <= Math.max(p.th / 2, half)) hit = { tile: s };
    });
    if (hit) return hit;
    if (lay.drawnGrouped) {
      lay.blocks.forEach(function (b) {
        if (pt.x >= b.x0 && pt.x <= b.x1 &&
            ((Math.abs(pt.y - b.y) <= b.h / 2) || (b.tile && pt.y >= b.ty && pt.y <= b.ty + b.th)))
          hit = { block: b };
      });
      return hit;
    }
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

  function link(href) {
    const a = el('a', href);
    a.href = href;
    return a;
  }

  function health(h) { return el('span', h, 'h-' + h); }

  function nameOf(guid) {
    const p = lay.pos.get(guid);
    return p ? p.s.name : guid;
  }

  // Empty the details, but for the chart of the same selection, which
  // stays (at the end until its place is known).
  function clearDetails() {
    const keep = keeper.current(selKey());
    detailsBody.textContent = '';
    return keep;
  }

  function showSwitch(s, hostsOnly) {
    const keep = clearDetails();
    detailsBody.appendChild(el('h2', hostsOnly ? 'Hosts of ' + s.name : s.name));
    detailsBody.appendChild(table([
      ['GUID', s.guid], ['LID', s.lid], ['level', s.level], ['ports', s.ports],
      ['health', health(s.health)], ['hosts', s.hosts], ['hosts down', s.hosts_down],
      ['host cables', ORDER.map(function (k) { return k + ' ' + s.host_links[k]; }).join(', ')],
      ['from', link('/api/v1/nodes/' + s.guid)],
    ]));
    const ports = el('div', 'loading ports');
    detailsBody.appendChild(ports);
    if (keep) detailsBody.appendChild(keep);
    getJSON('/api/v1/nodes/' + s.guid).then(function (n) {
      const rows = [['port', 'state', 'width / speed', 'other end', 'tx / rx B/s', 'errors', 'cable', '']];
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
          p.remote ? link('/api/v1/links/' + s.guid + '/' + p.port) : '',
          p.remote ? chartButton(s.guid, p.port) : '']);
      });
      ports.textContent = '';
      ports.appendChild(table(rows));
      const hw = window.ibwatchHw.node(n.hardware);
      if (hw) ports.appendChild(hw);
      const c = chosen();
      if (c && ports.parentNode === detailsBody) chartInto(c.guid, c.port, ports);
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
        return [x.time, x.kind, x.kind === 'hardware_health' ? (x.bad ? 'bad: ' : 'good: ') + x.detail
          : [x.old, '\u2192', x.new, (x.reasons || []).join(','), x.bad_lanes || '']
            .filter(function (v) { return v !== undefined && v !== null && v !== ''; }).join(' ')];
      }))));
    }).catch(function (err) { box.textContent = 'events: ' + err.message; });
  }

  function showBundle(b) {
    const keep = clearDetails();
    detailsBody.appendChild(el('h2', nameOf(b.a) + ' \u2013 ' + nameOf(b.b)));
    detailsBody.appendChild(table([
      ['cables', b.cables], ['health', health(b.health)],
      ['by health', ORDER.map(function (k) { return k + ' ' + b.counts[k]; }).join(', ')],
      ['reasons', b.reasons.join(', ') || 'none'],
      ['utilisation', b.utilisation === null ? 'unknown' : (100 * b.utilisation).toFixed(1) + '% (busiest direction, last sweep)'],
    ]));
    const cables = el('div', 'loading cables');
    detailsBody.appendChild(cables);
    if (keep) detailsBody.appendChild(keep);
    getJSON('/api/v1/nodes/' + b.a).then(function (n) {
      const ps = n.ports.filter(function (p) { return p.remote && p.remote.guid === b.b; });
      return Promise.all(ps.map(function (p) {
        return getJSON('/api/v1/links/' + b.a + '/' + p.port).catch(function () { return null; })
          .then(function (k) { return { p: p, k: k }; });
      }));
    }).then(function (list) {
      const rows = [['port', 'other', 'health', 'reasons', 'width/speed', 'BER', 'raw BER', 'API', '']];
      list.forEach(function (x) {
        const k = x.k;
        rows.push([x.p.port, x.p.remote.port, k ? health(k.health) : '', k ? k.reasons.join(', ') : '',
          k ? (k.width_active || '') + ' ' + (k.speed_active || '') + ' (best ' + (k.width_best || '') + ' ' + (k.speed_best || '') + ')' : '',
          k && k.ber !== null ? k.ber.toExponential(2) : '',
          k && k.raw_ber !== null && k.raw_ber !== undefined ? k.raw_ber.toExponential(2) : '',
          link('/api/v1/links/' + b.a + '/' + x.p.port), chartButton(b.a, x.p.port)]);
      });
      cables.textContent = '';
      cables.appendChild(table(rows));
      // the details shown since: not these any more
      if (cables.parentNode !== detailsBody) return;
      // the cable the user chose, else the worst: its last hour at once
      const c = chosen();
      const worst = list.slice().sort(function (x, y) {
        return ORDER.indexOf(y.k ? y.k.health : 'ok') - ORDER.indexOf(x.k ? x.k.health : 'ok');
      })[0];
      if (c) chartInto(c.guid, c.port, cables);
      else if (worst) chartInto(b.a, worst.p.port, cables);
    }).catch(function (e) { cables.textContent = 'cables: ' + e.message; });
    events(b.a);
  }

  // A cable's facts (/api/v1/links/{guid}/{port}) and its last hour.
  function showCable(guid, port) {
    detailsBody.textContent = '';
    const facts = el('div', 'loading the cable');
    const charts = el('div', '', 'charts');
    detailsBody.appendChild(facts);
    detailsBody.appendChild(charts);
    getJSON('/api/v1/links/' + guid + '/' + port).then(function (k) {
      facts.textContent = '';
      facts.appendChild(el('h2', endName(k.ends[0]) + ' \u2013 ' + endName(k.ends[1])));
      facts.appendChild(table([
        ['health', health(k.health)], ['reasons', k.reasons.join(', ') || 'none'],
        ['width / speed', (k.width_active || '') + ' ' + (k.speed_active || '') +
          ' (best ' + (k.width_best || '') + ' ' + (k.speed_best || '') + ')'],
        ['BER', k.ber !== null ? k.ber.toExponential(2) : 'unknown'],
        ['from', link('/api/v1/links/' + guid + '/' + port)],
      ].concat(window.ibwatchHw.cableRows(k))));
    }).catch(function (e) { facts.textContent = 'cable: ' + e.message; });
    window.ibwatchCharts.cable(charts, guid, port, getJSON);
    events(guid);
  }

  // A button that draws the last hour of the cable at (guid, port) into
  // the details' chart box.
  // The chart in the details, kept while the same switch or bundle
  // stays selected (charts.js).
  const keeper = window.ibwatchCharts.keeper(detailsBody, getJSON);

  function selKey() {
    if (!selected) return null;
    if (selected.switch) return 'switch ' + selected.switch.guid;
    if (selected.tile) return 'tile ' + selected.tile.guid;
    if (selected.bundle) return 'bundle ' + selected.bundle.a + ' ' + selected.bundle.b;
    return null;
  }

  function chartInto(guid, port, after, user) {
    return keeper.into(selKey(), guid, port, after, user);
  }

  function chosen() { return keeper.chosen(selKey()); }

  // A button that charts the last hour of the cable at (guid, port).
  function chartButton(guid, port) {
    const b = el('button', 'last hour', 'chart-button');
    b.type = 'button';
    b.addEventListener('click', function () {
      chartInto(guid, port, null, true).scrollIntoView();
    });
    return b;
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

  // Centre the screen on model point (x, y) at scale k.
  function centre(x, y, k) {
    const r = canvas.getBoundingClientRect();
    tr = { x: r.width / 2 - x * k, y: r.height / 2 - y * k, k: k };
    zoom.translate([tr.x, tr.y]).scale(tr.k);
    redraw();
  }

  canvas.addEventListener('click', function (ev) {
    if (!lay) return;
    const hit = pick(toModel(ev));
    if (hit && hit.block) {
      // open the group: zoom until its switches are drawn one by one
      const b = hit.block;
      const r = canvas.getBoundingClientRect();
      const k = Math.max(GROUP_STEP_PX * 1.5 / lay.step, Math.min(r.width * 0.8 / (b.x1 - b.x0 + 1), 4));
      following = false;
      centre((b.x0 + b.x1) / 2, b.y, k);
      return;
    }
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
        // its details: the job and its ports' last hour
        selected = null;
        details.hidden = false;
        detailsBody.textContent = '';
        detailsBody.appendChild(el('h2', 'Job ' + j.id));
        detailsBody.appendChild(table([
          ['hosts', j.hosts], ['leaves', leaves.size], ['switch bundles', pairs.size],
          ['worst link', health(j.links.worst_health || 'unknown')],
          ['from', link('/api/v1/jobs/' + encodeURIComponent(j.id))],
        ]));
        const box = el('div', '', 'charts');
        detailsBody.appendChild(box);
        window.ibwatchCharts.ports(box, j.ports, getJSON);
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
    // where the focus (the trouble item clicked) is on the screen, and
    // the canvas' size
    focusAt: function () {
      const f = focusBox();
      const r = canvas.getBoundingClientRect();
      return f ? { x: f.x * tr.k + tr.x, y: f.y * tr.k + tr.y, width: r.width, height: r.height } : null;
    },
  };

  // ---- zoom and start ----

  const zoom = d3.behavior.zoom().scaleExtent([0.01, 50]).on('zoom', function () {
    // the user's own zoom or drag: the view is theirs again
    following = false;
    tr = { x: d3.event.translate[0], y: d3.event.translate[1], k: d3.event.scale };
    redraw();
  });
  d3.select(canvas).call(zoom);
  window.addEventListener('resize', function () {
    resize();
    aspect = 0; // the next layout takes the new shape
    redraw();
  });
  resize();
  window.setInterval(showAge, 1000);
  loadEndports();
  poll();
})();
