#!/bin/bash
# The TLS the webhook offers, enumerated with openssl s_client one suite at
# a time, as a scanner does: with an RSA certificate and with an ECDSA one,
# TLS 1.2 takes exactly the three ECDHE suites with AES-GCM or
# ChaCha20-Poly1305 for the key's type; every suite of static RSA key
# exchange, finite-field DHE, CBC or SHA-1 is refused, whatever openssl can
# offer (security level 0). TLS 1.3 takes its three suites that Go (the API
# server) speaks; TLS 1.1 is refused.
. "$RG_SRCDIR/tests/integration/webhook-lib.sh"

make_ca
# An RSA key beside the EC one make_cert makes: static RSA key exchange needs an RSA certificate.
openssl req -newkey rsa:2048 -nodes -keyout "$T/rsa.key" -out "$T/rsa.csr" -subj /CN=webhook-tls-rsa \
	2>"$T/openssl.err" || fail "openssl: cannot make an RSA request"
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$T/rsa.ext"
openssl x509 -req -in "$T/rsa.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -set_serial "0x$(openssl rand -hex 8)" \
	-days 10 -extfile "$T/rsa.ext" -out "$T/rsa.crt" 2>"$T/openssl.err" || fail "openssl: cannot sign the RSA key"
make_cert ec CN=webhook-tls-ec

# handshake ARGS...: the suite a handshake with these s_client arguments agrees on, or nothing.
handshake() {
	openssl s_client -connect "127.0.0.1:$PORT" -servername localhost "$@" </dev/null 2>/dev/null |
		sed -n 's/^New, [^,]*, Cipher is \(.*\)$/\1/p' | grep -v '^(NONE)$' || true
}

# taken_tls12: every TLS 1.2 suite openssl knows, tried alone; those the server takes, one a line.
taken_tls12() {
	local suite
	for suite in $(openssl ciphers 'ALL:COMPLEMENTOFALL:@SECLEVEL=0' | tr ':' ' '); do
		[ "$(handshake -tls1_2 -cipher "$suite:@SECLEVEL=0")" != "$suite" ] || echo "$suite"
	done
}

for key in rsa ec; do
	wh_start --tls-cert "$T/$key.crt" --tls-key "$T/$key.key" --shutdown-delay 0s
	taken=$(taken_tls12 | sort | tr '\n' ' ')
	case $key in
	rsa) want='ECDHE-RSA-AES128-GCM-SHA256 ECDHE-RSA-AES256-GCM-SHA384 ECDHE-RSA-CHACHA20-POLY1305 ' ;;
	ec) want='ECDHE-ECDSA-AES128-GCM-SHA256 ECDHE-ECDSA-AES256-GCM-SHA384 ECDHE-ECDSA-CHACHA20-POLY1305 ' ;;
	esac
	[ "$taken" = "$want" ] || fail "$key certificate: TLS 1.2 takes $taken; want $want"
	# What a scanner flags: static RSA key exchange, CBC with SHA-1; none is taken.
	for suite in AES256-GCM-SHA384 AES128-SHA AES256-SHA256 DHE-RSA-AES128-GCM-SHA256 ECDHE-RSA-AES128-SHA \
		ECDHE-ECDSA-AES256-SHA ECDHE-ECDSA-AES128-CCM; do
		[ -z "$(handshake -tls1_2 -cipher "$suite:@SECLEVEL=0")" ] || fail "$key certificate: TLS 1.2 takes $suite"
	done
	for suite in TLS_AES_128_GCM_SHA256 TLS_AES_256_GCM_SHA384 TLS_CHACHA20_POLY1305_SHA256; do
		[ "$(handshake -tls1_3 -ciphersuites "$suite")" = "$suite" ] || fail "$key certificate: TLS 1.3 refuses $suite"
	done
	[ -z "$(handshake -tls1_1 -cipher 'ALL:@SECLEVEL=0')" ] || fail "$key certificate: TLS 1.1 is taken"
	still_up
	say "$key certificate: TLS 1.2 takes $taken; TLS 1.3 its three suites; TLS 1.1 none"
	kill "$WH_PID"
	wait "$WH_PID" || fail "the webhook exited $? on SIGTERM"
done
echo "PASS: $TEST_NAME"
