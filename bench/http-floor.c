/*
 * The machine's share of "app exit -> stop request received" for a sidecar
 * stopped over HTTP: a client idle for IDLE_MS connects to a server on
 * 127.0.0.1 that has been idle as long (blocked in poll, as a proxy's admin
 * port is), and sends a POST; the server notes the time once it has read
 * it. No libcurl, no agent: two processes, loopback TCP and two wake-ups
 * after an idle spell, which is what any HTTP stop costs on this machine.
 *
 *   http-floor [N] [IDLE_MS]    prints one line per sample: microseconds
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Accepts one connection at a time, reads a request, reports when it had it. */
static void serve(int lfd, int report)
{
	for (;;) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		char buf[512];
		long long t;
		int fd;

		if (poll(&pfd, 1, -1) < 0)
			_exit(1);
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			_exit(1);
		pfd.fd = fd;
		if (poll(&pfd, 1, -1) < 0 || read(fd, buf, sizeof(buf)) <= 0)
			_exit(1);
		t = now_us();
		if (write(report, &t, sizeof(t)) != sizeof(t))
			_exit(1);
		close(fd);
	}
}

int main(int argc, char **argv)
{
	static const char req[] = "POST /quitquitquit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n";
	int n = argc > 1 ? atoi(argv[1]) : 20, idle_ms = argc > 2 ? atoi(argv[2]) : 500, i, one = 1;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), p[2];
	pid_t server;

	if (n < 1 || idle_ms < 0 || lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lfd, 16) < 0 || getsockname(lfd, (struct sockaddr *)&sa, &len) < 0 || pipe(p) < 0)
		return 2;
	server = fork();
	if (server < 0)
		return 1;
	if (server == 0) {
		close(p[0]);
		serve(lfd, p[1]);
	}
	close(p[1]);
	for (i = 0; i < n; i++) {
		struct timespec idle = { idle_ms / 1000, (long)(idle_ms % 1000) * 1000000 };
		long long sent, got;
		int fd;

		nanosleep(&idle, NULL);
		sent = now_us();
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ||
		    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || write(fd, req, strlen(req)) < 0)
			break;
		if (read(p[0], &got, sizeof(got)) != sizeof(got))
			break;
		printf("%lld\n", got - sent);
		fflush(stdout);
		close(fd);
	}
	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
	return i == n ? 0 : 1;
}
