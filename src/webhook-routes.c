/*
 * The HTTP routes of rearguard webhook: one table of paths, the ports that
 * serve each and its methods, and the function that answers it. A new
 * endpoint is a row and a function here.
 *
 * libmicrohttpd calls the access handler once with a request's headers,
 * once per piece of its body, and once more when it is whole, which is
 * when it is answered: a review in the call that completes its body
 * (review_answer does no I/O), so one thread serves them all.
 *
 * What a request holds is counted in w->held, all requests together, and
 * bounded by WEBHOOK_HELD_MAX: its body from its headers (a told length is
 * taken whole at once, or refused with 503) until its answer is made, and
 * its answer until libmicrohttpd has sent it and lets it go (a slow reader
 * holds it that long).
 */
#include "config.h"

#include "webhook-private.h"

#include "json.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct request;

struct route {
	const char *path;
	unsigned ports;	     /* a bit for each port that serves it (enum wport_id) */
	const char *methods; /* its methods, as the Allow header says them */
	bool body;	     /* it reads a JSON body; the others' bodies are let go */
	enum MHD_Result (*answer)(struct wport *p, struct MHD_Connection *conn, struct request *r);
};

/* One request, from its headers to its end (libmicrohttpd's req_cls). */
struct request {
	const struct route *route;
	unsigned status; /* refused: the answer's status, text and Allow header */
	const char *text, *allow;
	char *body;
	size_t len, cap; /* the body's bytes, and what it holds of w->held */
	bool told;	 /* its length was told: cap was taken whole with the headers */
	int64_t start_us;
};

/* An answer's bytes while libmicrohttpd holds them. */
struct held {
	struct webhook *w;
	char *buf;
	size_t len;
};

/* ---- answers ------------------------------------------------------------- */

/* libmicrohttpd is done with an answer: its bytes go, and what they held of w->held. */
static void on_sent(void *cls)
{
	struct held *h = cls;

	h->w->held -= h->len;
	free(h->buf);
	free(h);
}

/*
 * Queues an answer. buf is either static (owned false) or malloc'd and
 * given to the answer (owned true), which frees it once sent. A stopping
 * server asks the client to close the connection after it, as do the
 * refusals that leave a body unread.
 */
static enum MHD_Result respond(struct wport *p, struct MHD_Connection *conn, unsigned status, const char *type,
			       char *buf, size_t len, bool owned, const char *allow)
{
	struct webhook *w = p->w;
	struct MHD_Response *resp;
	struct held *h = NULL;
	enum MHD_Result rc;

	if (owned) {
		h = malloc(sizeof(*h));
		if (!h) {
			free(buf);
			return MHD_NO;
		}
		*h = (struct held){ w, buf, len };
		w->held += len;
		resp = MHD_create_response_from_buffer_with_free_callback_cls(len, buf, on_sent, h);
		if (!resp)
			on_sent(h);
	} else {
		resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_PERSISTENT);
	}
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE && !w->stopping)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	if (w->stopping || status == MHD_HTTP_CONTENT_TOO_LARGE || status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	rc = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	if (rc == MHD_YES)
		webhook_count_status(w, status);
	return rc;
}

static enum MHD_Result respond_text(struct wport *p, struct MHD_Connection *conn, unsigned status, const char *text,
				    const char *allow)
{
	/* PERSISTENT: libmicrohttpd only reads it, so the const is kept in fact, if not in its prototype. */
	return respond(p, conn, status, "text/plain; charset=utf-8", (char *)(uintptr_t)text, strlen(text), false,
		       allow);
}

/* What w->held can still take: nothing once the answers held (which are not refused) passed the limit. */
static size_t held_room(const struct webhook *w)
{
	return w->held < WEBHOOK_HELD_MAX ? WEBHOOK_HELD_MAX - w->held : 0;
}

/* The body is let go as soon as the answer is made: a slow reader holds the answer only. */
static void drop_body(struct webhook *w, struct request *r)
{
	w->held -= r->cap;
	free(r->body);
	r->body = NULL;
	r->cap = 0;
}

/* ---- the routes ---------------------------------------------------------------------- */

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

/*
 * POST /mutate: the review answered whole, in this call; its body let go before the answer is sent. Through
 * /mutate/services (the configuration's entry for a namespace labelled rearguard.io/inject=services, which
 * the pod itself cannot say) every pod is asked for as a long-running one may be.
 */
static enum MHD_Result answer_review(struct wport *p, struct MHD_Connection *conn, struct request *r)
{
	struct webhook *w = p->w;
	struct inject_options o = w->opts->inject;
	struct review_answer a;
	int64_t us;
	int status;

	memset(&a, 0, sizeof(a));
	o.services = strcmp(r->route->path, "/mutate/services") == 0;
	status = review_answer(r->body ? r->body : "", r->len, &o, &a);
	drop_body(w, r);
	if (status < 0) {
		log_msg(LOG_ERROR, FIELDS(LF_STR("error", strerror(-status))), "review not answered");
		return respond_text(p, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	}
	us = mono_us() - r->start_us;
	webhook_observe(w, a.outcome, us);
	log_review(&a, (unsigned)status, us);
	/* The answer's bytes go to libmicrohttpd, which frees them once sent. */
	return respond(p, conn, (unsigned)status,
		       status == MHD_HTTP_OK ? "application/json" : "text/plain; charset=utf-8", a.body, a.len, true,
		       NULL);
}

/* The process runs and its loop turns: the liveness probe's answer. */
static enum MHD_Result answer_healthz(struct wport *p, struct MHD_Connection *conn, struct request *r)
{
	return respond_text(p, conn, MHD_HTTP_OK, "ok\n", NULL);
}

/* The certificate is loaded before the server starts: only SIGTERM makes it unready. */
static enum MHD_Result answer_readyz(struct wport *p, struct MHD_Connection *conn, struct request *r)
{
	if (p->w->stopping)
		return respond_text(p, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "shutting down\n", NULL);
	return respond_text(p, conn, MHD_HTTP_OK, "ready\n", NULL);
}

/* /metrics, written afresh for each request. */
static enum MHD_Result answer_metrics(struct wport *p, struct MHD_Connection *conn, struct request *r)
{
	struct jbuf j;

	jbuf_init(&j);
	webhook_write_metrics(p->w, &j);
	if (j.failed) {
		jbuf_free(&j);
		return respond_text(p, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	}
	return respond(p, conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", j.buf, j.len, true, NULL);
}

#define BOTH ((1u << WPORT_WEBHOOK) | (1u << WPORT_PROBES))

static const struct route routes[] = {
	{ "/mutate", 1u << WPORT_WEBHOOK, "POST", true, answer_review },
	{ "/mutate/services", 1u << WPORT_WEBHOOK, "POST", true, answer_review },
	{ "/healthz", BOTH, "GET, HEAD", false, answer_healthz },
	{ "/readyz", BOTH, "GET, HEAD", false, answer_readyz },
	{ "/metrics", BOTH, "GET, HEAD", false, answer_metrics },
};

/* ---- a request's headers --------------------------------------------------------------- */

/* Whether method is one of methods ("GET, HEAD"). */
static bool allows(const char *methods, const char *method)
{
	size_t n = strlen(method);
	const char *at;

	for (at = methods; (at = strstr(at, method)) != NULL; at += n)
		if ((at == methods || at[-1] == ' ') && (at[n] == '\0' || at[n] == ','))
			return true;
	return false;
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

/* A request refused with its headers: answered once whole, or at once when a body follows. */
static void refuse(struct request *r, unsigned status, const char *text, const char *allow)
{
	r->status = status;
	r->text = text;
	r->allow = allow;
}

/*
 * What a body's headers say: nothing yet, or why it is refused. A told
 * length within the limit takes its room in w->held now, whole, or the
 * request is refused (503, try again): a body is never cut off half read
 * for want of memory.
 */
static void check_body(struct webhook *w, struct MHD_Connection *conn, struct request *r)
{
	const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	unsigned long long n;
	char *end;

	if (!json_type(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE))) {
		refuse(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "the review must be application/json\n", NULL);
		return;
	}
	if (!length)
		return;
	errno = 0;
	n = strtoull(length, &end, 10);
	if (errno != 0 || end == length || *end != '\0')
		return; /* libmicrohttpd refuses a length it cannot read itself */
	if (n > WEBHOOK_BODY_MAX) {
		refuse(r, MHD_HTTP_CONTENT_TOO_LARGE, "the review is larger than 4 MiB\n", NULL);
		return;
	}
	if (n + 1 > held_room(w)) {
		log_msg(LOG_WARN,
			FIELDS(LF_INT("length", n), LF_INT("held", w->held), LF_INT("limit", WEBHOOK_HELD_MAX)),
			"a review refused (503): the bodies and answers held would pass the limit");
		refuse(r, MHD_HTTP_SERVICE_UNAVAILABLE, "busy: too many reviews held at once, try again\n", NULL);
		return;
	}
	r->told = true;
	r->cap = (size_t)n + 1;
	w->held += r->cap;
}

/* A request's headers: its route, and what refuses it already. */
static void classify(struct wport *p, struct MHD_Connection *conn, const char *url, const char *method,
		     struct request *r)
{
	unsigned port = 1u << (p - p->w->ports);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(routes) && !(strcmp(url, routes[i].path) == 0 && (routes[i].ports & port)); i++)
		;
	if (i == ARRAY_SIZE(routes)) {
		refuse(r, MHD_HTTP_NOT_FOUND, "not found\n", NULL);
		return;
	}
	r->route = &routes[i];
	if (!allows(r->route->methods, method))
		refuse(r, MHD_HTTP_METHOD_NOT_ALLOWED, r->route->body ? "POST an AdmissionReview\n" : "GET it\n",
		       r->route->methods);
	else if (r->route->body)
		check_body(p->w, conn, r);
}

/* Whether the request says that a body follows. */
static bool has_body(struct MHD_Connection *conn)
{
	const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (length && strcmp(length, "0") != 0) ||
	       MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

/* ---- a request's body ------------------------------------------------------------------ */

/*
 * A piece of the body. A told length has its room already; an untold one
 * (chunked) grows, and past the limit, or past what w->held can take, the
 * connection is closed: no answer can be queued in the middle of a body.
 */
static enum MHD_Result take_body(struct wport *p, struct MHD_Connection *conn, struct request *r, const char *data,
				 size_t size)
{
	struct webhook *w = p->w;
	char *grown;
	size_t cap;

	if (size > WEBHOOK_BODY_MAX - r->len) {
		log_msg(LOG_WARN, FIELDS(LF_INT("limit", WEBHOOK_BODY_MAX)),
			"a review's body grew past the limit: the connection is closed");
		wport_count_close(conn, WCLOSE_BODY);
		return MHD_NO;
	}
	if (r->status || !r->route || !r->route->body) {
		r->len += size; /* a refused request's body, or one no route reads, is counted, not kept */
		return MHD_YES;
	}
	if (!r->told && r->len + size + 1 > r->cap) {
		cap = r->cap ? r->cap : 16384;
		while (cap < r->len + size + 1)
			cap *= 2;
		if (cap - r->cap > held_room(w)) {
			log_msg(LOG_WARN, FIELDS(LF_INT("held", w->held), LF_INT("limit", WEBHOOK_HELD_MAX)),
				"the bodies and answers held would pass the limit: the connection is closed");
			wport_count_close(conn, WCLOSE_MEMORY);
			return MHD_NO;
		}
		grown = realloc(r->body, cap);
		if (!grown)
			return MHD_NO;
		r->body = grown;
		w->held += cap - r->cap;
		r->cap = cap;
	}
	if (!r->body && !(r->body = malloc(r->cap)))
		return MHD_NO;
	/* libmicrohttpd gives no more than the told length */
	memcpy(r->body + r->len, data, size);
	r->len += size;
	r->body[r->len] = '\0';
	return MHD_YES;
}

/* ---- libmicrohttpd's calls ---------------------------------------------------------- */

/* The request is whole: its answer. */
static enum MHD_Result answer(struct wport *p, struct MHD_Connection *conn, struct request *r)
{
	if (r->status)
		return respond_text(p, conn, r->status, r->text, r->allow);
	return r->route->answer(p, conn, r);
}

/*
 * The access handler. An answer queued with the headers closes the
 * connection (libmicrohttpd does not read that request's body, so it
 * cannot read the next request): only a refusal of a body that must not
 * be read (413, 503), or of one that would be read for nothing, is
 * answered that early.
 */
enum MHD_Result wroutes_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				const char *version, const char *data, size_t *size, void **req_cls)
{
	struct wport *p = cls;
	struct request *r = *req_cls;
	enum MHD_Result rc;

	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		r->start_us = mono_us();
		*req_cls = r;
		p->w->in_flight++;
		wport_request_began(conn);
		classify(p, conn, url, method, r);
		if (r->status && has_body(conn))
			return answer(p, conn, r);
		return MHD_YES;
	}
	if (*size > 0) {
		rc = take_body(p, conn, r, data, *size);
		*size = 0;
		return rc;
	}
	return answer(p, conn, r);
}

/* A request ended, answered or not (a client gone, a deadline, the daemon stopping). */
void wroutes_completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe)
{
	struct wport *p = cls;
	struct request *r = *req_cls;

	if (!r)
		return;
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		log_msg(LOG_DEBUG, FIELDS(LF_INT("code", toe)), "a request ended without its answer sent whole");
	drop_body(p->w, r);
	free(r);
	*req_cls = NULL;
	p->w->in_flight--;
	wport_request_ended(conn);
}
