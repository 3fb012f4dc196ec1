/*
 * The static build's self-check (container/build-static.sh runs it in an
 * empty root: no /etc/hosts, no nsswitch.conf, no resolv.conf, no NSS
 * modules). It proves what the agent needs from the libcurl it links:
 *
 *  - http://localhost:PORT and http://127.0.0.1:PORT reach a server on the
 *    loopback address without any name service (libcurl answers "localhost"
 *    itself and never resolves numeric addresses);
 *  - the library was built minimal: plain HTTP, no TLS, no compression.
 *
 * Exit 0 when all holds; otherwise one line per problem and exit 1.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAILED", what);
	if (!ok)
		failures++;
}

/* Answers every connection with a 200 "ok" until it is killed. */
static void serve(int lfd)
{
	static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

	for (;;) {
		char req[2048];
		size_t got = 0;
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			continue;
		while (got < sizeof(req) - 1) {
			ssize_t n = read(fd, req + got, sizeof(req) - 1 - got);

			if (n <= 0)
				break;
			got += (size_t)n;
			req[got] = '\0';
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		if (write(fd, reply, sizeof(reply) - 1) < 0)
			_exit(1);
		close(fd);
	}
}

static size_t collect(char *data, size_t size, size_t n, void *arg)
{
	char *body = arg;
	size_t have = strlen(body), len = size * n;

	if (have + len < 64) {
		memcpy(body + have, data, len);
		body[have + len] = '\0';
	}
	return len;
}

static void fetch(const char *url)
{
	char body[64] = "", what[160];
	long status = 0;
	CURLcode rc;
	CURL *h = curl_easy_init();

	if (!h) {
		check(0, "curl_easy_init");
		return;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, (void *)body);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	snprintf(what, sizeof(what), "GET %s: %s, status %ld, body \"%s\"", url,
		 rc == CURLE_OK ? "done" : curl_easy_strerror(rc), status, body);
	check(rc == CURLE_OK && status == 200 && strcmp(body, "ok") == 0, what);
	curl_easy_cleanup(h);
}

int main(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	curl_version_info_data *v;
	char url[64], what[256];
	int lfd, only_http;
	pid_t server;

	check(access("/etc/hosts", F_OK) != 0, "no /etc/hosts here (an empty root)");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	v = curl_version_info(CURLVERSION_NOW);
	only_http = v->protocols[0] && strcmp(v->protocols[0], "http") == 0 && !v->protocols[1];
	snprintf(what, sizeof(what), "libcurl %s: protocols %s%s, no TLS, no compression", v->version,
		 v->protocols[0] ? v->protocols[0] : "none", v->protocols[0] && v->protocols[1] ? " and more" : "");
	check(only_http && !v->ssl_version && !v->libz_version && !(v->features & CURL_VERSION_SSL), what);

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 8) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) < 0) {
		perror("selfcheck: loopback server");
		return 1;
	}
	server = fork();
	if (server < 0) {
		perror("selfcheck: fork");
		return 1;
	}
	if (server == 0)
		serve(lfd);
	close(lfd);

	snprintf(url, sizeof(url), "http://localhost:%d/healthz/ready", ntohs(sa.sin_port));
	fetch(url);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/quitquitquit", ntohs(sa.sin_port));
	fetch(url);

	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
