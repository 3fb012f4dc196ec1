#!/bin/bash
# rearguard webhook's command line: --help is complete, bad usage is one
# line and exit 2, a certificate or key that cannot serve is one line and
# exit 1 (missing, not PEM, a key of another certificate, expired, not yet
# valid), the environment twins work and a flag wins over its twin.
. "$RG_SRCDIR/tests/integration/webhook-lib.sh"
RG=$RG_BUILDDIR/rearguard

# refused RC NEEDLE ARG...: exit RC, exactly one line on stderr naming NEEDLE, nothing on stdout.
refused() {
	local want=$1 needle=$2 rc=0
	shift 2
	"$RG" webhook "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
	[ "$rc" = "$want" ] || fail "webhook $*: exit $rc, want $want ($(head -c 300 "$T/err"))"
	[ "$(wc -l <"$T/err")" = 1 ] || fail "webhook $*: stderr is not one line: $(cat "$T/err")"
	grep -q "^rearguard: webhook: .*$needle" "$T/err" || fail "webhook $*: \"$(cat "$T/err")\" does not say \"$needle\""
	[ ! -s "$T/out" ] || fail "webhook $*: wrote to stdout"
}

help=$("$RG" webhook --help) || fail "--help exit $?"
for word in --listen --probe-listen --shutdown-delay --tls-cert --tls-key --image --gate --signal-as-root \
	--sidecar --log-format --verbose --quiet REARGUARD_LISTEN REARGUARD_PROBE_LISTEN REARGUARD_SHUTDOWN_DELAY \
	REARGUARD_TLS_CERT REARGUARD_TLS_KEY REARGUARD_IMAGE REARGUARD_GATE REARGUARD_SIGNAL_AS_ROOT \
	REARGUARD_LOG_FORMAT /mutate /mutate/services /healthz /readyz /metrics /etc/rearguard/tls/tls.crt /etc/rearguard/tls/tls.key \
	:8443 :8081 'Exit status'; do
	case $help in *"$word"*) ;; *) fail "--help does not mention $word" ;; esac
done
"$RG" --help | grep -q 'rearguard webhook' || fail "rearguard --help does not list the webhook"

make_ca
make_cert srv CN=webhook-usage
make_cert other CN=other
make_cert old CN=expired -1
cert=(--tls-cert "$T/srv.crt" --tls-key "$T/srv.key" --probe-listen 127.0.0.1:0)

refused 2 "unknown option --bogus" --bogus
refused 2 "unexpected argument \"extra\"" "${cert[@]}" extra
refused 2 "option --listen needs a value" --listen
refused 2 '--listen: "8443" is not ADDR:PORT' --listen 8443
refused 2 '--listen: "localhost" is not an IP address' --listen localhost:8443
refused 2 '--listen: "10.0.0.300" is not an IP address' --listen 10.0.0.300:8443
refused 2 '--listen: "1.2.3.4:70000" is not ADDR:PORT' --listen 1.2.3.4:70000
refused 2 '--mesh: "kuma" is not istio or linkerd' --mesh kuma
REARGUARD_MESH=kuma refused 2 'REARGUARD_MESH: "kuma" is not'
# The webhook sees the mesh's proxy in the pod: --mesh is inject's alone.
refused 2 '--mesh is for rearguard inject' "${cert[@]}" --mesh istio
REARGUARD_MESH=linkerd refused 2 'REARGUARD_MESH is for rearguard inject' "${cert[@]}"
REARGUARD_GATE=maybe refused 2 'REARGUARD_GATE: "maybe" is not true or false'
REARGUARD_LISTEN=nowhere refused 2 'REARGUARD_LISTEN: "nowhere" is not ADDR:PORT'
refused 2 '"kill" is no preset, stop' --sidecar caddy=kill
refused 2 '--log-format: "xml" is not text or json' --log-format xml
refused 2 '--shutdown-delay: invalid duration "soon"' --shutdown-delay soon
REARGUARD_SHUTDOWN_DELAY=-1s refused 2 'REARGUARD_SHUTDOWN_DELAY: invalid duration "-1s"'
refused 2 '--probe-listen: "8081" is not ADDR:PORT' --probe-listen 8081
say "bad usage: one line, exit 2"

refused 1 "cannot read the certificate /nonexistent/tls.crt" --tls-cert /nonexistent/tls.crt --tls-key "$T/srv.key"
refused 1 "cannot read the certificate $T/tls.crt" --tls-key "$T/srv.key" --tls-cert "$T/tls.crt"
echo "not a certificate" >"$T/junk.crt"
refused 1 "cannot use the certificate $T/junk.crt: not a PEM certificate" --tls-cert "$T/junk.crt" --tls-key "$T/srv.key"
refused 1 "cannot use the key $T/srv.crt: not a PEM private key" --tls-cert "$T/srv.crt" --tls-key "$T/srv.crt"
refused 1 "the key $T/other.key does not match the certificate $T/srv.crt" --tls-cert "$T/srv.crt" --tls-key "$T/other.key"
refused 1 "the certificate $T/old.crt expired on" --tls-cert "$T/old.crt" --tls-key "$T/old.key"
# The default paths: a Secret volume at /etc/rearguard/tls, absent here.
[ -e /etc/rearguard/tls/tls.crt ] || refused 1 "cannot read the certificate /etc/rearguard/tls/tls.crt"
say "a pair that cannot serve: one line, exit 1"

# A port in use, the webhook's or the probes': one line, exit 1.
wh_start "${cert[@]}" --shutdown-delay 0s
refused 1 "cannot listen on 127.0.0.1:$PORT: Address" "${cert[@]}" --listen "127.0.0.1:$PORT"
refused 1 "cannot listen on 127.0.0.1:$PROBE_PORT: Address" "${cert[@]}" --listen 127.0.0.1:0 \
	--probe-listen "127.0.0.1:$PROBE_PORT"
kill "$WH_PID"
wait "$WH_PID" || fail "the webhook exited $? on SIGTERM"

# The environment: REARGUARD_TLS_CERT, REARGUARD_TLS_KEY, REARGUARD_IMAGE; a flag wins over its twin.
REARGUARD_TLS_CERT=$T/srv.crt REARGUARD_TLS_KEY=$T/srv.key REARGUARD_IMAGE=example.com/env:1 \
	REARGUARD_SHUTDOWN_DELAY=0s wh_start --image example.com/flag:2
[ "$(review "$REVIEW")" = 200 ] || fail "a review is not answered 200"
python3 - "$T/answer" <<'PY' || fail "--image does not win over REARGUARD_IMAGE: $(head -c 400 "$T/answer")"
import base64, json, sys
patch = base64.b64decode(json.load(open(sys.argv[1]))["response"]["patch"]).decode()
assert "example.com/flag:2" in patch and "example.com/env:1" not in patch, patch
PY
kill "$WH_PID"
wait "$WH_PID" || fail "the webhook exited $? on SIGTERM"

# Every form of --listen the help names starts (on a port the kernel picks).
for addr in '[::]:0' '0.0.0.0:0' ':0' '[::1]:0'; do
	[ "$addr" != '[::1]:0' ] || [ -e /proc/net/if_inet6 ] || continue
	"$RG" webhook "${cert[@]}" --shutdown-delay 0s --listen "$addr" >"$T/listen.log" 2>&1 &
	pid=$!
	started "$pid"
	wait_for 60 grep -q 'listening address=' "$T/listen.log" || fail "--listen $addr: $(cat "$T/listen.log")"
	kill "$pid"
	wait "$pid" || fail "--listen $addr: exit $? on SIGTERM"
done
say "--listen [::]:0, 0.0.0.0:0, :0, [::1]:0 start"

# A build without the webhook says so in one line; this one has it.
case $("$RG" --version) in *webhook*) ;; *) fail "--version does not say that this build has the webhook" ;; esac
echo "PASS: $TEST_NAME"
