/*
 * What the rooms of rearguard webhook share, and nothing else includes:
 *
 *	webhook.c         the lifecycle: start, the loop, SIGTERM's grace and
 *	                  drain, the end; the metrics and their text
 *	webhook-conns.c   a port: its listening socket, the connections it
 *	                  takes, waits or refuses, their deadlines, and the
 *	                  libmicrohttpd daemon that serves them on the loop
 *	webhook-routes.c  the HTTP routes: one table, a function for each
 *	                  path, the bodies and the answers
 *	webhook-cert.c    TLS: the certificate and key, the suites offered
 *
 * The webhook serves two ports: the webhook's (HTTPS, every route) and the
 * probes' (plain HTTP, /healthz, /readyz and /metrics), each with limits
 * of its own, so that the kubelet reaches the probes whatever the clients
 * of the other do.
 */
#ifndef RG_WEBHOOK_PRIVATE_H
#define RG_WEBHOOK_PRIVATE_H

#include "evlog.h"
#include "json.h"
#include "options.h"
#include "review.h"
#include "util.h"

#include <ev.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

enum wport_id { WPORT_WEBHOOK, WPORT_PROBES, WPORTS };

/* Why the server closed a connection before the client did (the metrics' reason). */
enum wclose {
	WCLOSE_HEADERS, /* no whole request headers within headers_s of the connection's start, or of its last answer */
	WCLOSE_REQUEST, /* the request not read and answered within request_s of its headers */
	WCLOSE_MEMORY,	/* a body of untold length that the memory held for bodies and answers could not take */
	WCLOSE_BODY,	/* a body of untold length past WEBHOOK_BODY_MAX */
	WCLOSES
};

/* Why a connection was refused at its start. */
enum wrefuse {
	WREFUSE_GLOBAL, /* the port serves its limit and has no room to wait */
	WREFUSE_CLIENT, /* its address has its most connections open, served and waiting */
	WREFUSES
};

/* What a port is for, and its limits. */
struct webhook;

struct wport_config {
	const char *name; /* the metrics' label: "webhook", "probes" */
	bool tls;
	unsigned limit;		     /* connections served at once (in libmicrohttpd), all addresses together */
	unsigned per_client;	     /* ...from one address; more of it wait for one of them to end */
	unsigned waiting;	     /* connections waiting, all addresses together */
	unsigned open_per_client;    /* connections open from one address, served and waiting */
	double headers_s, request_s; /* the deadlines */
	/* Called whenever the port may have gone quiet (a connection closed, a turn of libmicrohttpd): the drain's check. */
	void (*on_quiet)(struct webhook *w);
};

struct wclients;
struct wconn;

struct wport {
	struct webhook *w;
	const struct wport_config *cfg;
	int fd; /* listening; -1 once closed */
	ev_io accept;
	struct MHD_Daemon *daemon;
	ev_io mhd_io;	    /* its epoll descriptor */
	ev_timer mhd_timer; /* its timeout */
	struct wclients *clients;
	struct wconn *adding; /* given to MHD_add_connection, taken by its notification */
	unsigned active, waiting;
	unsigned long refused[WREFUSES], closed[WCLOSES];
	struct fd_reserve reserve; /* for a connection refused when descriptors run out */
	char shown[64];		   /* its address, for the log */
};

#define NBUCKETS 11
/* The statuses the server answers: each always a series of /metrics. */
#define NSTATUSES 9

struct wmetrics {
	unsigned long reviews[REVIEW_OUTCOMES];
	unsigned long buckets[NBUCKETS + 1]; /* per bucket, not cumulative; the last is over 1 s */
	unsigned long count;
	double sum_s;
	unsigned long statuses[NSTATUSES];
};

struct webhook {
	const struct webhook_options *opts;
	struct ev_loop *loop;
	struct wport ports[WPORTS];
	ev_signal term, intr;
	ev_timer grace;	   /* SIGTERM's: new connections still served, /readyz 503 */
	ev_timer deadline; /* of the drain */
	struct evlog log;
	bool stopping;	    /* SIGTERM came: /readyz says 503, answers say Connection: close */
	bool draining;	    /* the grace is over: nothing new accepted */
	unsigned in_flight; /* requests whose headers came and whose end did not */
	size_t held;	    /* bodies and answers held, all requests together (WEBHOOK_HELD_MAX) */
	struct wmetrics m;
};

/* ---- webhook.c ---- */

/* A request answered with status (for /metrics). */
void webhook_count_status(struct webhook *w, unsigned status);
/* A review answered: its outcome and time. */
void webhook_observe(struct webhook *w, enum review_outcome outcome, int64_t us);
/* /metrics' text into j. */
void webhook_write_metrics(struct webhook *w, struct jbuf *j);
/* The drain may be over: a request ended, a connection stopped waiting. */
void webhook_drained(struct webhook *w);

/* ---- webhook-conns.c ---- */

/*
 * Opens the port's listening socket on addr (any: ":PORT", IPv6 and IPv4
 * both) and its daemon: 0, or -1 with one line in err.
 */
int wport_open(struct wport *p, struct webhook *w, const struct wport_config *cfg, const char *listen,
	       const struct sockaddr_storage *addr, socklen_t addrlen, bool any, char *err, size_t errlen);
/* Its watchers on w's loop. */
void wport_watch(struct wport *p);
/* Nothing new from now on: the listening socket closed (new connections refused by the kernel). */
void wport_close_listener(struct wport *p);
/* The watchers off, the daemon stopped (its connections closed), the socket closed. */
void wport_stop(struct wport *p);
/* What libmicrohttpd wants now: run it and arm its timer (after a change it does not see, a response resumed). */
void wport_run(struct wport *p);
/* The request on conn has its headers: its deadline is the request's now. */
void wport_request_began(struct MHD_Connection *conn);
/* It ended, answered or not: the next request's headers are waited for. */
void wport_request_ended(struct MHD_Connection *conn);
/* The connection is to be closed for why (a body too large for the memory left): counted. */
void wport_count_close(struct MHD_Connection *conn, enum wclose why);
/* The connections waiting to be served, on every port. */
unsigned wport_waiting(const struct webhook *w);

/* ---- webhook-routes.c ---- */

/* libmicrohttpd's access handler and its request-completed notification: cls is the port. */
enum MHD_Result wroutes_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				const char *version, const char *data, size_t *size, void **req_cls);
void wroutes_completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe);

#endif
