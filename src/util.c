#include "config.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int64_t clock_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * US_PER_S + ts.tv_nsec / 1000;
}

int64_t mono_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

int64_t real_us(void)
{
	return clock_us(CLOCK_REALTIME);
}

int64_t boot_us(void)
{
	return clock_us(CLOCK_BOOTTIME);
}

int read_small_fd(int fd, char *buf, size_t cap, size_t *len, unsigned how)
{
	size_t got = 0;

	if (cap == 0)
		return -EINVAL;
	while (got < cap - 1) {
		ssize_t n = read(fd, buf + got, cap - 1 - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (how == READ_ONE_SHOT)
			break;
	}
	buf[got] = '\0';
	*len = got;
	return 0;
}

int read_small_at(int dirfd, const char *path, int flags, char *buf, size_t cap, size_t *len)
{
	int fd, err;

	if (cap == 0)
		return -EINVAL;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	err = read_small_fd(fd, buf, cap, len, READ_TO_END);
	close(fd);
	return err;
}

int read_whole_fd(int fd, size_t max, char **buf, size_t *len)
{
	size_t n = 0, cap = 0;
	char *b = NULL, *grown;

	for (;;) {
		ssize_t got;

		if (cap - n < 65536 + 1) {
			cap = cap ? cap * 2 : 65536 * 2;
			grown = realloc(b, cap);
			if (!grown) {
				free(b);
				return -ENOMEM;
			}
			b = grown;
		}
		got = read(fd, b + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;

			free(b);
			return -e;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > max) {
			free(b);
			return -EFBIG;
		}
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fd_reserve_take(struct fd_reserve *r)
{
	r->fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return r->fd < 0 ? -errno : 0;
}

int fd_reserve_openat(struct fd_reserve *r, int dirfd, const char *path, int flags, mode_t mode)
{
	int fd = openat(dirfd, path, flags, mode);

	if (fd >= 0)
		return fd;
	/*
	 * The process's own limit only (EMFILE): ENFILE is the node's, whose
	 * table would have no room for the reserve again either.
	 */
	if (errno != EMFILE || !r || r->fd < 0)
		return -errno;
	close(r->fd);
	r->fd = -1;
	fd = openat(dirfd, path, flags, mode);
	if (fd < 0) {
		fd = -errno;
		(void)fd_reserve_take(r);
	}
	return fd;
}

int fd_reserve_close(struct fd_reserve *r, int fd)
{
	int rc = close(fd) < 0 ? -errno : 0;

	/* The number just freed is the reserve's again; if another took it meanwhile, the next close tries. */
	if (r && r->fd < 0)
		(void)fd_reserve_take(r);
	return rc;
}

void fd_reserve_drop(struct fd_reserve *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

int write_atomic_at(int dirfd, const char *path, const void *data, size_t len, mode_t mode, struct fd_reserve *r)
{
	char tmp[256];
	int fd, err, rc;

	if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.tmp.%ld", base_name(path), (long)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	/* A leftover from a crashed run, or something planted: never write through it. */
	unlinkat(dirfd, tmp, 0);
	fd = fd_reserve_openat(r, dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return fd;
	err = write_all(fd, data, len);
	/* The umask must not narrow what the readers of the shared volume may do. */
	if (!err && fchmod(fd, mode) < 0)
		err = -errno;
	rc = fd_reserve_close(r, fd);
	if (rc < 0 && !err)
		err = rc;
	if (!err && renameat(dirfd, tmp, dirfd, path) < 0)
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	return err;
}

size_t str_copy(char *dst, const char *src, size_t cap)
{
	size_t n = strlen(src);

	if (cap > 0) {
		size_t m = n < cap - 1 ? n : cap - 1;

		memcpy(dst, src, m);
		dst[m] = '\0';
	}
	return n;
}

void format_utc_ms(int64_t real_time_us, char out[UTC_MS_MAX])
{
	time_t secs = (time_t)(real_time_us / US_PER_S);
	int ms = (int)(real_time_us % US_PER_S / 1000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(out, UTC_MS_MAX, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

const char *base_name(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash ? slash + 1 : s;
}

bool runtime_init_name(const char *name)
{
	return strncmp(name, "runc:[", 6) == 0 || strcmp(name, "runc") == 0 || strcmp(name, "crun") == 0 ||
	       strcmp(name, "youki") == 0;
}

void *array_grow(void *items, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t want;
	void *grown;

	if (n < *cap)
		return items;
	want = *cap ? *cap * 2 : first;
	if (want <= n || want > SIZE_MAX / size)
		return NULL;
	grown = realloc(items, want * size);
	if (grown)
		*cap = want;
	return grown;
}

int failf(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return code;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return code;
}
