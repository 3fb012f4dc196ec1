# shellcheck shell=bash
# Sourced by the webhook's integration tests: real TLS with real clients.
# A CA and serving certificates are made with openssl in the test's
# temporary directory; the webhook listens on a free port the kernel picks;
# curl, openssl s_client and python's ssl module are the clients.
#
#   . "$RG_SRCDIR/tests/integration/webhook-lib.sh"
#   make_ca                                  # $T/ca.crt, $T/ca.key
#   make_cert srv CN=one                     # $T/srv.crt (subjectAltName localhost, 127.0.0.1), $T/srv.key
#   wh_start --tls-cert "$T/srv.crt" --tls-key "$T/srv.key"   # $PORT, $PROBE_PORT, $WH_PID; log in $T/webhook.log
#   wh_curl /healthz                         # curl trusting the CA
#   metric 'rearguard_webhook_reviews_total{outcome="invalid"}'   # on the probes' port
#   probe /readyz                            # its status on the probes' port (plain HTTP)
#
# Everything started is killed on exit, also on failure. Without openssl,
# curl or python3: exit 77.

: "${RG_BUILDDIR:?RG_BUILDDIR is set by make check}"
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}"
# shellcheck source=tests/common.sh
. "$RG_SRCDIR/tests/common.sh"

WH_PID=
PORT=
PROBE_PORT=
# The AdmissionReview of an Istio Job's pod (the benchmark's), which the webhook patches.
# shellcheck disable=SC2034 # the tests use it
REVIEW=$RG_SRCDIR/bench/webhook-review.json
# Polls of a server's answers, not of a file.
WAIT_EVERY=0.05

# fail_dump: the end of the webhook's log.
fail_dump() {
	[ ! -f "$T/webhook.log" ] || { echo "---- webhook.log"; tail -n 60 "$T/webhook.log"; }
}

"$RG_BUILDDIR/rearguard" webhook --help >/dev/null 2>&1 || skip "this build has no webhook (libmicrohttpd, GnuTLS)"
for tool in openssl curl python3; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed"
done

tmp_dir rg-webhook

# started PID: the process PID is killed (and reaped) at the end.
started() {
	at_exit "{ kill -9 $1 && wait $1; } 2>/dev/null || true"
}

# make_ca: a CA of the test's own.
make_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$T/ca.key" \
		-out "$T/ca.crt" -days 30 -subj /CN=rearguard-test-ca 2>"$T/openssl.err" || fail "openssl: cannot make a CA"
}

# make_cert NAME SUBJECT [DAYS]: $T/NAME.crt signed by the CA, valid DAYS (default 10; -1: expired
# yesterday), for localhost and 127.0.0.1, and its key $T/NAME.key.
make_cert() {
	local name=$1 subject=$2 days=${3:-10}
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$T/$name.key" \
		-out "$T/$name.csr" -subj "/${subject}" 2>"$T/openssl.err" || fail "openssl: cannot make a request"
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$T/$name.ext"
	openssl x509 -req -in "$T/$name.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -set_serial "0x$(openssl rand -hex 8)" \
		-days "$days" -extfile "$T/$name.ext" -out "$T/$name.crt" 2>"$T/openssl.err" ||
		fail "openssl: cannot sign $name"
}

# make_cert_not_before NAME SUBJECT SECONDS: as make_cert, its notBefore SECONDS from now (openssl ca, which
# takes a start date, where openssl x509 of OpenSSL 3.0 does not).
make_cert_not_before() {
	local name=$1 subject=$2 start
	start=$(date -u -d "@$(($(date +%s) + $3))" +%Y%m%d%H%M%SZ)
	mkdir -p "$T/ca.d"
	: >"$T/ca.d/index.txt"
	openssl rand -hex 8 >"$T/ca.d/serial"
	printf '[ca]\ndefault_ca = test\n[test]\ndatabase = %s\nnew_certs_dir = %s\ncertificate = %s\nserial = %s\n' \
		"$T/ca.d/index.txt" "$T/ca.d" "$T/ca.crt" "$T/ca.d/serial" >"$T/ca.d/ca.cnf"
	printf 'private_key = %s\ndefault_md = sha256\npolicy = any\nunique_subject = no\n[any]\ncommonName = supplied\n' \
		"$T/ca.key" >>"$T/ca.d/ca.cnf"
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$T/$name.key" \
		-out "$T/$name.csr" -subj "/${subject}" 2>"$T/openssl.err" || fail "openssl: cannot make a request"
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$T/$name.ext"
	openssl ca -batch -config "$T/ca.d/ca.cnf" -in "$T/$name.csr" -out "$T/$name.crt" -notext -startdate "$start" \
		-days 10 -extfile "$T/$name.ext" 2>"$T/openssl.err" ||
		fail "openssl: cannot sign $name: $(cat "$T/openssl.err")"
}

# wh_start [ARG...]: the webhook on 127.0.0.1 and a port the kernel picks, its probes on another, in the
# background; returns once it listens (its log says where). Verbose, unless WH_VERBOSE=no.
wh_start() {
	local verbose=--verbose
	[ "${WH_VERBOSE:-yes}" = yes ] || verbose=--log-format=text
	: >"$T/webhook.log"
	"$RG_BUILDDIR/rearguard" webhook --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 "$verbose" "$@" \
		>>"$T/webhook.log" 2>&1 &
	WH_PID=$!
	started "$WH_PID"
	wait_for 60 grep -q 'listening address=' "$T/webhook.log" || fail "the webhook did not start listening"
	PORT=$(sed -n 's/.*listening address=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/webhook.log" | head -n 1)
	PROBE_PORT=$(sed -n 's/.*listening .*probes=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/webhook.log" | head -n 1)
	[ -n "$PORT" ] && [ -n "$PROBE_PORT" ] || fail "no ports in the log"
}

# probe PATH: the HTTP status of GET PATH on the probes' port (000 when there was none).
probe() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 60 "http://127.0.0.1:$PROBE_PORT$1" || true
}

# wh_curl PATH [CURL_ARG...]: the body on stdout; curl's exit status.
wh_curl() {
	local path=$1
	shift
	curl -sS --max-time 60 --cacert "$T/ca.crt" "$@" "https://127.0.0.1:$PORT$path"
}

# wh_status PATH [CURL_ARG...]: the HTTP status only (000 when there was none).
wh_status() {
	local path=$1
	shift
	curl -s -o /dev/null -w '%{http_code}' --max-time 60 --cacert "$T/ca.crt" "$@" "https://127.0.0.1:$PORT$path" || true
}

# review FILE [PATH]: POSTs the AdmissionReview in FILE to PATH (default /mutate); the answer in $T/answer, the
# status printed.
review() {
	curl -s -o "$T/answer" -w '%{http_code}' --max-time 60 --cacert "$T/ca.crt" -H 'Content-Type: application/json' \
		--data-binary "@$1" "https://127.0.0.1:$PORT${2:-/mutate}" || true
}

# metric SERIES: its value in /metrics (SERIES as written there, labels included), read on the probes' port,
# which answers whatever the webhook's does.
metric() {
	curl -sS --max-time 60 "http://127.0.0.1:$PROBE_PORT/metrics" |
		awk -v s="$1" '$1 == s { print $2; found = 1 } END { exit !found }'
}

# served_serial: the serial of the certificate a handshake gets now, as openssl prints it.
served_serial() {
	openssl s_client -connect "127.0.0.1:$PORT" -servername localhost -CAfile "$T/ca.crt" </dev/null 2>/dev/null |
		openssl x509 -noout -serial | cut -d= -f2
}

# cert_serial FILE: the serial of a certificate file, as openssl prints it.
cert_serial() {
	openssl x509 -in "$1" -noout -serial | cut -d= -f2
}

# still_up: the webhook process runs and answers /healthz.
still_up() {
	kill -0 "$WH_PID" 2>/dev/null || fail "the webhook exited"
	[ "$(wh_curl /healthz)" = ok ] || fail "the webhook does not answer /healthz"
}

# configmap_review UID: an AdmissionReview of a ConfigMap's creation, on stdout.
configmap_review() {
	printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"%s",' "$1"
	printf '"kind":{"group":"","version":"v1","kind":"ConfigMap"},"resource":{"group":"","version":"v1","resource":"configmaps"},'
	printf '"namespace":"default","operation":"CREATE","object":{"apiVersion":"v1","kind":"ConfigMap",'
	printf '"metadata":{"name":"settings","namespace":"default"},"data":{"a":"b"}}}}\n'
}
