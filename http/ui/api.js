// SPDX-License-Identifier: BSD-2-Clause
// The page's calls to the API (docs/map.md): JSON by GET, and the
// sign-in they wait for when the agent answers 401; and the DOM helpers
// map.js and hw.js share.
'use strict';

(function () {
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

  // ---- the DOM helpers the page's scripts share ----

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  // A table of @rows, each cell text or a node; the first cell of a row
  // is its header.
  function table(rows) {
    const t = el('table');
    rows.forEach(function (r) {
      const tr = el('tr');
      r.forEach(function (c, i) {
        const td = el(i === 0 ? 'th' : 'td');
        if (c instanceof Node) td.appendChild(c);
        else td.textContent = c === null || c === undefined ? '' : String(c);
        tr.appendChild(td);
      });
      t.appendChild(tr);
    });
    return t;
  }

  window.ibwatchApi = { getJSON: getJSON, el: el, table: table };
})();
