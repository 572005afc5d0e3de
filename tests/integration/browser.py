#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Drive the fabric map in headless Chromium (chromium-driver, Debian's
python3-selenium) as a person would, and write what the page showed as
JSON for tests/integration/browser.sh to check:

  browser.py URL OUT.json [--trace FROM TO] [--then CMD WAIT_JS]
             [--token T] [--screenshot PNG] [--trace-screenshot PNG]
             [--size WxH] [--signal FILE] [--pause FILE] [--click NAME]
             [--census] [--job ID] [--eval JS] [--query Q] [--trouble N]
             [--colours] [--trouble-screenshot PNG]

- load URL; with --token, whenever the page shows its sign-in form
  (the agent's own form at / with --http-token-everywhere, the map's
  when an API call got 401), type T there and submit, as a person would;
  the console up to then is kept apart (a 401 logs an error);
- wait for the map to be drawn (the canvas' data-summary), keep it;
- --click: click switch NAME, keep the details panel's text and its
  ports table's rows; click its first port's "last hour", keep the
  chart's numbers, and again 5 s (two polls) later; --census: tick "route census", keep the overlay;
- --job: show job ID's hosts and links, keep what was marked and the
  numbers its details' last-hour charts drew;
- --trace: type FROM and TO, press Trace, wait for the path, keep it;
- --then: run the shell command CMD, wait (60 s at most) until the page's
  summary satisfies the JavaScript expression WAIT_JS (on `s`), keep it;
- --signal: create FILE; --pause: wait for FILE (the test restarts the
  agent meanwhile), then until the page shows a newer map and no error;
- --query: load URL/?Q (?group=1 draws a small fabric grouped);
- --trouble: wait until the trouble list holds N items (60 s at most),
  then click each of the first N as a person would: keep the item, where
  its focus then is on the screen, the details' text and, for a cable,
  the numbers its last-hour charts drew (data-history); the canvas'
  pixels of each health's colour as loaded and the page's title at the
  end (--colours: those alone);
  --trouble-screenshot: a screenshot after the last click;
- --eval: the value of the JavaScript expression JS at the end;
- the browser console's entries and every URL the page requested.
"""
import json
import os
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.common.exceptions import StaleElementReferenceException


def arg(name, n=1):
    if name not in sys.argv:
        return None
    i = sys.argv.index(name)
    return sys.argv[i + 1:i + 1 + n] if n > 1 else sys.argv[i + 1]


def summary(d):
    s = d.execute_script(
        "const c = document.getElementById('map');"
        "return c && c.dataset.summary ? c.dataset.summary : null;")
    return json.loads(s) if s else None


# --token: the token, the sign-ins done, the console up to the last one
SIGNIN = {"token": None, "count": 0, "console": []}


def sign_in_if_asked(d):
    """Fill in and submit the sign-in form if the page shows one."""
    if not SIGNIN["token"]:
        return
    try:
        f = d.find_elements(By.ID, "signin-token")
        if not f or not f[0].is_displayed():
            return
        SIGNIN["console"] += d.get_log("browser")
        f[0].send_keys(SIGNIN["token"])
        d.find_element(By.CSS_SELECTOR, "#signin button[type=submit]").click()
        SIGNIN["count"] += 1
        time.sleep(0.3)  # the form goes away, or the page is replaced
    except Exception:  # the page changed under us: look again
        pass


def wait(d, pred, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sign_in_if_asked(d)
        s = summary(d)
        if s is not None and pred(s):
            return s
        time.sleep(0.1)
    return None


# The health colours of the map's legend (http/ui/map.css, .key)
HEALTH_COLOURS = {"ok": "#78909c", "degraded": "#f9a825",
                  "failing": "#e65100", "down": "#c62828"}


def colours(d):
    """Pixels of the map's canvas within 24 (summed over R, G, B) of each
    health's colour, as the screen shows them."""
    return d.execute_script("""
        const want = arguments[0];
        const c = document.getElementById('map');
        const img = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const rgb = {}, n = {};
        for (const k in want) {
            const h = want[k];
            rgb[k] = [1, 3, 5].map(function (i) { return parseInt(h.slice(i, i + 2), 16); });
            n[k] = 0;
        }
        for (let i = 0; i < img.length; i += 4)
            for (const k in rgb) {
                const x = rgb[k];
                if (Math.abs(img[i] - x[0]) + Math.abs(img[i + 1] - x[1]) +
                    Math.abs(img[i + 2] - x[2]) < 24) { n[k]++; break; }
            }
        return n;""", HEALTH_COLOURS)


def trouble(d, n):
    """Click each of the first @n items of the trouble list."""
    s = wait(d, lambda s: len(s.get("trouble") or []) >= n, 60)
    out = {"summary": s, "clicked": []}
    if s is None:
        return out
    for i in range(n):
        item = None
        for _ in range(5):  # the list may change under the click
            try:
                b = d.find_elements(By.CSS_SELECTOR, "#trouble-list button")[i]
                item = {"text": b.text}
                b.click()
                break
            except (StaleElementReferenceException, IndexError):
                time.sleep(0.3)
        if item is None:
            out["clicked"].append({"text": None, "error": "no line %d" % i})
            continue
        end = time.monotonic() + 15
        hist = None
        while time.monotonic() < end:
            time.sleep(0.2)
            hist = d.execute_script(
                "const c = document.querySelector('#details .charts');"
                "return c && c.dataset.history ? c.dataset.history : null;")
            if hist or not s["trouble"][i]["kind"] in ("cable", "endport"):
                break
        time.sleep(0.3)  # the zoom's frame
        item["focus"] = d.execute_script("return window.ibwatchMap.focusAt();")
        item["summary_focus"] = summary(d)["focus"]
        item["history"] = json.loads(hist) if hist else None
        item["details"] = d.find_element(By.ID, "details").text[:400]
        out["clicked"].append(item)
    return out


def renderer_rss():
    """The largest resident size of Chromium's renderer processes (kB):
    the page's memory as the system sees it."""
    best = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read()
            if b"--type=renderer" not in cmd:
                continue
            with open("/proc/%s/status" % pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        best = max(best, int(line.split()[1]))
        except OSError:
            continue
    return best


def main():
    url, out = sys.argv[1], sys.argv[2]
    size = (arg("--size") or "1400x900").split("x")
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu",
              "--disable-dev-shm-usage", "--no-first-run",
              "--disable-background-networking", "--disable-sync",
              "--disable-component-update", "--disable-default-apps",
              "--window-size=%s,%s" % (size[0], size[1])):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs",
                     {"browser": "ALL", "performance": "ALL"})
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    res = {"ok": False}
    try:
        d.set_page_load_timeout(30)
        SIGNIN["token"] = arg("--token")
        t0 = time.monotonic()
        d.get(url + "/" + ("?" + arg("--query") if arg("--query") else ""))
        s = wait(d, lambda s: True, 30)
        res["load_s"] = time.monotonic() - t0
        res["url_after_load"] = d.current_url
        res["first"] = s
        if s is None:
            res["body"] = d.find_element(By.TAG_NAME, "body").text[:2000]
        res["age_text"] = d.find_element(By.ID, "age").text
        if s is not None and (arg("--trouble") or "--colours" in sys.argv):
            # as loaded, before anything is clicked
            time.sleep(0.5)
            res["colours"] = colours(d)
        shot = arg("--screenshot")
        if shot and s is not None:
            d.save_screenshot(shot)
        res["memory"] = d.execute_cdp_cmd("Performance.enable", {}) and None
        res["renderer_rss_kb"] = renderer_rss()
        m = d.execute_cdp_cmd("Performance.getMetrics", {})
        res["js_heap_bytes"] = next(
            (x["value"] for x in m["metrics"] if x["name"] == "JSHeapTotalSize"), None)
        click = arg("--click")
        if s is not None and click:
            xy = d.execute_script("return window.ibwatchMap.at(arguments[0]);", click)
            c = d.find_element(By.ID, "map")
            r = c.rect
            ActionChains(d).move_to_element_with_offset(
                c, int(xy[0] - r["width"] / 2), int(xy[1] - r["height"] / 2)).click().perform()
            end = time.monotonic() + 10
            text = ""
            while time.monotonic() < end:
                text = d.find_element(By.ID, "details").text
                if "port" in text and "Events" in text and "loading" not in text:
                    break
                time.sleep(0.1)
            res["details"] = text
            res["details_ports"] = d.execute_script(
                "return document.querySelectorAll('#details table')[1].rows.length - 1;")
            # a port's "last hour", then two polls later (the details are
            # drawn again at each): the same chart still there
            hist = "const c = document.querySelector('#details .charts');" \
                "return c && c.dataset.history ? c.dataset.history : null;"
            bs = d.find_elements(By.CSS_SELECTOR, "#details .chart-button")
            if bs:
                bs[0].click()
                end = time.monotonic() + 10
                first = None
                while time.monotonic() < end and not first:
                    first = d.execute_script(hist)
                    time.sleep(0.2)
                time.sleep(5)
                later = d.execute_script(hist)
                res["port_chart"] = json.loads(first) if first else None
                res["port_chart_later"] = json.loads(later) if later else None
        if s is not None and "--census" in sys.argv:
            d.find_element(By.ID, "census").click()
            res["census"] = wait(d, lambda s: s["overlay"] is not None, 20)
            res["census_status"] = d.find_element(By.ID, "census-status").text
        jid = arg("--job")
        if s is not None and jid:
            d.find_element(By.ID, "job-id").send_keys(jid)
            d.find_element(By.CSS_SELECTOR, "#job button[type=submit]").click()
            res["job"] = wait(d, lambda s: s.get("job") is not None, 20)
            res["job_status"] = d.find_element(By.ID, "job-status").text
            # the job's details: its ports' last hour, summed
            end = time.monotonic() + 15
            while time.monotonic() < end:
                h = d.execute_script(
                    "const c = document.querySelector('#details .charts');"
                    "return c && c.dataset.history ? c.dataset.history : null;")
                if h:
                    res["job_history"] = json.loads(h)
                    break
                time.sleep(0.2)
        tr = arg("--trace", 2)
        if s is not None and tr:
            d.find_element(By.ID, "from").send_keys(tr[0])
            d.find_element(By.ID, "to").send_keys(tr[1])
            d.find_element(By.CSS_SELECTOR, "#trace button[type=submit]").click()
            res["traced"] = wait(d, lambda s: len(s["path"]) > 0, 20)
            res["trace_status"] = d.find_element(By.ID, "trace-status").text
            shot = arg("--trace-screenshot")
            if shot:
                d.save_screenshot(shot)
        then = arg("--then", 2)
        if s is not None and then:
            subprocess.run(then[0], shell=True, check=False)
            t1 = time.monotonic()
            res["then"] = wait(
                d, lambda s: d.execute_script("const s = arguments[0]; return " + then[1] + ";", s), 60)
            res["then_s"] = time.monotonic() - t1
        sig = arg("--signal")
        if sig:
            open(sig, "w").close()
        go = arg("--pause")
        if s is not None and go:
            # the agent restarts meanwhile: the page must follow it
            end = time.monotonic() + 60
            while not os.path.exists(go) and time.monotonic() < end:
                time.sleep(0.1)
            before = summary(d)
            t2 = time.monotonic()
            res["after_restart"] = wait(
                d, lambda s: s["taken"] != before["taken"] and
                "unreachable" not in d.find_element(By.ID, "age").text, 60)
            res["restart_s"] = time.monotonic() - t2
            res["age_after_restart"] = d.find_element(By.ID, "age").text
        nt = arg("--trouble")
        if s is not None and nt:
            res["trouble"] = trouble(d, int(nt))
            shot = arg("--trouble-screenshot")
            if shot:
                d.save_screenshot(shot)
        if s is not None and (nt or "--colours" in sys.argv):
            # at the same moment: a poll may change both
            t, sm = d.execute_script(
                "const c = document.getElementById('map');"
                "return [document.title, c.dataset.summary];")
            res["title"] = t
            res["summary"] = json.loads(sm)
        ev = arg("--eval")
        if ev:
            res["eval"] = d.execute_script("return " + ev + ";")
        res["console"] = d.get_log("browser")
        res["signins"] = SIGNIN["count"]
        res["console_before_signin"] = SIGNIN["console"]
        urls = []
        for e in d.get_log("performance"):
            msg = json.loads(e["message"])["message"]
            if msg.get("method") == "Network.requestWillBeSent":
                urls.append(msg["params"]["request"]["url"])
        res["requests"] = urls
        res["ok"] = True
    finally:
        d.quit()
        with open(out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
