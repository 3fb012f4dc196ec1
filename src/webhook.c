/*
 * rearguard webhook: the lifecycle of the mutating admission webhook's
 * server, and its metrics.
 *
 * Two ports (webhook-conns.c), each a libmicrohttpd daemon on the libev
 * loop: the webhook's (HTTPS, WEBHOOK_LISTEN) and the probes' (HTTP,
 * WEBHOOK_PROBE_LISTEN). The routes are webhook-routes.c's, the
 * certificate webhook-cert.c's, which reloads it as it changes.
 *
 * SIGTERM or SIGINT stops it in two steps:
 * - the grace (--shutdown-delay): /readyz answers 503 and everything else
 *   is served as before, new connections included, each answer saying
 *   "Connection: close". The pod's removal from the Service takes a while
 *   to reach the API server (kubernetes/kubernetes#127335), which sends
 *   reviews to the pod until then: refusing them would refuse pods, or
 *   create them without the agent.
 * - the drain: the listening socket is closed, the requests in flight (and
 *   the connections waiting for room) are answered with "Connection:
 *   close", and once none is left the daemons stop, which closes the idle
 *   keep-alive connections; left open until the process is killed, those
 *   would hang the API server's next request on them. WEBHOOK_DRAIN_S at
 *   most.
 * A second signal during the grace ends it.
 */
#include "config.h"

#include "webhook.h"

#include "webhook-private.h"

#include "json.h"
#include "log.h"
#include "options.h"
#include "parse.h"
#include "webhook-cert.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static const struct wport_config port_configs[WPORTS] = {
	[WPORT_WEBHOOK] = {
		.name = "webhook",
		.tls = true,
		.limit = WEBHOOK_CONNECTIONS,
		.per_client = WEBHOOK_PER_CLIENT,
		.waiting = WEBHOOK_WAITING,
		.open_per_client = WEBHOOK_OPEN_PER_CLIENT,
		.headers_s = WEBHOOK_HEADERS_S,
		.request_s = WEBHOOK_REQUEST_S,
		.on_quiet = webhook_drained,
	},
	[WPORT_PROBES] = {
		.name = "probes",
		.tls = false,
		.limit = WEBHOOK_PROBE_CONNECTIONS,
		.per_client = WEBHOOK_PROBE_PER_CLIENT,
		.waiting = 0,
		.open_per_client = WEBHOOK_PROBE_PER_CLIENT,
		.headers_s = WEBHOOK_PROBE_S,
		.request_s = WEBHOOK_PROBE_S,
		.on_quiet = webhook_drained,
	},
};

/* ---- metrics ------------------------------------------------------------- */

static const double bucket_le[NBUCKETS] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1 };
static const unsigned statuses[NSTATUSES] = { 200, 400, 404, 405, 413, 415, 500, 503, 0 /* any other */ };

/* An answer's status in /metrics: one of those listed, or other. */
void webhook_count_status(struct webhook *w, unsigned status)
{
	size_t i;

	for (i = 0; i + 1 < NSTATUSES && statuses[i] != status; i++)
		;
	w->m.statuses[i]++;
}

/* A review answered: its outcome and its time in the histogram. */
void webhook_observe(struct webhook *w, enum review_outcome outcome, int64_t us)
{
	double s = (double)us / 1e6;
	size_t i = 0;

	while (i < NBUCKETS && s > bucket_le[i])
		i++;
	w->m.buckets[i]++;
	w->m.reviews[outcome]++;
	w->m.count++;
	w->m.sum_s += s;
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

/* A counter by port and by one of words: count(port, k) is the k-th word's. */
static void put_per_port(struct webhook *w, struct jbuf *j, const char *name, const char *help, const char *label,
			 const char *const *words, size_t nwords, unsigned long (*count)(const struct wport *, size_t))
{
	size_t i, k;

	put(j, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	for (i = 0; i < WPORTS; i++)
		for (k = 0; k < nwords; k++)
			put(j, "%s{port=\"%s\",%s=\"%s\"} %lu\n", name, port_configs[i].name, label, words[k],
			    count(&w->ports[i], k));
}

/* put_per_port's readers of the two counters. */
static unsigned long refused_count(const struct wport *p, size_t k)
{
	return p->refused[k];
}

static unsigned long closed_count(const struct wport *p, size_t k)
{
	return p->closed[k];
}

/* What the ports refused and closed, each port and reason a series, and what they hold. */
static void write_port_metrics(struct webhook *w, struct jbuf *j)
{
	static const char *const refused[WREFUSES] = { [WREFUSE_GLOBAL] = "global", [WREFUSE_CLIENT] = "client" };
	static const char *const closed[WCLOSES] = { [WCLOSE_HEADERS] = "headers_deadline",
						     [WCLOSE_REQUEST] = "request_deadline",
						     [WCLOSE_MEMORY] = "memory",
						     [WCLOSE_BODY] = "body_too_large" };
	size_t i;

	put_per_port(w, j, "rearguard_webhook_connections_refused_total",
		     "Connections closed as they came, by port and limit.", "limit", refused, WREFUSES, refused_count);
	put_per_port(w, j, "rearguard_webhook_connections_closed_total",
		     "Connections the server closed before the client, by port and reason.", "reason", closed, WCLOSES,
		     closed_count);
	put(j, "# HELP rearguard_webhook_connections Connections open, by port and state.\n"
	       "# TYPE rearguard_webhook_connections gauge\n");
	for (i = 0; i < WPORTS; i++)
		put(j,
		    "rearguard_webhook_connections{port=\"%s\",state=\"served\"} %u\n"
		    "rearguard_webhook_connections{port=\"%s\",state=\"waiting\"} %u\n",
		    port_configs[i].name, w->ports[i].active, port_configs[i].name, w->ports[i].waiting);
}

/* The Prometheus text format: every series always present, zeros included, so that rates start at once. */
void webhook_write_metrics(struct webhook *w, struct jbuf *j)
{
	unsigned long ok, failed, cumulative = 0;
	size_t i;

	put(j, "# HELP rearguard_webhook_reviews_total AdmissionReviews answered, by outcome.\n"
	       "# TYPE rearguard_webhook_reviews_total counter\n");
	for (i = 0; i < REVIEW_OUTCOMES; i++)
		put(j, "rearguard_webhook_reviews_total{outcome=\"%s\"} %lu\n",
		    review_outcome_word((enum review_outcome)i), w->m.reviews[i]);
	put(j, "# HELP rearguard_webhook_review_duration_seconds From a review's headers to its answer.\n"
	       "# TYPE rearguard_webhook_review_duration_seconds histogram\n");
	for (i = 0; i < NBUCKETS; i++) {
		cumulative += w->m.buckets[i];
		put(j, "rearguard_webhook_review_duration_seconds_bucket{le=\"%g\"} %lu\n", bucket_le[i], cumulative);
	}
	put(j, "rearguard_webhook_review_duration_seconds_bucket{le=\"+Inf\"} %lu\n", w->m.count);
	put(j, "rearguard_webhook_review_duration_seconds_sum %.6f\n", w->m.sum_s);
	put(j, "rearguard_webhook_review_duration_seconds_count %lu\n", w->m.count);
	put(j, "# HELP rearguard_webhook_responses_total Requests answered, by status (other: any not listed).\n"
	       "# TYPE rearguard_webhook_responses_total counter\n");
	for (i = 0; i < NSTATUSES; i++) {
		char code[16] = "other";

		if (statuses[i])
			snprintf(code, sizeof(code), "%u", statuses[i]);
		put(j, "rearguard_webhook_responses_total{code=\"%s\"} %lu\n", code, w->m.statuses[i]);
	}
	write_port_metrics(w, j);
	put(j, "# HELP rearguard_webhook_held_bytes Bodies and answers held, all requests together.\n"
	       "# TYPE rearguard_webhook_held_bytes gauge\n"
	       "rearguard_webhook_held_bytes %zu\n",
	    w->held);
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

/* ---- stopping ------------------------------------------------------------ */

void webhook_drained(struct webhook *w)
{
	if (!w->draining || w->in_flight > 0 || wport_waiting(w) > 0)
		return;
	log_info("drained: every request in flight was answered");
	ev_break(w->loop, EVBREAK_ALL);
}

/* The grace is over: nothing new is taken, what is in flight is answered. */
static void drain(struct webhook *w)
{
	if (w->draining)
		return;
	w->draining = true;
	ev_timer_stop(w->loop, &w->grace);
	wport_close_listener(&w->ports[WPORT_WEBHOOK]);
	log_msg(LOG_INFO, FIELDS(LF_INT("in_flight", w->in_flight), LF_INT("waiting", wport_waiting(w))),
		"draining: new connections are refused, the requests in flight answered");
	ev_timer_start(w->loop, &w->deadline);
	webhook_drained(w);
}

/* --shutdown-delay has passed: the drain. */
static void on_grace(struct ev_loop *loop, ev_timer *t, int revents)
{
	drain(t->data);
}

/* The drain took WEBHOOK_DRAIN_S: what is still in flight is closed with the daemons. */
static void on_deadline(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct webhook *w = t->data;

	log_msg(LOG_WARN, FIELDS(LF_INT("in_flight", w->in_flight)),
		"the drain took longer than %d s: the requests still in flight are closed", WEBHOOK_DRAIN_S);
	ev_break(loop, EVBREAK_ALL);
}

/* SIGTERM or SIGINT: the grace, or the drain at once when there is none or it is the second signal. */
static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
	struct webhook *w = s->data;
	const char *name = signal_name(s->signum);

	if (w->stopping) {
		log_msg(LOG_INFO, FIELDS(LF_STR("signal", name)),
			w->draining ? "already draining" : "the grace is cut short");
		drain(w);
		return;
	}
	w->stopping = true;
	if (w->opts->shutdown_delay_ms <= 0) {
		drain(w);
		return;
	}
	log_msg(LOG_INFO, FIELDS(LF_STR("signal", name), LF_DURATION("grace", w->opts->shutdown_delay_ms * 1000)),
		"shutting down: /readyz says 503, new connections are still answered until the grace is over");
	ev_timer_set(&w->grace, (double)w->opts->shutdown_delay_ms / 1000.0, 0.);
	ev_timer_start(loop, &w->grace);
}

/* ---- start and end --------------------------------------------------------- */

/*
 * Memory given back when it is freed: a review's large buffers are
 * mapped on their own and unmapped when freed, rather than glibc raising
 * its threshold after the first and keeping the next ones in the heap,
 * which a process with a memory limit cannot afford.
 */
static void tune_memory(void)
{
#ifdef M_MMAP_THRESHOLD
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
	mallopt(M_TRIM_THRESHOLD, 256 << 10);
#endif
}

/* Descriptors for every connection the ports may hold: the soft limit raised to the hard one. */
static void raise_nofile(void)
{
	unsigned need = WEBHOOK_CONNECTIONS + WEBHOOK_WAITING + WEBHOOK_PROBE_CONNECTIONS + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur < need)
		log_msg(LOG_WARN, FIELDS(LF_INT("nofile", rl.rlim_cur), LF_INT("need", need)),
			"fewer descriptors than the connection limits need: connections past them are refused");
}

/* Everything that can fail before the loop runs: one line each, exit status 1. */
static int start(struct webhook *w, char *err, size_t errlen)
{
	const struct webhook_options *o = w->opts;

	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES ||
	    MHD_is_feature_supported(MHD_FEATURE_EPOLL) != MHD_YES) {
		snprintf(err, errlen, "this libmicrohttpd has no TLS or no epoll");
		return -1;
	}
	/* The addresses first: a start that fails says one line, not the certificate's line before it. */
	if (wport_open(&w->ports[WPORT_WEBHOOK], w, &port_configs[WPORT_WEBHOOK], o->listen.text, &o->listen.addr,
		       o->listen.len, o->listen.any, err, errlen) < 0)
		return -1;
	if (wport_open(&w->ports[WPORT_PROBES], w, &port_configs[WPORT_PROBES], o->probe_listen.text,
		       &o->probe_listen.addr, o->probe_listen.len, o->probe_listen.any, err, errlen) < 0) {
		wport_stop(&w->ports[WPORT_WEBHOOK]);
		return -1;
	}
	if (wcert_load(o->tls_cert, o->tls_key, err, errlen) < 0) {
		wport_stop(&w->ports[WPORT_PROBES]);
		wport_stop(&w->ports[WPORT_WEBHOOK]);
		return -1;
	}
	return 0;
}

/* Everything on the loop: the ports, the signals, the certificate's watch. */
static void watch(struct webhook *w)
{
	size_t i;

	for (i = 0; i < WPORTS; i++)
		wport_watch(&w->ports[i]);
	ev_init(&w->grace, on_grace);
	w->grace.data = w;
	ev_timer_init(&w->deadline, on_deadline, WEBHOOK_DRAIN_S, 0.);
	w->deadline.data = w;
	ev_signal_init(&w->term, on_signal, SIGTERM);
	ev_signal_init(&w->intr, on_signal, SIGINT);
	w->term.data = w->intr.data = w;
	ev_signal_start(w->loop, &w->term);
	ev_signal_start(w->loop, &w->intr);
	wcert_watch(w->loop);
}

/* The loop has returned: the lifecycle's watchers off (the ports stop on their own). */
static void unwatch(struct webhook *w)
{
	ev_timer_stop(w->loop, &w->grace);
	ev_timer_stop(w->loop, &w->deadline);
	ev_signal_stop(w->loop, &w->term);
	ev_signal_stop(w->loop, &w->intr);
}

int webhook_serve(const struct webhook_options *o)
{
	struct webhook w;
	char err[OPTIONS_ERR_MAX];
	size_t i;

	memset(&w, 0, sizeof(w));
	w.opts = o;
	/* Writes to a client gone go on as errors, not as a signal that ends the process. */
	signal(SIGPIPE, SIG_IGN);
	tune_memory();
	raise_nofile();
	w.loop = ev_default_loop(EVFLAG_AUTO);
	if (!w.loop || start(&w, err, sizeof(err)) < 0) {
		fprintf(stderr, "rearguard: webhook: %s\n", w.loop ? err : "cannot start the event loop");
		wcert_stop();
		return 1;
	}
	evlog_complain(log_nonblocking());
	/* The signals handled first: a SIGTERM sent on the "listening" line finds its handler. */
	watch(&w);
	log_msg(LOG_INFO,
		FIELDS(LF_STR("address", w.ports[WPORT_WEBHOOK].shown), LF_STR("probes", w.ports[WPORT_PROBES].shown),
		       LF_STR("tls", "1.2, 1.3")),
		"listening");
	evlog_start(&w.log, w.loop);
	ev_run(w.loop, 0);
	unwatch(&w);
	/* Closes the idle connections, and those the drain's deadline gave up on. */
	for (i = 0; i < WPORTS; i++)
		wport_stop(&w.ports[i]);
	wcert_stop();
	log_msg(LOG_INFO, FIELDS(LF_INT("reviews", w.m.count)), "stopped");
	evlog_stop(&w.log);
	log_finish(1000);
	return 0;
}
