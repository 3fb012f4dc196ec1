#!/bin/bash
# A certificate rotated under load: tools/webhook-cert writes a new serving
# certificate (a new key, the same CA: the caBundle stays) into the Secret
# while pods labelled rearguard.io/inject=enabled (failurePolicy: Fail, so
# any failed call refuses the pod) are created one after another: at least
# 50, and on until both replicas serve the new certificate and 10 more went
# through. Not one admission may fail. The kubelet updates a Secret volume
# at its pod's next sync (tools/cluster's kubelet keeps the default
# syncFrequency, one minute), so the new certificate arrives within about
# a minute and a half; each replica's certificate is read over TLS from its
# pod address. The pods never run (a node selector no node has): their
# admission is what is tested.
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"

image_busybox
webhook_up exclusive

# serials: the serial of the certificate each ready replica serves, sorted.
serials() {
	local ip
	for ip in $(kubectl -n "$WEBHOOK_NS" get endpoints rearguard-webhook -o 'jsonpath={.subsets[*].addresses[*].ip}'); do
		timeout 20 "$CLUSTER" exec openssl s_client -connect "$ip:8443" \
			-servername rearguard-webhook.rearguard-system.svc </dev/null 2>/dev/null |
			openssl x509 -noout -serial 2>/dev/null | cut -d= -f2 || echo none
	done | sort | paste -sd' '
}

# secret_serial: the serial of the certificate in the Secret.
secret_serial() {
	kubectl -n "$WEBHOOK_NS" get secret rearguard-webhook-tls -o 'jsonpath={.data.tls\.crt}' | base64 -d |
		openssl x509 -noout -serial | cut -d= -f2
}

# tools/webhook-cert's kubectl: the cluster's.
mkdir -p "$T/bin"
printf '#!/bin/sh\nexec %q kubectl "$@"\n' "$CLUSTER" >"$T/bin/kubectl"
chmod +x "$T/bin/kubectl"

old=$(secret_serial)
before=$(serials)
say "before: Secret serial $old; replicas serve $before"
[ "$before" = "$old $old" ] || fail "the replicas do not serve the Secret's certificate before the rotation"

PATH=$T/bin:$PATH "$RG_SRCDIR/tools/webhook-cert" 2>"$T/cert.log" || fail "tools/webhook-cert failed: $(cat "$T/cert.log")"
new=$(secret_serial)
say "rotated at $(date -u +%T): $(tail -n 1 "$T/cert.log")"
[ "$new" != "$old" ] || fail "the Secret's certificate did not change"

start=$(now_ms)
end=$((start + 300000))
n=0 after=0 seen=
while [ "$n" -lt 50 ] || [ -z "$seen" ] || [ "$after" -lt 10 ]; do
	[ "$(now_ms)" -lt "$end" ] || fail "after 300 s and $n pods: replicas serve $(serials), want $new"
	n=$((n + 1))
	labelled_pod "during-$n" nowhere >"$T/pod.yaml"
	k create -f "$T/pod.yaml" >"$T/create.out" 2>&1 ||
		fail "pod $n ($(($(now_ms) - start)) ms after the rotation) refused: $(cat "$T/create.out")"
	[ -z "$seen" ] || after=$((after + 1))
	if [ -z "$seen" ] && [ $((n % 5)) = 0 ]; then
		now=$(serials)
		if [ "$now" = "$new $new" ]; then
			seen=$(($(now_ms) - start))
			say "both replicas serve the new certificate $seen ms after the rotation ($n pods created)"
		fi
	fi
	sleep 1
done
created=$(k get pods -o name | grep -c '^pod/during-')
say "$n pods created across the rotation, $created stored, none refused"
[ "$created" = "$n" ] || fail "$created pods stored, $n created"
k delete pods --all --wait=false >/dev/null 2>&1 || true
echo "PASS: $TEST_NAME"
