#!/bin/bash
# SIGTERM drains: new connections are refused at once, /readyz turns 503
# on a connection already open, a review in flight (half its body sent
# before the signal) gets its answer with "Connection: close", an idle
# keep-alive connection is closed by the server, and the process exits 0.
. "$RG_SRCDIR/tests/integration/webhook-lib.sh"

make_ca
make_cert srv CN=webhook-sigterm
wh_start --tls-cert "$T/srv.crt" --tls-key "$T/srv.key"

cat >"$T/client.py" <<'PY'
import os, socket, ssl, sys, time
port, ca, review, ready, go = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
ctx = ssl.create_default_context(cafile=ca)

def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    return ctx.wrap_socket(s, server_hostname="localhost")

def answer(s):
    """One HTTP/1.1 answer: (status, headers, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, "the connection closed before an answer: %r" % data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    n = int(headers.get("content-length", "0"))
    while len(body) < n:
        chunk = s.recv(65536)
        assert chunk, "the connection closed in the middle of an answer"
        body += chunk
    return int(lines[0].split()[1]), headers, body

def get(s, path):
    s.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % path).encode())
    return answer(s)

idle, watch = connect(), connect()
status, headers, _ = get(idle, "/readyz")
assert status == 200 and headers.get("connection", "").lower() != "close", (status, headers)
assert get(watch, "/readyz")[0] == 200
body = open(review, "rb").read()
slow = connect()
slow.sendall(b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
             b"Content-Length: %d\r\n\r\n" % len(body) + body[:len(body) // 2])
time.sleep(0.5)
open(ready, "w").close()
print("# half a review in flight; waiting for the signal", flush=True)
for _ in range(1200):
    if os.path.exists(go):
        break
    time.sleep(0.05)
else:
    sys.exit("the signal never came")
status, headers, _ = get(watch, "/readyz")
assert status == 503, "readyz while draining: %d" % status
assert headers.get("connection", "").lower() == "close", headers
print("# /readyz: 503, Connection: close", flush=True)
slow.sendall(body[len(body) // 2:])
status, headers, text = answer(slow)
assert status == 200, (status, text[:300])
assert b'"uid":"705ab4f5-6393-11e8-b7cc-42010a800002"' in text, text[:300]
assert headers.get("connection", "").lower() == "close", headers
print("# the review in flight: 200, Connection: close", flush=True)
idle.settimeout(60)
try:
    rest = idle.recv(1)
except (ConnectionResetError, ssl.SSLError):
    rest = b""
assert rest == b"", "the idle connection got %r" % rest
print("# the idle keep-alive connection: closed by the server", flush=True)
PY

python3 "$T/client.py" "$PORT" "$T/ca.crt" "$REVIEW" "$T/ready" "$T/go" >"$T/client.log" 2>&1 &
client=$!
started "$client"
wait_for 60 test -e "$T/ready" || { cat "$T/client.log"; fail "the client did not get its requests in flight"; }
[ "$(metric rearguard_webhook_requests_in_flight)" = 2 ] || fail "in flight is not 2 (the half-sent review and /metrics)"
kill -TERM "$WH_PID"
wait_for 30 grep -q 'draining' "$T/webhook.log" || fail "no log line saying the webhook drains"
status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 --cacert "$T/ca.crt" "https://127.0.0.1:$PORT/healthz" || true)
[ "$status" = 000 ] || fail "a new connection was answered $status while draining"
kill -0 "$WH_PID" 2>/dev/null || fail "the webhook exited with a review in flight"
touch "$T/go"
rc=0
wait "$client" || rc=$?
cat "$T/client.log"
[ "$rc" = 0 ] || fail "the client failed (exit $rc)"
rc=0
wait "$WH_PID" || rc=$?
[ "$rc" = 0 ] || fail "the webhook exited $rc after SIGTERM, want 0"
grep -q 'drained: every request in flight was answered' "$T/webhook.log" || fail "no log line saying the drain ended"
say "SIGTERM: new connections refused, the review in flight answered, exit 0"

# Nothing in flight: SIGINT ends it at once, exit 0.
wh_start --tls-cert "$T/srv.crt" --tls-key "$T/srv.key"
kill -INT "$WH_PID"
rc=0
wait "$WH_PID" || rc=$?
[ "$rc" = 0 ] || fail "the webhook exited $rc after SIGINT, want 0"
echo "PASS: $TEST_NAME"
