/*
 * rearguard webhook: the HTTPS server of the mutating admission webhook.
 *
 * libmicrohttpd runs in its external epoll mode on the libev loop: no
 * thread of its own, one ev_io on its epoll descriptor and one ev_timer
 * for its timeout, and MHD_run after each. A review is answered in the
 * call that completes its body (review_answer does no I/O), so one core
 * serves them all; the certificate is GnuTLS's through webhook-cert.c,
 * which reloads it as it changes.
 *
 * SIGTERM or SIGINT drains: the listening socket is closed
 * (MHD_quiesce_daemon), /readyz turns 503, each answer from then on says
 * "Connection: close", and once no request is in flight the daemon stops,
 * which closes the idle keep-alive connections. Left open until the
 * process is killed, those would hang the API server's next request on
 * them (kubernetes/kubernetes#127335).
 */
#include "config.h"

#include "webhook.h"

#include "evlog.h"
#include "json.h"
#include "log.h"
#include "options.h"
#include "parse.h"
#include "review.h"
#include "util.h"
#include "webhook-cert.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ev.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* TLS 1.2 and 1.3 only: what the API server speaks, and nothing older. */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
/* A connection silent this long is closed: a stalled client holds one slot, not the server. */
#define CONNECTION_TIMEOUT_S 10u
/* Open connections at most: the API servers' pools, and room for stalled clients besides. */
#define CONNECTION_LIMIT 512u
#define LISTEN_BACKLOG 128
/* Bodies held at once, all connections together: 512 connections of 4 MiB each would be 2 GiB. */
#define BUFFERED_MAX ((size_t)64 << 20)

static const double bucket_le[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1 };
#define NBUCKETS (sizeof(bucket_le) / sizeof(bucket_le[0]))

/*
 * ROUTE_MUTATE_SERVICES is the reviews of a namespace labelled
 * rearguard.io/inject=services: its pods are asked for as long-running
 * pods too, which the pod itself cannot say (the configuration's entry for
 * those namespaces calls this path).
 */
enum route { ROUTE_MUTATE, ROUTE_MUTATE_SERVICES, ROUTE_HEALTHZ, ROUTE_READYZ, ROUTE_METRICS };

/* One request, from its headers to its end (MHD's req_cls). */
struct request {
	enum route route;
	unsigned status;          /* refused: the answer's status, text and Allow header */
	const char *text, *allow;
	char *body;
	size_t len, cap;
	int64_t start_us;
};

struct metrics {
	unsigned long reviews[REVIEW_OUTCOMES];
	unsigned long buckets[NBUCKETS + 1]; /* per bucket, not cumulative; the last is over 1 s */
	unsigned long count;
	double sum_s;
};

struct webhook {
	const struct webhook_options *opts;
	struct ev_loop *loop;
	struct MHD_Daemon *daemon;
	ev_io io;        /* MHD's epoll descriptor */
	ev_timer timer;  /* MHD's timeout */
	ev_signal term, intr;
	ev_timer deadline; /* of the drain */
	struct evlog log;
	bool draining;
	unsigned in_flight; /* requests whose headers came and whose end did not */
	size_t buffered;    /* the bodies' buffers, all requests together (BUFFERED_MAX) */
	struct metrics m;
};

/* ---- answers ------------------------------------------------------------- */

/* Queues an answer; a draining server asks the client to close the connection after it. */
static enum MHD_Result respond(struct webhook *w, struct MHD_Connection *conn, unsigned status, const char *type,
			       const char *body, size_t len, const char *allow)
{
	/* MUST_COPY: MHD copies the bytes, so the const is kept in fact, if not in its prototype. */
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	if (w->draining || status == MHD_HTTP_CONTENT_TOO_LARGE)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result respond_text(struct webhook *w, struct MHD_Connection *conn, unsigned status,
				    const char *text, const char *allow)
{
	return respond(w, conn, status, "text/plain; charset=utf-8", text, strlen(text), allow);
}

/* ---- metrics ------------------------------------------------------------- */

static void observe(struct metrics *m, enum review_outcome outcome, int64_t us)
{
	double s = (double)us / 1e6;
	size_t i = 0;

	while (i < NBUCKETS && s > bucket_le[i])
		i++;
	m->buckets[i]++;
	m->reviews[outcome]++;
	m->count++;
	m->sum_s += s;
}

static void put(struct jbuf *j, const char *fmt, ...) RG_PRINTF(2, 3);

static void put(struct jbuf *j, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		jbuf_append(j, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* The Prometheus text format: every series always present, zeros included, so that rates start at once. */
static void write_metrics(struct webhook *w, struct jbuf *j)
{
	unsigned long ok, failed, cumulative = 0;
	size_t i;

	put(j, "# HELP rearguard_webhook_reviews_total AdmissionReviews answered, by outcome.\n"
	       "# TYPE rearguard_webhook_reviews_total counter\n");
	for (i = 0; i < REVIEW_OUTCOMES; i++)
		put(j, "rearguard_webhook_reviews_total{outcome=\"%s\"} %lu\n", review_outcome_word((enum review_outcome)i),
		    w->m.reviews[i]);
	put(j, "# HELP rearguard_webhook_review_duration_seconds From a review's headers to its answer.\n"
	       "# TYPE rearguard_webhook_review_duration_seconds histogram\n");
	for (i = 0; i < NBUCKETS; i++) {
		cumulative += w->m.buckets[i];
		put(j, "rearguard_webhook_review_duration_seconds_bucket{le=\"%g\"} %lu\n", bucket_le[i], cumulative);
	}
	put(j, "rearguard_webhook_review_duration_seconds_bucket{le=\"+Inf\"} %lu\n", w->m.count);
	put(j, "rearguard_webhook_review_duration_seconds_sum %.6f\n", w->m.sum_s);
	put(j, "rearguard_webhook_review_duration_seconds_count %lu\n", w->m.count);
	put(j, "# HELP rearguard_webhook_certificate_expiry_seconds The serving certificate's notAfter, Unix time.\n"
	       "# TYPE rearguard_webhook_certificate_expiry_seconds gauge\n"
	       "rearguard_webhook_certificate_expiry_seconds %lld\n",
	    (long long)wcert_not_after());
	wcert_reloads(&ok, &failed);
	put(j, "# HELP rearguard_webhook_certificate_reloads_total Certificate changes loaded, or refused.\n"
	       "# TYPE rearguard_webhook_certificate_reloads_total counter\n"
	       "rearguard_webhook_certificate_reloads_total{result=\"ok\"} %lu\n"
	       "rearguard_webhook_certificate_reloads_total{result=\"error\"} %lu\n",
	    ok, failed);
	put(j, "# HELP rearguard_webhook_requests_in_flight Requests received and not answered yet.\n"
	       "# TYPE rearguard_webhook_requests_in_flight gauge\n"
	       "rearguard_webhook_requests_in_flight %u\n",
	    w->in_flight);
}

static enum MHD_Result answer_metrics(struct webhook *w, struct MHD_Connection *conn)
{
	enum MHD_Result rc;
	struct jbuf j;

	jbuf_init(&j);
	write_metrics(w, &j);
	if (j.failed)
		rc = respond_text(w, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	else
		rc = respond(w, conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", j.buf, j.len, NULL);
	jbuf_free(&j);
	return rc;
}

/* ---- reviews ------------------------------------------------------------- */

/* Verbose: every review; otherwise the patched ones and the errors. */
static void log_review(const struct review_answer *a, unsigned status, int64_t us)
{
	bool invalid = a->outcome == REVIEW_INVALID, skipped = a->outcome == REVIEW_SKIPPED;
	enum log_level level = a->outcome == REVIEW_PATCHED ? LOG_INFO : invalid ? LOG_WARN : LOG_DEBUG;

	/* what is the pod, or why it is no pod to inject (skipped), or why it is no review (invalid). */
	log_msg(level,
		FIELDS(LF_STR("pod", invalid || skipped ? NULL : a->what), LF_STR("uid", a->uid[0] ? a->uid : NULL),
		       LF_INT("operations", a->npatch), LF_INT("status", status), LF_DURATION("took", us),
		       LF_STR("reason", skipped ? a->what : NULL), LF_STR("error", invalid ? a->what : NULL)),
		"review %s", review_outcome_word(a->outcome));
}

/* A review's answer: through /mutate/services, every pod is asked for as a long-running one may be. */
static enum MHD_Result answer_review(struct webhook *w, struct MHD_Connection *conn, struct request *r)
{
	struct inject_options o = w->opts->inject;
	struct review_answer a;
	enum MHD_Result rc;
	int64_t us;
	int status;

	memset(&a, 0, sizeof(a));
	o.services = r->route == ROUTE_MUTATE_SERVICES;
	status = review_answer(r->body ? r->body : "", r->len, &o, &a);
	if (status < 0) {
		log_msg(LOG_ERROR, FIELDS(LF_STR("error", strerror(-status))), "review not answered");
		return respond_text(w, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	}
	us = mono_us() - r->start_us;
	observe(&w->m, a.outcome, us);
	log_review(&a, (unsigned)status, us);
	rc = respond(w, conn, (unsigned)status, status == MHD_HTTP_OK ? "application/json" : "text/plain; charset=utf-8",
		     a.body ? a.body : "", a.len, NULL);
	review_answer_free(&a);
	return rc;
}

/* application/json, with parameters or not (charset=utf-8), in any case. */
static bool json_type(const char *type)
{
	static const char want[] = "application/json";
	size_t n = sizeof(want) - 1;

	if (!type)
		return false;
	while (*type == ' ' || *type == '\t')
		type++;
	/* strchr finds the terminator too: the type may end there. */
	return strncasecmp(type, want, n) == 0 && strchr("; \t", type[n]) != NULL;
}

static void refuse(struct request *r, unsigned status, const char *text, const char *allow)
{
	r->status = status;
	r->text = text;
	r->allow = allow;
}

/* What a review's headers say: nothing yet, or why it is refused. */
static void check_review(struct MHD_Connection *conn, const char *method, struct request *r)
{
	const char *length;
	unsigned long long n;
	char *end;

	length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (strcmp(method, MHD_HTTP_METHOD_POST) != 0) {
		refuse(r, MHD_HTTP_METHOD_NOT_ALLOWED, "POST an AdmissionReview\n", "POST");
	} else if (!json_type(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE))) {
		refuse(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "the review must be application/json\n", NULL);
	} else if (length) {
		errno = 0;
		n = strtoull(length, &end, 10);
		if (errno == 0 && end != length && n > WEBHOOK_BODY_MAX)
			refuse(r, MHD_HTTP_CONTENT_TOO_LARGE, "the review is larger than 4 MiB\n", NULL);
	}
}

/* A request's headers: its route, and what refuses it already. */
static void classify(struct MHD_Connection *conn, const char *url, const char *method, struct request *r)
{
	static const struct {
		const char *path;
		enum route route;
	} routes[] = {
		{ "/mutate", ROUTE_MUTATE },
		{ "/mutate/services", ROUTE_MUTATE_SERVICES },
		{ "/healthz", ROUTE_HEALTHZ },
		{ "/readyz", ROUTE_READYZ },
		{ "/metrics", ROUTE_METRICS },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(routes) && strcmp(url, routes[i].path) != 0; i++)
		;
	if (i == ARRAY_SIZE(routes)) {
		refuse(r, MHD_HTTP_NOT_FOUND, "not found\n", NULL);
		return;
	}
	r->route = routes[i].route;
	if (r->route == ROUTE_MUTATE || r->route == ROUTE_MUTATE_SERVICES)
		check_review(conn, method, r);
	else if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		refuse(r, MHD_HTTP_METHOD_NOT_ALLOWED, "GET it\n", "GET, HEAD");
}

/* Whether the request says that a body follows. */
static bool has_body(struct MHD_Connection *conn)
{
	const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (length && strcmp(length, "0") != 0) ||
	       MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

/* A piece of the body; more than the limit (a chunked body, its length unknown at first) closes the connection. */
static enum MHD_Result take_body(struct webhook *w, struct request *r, const char *data, size_t size)
{
	char *grown;
	size_t cap;

	if (size > WEBHOOK_BODY_MAX - r->len) {
		log_msg(LOG_WARN, FIELDS(LF_INT("limit", WEBHOOK_BODY_MAX)),
			"a review's body grew past the limit: the connection is closed");
		return MHD_NO;
	}
	if (r->status) {
		r->len += size; /* a refused request's body is counted, not kept */
		return MHD_YES;
	}
	if (r->len + size + 1 > r->cap) {
		cap = r->cap ? r->cap : 16384;
		while (cap < r->len + size + 1)
			cap *= 2;
		if (cap - r->cap > BUFFERED_MAX - w->buffered) {
			log_msg(LOG_WARN, FIELDS(LF_INT("limit", BUFFERED_MAX)),
				"the bodies held at once would pass the limit: the connection is closed");
			return MHD_NO;
		}
		grown = realloc(r->body, cap);
		if (!grown)
			return MHD_NO;
		r->body = grown;
		w->buffered += cap - r->cap;
		r->cap = cap;
	}
	memcpy(r->body + r->len, data, size);
	r->len += size;
	r->body[r->len] = '\0';
	return MHD_YES;
}

/* The request is whole: its answer. */
static enum MHD_Result answer(struct webhook *w, struct MHD_Connection *conn, struct request *r)
{
	if (r->status)
		return respond_text(w, conn, r->status, r->text, r->allow);
	switch (r->route) {
	case ROUTE_MUTATE:
	case ROUTE_MUTATE_SERVICES:
		return answer_review(w, conn, r);
	case ROUTE_HEALTHZ:
		return respond_text(w, conn, MHD_HTTP_OK, "ok\n", NULL);
	case ROUTE_READYZ:
		/* The certificate is loaded before the server starts: only the drain makes it unready. */
		if (w->draining)
			return respond_text(w, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "draining\n", NULL);
		return respond_text(w, conn, MHD_HTTP_OK, "ready\n", NULL);
	case ROUTE_METRICS:
		return answer_metrics(w, conn);
	}
	return MHD_NO;
}

/*
 * MHD's access handler: called once with the headers, once per piece of
 * the body, and once more when the request is whole, which is when it is
 * answered. An answer queued with the headers would close the connection
 * (MHD would not read that request's body, so it cannot read the next
 * request): only a refusal of a body that must not be read (413), or of
 * one that would be read for nothing, is answered that early.
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *data, size_t *size, void **req_cls)
{
	struct webhook *w = cls;
	struct request *r = *req_cls;
	enum MHD_Result rc;

	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		r->start_us = mono_us();
		*req_cls = r;
		w->in_flight++;
		classify(conn, url, method, r);
		if (r->status && has_body(conn))
			return answer(w, conn, r);
		return MHD_YES;
	}
	if (*size > 0) {
		rc = take_body(w, r, data, *size);
		*size = 0;
		return rc;
	}
	return answer(w, conn, r);
}

/* A request ended, answered or not (a client gone, a timeout, the daemon stopping). */
static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe)
{
	struct webhook *w = cls;
	struct request *r = *req_cls;

	if (!r)
		return;
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		log_msg(LOG_DEBUG, FIELDS(LF_INT("code", toe)), "a request ended without its answer sent whole");
	w->buffered -= r->cap;
	free(r->body);
	free(r);
	*req_cls = NULL;
	w->in_flight--;
}

/* A connection holds the certificates its handshake may have used until it closes. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		*socket_context = wcert_hold();
		return;
	}
	wcert_release(*socket_context);
	*socket_context = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* libmicrohttpd's own messages (a client's failed handshake, say) are details: verbose only. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	log_msg(LOG_DEBUG, NULL, "libmicrohttpd: %s", line);
}

/* ---- the loop ------------------------------------------------------------ */

/* MHD's next deadline on the timer; 0 means "soon", and the loop comes back to it at once. */
static void arm_timer(struct webhook *w)
{
	MHD_UNSIGNED_LONG_LONG ms;

	ev_timer_stop(w->loop, &w->timer);
	if (MHD_get_timeout(w->daemon, &ms) != MHD_YES)
		return;
	ev_timer_set(&w->timer, (double)ms / 1000.0, 0.);
	ev_timer_start(w->loop, &w->timer);
}

/* The drain is over once nothing is in flight. */
static void drained(struct webhook *w)
{
	if (!w->draining || w->in_flight > 0)
		return;
	log_info("drained: every request in flight was answered");
	ev_break(w->loop, EVBREAK_ALL);
}

static void run_mhd(struct webhook *w)
{
	MHD_run(w->daemon);
	arm_timer(w);
	drained(w);
}

static void on_io(struct ev_loop *loop, ev_io *io, int revents)
{
	run_mhd(io->data);
}

static void on_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
	run_mhd(t->data);
}

static void on_deadline(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct webhook *w = t->data;

	log_msg(LOG_WARN, FIELDS(LF_INT("in_flight", w->in_flight)),
		"the drain took longer than %d s: the requests still in flight are closed", WEBHOOK_DRAIN_S);
	ev_break(loop, EVBREAK_ALL);
}

static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
	struct webhook *w = s->data;
	MHD_socket fd;

	if (w->draining) {
		log_msg(LOG_INFO, FIELDS(LF_STR("signal", signal_name(s->signum))), "already draining");
		return;
	}
	w->draining = true;
	fd = MHD_quiesce_daemon(w->daemon);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	log_msg(LOG_INFO, FIELDS(LF_STR("signal", signal_name(s->signum)), LF_INT("in_flight", w->in_flight)),
		"draining: new connections are refused, the requests in flight answered");
	ev_timer_start(loop, &w->deadline);
	drained(w);
}

/* ---- start and end --------------------------------------------------------- */

static void describe_addr(const struct sockaddr_storage *ss, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		snprintf(out, len, "[%s]:%u", host, ntohs(a->sin6_port));
	} else {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		snprintf(out, len, "%s:%u", host, ntohs(a->sin_port));
	}
}

/*
 * The listening socket, made here rather than by MHD so that ":PORT" is
 * one socket for IPv6 and IPv4 both (IPv4 alone on a kernel without
 * IPv6), and so that a failure says what could not be done.
 */
static int open_listener(const struct webhook_options *o, char *shown, size_t len, char *err, size_t errlen)
{
	struct sockaddr_storage addr = o->addr;
	socklen_t addrlen = o->addrlen;
	int fd, one = 1, zero = 0;

	fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 && o->any && errno == EAFNOSUPPORT) {
		struct sockaddr_in *four = (struct sockaddr_in *)&addr;
		uint16_t port = ((const struct sockaddr_in6 *)&o->addr)->sin6_port;

		memset(&addr, 0, sizeof(addr));
		four->sin_family = AF_INET;
		four->sin_port = port;
		four->sin_addr.s_addr = htonl(INADDR_ANY);
		addrlen = sizeof(*four);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", o->listen, strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr.ss_family == AF_INET6 && o->any)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&addr, addrlen) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", o->listen, strerror(errno));
		close(fd);
		return -1;
	}
	addrlen = sizeof(addr);
	if (getsockname(fd, (struct sockaddr *)&addr, &addrlen) == 0)
		describe_addr(&addr, shown, len);
	return fd;
}

static struct MHD_Daemon *start_daemon(struct webhook *w, int fd)
{
	/* The logger first: MHD logs the options after it through it. */
	return MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_TLS | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, w,
				MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, w,
				MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				MHD_OPTION_HTTPS_CERT_CALLBACK, wcert_retrieve,
				MHD_OPTION_HTTPS_PRIORITIES, TLS_PRIORITIES,
				MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_TIMEOUT_S,
				MHD_OPTION_CONNECTION_LIMIT, CONNECTION_LIMIT,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, w,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, w,
				MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1,
				MHD_OPTION_END);
}

/* Everything that can fail before the loop runs: one line each, exit status 1. */
static int start(struct webhook *w, char *err, size_t errlen)
{
	const union MHD_DaemonInfo *info;
	char shown[INET6_ADDRSTRLEN + 16] = "?";
	int fd;

	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES ||
	    MHD_is_feature_supported(MHD_FEATURE_EPOLL) != MHD_YES) {
		snprintf(err, errlen, "this libmicrohttpd has no TLS or no epoll");
		return -1;
	}
	/* The address first: a start that fails says one line, not the certificate's line before it. */
	fd = open_listener(w->opts, shown, sizeof(shown), err, errlen);
	if (fd < 0)
		return -1;
	if (wcert_load(w->opts->tls_cert, w->opts->tls_key, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	w->daemon = start_daemon(w, fd);
	info = w->daemon ? MHD_get_daemon_info(w->daemon, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!info) {
		snprintf(err, errlen, "cannot start the HTTPS server on %s (rearguard webhook -v says why)", shown);
		if (w->daemon)
			MHD_stop_daemon(w->daemon);
		w->daemon = NULL;
		close(fd);
		return -1;
	}
	ev_io_init(&w->io, on_io, info->epoll_fd, EV_READ);
	log_msg(LOG_INFO, FIELDS(LF_STR("address", shown), LF_STR("tls", "1.2, 1.3")), "listening");
	return 0;
}

static void watch(struct webhook *w)
{
	w->io.data = w;
	ev_io_start(w->loop, &w->io);
	ev_init(&w->timer, on_timer);
	w->timer.data = w;
	ev_timer_init(&w->deadline, on_deadline, WEBHOOK_DRAIN_S, 0.);
	w->deadline.data = w;
	ev_signal_init(&w->term, on_signal, SIGTERM);
	ev_signal_init(&w->intr, on_signal, SIGINT);
	w->term.data = w->intr.data = w;
	ev_signal_start(w->loop, &w->term);
	ev_signal_start(w->loop, &w->intr);
	wcert_watch(w->loop);
	arm_timer(w);
}

static void unwatch(struct webhook *w)
{
	ev_io_stop(w->loop, &w->io);
	ev_timer_stop(w->loop, &w->timer);
	ev_timer_stop(w->loop, &w->deadline);
	ev_signal_stop(w->loop, &w->term);
	ev_signal_stop(w->loop, &w->intr);
}

static int serve(const struct webhook_options *o)
{
	struct webhook w;
	char err[OPTIONS_ERR_MAX];

	memset(&w, 0, sizeof(w));
	w.opts = o;
	/* Writes to a client gone go on as errors, not as a signal that ends the process. */
	signal(SIGPIPE, SIG_IGN);
	w.loop = ev_default_loop(EVFLAG_AUTO);
	if (!w.loop || start(&w, err, sizeof(err)) < 0) {
		fprintf(stderr, "rearguard: webhook: %s\n", w.loop ? err : "cannot start the event loop");
		wcert_stop();
		return 1;
	}
	evlog_complain(log_nonblocking());
	watch(&w);
	evlog_start(&w.log, w.loop);
	ev_run(w.loop, 0);
	unwatch(&w);
	/* Closes the idle connections, and those the drain's deadline gave up on. */
	MHD_stop_daemon(w.daemon);
	wcert_stop();
	log_msg(LOG_INFO, FIELDS(LF_INT("reviews", w.m.count)), "stopped");
	evlog_stop(&w.log);
	log_finish(1000);
	return 0;
}

int webhook_main(int argc, char **argv)
{
	struct webhook_options o;
	char err[OPTIONS_ERR_MAX];

	switch (options_parse_webhook(&o, argc, argv, err, sizeof(err))) {
	case OPTIONS_EXIT_OK:
		return 0;
	case OPTIONS_ERROR:
		fprintf(stderr, "rearguard: %s\n", err);
		return 2;
	case OPTIONS_OK:
		break;
	}
	log_setup(o.log_level, o.log_format, 2);
	return serve(&o);
}
