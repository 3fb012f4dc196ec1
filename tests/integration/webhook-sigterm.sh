#!/bin/bash
# SIGTERM stops the webhook in two steps. For the grace (--shutdown-delay,
# 10 s here) /readyz says 503 on both ports and everything else is served as
# before, a new connection and a new review included, each answer saying
# "Connection: close": the Service still sends the pod reviews for a while
# (kubernetes/kubernetes#127335). Then the drain: a new connection is
# refused, a review in flight (half its body sent before the signal) gets
# its answer with "Connection: close", an idle keep-alive connection is
# closed by the server, and the process exits 0. A second signal ends the
# grace at once; with --shutdown-delay 0 there is none.
. "$RG_SRCDIR/tests/integration/webhook-lib.sh"

make_ca
make_cert srv CN=webhook-sigterm
wh_start --tls-cert "$T/srv.crt" --tls-key "$T/srv.key" --shutdown-delay 10s

cat >"$T/client.py" <<'PY'
import os, socket, ssl, sys, time
port, ca, review, ready, go1, go2 = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
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

def wait(path):
    for _ in range(1200):
        if os.path.exists(path):
            return
        time.sleep(0.05)
    sys.exit("the test never said %s" % path)

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
wait(go1)
status, headers, _ = get(watch, "/readyz")
assert status == 503, "readyz in the grace: %d" % status
assert headers.get("connection", "").lower() == "close", headers
print("# in the grace, on a connection open before: /readyz 503, Connection: close", flush=True)
wait(go2)
slow.sendall(body[len(body) // 2:])
status, headers, text = answer(slow)
assert status == 200, (status, text[:300])
assert b'"uid":"705ab4f5-6393-11e8-b7cc-42010a800002"' in text, text[:300]
assert headers.get("connection", "").lower() == "close", headers
print("# draining: the review in flight: 200, Connection: close", flush=True)
idle.settimeout(60)
try:
    rest = idle.recv(1)
except (ConnectionResetError, ssl.SSLError):
    rest = b""
assert rest == b"", "the idle connection got %r" % rest
print("# the idle keep-alive connection: closed by the server", flush=True)
PY

python3 "$T/client.py" "$PORT" "$T/ca.crt" "$REVIEW" "$T/ready" "$T/go1" "$T/go2" >"$T/client.log" 2>&1 &
client=$!
STARTED="$STARTED $client"
wait_for 60 test -e "$T/ready" || { cat "$T/client.log"; fail "the client did not get its requests in flight"; }
[ "$(metric rearguard_webhook_requests_in_flight)" = 2 ] || fail "in flight is not 2 (the half-sent review and /metrics)"
kill -TERM "$WH_PID"
wait_for 30 grep -q 'shutting down' "$T/webhook.log" || fail "no log line saying the webhook shuts down"
# The grace: a new connection is answered, /readyz says 503 on both ports.
wh_curl /healthz -D "$T/headers" >"$T/healthz" || fail "a new connection in the grace was not answered"
[ "$(cat "$T/healthz")" = ok ] || fail "/healthz in the grace: $(cat "$T/healthz")"
grep -qi '^connection: close' "$T/headers" || fail "an answer in the grace lacks Connection: close: $(cat "$T/headers")"
[ "$(review "$REVIEW")" = 200 ] || fail "a new review in the grace was not answered 200"
grep -q '"uid":"705ab4f5-6393-11e8-b7cc-42010a800002"' "$T/answer" || fail "the review in the grace lacks its uid"
[ "$(wh_status /readyz)" = 503 ] || fail "/readyz in the grace is not 503"
[ "$(probe /readyz)" = 503 ] || fail "/readyz on the probes' port in the grace is not 503"
[ "$(probe /healthz)" = 200 ] || fail "/healthz on the probes' port in the grace is not 200"
grep -q 'draining' "$T/webhook.log" && fail "the drain began before the grace was over"
touch "$T/go1"
say "the grace: new connections and reviews answered with Connection: close, /readyz 503 on both ports"
# The drain: a new connection is refused, what is in flight answered.
wait_for 30 grep -q 'draining' "$T/webhook.log" || fail "no log line saying the webhook drains"
status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 --cacert "$T/ca.crt" "https://127.0.0.1:$PORT/healthz" || true)
[ "$status" = 000 ] || fail "a new connection was answered $status while draining"
kill -0 "$WH_PID" 2>/dev/null || fail "the webhook exited with a review in flight"
touch "$T/go2"
rc=0
wait "$client" || rc=$?
cat "$T/client.log"
[ "$rc" = 0 ] || fail "the client failed (exit $rc)"
rc=0
wait "$WH_PID" || rc=$?
[ "$rc" = 0 ] || fail "the webhook exited $rc after SIGTERM, want 0"
grep -q 'drained: every request in flight was answered' "$T/webhook.log" || fail "no log line saying the drain ended"
say "the drain: new connections refused, the review in flight answered, exit 0"

# A second signal ends the grace at once; nothing in flight, the process exits.
wh_start --tls-cert "$T/srv.crt" --tls-key "$T/srv.key" --shutdown-delay 1h
kill -TERM "$WH_PID"
wait_for 30 grep -q 'shutting down' "$T/webhook.log" || fail "no log line saying the webhook shuts down"
kill -INT "$WH_PID"
rc=0
wait "$WH_PID" || rc=$?
[ "$rc" = 0 ] || fail "the webhook exited $rc after a second signal, want 0"
grep -q 'the grace is cut short' "$T/webhook.log" || fail "no log line saying the grace was cut short"

# No grace: SIGINT drains at once, exit 0.
wh_start --tls-cert "$T/srv.crt" --tls-key "$T/srv.key" --shutdown-delay 0s
kill -INT "$WH_PID"
rc=0
wait "$WH_PID" || rc=$?
[ "$rc" = 0 ] || fail "the webhook exited $rc after SIGINT, want 0"
echo "PASS: $TEST_NAME"
