/*
 * The http:// URLs of sidecar specs, from users, ConfigMaps and other
 * containers' command lines. A parsed URL has a terminated host that fits,
 * a port from 1 to 65535 and a path inside the string, and means the same
 * once written back; a refused one leaves the output alone.
 */
#include "config.h"

#include "fuzz.h"
#include "url.h"

#include <errno.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	char *s = fuzz_rest(&in), again[URL_MAX + URL_HOST_MAX + 16];
	struct url u, before, u2;
	const char *why = NULL;
	size_t n;
	int rc;

	memset(&u, 0x5a, sizeof(u));
	before = u;
	rc = url_parse(s, &u, &why);
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL);
		FUZZ_CHECK(memcmp(&u, &before, sizeof(u)) == 0);
		FUZZ_CHECK(why && *why);
		free(s);
		return 0;
	}
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(strncasecmp(s, "http://", 7) == 0);
	n = strnlen(u.host, sizeof(u.host));
	FUZZ_CHECK(n > 0 && n < sizeof(u.host));
	FUZZ_CHECK(u.port >= 1 && u.port <= 65535);
	FUZZ_CHECK(u.path >= s + 7 && u.path <= s + strlen(s));
	FUZZ_CHECK(u.path[0] == '\0' || u.path[0] == '/' || u.path[0] == '?');
	FUZZ_CHECK(!strpbrk(u.host, "/?#@ []"));

	snprintf(again, sizeof(again), strchr(u.host, ':') ? "http://[%s]:%u%s" : "http://%s:%u%s", u.host, u.port,
		 u.path);
	if (strlen(again) < URL_MAX) {
		FUZZ_CHECK(url_parse(again, &u2, &why) == 0);
		FUZZ_CHECK(strcmp(u2.host, u.host) == 0 && u2.port == u.port && strcmp(u2.path, u.path) == 0);
	}
	free(s);
	return 0;
}
