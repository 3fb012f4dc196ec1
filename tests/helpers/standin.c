/*
 * A stand-in for the proxies rearguard talks to, faithful to docs/proxies.md:
 * the same ports, endpoints, methods, answers, exit codes and ways of
 * failing. Its personality is the name it runs under (tests link it as
 * pilot-agent, envoy, linkerd2-proxy, ...), so that a sidecar spec's match
 * finds it the way it finds the real one. Plain C, no library: it may be
 * linked statically into a container image.
 *
 *   pilot-agent       15020: POST /quitquitquit (kills Envoy, exits 0), POST /drain,
 *                     GET /healthz/ready; forks "envoy", which serves 15021
 *                     GET /healthz/ready and the admin port 15000, where
 *                     POST /quitquitquit stops Envoy only (pilot-agent stays: the
 *                     trap of docs/proxies.md). SIGTERM: drains --term-drain (5s), exits 0.
 *   envoy             admin port --admin-port (15000): GET /ready, POST /quitquitquit,
 *                     POST /healthcheck/fail, POST /drain_listeners, GET /stats.
 *                     SIGTERM: exits 0 at once.
 *   linkerd2-proxy    4191: GET /ready, GET /live, POST /shutdown (404 "shutdown
 *                     endpoint is not enabled" unless
 *                     LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED=true). SIGTERM: exit 0.
 *   cloud-sql-proxy   --health-check: 9090 /startup /readiness /liveness;
 *                     --quitquitquit: 9091 /quitquitquit (GET or POST, exits 0).
 *                     SIGTERM: exit 143 unless --exit-zero-on-sigterm.
 *   daprd             3500: GET /v1.0/healthz (204), POST /v1.0/shutdown (204, exit 0;
 *                     with Dapr-Force-Shutdown: exit 1 at once). SIGTERM: exit 0.
 *   vault             8200: POST /agent/v1/quit with --enable-quit. SIGTERM: exit 0.
 *   consul-dataplane  20600: /graceful_shutdown (any method) waits --term-drain,
 *                     answers 200, exits 0. SIGTERM: exit 0.
 *
 * The real command lines of the manifests are accepted too: "pilot-agent proxy
 * sidecar", cloud-sql-proxy's --port=N and instance connection names.
 *
 * Admin endpoints answer loopback peers only (403), mutating ones POST only
 * (405). Test knobs:
 *
 *   --ready-after DUR   not ready (503) until DUR after start
 *   --stop-status N     answer the stop request with N and keep running
 *   --stop-hang         never answer the stop request
 *   --stop-ignore       answer the stop request as usual and keep running
 *   --ignore-term       ignore SIGTERM
 *   --term-drain DUR    how long SIGTERM drains (pilot-agent 5s, others 0)
 *   --status-port N     pilot-agent's status port (15020); 0: none at all, as with
 *                       the pod annotation status.sidecar.istio.io/port: "0"
 *   --log FILE          append "<unix ms> <name> <pid> <event>" lines ("turned ready",
 *                       "stop request received" the moment it arrives, every request);
 *                       with RG_EVENT_CLOCK=mono in the environment the time is the
 *                       monotonic clock in microseconds (for the benchmark)
 *   --started FILE      create FILE once listening
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "event.h"

#define MAX_LISTEN 3
#define MAX_CONN 32

enum kind { PILOT, ENVOY, LINKERD, CLOUDSQL, DAPR, VAULT, CONSUL };

/* What a listening port serves. */
enum port {
	P_PILOT,        /* pilot-agent 15020 */
	P_ENVOY_ADMIN,  /* Envoy admin */
	P_ENVOY_READY,  /* Istio's Envoy 15021 */
	P_LINKERD,
	P_SQL_HEALTH,
	P_SQL_ADMIN,
	P_DAPR,
	P_VAULT,
	P_CONSUL,
};

struct conn {
	int fd;
	enum port port;
	char buf[8192];
	size_t len;
	bool held;        /* never answered (--stop-hang), or answered later (consul) */
};

static struct {
	const char *name;
	enum kind kind;
	bool istio_envoy; /* the Envoy that pilot-agent forked */
	int logfd;
	long start_ms, ready_at_ms;
	bool ready_logged, draining;
	long exit_at_ms;  /* -1: not exiting */
	int exit_code;
	int stop_status;  /* 0: answer the stop as the proxy does */
	bool stop_hang, stop_ignore, ignore_term;
	long term_drain_ms;
	bool quitquitquit, health_check, exit_zero_on_sigterm, enable_quit, shutdown_enabled;
	int admin_port, http_port, status_port;
	pid_t envoy;      /* pilot-agent's child */
	int sigfd;
	struct { int fd; enum port port; } listen[MAX_LISTEN];
	int nlisten;
	struct conn *conns[MAX_CONN];
	struct conn *consul_answer; /* /graceful_shutdown, answered at answer_at_ms */
	long answer_at_ms;
} S = { .logfd = -1, .exit_at_ms = -1, .term_drain_ms = -1, .admin_port = -1, .http_port = -1,
      .status_port = -1 };

__attribute__((format(printf, 1, 2)))
static void logev(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	event_vlog(S.logfd, S.name, fmt, ap);
	va_end(ap);
}

static void die(const char *what)
{
	fprintf(stderr, "%s (stand-in): %s: %s\n", S.name, what, strerror(errno));
	exit(70);
}

static void finish(int code)
{
	if (S.envoy > 0) {
		kill(S.envoy, SIGKILL);
		waitpid(S.envoy, NULL, 0);
		logev("killed envoy");
	}
	logev("exit %d", code);
	exit(code);
}

static bool ready(void)
{
	if (mono_ms() < S.ready_at_ms || S.draining)
		return false;
	/* Readiness is logged before any answer can say so. */
	if (!S.ready_logged) {
		S.ready_logged = true;
		logev("turned ready");
	}
	return true;
}

/* ---- sockets ------------------------------------------------------------- */

static void add_listener(enum port port, int number, bool all_interfaces)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)number) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;

	sa.sin_addr.s_addr = htonl(all_interfaces ? INADDR_ANY : INADDR_LOOPBACK);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0)
		die("listen");
	S.listen[S.nlisten].fd = fd;
	S.listen[S.nlisten].port = port;
	S.nlisten++;
	logev("listening on %d", number);
}

static bool from_loopback(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		return false;
	if (ss.ss_family == AF_INET)
		return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	return ss.ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
}

static void conn_close(struct conn *c)
{
	int i;

	for (i = 0; i < MAX_CONN; i++)
		if (S.conns[i] == c)
			S.conns[i] = NULL;
	close(c->fd);
	free(c);
}

static void reply(struct conn *c, int status, const char *body)
{
	static const struct { int code; const char *text; } reasons[] = {
		{ 200, "OK" }, { 204, "No Content" }, { 403, "Forbidden" }, { 404, "Not Found" },
		{ 405, "Method Not Allowed" }, { 500, "Internal Server Error" }, { 503, "Service Unavailable" },
	};
	const char *reason = "Status";
	char out[1024];
	size_t i;
	int n;

	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].code == status)
			reason = reasons[i].text;
	if (status == 204)
		n = snprintf(out, sizeof(out), "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
	else
		n = snprintf(out, sizeof(out),
			     "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			     "Connection: close\r\n\r\n%s",
			     status, reason, strlen(body), body);
	/* A few hundred bytes always fit a fresh socket's buffer. */
	if (write(c->fd, out, (size_t)n) < 0)
		logev("write failed: %s", strerror(errno));
	conn_close(c);
}

/* ---- what each proxy does ------------------------------------------------ */

/*
 * The stop request arrived: log it, then do what the knobs say. Returns
 * true when the proxy should go on as it normally does.
 */
static bool stop_received(struct conn *c)
{
	logev("stop request received");
	if (S.stop_hang) {
		c->held = true;
		return false;
	}
	if (S.stop_status) {
		reply(c, S.stop_status, "refused by the test\n");
		return false;
	}
	return true;
}

static void exit_soon(long after_ms, int code)
{
	long at = mono_ms() + after_ms;

	if (S.exit_at_ms < 0 || at < S.exit_at_ms) {
		S.exit_at_ms = at;
		S.exit_code = code;
	}
}

/* The usual stop: the request is logged, answered with STATUS, and the proxy exits 0 (unless told otherwise). */
static void stop_answer(struct conn *c, int status, const char *body)
{
	if (!stop_received(c))
		return;
	reply(c, status, body);
	if (!S.stop_ignore)
		exit_soon(0, 0);
}

static void on_sigterm(void)
{
	logev("got SIGTERM");
	if (S.ignore_term)
		return;
	S.draining = true;
	/* The Cloud SQL proxy ends with 143 on SIGTERM: a failed Job under restartPolicy: Never. */
	if (S.kind == CLOUDSQL)
		exit_soon(0, S.exit_zero_on_sigterm ? 0 : 143);
	else
		exit_soon(S.term_drain_ms, 0);
}

static void serve_envoy_admin(struct conn *c, bool post, const char *path)
{
	if (strcmp(path, "/ready") == 0) {
		if (ready())
			reply(c, 200, "LIVE\n");
		else
			reply(c, 503, S.draining ? "DRAINING\n" : "PRE_INITIALIZING\n");
	} else if (strncmp(path, "/stats", 6) == 0) {
		reply(c, 200, "server.total_connections: 0\n");
	} else if (strcmp(path, "/quitquitquit") == 0 || strcmp(path, "/healthcheck/fail") == 0 ||
		   strcmp(path, "/healthcheck/ok") == 0 || strncmp(path, "/drain_listeners", 16) == 0) {
		if (!post) {
			reply(c, 405, "Method not allowed, POST required.\n");
		} else if (strcmp(path, "/quitquitquit") == 0) {
			/* Istio's Envoy: only pilot-agent's 15020 is the stop request; this is the trap. */
			if (S.istio_envoy || stop_received(c)) {
				reply(c, 200, "OK\n");
				if (S.istio_envoy || !S.stop_ignore)
					exit_soon(0, 0);
			}
		} else {
			logev("%s", path + 1);
			S.draining = strcmp(path, "/healthcheck/ok") != 0;
			reply(c, 200, "OK\n");
		}
	} else {
		reply(c, 404, "invalid path\n");
	}
}

static void serve(struct conn *c, const char *method, const char *path)
{
	bool post = strcmp(method, "POST") == 0;

	logev("request %s %s", method, path);
	switch (c->port) {
	case P_PILOT:
		if (strcmp(path, "/healthz/ready") == 0) {
			reply(c, ready() && S.envoy > 0 ? 200 : 503, "");
		} else if (strcmp(path, "/quitquitquit") == 0 || strcmp(path, "/drain") == 0) {
			if (!post)
				reply(c, 405, "method not allowed\n");
			else if (!from_loopback(c->fd))
				reply(c, 403, "only allowed from localhost\n");
			else if (strcmp(path, "/drain") == 0) {
				S.draining = true;
				reply(c, 200, "OK");
			} else {
				/* Istio 1.22+: no drain; Envoy is killed and pilot-agent exits 0. */
				stop_answer(c, 200, "OK");
			}
		} else {
			reply(c, 404, "");
		}
		return;
	case P_ENVOY_READY:
		if (strcmp(path, "/healthz/ready") == 0)
			reply(c, ready() ? 200 : 503, "");
		else
			reply(c, 404, "");
		return;
	case P_ENVOY_ADMIN:
		serve_envoy_admin(c, post, path);
		return;
	case P_LINKERD:
		if (strcmp(path, "/ready") == 0) {
			if (ready())
				reply(c, 200, "ready\n");
			else
				reply(c, 503, "not ready\n");
		} else if (strcmp(path, "/live") == 0) {
			reply(c, 200, "live\n");
		} else if (strcmp(path, "/shutdown") == 0) {
			if (!post)
				reply(c, 405, "");
			else if (!from_loopback(c->fd))
				reply(c, 403, "shutdown requests must be sent from localhost\n");
			else if (!S.shutdown_enabled)
				reply(c, 404, "shutdown endpoint is not enabled\n");
			else
				stop_answer(c, 200, "shutdown\n");
		} else {
			reply(c, 404, "not found\n");
		}
		return;
	case P_SQL_HEALTH:
		if (strcmp(path, "/startup") == 0 || strcmp(path, "/readiness") == 0)
			reply(c, ready() ? 200 : 503, ready() ? "ok" : "error");
		else if (strcmp(path, "/liveness") == 0)
			reply(c, 200, "ok");
		else
			reply(c, 404, "404 page not found\n");
		return;
	case P_SQL_ADMIN:
		if (strcmp(path, "/quitquitquit") != 0)
			reply(c, 404, "404 page not found\n");
		else if (strcmp(method, "GET") != 0 && !post)
			reply(c, 405, "");
		else
			stop_answer(c, 200, "");
		return;
	case P_DAPR:
		if (strcmp(path, "/v1.0/healthz") == 0) {
			reply(c, ready() ? 204 : 500, "");
		} else if (strcmp(path, "/v1.0/shutdown") == 0) {
			if (!post) {
				reply(c, 405, "");
			} else if (strcasestr(c->buf, "\r\nDapr-Force-Shutdown:")) {
				logev("forced shutdown");
				reply(c, 204, "");
				finish(1);
			} else {
				stop_answer(c, 204, "");
			}
		} else {
			reply(c, 404, "");
		}
		return;
	case P_VAULT:
		if (strcmp(path, "/agent/v1/quit") != 0 || !S.enable_quit)
			reply(c, 404, "{\"errors\":[]}\n");
		else if (!post)
			reply(c, 405, "");
		else
			stop_answer(c, 200, "");
		return;
	case P_CONSUL:
		if (strcmp(path, "/graceful_shutdown") != 0) {
			reply(c, 404, "");
		} else if (stop_received(c)) {
			/* It blocks for the shutdown grace period, then answers and quits. */
			c->held = true;
			S.consul_answer = c;
			S.answer_at_ms = mono_ms() + S.term_drain_ms;
			S.draining = true;
		}
		return;
	}
}

static void on_readable(struct conn *c)
{
	char method[16], path[512];
	ssize_t n;

	n = read(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	if (n <= 0) {
		if (S.consul_answer == c)
			S.consul_answer = NULL;
		conn_close(c);
		return;
	}
	if (c->held)
		return;
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	if (!strstr(c->buf, "\r\n\r\n")) {
		if (c->len == sizeof(c->buf) - 1)
			reply(c, 431, "");
		return;
	}
	if (sscanf(c->buf, "%15s %511s", method, path) != 2) {
		reply(c, 400, "");
		return;
	}
	serve(c, method, path);
}

static void on_accept(int lfd, enum port port)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), i;
	struct conn *c;

	if (fd < 0)
		return;
	for (i = 0; i < MAX_CONN && S.conns[i]; i++)
		;
	c = i < MAX_CONN ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->port = port;
	S.conns[i] = c;
}

/* ---- the loop ------------------------------------------------------------ */

static void on_signal(void)
{
	struct signalfd_siginfo si;

	while (read(S.sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			int status;
			pid_t pid;

			while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
				if (pid != S.envoy)
					continue;
				/* Old Istio: pilot-agent stays up without its Envoy; the container never exits. */
				logev("envoy exited");
				S.envoy = 0;
			}
		} else if (si.ssi_signo == SIGTERM) {
			on_sigterm();
		} else {
			logev("got SIG%s", si.ssi_signo == SIGINT ? "INT" : "QUIT");
			finish(0);
		}
	}
}

static void run(void)
{
	for (;;) {
		struct pollfd pfd[1 + MAX_LISTEN + MAX_CONN];
		struct conn *polled[MAX_CONN];
		long now = mono_ms(), timeout = -1;
		int n = 0, i, np = 0;

		if (S.consul_answer && now >= S.answer_at_ms) {
			reply(S.consul_answer, 200, "");
			S.consul_answer = NULL;
			if (!S.stop_ignore)
				finish(0);
		}
		if (S.exit_at_ms >= 0 && now >= S.exit_at_ms)
			finish(S.exit_code);
		if (!S.ready_logged && now >= S.ready_at_ms && !S.draining)
			ready();
		if (!S.ready_logged)
			timeout = S.ready_at_ms - now;
		if (S.exit_at_ms >= 0 && (timeout < 0 || S.exit_at_ms - now < timeout))
			timeout = S.exit_at_ms - now;
		if (S.consul_answer && (timeout < 0 || S.answer_at_ms - now < timeout))
			timeout = S.answer_at_ms - now;

		pfd[n++] = (struct pollfd){ .fd = S.sigfd, .events = POLLIN };
		for (i = 0; i < S.nlisten; i++)
			pfd[n++] = (struct pollfd){ .fd = S.listen[i].fd, .events = POLLIN };
		for (i = 0; i < MAX_CONN; i++) {
			if (!S.conns[i])
				continue;
			polled[np++] = S.conns[i];
			pfd[n++] = (struct pollfd){ .fd = S.conns[i]->fd, .events = POLLIN };
		}
		if (poll(pfd, (nfds_t)n, (int)timeout) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (pfd[0].revents)
			on_signal();
		for (i = 0; i < S.nlisten; i++)
			if (pfd[1 + i].revents)
				on_accept(S.listen[i].fd, S.listen[i].port);
		for (i = 0; i < np; i++)
			if (pfd[1 + S.nlisten + i].revents)
				on_readable(polled[i]);
	}
}

static void setup_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	S.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (S.sigfd < 0)
		die("signalfd");
}

/* pilot-agent's Envoy: a child named envoy, dying with its parent (Istio sets Pdeathsig). */
static void fork_envoy(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid > 0) {
		S.envoy = pid;
		return;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, "envoy");
	/* Signals stay blocked (inherited); the parent's signalfd is the parent's. */
	close(S.sigfd);
	S.name = "envoy";
	S.kind = ENVOY;
	S.istio_envoy = true;
	S.envoy = 0;
	S.term_drain_ms = 0;
	S.stop_hang = S.stop_ignore = S.ignore_term = false;
	S.stop_status = 0;
	setup_signals();
	logev("started");
	add_listener(P_ENVOY_ADMIN, 15000, false);
	add_listener(P_ENVOY_READY, 15021, true);
	run();
}

static void usage(const char *what)
{
	fprintf(stderr, "stand-in: %s (see tests/helpers/standin.c)\n", what);
	exit(64);
}

int main(int argc, char **argv)
{
	static const struct { const char *name; enum kind kind; } names[] = {
		{ "pilot-agent", PILOT }, { "envoy", ENVOY }, { "linkerd2-proxy", LINKERD },
		{ "cloud-sql-proxy", CLOUDSQL }, { "daprd", DAPR }, { "vault", VAULT },
		{ "consul-dataplane", CONSUL },
	};
	const char *started = NULL, *env;
	size_t k;
	int i;

	S.name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (strcmp(S.name, names[k].name) == 0)
			break;
	if (k == sizeof(names) / sizeof(names[0]))
		usage("run it as pilot-agent, envoy, linkerd2-proxy, cloud-sql-proxy, daprd, vault or consul-dataplane");
	S.kind = names[k].kind;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--stop-hang") == 0)
			S.stop_hang = true;
		else if (strcmp(a, "--stop-ignore") == 0)
			S.stop_ignore = true;
		else if (strcmp(a, "--ignore-term") == 0)
			S.ignore_term = true;
		else if (strcmp(a, "--quitquitquit") == 0)
			S.quitquitquit = true;
		else if (strcmp(a, "--health-check") == 0)
			S.health_check = true;
		else if (strcmp(a, "--exit-zero-on-sigterm") == 0)
			S.exit_zero_on_sigterm = true;
		else if (strcmp(a, "--enable-quit") == 0)
			S.enable_quit = true;
		else if (strcmp(a, "agent") == 0 && S.kind == VAULT)
			; /* vault agent */
		else if ((strcmp(a, "proxy") == 0 || strcmp(a, "sidecar") == 0) && S.kind == PILOT)
			; /* pilot-agent proxy sidecar, as Istio's injector runs it */
		else if (S.kind == CLOUDSQL && (strncmp(a, "--port=", 7) == 0 || (a[0] != '-' && strchr(a, ':'))))
			; /* the listener port for the app and the instance connection names: not served */
		else if (!v)
			usage("unknown option or missing value");
		else if (strcmp(a, "--ready-after") == 0)
			S.ready_at_ms = parse_ms(v), i++;
		else if (strcmp(a, "--stop-status") == 0)
			S.stop_status = atoi(v), i++;
		else if (strcmp(a, "--term-drain") == 0)
			S.term_drain_ms = parse_ms(v), i++;
		else if (strcmp(a, "--admin-port") == 0)
			S.admin_port = atoi(v), i++;
		else if (strcmp(a, "--http-port") == 0)
			S.http_port = atoi(v), i++;
		else if (strcmp(a, "--status-port") == 0)
			S.status_port = atoi(v), i++;
		else if (strcmp(a, "--log") == 0)
			S.logfd = open(v, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666), i++;
		else if (strcmp(a, "--started") == 0)
			started = v, i++;
		else
			usage("unknown option");
	}
	env = getenv("LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED");
	S.shutdown_enabled = env && strcmp(env, "true") == 0;
	if (S.term_drain_ms < 0)
		S.term_drain_ms = S.kind == PILOT ? 5000 : 0;
	signal(SIGPIPE, SIG_IGN);
	/* Before the fork: an early SIGCHLD from pilot-agent's Envoy must not be lost. */
	setup_signals();
	logev("started");
	/*
	 * --ready-after counts from the logged start, rounded up to the next
	 * whole millisecond: readiness logged any sooner than the full delay
	 * after "started" would be a stand-in faster than it says (the clock
	 * read in whole milliseconds could otherwise give 4,999 ms).
	 */
	S.start_ms = mono_ms() + 1;
	S.ready_at_ms += S.start_ms;

	switch (S.kind) {
	case PILOT:
		fork_envoy();
		if (S.status_port != 0)
			add_listener(P_PILOT, S.status_port > 0 ? S.status_port : 15020, true);
		break;
	case ENVOY:
		add_listener(P_ENVOY_ADMIN, S.admin_port > 0 ? S.admin_port : 15000, false);
		break;
	case LINKERD:
		add_listener(P_LINKERD, 4191, true);
		break;
	case CLOUDSQL:
		if (S.health_check)
			add_listener(P_SQL_HEALTH, S.http_port > 0 ? S.http_port : 9090, false);
		if (S.quitquitquit)
			add_listener(P_SQL_ADMIN, S.admin_port > 0 ? S.admin_port : 9091, false);
		break;
	case DAPR:
		add_listener(P_DAPR, 3500, true);
		break;
	case VAULT:
		add_listener(P_VAULT, 8200, false);
		break;
	case CONSUL:
		add_listener(P_CONSUL, 20600, false);
		break;
	}
	if (started) {
		int fd = open(started, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);

		if (fd >= 0)
			close(fd);
	}
	run();
	return 0;
}
