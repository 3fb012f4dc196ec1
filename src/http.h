/*
 * Requests to the sidecars' admin endpoints, without ever blocking the
 * loop: one libcurl multi handle driven by libev, the way curl's
 * multi-socket API intends. libcurl says which sockets to watch (one ev_io
 * each, attached to the socket with curl_multi_assign) and when to call it
 * back (one ev_timer; "0 ms" means on the next loop iteration, never from
 * inside libcurl's callback).
 *
 *	struct http *h;
 *	http_new(loop, &h);            cheap: libcurl is set up by http_prepare
 *	                               or the first request
 *	r->done = on_done; r->data = ...;
 *	http_start(h, r, HTTP_POST, "http://127.0.0.1:15020/quitquitquit",
 *		   connect_timeout_us, timeout_us);
 *	... on_done(r) runs from the loop: r->err == 0 and r->status, or r->err ...
 *	http_cancel(h, r);             drops a request in flight; done is not called
 *	http_free(h);                  cancels every request first
 *
 * Every request: a connect and a total timeout; no proxy, whatever the
 * environment says (an http_proxy variable in a pod must not reroute calls
 * to loopback); no signals (CURLOPT_NOSIGNAL); no redirects; a connection
 * of its own, closed afterwards; "localhost" pinned to 127.0.0.1, so no
 * resolver or NSS is involved; the status and at most HTTP_BODY_MAX - 1
 * bytes of the body kept for the logs. libcurl's global set-up costs a few
 * milliseconds: it happens at http_prepare() or the first request, never
 * before.
 */
#ifndef RG_HTTP_H
#define RG_HTTP_H

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
	void *easy;
	struct curl_slist *resolve;
	struct http_request *prev, *next;
	int64_t started_us;
};

int http_new(struct ev_loop *loop, struct http **out);
void http_free(struct http *h);

/* Sets libcurl up now (a few ms) rather than at the first request. */
int http_prepare(struct http *h);

/*
 * Starts a request; r must stay valid until done() or http_cancel(). A
 * request already in flight on r is cancelled first. -EINVAL: url is not a
 * valid http:// URL; -ENOMEM, or -EIO when libcurl refuses.
 */
int http_start(struct http *h, struct http_request *r, enum http_method method, const char *url,
	       int64_t connect_timeout_us, int64_t timeout_us);

/* Whether r is in flight. */
bool http_busy(const struct http_request *r);

void http_cancel(struct http *h, struct http_request *r);

#endif
