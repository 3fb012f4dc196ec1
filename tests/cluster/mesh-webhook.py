#!/usr/bin/python3
"""A service mesh's sidecar injector, standing in for Istio's in tests.

    mesh-webhook.py --listen ADDR:PORT --cert CRT --key KEY --container JSON
                    --log FILE [--port-file FILE] [--watch PID]

An HTTPS mutating admission webhook (AdmissionReview v1 and v1beta1) that
adds one container, the one the file JSON holds (an istio-proxy running the
stand-in pilot-agent), at the end of the containers of every pod it is
asked about that has no container of that name, and changes nothing else:
a plain sidecar that never exits by itself, as Istio injects one where it
cannot use native sidecars. Which pods it is asked about is the
MutatingWebhookConfiguration's business (its namespaceSelector).

It never denies. Every review is a line of FILE: the pod's name (or
generateName), its containers as they came and what was done. FILE is
made once the server listens, so that a caller can wait for it; so is the
--port-file, which holds the port it listens on (the kernel's pick for
PORT 0). With --watch PID it exits when the process PID does (the test that
started it).
"""

import argparse
import base64
import http.server
import json
import os
import ssl
import threading
import time


def parse_args():
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--listen", required=True, help="ADDR:PORT to serve HTTPS on")
    p.add_argument("--cert", required=True, help="the serving certificate (PEM)")
    p.add_argument("--key", required=True, help="its key (PEM)")
    p.add_argument("--container", required=True, help="a JSON file: the container to add")
    p.add_argument("--log", required=True, help="a file: one line per review")
    p.add_argument("--port-file", help="a file: the port it listens on, once it does")
    p.add_argument("--watch", type=int, help="exit when this process does")
    return p.parse_args()


def review(body, container):
    """The AdmissionReview response to BODY, and the line to log."""
    rev = json.loads(body)
    req = rev["request"]
    pod = req.get("object") or {}
    meta = pod.get("metadata", {})
    names = [c["name"] for c in pod.get("spec", {}).get("containers", [])]
    resp = {"uid": req["uid"], "allowed": True}
    if req.get("kind", {}).get("kind") != "Pod" or req.get("operation") != "CREATE":
        done = "not a pod's creation: left alone"
    elif container["name"] in names:
        done = "has %s: left alone" % container["name"]
    else:
        patch = [{"op": "add", "path": "/spec/containers/-", "value": container}]
        resp["patchType"] = "JSONPatch"
        resp["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
        done = "added %s" % container["name"]
    line = "%s %s/%s: containers %s, %s" % (
        time.strftime("%Y-%m-%dT%H:%M:%S"), req.get("namespace", "-"),
        meta.get("name") or meta.get("generateName") or "-", " ".join(names) or "-", done)
    out = {"apiVersion": rev.get("apiVersion", "admission.k8s.io/v1"), "kind": "AdmissionReview",
           "response": resp}
    return json.dumps(out).encode(), line


def main():
    """Serves until killed (or the watched process is gone)."""
    args = parse_args()
    with open(args.container) as f:
        container = json.load(f)
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        """One review a POST, at any path."""

        def do_POST(self):
            try:
                body, line = review(self.rfile.read(int(self.headers["Content-Length"])), container)
            except (ValueError, KeyError, TypeError) as e:
                self.send_error(400, "not an AdmissionReview: %s" % e)
                return
            with lock, open(args.log, "a") as f:
                f.write(line + "\n")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *unused):
            pass

    if args.watch:
        def watchdog():
            while True:
                try:
                    os.kill(args.watch, 0)
                except ProcessLookupError:
                    os._exit(0)
                time.sleep(1)
        threading.Thread(target=watchdog, daemon=True).start()

    addr, port = args.listen.rsplit(":", 1)
    server = http.server.ThreadingHTTPServer((addr, int(port)), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    open(args.log, "a").close()
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write("%d\n" % server.server_address[1])
        os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
