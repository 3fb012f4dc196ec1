#!/bin/bash
# tools/webhook-cert's two prints, which write nothing to a cluster: --print
# is the MutatingWebhookConfiguration for a repository, with its caBundle
# and every entry calling the Service of --namespace and --service, and
# nothing secret in it; --print-secret is the Secret, whose private key
# goes to SOPS, Sealed Secrets or external-secrets, never to a repository as
# it is, with a certificate the bundle's CA signed for the Service's names.
# Both come from the CA of --ca-dir, without which they refuse to run.
# Needs openssl, kubectl (its kustomize builds the configuration) and
# python3-yaml; skipped with the reason without them.
set -u
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}"
skip() {
	echo "SKIP: webhook-cert: $*"
	exit 77
}
command -v openssl >/dev/null 2>&1 || skip "no openssl (tools/webhook-cert makes the certificates with it)"
command -v kubectl >/dev/null 2>&1 || skip "no kubectl (tools/webhook-cert builds the configuration with kubectl kustomize)"
/usr/bin/python3 -c 'import yaml' 2>/dev/null || skip "no python3-yaml (tools/deps installs it)"

tool=$RG_SRCDIR/tools/webhook-cert
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
rc=0
fail() {
	echo "FAIL: webhook-cert: $*"
	rc=1
}

# Without --ca-dir, neither print runs: one line says why.
for p in --print --print-secret; do
	if "$tool" "$p" >"$t/out" 2>"$t/err"; then
		fail "$p without --ca-dir succeeded"
	elif [ "$(wc -l <"$t/err")" != 1 ] || ! grep -q -- "$p needs --ca-dir" "$t/err"; then
		fail "$p without --ca-dir: not one line saying so: $(cat "$t/err")"
	fi
done

"$tool" --print --ca-dir "$t/ca" --namespace batch-hooks --service hook >"$t/config.yaml" 2>"$t/err" ||
	fail "--print failed: $(cat "$t/err")"
"$tool" --print-secret --ca-dir "$t/ca" --namespace batch-hooks --service hook >"$t/secret.yaml" 2>"$t/err" ||
	fail "--print-secret failed: $(cat "$t/err")"
kubectl kustomize "$RG_SRCDIR/manifests/webhook/configuration" >"$t/built.yaml" 2>/dev/null ||
	fail "kubectl kustomize manifests/webhook/configuration failed"
[ "$rc" = 0 ] || exit 1

# The configuration: what manifests/webhook/configuration builds, but for
# every entry's caBundle (the CA of --ca-dir) and Service; nothing else.
/usr/bin/python3 - "$t" <<'PY' || rc=1
import base64, sys
import yaml

t = sys.argv[1]
bad = []
text = open(t + "/config.yaml").read()
docs = [d for d in yaml.safe_load_all(text) if d is not None]
ca = open(t + "/ca/ca.crt").read()
if [d.get("kind") for d in docs] != ["MutatingWebhookConfiguration"]:
    bad.append("--print prints %s, not the configuration alone" % [d.get("kind") for d in docs])
if "PRIVATE KEY" in text or "tls.key" in text:
    bad.append("--print prints a private key")
built = next(yaml.safe_load_all(open(t + "/built.yaml")))
entries = docs[0].get("webhooks") if docs else []
if [e["name"] for e in entries] != [e["name"] for e in built["webhooks"]]:
    bad.append("entries %s, built %s" % ([e["name"] for e in entries], [e["name"] for e in built["webhooks"]]))
for e, b in zip(entries, built["webhooks"]):
    cc = e["clientConfig"]
    bundle = base64.b64decode(cc.pop("caBundle", "")).decode()
    if bundle != ca:
        bad.append("%s: its caBundle is not the CA of --ca-dir" % e["name"])
    if (cc["service"]["namespace"], cc["service"]["name"]) != ("batch-hooks", "hook"):
        bad.append("%s calls the Service %s/%s, not batch-hooks/hook (--namespace, --service)"
                   % (e["name"], cc["service"]["namespace"], cc["service"]["name"]))
    cc["service"].update(name=b["clientConfig"]["service"]["name"],
                         namespace=b["clientConfig"]["service"]["namespace"])
    if e != b:
        bad.append("%s differs from what manifests/webhook/configuration builds beyond its caBundle and Service" % e["name"])
for b in bad:
    print("FAIL: webhook-cert: " + b)
sys.exit(1 if bad else 0)
PY

# The Secret: of the namespace, for the Service's names, signed by the CA,
# its key the certificate's; and it says where it goes.
/usr/bin/python3 - "$t" <<'PY' || rc=1
import base64, sys
import yaml

t = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(t + "/secret.yaml")) if d is not None]
if [(d.get("kind"), d.get("type")) for d in docs] != [("Secret", "kubernetes.io/tls")]:
    print("FAIL: webhook-cert: --print-secret prints %s" % [(d.get("kind"), d.get("type")) for d in docs])
    sys.exit(1)
s = docs[0]
if (s["metadata"]["name"], s["metadata"]["namespace"]) != ("rearguard-webhook-tls", "batch-hooks"):
    print("FAIL: webhook-cert: the Secret is %s/%s" % (s["metadata"]["namespace"], s["metadata"]["name"]))
    sys.exit(1)
for k in ("tls.crt", "tls.key", "ca.crt"):
    open("%s/%s" % (t, k), "wb").write(base64.b64decode(s["data"][k]))
PY
if [ "$rc" = 0 ]; then
	cmp -s "$t/ca.crt" "$t/ca/ca.crt" || fail "the Secret's ca.crt is not the CA of --ca-dir"
	openssl verify -CAfile "$t/ca/ca.crt" "$t/tls.crt" >/dev/null 2>&1 || fail "the Secret's certificate does not verify against the CA"
	sans=$(openssl x509 -noout -ext subjectAltName -in "$t/tls.crt" 2>/dev/null)
	for n in hook.batch-hooks.svc hook.batch-hooks.svc.cluster.local; do
		grep -q "DNS:$n\(,\|$\)" <<<"$sans" || fail "the certificate does not name $n: $sans"
	done
	[ "$(openssl pkey -pubout -in "$t/tls.key" 2>/dev/null)" = "$(openssl x509 -noout -pubkey -in "$t/tls.crt")" ] ||
		fail "the Secret's key is not its certificate's"
fi
for w in "never commit" sops kubeseal external-secrets; do
	grep -qi "^#.*$w" "$t/secret.yaml" || fail "--print-secret's comment does not say \"$w\""
done
help=$("$tool" --help)
for w in SOPS "Sealed Secrets" external-secrets "never as it is from a"; do
	grep -q "$w" <<<"$help" || fail "--help does not say \"$w\""
done
grep -qi 'commit' "$t/config.yaml" && fail "--print's output speaks of committing: $(grep -i commit "$t/config.yaml")"

# --new-ca: the bundle holds the new CA, then the old one.
cp "$t/ca/ca.crt" "$t/old-ca.crt"
"$tool" --print --new-ca --ca-dir "$t/ca" >"$t/new.yaml" 2>"$t/err" || fail "--print --new-ca failed: $(cat "$t/err")"
/usr/bin/python3 - "$t" <<'PY' || rc=1
import base64, sys
import yaml

t = sys.argv[1]
want = open(t + "/ca/ca.crt").read() + open(t + "/old-ca.crt").read()
doc = next(d for d in yaml.safe_load_all(open(t + "/new.yaml")) if d)
for e in doc["webhooks"]:
    if base64.b64decode(e["clientConfig"]["caBundle"]).decode() != want:
        print("FAIL: webhook-cert: --new-ca: %s's caBundle is not the new CA and the old" % e["name"])
        sys.exit(1)
PY
[ "$rc" = 0 ] && echo "# webhook-cert: --print and --print-secret as they should be"
exit "$rc"
