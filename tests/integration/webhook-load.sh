#!/bin/bash
# Slow and many clients. From their own loopback addresses (127.0.0.2...),
# so that the limits per address tell them from the test's own client:
# - 700 TCP connections that send a byte of a TLS hello every 2 s, and 32
#   TLS connections that send their request's headers a byte a second: the
#   server serves 32 of an address at once and keeps the others of it
#   waiting, 640 at most (60 refused); /healthz on both ports and a real
#   review answer within 3 s throughout (the manifest's probe timeout: a
#   starved port never answers; on a quiet machine each takes milliseconds,
#   which bench/, not this test, measures); every
#   slow connection is closed at its 10 s deadline, which no trickle moves;
# - 160 silent connections from five addresses fill the port's 128: the
#   next is refused, the probes' port still answers;
# - 200 reviews sent at once from one address (an API server's burst) are
#   all answered 200 with their own uid: 32 served, the rest waiting.
# Each refusal and closing is counted in /metrics.
. "$RG_SRCDIR/tests/integration/webhook-lib.sh"

make_ca
make_cert srv CN=webhook-load
WH_VERBOSE=no wh_start --tls-cert "$T/srv.crt" --tls-key "$T/srv.key"

cat >"$T/slow.py" <<'PY'
import os, select, socket, ssl, sys, time
port, ca, ready, done = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
ctx = ssl.create_default_context(cafile=ca)
# The start of a TLS record of 512 bytes (a ClientHello): the server waits for the rest.
hello = bytes.fromhex("1603010200010001fc0303") + os.urandom(32)
raw = []
for i in range(700):
    s = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0), timeout=60)
    s.setblocking(False)
    raw.append(s)
tls = []
for i in range(32):
    s = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.3", 0), timeout=60)
    tls.append(ctx.wrap_socket(s, server_hostname="localhost"))
head = b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
open(ready, "w").close()
print("# 700 raw and 32 TLS slow connections open", flush=True)
# Trickle for 14 s: past the 10 s deadline. A connection the server closed reads as closed (or reset).
start, closed_at = time.time(), {}
while time.time() - start < 14:
    t = time.time() - start
    for i, s in enumerate(raw):
        if i in closed_at:
            continue
        try:
            r, _, _ = select.select([s], [], [], 0)
            if r and s.recv(4096) == b"":
                raise ConnectionResetError
            if int(t) % 2 == 0:
                s.send(hello[int(t) // 2:][:1])
        except (ConnectionResetError, BrokenPipeError, BlockingIOError, OSError):
            closed_at[i] = t
    for i, s in enumerate(tls):
        if 1000 + i in closed_at:
            continue
        try:
            s.sendall(head[int(t):][:1])
        except (ConnectionResetError, BrokenPipeError, ssl.SSLError, OSError):
            closed_at[1000 + i] = t
    time.sleep(1)
early = sorted(t for t in closed_at.values() if t < 8)
print("# closed by the server: %d of 732 (%d before 8 s: the refused)" % (len(closed_at), len(early)), flush=True)
open(done, "w").close()
if len(closed_at) < 732:
    sys.exit("%d slow connections were still open after 14 s" % (732 - len(closed_at)))
PY

python3 "$T/slow.py" "$PORT" "$T/ca.crt" "$T/slow-ready" "$T/slow-done" >"$T/slow.log" 2>&1 &
slow=$!
started "$slow"
wait_for 120 test -e "$T/slow-ready" || { cat "$T/slow.log"; fail "the slow connections could not be opened"; }

# in_time CMD...: CMD's output; fails when it took the probes' timeout (3 s) or more.
in_time() {
	local t0 t1
	t0=$(now_ms)
	"$@"
	t1=$(now_ms)
	[ $((t1 - t0)) -lt 3000 ] || { echo "took $((t1 - t0)) ms" >&2; return 1; }
}
rounds=0
while [ ! -e "$T/slow-done" ] && [ $rounds -lt 12 ]; do
	[ "$(in_time probe /healthz)" = 200 ] || fail "/healthz on the probes' port beside the slow connections"
	[ "$(in_time wh_status /healthz)" = 200 ] || fail "/healthz on the webhook's port beside the slow connections"
	[ "$(in_time review "$REVIEW")" = 200 ] || fail "a review beside the slow connections"
	grep -q '"uid":"705ab4f5-6393-11e8-b7cc-42010a800002"' "$T/answer" || fail "the review's answer lacks its uid"
	rounds=$((rounds + 1))
	sleep 0.5
done
[ $rounds -ge 3 ] || fail "only $rounds rounds beside the slow connections"
say "$rounds rounds: /healthz on both ports and a review, each within 3 s, beside 732 slow connections"
rc=0
wait "$slow" || rc=$?
cat "$T/slow.log"
[ "$rc" = 0 ] || fail "the slow connections: exit $rc"
webhook='port="webhook"'
[ "$(metric "rearguard_webhook_connections_refused_total{$webhook,limit=\"client\"}")" -ge 60 ] ||
	fail "the connections past 640 from one address are not counted refused"
[ "$(metric "rearguard_webhook_connections_closed_total{$webhook,reason=\"headers_deadline\"}")" -ge 672 ] ||
	fail "the slow connections are not counted closed at their deadline"
[ "$(metric "rearguard_webhook_connections{$webhook,state=\"waiting\"}")" = 0 ] || fail "connections still waiting"

# Five addresses of 32 silent connections: the port serves 128, then refuses.
cat >"$T/fill.py" <<'PY'
import os, socket, sys, time
port, ready, go = int(sys.argv[1]), sys.argv[2], sys.argv[3]
held = [socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.%d" % (10 + i // 32), 0), timeout=60)
        for i in range(160)]
open(ready, "w").close()
for _ in range(1200):
    if os.path.exists(go):
        break
    time.sleep(0.05)
PY
python3 "$T/fill.py" "$PORT" "$T/fill-ready" "$T/fill-go" >"$T/fill.log" 2>&1 &
fill=$!
started "$fill"
wait_for 60 test -e "$T/fill-ready" || { cat "$T/fill.log"; fail "the silent connections could not be opened"; }
wait_for 20 test "$(metric "rearguard_webhook_connections{$webhook,state=\"served\"}")" = 128 ||
	fail "the port does not serve 128 at once"
[ "$(wh_status /healthz)" = 000 ] || fail "a connection past the port's limit was answered"
[ "$(metric "rearguard_webhook_connections_refused_total{$webhook,limit=\"global\"}")" -ge 33 ] ||
	fail "the connections past the port's limit are not counted refused"
[ "$(probe /readyz)" = 200 ] || fail "the probes' port does not answer while the webhook's is full"
touch "$T/fill-go"
wait "$fill" || true
wait_for 20 test "$(metric "rearguard_webhook_connections{$webhook,state=\"served\"}")" = 0 ||
	fail "the silent connections are still served after their client closed them"
say "160 silent connections from five addresses: 128 served, the rest refused; the probes' port answers"

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
        barrier.wait(timeout=120)
        s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=120), server_hostname="localhost")
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
patched=$(metric 'rearguard_webhook_reviews_total{outcome="patched"}')
python3 "$T/many.py" "$PORT" "$T/ca.crt" "$REVIEW" 200 || fail "200 reviews at once were not all answered"
[ "$(metric 'rearguard_webhook_reviews_total{outcome="patched"}')" = $((patched + 200)) ] || fail "patched is not 200 more"
still_up
echo "PASS: $TEST_NAME"
