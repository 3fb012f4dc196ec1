#!/usr/bin/python3
"""The client of the long-running pods' cluster tests (tests/cluster/services-lib.sh).

Run in the cluster's network namespace (tools/cluster exec), where the pods'
addresses are reachable, as a Service's proxy would reach them: each pod
the test names in the targets file (a JSON object, NAME@ADDRESS ->
[address, when the pod's deletion began in seconds since the epoch, or
null], rewritten by the test as pods come and go) is called every 100 ms,
each pod by a thread of its own (a call that hangs delays no other pod's),
at http://ADDRESS:8000/cgi-bin/call, for as long as it is named. Each such
request is a call of the app through its proxy sidecar to the backend: 200
is a call that went through, 502 one the app made and that failed (its
proxy was gone), and no answer at all (the app not listening: not started
yet, or exited) counts as neither. A failed call made once the pod's
deletion had begun counts also as failed_deleting (Kubernetes' time is in
whole seconds: from the start of the second the deletion began in). Once a
pod answers, its /first says how the app's own first call, as it started,
went. On SIGTERM, or when the file STOP exists, it writes what it counted,
per pod and in all, as JSON to OUT and exits 0.

    services-client.py TARGETS OUT STOP
"""

import json
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request

TARGETS, OUT, STOP = sys.argv[1:4]
PERIOD = 0.1
TIMEOUT = 3
stats = {}
fails = {}
deleted_at = {}
lock = threading.Lock()
running = threading.Event()
running.set()


def stop(signo, frame):
    running.clear()


def get(url):
    """The status of GET url and its body, or None when nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as r:
            return r.status, r.read().decode(errors="replace").strip()
    except urllib.error.HTTPError as e:
        return e.code, ""
    except (OSError, ValueError):
        return None, ""


def targets():
    try:
        with open(TARGETS) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def call(name, ip):
    """Calls one pod until it is no longer named, or the client stops."""
    s = stats[name]
    while running.is_set():
        with lock:
            if name not in named:
                return
        began = time.monotonic()
        status, _ = get("http://%s:8000/cgi-bin/call" % ip)
        with lock:
            if status == 200:
                s["ok"] += 1
            elif status == 502:
                s["failed"] += 1
                fails[name].append(time.time())
            else:
                s["no_answer"] += 1
        if s["first"] is None and status is not None:
            code, body = get("http://%s:8000/first" % ip)
            if code == 200 and body in ("ok", "failed"):
                s["first"] = body
        time.sleep(max(0, PERIOD - (time.monotonic() - began)))


named = set()


def main():
    signal.signal(signal.SIGTERM, stop)
    threads = {}
    while running.is_set() and not os.path.exists(STOP):
        t = targets()
        if t is not None:
            with lock:
                named.clear()
                named.update(t)
                for name, (ip, deleted) in t.items():
                    if deleted is not None:
                        deleted_at.setdefault(name, deleted)
                    if name not in stats:
                        stats[name] = {"ok": 0, "failed": 0, "failed_deleting": 0, "no_answer": 0, "first": None}
                        fails[name] = []
                    if name not in threads or not threads[name].is_alive():
                        threads[name] = threading.Thread(target=call, args=(name, ip), daemon=True)
                        threads[name].start()
        time.sleep(0.1)
    running.clear()
    for th in threads.values():
        th.join(TIMEOUT + 1)
    with lock:
        for name, s in stats.items():
            if name in deleted_at:
                s["failed_deleting"] = sum(t >= deleted_at[name] for t in fails[name])
        total = {k: sum(s[k] for s in stats.values()) for k in ("ok", "failed", "failed_deleting", "no_answer")}
        total["first_ok"] = sum(s["first"] == "ok" for s in stats.values())
        total["first_failed"] = sum(s["first"] == "failed" for s in stats.values())
        with open(OUT + ".tmp", "w") as f:
            json.dump({"pods": stats, "total": total}, f, indent=1, sort_keys=True)
    os.rename(OUT + ".tmp", OUT)


main()
