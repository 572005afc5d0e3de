// SPDX-License-Identifier: BSD-2-Clause
// The last hour of a cable in small charts (docs/map.md): what
// /api/v1/history/{guid}/{port} says, its 12 buckets of 5 minutes, each
// end a line: transmit rate, error increments, FEC raw BER, transmit
// wait. Drawn on canvases; the numbers drawn are left in the box's
// data-history (JSON) for a test or a person with the console open.
'use strict';

(function () {
  const END_COLOURS = ['#1565c0', '#e65100'];

  function errorsOf(w) {
    let n = 0;
    Object.keys(w.errors || {}).forEach(function (k) { n += Number(w.errors[k]) || 0; });
    return n;
  }

  function fmt(v, kind) {
    if (v === null || v === undefined) return '-';
    if (kind === 'ber') return v === 0 ? '0' : v.toExponential(1);
    if (kind === 'ratio') return (100 * v).toFixed(v < 0.01 ? 2 : 1) + '%';
    if (v >= 1e9) return (v / 1e9).toFixed(2) + 'G';
    if (v >= 1e6) return (v / 1e6).toFixed(2) + 'M';
    if (v >= 1e3) return (v / 1e3).toFixed(1) + 'k';
    return String(Math.round(v * 100) / 100);
  }

  // One chart: @series[end][bucket], null where nothing was read.
  function chart(box, title, series, kind) {
    const wrap = document.createElement('div');
    wrap.className = 'chart';
    const head = document.createElement('div');
    head.className = 'chart-title';
    const c = document.createElement('canvas');
    const W = 340;
    const H = 56;
    const d = window.devicePixelRatio || 1;
    c.width = W * d;
    c.height = H * d;
    c.style.width = W + 'px';
    c.style.height = H + 'px';
    wrap.appendChild(head);
    wrap.appendChild(c);
    box.appendChild(wrap);
    const g = c.getContext('2d');
    g.scale(d, d);
    const log = kind === 'ber';
    // a BER of 0 (read, nothing corrected) sits a decade below the
    // lowest other, on the floor
    let floor = Infinity;
    series.forEach(function (s) {
      s.forEach(function (v) { if (log && v > 0) floor = Math.min(floor, Math.log10(v) - 1); });
    });
    if (!isFinite(floor)) floor = -13;
    const val = function (v) {
      if (v === null || v === undefined) return null;
      if (!log) return v;
      return v > 0 ? Math.log10(v) : floor;
    };
    let lo = Infinity;
    let hi = -Infinity;
    series.forEach(function (s) {
      s.forEach(function (v) {
        const x = val(v);
        if (x === null) return;
        lo = Math.min(lo, x);
        hi = Math.max(hi, x);
      });
    });
    const last = series.map(function (s) { return s[s.length - 1]; });
    head.textContent = title + ': ' + last.map(function (v, i) {
      return (i ? 'other end ' : 'this end ') + fmt(v, kind);
    }).join(', ') + (!isFinite(hi) ? ' (none read)' : log && hi === floor ? ' (all 0)' : ' (max ' + fmt(log ? Math.pow(10, hi) : hi, kind) + ')');
    g.fillStyle = '#f5f7f8';
    g.fillRect(0, 0, W, H);
    if (!isFinite(hi)) return;
    if (!log) lo = Math.min(0, lo);
    if (hi - lo < 1e-12) hi = lo + (log ? 1 : Math.max(1, Math.abs(lo)));
    const n = series[0].length;
    const x = function (i) { return 4 + (i + 0.5) * (W - 8) / n; };
    const y = function (v) { return H - 4 - (v - lo) / (hi - lo) * (H - 10); };
    series.forEach(function (s, e) {
      g.strokeStyle = END_COLOURS[e];
      g.fillStyle = END_COLOURS[e];
      g.lineWidth = 1.5;
      g.beginPath();
      let pen = false;
      s.forEach(function (v, i) {
        const t = val(v);
        if (t === null) { pen = false; return; }
        if (pen) g.lineTo(x(i), y(t));
        else g.moveTo(x(i), y(t));
        pen = true;
        g.fillRect(x(i) - 1.5, y(t) - 1.5, 3, 3);
      });
      g.stroke();
    });
  }

  // Charts of the cable at (@guid, @port) into @box; @getJSON fetches.
  function cable(box, guid, port, getJSON) {
    box.textContent = 'loading the last hour';
    return getJSON('/api/v1/history/' + guid + '/' + port).then(function (h) {
      box.textContent = '';
      // this end first: the one the caller named
      const order = h.ends[0].guid === guid && h.ends[0].port === Number(port) ? [0, 1] : [1, 0];
      const pick = function (f) {
        return order.map(function (e) {
          return h.buckets.map(function (b) {
            const w = b.ends[e];
            return w.seconds > 0 ? f(w) : null;
          });
        });
      };
      const data = {
        ends: order.map(function (e) { return h.ends[e]; }),
        start: h.buckets.length ? h.buckets[0].start : null,
        bucket_seconds: h.bucket_seconds,
        seconds: order.map(function (e) { return h.buckets.map(function (b) { return b.ends[e].seconds; }); }),
        xmit_bytes: order.map(function (e) { return h.buckets.map(function (b) { return Number(b.ends[e].xmit_bytes); }); }),
        errors: order.map(function (e) { return h.buckets.map(function (b) { return errorsOf(b.ends[e]); }); }),
        rate: pick(function (w) { return w.xmit_bytes_per_second; }),
        raw_ber: pick(function (w) { return w.raw_ber; }),
        xmit_wait_ratio: pick(function (w) { return w.xmit_wait_ratio; }),
      };
      const h3 = document.createElement('h3');
      h3.textContent = 'Last hour, 5 minutes a point (' + h.ends[order[0]].name + ' [' +
        h.ends[order[0]].port + '] blue, ' + h.ends[order[1]].name + ' [' + h.ends[order[1]].port + '] orange)';
      box.appendChild(h3);
      chart(box, 'transmit B/s', data.rate, 'rate');
      chart(box, 'error increments', pick(errorsOf), 'count');
      chart(box, 'FEC raw BER', data.raw_ber, 'ber');
      chart(box, 'transmit wait', data.xmit_wait_ratio, 'ratio');
      const a = document.createElement('a');
      a.href = '/api/v1/history/' + guid + '/' + port;
      a.textContent = a.href.replace(window.location.origin, '');
      box.appendChild(a);
      box.dataset.history = JSON.stringify(data);
      return data;
    }).catch(function (e) { box.textContent = 'last hour: ' + e.message; });
  }

  // The last hour of a set of ports (a job's hosts, @ports [{guid,
  // port}], JOB_PORTS at most): each bucket summed over their cables,
  // what the ports sent (blue) and received (orange), errors at either
  // end.
  const JOB_PORTS = 64;
  function ports(box, list, getJSON) {
    const some = list.slice(0, JOB_PORTS);
    box.textContent = 'loading the last hour of ' + some.length + ' ports';
    return Promise.all(some.map(function (p) {
      return getJSON('/api/v1/history/' + p.guid + '/' + p.port).then(function (h) {
        return { p: p, h: h };
      }).catch(function () { return null; });
    })).then(function (got) {
      const hs = got.filter(function (x) { return x; });
      box.textContent = '';
      if (!hs.length) { box.textContent = 'last hour: no cable of these ports'; return null; }
      // by each bucket's start: a 5-minute period may have begun
      // between two of the answers
      const at = new Map();
      hs[0].h.buckets.forEach(function (b, i) { at.set(b.start, i); });
      const n = hs[0].h.buckets.length;
      const zero = function () { return new Array(n).fill(null); };
      const tx = zero();
      const rx = zero();
      const err = [zero(), zero()];
      const add = function (a, i, v) { a[i] = (a[i] || 0) + v; };
      hs.forEach(function (x) {
        const me = x.h.ends[0].guid === x.p.guid && x.h.ends[0].port === Number(x.p.port) ? 0 : 1;
        x.h.buckets.forEach(function (b) {
          const i = at.get(b.start);
          if (i === undefined) return; // a period the first answer did not have
          const a = b.ends[me];
          const o = b.ends[1 - me];
          if (a.seconds > 0) add(tx, i, a.xmit_bytes_per_second || 0);
          if (o.seconds > 0) add(rx, i, o.xmit_bytes_per_second || 0);
          if (a.seconds > 0) add(err[0], i, errorsOf(a));
          if (o.seconds > 0) add(err[1], i, errorsOf(o));
        });
      });
      const h3 = document.createElement('h3');
      h3.textContent = 'Last hour of ' + hs.length + ' ports' +
        (list.length > some.length ? ' (the first ' + some.length + ' of ' + list.length + ')' : '') +
        ', 5 minutes a point (sent blue, received orange)';
      box.appendChild(h3);
      chart(box, 'B/s, all ports', [tx, rx], 'rate');
      chart(box, 'error increments (at the ports, at their peers)', err, 'count');
      const data = { ports: hs.length, sent: tx, received: rx, errors: err };
      box.dataset.history = JSON.stringify(data);
      return data;
    }).catch(function (e) { box.textContent = 'last hour: ' + e.message; });
  }

  // The chart of a details panel (@body), kept while the same selection
  // stays (its details are drawn again at every poll), and asked again
  // at most every KEEP_MS.
  const KEEP_MS = 30000;
  function keeper(body, getJSON) {
    let k = null; // { sel, guid, port, box, at, user }
    return {
      // Chart the cable at (guid, port) for selection @sel, after @after
      // (else at the end of @body), in place of a chart there; @user:
      // the user chose it.
      into: function (sel, guid, port, after, user) {
        let box;
        if (k && k.sel === sel && k.guid === guid && k.port === port && Date.now() - k.at < KEEP_MS) {
          box = k.box;
          k.user = k.user || !!user;
        } else {
          box = document.createElement('div');
          box.className = 'charts';
          k = { sel: sel, guid: guid, port: port, box: box, at: Date.now(), user: !!user };
          cable(box, guid, port, getJSON);
        }
        const old = body.querySelector('.charts');
        if (old && old !== box) old.remove();
        if (after && after.parentNode === body) body.insertBefore(box, after.nextSibling);
        else body.appendChild(box);
        return box;
      },
      // the cable the user chose to chart for selection @sel, or null
      chosen: function (sel) { return k && k.user && k.sel === sel ? k : null; },
      // the chart box kept for selection @sel, or null
      current: function (sel) {
        return k && k.sel === sel && Date.now() - k.at < KEEP_MS ? k.box : null;
      },
    };
  }

  window.ibwatchCharts = { cable: cable, ports: ports, keeper: keeper };
})();
