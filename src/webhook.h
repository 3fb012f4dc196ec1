/*
 * rearguard webhook: a Kubernetes mutating admission webhook over HTTPS.
 * Each AdmissionReview POSTed to /mutate is answered by review_answer
 * (review.c: what inject decides for the pod, as a JSON Patch); the server
 * around it is libmicrohttpd with GnuTLS on the libev loop, its certificate
 * reloaded as it changes (webhook-cert.c), with /healthz, /readyz and
 * /metrics beside and on a port of their own for the probes, bounds on
 * what any client may hold (webhook-conns.c, webhook-routes.c), and a grace
 * then a drain on SIGTERM (webhook.c; webhook-private.h maps the rooms).
 *
 * Built only where configure found libmicrohttpd and GnuTLS (HAVE_WEBHOOK).
 */
#ifndef RG_WEBHOOK_H
#define RG_WEBHOOK_H

struct webhook_options;

/* The server, from its start to its end, with its options parsed: 0, or 1 when it could not start. */
int webhook_serve(const struct webhook_options *o);

#endif
