// SPDX-License-Identifier: BSD-2-Clause
// The page's calls to the API (docs/map.md): JSON by GET, and the
// sign-in they wait for when the agent answers 401.
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

  window.ibwatchApi = { getJSON: getJSON };
})();
