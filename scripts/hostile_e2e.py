#!/usr/bin/env python3
"""Hostile input, end to end (issue 14): what a holder of the ingest key (shipped inside
every app binary) can send, posted to a real `framescope serve` on loopback, then every
read route and every dashboard page in headless Chromium.

Each hostile case is one request. The collector must stay up (GET /health after each) and
answer either a 4xx `{"error": {"code", "field", "message"}}` naming the field at fault, or
a 202 whose `rejected` list names the field of each bad event while the good events of the
same batch are accepted. Markup hidden behind combining marks and Prepend characters is
legal text: it is accepted, and every page must show it as text. On each page no element
may carry an attribute named on* or autofocus, and there may be no <img> and no <script>
but the dashboard's own script file.

Prints one line per check and ends with `N passed, M failed`; exits non-zero on any failure,
a missing browser or a collector that does not start. Screenshots go to
artifacts/screenshots/hostile-*.png.

Usage: scripts/hostile_e2e.py BINARY   (scripts/hostile-e2e finds the binary and calls it)
"""
import copy
import csv
import io
import datetime
import gzip
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.parse
import zlib

from e2e_common import ROOT, Checks, http, make_driver, shot, start_server, stop_and_report, summary

check = Checks()
INT_MAX = 9223372036854775807

# Legal text that hides markup behind a combining mark (U+0301) or a Prepend character
# (U+0D4E, a letter, so not refused as a format character): each must be accepted and shown
# escaped. Grapheme-cluster escaping lets the quote or the angle bracket through raw.
XSS_MODEL = 'x"\u0301 autofocus onfocus=window.__xss=1 y="\u0301'
XSS_SCREEN = '<\u0301img src=x onerror=window.__xss=2>'
XSS_VERSION = '3.0"\u0301 onmouseover=window.__xss=3'
XSS_TAG = '<\u0301script>window.__xss=4</script>'
XSS_PREPEND_SCREEN = '\u0d4e<img src=x onerror=window.__xss=5>'
HOSTILE_TEXTS = {"device model": XSS_MODEL, "screen": XSS_SCREEN, "app version": XSS_VERSION,
                 "tag value": XSS_TAG, "prepend screen": XSS_PREPEND_SCREEN}
GOOD_VERSION = "2.9.0"

# The page's own markup: the templates have no on* or autofocus attribute, no <img>, and one
# script, the dashboard's file.
PAGE_PROBE = r"""
const found = [];
for (const element of document.querySelectorAll('*')) {
  for (const attribute of element.attributes) {
    const name = attribute.name.toLowerCase();
    if (name.startsWith('on') || name === 'autofocus') found.push(element.tagName.toLowerCase() + '[' + attribute.name + ']');
    if (/^\s*javascript:/i.test(attribute.value)) found.push(element.tagName.toLowerCase() + '[' + attribute.name + '=javascript:]');
  }
}
const foreign = [...document.querySelectorAll('img, image, iframe, object, embed, foreignObject, frame, base, meta[http-equiv]')]
  .map(e => e.tagName.toLowerCase());
const scripts = [...document.querySelectorAll('script')].map(s => s.getAttribute('src'));
const options = [...document.querySelectorAll('option')].map(o => o.textContent).join('\n');
const values = [...document.querySelectorAll('option')].map(o => o.value)
  .concat([...document.querySelectorAll('[data-screen]')].map(e => e.getAttribute('data-screen')));
return {xss: typeof window.__xss === 'undefined' ? null : String(window.__xss), attributes: found, foreign: foreign,
        scripts: scripts, text: document.body ? document.body.innerText : '', options: options, values: values};
"""


class RawNumber(str):
    """A number written into the JSON text as is (1e400), which json.dumps cannot write."""

    @staticmethod
    def dumps(value):
        raws = []

        def default(item):
            raise TypeError(item)

        def mark(item):
            if isinstance(item, RawNumber):
                raws.append(str(item))
                return f"__raw_number_{len(raws) - 1}__"
            if isinstance(item, dict):
                return {key: mark(inner) for key, inner in item.items()}
            if isinstance(item, list):
                return [mark(inner) for inner in item]
            return item

        text = json.dumps(mark(value), allow_nan=True, default=default)
        for index, raw in enumerate(raws):
            text = text.replace(f'"__raw_number_{index}__"', raw)
        return text.encode()


def iso(timestamp):
    return datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def short(text, limit=60):
    text = ascii(text)[1:-1]
    return text if len(text) <= limit else text[:limit] + "…"


class Collector:
    """The running collector and its keys."""

    def __init__(self, url, ingest_key, read_key, admin_token, example):
        self.url, self.ingest_key, self.read_key, self.admin_token = url, ingest_key, read_key, admin_token
        self.example = example
        self.sequence = 0

    def healthy(self):
        status, _, body = http(self.url + "/health", timeout=30)
        return status == 200 and b'"ok"' in body

    def batch(self, events, app=None, device=None):
        """A batch in the shape of the served example, for app shop, with a fresh id."""
        self.sequence += 1
        batch = copy.deepcopy(self.example)
        batch["batchId"] = f"hostile-{self.sequence:04d}-{secrets.token_hex(4)}"
        batch["app"]["id"] = "shop"
        batch["app"]["version"] = GOOD_VERSION
        batch["app"].update(app or {})
        batch["device"].update(device or {})
        batch["events"] = events
        return batch

    def event(self, screen="Checkout", hours_ago=1.0, report=None, tags=None):
        """The served example's event, on SCREEN, started HOURS_AGO, with REPORT changes applied."""
        event = copy.deepcopy(self.example["events"][0])
        event["screen"] = screen
        event["startedAt"] = iso(time.time() - hours_ago * 3600)
        if tags is not None:
            event["context"]["tags"] = tags
        for key, value in (report or {}).items():
            target = event["report"]
            path = key.split(".")
            for part in path[:-1]:
                target = target[part]
            target[path[-1]] = value
        return event

    def post(self, body, headers=None, path="/v1/events"):
        """POST /v1/events (or PATH); returns (status, parsed JSON or None, raw body)."""
        if not isinstance(body, bytes):
            body = RawNumber.dumps(body)
        all_headers = {"Authorization": "Bearer " + self.ingest_key, "Content-Type": "application/json"}
        all_headers.update(headers or {})
        status, _, raw = http(self.url + path, "POST", all_headers, body)
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        return status, parsed, raw


def error_shape(parsed):
    """The field named by a `{"error": {"code", "field", "message"}}` body, or a reason it is not one."""
    if not isinstance(parsed, dict) or not isinstance(parsed.get("error"), dict):
        return None, "the body is not {\"error\": {...}}"
    error = parsed["error"]
    if not isinstance(error.get("code"), str) or not isinstance(error.get("message"), str):
        return None, "the error lacks code or message"
    return error.get("field"), None


def expect_refusal(collector, case, batch, bad, headers=None):
    """BATCH holds good events and the BAD ones ({index: field regex}). Passes on a 4xx naming
    the field of a bad event, or on a 202 that rejects exactly the bad events, each by its
    field, and accepts the others."""
    status, parsed, raw = collector.post(batch, headers)
    good = len(batch["events"]) - len(bad)
    if 400 <= status < 500:
        field, problem = error_shape(parsed)
        named = field is not None and any(re.fullmatch(pattern, field) for pattern in bad.values())
        check(problem is None and named,
              f"{case}: {status} naming {field!r}" + (f" ({problem})" if problem else "")
              + ("" if named else f"; expected a field matching {' or '.join(sorted(set(bad.values())))}")
              + f" — {short(raw.decode(errors='replace'), 160)}")
    elif status == 202 and isinstance(parsed, dict):
        rejected = {entry.get("index"): entry.get("field") for entry in parsed.get("rejected", [])}
        wrong = [f"events[{index}] rejected as {rejected.get(index)!r}, expected {pattern}"
                 for index, pattern in bad.items()
                 if rejected.get(index) is None or not re.fullmatch(pattern, rejected[index])]
        extra = [f"good events[{index}] rejected as {field!r}" for index, field in rejected.items() if index not in bad]
        accepted = parsed.get("accepted")
        if accepted != good:
            extra.append(f"accepted {accepted}, expected {good}")
        check(not wrong and not extra, f"{case}: 202 " + ("; ".join(wrong + extra) if wrong or extra
                                                          else "rejects " + ", ".join(f"{rejected[i]}" for i in sorted(bad))
                                                          + f", accepts the {good} good"))
    else:
        check(False, f"{case}: expected a 4xx naming the field or a 202 rejecting it, got {status or 'no answer'}: {short(raw.decode(errors='replace'), 160)}")
    check(collector.healthy(), f"{case}: the collector is still up")


def expect_4xx(collector, case, body, headers=None, statuses=None):
    """A body the collector cannot read: any 4xx (or one of STATUSES) with the error body shape."""
    started = time.time()
    status, parsed, raw = collector.post(body, headers)
    elapsed = time.time() - started
    _, problem = error_shape(parsed)
    allowed = (statuses is None and 400 <= status < 500) or (statuses is not None and status in statuses)
    check(allowed and problem is None,
          f"{case}: {status or 'no answer'} in {elapsed:.2f} s" + (f" ({problem})" if problem else "")
          + ("" if allowed else f", expected {statuses or '4xx'}") + f" — {short(raw.decode(errors='replace'), 120)}")
    check(collector.healthy(), f"{case}: the collector is still up")


def ingest_cases(collector):
    """Posts each hostile case; returns nothing, records checks."""
    c = collector

    # A plain good batch first, so that every later query has data even if a case is refused whole.
    status, parsed, raw = c.post(c.batch([c.event("Checkout", 2), c.event("Checkout", 26)]))
    check(status == 202 and parsed and parsed.get("accepted") == 2, f"a good batch is accepted ({status}: {short(raw.decode(errors='replace'), 100)})")

    # (a) Counts near Int.max: trapping sums before validation killed the process.
    expect_refusal(c, "(a) slowFrames = frozenFrames = Int.max, frames = Int.max, dropEvents × maxDroppedFrames ≈ 2^124",
                   c.batch([c.event(), c.event(report={"slowFrames": INT_MAX, "frozenFrames": INT_MAX}),
                            c.event(report={"frames": INT_MAX}),
                            c.event(report={"dropEvents": 2 ** 62, "maxDroppedFrames": 2 ** 62}), c.event()]),
                   {1: r"events\[1\]\.report\.(slowFrames|frozenFrames)",
                    2: r"events\[2\]\.report\.(frames|histograms\.frameDuration)",
                    3: r"events\[3\]\.report\.(dropEvents|maxDroppedFrames|droppedFrames)"})

    # (b) frames = 2^62 on two days: each alone once passed, and every 30-day query merging them trapped.
    expect_refusal(c, "(b) two events with frames = 2^62 on different days, one batch",
                   c.batch([c.event(), c.event("Checkout", 24 * 2, report={"frames": 2 ** 62}),
                            c.event("Checkout", 24 * 5, report={"frames": 2 ** 62})]),
                   {1: r"events\[1\]\.report\.(frames|histograms\.frameDuration)",
                    2: r"events\[2\]\.report\.(frames|histograms\.frameDuration)"})
    for days in (3, 6):
        expect_refusal(c, f"(b) frames = 2^62, {days} days ago, a batch of its own",
                       c.batch([c.event(), c.event("Checkout", 24 * days, report={"frames": 2 ** 62})]),
                       {1: r"events\[1\]\.report\.(frames|histograms\.frameDuration)"})

    # (c) An unbounded tally: 5,000 windowFPS entries.
    window_fps = [[round(0.1 * i, 1), 1] for i in range(5000)]
    expect_refusal(c, "(c) histograms.windowFPS with 5,000 entries",
                   c.batch([c.event(), c.event(report={"histograms.windowFPS": window_fps, "windows": 5000})]),
                   {1: r"events\[1\]\.report\.(histograms\.windowFPS|windows)"})

    # (d) Markup behind combining marks and Prepend characters is legal text: accepted, shown escaped.
    batch = c.batch([c.event(XSS_SCREEN, 1, tags={"experiment": XSS_TAG}), c.event(XSS_SCREEN, 30),
                     c.event(XSS_PREPEND_SCREEN, 3), c.event("Checkout", 4, tags={"experiment": XSS_TAG})],
                    app={"version": XSS_VERSION}, device={"model": XSS_MODEL})
    status, parsed, raw = c.post(batch)
    check(status == 202 and isinstance(parsed, dict) and parsed.get("accepted") == 4 and parsed.get("rejected") == [],
          f"(d) markup behind U+0301 and U+0D4E in screen, device.model, app.version and a tag value is accepted as text ({status}: {short(raw.decode(errors='replace'), 200)})")
    check(c.healthy(), "(d) the collector is still up")
    # The same device and screens on the good version too, so that compare has both versions.
    status, parsed, raw = c.post(c.batch([c.event(XSS_SCREEN, 5), c.event(XSS_PREPEND_SCREEN, 6), c.event("Checkout", 7)],
                                         device={"model": XSS_MODEL}))
    check(status == 202 and isinstance(parsed, dict) and parsed.get("accepted") == 3,
          f"(d) the hostile screens and device on {GOOD_VERSION} are accepted ({status}: {short(raw.decode(errors='replace'), 120)})")

    # (e) Format characters in names and tags: refused, naming the field.
    expect_refusal(c, "(e) screen with U+202E", c.batch([c.event(), c.event("\u202eevil")]), {1: r"events\[1\]\.screen"})
    expect_refusal(c, "(e) screen with U+0600 before '<'",
                   c.batch([c.event(), c.event("\u0600<img src=x onerror=window.__xss=6>")]), {1: r"events\[1\]\.screen"})
    expect_refusal(c, "(e) screen with U+200B", c.batch([c.event(), c.event("Check\u200bout")]), {1: r"events\[1\]\.screen"})
    expect_refusal(c, "(e) tag value with U+200B",
                   c.batch([c.event(), c.event(tags={"experiment": "a\u200bb"})]), {1: r"events\[1\]\.context\.tags(\..*|\[.*\])?"})
    expect_refusal(c, "(e) device.model with U+0600 before '<'",
                   c.batch([c.event()], device={"model": "\u0600<img src=x onerror=window.__xss=7>"}), {0: r"device\.model"})
    expect_refusal(c, "(e) app.version with U+202E", c.batch([c.event()], app={"version": "3.\u202e1"}), {0: r"app\.version"})

    # (f) A name of 'a' plus 200 combining marks: one Character, 401 UTF-8 bytes.
    expect_refusal(c, "(f) screen of 'a' + 200 × U+0301 (401 bytes)",
                   c.batch([c.event(), c.event("a" + "\u0301" * 200)]), {1: r"events\[1\]\.screen"})

    # (g) Bodies the collector cannot read.
    expect_4xx(c, "(g) invalid JSON", b'{"batchId": "x", "events": [')
    bomb = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    compressed = b"".join(bomb.compress(chunk) for _ in range(100)) + bomb.flush()
    expect_4xx(c, f"(g) gzip bomb: 100 MB of zeros in {len(compressed)} bytes", compressed, {"Content-Encoding": "gzip"})
    good = gzip.compress(json.dumps(c.batch([c.event()])).encode())
    damaged = good[:len(good) // 2] + bytes(b ^ 0x5A for b in good[len(good) // 2:len(good) // 2 + 16]) + good[len(good) // 2 + 16:]
    expect_4xx(c, "(g) damaged gzip (16 bytes flipped mid-stream)", damaged, {"Content-Encoding": "gzip"})
    expect_4xx(c, "(g) truncated gzip", good[:len(good) // 2], {"Content-Encoding": "gzip"})
    expect_4xx(c, "(g) unknown Content-Encoding (br)", json.dumps(c.batch([c.event()])).encode(), {"Content-Encoding": "br"})

    # (h) Numbers outside the report's physics or outside JSON.
    # NaN and Infinity are not JSON numbers, and 1e400 is one no parser can hold in a Double:
    # a body holding one is not JSON the collector can read, so it is refused whole with 400
    # invalid_json, and the message says where the parser stopped.
    for name, field, value in [("NaN", "hitchTime", float("nan")), ("Infinity", "duration", float("inf")),
                               ("1e400", "duration", RawNumber("1e400"))]:
        status, parsed, raw = c.post(c.batch([c.event(), c.event(report={field: value})]))
        _, problem = error_shape(parsed)
        error = parsed.get("error", {}) if isinstance(parsed, dict) else {}
        ok = status == 400 and problem is None and error.get("code") == "invalid_json" and "not valid JSON:" in error.get("message", "")
        check(ok and c.healthy(), f"(h) report.{field} = {name} (not a JSON number): 400 invalid_json saying where, collector up"
              + ("" if ok else f"; got {status} {short(raw.decode(errors='replace'), 160)}"))
    # The strings some decoders turn into NaN, and numbers outside physics: refused by field.
    for name, field, value in [('"NaN" (a string)', "hitchTime", "NaN"), ('"-Infinity" (a string)', "duration", "-Infinity"),
                               ("-1", "hangTime", -1), ("-1", "droppedFrames", -1),
                               ("1e308", "duration", 1e308), ("1e308", "hitchTime", 1e308)]:
        expect_refusal(c, f"(h) report.{field} = {name}", c.batch([c.event(), c.event(report={field: value})]),
                       {1: rf"events\[1\]\.report\.{re.escape(field)}"})


def metrickit_cases(collector):
    """POST /v1/metrickit with the same hostile strings and numbers: device text is stored as
    text and shown escaped (the dashboard phase probes the overview), format characters are
    refused naming the field, unreadable values are skipped naming theirs, and bodies that are
    not payloads get a 4xx."""
    c = collector
    day = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 86400))
    def payload(version=GOOD_VERSION, ratio="4 ms per s", hangs=("1.5 sec",), model="iPhone14,2"):
        return {"timeStampBegin": f"{day} 00:00:00 +0000", "timeStampEnd": f"{day} 23:59:00 +0000",
                "metaData": {"appVersion": version, "osVersion": "iPhone OS 17.4 (21E219)", "deviceType": model},
                "animationMetrics": {"scrollHitchTimeRatio": ratio},
                "hangDiagnostics": [{"diagnosticMetaData": {"hangDuration": h}} for h in hangs]}
    def post(body, headers=None):
        return c.post(body if isinstance(body, bytes) else json.dumps(body).encode(), headers, path="/v1/metrickit")
    status, parsed, raw = post([payload(), payload(XSS_VERSION, model=XSS_MODEL)])
    check(status == 202 and isinstance(parsed, dict) and parsed.get("accepted") == 2 and parsed.get("rejected") == [],
          f"metrickit: markup behind U+0301 in appVersion and deviceType is accepted as text ({status}: {short(raw.decode(errors='replace'), 160)})")
    status, parsed, raw = post([payload(), payload("3.\u202e1"), payload(model="\u0600<img src=x onerror=window.__xss=8>")])
    rejected = {entry.get("index"): entry.get("field") for entry in (parsed or {}).get("rejected", [])} if isinstance(parsed, dict) else {}
    check(status == 202 and parsed.get("accepted") == 1 and rejected == {1: "metaData.appVersion", 2: "metaData.deviceType"},
          f"metrickit: U+202E in appVersion and U+0600 in deviceType refuse their payloads by field, the good one is stored ({status}: {short(raw.decode(errors='replace'), 200)})")
    status, parsed, raw = post([payload(ratio="1e308 ms per s", hangs=("20 parsecs", "1e400 s", "-3 s", "2 sec"))])
    skipped = sorted(entry.get("field") for entry in (parsed or {}).get("skipped", [])) if isinstance(parsed, dict) else []
    check(status == 202 and parsed.get("accepted") == 1 and skipped == [
              "animationMetrics.scrollHitchTimeRatio", "hangDiagnostics[0].diagnosticMetaData.hangDuration",
              "hangDiagnostics[1].diagnosticMetaData.hangDuration", "hangDiagnostics[2].diagnosticMetaData.hangDuration"],
          f"metrickit: a ratio of 1e308 ms/s and impossible hang durations are skipped by field, the 2 s hang is kept ({status}: {short(raw.decode(errors='replace'), 240)})")
    status, parsed, raw = post(b'{"timeStampEnd": "2026-01-01 00:00:00", "hangDiagnostics": [')
    _, problem = error_shape(parsed)
    check(status == 400 and problem is None and parsed["error"].get("field") == "body",
          f"metrickit: a cut-off body is 400 naming the body ({status}: {short(raw.decode(errors='replace'), 120)})")
    status, parsed, raw = post([payload()] * 1001)
    check(status == 400 and isinstance(parsed, dict) and parsed.get("error", {}).get("code") == "too_many_payloads",
          f"metrickit: 1,001 payloads in one request are 400 too_many_payloads ({status}: {short(raw.decode(errors='replace'), 120)})")
    bomb = zlib.compressobj(9, zlib.DEFLATED, 31)
    compressed = b"".join(bomb.compress(bytes(1 << 20)) for _ in range(100)) + bomb.flush()
    status, parsed, raw = post(compressed, {"Content-Encoding": "gzip"})
    check(400 <= status < 500, f"metrickit: a gzip bomb is a 4xx ({status}: {short(raw.decode(errors='replace'), 120)})")
    deep = b"[" * 100000
    status, parsed, raw = post(deep)
    check(400 <= status < 500 and c.healthy(), f"metrickit: 100,000 nested lists are a 4xx and the collector is up ({status})")
    status, _, raw = http(c.url + "/v1/metrickit", "POST", {"Authorization": "Bearer " + c.read_key}, json.dumps(payload()).encode())
    check(status == 401 or status == 403, f"metrickit: the read key cannot post payloads ({status})")
    check(c.healthy(), "metrickit: the collector is still up")


def round_two_cases(collector):
    """Issue 30: one visit counts once whatever its spelling; a repeated member is refused;
    every part of an event is checked; what is stored is what was checked."""
    c = collector
    # (i) Canonically equal names: 24 visits alternating NFC and NFD, one request each.
    nfc, nfd = "Caf\u00e9 e2e", "Cafe\u0301 e2e"
    for index in range(24):
        status, _, _ = c.post(c.batch([c.event(nfc if index % 2 == 0 else nfd, 1 + index / 100)],
                                      app={"version": "2.9.\u00e9" if index % 2 == 0 else "2.9.e\u0301"}))
        if status != 202:
            check(False, f"(i) visit {index} to {nfc!r}/{nfd!r} accepted: {status}")
            break
    status, _, raw = http(c.url + "/v1/apps/shop/screens?appVersion=" + urllib.parse.quote("2.9.e\u0301"),
                          headers={"Authorization": "Bearer " + c.read_key})
    try:
        screens = {entry["screen"]: entry["visits"] for entry in json.loads(raw)["screens"]}
    except (ValueError, KeyError, TypeError):
        screens = {}
    check(status == 200 and screens == {nfc: 24},
          f"(i) 24 visits as 'Caf\\u00e9' and 'Cafe\\u0301' (versions in both forms) are one screen of 24 visits in NFC, found by an NFD filter: {status} {short(repr(screens), 120)}")
    # (j) A repeated member: the collector read the first, other parsers the last.
    event = json.dumps(c.event("Feed"))
    hostile = event.replace('"screen": "Feed"', '"screen": "Feed", "screen": "\\u001b]0;pwned\\u0007"', 1)
    shell = c.batch([])
    del shell["events"]
    envelope = json.dumps(shell)[:-1]
    if check(hostile != event, "(j) a body with a repeated member can be written"):
        body = (envelope + ', "events": [' + event + ", " + hostile + "]}").encode()
        status, parsed, raw = c.post(body)
        rejected = [entry.get("field") for entry in parsed.get("rejected", [])] if isinstance(parsed, dict) else None
        check(status == 202 and parsed.get("accepted") == 1 and rejected == ["events[1].screen"],
              f"(j) a repeated 'screen' member refuses its event by name, the other is kept: {status} {short(raw.decode(errors='replace'), 160)}")
        doubled = envelope.replace('"batchId": ', '"batchId": "dup-1", "batchId": ', 1) + ', "events": [' + event + "]}"
        status, parsed, raw = c.post(doubled.encode())
        field, problem = error_shape(parsed)
        check(status == 400 and problem is None and field == "batchId",
              f"(j) a repeated member of the envelope is a 400 naming it: {status} {field!r}")
    # (k) Parts of an event that were never checked.
    ten_thousand = [{"offset": float(i), "duration": 1e300} for i in range(10000)]
    bad_hangs = c.event("Feed"); bad_hangs["hangs"] = ten_thousand
    bad_resources = c.event("Feed"); bad_resources["resources"] = {"cpuPercent": {"min": 5, "mean": 2, "max": 1},
                                                                  "residentBytes": {"min": 1, "mean": 1, "max": 1}, "samples": -9}
    bad_hitches = c.event("Feed"); bad_hitches["mainThreadHitches"] = {"frames": 10 ** 9, "hitchTime": 0.1}
    expect_refusal(c, "(k) 10,000 hangs of 1e300 s, resources with min > max and samples -9, 10^9 main-thread hitch frames",
                   c.batch([c.event("Feed"), bad_hangs, bad_resources, bad_hitches]),
                   {1: r"events\[1\]\.hangs(\[\d+\])?", 2: r"events\[2\]\.resources\.(cpuPercent|samples)",
                    3: r"events\[3\]\.mainThreadHitches\.frames"})


def read_routes(collector):
    """Every read route with the read key, over a range that covers the events, with and without
    hostile filters: 200 or 4xx, never 5xx, and the collector stays up."""
    c = collector
    now = time.time()
    span = {"from": iso(now - 29 * 86400), "to": iso(now + 3600)}
    filters = [{}, {"appVersion": XSS_VERSION}, {"deviceModel": XSS_MODEL}, {"screen": XSS_SCREEN},
               {"screen": XSS_PREPEND_SCREEN}, {"osVersion": XSS_TAG}, {"screen": "a" + "\u0301" * 200},
               {"deviceModel": "\u202e\u0600<"}]
    routes = [("screens", {}), ("timeseries", {"metric": "hitchRatio"}), ("timeseries", {"metric": "frozenFramesPerThousand", "interval": "hour"}),
              ("compare", {"baseline": GOOD_VERSION, "candidate": XSS_VERSION}), ("worst", {"minVisits": "0"}),
              ("percentiles", {}), ("metrickit", {})]
    screens = None
    for route, extra in routes:
        for chosen in filters:
            query = urllib.parse.urlencode({**span, **extra, **chosen}, quote_via=urllib.parse.quote)
            status, _, raw = http(f"{c.url}/v1/apps/shop/{route}?{query}", headers={"Authorization": "Bearer " + c.read_key})
            up = c.healthy()
            label = ", ".join(f"{k}={short(v, 24)}" for k, v in chosen.items()) or "no filter"
            check((200 <= status < 300 or 400 <= status < 500) and up,
                  f"GET /v1/apps/shop/{route} ({label}): {status or 'no answer'}, collector {'up' if up else 'DOWN'}"
                  + ("" if status < 500 and status else f" — {short(raw.decode(errors='replace'), 160)}"))
            if route == "screens" and not chosen and status == 200:
                screens = json.loads(raw)
    names = [entry.get("screen") for entry in (screens or {}).get("screens", [])]
    check(XSS_SCREEN in names and XSS_PREPEND_SCREEN in names,
          f"the screens route returns the hostile screens verbatim ({[short(n, 30) for n in names]})")
    export_route(c, span, filters)


def export_route(c, span, filters):
    """GET …/events: every line is JSON holding the event as sent (hostile names included),
    cursors resume exactly, hostile cursors and tag filters are refused or harmless, and a
    CSV cell that a spreadsheet would run as a formula is defused."""
    auth = {"Authorization": "Bearer " + c.read_key}
    formula = '=HYPERLINK("http://evil.example","click"),x'
    status, _, _ = c.post(c.batch([c.event(screen=formula, hours_ago=2)]))
    check(status == 202, f"a visit to a screen named like a spreadsheet formula is stored: {status}")
    for chosen in filters + [{"tag.\u202e\"')--": "x"}, {"tag.k": "\u0000"}, {"thermalState": "'; DROP TABLE events; --"}]:
        query = urllib.parse.urlencode({**span, **chosen}, quote_via=urllib.parse.quote)
        status, _, raw = http(f"{c.url}/v1/apps/shop/events?{query}", headers=auth)
        up = c.healthy()
        label = ", ".join(f"{k}={short(v, 24)}" for k, v in chosen.items()) or "no filter"
        check((status == 200 or 400 <= status < 500) and up, f"GET /v1/apps/shop/events ({label}): {status or 'no answer'}, collector {'up' if up else 'DOWN'}")
    status, _, raw = http(f"{c.url}/v1/apps/shop/events?" + urllib.parse.urlencode(span), headers=auth)
    lines = raw.decode().splitlines() if status == 200 else []
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except ValueError:
            parsed.append(None)
    check(lines and all(p is not None and "cursor" in p and "event" in p for p in parsed),
          f"every export line is a JSON object with its cursor and event ({len(lines)} lines)")
    exported = {p["event"]["screen"] for p in parsed if p}
    check(XSS_SCREEN in exported and XSS_PREPEND_SCREEN in exported, "the export carries the hostile screens verbatim")
    if len(parsed) > 3:
        cursor = parsed[2]["cursor"]
        _, _, rest = http(f"{c.url}/v1/apps/shop/events?" + urllib.parse.urlencode({**span, "after": cursor}), headers=auth)
        check(rest.decode().splitlines() == lines[3:], "resuming after a line's cursor gives exactly the lines after it")
    for cursor in ["0" * 16 + "-" + "9" * 19, "7ff8000000000000-1", "../../etc/passwd", "%00", "41d9cd8b8c07e6b4-" + "1" * 40, "-" * 5000]:
        status, _, _ = http(f"{c.url}/v1/apps/shop/events?" + urllib.parse.urlencode({**span, "after": cursor}), headers=auth)
        check(status in (200, 400) and c.healthy(), f"a hostile cursor ({short(cursor, 24)}) is refused or harmless: {status}")
    status, _, raw = http(f"{c.url}/v1/apps/shop/events?" + urllib.parse.urlencode(span), headers={**auth, "Accept": "text/csv"})
    rows = list(csv.reader(io.StringIO(raw.decode()))) if status == 200 else []
    screens = [row[3] for row in rows[1:] if len(row) > 3]
    check(rows and all(len(row) == len(rows[0]) for row in rows), f"the CSV export is rectangular ({len(rows)} rows)")
    check(screens and not any(s[:1] in ("=", "+", "-", "@") for s in screens),
          "no CSV cell of a device's text starts as a formula (=, +, -, @)")
    check("'" + formula in screens, "the formula-like screen is exported as text, prefixed with '")


def metrics(collector):
    status, _, _ = http(collector.url + "/metrics", headers={"Authorization": "Bearer " + collector.admin_token})
    check(status == 200, f"GET /metrics with the admin token: {status}")
    status, _, _ = http(collector.url + "/metrics")
    print(f"      GET /metrics without a token: {status}" + (" (not yet behind the admin token)" if status == 200 else ""), flush=True)


def dashboard(collector):
    c = collector
    driver = make_driver()
    try:
        # The probe itself: a page with the injections the device strings attempt must fail it.
        injected = ('<div title="x" autofocus onfocus="window.__xss=1" tabindex="0">x</div>'
                    '<img src="x" onerror="window.__xss=2"><script>window.__xss=4</script>')
        driver.get("data:text/html;charset=utf-8," + urllib.parse.quote(injected))
        wait_ready(driver)
        time.sleep(0.3)
        probe = driver.execute_script(PAGE_PROBE)
        check(probe["xss"] is not None and len(probe["attributes"]) >= 3 and "img" in probe["foreign"] and probe["scripts"] == [None],
              f"the page probe catches injected markup on a deliberately vulnerable page (__xss={probe['xss']}, {probe['attributes']}, {probe['foreign']})")

        driver.get(c.url + "/dashboard/sign-in")
        driver.find_element("id", "key").send_keys(c.read_key)
        driver.find_element("css selector", "main.sign-in button").click()
        deadline = time.time() + 60
        while time.time() < deadline and "/dashboard/apps/" not in driver.current_url:
            time.sleep(0.1)
        check("/dashboard/apps/" in driver.current_url, f"signing in through the form opens the dashboard ({driver.current_url})")
        cookies = "; ".join(f"{cookie['name']}={cookie['value']}" for cookie in driver.get_cookies())

        quote = lambda text: urllib.parse.quote(text, safe="")
        base = "/dashboard/apps/shop"
        pages = [("overview", base), ("screens", base + "/screens"),
                 ("screen", f"{base}/screens/{quote(XSS_SCREEN)}"), ("screen-prepend", f"{base}/screens/{quote(XSS_PREPEND_SCREEN)}"),
                 ("compare", base + "/compare"), ("compare-hostile", f"{base}/compare?baseline={GOOD_VERSION}&candidate={quote(XSS_VERSION)}")]
        variants = [("", ""), ("-deviceModel", "deviceModel=" + quote(XSS_MODEL)), ("-appVersion", "appVersion=" + quote(XSS_VERSION)),
                    ("-osVersion", "osVersion=" + quote(XSS_TAG)),
                    # The declared tag: its hostile value in the filter menu, the break-down and the filter.
                    ("-byTag", "by=tag.experiment"), ("-tag", "tag.experiment=" + quote(XSS_TAG) + "&by=tag.experiment")]
        for name, path in pages:
            for suffix, query in variants:
                if name == "compare-hostile" and suffix:
                    continue
                target = path + (("&" if "?" in path else "?") + query if query else "")
                page = f"{name}{suffix}"
                status, headers, _ = http(c.url + target, headers={"Cookie": cookies})
                policy = headers.get("Content-Security-Policy", "") if headers else ""
                script_policy = re.search(r"script-src([^;]*)", policy)
                check(status == 200 and c.healthy(), f"page {page}: GET {short(target, 70)} → {status}")
                check(script_policy is not None and "unsafe-inline" not in script_policy.group(1),
                      f"page {page}: the CSP allows no inline script ({short(policy, 90)})")
                driver.get(c.url + target)
                wait_ready(driver)
                time.sleep(0.3)  # let autofocus, onerror and the dashboard's script run
                probe = driver.execute_script(PAGE_PROBE)
                check(probe["xss"] is None, f"page {page}: window.__xss is undefined" + ("" if probe["xss"] is None else f" (it is {probe['xss']})"))
                check(not probe["attributes"], f"page {page}: no on* or autofocus attribute" + (f" ({probe['attributes'][:6]})" if probe["attributes"] else ""))
                check(not probe["foreign"] and probe["scripts"] == ["/dashboard/dashboard.js"],
                      f"page {page}: no <img>, only the dashboard's script (elements {probe['foreign'][:6]}, scripts {probe['scripts']})")
                shown = [label for label, text in HOSTILE_TEXTS.items() if text in probe["text"]]
                listed = [label for label, text in HOSTILE_TEXTS.items() if text in probe["options"]]
                check(any(HOSTILE_TEXTS[k] in probe["text"] for k in ("device model", "screen", "prepend screen")),
                      f"page {page}: the hostile strings are shown as text (in the page: {shown}; in the filter menus: {listed})")
                check(XSS_MODEL in probe["values"], f"page {page}: the hostile device model comes back whole from an attribute (the filter menu's option value)")
                if name == "screens" and suffix not in ("-osVersion", "-tag"):  # those filters leave out a hostile screen
                    check(XSS_SCREEN in probe["values"] and XSS_PREPEND_SCREEN in probe["values"],
                          f"page {page}: the hostile screens come back whole from data-screen attributes")
                shot(driver, "hostile-" + page)
                driver.set_window_size(1366, 900)
    finally:
        driver.quit()


def wait_ready(driver, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline and driver.execute_script("return document.readyState") != "complete":
        time.sleep(0.05)


def main():
    started = time.time()
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "Server", ".build", "debug", "framescope")
    if not os.access(binary, os.X_OK):
        check(False, f"the collector binary {binary} exists")
        return finish(started)
    work = tempfile.mkdtemp(prefix="framescope-hostile-")
    # FRAMESCOPE_STORE runs it all on another store (clickhouse://…); a SQLite file by default.
    store = os.environ.get("FRAMESCOPE_STORE") or "sqlite:" + os.path.join(work, "c.sqlite")
    created = subprocess.run([binary, "apps", "create", "Shop", "--store", store, "--format", "json"], capture_output=True, text=True)
    if not check(created.returncode == 0, f"framescope apps create Shop ({created.returncode})"):
        print(created.stderr)
        return finish(started)
    keys = json.loads(created.stdout)
    # A declared tag key: the hostile tag values sent below become rollup values, shown in the
    # dashboard's filter menu and break-down.
    declared = subprocess.run([binary, "apps", "tags", "shop", "--add", "experiment", "--store", store], capture_output=True, text=True)
    check(declared.returncode == 0, f"framescope apps tags shop --add experiment ({declared.returncode} {declared.stderr.strip()})")
    admin_token = secrets.token_hex(24)
    server, url, _ = start_server(binary, work, ["--store", store, "--port", "0"], ready=r"listening on http",
                                  env={"FRAMESCOPE_ADMIN_TOKEN": admin_token}, timeout=120, name="hostile e2e")
    try:
        status, _, raw = http(url + "/openapi.json")
        try:
            example = json.loads(raw)["paths"]["/v1/events"]["post"]["requestBody"]["content"]["application/json"]["example"]
        except (ValueError, KeyError, TypeError):
            check(False, f"GET /openapi.json serves an example batch ({status})")
            return finish(started)
        collector = Collector(url, keys["ingestKey"], keys["readKey"], admin_token, example)
        for phase in (metrics, ingest_cases, round_two_cases, metrickit_cases, read_routes, dashboard, metrics):
            try:
                phase(collector)
            except Exception as error:  # a missing browser, a dead collector: a failure, never a skip
                check(False, f"{phase.__name__} stopped: {type(error).__name__}: {short(str(error), 300)}")
        check(server.poll() is None and collector.healthy(), "the collector is up at the end")
    finally:
        stop_and_report(server, work, check)
    return finish(started)


def finish(started):
    return summary(check, started, "hostile e2e", note="; screenshots in artifacts/screenshots/hostile-*.png")


if __name__ == "__main__":
    sys.exit(main())
