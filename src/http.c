#include "config.h"

#include "http.h"

#include "url.h"
#include "util.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

_Static_assert(HTTP_ERROR_MAX >= CURL_ERROR_SIZE, "libcurl's error buffer must fit");

struct http {
	struct ev_loop *loop;
	CURLM *multi;   /* NULL until the first request */
	bool global;    /* curl_global_init done by us */
	ev_timer timer; /* libcurl's one timeout */
	ev_timer deliver; /* finished requests' done() calls, from the loop */
	curl_socket_t fresh; /* a socket libcurl just asked to write on, else CURL_SOCKET_BAD */
	struct http_request *active;
};

/* One socket libcurl asked us to watch; attached to it with curl_multi_assign. */
struct http_sock {
	ev_io io;
	struct http *h;
	curl_socket_t fd;
};

static void collect(struct http *h);
static void deliver(struct http *h);

static void on_io(struct ev_loop *loop, ev_io *w, int revents)
{
	struct http_sock *hs = w->data;
	struct http *h = hs->h;
	int flags = (revents & EV_READ ? CURL_CSELECT_IN : 0) | (revents & EV_WRITE ? CURL_CSELECT_OUT : 0) |
		    (revents & EV_ERROR ? CURL_CSELECT_ERR : 0);
	int running;

	/* hs may be freed in there (CURL_POLL_REMOVE): it is not touched afterwards. */
	curl_multi_socket_action(h->multi, hs->fd, flags, &running);
	collect(h);
	deliver(h);
}

static void on_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct http *h = t->data;
	int running;

	curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	collect(h);
	deliver(h);
}

static void on_deliver(struct ev_loop *loop, ev_timer *t, int revents)
{
	deliver(t->data);
}

/* CURLMOPT_SOCKETFUNCTION: watch s for what libcurl wants, or stop watching it. */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct http *h = userp;
	struct http_sock *hs = socketp;

	if (what == CURL_POLL_REMOVE) {
		if (hs) {
			ev_io_stop(h->loop, &hs->io);
			curl_multi_assign(h->multi, s, NULL);
			free(hs);
		}
		if (h->fresh == s)
			h->fresh = CURL_SOCKET_BAD;
		return 0;
	}
	if (!hs) {
		hs = calloc(1, sizeof(*hs));
		if (!hs)
			return -1;
		hs->h = h;
		hs->fd = s;
		ev_init(&hs->io, on_io);
		hs->io.data = hs;
		curl_multi_assign(h->multi, s, hs);
	} else {
		ev_io_stop(h->loop, &hs->io);
	}
	/* A connect under way: http_request_start may find it done already. */
	if (what & CURL_POLL_OUT)
		h->fresh = s;
	/* CURL_POLL_NONE: known, but nothing to wait for now. */
	if (what & CURL_POLL_INOUT) {
		ev_io_set(&hs->io, s, (what & CURL_POLL_IN ? EV_READ : 0) | (what & CURL_POLL_OUT ? EV_WRITE : 0));
		ev_io_start(h->loop, &hs->io);
	}
	return 0;
}

/*
 * CURLMOPT_TIMERFUNCTION: libcurl wants to be called back after timeout_ms
 * (-1: never). 0 means as soon as possible, which is the next loop
 * iteration: calling libcurl from inside its own callback is not allowed.
 */
static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct http *h = userp;

	ev_timer_stop(h->loop, &h->timer);
	if (timeout_ms >= 0) {
		ev_timer_set(&h->timer, (double)timeout_ms / 1000., 0.);
		ev_timer_start(h->loop, &h->timer);
	}
	return 0;
}

int http_new(struct ev_loop *loop, struct http **out)
{
	struct http *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->loop = loop;
	h->fresh = CURL_SOCKET_BAD;
	ev_init(&h->timer, on_timer);
	h->timer.data = h;
	ev_init(&h->deliver, on_deliver);
	h->deliver.data = h;
	*out = h;
	return 0;
}

int http_prepare(struct http *h, char *err, size_t errlen)
{
	CURLcode rc;

	if (h->multi)
		return 0;
	if (!h->global) {
		rc = curl_global_init(CURL_GLOBAL_DEFAULT);
		if (rc != CURLE_OK)
			return failf(err, errlen, -EIO, "curl_global_init: %s", curl_easy_strerror(rc));
		h->global = true;
	}
	h->multi = curl_multi_init();
	if (!h->multi)
		return failf(err, errlen, -ENOMEM, "curl_multi_init: out of memory");
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	return 0;
}

static void unlink_request(struct http *h, struct http_request *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		h->active = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
}

/* Takes r out of libcurl's hands and ours; its easy handle stays for the next start. */
static void detach(struct http *h, struct http_request *r)
{
	if (r->running)
		curl_multi_remove_handle(h->multi, r->easy);
	r->running = false;
	r->finished = false;
	unlink_request(h, r);
}

static int error_of(CURL *easy, CURLcode rc)
{
	long os = 0;

	switch (rc) {
	case CURLE_OK:
		return 0;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_GOT_NOTHING:
		return -ECONNRESET;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		break;
	}
	/* The system's own word where there is one: ECONNREFUSED, ENETUNREACH, ECONNRESET. */
	if (curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &os) == CURLE_OK && os > 0)
		return -(int)os;
	/*
	 * No word from the system. Not "refused": a blind drain takes a refused
	 * connection as proof that the sidecar is gone.
	 */
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		return -ECONNABORTED;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
		return -ECONNRESET;
	default:
		return -EPROTO;
	}
}

/* Reads every finished transfer off the multi handle; deliver() reports them. */
static void collect(struct http *h)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(h->multi, &left)) != NULL) {
		/* msg dies with the handle's removal: copy what is needed first. */
		CURL *easy = msg->easy_handle;
		CURLcode rc = msg->data.result;
		struct http_request *r;
		char *priv = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
		r = (struct http_request *)(void *)priv;
		r->err = error_of(easy, rc);
		r->status = 0;
		if (r->err == 0)
			curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &r->status);
		else if (!r->error[0])
			str_copy(r->error, curl_easy_strerror(rc), sizeof(r->error));
		r->elapsed_us = mono_us() - r->started_us;
		curl_multi_remove_handle(h->multi, easy);
		r->running = false;
		r->finished = true;
	}
}

/* Calls done() for each finished request, from the loop. */
static void deliver(struct http *h)
{
	struct http_request *r;

	ev_timer_stop(h->loop, &h->deliver);
	/* A done() may start, cancel or free other requests: look from the start each time. */
	for (;;) {
		for (r = h->active; r && !r->finished; r = r->next)
			;
		if (!r)
			return;
		detach(h, r);
		if (r->done)
			r->done(r);
	}
}

/* CURLOPT_WRITEFUNCTION: keeps the start of the body, swallows the rest. */
static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
	struct http_request *r = userp;
	size_t n = size * nmemb, room = sizeof(r->body) - 1 - r->body_len;

	if (room > n)
		room = n;
	memcpy(r->body + r->body_len, data, room);
	r->body_len += room;
	r->body[r->body_len] = '\0';
	return n;
}

static long ms_of(int64_t us)
{
	int64_t ms = (us + US_PER_MS - 1) / US_PER_MS;

	return ms < 1 ? 1 : ms > LONG_MAX ? LONG_MAX : (long)ms;
}

int http_request_init(struct http *h, struct http_request *r, enum http_method method, const char *url,
		      const struct url *parts, char *err, size_t errlen)
{
	CURLcode rc = CURLE_OK;
	const char *what = NULL; /* the option libcurl refused */
	CURL *easy;
	int prep;

	http_request_free(r);
	prep = http_prepare(h, err, errlen);
	if (prep < 0)
		return prep;
	easy = curl_easy_init();
	if (!easy)
		return failf(err, errlen, -ENOMEM, "curl_easy_init: out of memory");
	r->h = h;
	if (strcasecmp(parts->host, "localhost") == 0) {
		char entry[URL_HOST_MAX + 32];

		/* The proxies listen on 127.0.0.1; a resolver would need NSS (and could say ::1). */
		snprintf(entry, sizeof(entry), "%s:%u:127.0.0.1", parts->host, parts->port);
		r->resolve = curl_slist_append(NULL, entry);
		if (!r->resolve) {
			curl_easy_cleanup(easy);
			return failf(err, errlen, -ENOMEM, "curl_slist_append: out of memory");
		}
	}

#define SET(opt, val)                                          \
	do {                                                   \
		if (rc == CURLE_OK) {                          \
			what = #opt;                           \
			rc = curl_easy_setopt(easy, opt, val); \
		}                                              \
	} while (0)
	SET(CURLOPT_URL, url);
	SET(CURLOPT_PRIVATE, r);
	SET(CURLOPT_ERRORBUFFER, r->error);
	SET(CURLOPT_NOSIGNAL, 1L);
	/*
	 * A libcurl built without proxy support (the static release binary's)
	 * says so here, and then no http_proxy variable can reroute us anyway.
	 */
	if (rc == CURLE_OK) {
		what = "CURLOPT_NOPROXY";
		rc = curl_easy_setopt(easy, CURLOPT_NOPROXY, "*");
		if (rc == CURLE_NOT_BUILT_IN || rc == CURLE_UNKNOWN_OPTION)
			rc = CURLE_OK;
	}
#if LIBCURL_VERSION_NUM >= 0x075500
	SET(CURLOPT_PROTOCOLS_STR, "http");
#else
	SET(CURLOPT_PROTOCOLS, (long)CURLPROTO_HTTP);
#endif
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_FORBID_REUSE, 1L);
	SET(CURLOPT_FRESH_CONNECT, 1L);
	SET(CURLOPT_USERAGENT, "rearguard/" PACKAGE_VERSION);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_WRITEDATA, r);
	if (r->resolve)
		SET(CURLOPT_RESOLVE, r->resolve);
	switch (method) {
	case HTTP_GET:
		SET(CURLOPT_HTTPGET, 1L);
		break;
	case HTTP_POST:
		SET(CURLOPT_POST, 1L);
		SET(CURLOPT_POSTFIELDS, "");
		SET(CURLOPT_POSTFIELDSIZE, 0L);
		break;
	case HTTP_CONNECT:
		SET(CURLOPT_CONNECT_ONLY, 1L);
		break;
	}
#undef SET
	if (rc != CURLE_OK) {
		curl_easy_cleanup(easy);
		curl_slist_free_all(r->resolve);
		r->resolve = NULL;
		return failf(err, errlen, -EIO, "curl_easy_setopt %s: %s", what, curl_easy_strerror(rc));
	}
	r->easy = easy;
	return 0;
}

int http_request_start(struct http_request *r, int64_t connect_timeout_us, int64_t timeout_us, char *err, size_t errlen)
{
	struct http *h = r->h;
	CURLcode rc = CURLE_OK;
	CURLMcode mrc;
	int running;

	if (!r->easy)
		return failf(err, errlen, -EINVAL, "the request was never built");
	http_request_cancel(r);
	r->err = 0;
	r->status = 0;
	r->body[0] = r->error[0] = '\0';
	r->body_len = 0;
	r->elapsed_us = 0;
	rc = curl_easy_setopt(r->easy, CURLOPT_CONNECTTIMEOUT_MS,
			      ms_of(connect_timeout_us < timeout_us ? connect_timeout_us : timeout_us));
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(r->easy, CURLOPT_TIMEOUT_MS, ms_of(timeout_us));
	r->started_us = mono_us();
	if (rc != CURLE_OK)
		return failf(err, errlen, -EIO, "curl_easy_setopt of the timeouts: %s", curl_easy_strerror(rc));
	mrc = curl_multi_add_handle(h->multi, r->easy);
	if (mrc != CURLM_OK)
		return failf(err, errlen, -EIO, "curl_multi_add_handle: %s", curl_multi_strerror(mrc));
	r->running = true;
	r->prev = NULL;
	r->next = h->active;
	if (h->active)
		h->active->prev = r;
	h->active = r;
	/*
	 * Now, not on the next loop iteration: libcurl connects, and where the
	 * connect is complete already (loopback), asking it to look at the
	 * socket sends the request within this call.
	 */
	h->fresh = CURL_SOCKET_BAD;
	curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	if (h->fresh != CURL_SOCKET_BAD)
		curl_multi_socket_action(h->multi, h->fresh, 0, &running);
	h->fresh = CURL_SOCKET_BAD;
	collect(h);
	/* A request that ended already (refused) is reported from the loop, never from here. */
	for (r = h->active; r; r = r->next)
		if (r->finished)
			ev_timer_start(h->loop, &h->deliver);
	return 0;
}

bool http_request_built(const struct http_request *r)
{
	return r->easy != NULL;
}

void http_request_cancel(struct http_request *r)
{
	if (r->h && (r->running || r->finished))
		detach(r->h, r);
}

void http_request_free(struct http_request *r)
{
	http_request_cancel(r);
	if (r->easy)
		curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->resolve);
	r->easy = NULL;
	r->resolve = NULL;
}

void http_free(struct http *h)
{
	if (!h)
		return;
	while (h->active)
		detach(h, h->active);
	ev_timer_stop(h->loop, &h->timer);
	ev_timer_stop(h->loop, &h->deliver);
	if (h->multi)
		curl_multi_cleanup(h->multi);
	if (h->global)
		curl_global_cleanup();
	free(h);
}
