#!/bin/bash
# Reviews at the API server's largest request (3 MiB), over real TLS, in
# every shape tests/helpers/bigreview makes: each is answered 200 within
# 5 s (the configuration's timeoutSeconds), patched when its pod fits the
# budget of values and allowed unchanged with a warning when it does not;
# then 24 at once, each answered 200 or 503 (the bodies held at once are
# bounded, and a body the memory cannot take is refused whole, before it
# is read); a review past 4 MiB (a 3 MiB pod of '<', as Go writes it) is
# refused with 413; answers held for clients that do not read them count
# in the same bound. Through all of it the server's peak RSS stays within the
# Deployment's memory limit with its margin: 48 MiB of 64. Under
# AddressSanitizer, whose redzones and quarantine make the RSS larger, three
# times that.
. "$RG_SRCDIR/tests/integration/webhook-lib.sh"

BIG=$RG_BUILDDIR/tests/helpers/bigreview
[ -x "$BIG" ] || fail "no $BIG (make check builds it)"
make_ca
make_cert srv CN=webhook-big
# AddressSanitizer keeps freed blocks in quarantine (256 MiB by default), so that the RSS of a process that
# frees a tree after each review grows with every review it answered: a quarantine of 1 MiB leaves its
# RSS to what is held (with the sanitizer's shadow and redzones, which the bound below allows for).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"
WH_VERBOSE=no wh_start --tls-cert "$T/srv.crt" --tls-key "$T/srv.key"

# post FILE: "STATUS SECONDS" of a review of FILE; the answer in $T/answer.
post() {
	curl -s -o "$T/answer" -w '%{http_code} %{time_total}\n' --max-time 60 --cacert "$T/ca.crt" \
		-H 'Content-Type: application/json' --data-binary "@$1" "https://127.0.0.1:$PORT/mutate" || true
}

for shape in $("$BIG" --list); do
	[ "$shape" != gated ] || continue # --gate's, which test-review-big reviews in process
	"$BIG" "$shape" >"$T/$shape.json" || fail "bigreview $shape"
	read -r status took < <(post "$T/$shape.json")
	[ "$status" = 200 ] || fail "$shape ($(wc -c <"$T/$shape.json") bytes): answered $status"
	awk -v t="$took" 'BEGIN { exit !(t < 5) }' || fail "$shape: answered in $took s, not within the 5 s timeoutSeconds"
	case $shape in
	*-long | reinvoked | string) want='"patch":' ;;
	*) want='allowed unchanged: more than 100000 values in the review' ;;
	esac
	grep -q "$want" "$T/answer" || fail "$shape: the answer lacks $want: $(head -c 400 "$T/answer")"
	grep -q "\"uid\":\"big-$shape\"" "$T/answer" || fail "$shape: the answer lacks its uid"
	say "$shape: 200 in $took s"
done

# 24 at once: each answered whole, or refused whole (503) while the others hold the memory.
pids=
for i in $(seq 24); do
	curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 --cacert "$T/ca.crt" -H 'Content-Type: application/json' \
		--data-binary "@$T/annotations-long.json" "https://127.0.0.1:$PORT/mutate" >"$T/at-once.$i" &
	pids="$pids $!"
done
for pid in $pids; do wait "$pid" || true; done
codes=$(cat "$T"/at-once.* | sort | uniq -c | tr '\n' ' ')
grep -qv -e '^200$' -e '^503$' "$T"/at-once.* && fail "24 at once: answered $codes"
grep -q '^200$' "$T"/at-once.* || fail "24 at once: none answered 200 ($codes)"
say "24 3 MiB reviews at once: $codes"

# Past the body's limit: a 3 MiB annotation of '<', each \u003c in the review.
python3 - "$T/escaped.json" <<'PY'
import sys
head = ('{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"escaped",'
        '"kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","object":{"apiVersion":"v1",'
        '"kind":"Pod","metadata":{"name":"lt","annotations":{"a":"')
tail = '"}},"spec":{"containers":[{"name":"app","image":"busybox"}]}}}}'
with open(sys.argv[1], "w") as f:
    f.write(head + "\\u003c" * (3 << 20) + tail)
PY
read -r status took < <(post "$T/escaped.json")
[ "$status" = 413 ] || fail "a review of $(wc -c <"$T/escaped.json") bytes was answered $status, not 413"
still_up
[ "$(metric 'rearguard_webhook_responses_total{code="413"}')" = 1 ] || fail "the 413 is not counted"
[ "$(metric rearguard_webhook_held_bytes)" -lt 65536 ] || fail "bodies or answers are still held: $(metric rearguard_webhook_held_bytes)"

hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$WH_PID/status")
bound=$((48 * 1024))
case $("$RG_BUILDDIR/rearguard" --version) in *asan*) bound=$((3 * bound)) ;; esac
[ "$hwm" -le "$bound" ] || fail "the server's peak RSS is $hwm kB, more than $bound kB"
say "the server's peak RSS: $hwm kB (at most $bound kB)"

# Answers held for slow readers count too. Clients that do not read the answers of gated reviews (their
# containers replaced whole: an answer a third larger than its review) hold them: two of 3 MiB, then one of
# 4 MiB, whose body fitted beside the first two answers and whose answer takes the held past the 12 MiB. The
# next review is refused (503) until they go.
kill "$WH_PID"
wait "$WH_PID" || true
"$BIG" gated >"$T/gated.json" || fail "bigreview gated"
"$BIG" gated 4150000 >"$T/gated-4.json" || fail "bigreview gated 4150000"
WH_VERBOSE=no wh_start --tls-cert "$T/srv.crt" --tls-key "$T/srv.key" --gate --shutdown-delay 0s
cat >"$T/unread.py" <<'PY'
import os, socket, ssl, sys, time
port, ca, ready, go, reviews = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
ctx = ssl.create_default_context(cafile=ca)
held = []
for review in reviews:
    body = open(review, "rb").read()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a reader that takes nothing: the answer stays held
    s.settimeout(60)
    s.connect(("127.0.0.1", port))
    s = ctx.wrap_socket(s, server_hostname="localhost")
    s.sendall(b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body) + body)
    held.append(s)
    time.sleep(1)  # one review at a time: its body, then its answer, held
open(ready, "w").close()
for _ in range(1200):
    if os.path.exists(go):
        break
    time.sleep(0.05)
PY
python3 "$T/unread.py" "$PORT" "$T/ca.crt" "$T/unread-ready" "$T/unread-go" "$T/gated.json" "$T/gated.json" \
	"$T/gated-4.json" >"$T/unread.log" 2>&1 &
unread=$!
STARTED="$STARTED $unread"
wait_for 120 test -e "$T/unread-ready" || { cat "$T/unread.log"; fail "the slow readers could not send their reviews"; }
wait_for 60 test "$(metric rearguard_webhook_held_bytes)" -gt $((12 << 20)) ||
	fail "three unread answers do not hold more than 12 MiB: $(metric rearguard_webhook_held_bytes)"
[ "$(review "$REVIEW")" = 503 ] || fail "a review beside 12 MiB of answers held was not refused (503)"
touch "$T/unread-go"
wait "$unread" || true
wait_for 60 test "$(metric rearguard_webhook_held_bytes)" = 0 || fail "answers still held after their readers went"
[ "$(review "$REVIEW")" = 200 ] || fail "a review after the slow readers went was not answered 200"
say "three unread answers held more than 12 MiB: a review refused (503) until they went"
echo "PASS: $TEST_NAME"
