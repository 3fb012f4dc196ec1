#!/bin/bash
# rearguard webhook over real TLS: the endpoints, a pod patched and a
# ConfigMap let through, and what is no review (garbage, truncated JSON,
# another media type, 8 MiB, plain HTTP, TLS 1.1) refused while the
# service stays up, each counted in /metrics.
. "$RG_SRCDIR/tests/integration/webhook-lib.sh"

make_ca
make_cert srv CN=webhook-requests
wh_start --tls-cert "$T/srv.crt" --tls-key "$T/srv.key" --image registry.example.com/rearguard:test --shutdown-delay 0s

[ "$(wh_curl /healthz)" = ok ] || fail "/healthz does not say ok"
[ "$(wh_status /readyz)" = 200 ] || fail "/readyz is not 200 while serving"
[ "$(wh_status /nope)" = 404 ] || fail "an unknown path is not 404"
[ "$(wh_status /healthz -X POST)" = 405 ] || fail "POST /healthz is not 405"
[ "$(wh_status /mutate)" = 405 ] || fail "GET /mutate is not 405"
[ "$(wh_status /mutate -H 'Content-Type: text/plain' --data-binary @"$REVIEW")" = 415 ] ||
	fail "a review sent as text/plain is not 415"
say "endpoints: healthz, readyz, 404, 405, 415"

# A pod with Istio's proxy: patched, with the agent's image; the answer is a v1 AdmissionReview.
[ "$(review "$REVIEW")" = 200 ] || fail "the Istio pod's review is not answered 200"
python3 - "$T/answer" <<'PY' || fail "the Istio pod's answer: $(head -c 300 "$T/answer")"
import base64, json, sys
r = json.load(open(sys.argv[1]))
assert r["apiVersion"] == "admission.k8s.io/v1" and r["kind"] == "AdmissionReview", r
resp = r["response"]
assert resp["uid"] == "705ab4f5-6393-11e8-b7cc-42010a800002" and resp["allowed"] is True, resp
assert resp["patchType"] == "JSONPatch", resp
patch = json.loads(base64.b64decode(resp["patch"]))
images = [op["value"].get("image") for op in patch if op["op"] == "add" and op["path"].startswith("/spec/containers/")]
assert "registry.example.com/rearguard:test" in images, patch
PY
grep -q 'review patched pod=reports/nightly-report-29312760-' "$T/webhook.log" || fail "no log line for the patched review"

# A Deployment's pod: left alone through /mutate; through /mutate/services (a namespace labelled
# rearguard.io/inject=services), held and gated under restartPolicy Always.
DEPLOYMENT_POD=$RG_SRCDIR/tests/review/pods/deployment-pod.json
[ "$(review "$DEPLOYMENT_POD")" = 200 ] || fail "the Deployment's pod's review is not answered 200"
python3 -c 'import json, sys; assert "patch" not in json.load(open(sys.argv[1]))["response"]' "$T/answer" ||
	fail "the Deployment's pod was patched through /mutate"
[ "$(review "$DEPLOYMENT_POD" /mutate/services)" = 200 ] || fail "/mutate/services does not answer 200"
python3 - "$T/answer" <<'PY' || fail "the Deployment's pod through /mutate/services: $(head -c 300 "$T/answer")"
import base64, json, sys
patch = json.loads(base64.b64decode(json.load(open(sys.argv[1]))["response"]["patch"]))
text = json.dumps(patch)
assert '"REARGUARD_RESTART_POLICY", "value": "Always"' in text and '"stopped"' in text, patch
PY
say "a Deployment's pod: unchanged through /mutate, held through /mutate/services"

# A ConfigMap: allowed, no patch.
configmap_review cm-uid-1 >"$T/cm.json"
[ "$(review "$T/cm.json")" = 200 ] || fail "the ConfigMap's review is not answered 200"
python3 - "$T/answer" <<'PY' || fail "the ConfigMap's answer: $(head -c 300 "$T/answer")"
import json, sys
resp = json.load(open(sys.argv[1]))["response"]
assert resp["uid"] == "cm-uid-1" and resp["allowed"] is True and "patch" not in resp, resp
PY
say "an Istio pod patched, a ConfigMap allowed without a patch"

# Garbage and truncated JSON: 400, and the service answers the next request.
printf '\x00\xff garbage {{{' >"$T/garbage"
[ "$(review "$T/garbage")" = 400 ] || fail "garbage is not answered 400"
still_up
head -c 3000 "$REVIEW" >"$T/truncated"
[ "$(review "$T/truncated")" = 400 ] || fail "a truncated review is not answered 400"
still_up
say "garbage and truncated JSON: 400, still up"

# 8 MiB: refused (413) without being read, the connection closed; still up.
python3 -c 'import sys; sys.stdout.write("{\"a\":\"" + "x" * (8 << 20) + "\"}")' >"$T/big"
status=$(review "$T/big")
[ "$status" = 413 ] || fail "an 8 MiB body is answered $status, not 413"
still_up
# The same body with its length untold (chunked): the connection is closed once it passes 4 MiB.
status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 --cacert "$T/ca.crt" -H 'Content-Type: application/json' \
	-H 'Transfer-Encoding: chunked' --data-binary @"$T/big" "https://127.0.0.1:$PORT/mutate" || true)
[ "$status" != 200 ] || fail "an 8 MiB chunked body was answered 200"
still_up
say "8 MiB refused ($status when chunked), still up"

# Plain HTTP on the TLS port, and TLS 1.1: no answer, still up.
status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 "http://127.0.0.1:$PORT/healthz" || true)
[ "$status" = 000 ] || fail "plain HTTP got an HTTP answer ($status)"
still_up
if openssl s_client -connect "127.0.0.1:$PORT" -tls1_1 </dev/null >"$T/tls11.out" 2>&1; then
	grep -q 'Protocol *: TLSv1.1' "$T/tls11.out" && fail "a TLS 1.1 handshake succeeded"
fi
still_up
curl -sS --max-time 60 --cacert "$T/ca.crt" --tlsv1.2 --tls-max 1.2 -o /dev/null "https://127.0.0.1:$PORT/healthz" ||
	fail "TLS 1.2 is refused"
say "plain HTTP and TLS 1.1 refused, TLS 1.2 served, still up"

# Every outcome is a series, those that did not happen at 0; the invalid ones counted.
[ "$(metric 'rearguard_webhook_reviews_total{outcome="patched"}')" = 2 ] || fail "patched is not 2 in /metrics"
[ "$(metric 'rearguard_webhook_reviews_total{outcome="skipped"}')" = 1 ] || fail "skipped is not 1 in /metrics"
[ "$(metric 'rearguard_webhook_reviews_total{outcome="invalid"}')" = 2 ] || fail "invalid is not 2 in /metrics"
[ "$(metric 'rearguard_webhook_reviews_total{outcome="unchanged"}')" = 1 ] || fail "unchanged is not 1 in /metrics"
[ "$(metric 'rearguard_webhook_review_duration_seconds_count')" = 6 ] || fail "the histogram does not count 6 reviews"
[ "$(metric 'rearguard_webhook_review_duration_seconds_bucket{le="+Inf"}')" = 6 ] || fail "the +Inf bucket is not 6"
expiry=$(metric rearguard_webhook_certificate_expiry_seconds)
want=$(date -d "$(openssl x509 -in "$T/srv.crt" -noout -enddate | cut -d= -f2)" +%s)
[ "$expiry" = "$want" ] || fail "certificate expiry $expiry, want the certificate's notAfter $want"
[ "$(metric 'rearguard_webhook_requests_in_flight')" = 1 ] || fail "in flight is not 1 (the metrics request itself)"
# The answers by status, and what was closed unanswered.
for code in 404:1 405:2 413:1 415:1 500:0 503:0; do
	[ "$(metric "rearguard_webhook_responses_total{code=\"${code%:*}\"}")" = "${code#*:}" ] ||
		fail "${code%:*} is not counted ${code#*:} times: $(metric "rearguard_webhook_responses_total{code=\"${code%:*}\"}")"
done
[ "$(metric 'rearguard_webhook_connections_closed_total{port="webhook",reason="body_too_large"}')" = 1 ] ||
	fail "the chunked body past the limit is not counted closed"
# The probes' port: the probes and the metrics, plain HTTP; no reviews.
[ "$(probe /healthz)" = 200 ] && [ "$(probe /readyz)" = 200 ] && [ "$(probe /metrics)" = 200 ] ||
	fail "the probes' port does not serve /healthz, /readyz and /metrics"
[ "$(probe /mutate)" = 404 ] || fail "the probes' port serves /mutate"
say "metrics: reviews by outcome, their histogram, answers by status, the certificate's expiry; the probes' port"
echo "PASS: $TEST_NAME"
