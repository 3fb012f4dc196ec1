#!/bin/bash
# Slow and many clients: 50 stalled requests (half their headers, or their
# headers and half the body, then silence) and 10 silent TCP connections
# do not keep a real review from its answer, and the server closes them
# after its connection timeout; then 200 reviews sent at once on 200
# connections are all answered 200 with their own uid.
. "$RG_SRCDIR/tests/integration/webhook-lib.sh"

make_ca
make_cert srv CN=webhook-load
WH_VERBOSE=no wh_start --tls-cert "$T/srv.crt" --tls-key "$T/srv.key"

cat >"$T/stall.py" <<'PY'
import os, socket, ssl, sys, time
port, ca, review, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
ctx = ssl.create_default_context(cafile=ca)
body = open(review, "rb").read()
head = (b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body))
stalled = []
for i in range(50):
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=60), server_hostname="localhost")
    s.sendall(head[:len(head) // 2] if i % 2 else head + body[:len(body) // 2])
    stalled.append(s)
for i in range(10):
    stalled.append(socket.create_connection(("127.0.0.1", port), timeout=60))
open(ready, "w").close()
print("# 50 half-sent requests and 10 silent connections open", flush=True)
# The server closes each, after its connection timeout: no HTTP answer comes
# first (a silent TCP connection may get a TLS alert).
deadline = time.time() + 120
for i, s in enumerate(stalled):
    got = b""
    try:
        while True:
            s.settimeout(max(1, deadline - time.time()))
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
    except (ConnectionResetError, ssl.SSLError):
        pass
    except socket.timeout:
        sys.exit("a stalled connection was never closed by the server")
    assert b"HTTP/" not in got, "stalled connection %d got %r" % (i, got[:100])
print("# every stalled connection was closed by the server", flush=True)
PY

python3 "$T/stall.py" "$PORT" "$T/ca.crt" "$REVIEW" "$T/stalled" >"$T/stall.log" 2>&1 &
staller=$!
started "$staller"
wait_for 120 test -e "$T/stalled" || { cat "$T/stall.log"; fail "the stalled connections could not be opened"; }
inflight=$(metric rearguard_webhook_requests_in_flight)
[ "$inflight" -ge 2 ] || fail "in flight is $inflight with 25 requests stalled in their body"
status=$(review "$REVIEW")
[ "$status" = 200 ] || fail "a review beside 60 stalled connections was answered $status"
grep -q '"uid":"705ab4f5-6393-11e8-b7cc-42010a800002"' "$T/answer" || fail "the review's answer lacks its uid"
say "a review answered beside 60 stalled connections (in flight: $inflight)"
rc=0
wait "$staller" || rc=$?
cat "$T/stall.log"
[ "$rc" = 0 ] || fail "the stalled connections: exit $rc"
[ "$(metric rearguard_webhook_requests_in_flight)" = 1 ] || fail "requests are still in flight after the timeouts"

cat >"$T/many.py" <<'PY'
import json, socket, ssl, sys, threading
port, ca, review, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
ctx = ssl.create_default_context(cafile=ca)
template = json.load(open(review))
barrier = threading.Barrier(n)
results = [None] * n

def one(i):
    r = json.loads(json.dumps(template))
    r["request"]["uid"] = "uid-%03d" % i
    body = json.dumps(r).encode()
    try:
        s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=120), server_hostname="localhost")
        barrier.wait(timeout=120)
        s.sendall(b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        status = int(data.split(b" ", 2)[1])
        results[i] = (status, (b'"uid":"uid-%03d"' % i) in data)
    except Exception as e:
        results[i] = (repr(e), False)

threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
bad = [(i, r) for i, r in enumerate(results) if r != (200, True)]
print("# %d of %d answered 200 with their uid" % (n - len(bad), n))
if bad:
    sys.exit("not answered 200 with their uid: %s" % bad[:5])
PY
python3 "$T/many.py" "$PORT" "$T/ca.crt" "$REVIEW" 200 || fail "200 concurrent reviews were not all answered"
[ "$(metric 'rearguard_webhook_reviews_total{outcome="patched"}')" = 201 ] || fail "patched is not 201 in /metrics"
still_up
echo "PASS: $TEST_NAME"
