"""What the end-to-end scripts share: a real `framescope serve` on loopback, plain HTTP
without exceptions for 4xx/5xx, headless Chromium through Selenium, screenshots, and a
tally of checks that prints one line per check.

Used by scripts/browser_test.py and scripts/hostile_e2e.py.
"""
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

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
