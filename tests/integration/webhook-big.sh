#!/bin/bash
# Reviews at the API server's largest request (3 MiB), over real TLS, in
# every shape tests/helpers/bigreview makes: each is answered 200 within
# 5 s (the configuration's timeoutSeconds), patched when its pod fits the
# budget of values and allowed unchanged with a warning when it does not;
# then 24 at once, each answered 200 or 503 (the bodies held at once are
# bounded, and a body the memory cannot take is refused whole, before it
# is read); a review past 4 MiB (a 3 MiB pod of '<', as Go writes it) is
# refused with 413. Through all of it the server's peak RSS stays within the
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
echo "PASS: $TEST_NAME"
