#!/usr/bin/env python3
"""Browser test of the dashboard: a real `framescope serve --demo` on loopback, driven by
headless Chromium through Selenium (chromium and chromium-driver from Debian).

Checks the DOM of every page (sign-in required, charts carry their data points, the
screens table sorts, a filter changes what is shown, the comparison finds the demo's
regression and its fix), saves screenshots to artifacts/screenshots/, and prints the
server-side render time of each page over the 30-day demo range (Server-Timing header).

Usage: scripts/browser_test.py BINARY   (scripts/browser-test builds and calls it)
"""
import datetime
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from e2e_common import ROOT, Checks, make_driver, shot
import e2e_common

check = Checks()
failures = check.failures


def start_server(binary, work):
    """`framescope serve --demo` on a free loopback port, on a SQLite file in `work` or on the
    store FRAMESCOPE_STORE names (clickhouse://…); returns (process, URL, read key, ingest key)."""
    process, url, text = e2e_common.start_server(
        binary, work, ["--demo", *(["--store", os.environ["FRAMESCOPE_STORE"]] if os.environ.get("FRAMESCOPE_STORE")
                                   else ["--db", os.path.join(work, "demo.sqlite")]), "--port", "0"],
        ready=r"^read key: ", timeout=600, name="browser test")
    key = re.search(r"^read key: (\S+)", text, re.M)
    ingest = re.search(r"^ingest key: (\S+)", text, re.M)
    if not (key and ingest):
        process.kill()
        sys.exit("browser test: the collector did not start:\n" + text)
    return process, url, key.group(1), ingest.group(1)


def values(driver, selector, attribute="data-value"):
    return [element.get_attribute(attribute) for element in driver.find_elements(By.CSS_SELECTOR, selector)]


def api(url, key, path):
    request = urllib.request.Request(url + path, headers={"Authorization": "Bearer " + key})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def render_times(url, cookie, paths, repeats=7):
    """Median and max of the Server-Timing render duration, per page, in ms."""
    rows = []
    for path in paths:
        durations = []
        for _ in range(repeats):
            request = urllib.request.Request(url + path, headers={"Cookie": cookie})
            with urllib.request.urlopen(request) as response:
                timing = response.headers.get("Server-Timing", "")
                response.read()
            match = re.search(r"dur=([0-9.]+)", timing)
            if match:
                durations.append(float(match.group(1)))
        rows.append((path, statistics.median(durations), max(durations)))
    return rows


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "Server", ".build", "debug", "framescope")
    work = tempfile.mkdtemp(prefix="framescope-browser-")
    server, url, read_key, ingest_key = start_server(binary, work)
    driver = make_driver()
    try:
        # Sign-in is required: a page without the cookie sends the browser to the form.
        driver.get(url + "/dashboard/apps/demo/screens")
        check("/dashboard/sign-in" in driver.current_url, "an unsigned visit is sent to the sign-in form")
        check(len(driver.find_elements(By.ID, "key")) == 1, "the sign-in form asks for the read key")
        shot(driver, "01-sign-in")
        driver.find_element(By.ID, "key").send_keys(ingest_key)
        driver.find_element(By.CSS_SELECTOR, "main.sign-in button").click()
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".error"))
        check("ingest key" in driver.find_element(By.CSS_SELECTOR, ".error").text, "an ingest key is refused with a reason")
        driver.find_element(By.ID, "key").send_keys(read_key)
        driver.find_element(By.CSS_SELECTOR, "main.sign-in button").click()
        WebDriverWait(driver, 60).until(lambda d: "/dashboard/apps/" in d.current_url)
        check(driver.current_url.startswith(url + "/dashboard/apps/demo/screens"), "signing in returns to the page asked for")
        cookie = next((c for c in driver.get_cookies() if c["name"] == "framescope_session"), None)
        check(cookie is not None and cookie.get("httpOnly") and cookie.get("sameSite") == "Strict", "the session is kept in an HTTP-only, SameSite=Strict cookie")
        check(cookie is not None and cookie.get("value") != read_key and read_key not in str(driver.get_cookies()),
              "the cookie holds a session id, never the read key")

        # Overview: tiles, trends with their data points, the split by version.
        driver.get(url + "/dashboard/apps/demo")
        check(driver.find_element(By.TAG_NAME, "h1").text == "Overview", "the overview has its heading")
        tiles = driver.find_elements(By.CSS_SELECTOR, ".tile")
        check(len(tiles) == 5, f"five figure tiles ({len(tiles)})")
        points = driver.find_elements(By.CSS_SELECTOR, "#trend-hitch circle.point")
        check(len(points) >= 2 * 25, f"the hitch-ratio trend has its daily points for both lines ({len(points)})")
        titles = driver.find_elements(By.CSS_SELECTOR, "#trend-hitch circle.point title")
        check(all("ms/s" in t.get_attribute("textContent") for t in titles), "every point's tooltip carries its unit")
        versions = values(driver, "#versions-table tbody tr", "data-version")
        check(versions == ["3.0.0", "3.1.0", "3.2.0"], f"the version table lists the three releases ({versions})")
        check(driver.find_elements(By.CSS_SELECTOR, ".tile .band-word"), "hitch-ratio bands are shown in words")
        sources = [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".tile .band-source")]
        check(sources == ["bands: Apple's guidance (default)"] * 2, f"the judged tiles say whose bands they use ({sources})")
        notes = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#band-notes li")]
        check(any(n.startswith("Hitch ratio: good below 5 ms/s") for n in notes), f"the footer states the bands in effect ({notes})")
        shot(driver, "02-overview")
        # Apple's figures (the demo's simulated MetricKit payloads) beside the SDK's, per version.
        apple_versions = values(driver, "#metrickit-table tbody tr", "data-metrickit-version")
        check(apple_versions == ["3.0.0", "3.1.0", "3.2.0"], f"the MetricKit table lists the three releases ({apple_versions})")
        apple = [float(v) for v in values(driver, '#metrickit-table td[data-metric="scrollHitchTimeRatio"]') if v]
        # The page's range: 30 days ending at the end of the current hour (the API's default
        # ends now, and a payload is in by its end: they differ in a day's last hour).
        page_to = math.ceil(time.time() / 3600) * 3600
        page_from = page_to - 30 * 86400
        iso = lambda t: datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        served = api(url, read_key, f"/v1/apps/demo/metrickit?from={iso(page_from)}&to={iso(page_to)}")["versions"]
        check(len(apple) == 3 and all(abs(a - v["scrollHitchTimeRatio"]) < 1e-9 for a, v in zip(apple, served)),
              f"Apple's scroll hitch time ratios on the page are the API's ({apple})")
        sdk = [float(v) for v in values(driver, '#metrickit-table td[data-metric="motion.hitchRatio"]') if v]
        check(len(sdk) == 3 and all(x > 0 for x in sdk), f"each version shows Framescope's hitch ratio in motion beside Apple's ({sdk})")
        driver.execute_script("document.getElementById('metrickit-table').scrollIntoView()")
        shot(driver, "02b-overview-metrickit")

        # Break down by any dimension: the thermal state, chosen in the form; its rows add up
        # to every visit, and a row's link filters by its value.
        from selenium.webdriver.support.ui import Select
        Select(driver.find_element(By.ID, "breakdown-by")).select_by_value("thermalState")
        driver.find_element(By.CSS_SELECTOR, "#breakdown-form button").click()
        WebDriverWait(driver, 30).until(lambda d: "by=thermalState" in d.current_url
                                        and d.find_elements(By.CSS_SELECTOR, "#breakdown-table tbody tr"))
        thermal = values(driver, "#breakdown-table tbody tr", "data-breakdown-value")
        check(len(thermal) >= 2 and set(thermal) <= {"nominal", "fair", "serious", "critical"},
              f"the break-down by thermal state lists the demo's states ({thermal})")
        cells = driver.find_elements(By.CSS_SELECTOR, "#breakdown-table tbody tr td:nth-of-type(1)")
        counted = sum(int(c.text.replace("\u202f", "").replace(" ", "").replace(",", "")) for c in cells)
        total = sum(s["visits"] for s in api(url, read_key, "/v1/apps/demo/screens")["screens"])
        check(counted == total, f"the break-down's visits add up to every visit ({counted} of {total})")
        driver.execute_script("document.getElementById('breakdown-table').scrollIntoView()")
        shot(driver, "02c-overview-breakdown")
        driver.find_element(By.CSS_SELECTOR, "#breakdown-table tbody tr:last-child th a").click()
        WebDriverWait(driver, 30).until(lambda d: "thermalState=" in d.current_url)
        chosen = Select(driver.find_element(By.CSS_SELECTOR, "select[name='thermalState']")).first_selected_option.get_attribute("value")
        check(bool(thermal) and chosen == thermal[-1], f"a break-down row's link sets that filter in the filter bar ({chosen})")
        narrowed = values(driver, "#breakdown-table tbody tr", "data-breakdown-value")
        check(bool(thermal) and narrowed == [thermal[-1]], f"with the filter set, the break-down shows that value alone ({narrowed})")
        displays = [o.get_attribute("value") for o in Select(driver.find_element(By.CSS_SELECTOR, "select[name='maxRefreshRate']")).options]
        check("60" in displays and "120" in displays, f"the filter bar offers the display maximum ({displays})")

        # A declared tag (the demo's experiment arm): a menu in the filter bar, a break-down
        # whose rows add up to every visit, and a filter whose visits are the API's.
        driver.get(url + "/dashboard/apps/demo")
        arms = [o.get_attribute("value") for o in Select(driver.find_element(By.CSS_SELECTOR, "select[name='tag.experiment']")).options]
        check(arms == ["", "compact", "control"], f"the filter bar has a menu for the declared tag ({arms})")
        Select(driver.find_element(By.ID, "breakdown-by")).select_by_value("tag.experiment")
        driver.find_element(By.CSS_SELECTOR, "#breakdown-form button").click()
        WebDriverWait(driver, 30).until(lambda d: "by=tag.experiment" in d.current_url
                                        and d.find_elements(By.CSS_SELECTOR, "#breakdown-table tbody tr[data-breakdown-value='compact']"))
        by_arm = values(driver, "#breakdown-table tbody tr", "data-breakdown-value")
        check(by_arm == ["compact", "control"], f"the break-down by tag lists the arms ({by_arm})")
        cells = driver.find_elements(By.CSS_SELECTOR, "#breakdown-table tbody tr td:nth-of-type(1)")
        counted = sum(int(c.text.replace("\u202f", "").replace(" ", "").replace(",", "")) for c in cells)
        check(counted == total, f"the break-down by tag adds up to every visit ({counted} of {total})")
        driver.execute_script("document.getElementById('breakdown-table').scrollIntoView()")
        shot(driver, "02d-overview-by-tag")
        Select(driver.find_element(By.CSS_SELECTOR, "select[name='tag.experiment']")).select_by_value("compact")
        WebDriverWait(driver, 30).until(lambda d: "tag.experiment=compact" in d.current_url and d.find_elements(By.CSS_SELECTOR, ".tile"))
        compact = sum(s["visits"] for s in api(url, read_key, "/v1/apps/demo/screens?tag.experiment=compact")["screens"])
        basis = driver.find_element(By.CSS_SELECTOR, "main").text
        shown = {f"{compact:,}".replace(",", sep) for sep in ["\u202f", "\u2009", " ", "\u00a0"]}
        check(0 < compact < total and any(f"{text} screen visits" in basis for text in shown),
              f"filtered by the tag, the overview counts the API's visits ({compact})")
        shot(driver, "02e-overview-tag-filter")

        # Alerts: the demo's Feed regression of 3.1.0, raised as the collector started; each
        # row links to the compare page filtered to its screen.
        driver.get(url + "/dashboard/apps/demo/alerts")
        WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#alerts-table tbody tr"))
        alerted = [(r.get_attribute("data-screen"), r.get_attribute("data-metric")) for r in driver.find_elements(By.CSS_SELECTOR, "#alerts-table tbody tr")]
        check(alerted and all(screen == "Feed" for screen, _ in alerted) and ("Feed", "hitchRatio") in alerted,
              f"the alerts list shows Feed's regression ({alerted})")
        served_alerts = api(url, read_key, "/v1/apps/demo/alerts")["alerts"]
        check(len(served_alerts) == len(alerted), f"the page lists the API's alerts ({len(served_alerts)})")
        check("3.0.0 → 3.1.0" in driver.find_element(By.CSS_SELECTOR, "#alerts-table tbody tr").text, "an alert names its version pair")
        shot(driver, "09-alerts")
        driver.find_element(By.CSS_SELECTOR, "#alerts-table tbody tr th a").click()
        WebDriverWait(driver, 30).until(lambda d: "/compare" in d.current_url and d.find_elements(By.CSS_SELECTOR, "#compare-table tbody tr"))
        compared = values(driver, "#compare-table tbody tr", "data-screen")
        check("screen=Feed" in driver.current_url and compared == ["Feed"], f"an alert's link opens the comparison of its screen ({compared})")

        # Hangs: the demo's groups, named from its symbols, in the API's order; a group opens
        # its stack, innermost first, with the share of samples each frame was in.
        driver.get(url + "/dashboard/apps/demo/hangs")
        WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hangs-table tbody tr"))
        signatures = values(driver, "#hangs-table tbody tr", "data-signature")
        served_hangs = api(url, read_key, "/v1/apps/demo/hangs?limit=50")["groups"]
        check(signatures == [g["signature"] for g in served_hangs][:len(signatures)] and len(signatures) > 0,
              f"the page lists the API's hang groups in its order ({signatures[:3]})")
        check("DemoApp`FeedViewController.decodeThumbnails(_:)" in signatures, "Feed's hangs are named from the demo's symbols")
        first = driver.find_element(By.CSS_SELECTOR, "#hangs-table tbody tr details summary")
        first.click()
        frames = driver.find_elements(By.CSS_SELECTOR, "#hangs-table tbody tr:first-child ol.stack li")
        check(len(frames) >= 3 and frames[0].is_displayed(), f"a group opens its stack ({len(frames)} frames)")
        check(any("main" in f.text for f in frames), "the stack reaches main")
        shot(driver, "10-hangs")

        # Screens: worst first by hitch ratio; a heading click sorts; numbers match the API.
        driver.get(url + "/dashboard/apps/demo/screens")
        rows = values(driver, "#screens-table tbody tr", "data-screen")
        check(len(rows) == 6, f"six screens ({rows})")
        hitch = [float(v) for v in values(driver, '#screens-table tbody td[data-metric="hitchRatio"]')]
        check(hitch == sorted(hitch, reverse=True), "screens come worst first by hitch ratio")
        worst = api(url, read_key, "/v1/apps/demo/worst?by=hitchRatio&minVisits=0&limit=10")
        check([s["screen"] for s in worst["screens"]][:3] == rows[:3], "the order is the query API's worst-screens order")
        sparklines = driver.find_elements(By.CSS_SELECTOR, "#screens-table svg.sparkline path")
        check(len(sparklines) == 6, "each screen has a trend line")
        driver.find_element(By.CSS_SELECTOR, 'button[data-sort="visits"]').click()
        visits = [int(v) for v in values(driver, '#screens-table tbody td[data-metric="visits"]')]
        check(visits == sorted(visits, reverse=True), f"a click on Visits sorts by visits, most first ({visits})")
        driver.find_element(By.CSS_SELECTOR, 'button[data-sort="visits"]').click()
        again = [int(v) for v in values(driver, '#screens-table tbody td[data-metric="visits"]')]
        check(again == sorted(again), "a second click reverses the order")
        shot(driver, "03-screens")

        # A filter changes what is shown and lands in the URL.
        before = dict(zip(rows, hitch))
        Select(driver.find_element(By.CSS_SELECTOR, 'select[name="appVersion"]')).select_by_value("3.1.0")
        WebDriverWait(driver, 30).until(lambda d: "appVersion=3.1.0" in d.current_url)
        check("appVersion=3.1.0" in driver.current_url, "the filter is kept in the URL")
        after = dict(zip(values(driver, "#screens-table tbody tr", "data-screen"),
                         [float(v) for v in values(driver, '#screens-table tbody td[data-metric="hitchRatio"]')]))
        check(after.get("Feed", 0) > before.get("Feed", 0) * 1.3, f"on 3.1.0 the Feed screen is worse ({before.get('Feed')} → {after.get('Feed')})")
        shot(driver, "04-screens-3.1.0")
        driver.get(url + "/dashboard/apps/demo/screens?days=30&deviceModel=nonexistent")
        check("No data for these filters" in driver.find_element(By.TAG_NAME, "main").text, "an empty selection says so instead of drawing empty axes")

        # Screen detail: trends, distribution with percentile markers, breakdowns.
        driver.get(url + "/dashboard/apps/demo/screens/Feed")
        check(driver.find_element(By.TAG_NAME, "h1").text == "Screen: Feed", "the screen page names its screen")
        markers = values(driver, "#distribution g.marker", "data-quantile")
        check(markers == ["p50", "p90", "p95", "p99"], f"the distribution marks p50/p90/p95/p99 ({markers})")
        bars = driver.find_elements(By.CSS_SELECTOR, "#distribution rect.bar")
        check(len(bars) >= 5, f"the distribution has bars ({len(bars)})")
        for breakdown in ["by-appVersion", "by-osVersion", "by-deviceModel", "by-network", "by-lowPower", "by-refreshClass", "by-refreshRate"]:
            check(len(driver.find_elements(By.CSS_SELECTOR, f"#{breakdown} g.bar-row")) >= 2, f"breakdown {breakdown} has bars")
        feed = next(s for s in api(url, read_key, "/v1/apps/demo/screens?screen=Feed")["screens"])
        tile = driver.find_element(By.CSS_SELECTOR, '.tile[data-metric="hitchRatio"]').get_attribute("data-value")
        check(abs(float(tile) - feed["report"]["hitchRatio"]) < 1e-6 * max(1, feed["report"]["hitchRatio"]), "the hitch-ratio tile equals the query API's figure")
        shot(driver, "05-screen-feed")

        # Compare: the default is the newest version against the one before; 3.0 → 3.1 shows the regression.
        driver.get(url + "/dashboard/apps/demo/compare")
        first = driver.find_element(By.CSS_SELECTOR, "#compare-table tbody tr")
        check(first.get_attribute("data-screen") == "Feed" and first.get_attribute("data-verdict") == "improved", "3.2.0 against 3.1.0: Feed improved, listed first")
        shot(driver, "06-compare-fix")
        Select(driver.find_element(By.ID, "baseline")).select_by_value("3.0.0")
        Select(driver.find_element(By.ID, "candidate")).select_by_value("3.1.0")
        driver.find_element(By.CSS_SELECTOR, "#versions-form button").click()
        WebDriverWait(driver, 30).until(lambda d: "candidate=3.1.0" in d.current_url)
        first = driver.find_element(By.CSS_SELECTOR, "#compare-table tbody tr")
        check(first.get_attribute("data-screen") == "Feed" and first.get_attribute("data-verdict") == "regressed", "3.1.0 against 3.0.0: Feed regressed, listed first")
        regressed = values(driver, "#compare-table tbody tr", "data-verdict").count("regressed")
        check(regressed == 1, f"only Feed regressed ({regressed})")
        check("regressed" in first.text, "the verdict is written in words")
        shot(driver, "07-compare-regression")

        # A phone-sized window.
        phone = make_driver(390, 844)
        try:
            phone.get(url + "/dashboard/sign-in")
            phone.find_element(By.ID, "key").send_keys(read_key)
            phone.find_element(By.CSS_SELECTOR, "main.sign-in button").click()
            overflow = phone.execute_script("return document.documentElement.scrollWidth > window.innerWidth + 1")
            check(not overflow, "the overview fits a phone's width")
            shot(phone, "08-overview-phone")
        finally:
            phone.quit()

        # Server-side render time over the 30-day demo range.
        session = f"framescope_session={cookie['value'] if cookie else ''}"
        times = render_times(url, session, ["/dashboard/apps/demo", "/dashboard/apps/demo/screens", "/dashboard/apps/demo/screens/Feed",
                                            "/dashboard/apps/demo/compare?baseline=3.0.0&candidate=3.1.0"])
        for path, median, longest in times:
            print(f"      render {path}: median {median:.1f} ms, max {longest:.1f} ms")

        # Sign out: the cookie goes, the pages ask again.
        driver.get(url + "/dashboard/apps/demo")
        driver.find_element(By.CSS_SELECTOR, "form.sign-out button").click()
        WebDriverWait(driver, 30).until(lambda d: "/dashboard/sign-in" in d.current_url)
        check("/dashboard/sign-in" in driver.current_url, "signing out returns to the sign-in form")
        driver.get(url + "/dashboard/apps/demo")
        check("/dashboard/sign-in" in driver.current_url, "after signing out the pages need the key again")
    finally:
        driver.quit()
        server.terminate()
        server.wait(timeout=30)
    if failures:
        sys.exit(f"browser test: {len(failures)} check(s) failed")
    print("browser test: every check passed; screenshots in artifacts/screenshots/")


if __name__ == "__main__":
    main()
