#include "config.h"

#include "url.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

static bool host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
	       c == '_';
}

static bool ipv6_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
}

int url_parse(const char *s, struct url *out, const char **why)
{
	const char *p, *host, *host_end, *end;
	unsigned long port = 80;
	size_t n;

	if (strncasecmp(s, "https://", 8) == 0) {
		*why = "only http:// URLs are supported (admin ports are plain HTTP on loopback)";
		return -EINVAL;
	}
	if (strncasecmp(s, "http://", 7) != 0) {
		*why = "it does not start with http://";
		return -EINVAL;
	}
	if (strlen(s) >= URL_MAX) {
		*why = "it is too long";
		return -EINVAL;
	}
	for (p = s; *p; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			*why = "spaces and control characters are not allowed";
			return -EINVAL;
		}
		if (*p == '#') {
			*why = "a fragment (#) has no meaning here";
			return -EINVAL;
		}
	}
	host = s + 7;
	end = host + strcspn(host, "/?");
	if (memchr(host, '@', (size_t)(end - host))) {
		*why = "credentials (user@host) are not supported";
		return -EINVAL;
	}
	if (*host == '[') {
		host++;
		for (host_end = host; host_end < end && ipv6_char(*host_end); host_end++)
			;
		if (host_end == end || *host_end != ']' || host_end == host) {
			*why = "a bracketed host must be an IPv6 address";
			return -EINVAL;
		}
		p = host_end + 1;
	} else {
		for (host_end = host; host_end < end && host_char(*host_end); host_end++)
			;
		p = host_end;
	}
	if (host_end == host) {
		*why = "it has no host";
		return -EINVAL;
	}
	if (p < end && *p != ':') {
		*why = "the host has characters a host name cannot have";
		return -EINVAL;
	}
	if (p < end) {
		const char *d = p + 1;

		port = 0;
		for (; d < end && *d >= '0' && *d <= '9' && port <= 65535; d++)
			port = port * 10 + (unsigned long)(*d - '0');
		if (d != end || d == p + 1 || port == 0 || port > 65535) {
			*why = "the port must be a number from 1 to 65535";
			return -EINVAL;
		}
	}
	n = (size_t)(host_end - host);
	if (n >= URL_HOST_MAX) {
		*why = "the host name is too long";
		return -EINVAL;
	}
	memcpy(out->host, host, n);
	out->host[n] = '\0';
	out->port = (unsigned)port;
	out->path = end;
	return 0;
}
