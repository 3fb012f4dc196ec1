#include "config.h"

#include "proc.h"

#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Parses an unsigned decimal field ending at a space or the end; advances *p. */
static int field_u64(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return -EINVAL;
	while (s < end && *s >= '0' && *s <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s++ - '0');
	}
	if (s < end && *s != ' ' && *s != '\n')
		return -EINVAL;
	*out = v;
	*p = s;
	return 0;
}

/* Skips one space-separated field (which may be signed). */
static int skip_field(const char **p, const char *end)
{
	const char *s = *p;

	if (s >= end || *s == ' ')
		return -EINVAL;
	while (s < end && *s != ' ' && *s != '\n')
		s++;
	*p = s;
	return 0;
}

int proc_parse_stat(const char *buf, size_t len, struct proc_stat *out)
{
	const char *end = buf + len, *open, *close = NULL, *p;
	struct proc_stat st;
	uint64_t v;
	size_t n;
	int field;

	memset(&st, 0, sizeof(st));
	p = buf;
	if (field_u64(&p, end, &v) < 0 || v == 0 || v > INT32_MAX)
		return -EINVAL;
	st.pid = (pid_t)v;
	open = memchr(buf, '(', len);
	if (!open)
		return -EINVAL;
	/* The last ')' ends comm: comm itself may contain ')'. */
	for (p = end; p > open; p--) {
		if (p[-1] == ')') {
			close = p - 1;
			break;
		}
	}
	if (!close)
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n > PROC_COMM_MAX)
		return -EINVAL;
	memcpy(st.comm, open + 1, n);
	st.comm[n] = '\0';

	/* Fields after comm, numbered as in proc(5): 3 state, 4 ppid, 9 flags, 22 starttime. */
	p = close + 1;
	for (field = 3; field <= 22; field++) {
		if (p >= end || *p != ' ')
			return -EINVAL;
		p++;
		switch (field) {
		case 3:
			if (p >= end || *p == ' ')
				return -EINVAL;
			st.state = *p++;
			break;
		case 4:
			if (field_u64(&p, end, &v) < 0 || v > INT32_MAX)
				return -EINVAL;
			st.ppid = (pid_t)v;
			break;
		case 9:
			if (field_u64(&p, end, &v) < 0 || v > UINT32_MAX)
				return -EINVAL;
			st.flags = (unsigned)v;
			break;
		case 22:
			if (field_u64(&p, end, &st.starttime) < 0)
				return -EINVAL;
			break;
		default:
			if (skip_field(&p, end) < 0)
				return -EINVAL;
		}
	}
	*out = st;
	return 0;
}

void proc_parse_argv0(const char *buf, size_t len, char *out, size_t outlen)
{
	size_t n = strnlen(buf, len), start = 0, i;

	/*
	 * A program that rewrote its command line as "name: what" (nginx:
	 * "nginx: master process /usr/sbin/nginx -g ...", postgres: "postgres:
	 * checkpointer") is named by what comes before the colon.
	 */
	for (i = 1; i < n; i++) {
		if (buf[i] == ' ' && buf[i - 1] == ':') {
			n = i - 1;
			break;
		}
	}
	for (i = 0; i < n; i++)
		if (buf[i] == '/')
			start = i + 1;
	if (outlen == 0)
		return;
	n -= start;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, buf + start, n);
	out[n] = '\0';
}

int proc_cgroup_key(const char *buf, size_t len, char *out, size_t outlen)
{
	size_t n = len;

	/* A cgroup file is lines "ID:CONTROLLERS:PATH"; a NUL means it is not one. */
	if (memchr(buf, '\0', len))
		return -EINVAL;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	if (n == 0 || !memchr(buf, ':', n) || n >= outlen)
		return -EINVAL;
	memcpy(out, buf, n);
	out[n] = '\0';
	return (int)n;
}

/* The end of the line at s (its newline or its NUL). */
static const char *line_end(const char *s)
{
	return s + strcspn(s, "\n");
}

/*
 * The line of a cgroup key worth showing: its "0::" line when that tells
 * containers apart from the root, else its first. *line is where that line
 * starts, *path where its path does; NULL when no line is a cgroup line.
 */
static const char *chosen_line(const char *key, const char **line_out)
{
	const char *line = key, *first = NULL, *first_line = NULL, *chosen = NULL, *chosen_line = NULL;

	while (line && *line) {
		const char *nl = line_end(line);
		const char *c1 = memchr(line, ':', (size_t)(nl - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(nl - c1 - 1)) : NULL;

		if (c2) {
			const char *path = c2 + 1;
			size_t plen = (size_t)(nl - path);

			if (!first) {
				first = path;
				first_line = line;
			}
			if (strncmp(line, "0::", 3) == 0 && !(plen == 1 && *path == '/')) {
				chosen = path;
				chosen_line = line;
			}
		}
		line = *nl ? nl + 1 : NULL;
	}
	if (!chosen) {
		chosen = first;
		chosen_line = first_line;
	}
	*line_out = chosen_line;
	return chosen;
}

void proc_cgroup_display(const char *key, char *out, size_t outlen)
{
	const char *line, *chosen = chosen_line(key, &line);

	if (!chosen)
		chosen = key;
	if (outlen == 0)
		return;
	str_copy(out, chosen, outlen);
	/* Cut at the end of that line. */
	out[strcspn(out, "\n")] = '\0';
}

/* The path of key's line for the hierarchy hier ("ID:CONTROLLERS:", hlen bytes); NULL if none. */
static const char *hierarchy_path(const char *key, const char *hier, size_t hlen, size_t *plen)
{
	const char *line = key;

	while (line && *line) {
		const char *nl = line_end(line);

		if ((size_t)(nl - line) >= hlen && memcmp(line, hier, hlen) == 0) {
			*plen = (size_t)(nl - line) - hlen;
			return line + hlen;
		}
		line = *nl ? nl + 1 : NULL;
	}
	return NULL;
}

/*
 * Whether the cgroup path p (plen bytes) is strictly below parent: a
 * descendant, not parent itself, nor a path that climbs out of it again
 * ("/.." is the parent of a cgroup namespace's root, "/../x" a sibling of
 * that root).
 */
static bool path_below(const char *p, size_t plen, const char *parent, size_t len)
{
	const char *rest;

	if (len == 1 && parent[0] == '/')
		len = 0;
	if (plen <= len + 1 || memcmp(p, parent, len) != 0 || p[len] != '/')
		return false;
	rest = p + len + 1;
	plen -= len + 1;
	return !(plen >= 2 && rest[0] == '.' && rest[1] == '.' && (plen == 2 || rest[2] == '/'));
}

int proc_cgroup_pod(const char *self_key, const char *one_key, char *out, size_t outlen)
{
	const char *line, *path = chosen_line(self_key, &line);
	size_t hlen, plen, olen;
	const char *opath;
	int n;

	if (!path)
		return -EINVAL;
	hlen = (size_t)(path - line);
	plen = (size_t)(line_end(path) - path);
	/* The parent: the last component dropped; a namespace's root "/" and ".." climb with "/..". */
	if ((plen == 1 && path[0] == '/') ||
	    (plen >= 3 && memcmp(path + plen - 3, "/..", 3) == 0)) {
		n = snprintf(out, outlen, "%.*s%.*s/..", (int)hlen, line, plen == 1 ? 0 : (int)plen, path);
	} else {
		size_t cut = plen;

		while (cut > 0 && path[cut - 1] != '/')
			cut--;
		if (cut > 1)
			cut--; /* the slash before the last component, unless it is the root's */
		n = snprintf(out, outlen, "%.*s%.*s", (int)hlen, line, (int)cut, path);
	}
	if (n < 0 || (size_t)n >= outlen)
		return -ENAMETOOLONG;
	/* pid 1 (the pause container) is in the pod too: else the layout is not a pod's. */
	opath = hierarchy_path(one_key, line, hlen, &olen);
	if (!opath || !path_below(opath, olen, out + hlen, (size_t)n - hlen))
		return -ENOENT;
	return n;
}

bool proc_cgroup_within(const char *key, const char *pod)
{
	const char *c1 = strchr(pod, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *path;
	size_t hlen, plen;

	if (!c2)
		return false;
	hlen = (size_t)(c2 + 1 - pod);
	path = hierarchy_path(key, pod, hlen, &plen);
	return path && path_below(path, plen, pod + hlen, strlen(pod + hlen));
}

/* The value of the line "KEY:\tvalue" of a status file (blanks skipped), or NULL. */
static const char *status_value(const char *buf, const char *end, const char *key)
{
	const char *p = buf;
	size_t klen = strlen(key);

	/* At the start of the buffer or after a newline: the Name line's escapes keep a comm on its line. */
	for (;;) {
		if ((size_t)(end - p) > klen && memcmp(p, key, klen) == 0 && p[klen] == ':')
			break;
		p = memchr(p, '\n', (size_t)(end - p));
		if (!p)
			return NULL;
		p++;
	}
	p += klen + 1;
	while (p < end && (*p == '\t' || *p == ' '))
		p++;
	return p;
}

int proc_status_sigmask(const char *buf, size_t len, const char *key, uint64_t *out)
{
	const char *end = buf + len, *p = status_value(buf, end, key);
	uint64_t v = 0;
	int digits = 0;

	if (!p)
		return -EINVAL;
	for (; p < end && *p != '\n'; p++) {
		int x;

		if (*p >= '0' && *p <= '9')
			x = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			x = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			x = *p - 'A' + 10;
		else
			return -EINVAL;
		if (++digits > 16)
			return -EINVAL;
		v = v << 4 | (uint64_t)x;
	}
	if (!digits)
		return -EINVAL;
	*out = v;
	return 0;
}

char proc_status_state(const char *buf, size_t len)
{
	const char *end = buf + len, *p = status_value(buf, end, "State");

	if (!p || p >= end || *p < 'A' || *p > 'Z' || (p + 1 < end && p[1] != ' ' && p[1] != '\n'))
		return 0;
	return *p;
}

/* Whether s (n bytes) is a DNS label: what Kubernetes takes as a container's name. */
static bool dns_label(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* The name in a mount's root "…/pods/UID/containers/NAME/ID" (n bytes), or NULL. */
static const char *kubelet_container(const char *root, size_t n, size_t *namelen)
{
	static const char pods[] = "/pods/", containers[] = "/containers/";
	const char *p = root, *end = root + n, *uid, *name, *id;

	while ((p = memmem(p, (size_t)(end - p), pods, sizeof(pods) - 1)) != NULL) {
		uid = p + sizeof(pods) - 1;
		p = uid;
		name = memchr(uid, '/', (size_t)(end - uid));
		if (!name || name == uid || (size_t)(end - name) < sizeof(containers) - 1 ||
		    memcmp(name, containers, sizeof(containers) - 1) != 0)
			continue;
		name += sizeof(containers) - 1;
		id = memchr(name, '/', (size_t)(end - name));
		/* The file's own name (ID) ends the path. */
		if (!id || id + 1 >= end || memchr(id + 1, '/', (size_t)(end - id - 1)) || !dns_label(name, (size_t)(id - name)))
			continue;
		*namelen = (size_t)(id - name);
		return name;
	}
	return NULL;
}

int proc_mountinfo_container(const char *buf, size_t len, char *out, size_t outlen)
{
	const char *line = buf, *end = buf + len;

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *stop = nl ? nl : end, *f = line, *name;
		size_t field, namelen;

		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ...": the fourth field. */
		for (field = 0; field < 3 && f < stop; field++) {
			f = memchr(f, ' ', (size_t)(stop - f));
			f = f ? f + 1 : stop;
		}
		if (f < stop) {
			const char *sp = memchr(f, ' ', (size_t)(stop - f));

			name = kubelet_container(f, (size_t)((sp ? sp : stop) - f), &namelen);
			if (name && namelen < outlen) {
				memcpy(out, name, namelen);
				out[namelen] = '\0';
				return (int)namelen;
			}
		}
		line = stop + 1;
	}
	return -ENOENT;
}
