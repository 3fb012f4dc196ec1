#include "config.h"

#include "tap.h"
#include "url.h"

#include <errno.h>
#include <string.h>

static void parses(const char *s, const char *host, unsigned port, const char *path)
{
	struct url u;
	const char *why = NULL;

	is_int(url_parse(s, &u, &why), 0, "%s parses (%s)", s, why ? why : "");
	is_str(u.host, host, "host of %s", s);
	is_int(u.port, port, "port of %s", s);
	is_str(u.path, path, "path of %s", s);
}

static void refused(const char *s, const char *needle)
{
	struct url u = { .host = "untouched", .port = 7 };
	const char *why = NULL;

	is_int(url_parse(s, &u, &why), -EINVAL, "refused: %s", s);
	ok(why && strstr(why, needle), "why for \"%s\" mentions \"%s\" (%s)", s, needle, why ? why : "(null)");
	ok(strcmp(u.host, "untouched") == 0 && u.port == 7, "output untouched on failure");
}

int main(void)
{
	char longurl[URL_MAX + 8];

	parses("http://127.0.0.1:15020/quitquitquit", "127.0.0.1", 15020, "/quitquitquit");
	parses("http://localhost/ready", "localhost", 80, "/ready");
	parses("http://localhost", "localhost", 80, "");
	parses("HTTP://Proxy.Local:8200", "Proxy.Local", 8200, "");
	parses("http://[::1]:4191/shutdown", "::1", 4191, "/shutdown");
	parses("http://127.0.0.1:15000/stats?filter=^server.total_connections$", "127.0.0.1", 15000,
	       "/stats?filter=^server.total_connections$");
	parses("http://127.0.0.1:15000?x=1", "127.0.0.1", 15000, "?x=1");
	parses("http://a:65535/", "a", 65535, "/");

	refused("https://127.0.0.1/quit", "only http://");
	refused("ftp://127.0.0.1/", "http://");
	refused("127.0.0.1:15020/quitquitquit", "http://");
	refused("http://", "no host");
	refused("http:///path", "no host");
	refused("http://:80/", "no host");
	refused("http://127.0.0.1:0/", "port");
	refused("http://127.0.0.1:65536/", "port");
	refused("http://127.0.0.1:99999999999999999999/", "port");
	refused("http://127.0.0.1:/", "port");
	refused("http://127.0.0.1:8o/", "port");
	refused("http://user:secret@127.0.0.1/", "credentials");
	refused("http://127.0.0.1/a b", "spaces");
	refused("http://127.0.0.1/\x01", "control");
	refused("http://127.0.0.1/#top", "fragment");
	refused("http://[::1/", "IPv6");
	refused("http://[]/", "IPv6");
	refused("http://[zz]/", "IPv6");
	refused("http://host!/", "host name cannot have");
	memset(longurl, 'a', sizeof(longurl) - 1);
	memcpy(longurl, "http://", 7);
	longurl[sizeof(longurl) - 1] = '\0';
	refused(longurl, "too long");
	return done_testing();
}
