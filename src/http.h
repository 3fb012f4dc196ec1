/*
 * Requests to the sidecars' admin endpoints, without ever blocking the
 * loop: one libcurl multi handle driven by libev, the way curl's
 * multi-socket API intends. libcurl says which sockets to watch (one ev_io
 * each, attached to the socket with curl_multi_assign) and when to call it
 * back (one ev_timer).
 *
 *	struct http *h;
 *	http_new(loop, &h);            cheap: libcurl is set up by http_prepare
 *	                               or the first request
 *	r->done = on_done; r->data = ...;
 *	http_request_init(h, r, HTTP_POST, spec->stop_url, &spec->stop_at, err, sizeof(err));
 *	...                            the request is built once, ahead of time
 *	http_request_start(r, connect_timeout_us, timeout_us, err, sizeof(err));
 *	... on_done(r) runs from the loop: r->err == 0 and r->status, or r->err ...
 *	http_request_start(r, ...);     the same request again (a retry, a poll)
 *	http_request_free(r);          cancels it first; done is not called
 *	http_free(h);
 *
 * A request is set up once (URL, method, options) and can be started any
 * number of times, one at a time. Starting it hands it to libcurl at once,
 * not on the next loop iteration: the connect is made, and on loopback,
 * where a connect completes within the call, the request is on the wire
 * before http_request_start returns. done() is never called from inside
 * http_request_start (only from the loop), so its caller is not re-entered.
 *
 * Every request: a connect and a total timeout; no proxy, whatever the
 * environment says (an http_proxy variable in a pod must not reroute calls
 * to loopback); no signals (CURLOPT_NOSIGNAL); no redirects; a connection
 * of its own, closed afterwards; "localhost" pinned to 127.0.0.1, so no
 * resolver or NSS is involved; the status and at most HTTP_BODY_MAX - 1
 * bytes of the body kept for the logs. libcurl's global set-up costs a few
 * milliseconds: it happens at http_prepare() or the first request set up.
 *
 * A call that fails says in err (when not NULL) which libcurl call
 * refused, and libcurl's words for why: the -errno alone cannot.
 */
#ifndef RG_HTTP_H
#define RG_HTTP_H

#include "url.h"
#include "util.h"

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_BODY_MAX 2048
#define HTTP_ERROR_MAX 256 /* CURL_ERROR_SIZE */

enum http_method {
	HTTP_GET,
	HTTP_POST,    /* with an empty body */
	HTTP_CONNECT, /* connect, send nothing: whether something accepts connections */
};

struct http;
struct http_request;

typedef void http_done_fn(struct http_request *r);

struct http_request {
	http_done_fn *done;
	void *data;

	/* The outcome, valid in done(). */
	int err;        /* 0: answered (or connected, for HTTP_CONNECT); else -errno:
			   -ECONNREFUSED, -ETIMEDOUT, -ECONNRESET (closed without an answer), ... */
	long status;    /* the HTTP status when err == 0 (0 for HTTP_CONNECT) */
	char body[HTTP_BODY_MAX]; /* the start of the body, NUL-terminated */
	size_t body_len;
	char error[HTTP_ERROR_MAX]; /* libcurl's words when err != 0 */
	int64_t elapsed_us;

	/* Private. */
	struct http *h;
	void *easy;     /* set up once by http_request_init */
	struct curl_slist *resolve;
	bool running;   /* in libcurl's hands */
	bool finished;  /* done() is due, from the loop */
	struct http_request *prev, *next;
	int64_t started_us;
};

int http_new(struct ev_loop *loop, struct http **out);
/* Cancels every request (done is not called) and frees h. */
void http_free(struct http *h);

/* Sets libcurl up now (a few ms) rather than at the first request. */
int http_prepare(struct http *h, char *err, size_t errlen);

/*
 * Builds the request: url is an http:// URL that url_parse() accepted,
 * parts what it gave. -ENOMEM, or -EIO when libcurl refuses. r must stay
 * where it is until http_request_free().
 */
int http_request_init(struct http *h, struct http_request *r, enum http_method method, const char *url,
		      const struct url *parts, char *err, size_t errlen);

/*
 * Starts r (cancelling it first when it runs). -EINVAL before a
 * successful http_request_init; -EIO when libcurl refuses.
 */
int http_request_start(struct http_request *r, int64_t connect_timeout_us, int64_t timeout_us, char *err, size_t errlen);

/* Whether r was built (http_request_init succeeded): it only has to be started. */
bool http_request_built(const struct http_request *r);

/* Drops r if it is in flight; done is not called. r can be started again. */
void http_request_cancel(struct http_request *r);

/* Cancels r and releases what http_request_init built. Safe on a zeroed r. */
void http_request_free(struct http_request *r);

#endif
