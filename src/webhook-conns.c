/*
 * A port of rearguard webhook: its listening socket, the connections it
 * serves, keeps waiting or refuses, their deadlines, and the libmicrohttpd
 * daemon that serves them, in its external epoll mode on the libev loop
 * (one ev_io on its epoll descriptor, one ev_timer for its timeout,
 * MHD_run after each).
 *
 * The port accepts on its own socket and hands each connection it takes
 * to libmicrohttpd (MHD_USE_NO_LISTEN_SOCKET, MHD_add_connection), which
 * gives it the policy libmicrohttpd lacks:
 *
 * - An address may have per_client connections served at once; more of it
 *   wait, accepted but given to no daemon yet (a descriptor, no TLS), for
 *   one of its own to end, up to open_per_client open. The API server
 *   opens one connection per review in flight and never as many as that
 *   (docs/webhook.md), so it waits at worst and is never refused; one
 *   client that holds its connections open holds per_client of the
 *   port's limit, not all of it.
 * - Past the limit with no room to wait, or past open_per_client, a
 *   connection is closed at once, counted and said in the log.
 * - A connection must bring a request's headers within headers_s of its
 *   start (its wait and the TLS handshake included) or of its last answer,
 *   and that request must be read and answered within request_s of its
 *   headers. libmicrohttpd's own timeout starts again at every byte, so a
 *   client that sends one every few seconds would hold its connection for
 *   ever; these deadlines do not move. A connection past one is shut down
 *   (shutdown(2)): libmicrohttpd reads its end and closes it as a client
 *   gone.
 */
#include "config.h"

#include "webhook-private.h"

#include "log.h"
#include "webhook-cert.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LISTEN_BACKLOG 1024
/* libmicrohttpd's idle timeout: a backstop only, the deadlines come first. */
#define BACKSTOP_S 120u
/*
 * Each connection's pool in libmicrohttpd (its default is 32 KiB): the
 * request's headers and the read buffer the body passes through. The API
 * server's headers are a few hundred bytes.
 */
#define POOL_BYTES ((size_t)16 << 10)
#define ACCEPTS_PER_TURN 64 /* then the loop turns: one port does not keep the other waiting */
#define SAY_EVERY_S 10.0    /* a refusal is said in the log at most this often, with the count since */

enum wphase { PHASE_WAITING, PHASE_HEADERS, PHASE_REQUEST };

/* One address and its connections. */
struct wclient {
	unsigned char addr[16];	       /* IPv6, or IPv4 as ::ffff:a.b.c.d */
	unsigned active, open;	       /* served; served and waiting */
	struct wconn *head, *tail;     /* waiting, oldest first */
	struct wclient *next;	       /* in its bucket, or free */
	struct wclient *wprev, *wnext; /* among the clients with connections waiting */
	bool listed;
};

/*
 * The addresses with connections open: a chained hash over a pool of
 * entries made at the start (one per connection the port may hold), so
 * that an entry stays where it is while connections point to it.
 */
struct wclients {
	struct wclient **buckets;
	size_t mask;
	struct wclient *free;
	struct wclient *waiters; /* the clients with connections waiting */
	struct wclient pool[];
};

struct wconn {
	struct wport *port;
	struct wclient *client;
	struct MHD_Connection *mhd; /* NULL while waiting */
	int fd;
	enum wphase phase;
	bool shut; /* shut down at its deadline: counted once */
	ev_tstamp start;
	ev_timer deadline;
	struct wconn *prev, *next; /* waiting: its client's queue */
	struct wcert_pair *pair;   /* the certificates its handshake may take */
	struct sockaddr_storage addr;
	socklen_t addrlen;
};

static ev_tstamp said_at[WPORTS][WREFUSES];
static unsigned long unsaid[WPORTS][WREFUSES];

/* ---- the clients ----------------------------------------------------------------- */

/* The table of a port that may hold n connections: an entry each, and twice as many buckets. */
static struct wclients *clients_new(size_t n)
{
	size_t buckets = 64, i;
	struct wclients *t;

	while (buckets < 2 * n)
		buckets *= 2;
	t = calloc(1, sizeof(*t) + n * sizeof(t->pool[0]));
	if (!t)
		return NULL;
	t->buckets = calloc(buckets, sizeof(t->buckets[0]));
	if (!t->buckets) {
		free(t);
		return NULL;
	}
	t->mask = buckets - 1;
	for (i = 0; i < n; i++) {
		t->pool[i].next = t->free;
		t->free = &t->pool[i];
	}
	return t;
}

/* The table and its entries, when the port stops (its connections are gone by then). */
static void clients_free(struct wclients *t)
{
	if (t)
		free(t->buckets);
	free(t);
}

/* The address a connection comes from, as 16 bytes: an IPv4 one mapped, anything else all zeros. */
static void key_of(const struct sockaddr_storage *ss, unsigned char key[16])
{
	memset(key, 0, 16);
	if (ss->ss_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	} else if (ss->ss_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	}
}

/* Where an address hashes. */
static size_t bucket_of(const struct wclients *t, const unsigned char key[16])
{
	uint32_t h = 2166136261u; /* FNV-1a */
	int i;

	for (i = 0; i < 16; i++)
		h = (h ^ key[i]) * 16777619u;
	return h & t->mask;
}

/* The entry of an address, made when it has none; NULL when the pool is spent (it cannot be: one per connection). */
static struct wclient *client_get(struct wclients *t, const unsigned char key[16])
{
	size_t b = bucket_of(t, key);
	struct wclient *c;

	for (c = t->buckets[b]; c; c = c->next)
		if (memcmp(c->addr, key, 16) == 0)
			return c;
	c = t->free;
	if (!c)
		return NULL;
	t->free = c->next;
	memset(c, 0, sizeof(*c));
	memcpy(c->addr, key, 16);
	c->next = t->buckets[b];
	t->buckets[b] = c;
	return c;
}

/* An address with nothing open any more goes back to the pool. */
static void client_put(struct wclients *t, struct wclient *c)
{
	struct wclient **at;

	if (c->open > 0)
		return;
	for (at = &t->buckets[bucket_of(t, c->addr)]; *at != c; at = &(*at)->next)
		;
	*at = c->next;
	c->next = t->free;
	t->free = c;
}

/* The clients with connections waiting are listed, so that a turn of the loop finds them without a walk of all. */
static void waiters_add(struct wclients *t, struct wclient *c)
{
	if (c->listed)
		return;
	c->listed = true;
	c->wprev = NULL;
	c->wnext = t->waiters;
	if (t->waiters)
		t->waiters->wprev = c;
	t->waiters = c;
}

/* A client with no connection waiting any more leaves the list. */
static void waiters_remove(struct wclients *t, struct wclient *c)
{
	if (!c->listed)
		return;
	c->listed = false;
	if (c->wprev)
		c->wprev->wnext = c->wnext;
	else
		t->waiters = c->wnext;
	if (c->wnext)
		c->wnext->wprev = c->wprev;
}

/* ---- saying what was refused --------------------------------------------------------- */

static void describe_addr(const struct sockaddr_storage *ss, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		snprintf(out, len, "[%s]:%u", host, ntohs(a->sin6_port));
	} else if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		snprintf(out, len, "%s:%u", host, ntohs(a->sin_port));
	} else {
		snprintf(out, len, "?");
	}
}

/*
 * A refused connection, counted; the log says it at most every
 * SAY_EVERY_S per port and reason, with how many were refused since, so
 * that a flood of them does not flood the log.
 */
static void refuse(struct wport *p, int fd, const struct sockaddr_storage *ss, enum wrefuse why)
{
	size_t port = (size_t)(p - p->w->ports);
	ev_tstamp now = ev_now(p->w->loop);
	char from[INET6_ADDRSTRLEN + 16];

	if (fd >= 0)
		close(fd);
	p->refused[why]++;
	unsaid[port][why]++;
	if (said_at[port][why] > 0 && now - said_at[port][why] < SAY_EVERY_S)
		return;
	describe_addr(ss, from, sizeof(from));
	switch (why) {
	case WREFUSE_GLOBAL:
		log_msg(LOG_WARN,
			FIELDS(LF_STR("port", p->cfg->name), LF_STR("client", from), LF_INT("served", p->active),
			       LF_INT("waiting", p->waiting), LF_INT("refused", unsaid[port][why])),
			"connection refused: the port serves its %u connections and has no room to wait",
			p->cfg->limit);
		break;
	case WREFUSE_CLIENT:
		log_msg(
		    LOG_WARN,
		    FIELDS(LF_STR("port", p->cfg->name), LF_STR("client", from), LF_INT("refused", unsaid[port][why])),
		    "connection refused: its address has %u connections open, the most one client may",
		    p->cfg->open_per_client);
		break;
	case WREFUSES:
		break;
	}
	said_at[port][why] = now;
	unsaid[port][why] = 0;
}

/* ---- one connection ---------------------------------------------------------------------- */

static void on_deadline(struct ev_loop *loop, ev_timer *t, int revents);

/* Its deadline: when its phase ends at the latest. */
static void set_deadline(struct wconn *c, enum wphase phase, ev_tstamp from)
{
	struct ev_loop *loop = c->port->w->loop;
	double span = phase == PHASE_REQUEST ? c->port->cfg->request_s : c->port->cfg->headers_s;
	ev_tstamp at = from + span - ev_now(loop);

	c->phase = phase;
	ev_timer_stop(loop, &c->deadline);
	ev_timer_set(&c->deadline, at > 0 ? at : 0., 0.);
	ev_timer_start(loop, &c->deadline);
}

/* A waiting connection leaves its client's queue. */
static void unqueue(struct wconn *c)
{
	struct wclient *cl = c->client;

	if (c->prev)
		c->prev->next = c->next;
	else
		cl->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		cl->tail = c->prev;
	c->prev = c->next = NULL;
	c->port->waiting--;
	if (!cl->head)
		waiters_remove(c->port->clients, cl);
}

/* A connection gone: its counts, its client, its memory. */
static void release(struct wconn *c)
{
	struct wport *p = c->port;
	struct wclient *cl = c->client;

	ev_timer_stop(p->w->loop, &c->deadline);
	if (c->phase == PHASE_WAITING) {
		unqueue(c);
	} else {
		cl->active--;
		p->active--;
	}
	cl->open--;
	client_put(p->clients, cl);
	wcert_release(c->pair);
	free(c);
}

/* To libmicrohttpd: served from now on, or closed (MHD_add_connection closes it on failure). */
static void serve(struct wport *p, struct wconn *c)
{
	struct wclient *cl = c->client;
	int fd = c->fd;

	cl->active++;
	p->active++;
	set_deadline(c, PHASE_HEADERS, c->start);
	p->adding = c;
	if (MHD_add_connection(p->daemon, fd, (const struct sockaddr *)&c->addr, c->addrlen) == MHD_YES)
		return;
	if (p->adding == c) {
		/* Never started: it is ours to let go (libmicrohttpd closed its descriptor). */
		p->adding = NULL;
		log_msg(LOG_DEBUG, FIELDS(LF_STR("port", p->cfg->name), LF_STR("error", strerror(errno))),
			"libmicrohttpd could not take a connection");
		release(c);
	}
	/* Started and failed: its closing notification let it go. */
}

/* The connections that waited for their address to have room: served while it and the port do. */
static void promote(struct wport *p)
{
	struct wclient *cl = p->clients->waiters, *next;

	for (; cl && p->active < p->cfg->limit; cl = next) {
		next = cl->wnext;
		while (cl->head && cl->active < p->cfg->per_client && p->active < p->cfg->limit) {
			struct wconn *c = cl->head;

			unqueue(c);
			serve(p, c);
		}
	}
}

/* A connection taken: served, waiting, or refused by the port's limits. */
static void admit(struct wport *p, int fd, const struct sockaddr_storage *ss, socklen_t len)
{
	const struct wport_config *cfg = p->cfg;
	unsigned char key[16];
	struct wclient *cl;
	struct wconn *c;

	key_of(ss, key);
	cl = client_get(p->clients, key);
	if (!cl || cl->open >= cfg->open_per_client) {
		refuse(p, fd, ss, cl ? WREFUSE_CLIENT : WREFUSE_GLOBAL);
		if (cl)
			client_put(p->clients, cl);
		return;
	}
	if ((cl->active < cfg->per_client && p->active >= cfg->limit) ||
	    (cl->active >= cfg->per_client && p->waiting >= cfg->waiting) || !(c = calloc(1, sizeof(*c)))) {
		refuse(p, fd, ss, WREFUSE_GLOBAL);
		client_put(p->clients, cl);
		return;
	}
	c->port = p;
	c->client = cl;
	c->fd = fd;
	c->start = ev_now(p->w->loop);
	memcpy(&c->addr, ss, len);
	c->addrlen = len;
	ev_init(&c->deadline, on_deadline);
	c->deadline.data = c;
	cl->open++;
	if (cl->active < cfg->per_client) {
		serve(p, c);
		return;
	}
	c->phase = PHASE_WAITING;
	c->prev = cl->tail;
	if (cl->tail)
		cl->tail->next = c;
	else
		cl->head = c;
	cl->tail = c;
	p->waiting++;
	waiters_add(p->clients, cl);
	set_deadline(c, PHASE_WAITING, c->start);
}

/* Past its deadline: a waiting connection is closed, a served one shut down for libmicrohttpd to close. */
static void on_deadline(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct wconn *c = t->data;
	struct wport *p = c->port;
	enum wclose why = c->phase == PHASE_REQUEST ? WCLOSE_REQUEST : WCLOSE_HEADERS;
	char from[INET6_ADDRSTRLEN + 16];

	describe_addr(&c->addr, from, sizeof(from));
	log_msg(LOG_DEBUG, FIELDS(LF_STR("port", p->cfg->name), LF_STR("client", from)), "connection closed: %s",
		why == WCLOSE_REQUEST ? "its request was not read and answered in time"
				      : "no request's headers came in time");
	if (c->phase == PHASE_WAITING) {
		p->closed[why]++;
		close(c->fd);
		release(c);
		p->cfg->on_quiet(p->w);
		return;
	}
	if (!c->shut) {
		c->shut = true;
		p->closed[why]++;
	}
	shutdown(c->fd, SHUT_RDWR);
	/* Once more a second later, should libmicrohttpd not have closed it by then. */
	ev_timer_set(t, 1., 0.);
	ev_timer_start(loop, t);
}

/* The context libmicrohttpd keeps for a connection: ours. */
static struct wconn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/* The request has its headers: from now on its deadline is the whole request's. */
void wport_request_began(struct MHD_Connection *conn)
{
	struct wconn *c = conn_of(conn);

	if (c && !c->shut)
		set_deadline(c, PHASE_REQUEST, ev_now(c->port->w->loop));
}

/* Back to waiting for a request: the headers' deadline again, from now. */
void wport_request_ended(struct MHD_Connection *conn)
{
	struct wconn *c = conn_of(conn);

	if (c && !c->shut)
		set_deadline(c, PHASE_HEADERS, ev_now(c->port->w->loop));
}

/* Closed by a route (MHD_NO): counted once, and no deadline shuts it down again. */
void wport_count_close(struct MHD_Connection *conn, enum wclose why)
{
	struct wconn *c = conn_of(conn);

	if (c && !c->shut) {
		c->shut = true;
		c->port->closed[why]++;
	}
}

/* libmicrohttpd took a connection (MHD_add_connection) or let it go. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct wport *p = cls;
	struct wconn *c;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		c = p->adding;
		p->adding = NULL;
		*socket_context = c;
		if (c) {
			c->mhd = conn;
			if (p->cfg->tls)
				c->pair = wcert_hold();
		}
		return;
	}
	c = *socket_context;
	*socket_context = NULL;
	if (c)
		release(c);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* libmicrohttpd's own messages (a client's failed handshake, say) are details: verbose only. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct wport *p = cls;
	char line[512];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	log_msg(LOG_DEBUG, FIELDS(LF_STR("port", p->cfg->name)), "libmicrohttpd: %s", line);
}

/* ---- the port on the loop ------------------------------------------------------------- */

/* libmicrohttpd's next deadline on the timer; 0 means "soon", and the loop comes back to it at once. */
static void arm_timer(struct wport *p)
{
	MHD_UNSIGNED_LONG_LONG ms;

	ev_timer_stop(p->w->loop, &p->mhd_timer);
	if (!p->daemon || MHD_get_timeout(p->daemon, &ms) != MHD_YES)
		return;
	ev_timer_set(&p->mhd_timer, (double)ms / 1000.0, 0.);
	ev_timer_start(p->w->loop, &p->mhd_timer);
}

/* libmicrohttpd's turn: what its descriptors and timeout say, then the connections that may stop waiting. */
void wport_run(struct wport *p)
{
	if (!p->daemon)
		return;
	MHD_run(p->daemon);
	/* Promotions here, never inside libmicrohttpd's notifications: MHD_add_connection is not for them. */
	promote(p);
	if (p->clients->waiters)
		MHD_run(p->daemon);
	arm_timer(p);
	p->cfg->on_quiet(p->w);
}

/* libmicrohttpd's epoll descriptor turned readable: something of its connections is ready. */
static void on_mhd_io(struct ev_loop *loop, ev_io *io, int revents)
{
	wport_run(io->data);
}

/* libmicrohttpd's timeout: its idle connections looked at. */
static void on_mhd_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
	wport_run(t->data);
}

/*
 * Out of descriptors: the reserve is closed for the time of one accept,
 * which takes the connection off the queue to close it, refused; else the
 * listening socket would stay readable and the loop spin on it.
 */
static bool refuse_without_descriptor(struct wport *p)
{
	struct sockaddr_storage ss = {.ss_family = AF_UNSPEC};
	int fd;

	if (p->reserve.fd < 0)
		return false;
	close(p->reserve.fd);
	p->reserve.fd = -1;
	fd = accept4(p->fd, NULL, NULL, SOCK_CLOEXEC);
	refuse(p, fd, &ss, WREFUSE_GLOBAL);
	fd_reserve_take(&p->reserve);
	return fd >= 0;
}

/* New connections: each admitted, up to ACCEPTS_PER_TURN a turn. */
static void on_accept(struct ev_loop *loop, ev_io *io, int revents)
{
	struct wport *p = io->data;
	int i;

	for (i = 0; i < ACCEPTS_PER_TURN && p->fd >= 0; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(p->fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			admit(p, fd, &ss, len);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if ((errno == EMFILE || errno == ENFILE) && refuse_without_descriptor(p))
			continue;
		if (errno != EAGAIN)
			log_msg(LOG_DEBUG, FIELDS(LF_STR("port", p->cfg->name), LF_STR("error", strerror(errno))),
				"accept failed");
		break;
	}
	wport_run(p);
}

/*
 * The listening socket, made here rather than by libmicrohttpd: ":PORT" is
 * one socket for IPv6 and IPv4 both (IPv4 alone on a kernel without IPv6),
 * a failure says what could not be done, and the port accepts on it
 * itself.
 */
static int open_listener(struct wport *p, const char *listen_as, const struct sockaddr_storage *at, socklen_t atlen,
			 bool any, char *err, size_t errlen)
{
	struct sockaddr_storage addr = *at;
	socklen_t addrlen = atlen;
	int fd, one = 1, zero = 0;

	fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 && any && errno == EAFNOSUPPORT) {
		struct sockaddr_in *four = (struct sockaddr_in *)&addr;
		uint16_t port = ((const struct sockaddr_in6 *)at)->sin6_port;

		memset(&addr, 0, sizeof(addr));
		four->sin_family = AF_INET;
		four->sin_port = port;
		four->sin_addr.s_addr = htonl(INADDR_ANY);
		addrlen = sizeof(*four);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", listen_as, strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr.ss_family == AF_INET6 && any)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&addr, addrlen) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", listen_as, strerror(errno));
		close(fd);
		return -1;
	}
	addrlen = sizeof(addr);
	if (getsockname(fd, (struct sockaddr *)&addr, &addrlen) == 0)
		describe_addr(&addr, p->shown, sizeof(p->shown));
	return fd;
}

/*
 * The port's daemon: no listening socket of its own (the port accepts),
 * its limit above the port's so that it never refuses one it is given, TLS
 * with the certificate's callback on the webhook's port.
 */
static struct MHD_Daemon *start_daemon(struct wport *p)
{
	/* The logger first: libmicrohttpd logs the options after it through it. */
	struct MHD_OptionItem opts[] = {
	    {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_mhd_log, p},
	    {MHD_OPTION_CONNECTION_TIMEOUT, BACKSTOP_S, NULL},
	    {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)p->cfg->limit + 8, NULL}, /* ours comes first */
	    {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)POOL_BYTES, NULL},
	    {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)wroutes_completed, p},
	    {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, p},
	    {MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1, NULL},
	    {MHD_OPTION_END, 0, NULL}, /* the TLS options, on the webhook's port */
	    {MHD_OPTION_END, 0, NULL},
	    {MHD_OPTION_END, 0, NULL},
	};
	unsigned flags = MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ERROR_LOG;

	if (p->cfg->tls) {
		flags |= MHD_USE_TLS;
		/* An option of one pointer takes it in ptr_value (libmicrohttpd's MHD_OPTION_ARRAY). */
		opts[ARRAY_SIZE(opts) - 3] =
		    (struct MHD_OptionItem){MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)(uintptr_t)wcert_retrieve};
		opts[ARRAY_SIZE(opts) - 2] =
		    (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)(uintptr_t)WCERT_PRIORITIES};
	}
	return MHD_start_daemon(flags, 0, NULL, NULL, wroutes_request, p, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
}

int wport_open(struct wport *p, struct webhook *w, const struct wport_config *cfg, const char *listen_as,
	       const struct sockaddr_storage *addr, socklen_t addrlen, bool any, char *err, size_t errlen)
{
	const union MHD_DaemonInfo *info;

	memset(p, 0, sizeof(*p));
	p->w = w;
	p->cfg = cfg;
	p->fd = -1;
	p->reserve.fd = -1;
	snprintf(p->shown, sizeof(p->shown), "%s", listen_as);
	p->fd = open_listener(p, listen_as, addr, addrlen, any, err, errlen);
	if (p->fd < 0)
		return -1;
	p->clients = clients_new(cfg->limit + cfg->waiting);
	p->daemon = p->clients ? start_daemon(p) : NULL;
	info = p->daemon ? MHD_get_daemon_info(p->daemon, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!info) {
		snprintf(err, errlen, "cannot start the %s server on %s (rearguard webhook -v says why)",
			 cfg->tls ? "HTTPS" : "HTTP", p->shown);
		wport_stop(p);
		return -1;
	}
	fd_reserve_take(&p->reserve);
	ev_io_init(&p->mhd_io, on_mhd_io, info->epoll_fd, EV_READ);
	p->mhd_io.data = p;
	ev_init(&p->mhd_timer, on_mhd_timer);
	p->mhd_timer.data = p;
	ev_io_init(&p->accept, on_accept, p->fd, EV_READ);
	p->accept.data = p;
	return 0;
}

/* On the loop: the daemon's descriptor and timer, the listening socket. */
void wport_watch(struct wport *p)
{
	ev_io_start(p->w->loop, &p->mhd_io);
	ev_io_start(p->w->loop, &p->accept);
	arm_timer(p);
}

/* The drain: the kernel refuses what comes next. */
void wport_close_listener(struct wport *p)
{
	if (p->fd < 0)
		return;
	ev_io_stop(p->w->loop, &p->accept);
	close(p->fd);
	p->fd = -1;
}

/* The end: every connection closed, served or waiting, and the port's memory freed. */
void wport_stop(struct wport *p)
{
	struct wclient *cl;

	if (p->w && p->w->loop) {
		ev_io_stop(p->w->loop, &p->mhd_io);
		ev_timer_stop(p->w->loop, &p->mhd_timer);
	}
	wport_close_listener(p);
	/* Closes its connections, each let go by its notification. */
	if (p->daemon)
		MHD_stop_daemon(p->daemon);
	p->daemon = NULL;
	while (p->clients && (cl = p->clients->waiters)) {
		struct wconn *c = cl->head;

		close(c->fd);
		release(c);
	}
	clients_free(p->clients);
	p->clients = NULL;
	fd_reserve_drop(&p->reserve);
}

/* What the drain waits for besides the requests in flight. */
unsigned wport_waiting(const struct webhook *w)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < WPORTS; i++)
		n += w->ports[i].waiting;
	return n;
}
