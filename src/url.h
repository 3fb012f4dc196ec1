/*
 * The http:// URLs of sidecar specs, checked once when the spec is parsed
 * and taken apart for what rearguard needs beyond libcurl: the host (to pin
 * "localhost" to 127.0.0.1 without a resolver) and the port (to recognise
 * a proxy's documented endpoint when giving advice).
 *
 *	struct url u;
 *	const char *why;
 *	if (url_parse("http://127.0.0.1:15020/quitquitquit", &u, &why) < 0)
 *		... why: "the port must be 1 to 65535" ...
 *	u.host "127.0.0.1", u.port 15020, u.path "/quitquitquit"
 *
 * Only plain http: admin ports are plain HTTP on loopback. Credentials,
 * fragments, spaces and control characters are refused rather than passed
 * on for libcurl to interpret.
 */
#ifndef RG_URL_H
#define RG_URL_H

#define URL_MAX 1024
#define URL_HOST_MAX 256

struct url {
	char host[URL_HOST_MAX]; /* an IPv6 literal without its brackets */
	unsigned port;           /* 80 when the URL gives none */
	const char *path;        /* into the parsed string: "/...", "?..." or "" */
};

/* 0, or -EINVAL with why pointing at a static phrase; out is untouched then. */
int url_parse(const char *s, struct url *out, const char **why);

#endif
