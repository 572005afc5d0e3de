// SPDX-License-Identifier: BSD-2-Clause
// What the map's details show of hardware health (docs/hardware.md): a
// node's firmware, sensors, fans, power supplies and cable modules (GET
// /api/v1/nodes/{guid}, its "hardware"), and what a cable's modules say
// of themselves (GET /api/v1/links/{guid}/{port}, each end's "module").
'use strict';

(function () {
  const el = window.ibwatchApi.el;
  const table = window.ibwatchApi.table;

  function bad(text) { return el('span', text, 'h-failing'); }

  function uptime(s) {
    const d = Math.floor(s / 86400);
    const h = Math.floor(s % 86400 / 3600);
    return d + 'd ' + h + 'h';
  }

  // The node's hardware as a box, or null when it was not asked.
  function node(hw) {
    if (!hw) return null;
    const box = el('div', undefined, 'hardware');
    box.appendChild(el('h3', 'Hardware'));
    if (hw.state !== 'ok') {
      box.appendChild(el('p', 'not read: ' + hw.state.replace('_', ' ')));
      return box;
    }
    const rows = [
      ['firmware', (hw.firmware_version || '') + (hw.psid ? ' (' + hw.psid + ')' : '')],
      ['part / serial', (hw.part_number || '') + ' / ' + (hw.serial_number || '')],
      ['uptime', hw.uptime_s === undefined ? '' : uptime(hw.uptime_s)],
    ];
    (hw.sensors || []).forEach(function (s) {
      const t = s.temperature_c.toFixed(1) + ' C' +
        (s.threshold_high_c ? ' (warning at ' + s.threshold_high_c.toFixed(1) + ' C)' : '');
      rows.push(['sensor ' + s.index + ' ' + s.name, s.hot ? bad(t + ' hot') : t]);
    });
    (hw.fans || []).forEach(function (f) {
      const t = f.rpm + ' rpm';
      rows.push(['fan ' + f.tacho, f.failed ? bad(t + ' failed') : t]);
    });
    (hw.power_supplies || []).forEach(function (p) {
      const t = (p.present ? 'present' : 'absent') + ', DC ' + (p.dc_ok ? 'ok' : 'failed') +
        ', fan ' + p.fan + (p.watts ? ', ' + p.watts + ' W' : '');
      rows.push(['power supply ' + p.index, p.failed ? bad(t) : t]);
    });
    (hw.modules || []).forEach(function (m) {
      if (!m.present) return;
      const t = m.vendor + ' ' + m.part_number + ' ' + m.serial_number +
        (m.health === 'ok' ? '' : ': ' + m.reason);
      rows.push(['module port ' + m.port, m.health === 'ok' ? t : bad(t)]);
    });
    box.appendChild(table(rows));
    return box;
  }

  // A cable's rows: what each end's module says, when it says anything.
  function cableRows(k) {
    const rows = [];
    (k.ends || []).forEach(function (e) {
      if (!e.module) return;
      rows.push(['module at ' + e.name + ' port ' + e.port,
        bad(e.module.level + ': ' + e.module.text)]);
    });
    return rows;
  }

  window.ibwatchHw = { node: node, cableRows: cableRows };
})();
