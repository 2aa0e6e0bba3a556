#!/usr/bin/env python3
"""Slow and silent clients, end to end (issue 30, items 2, 3 and 10), against a real
`framescope serve` on loopback, started with the common limit of 1,024 descriptors.

1. Trickling bodies: 32 connections declare `Content-Length: 4194304` and 32 send chunked
   bodies, each one byte every 3 s. Meanwhile normal batches must be accepted (202) within
   a few seconds and /health must answer; the trickling bodies must then be answered 408
   `body_too_slow` and closed (the body pace: 10 s, then 1 KiB/s).
2. Malformed framing: `Transfer-Encoding: xchunked` is answered 400 (and `gzip, chunked`
   501, a bad chunk size 400) with the connection closed and no error-level log line.
3. Silent sockets: 1,100 connections that send nothing (more than the 896 connections the
   collector allows itself under 1,024 descriptors), plus a few that send a request head a
   byte every 2 s. /health and a batch must still answer at once (the connections idle
   longest are closed to make room), and every silent socket must be closed by the
   collector after its idle timeout (30 s), not before.

Python 3 standard library sockets only; loopback only; every loop is bounded. Prints one line
per check and ends with `N passed, M failed`; exits non-zero on any failure.

Usage: scripts/slow_clients_e2e.py BINARY   (scripts/slow-clients-e2e finds the binary and calls it)
"""
import copy
import datetime
import json
import os
import re
import resource
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time

from e2e_common import ROOT, Checks, http, start_server, stop_and_report, summary

check = Checks()

TRICKLERS = 32            # of each kind: Content-Length 4 MiB, and chunked
TRICKLE_EVERY = 3.0       # seconds between the bytes of a trickling body
SILENT = 1_100            # silent sockets: more than the collector's 896 connections
HEAD_TRICKLERS = 4        # connections that send a request head a byte every 2 s
SERVER_DESCRIPTORS = 1_024
IDLE_TIMEOUT = 30.0       # the collector's default (ConnectionLimits.defaultIdleTimeout)
QUICK = 5.0               # "within a few seconds"


def iso(timestamp):
    return datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


class Collector:
    def __init__(self, url, ingest_key, example):
        self.url, self.ingest_key, self.example = url, ingest_key, example
        match = re.match(r"http://([\d.]+):(\d+)", url)
        self.address = (match.group(1), int(match.group(2)))

    def batch_body(self):
        batch = copy.deepcopy(self.example)
        batch["batchId"] = "slow-e2e-" + secrets.token_hex(6)
        batch["app"]["id"] = "shop"
        for index, event in enumerate(batch["events"]):
            event["startedAt"] = iso(time.time() - 3600 - 60 * index)
        return json.dumps(batch).encode()

    def post_batch(self):
        """POST a normal batch; returns (status, seconds, body)."""
        started = time.time()
        status, _, body = http(self.url + "/v1/events", "POST",
                               {"Authorization": "Bearer " + self.ingest_key, "Content-Type": "application/json"},
                               self.batch_body(), timeout=60)
        return status, time.time() - started, body

    def health(self):
        started = time.time()
        status, _, body = http(self.url + "/health", timeout=60)
        return status == 200 and b'"ok"' in body, time.time() - started

    def connect(self, timeout=10):
        connection = socket.create_connection(self.address, timeout=timeout)
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection

    def head(self, extra):
        return (f"POST /v1/events HTTP/1.1\r\nHost: {self.address[0]}:{self.address[1]}\r\n"
                f"Authorization: Bearer {self.ingest_key}\r\nContent-Type: application/json\r\n{extra}\r\n").encode()


class Peer:
    """One raw connection: what it received, and when it got its answer and its end."""

    def __init__(self, connection, kind):
        self.connection, self.kind = connection, kind
        connection.setblocking(False)  # select() cannot watch descriptors past 1,024
        self.opened = time.time()
        self.received = b""
        self.answered = None      # seconds after opening when a status line arrived
        self.closed = None        # seconds after opening when the collector closed it
        self.error = None

    def status(self):
        match = re.match(rb"HTTP/1\.1 (\d{3})", self.received)
        return int(match.group(1)) if match else None

    def poll(self):
        """Reads what is there without blocking; notes the answer and the close."""
        if self.closed is not None:
            return
        try:
            data = self.connection.recv(65536)
        except BlockingIOError:
            return
        except (ConnectionResetError, BrokenPipeError, OSError) as error:
            self.error = type(error).__name__
            data = b""
        if data:
            self.received += data
            if self.answered is None and self.status() is not None:
                self.answered = time.time() - self.opened
        else:
            self.closed = time.time() - self.opened

    def send(self, data):
        if self.closed is not None:
            return
        try:
            self.connection.sendall(data)
        except (ConnectionResetError, BrokenPipeError, OSError) as error:
            self.error = type(error).__name__

    def close(self):
        try:
            self.connection.close()
        except OSError:
            pass


def figures(values):
    values = sorted(values)
    if not values:
        return "none"
    return f"min {values[0]:.2f} s, median {values[len(values) // 2]:.2f} s, max {values[-1]:.2f} s"


def log_since(work, offset):
    with open(os.path.join(work, "serve.log"), errors="replace") as log:
        log.seek(offset)
        return log.read()


def log_size(work):
    return os.path.getsize(os.path.join(work, "serve.log"))


def error_lines(text):
    return [line for line in text.splitlines() if re.match(r"^\S+ (error|critical) ", line)]


def server_rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def trickling_bodies(collector, work):
    """Item 2: 32 + 32 trickling bodies; normal batches accepted meanwhile; then 408s."""
    print(f"--- {TRICKLERS} bodies declaring 4 MiB and {TRICKLERS} chunked bodies, one byte every {TRICKLE_EVERY:.0f} s", flush=True)
    offset = log_size(work)
    peers = []
    for index in range(2 * TRICKLERS):
        chunked = index >= TRICKLERS
        peer = Peer(collector.connect(), "chunked" if chunked else "content-length")
        peer.send(collector.head("Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {4 << 20}\r\n"))
        peer.send(b"1\r\n{\r\n" if chunked else b"{")
        peers.append(peer)
    stop = threading.Event()

    def trickle():
        deadline = time.time() + 40
        next_byte = time.time() + TRICKLE_EVERY
        while not stop.is_set() and time.time() < deadline:
            for peer in peers:
                peer.poll()
            if time.time() >= next_byte:
                for peer in peers:
                    if peer.answered is None:
                        peer.send(b"1\r\n \r\n" if peer.kind == "chunked" else b" ")
                next_byte += TRICKLE_EVERY
            if all(peer.closed is not None for peer in peers):
                break
            time.sleep(0.05)

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    time.sleep(TRICKLE_EVERY + 1)  # the bodies are trickling: each has sent two bytes
    check(all(peer.answered is None for peer in peers), f"after {TRICKLE_EVERY + 1:.0f} s the {2 * TRICKLERS} trickling bodies are still being read (no answer yet)")
    timings = []
    for attempt in range(5):
        status, seconds, body = collector.post_batch()
        timings.append(seconds)
        check(status == 202 and seconds < QUICK,
              f"a normal batch while {2 * TRICKLERS} bodies trickle: {status} in {seconds:.3f} s (attempt {attempt + 1}){'' if status == 202 else ' ' + body[:160].decode(errors='replace')}")
    healthy, seconds = collector.health()
    check(healthy and seconds < QUICK, f"GET /health while they trickle: {'ok' if healthy else 'failed'} in {seconds:.3f} s")
    thread.join(timeout=45)
    stop.set()
    for peer in peers:
        peer.poll()
    answered = [peer for peer in peers if peer.status() == 408 and b"body_too_slow" in peer.received]
    check(len(answered) == len(peers), f"every trickling body is answered 408 body_too_slow: {len(answered)} of {len(peers)} "
                                       f"({figures([peer.answered for peer in answered])} after the head)")
    for kind in ("content-length", "chunked"):
        of_kind = [peer for peer in peers if peer.kind == kind]
        check(all(peer.answered is not None and 9.5 <= peer.answered <= 16 for peer in of_kind),
              f"{kind} bodies are answered when their pace runs out (10 s plus 1 s per KiB sent; 9.5–16 s): "
              f"{figures([peer.answered for peer in of_kind if peer.answered is not None])}")
    closed = [peer for peer in peers if peer.closed is not None]
    check(len(closed) == len(peers), f"the collector closes each connection after its 408 (Connection: close): {len(closed)} of {len(peers)} "
                                     f"({figures([peer.closed for peer in closed])} after the head)")
    check(all(b"connection: close" in peer.received.lower() for peer in answered), "each 408 says Connection: close")
    errors = error_lines(log_since(work, offset))
    check(not errors, f"no error-level log line for slow bodies ({len(errors)}){': ' + errors[0][:200] if errors else ''}")
    for peer in peers:
        peer.close()
    return timings


def exchange(collector, raw, wait=10):
    """Sends RAW on a new connection; returns (status, text received, whether the collector closed it)."""
    peer = Peer(collector.connect(), "raw")
    peer.send(raw)
    deadline = time.time() + wait
    while time.time() < deadline and peer.closed is None:
        peer.poll()
        time.sleep(0.02)
    peer.close()
    return peer.status(), peer.received.decode(errors="replace"), peer.closed is not None


def malformed_framing(collector, work):
    """Item 10: xchunked and friends are 400/501 at info level."""
    print("--- malformed Transfer-Encoding and chunk framing", flush=True)
    offset = log_size(work)
    body = collector.batch_body()
    cases = [
        ("Transfer-Encoding: xchunked", collector.head("Transfer-Encoding: xchunked\r\n") + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n", (400, 501)),
        ("Transfer-Encoding: gzip, chunked", collector.head("Transfer-Encoding: gzip, chunked\r\n") + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n", (501,)),
        ("a chunk size that is not hexadecimal", collector.head("Transfer-Encoding: chunked\r\n") + b"zz\r\n" + body + b"\r\n0\r\n\r\n", (400,)),
    ]
    for name, raw, statuses in cases:
        status, text, closed = exchange(collector, raw)
        check(status in statuses and closed, f"{name}: {status} (expected {' or '.join(map(str, statuses))}), connection closed: {closed}")
        check(status != 500 and "internal" not in text, f"{name}: not a 500")
    healthy, _ = collector.health()
    check(healthy, "the collector is up after malformed framing")
    text = log_since(work, offset)
    errors = error_lines(text)
    check(not errors, f"no error-level log line for malformed framing ({len(errors)}){': ' + errors[0][:200] if errors else ''}")
    check(len(re.findall(r"^\S+ info .*request refused", text, re.M)) >= len(cases), "each refusal is logged once at info level")


def silent_sockets(collector, server, work, announced):
    """Item 3: 1,100 silent sockets and a few head tricklers; /health and ingest answer at once;
    the collector closes the silent ones after the idle timeout."""
    print(f"--- {SILENT} silent sockets and {HEAD_TRICKLERS} request heads sent a byte every 2 s", flush=True)
    rss_before = server_rss_kib(server.pid)
    started = time.time()
    silent = []
    refused = 0
    for _ in range(SILENT):
        try:
            silent.append(Peer(collector.connect(timeout=10), "silent"))
        except OSError:
            refused += 1
    opened = time.time() - started
    check(refused == 0, f"{SILENT} silent sockets connect ({refused} refused) in {opened:.1f} s")
    heads = []
    for _ in range(HEAD_TRICKLERS):
        heads.append(Peer(collector.connect(), "head"))
    time.sleep(1)
    healthy, seconds = collector.health()
    check(healthy and seconds < 2, f"GET /health with {SILENT} silent sockets open: {'ok' if healthy else 'failed'} in {seconds:.3f} s")
    status, seconds, body = collector.post_batch()
    check(status == 202 and seconds < QUICK, f"a normal batch with {SILENT} silent sockets open: {status} in {seconds:.3f} s")
    rss_after = server_rss_kib(server.pid)
    for peer in silent:
        peer.poll()
    shed = [peer for peer in silent if peer.closed is not None]
    announced_limit = re.search(r"connections: at most (\d+)", announced)
    limit = int(announced_limit.group(1)) if announced_limit else SERVER_DESCRIPTORS - 128
    check(len(shed) >= SILENT - limit, f"at its limit of {limit} connections the collector closed the silent sockets idle longest to make room: "
                                       f"{len(shed)} closed, at least {SILENT - limit} needed")
    check(all(peer.status() is None for peer in shed), "a socket closed to make room gets no answer")
    if rss_before and rss_after:
        held = len(silent) - len(shed)
        print(f"      collector RSS {rss_before / 1024:.1f} MiB before, {rss_after / 1024:.1f} MiB with {held} silent connections "
              f"({(rss_after - rss_before) / max(held, 1):.1f} KiB each)", flush=True)
    # Head tricklers: a byte every 2 s; the head never completes, so the idle timer runs on.
    head = f"GET /health HTTP/1.1\r\nHost: {collector.address[0]}\r\nX-Slow: {'a' * 40}\r\n".encode()
    sent = 0
    early = None
    deadline = started + opened + IDLE_TIMEOUT + 8
    while time.time() < deadline:
        for peer in silent + heads:
            peer.poll()
        if sent < len(head):
            for peer in heads:
                peer.send(head[sent:sent + 1])
            sent += 1
        elapsed = time.time() - started
        if early is None and elapsed >= IDLE_TIMEOUT - 5:
            early = [peer for peer in silent if peer.closed is not None and peer not in shed]
        if all(peer.closed is not None for peer in silent + heads):
            break
        time.sleep(2)
    for peer in silent + heads:
        peer.poll()
    kept = [peer for peer in silent if peer not in shed]
    closed = [peer for peer in kept if peer.closed is not None]
    check(early is not None and not early, f"no silent socket the collector kept is closed before {IDLE_TIMEOUT - 5:.0f} s "
                                           f"({len(early or [])} were)")
    check(len(closed) == len(kept), f"the collector closes every silent socket it kept after the idle timeout: {len(closed)} of {len(kept)} "
                                    f"({figures([peer.closed for peer in closed])} after connecting)")
    check(all(peer.closed is not None and peer.status() is None for peer in heads),
          f"request heads sent a byte every 2 s are closed unanswered after the idle timeout: "
          f"{figures([peer.closed for peer in heads if peer.closed is not None])}")
    for peer in silent + heads:
        peer.close()
    healthy, seconds = collector.health()
    check(healthy and seconds < 2, f"GET /health afterwards: {'ok' if healthy else 'failed'} in {seconds:.3f} s")


def main():
    started = time.time()
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "Server", ".build", "debug", "framescope")
    if not os.access(binary, os.X_OK):
        check(False, f"the collector binary {binary} exists")
        return finish(started)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < SERVER_DESCRIPTORS:
        check(False, f"the descriptor hard limit ({hard}) allows {SERVER_DESCRIPTORS} for the collector")
        return finish(started)
    work = tempfile.mkdtemp(prefix="framescope-slow-")
    store = "sqlite:" + os.path.join(work, "c.sqlite")
    created = subprocess.run([binary, "apps", "create", "Shop", "--store", store, "--format", "json"], capture_output=True, text=True)
    if not check(created.returncode == 0, f"framescope apps create Shop ({created.returncode})"):
        print(created.stderr)
        return finish(started)
    keys = json.loads(created.stdout)
    # The collector runs with the common limit of 1,024 descriptors (it inherits this
    # process's soft limit); this process then raises its own for its 1,100+ sockets.
    resource.setrlimit(resource.RLIMIT_NOFILE, (SERVER_DESCRIPTORS, hard))
    try:
        server, url, announced = start_server(binary, work, ["--store", store, "--port", "0"], ready=r"listening on http",
                                              timeout=120, name="slow clients e2e")
    finally:
        wanted = 4_096 if hard == resource.RLIM_INFINITY else min(hard, 4_096)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    try:
        try:
            with open(f"/proc/{server.pid}/limits") as limits:
                line = next(line for line in limits if line.startswith("Max open files"))
            check(int(line.split()[3]) == SERVER_DESCRIPTORS, f"the collector runs with {SERVER_DESCRIPTORS} descriptors ({' '.join(line.split()[3:5])})")
        except (OSError, StopIteration, ValueError):
            print("      (no /proc: the collector's descriptor limit is not shown)")
        check(f"connections: at most {SERVER_DESCRIPTORS - 128} (descriptor limit {SERVER_DESCRIPTORS}), idle timeout {IDLE_TIMEOUT:.0f} s" in announced,
              f"serve announces its connection limit from the descriptor limit: "
              f"{(re.search(r'connections: .*', announced) or re.search('', '')).group(0)}")
        status, _, raw = http(url + "/openapi.json")
        try:
            example = json.loads(raw)["paths"]["/v1/events"]["post"]["requestBody"]["content"]["application/json"]["example"]
        except (ValueError, KeyError, TypeError):
            check(False, f"GET /openapi.json serves an example batch ({status})")
            return finish(started)
        collector = Collector(url, keys["ingestKey"], example)
        status, seconds, body = collector.post_batch()
        check(status == 202, f"a normal batch on a quiet collector: {status} in {seconds:.3f} s")
        for phase, arguments in ((trickling_bodies, (collector, work)), (malformed_framing, (collector, work)),
                                 (silent_sockets, (collector, server, work, announced))):
            try:
                phase(*arguments)
            except Exception as error:  # a dead collector, a refused socket: a failure, never a skip
                check(False, f"{phase.__name__} stopped: {type(error).__name__}: {error}")
        check(server.poll() is None and collector.health()[0], "the collector is up at the end")
    finally:
        stop_and_report(server, work, check)
    return finish(started)


def finish(started):
    return summary(check, started, "slow clients e2e")


if __name__ == "__main__":
    sys.exit(main())
