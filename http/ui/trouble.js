// SPDX-License-Identifier: BSD-2-Clause
// The map's trouble list (docs/map.md): what is not healthy, worst
// first, made from the API's answers (map.js fetches them, shows the
// list and goes to an item). Cables down, failing, degraded (and how
// many more than listed), endports down, broken routes, hot bundles;
// each item with where it is on the map.
'use strict';

(function () {
  const RANK = { down: 0, failing: 1, degraded: 2 };

  // Where a cable is on the map: the bundle of two switches, or the tile
  // of the leaf a host hangs from.
  function cableTarget(k, isSwitch) {
    const a = k.ends[0];
    const b = k.ends[1];
    if (isSwitch(a.guid) && isSwitch(b.guid)) return { bundle: [a.guid, b.guid] };
    const sw = isSwitch(a.guid) ? a : isSwitch(b.guid) ? b : null;
    return sw ? { tile: sw.guid } : null;
  }

  function endName(e) { return e.name + ' [' + e.port + ']'; }

  // The list from what the API said (@q): links (the cables not ok, up
  // to a number of each health), counts (the whole view's, by health),
  // endports (those down), broken (/api/v1/routes?broken=1 or null),
  // bundles (the map's), isSwitch(guid), nameOf(guid), hot (a share).
  function items(q) {
    const links = q.links;
    const counts = q.counts;
    const broken = q.broken;
    const isSwitch = q.isSwitch;
    const items = [];
    // more cables of a health than listed: one line says how many
    ['down', 'failing', 'degraded'].forEach(function (h) {
      const listed = links.filter(function (k) { return k.health === h; }).length;
      if ((counts[h] || 0) > listed) {
        items.push({
          kind: 'more', health: h, rank: RANK[h] + 0.5, target: null, count: counts[h] - listed,
          text: (counts[h] - listed) + ' more ' + h + ' cables: /api/v1/links?health=' + h,
        });
      }
    });
    links.forEach(function (k) {
      const t = cableTarget(k, isSwitch);
      items.push({
        kind: 'cable', health: k.health, rank: RANK[k.health], target: t,
        link: { guid: k.ends[0].guid, port: k.ends[0].port },
        text: k.health + ': ' + endName(k.ends[0]) + ' \u2013 ' + endName(k.ends[1]) +
          (k.reasons.length ? ' (' + k.reasons.join(', ') + ')' : ''),
      });
    });
    q.endports.forEach(function (e) {
      items.push({
        kind: 'endport', health: 'down', rank: 3, target: null,
        link: { guid: e.node_guid, port: e.port },
        // (not its reason: its count of probes changes at every poll)
        text: 'endport down: ' + (e.name || e.port_guid),
      });
    });
    if (broken && broken.total > 0) {
      const p = (broken.pairs || [])[0];
      items.push({
        kind: 'routes', health: 'down', rank: 4,
        target: p && p.break && isSwitch(p.break.node_guid) ? { switch: p.break.node_guid } : null,
        text: broken.total + ' broken routes' + (p ? '; first ' + p.src_name + ' \u2192 ' + (p.dst_name || p.dlid) +
          (p.break ? ', breaks at ' + p.break.node_name + ' [' + p.break.port + ']' : '') : ''),
      });
    }
    q.bundles.forEach(function (b) {
      if (b.health !== 'ok' || b.utilisation === null || b.utilisation < q.hot) return;
      items.push({
        kind: 'hot', health: 'busy', rank: 5, target: { bundle: [b.a, b.b] },
        text: 'hot: ' + q.nameOf(b.a) + ' \u2013 ' + q.nameOf(b.b) + ' ' + (100 * b.utilisation).toFixed(0) + '% busy',
      });
    });
    items.sort(function (x, y) { return x.rank - y.rank; });
    return items;
  }

  // @list's lines (an <ol>) for @items, the first 200: changed in place,
  // not made anew at every poll, so that a click under way lands on the
  // line it was meant for; @pick(index) on a click.
  const SHOWN = 200;
  function render(list, items, pick) {
    const shown = items.slice(0, SHOWN);
    const more = list.querySelector('li.more');
    if (more) more.remove();
    while (list.children.length > shown.length) list.lastChild.remove();
    shown.forEach(function (t, i) {
      let li = list.children[i];
      if (!li) {
        li = document.createElement('li');
        const nb = document.createElement('button');
        nb.type = 'button';
        nb.addEventListener('click', function (ev) { pick(Number(ev.currentTarget.dataset.index)); });
        li.appendChild(nb);
        list.appendChild(li);
      }
      const b = li.firstChild;
      b.dataset.index = String(i);
      if (b.textContent !== t.text) b.textContent = t.text;
      if (b.className !== 'h-' + t.health) b.className = 'h-' + t.health;
    });
    if (items.length > shown.length) {
      const li = document.createElement('li');
      li.className = 'more';
      li.textContent = (items.length - shown.length) + ' more';
      list.appendChild(li);
    }
  }

  window.ibwatchTrouble = { items: items, render: render, cableTarget: cableTarget, endName: endName };
})();
