/*
 * The webhook's TLS: the suites it offers (WCERT_PRIORITIES), and its
 * serving certificate and key: read from their files, checked (PEM, the key
 * is the certificate's, valid now), given to GnuTLS at each handshake, and
 * read again when the files change, without a restart. A new pair that
 * fails a check is refused with one log line and the old one keeps
 * serving; one refused as not valid yet is tried again at its notBefore
 * (a timer, no polling), as the files have not changed by then.
 *
 *	if (wcert_load(cert_path, key_path, err, sizeof(err)) < 0)
 *		... one line, exit 1
 *	MHD_start_daemon(..., MHD_OPTION_HTTPS_CERT_CALLBACK, wcert_retrieve, ...);
 *	wcert_watch(loop);              // inotify on the files' directories, and a timer
 *	conn->pair = wcert_hold();      // when a connection opens
 *	wcert_release(conn->pair);      // when it closes
 *	...
 *	wcert_stop();                   // after MHD_stop_daemon: no handshake runs any more
 *
 * A Secret volume is updated by the kubelet as a new "..TIMESTAMP"
 * directory and a "..data" symlink renamed over the old one, tls.crt being
 * a symlink to ..data/tls.crt: the rename is an event in the watched
 * directory, and the files the paths resolve to are new (device, inode,
 * mtime, size), which is what decides that there is something to load.
 *
 * One pair serves at a time, and the module keeps it in a static: GnuTLS's
 * callback has no closure. A pair replaced stays allocated until no
 * connection that may have taken it in its handshake is open.
 */
#ifndef RG_WEBHOOK_CERT_H
#define RG_WEBHOOK_CERT_H

#include <ev.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <stddef.h>
#include <stdint.h>

/*
 * TLS 1.3 and 1.2. In 1.2 only ephemeral ECDH key exchange (forward
 * secrecy; no static RSA, no finite-field DH) with AEAD suites (AES-GCM,
 * ChaCha20-Poly1305): no CBC, no SHA-1 MACs, what scanners flag. 1.3 keeps
 * its suites but AES-128-CCM, which GnuTLS cannot keep for 1.3 without
 * offering CCM in 1.2, and which Go (the API server's client) does not
 * implement.
 */
#define WCERT_PRIORITIES                                                                                              \
	"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:-CIPHER-ALL:+AES-256-GCM:"        \
	"+CHACHA20-POLY1305:+AES-128-GCM:-MAC-ALL:+AEAD"

struct wcert_pair;

/* The first pair: 0, or -errno with one line in err ("cannot use the certificate ...: why"). */
int wcert_load(const char *cert_path, const char *key_path, char *err, size_t errlen);
/* Watches for changes on loop: inotify, and a look every 60 s in case an event was missed. */
void wcert_watch(struct ev_loop *loop);
void wcert_stop(void);

/* gnutls_certificate_retrieve_function2, for MHD_OPTION_HTTPS_CERT_CALLBACK: the current pair. */
int wcert_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
		   const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
		   unsigned int *pcert_length, gnutls_privkey_t *privkey);

/* A connection opened: the pairs it may use stay until it is released. */
struct wcert_pair *wcert_hold(void);
void wcert_release(struct wcert_pair *p);

/* For the metrics: the serving certificate's notAfter (Unix seconds), and the reloads so far. */
int64_t wcert_not_after(void);
void wcert_reloads(unsigned long *ok, unsigned long *failed);

#endif
