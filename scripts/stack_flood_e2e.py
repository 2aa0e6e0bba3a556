"""Bodies of hang stacks in flight while others are served (issue 43, item 1), end to end:
a real `framescope serve` on loopback takes 4, then 8, concurrent bodies of VISITS visits
with JSON reports and 32 legal stacks each (50 samples of 256 frames), 15 MiB of JSON
inflated from about 70 KiB of gzip, while this script asks `/health` every 0.1 s and posts
another device's one-visit batch every 0.25 s. Prints each figure beside the same requests
on the idle collector (the floor, measured in the same run) and the server's peak resident
memory (VmHWM); checks that `/health` answered within HEALTH_LIMIT and the other device's
batch within BATCH_LIMIT seconds, and that every heavy body was answered 202 with its
stacks stored, or 503 `saturated` with `Retry-After`. Python 3's standard library only.

Usage: python3 scripts/stack_flood_e2e.py BINARY [IN_FLIGHT ...]   (default: 4 8)
"""
import copy
import datetime
import gzip
import json
import os
import sys
import threading
import time

sys.dont_write_bytecode = True  # no scripts/__pycache__ left behind
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Checks, http, summary, with_fresh_collector  # noqa: E402

VISITS = 19
STACKS = 32
# The acceptance of issue 43, item 1.
HEALTH_LIMIT = 1.0
BATCH_LIMIT = 2.0
check = Checks()


def iso(timestamp):
    return datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def stack(seed):
    """A legal stack at the sample limits: two images, ten frames, 50 samples of 256 frames
    each (a recursion through ten frames), so the body inflates as the red team's did: 16 MiB
    from about 72 KiB of gzip."""
    images = [{"id": "73d406b3246a378bbefc16429a4d8133", "name": "Shop", "size": 1 << 20, "app": True},
              {"id": "5307fcdea6d530a49e32df2420ec6a1b", "name": "UIKitCore", "size": 32 << 20, "app": False}]
    frames = [[index % 2, 4096 + 16 * index + 4 * (seed % 2)] for index in range(10)]
    samples = [{"at": round(0.1 * index, 1), "frames": [position % 10 for position in range(256)]} for index in range(50)]
    return {"images": images, "frames": frames, "samples": samples}


def heavy_body(example, batch_id):
    """VISITS visits of the served example (its report a JSON object), each with STACKS hangs
    of 5 s carrying a stack; the batch of another installation than the light one's."""
    batch = copy.deepcopy(example)
    batch["batchId"] = batch_id
    batch["app"]["id"] = "shop"
    batch["device"]["installationId"] = "heavy-installation"
    visit = batch["events"][0]
    events = []
    for index in range(VISITS):
        event = copy.deepcopy(visit)
        event["startedAt"] = iso(time.time() - 3600 + 60 * index)
        event["hangs"] = [{"offset": 6.0 * hang, "duration": 5.0, "stack": stack(index * STACKS + hang)} for hang in range(STACKS)]
        events.append(event)
    batch["events"] = events
    return json.dumps(batch, separators=(",", ":")).encode()


def light_body(example, batch_id):
    """Another device's batch: the example's one visit, no stack."""
    batch = copy.deepcopy(example)
    batch["batchId"] = batch_id
    batch["app"]["id"] = "shop"
    batch["device"]["installationId"] = "light-installation"
    batch["events"][0]["startedAt"] = iso(time.time() - 1800)
    return json.dumps(batch, separators=(",", ":")).encode()


def peak_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def timed(method, url, headers=None, body=None):
    began = time.time()
    status, answer_headers, answer = http(url, method, headers, body, timeout=180)
    return status, answer_headers, answer, time.time() - began


def main():
    started = time.time()
    binary = sys.argv[1] if len(sys.argv) > 1 else ""
    rounds = [int(value) for value in sys.argv[2:]] or [4, 8]

    def run(server, url, keys):
        _, _, raw = http(url + "/openapi.json")
        example = json.loads(raw)["paths"]["/v1/events"]["post"]["requestBody"]["content"]["application/json"]["example"]
        ingest = {"Authorization": f"Bearer {keys['ingestKey']}", "Content-Type": "application/json"}
        serial = [0]

        def light():
            serial[0] += 1
            return timed("POST", f"{url}/v1/events", ingest, light_body(example, f"light-{serial[0]}-{time.time_ns()}"))

        # The floor: the same requests on the idle collector.
        health_idle = max(timed("GET", url + "/health")[3] for _ in range(10))
        light_idle = [light() for _ in range(5)]
        check(all(status == 202 for status, _, _, _ in light_idle), "the light batch is accepted on the idle collector")
        light_idle_max = max(seconds for _, _, _, seconds in light_idle)
        sample = heavy_body(example, "heavy-000000000000000000")
        packed = gzip.compress(sample, 9)
        print(f"      heavy body: {VISITS} visits x {STACKS} stacks of 50 x 256 frames, {len(sample) / 2**20:.1f} MiB of JSON, "
              f"{len(packed) / 1024:.0f} KiB gzip", flush=True)
        print(f"      idle: /health {health_idle * 1000:.0f} ms (max of 10), light batch {light_idle_max * 1000:.0f} ms (max of 5); "
              f"peak RSS {peak_mib(server.pid):.0f} MiB", flush=True)
        for in_flight in rounds:
            bodies = [gzip.compress(heavy_body(example, f"heavy-{in_flight}-{index}-{time.time_ns()}"), 9) for index in range(in_flight)]
            results = [None] * in_flight

            def post(index):
                results[index] = timed("POST", f"{url}/v1/events", {**ingest, "Content-Encoding": "gzip"}, bodies[index])

            threads = [threading.Thread(target=post, args=(index,)) for index in range(in_flight)]
            began = time.time()
            for thread in threads:
                thread.start()
            # /health and the other device's batch each asked from a thread of its own, so a
            # slow answer to one never delays asking the other.
            health, batches = [], []

            def ask_health():
                while any(thread.is_alive() for thread in threads):
                    status, _, _, seconds = timed("GET", url + "/health")
                    health.append((status, seconds))
                    time.sleep(0.1)

            def post_light():
                while any(thread.is_alive() for thread in threads):
                    status, _, _, seconds = light()
                    batches.append((status, seconds))
                    time.sleep(0.25)

            askers = [threading.Thread(target=ask_health), threading.Thread(target=post_light)]
            for asker in askers:
                asker.start()
            for asker in askers:
                asker.join()
            for thread in threads:
                thread.join()
            whole = time.time() - began
            heavy = [(status, seconds, headers.get("Retry-After") if headers else None, answer)
                     for status, headers, answer, seconds in results]
            accepted = sum(1 for status, _, _, _ in heavy if status == 202)
            health_max = max((seconds for _, seconds in health), default=0.0)
            batch_max = max((seconds for _, seconds in batches), default=0.0)
            print(f"      {in_flight} in flight ({whole:.1f} s): heavy answers "
                  + ", ".join(f"{status} in {seconds:.2f} s" for status, seconds, _, _ in heavy), flush=True)
            print(f"      {in_flight} in flight: /health max {health_max * 1000:.0f} ms over {len(health)} asks, "
                  f"light batch max {batch_max * 1000:.0f} ms over {len(batches)} posts; peak RSS {peak_mib(server.pid):.0f} MiB", flush=True)
            check(health and all(status == 200 for status, _ in health), f"{in_flight} in flight: /health answered 200 every time")
            check(health_max < HEALTH_LIMIT, f"{in_flight} in flight: /health within {HEALTH_LIMIT:.0f} s ({health_max:.2f} s)")
            check(batches and all(status == 202 for status, _ in batches), f"{in_flight} in flight: the other device's batches accepted "
                  f"({[status for status, _ in batches]})")
            check(batch_max < BATCH_LIMIT, f"{in_flight} in flight: the other device's batch within {BATCH_LIMIT:.0f} s ({batch_max:.2f} s)")
            check(all(status == 202 or (status == 503 and retry) for status, _, retry, _ in heavy) and accepted >= 1,
                  f"{in_flight} in flight: each heavy body 202, or 503 with Retry-After ({accepted} accepted)")
            for status, _, _, answer in heavy:
                if status == 202:
                    parsed = json.loads(answer)
                    check(parsed.get("accepted") == VISITS and not parsed.get("rejected") and not parsed.get("stacksDropped"),
                          f"{in_flight} in flight: a heavy body's {VISITS} visits stored with their stacks ({str(answer[:160])})")
                    break
        status, _, raw = http(f"{url}/v1/apps/shop/hangs?limit=5", headers={"Authorization": f"Bearer {keys['readKey']}"})
        groups = json.loads(raw).get("groups", []) if status == 200 else []
        check(status == 200 and sum(group.get("hangs", 0) for group in groups) >= VISITS * STACKS,
              f"the stacks are stored as hangs ({status}, {sum(group.get('hangs', 0) for group in groups)} in the first groups)")

    with_fresh_collector(binary, check, "stack flood e2e", run)
    return summary(check, started, "stack flood e2e")


if __name__ == "__main__":
    sys.exit(main())
