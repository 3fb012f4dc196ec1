#!/bin/bash
# The serving certificate changes without a restart, as the kubelet updates
# a Secret volume: a new ..TIMESTAMP directory, then a ..data symlink
# renamed over the old one (tls.crt -> ..data/tls.crt). A good pair is
# served from the next handshake on and counted; a bad one (a key of
# another certificate, an expired certificate) is refused with a log line
# and counted, and the old pair keeps serving; a good pair after a bad one
# is taken again. A pair not valid yet (its notBefore 10 s ahead, as a clock
# behind the issuer's sees a new one) is refused and counted once, and
# served from its notBefore on, though its files do not change again.
. "$RG_SRCDIR/tests/integration/webhook-lib.sh"

make_ca
make_cert one CN=one 10
make_cert two CN=two 20
make_cert three CN=three 30
make_cert other CN=other
make_cert old CN=expired -1
make_cert four CN=four 5

vol=$T/secret
stamp=0
# publish CERT KEY: the kubelet's update of the volume with these two files.
publish() {
	local dir
	stamp=$((stamp + 1))
	dir=..2026_01_01_00_00_0$stamp.$stamp
	mkdir "$vol/$dir"
	cp "$1" "$vol/$dir/tls.crt"
	cp "$2" "$vol/$dir/tls.key"
	ln -s "$dir" "$vol/..data_tmp"
	mv -T "$vol/..data_tmp" "$vol/..data"
	# The old directory goes after the swap.
	[ -z "${last_dir:-}" ] || rm -rf "${vol:?}/$last_dir"
	last_dir=$dir
}
mkdir -p "$vol"
publish "$T/one.crt" "$T/one.key"
ln -s ..data/tls.crt "$vol/tls.crt"
ln -s ..data/tls.key "$vol/tls.key"

wh_start --tls-cert "$vol/tls.crt" --tls-key "$vol/tls.key" --shutdown-delay 0s
[ "$(served_serial)" = "$(cert_serial "$T/one.crt")" ] || fail "the first certificate is not the one served"
expiry_of() { date -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%s; }
[ "$(metric rearguard_webhook_certificate_expiry_seconds)" = "$(expiry_of "$T/one.crt")" ] || fail "expiry is not one's"

# serves CERT: the handshake gets CERT (within 30 s).
serves() { [ "$(served_serial)" = "$(cert_serial "$1")" ]; }
# counted RESULT N: rearguard_webhook_certificate_reloads_total{result=RESULT} is N.
counted() { [ "$(metric "rearguard_webhook_certificate_reloads_total{result=\"$1\"}")" = "$2" ]; }

publish "$T/two.crt" "$T/two.key"
wait_for 30 serves "$T/two.crt" || fail "after the ..data swap the new certificate is not served (serial $(served_serial))"
counted ok 1 || fail "the reload is not counted ok once"
counted error 0 || fail "a good reload counted an error"
[ "$(metric rearguard_webhook_certificate_expiry_seconds)" = "$(expiry_of "$T/two.crt")" ] || fail "expiry is not two's"
grep -q 'certificate reloaded subject="CN=two"' "$T/webhook.log" || fail "no log line for the reload"
[ "$(wh_curl /healthz)" = ok ] || fail "/healthz after the reload"
say "..data swap: the new certificate served, counted, its expiry shown"

# A key of another certificate: refused, counted, the old pair serves on.
publish "$T/three.crt" "$T/other.key"
wait_for 30 counted error 1 || fail "a key that does not match is not counted as an error"
grep -q 'certificate reload refused.*does not match the certificate' "$T/webhook.log" || fail "no log line saying the key does not match"
serves "$T/two.crt" || fail "after a refused pair, the old certificate is not served (serial $(served_serial))"
[ "$(wh_curl /healthz)" = ok ] || fail "/healthz after a refused pair"
[ "$(metric rearguard_webhook_certificate_expiry_seconds)" = "$(expiry_of "$T/two.crt")" ] || fail "expiry changed for a refused pair"
say "a mismatched key: refused, counted, the old pair serves"

# An expired certificate: refused too.
publish "$T/old.crt" "$T/old.key"
wait_for 30 counted error 2 || fail "an expired certificate is not counted as an error"
grep -q 'certificate reload refused.*expired on' "$T/webhook.log" || fail "no log line saying the certificate expired"
serves "$T/two.crt" || fail "after an expired pair, the old certificate is not served"
counted ok 1 || fail "a refused pair counted ok"
say "an expired certificate: refused, counted, the old pair serves"

# A good pair again: served.
publish "$T/four.crt" "$T/four.key"
wait_for 30 serves "$T/four.crt" || fail "a good pair after bad ones is not served"
counted ok 2 || fail "the second good reload is not counted"
counted error 2 || fail "the good pair counted an error"

# Not valid yet: refused and counted once, then served from its notBefore on.
make_cert_not_before soon CN=soon 10
publish "$T/soon.crt" "$T/soon.key"
wait_for 30 counted error 3 || fail "a pair not valid yet is not counted as an error"
grep -q 'certificate reload refused.*tried again once valid.*is not valid before' "$T/webhook.log" ||
	fail "no log line saying the pair is not valid yet and will be tried again"
serves "$T/four.crt" || fail "before its notBefore, the new pair is served"
wait_for 30 serves "$T/soon.crt" || fail "after its notBefore, the pair is not served (serial $(served_serial))"
counted ok 3 || fail "the pair taken at its notBefore is not counted ok"
counted error 3 || fail "the pair not valid yet was counted as an error more than once"
say "a pair not valid yet: refused, counted once, served from its notBefore"

# Plain files rewritten in place (no Secret volume): the change is seen too.
cp "$T/one.crt" "$T/plain.crt"
cp "$T/one.key" "$T/plain.key"
kill "$WH_PID"
wait "$WH_PID" || fail "the webhook exited $? on SIGTERM"
wh_start --tls-cert "$T/plain.crt" --tls-key "$T/plain.key" --shutdown-delay 0s
serves "$T/one.crt" || fail "plain files: the first certificate is not served"
cat "$T/two.key" >"$T/plain.key"
cat "$T/two.crt" >"$T/plain.crt"
wait_for 30 serves "$T/two.crt" || fail "plain files rewritten in place: the new certificate is not served"
say "a good pair after bad ones, and plain files rewritten in place: served"
echo "PASS: $TEST_NAME"
