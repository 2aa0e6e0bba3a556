#!/usr/bin/env python3
"""The backdating flood, end to end (issue 30, item 5): one holder of the ingest key sends
events that start on every day of the last 30, each batch with new screens, a new app
version, OS version and device model, so that the daily limits alone would let it create
30 days' worth of values in a minute. Against a real `framescope serve` on loopback:

- every flood request is answered 202 (nothing refused, nothing lost: values past the
  limits are stored as "(other)");
- the distinct values stay within the window limits (3,000 screens, 300 app versions, 300
  OS versions, 2,000 device models per app, docs/security.md), and /metrics counts the folds;
- the server's peak resident memory (VmHWM in /proc/PID/status) stays under RSS_LIMIT_MIB
  through the flood and every read;
- `GET /v1/apps/shop/screens` answers its default page (100 screens) under API_PAGE_LIMIT
  bytes and a page of the most it gives (limit=1000) under API_FULL_PAGE_LIMIT, each within
  PAGE_SECONDS, with `more` and a cursor that walks every screen once;
- every dashboard page (overview, screens, one screen, compare, alerts, with and without a
  menu search) answers under PAGE_LIMIT bytes within PAGE_SECONDS, with at most
  MENU_OPTIONS entries in its filter menus.

Python 3's standard library only (the helpers of e2e_common.py; Selenium is not needed).
Prints one line per check and ends with `N passed, M failed`; exits non-zero on any failure.

Usage: scripts/flood_e2e.py BINARY   (scripts/flood-e2e finds the binary and calls it)
Environment: FLOOD_BATCHES_PER_DAY (default 100), FLOOD_EVENTS_PER_BATCH (2), FLOOD_WORKERS (8):
by default 3,000 batches offering 6,000 screens, 3,000 app and OS versions and 3,000 models,
more than each window limit, about a minute on a debug build.
"""
import concurrent.futures
import copy
import datetime
import gzip
from http.client import HTTPConnection
import json
import os
import re
import secrets
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no scripts/__pycache__ left behind
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import ROOT, Checks, http, summary, with_fresh_collector  # noqa: E402

check = Checks()

DAYS = 30
BATCHES_PER_DAY = int(os.environ.get("FLOOD_BATCHES_PER_DAY", "100"))
EVENTS_PER_BATCH = int(os.environ.get("FLOOD_EVENTS_PER_BATCH", "2"))
WORKERS = int(os.environ.get("FLOOD_WORKERS", "8"))

# The collector's window limits (CardinalityLimits.defaultWindowLimits) and the bounds this
# script holds the server to.
WINDOW = {"screen": 3000, "appVersion": 300, "osVersion": 300, "deviceModel": 2000}
RSS_LIMIT_MIB = 256
API_PAGE_LIMIT = 512 * 1024
API_FULL_PAGE_LIMIT = 2 * 1024 * 1024
PAGE_LIMIT = 1024 * 1024
PAGE_SECONDS = 10.0
MENU_OPTIONS = 400


def iso(timestamp):
    return datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def kib(size):
    return f"{size / 1024:,.0f} KiB"


def memory(pid):
    """(VmRSS, VmHWM) of PID in MiB, from /proc/PID/status."""
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                values[name] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def timed_get(url, headers=None):
    """GET; returns (status, body bytes, seconds)."""
    started = time.monotonic()
    status, _, body = http(url, headers=headers or {}, timeout=120)
    return status, body, time.monotonic() - started


def flood(url, ingest_key, example, now):
    """Posts DAYS × BATCHES_PER_DAY gzip batches, WORKERS at a time; returns the statuses."""
    template = copy.deepcopy(example["events"][0])

    def batch(day, index):
        # Every batch names a new version, OS and model; every event a new screen, so each day
        # alone offers more than the daily limits admit.
        events = []
        for number in range(EVENTS_PER_BATCH):
            event = copy.deepcopy(template)
            event["screen"] = f"Flood-{day:02d}-{index:03d}-{number:02d}"
            event["startedAt"] = iso(now - day * 86_400 - 3600 - index * 10 - number)
            events.append(event)
        body = {"batchId": f"flood-{day:02d}-{index:04d}-{secrets.token_hex(3)}",
                "app": {"id": "shop", "version": f"{day}.{index}", "build": "1"},
                "device": {"model": f"Flood{day},{index}", "osName": "iOS", "osVersion": f"{day}.{index % 100}", "maxRefreshRate": 120},
                "events": events}
        return gzip.compress(json.dumps(body).encode(), 1)

    def send(job):
        day, index = job
        parsed = urllib.parse.urlsplit(url)
        connection = HTTPConnection(parsed.hostname, parsed.port, timeout=120)
        try:
            connection.request("POST", "/v1/events", body=batch(day, index),
                               headers={"Authorization": "Bearer " + ingest_key, "Content-Type": "application/json",
                                        "Content-Encoding": "gzip"})
            response = connection.getresponse()
            response.read()
            return response.status
        except OSError:
            return 0
        finally:
            connection.close()

    jobs = [(day, index) for index in range(BATCHES_PER_DAY) for day in range(DAYS)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return list(pool.map(send, jobs))


def sign_in(url, read_key):
    """A dashboard session cookie, by the sign-in form's double-submit CSRF token."""
    parsed = urllib.parse.urlsplit(url)
    connection = HTTPConnection(parsed.hostname, parsed.port, timeout=60)
    connection.request("GET", "/dashboard/sign-in")
    response = connection.getresponse()
    form = response.read().decode()
    csrf_cookie = re.search(r"framescope_csrf=([^;]+)", response.getheader("Set-Cookie") or "")
    csrf_field = re.search(r'name="csrf" value="([^"]+)"', form)
    if not (csrf_cookie and csrf_field):
        return None
    body = urllib.parse.urlencode({"key": read_key, "csrf": csrf_field.group(1), "next": "/dashboard/apps/shop"})
    connection.request("POST", "/dashboard/sign-in", body=body,
                       headers={"Content-Type": "application/x-www-form-urlencoded", "Cookie": "framescope_csrf=" + csrf_cookie.group(1)})
    response = connection.getresponse()
    response.read()
    connection.close()
    session = None
    for name, value in response.getheaders():
        if name.lower() == "set-cookie" and value.startswith("framescope_session="):
            session = value.split(";")[0]
    return session


def main():
    started = time.time()
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "Server", ".build", "debug", "framescope")
    admin_token = secrets.token_hex(24)
    with_fresh_collector(binary, check, "flood e2e", lambda server, url, keys: run(server, url, keys, admin_token),
                         env={"FRAMESCOPE_ADMIN_TOKEN": admin_token})
    return summary(check, started, "flood e2e")


def run(server, url, keys, admin_token):
    _, idle = memory(server.pid)
    print(f"      peak RSS before the flood: {idle:.0f} MiB", flush=True)
    status, _, raw = http(url + "/openapi.json")
    example = json.loads(raw)["paths"]["/v1/events"]["post"]["requestBody"]["content"]["application/json"]["example"]
    now = time.time()
    flood_started = time.monotonic()
    statuses = flood(url, keys["ingestKey"], example, now)
    seconds = time.monotonic() - flood_started
    counts = {code: statuses.count(code) for code in sorted(set(statuses))}
    check(counts == {202: len(statuses)},
          f"{len(statuses):,} flood batches of {EVENTS_PER_BATCH} events over {DAYS} days in {seconds:.1f} s "
          f"({len(statuses) * EVENTS_PER_BATCH / seconds:,.0f} events/s): every one answered 202 ({counts})")
    rss, peak = memory(server.pid)
    print(f"      after the flood: RSS {rss:.0f} MiB, peak {peak:.0f} MiB", flush=True)

    read = {"Authorization": "Bearer " + keys["readKey"]}
    # The screens API, a page at a time: every screen once, within the window's limit.
    status, body, elapsed = timed_get(url + "/v1/apps/shop/screens", read)
    page = json.loads(body) if status == 200 else {}
    check(status == 200 and len(body) < API_PAGE_LIMIT and elapsed < PAGE_SECONDS and page.get("more") is True and page.get("cursor"),
          f"GET …/screens: {status}, {kib(len(body))} (bound {kib(API_PAGE_LIMIT)}) in {elapsed:.2f} s, "
          f"{len(page.get('screens', []))} screens with more={page.get('more')}")
    names, pages, largest, slowest = [], 0, 0, 0.0
    cursor = None
    while True:
        path = "/v1/apps/shop/screens?limit=1000" + (f"&after={cursor}" if cursor else "")
        status, body, elapsed = timed_get(url + path, read)
        if status != 200:
            check(False, f"GET {path}: {status}")
            break
        answer = json.loads(body)
        pages += 1
        largest, slowest = max(largest, len(body)), max(slowest, elapsed)
        names += [entry["screen"] for entry in answer["screens"]]
        cursor = answer.get("cursor")
        if not answer.get("more") or pages > 20:
            break
    distinct = len(set(names))
    check(distinct == len(names) and distinct <= WINDOW["screen"] + 1 and "(other)" in names
          and largest < API_FULL_PAGE_LIMIT and slowest < PAGE_SECONDS,
          f"the cursor walks {distinct:,} screens once in {pages} pages of limit=1000 (largest {kib(largest)}, bound {kib(API_FULL_PAGE_LIMIT)}; "
          f"slowest {slowest:.2f} s): at most the window's {WINDOW['screen']:,} and (other)")

    # /metrics: the folds, per dimension.
    status, _, raw = http(url + "/metrics", headers={"Authorization": "Bearer " + admin_token})
    folded = {match.group(1): float(match.group(2))
              for match in re.finditer(r'framescope_folded_values_total\{app="shop",dimension="(\w+)"\} ([0-9.e+]+)', raw.decode())}
    check(all(folded.get(name, 0) > 0 for name in WINDOW),
          "/metrics counts events folded into (other) for every limited dimension: "
          + ", ".join(f"{name} {folded.get(name, 0):,.0f}" for name in WINDOW))

    # The dashboard: every page bounded, its menus too.
    cookie = sign_in(url, keys["readKey"])
    if not check(cookie is not None, "signed in to the dashboard with the read key"):
        return
    headers = {"Cookie": cookie}
    base = "/dashboard/apps/shop"
    first_screen = next((name for name in names if name != "(other)"), "(other)")
    pages_to_load = [
        ("overview", base),
        ("overview by device model", base + "?by=deviceModel"),
        ("overview, 90 days", base + "?days=90"),
        ("screens", base + "/screens"),
        ("screens, last page", base + "/screens?page=1000"),
        ("one screen", base + "/screens/" + urllib.parse.quote(first_screen, safe="")),
        ("compare", base + "/compare"),
        ("alerts", base + "/alerts"),
        ("overview, a menu search", base + "?find.deviceModel=Flood2%2C"),
    ]
    for name, path in pages_to_load:
        status, body, elapsed = timed_get(url + path, headers)
        html = body.decode(errors="replace")
        options = html.count("<option")
        check(status == 200 and len(body) < PAGE_LIMIT and elapsed < PAGE_SECONDS and options <= MENU_OPTIONS,
              f"dashboard {name}: {status}, {kib(len(body))} (bound {kib(PAGE_LIMIT)}) in {elapsed:.2f} s (bound {PAGE_SECONDS:.0f} s), "
              f"{options} menu options (bound {MENU_OPTIONS})")
        if name == "overview":
            check('name="find.deviceModel"' in html and 'name="find.appVersion"' in html and 'name="find.screen"' not in html,
                  "the overview's long menus (versions, OS, models) have a search box")
        if name == "overview, a menu search":
            models = re.findall(r'<option value="(Flood2,[^"]*)"', html)
            check(len(models) > 0 and all(model.startswith("Flood2,") for model in models),
                  f"the model menu's search finds models containing 'Flood2,' ({len(models)} of them)")

    rss, peak = memory(server.pid)
    check(peak < RSS_LIMIT_MIB,
          f"the server's peak RSS through the flood and every read: {peak:.0f} MiB (bound {RSS_LIMIT_MIB} MiB; {idle:.0f} MiB before, {rss:.0f} MiB now)")


if __name__ == "__main__":
    sys.exit(main())
