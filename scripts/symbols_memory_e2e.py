"""A symbol upload at the route's limits, end to end: a real `framescope serve` on loopback
takes one image of 900,000 symbols (about 60 MiB of JSON, 5 MiB gzip: under the 64 MiB
inflated and 16 MiB sent limits), stores and lists it, and the server's peak resident
memory (VmHWM in /proc/PID/status) grows by less than PEAK_GROWTH_LIMIT times the inflated
body. Prints the figures; Python 3's standard library only.

Usage: python3 scripts/symbols_memory_e2e.py BINARY
"""
import gzip
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Checks, http, summary, with_fresh_collector  # noqa: E402

SYMBOLS = 900_000
# Peak growth over the idle server, in multiples of the inflated body (docs/benchmarks.md,
# "Symbol uploads": 5.0 before the upload was read in place and its tables written in one
# pass, 4.1 after; the old code fails this bound).
PEAK_GROWTH_LIMIT = 4.6
check = Checks()


def peak_mib(pid):
    """VmHWM (the peak resident set) of PID, in MiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def upload_body():
    """One image of SYMBOLS symbols, names of 56–62 bytes as Swift demangles them."""
    symbols, offset = [], 0
    for index in range(SYMBOLS):
        symbols.append([offset, 32, f"specialized Shop.FeedViewController.cell{index:07d}(at:in:)"])
        offset += 48
    image = {"id": "0123456789abcdef0123456789abcdef", "name": "Shop", "arch": "arm64", "symbols": symbols}
    return json.dumps({"images": [image]}, separators=(",", ":")).encode()


def main():
    started = time.time()
    binary = sys.argv[1] if len(sys.argv) > 1 else ""
    with_fresh_collector(binary, check, "symbols e2e", upload)
    return summary(check, started, "symbols e2e")


def upload(server, url, keys):
    raw = upload_body()
    sent = gzip.compress(raw, 6)
    time.sleep(1)
    idle = peak_mib(server.pid)
    began = time.time()
    status, _, answer = http(f"{url}/v1/apps/shop/symbols", "POST",
                             {"Authorization": f"Bearer {keys['adminKey']}", "Content-Type": "application/json",
                              "Content-Encoding": "gzip"}, sent, timeout=600)
    took = time.time() - began
    check(status == 201, f"POST …/symbols of {SYMBOLS:,} symbols ({len(raw) / 2**20:.1f} MiB, "
                         f"{len(sent) / 2**20:.1f} MiB gzip) → {status} in {took:.1f} s {answer[:160]!r}")
    peak = peak_mib(server.pid)
    status, _, listed = http(f"{url}/v1/apps/shop/symbols", headers={"Authorization": f"Bearer {keys['readKey']}"})
    images = json.loads(listed).get("images", []) if status == 200 else []
    check([image.get("symbols") for image in images] == [SYMBOLS], f"GET …/symbols lists the image with {SYMBOLS:,} symbols")
    growth = peak - idle
    ratio = growth / (len(raw) / 2**20)
    check(ratio < PEAK_GROWTH_LIMIT,
          f"peak RSS {idle:.0f} → {peak:.0f} MiB: grew {growth:.0f} MiB, {ratio:.1f}× the inflated body "
          f"(bound {PEAK_GROWTH_LIMIT}×)")


if __name__ == "__main__":
    sys.exit(main())
