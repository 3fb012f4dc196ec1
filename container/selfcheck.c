/*
 * The static build's self-check (container/build-static.sh runs it in an
 * empty root: no /etc/hosts, no nsswitch.conf, no resolv.conf, no NSS
 * modules; through qemu-user in a cross build). It proves what the agent
 * needs from the libcurl it links:
 *
 *  - http://localhost:PORT and http://127.0.0.1:PORT reach a server on the
 *    loopback address without any name service (libcurl answers "localhost"
 *    itself and never resolves numeric addresses);
 *  - the library was built minimal: plain HTTP, no TLS, no compression;
 *
 * and that the static libyaml of the same prefix links and parses.
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
#include <yaml.h>

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

#ifndef RG_YAML_PC_VERSION
#error "build with -DRG_YAML_PC_VERSION='\"the version pkg-config gives for yaml-0.1\"'"
#endif

/* The static libyaml is the one pkg-config describes, and parses a mapping. */
static void check_yaml(void)
{
	static const char doc[] = "sidecars:\n  - istio\n  - match: fluent-bit\n";
	int major, minor, patch, scalars = 0, done = 0, ok = 1;
	yaml_parser_t parser;
	yaml_event_t event;
	char what[160], version[32];

	yaml_get_version(&major, &minor, &patch);
	snprintf(version, sizeof(version), "%d.%d.%d", major, minor, patch);
	snprintf(what, sizeof(what), "libyaml %s (%s), pkg-config yaml-0.1 %s", yaml_get_version_string(), version,
		 RG_YAML_PC_VERSION);
	check(strcmp(version, yaml_get_version_string()) == 0 && strcmp(version, RG_YAML_PC_VERSION) == 0, what);

	if (!yaml_parser_initialize(&parser)) {
		check(0, "yaml_parser_initialize");
		return;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)doc, sizeof(doc) - 1);
	while (ok && !done) {
		ok = yaml_parser_parse(&parser, &event);
		if (!ok)
			break;
		scalars += event.type == YAML_SCALAR_EVENT;
		done = event.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&event);
	}
	yaml_parser_delete(&parser);
	snprintf(what, sizeof(what), "libyaml parses a small document: %d scalars, want 4", scalars);
	check(ok && done && scalars == 4, what);
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
	check_yaml();

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
