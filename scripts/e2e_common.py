"""What the end-to-end scripts share: a real `framescope serve` on loopback, plain HTTP
without exceptions for 4xx/5xx, headless Chromium through Selenium, screenshots, and a
tally of checks that prints one line per check.

Used by scripts/browser_test.py, scripts/hostile_e2e.py, scripts/slow_clients_e2e.py,
scripts/flood_e2e.py and scripts/symbols_memory_e2e.py.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOTS = os.path.join(ROOT, "artifacts", "screenshots")


class Checks:
    """One printed line per check; `failures` keeps the messages of those that failed."""

    def __init__(self):
        self.passed = 0
        self.failures = []

    def __call__(self, condition, message):
        print(("ok    " if condition else "FAIL  ") + message, flush=True)
        if condition:
            self.passed += 1
        else:
            self.failures.append(message)
        return bool(condition)


def start_server(binary, work, arguments, ready, env=None, timeout=600, name="collector"):
    """Starts `binary serve ARGUMENTS`, logging to WORK/serve.log, and waits until the log
    matches the regular expression READY (multi-line). Returns (process, base URL, log text);
    exits the script with the log when the server stops or never gets ready."""
    log = open(os.path.join(work, "serve.log"), "w+")
    process = subprocess.Popen([binary, "serve", *arguments], stdout=log, stderr=subprocess.STDOUT,
                               env=None if env is None else {**os.environ, **env})
    deadline = time.time() + timeout
    text = ""
    while time.time() < deadline:
        log.seek(0)
        text = log.read()
        if re.search(ready, text, re.M) or process.poll() is not None:
            break
        time.sleep(0.2)
    url = re.search(r"http://127\.0\.0\.1:\d+", text)
    if not (url and re.search(ready, text, re.M)):
        process.kill()
        sys.exit(f"{name}: the collector did not start:\n" + text)
    return process, url.group(0), text


def with_fresh_collector(binary, check, name, run, env=None):
    """Creates the app Shop in a new SQLite store, starts `binary serve` on it (port 0), and
    calls run(server, url, keys). Then checks that the collector is still up; an exception
    is a failed check, never a skip. Stops the collector; prints its log's tail when a
    check failed or it died, else removes the folder. NAME names the run in messages."""
    if not check(os.access(binary, os.X_OK), f"the collector binary {binary} exists"):
        return
    work = tempfile.mkdtemp(prefix=f"framescope-{name.split()[0]}-")
    store = "sqlite:" + os.path.join(work, "c.sqlite")
    created = subprocess.run([binary, "apps", "create", "Shop", "--store", store, "--format", "json"], capture_output=True, text=True)
    if not check(created.returncode == 0, f"framescope apps create Shop ({created.returncode})"):
        print(created.stderr)
        return
    keys = json.loads(created.stdout)
    server, url, _ = start_server(binary, work, ["--store", store, "--host", "127.0.0.1", "--port", "0"], ready=r"listening on http",
                                  env=env, timeout=120, name=name)
    try:
        run(server, url, keys)
        check(server.poll() is None and http(url + "/health")[0] == 200, "the collector is up at the end")
    except Exception as error:  # a dead collector or a broken answer: a failure, never a skip
        check(False, f"the {name} stopped: {type(error).__name__}: {str(error)[:300]}")
    finally:
        stop_and_report(server, work, check)


def stop_and_report(server, work, check):
    """Stops the collector unless it died; when it died or a check failed, prints the tail of
    WORK/serve.log (escaped to ASCII: it may hold the hostile strings sent), else removes WORK."""
    crashed = server.poll() is not None
    if not crashed:
        stop_server(server)
    if crashed or check.failures:
        with open(os.path.join(work, "serve.log"), errors="replace") as log:
            tail = log.read()[-4000:].encode("ascii", "backslashreplace").decode()
            print(f"collector log ({work}/serve.log), tail:\n{tail}")
    else:
        shutil.rmtree(work, ignore_errors=True)


def summary(check, started, name, note=""):
    """Prints the run's time (and NOTE) and tally; the exit code: 1 when a check failed."""
    print(f"{name}: {time.time() - started:.1f} s{note}")
    print(f"{check.passed} passed, {len(check.failures)} failed", flush=True)
    return 1 if check.failures else 0


def stop_server(process, timeout=30):
    """SIGTERM, then waits for the graceful stop."""
    process.terminate()
    process.wait(timeout=timeout)


def http(url, method="GET", headers=None, body=None, timeout=120):
    """One request; returns (status, headers, body bytes) for any status, 4xx and 5xx included.
    A refused or reset connection comes back as status 0 with the error text as the body."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as error:
        return 0, {}, str(error).encode()


def make_driver(width=1366, height=900):
    # Imported here: the scripts that need no browser run on Python's standard library alone.
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},{height}"]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)


def shot(driver, name):
    """A full-page screenshot to artifacts/screenshots/NAME.png."""
    os.makedirs(SHOTS, exist_ok=True)
    height = driver.execute_script("return document.body.scrollHeight")
    width = driver.execute_script("return window.innerWidth")
    driver.set_window_size(max(width, 360), min(max(height + 120, 600), 6000))
    path = os.path.join(SHOTS, name + ".png")
    driver.save_screenshot(path)
    print(f"      screenshot {os.path.relpath(path, ROOT)}", flush=True)
