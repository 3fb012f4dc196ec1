/*
 * Small helpers shared by every module: clocks, bounded reads of foreign
 * files, atomic writes, string copies that always terminate.
 *
 * Errors are returned as -errno; out-parameters are left alone on failure.
 */
#ifndef RG_UTIL_H
#define RG_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define US_PER_MS INT64_C(1000)
#define US_PER_S INT64_C(1000000)

/* Monotonic time in microseconds: every deadline and latency uses it. */
int64_t mono_us(void);
/* Wall-clock time in microseconds since the epoch, for log timestamps. */
int64_t real_us(void);
/* Time since boot in microseconds, suspends included: the clock of a process's start time in /proc. */
int64_t boot_us(void);

/*
 * Reads at most cap - 1 bytes of the file at path (relative to dirfd) into
 * buf, NUL-terminates it and stores the length. flags are added to
 * O_RDONLY | O_CLOEXEC (O_NOFOLLOW for files that others may plant).
 * A file longer than the buffer is truncated, never an error.
 */
int read_small_at(int dirfd, const char *path, int flags, char *buf, size_t cap, size_t *len);

/* How read_small_fd reads. */
#define READ_TO_END 0u
/*
 * One read(2) is the whole file: procfs generates stat, cgroup and cmdline
 * in one go when they fit, so the read that would confirm the end is saved
 * (a quarter of the system calls of a /proc scan).
 */
#define READ_ONE_SHOT 1u

/* The same from an open fd (the caller has checked what it is). */
int read_small_fd(int fd, char *buf, size_t cap, size_t *len, unsigned how);

/*
 * Writes len bytes to path (relative to dirfd) atomically: a temporary file
 * in the same directory, fsync-free (the readers are in the same pod), then
 * rename over path. A symlink at path is replaced, never followed.
 */
int write_atomic_at(int dirfd, const char *path, const void *data, size_t len, mode_t mode);

/* Writes all of buf to fd, retrying on EINTR and short writes. */
int write_all(int fd, const void *buf, size_t len);

/*
 * Whether a process name is a container runtime's init (runc:[2:INIT],
 * runc, crun, youki): what a container's main process is called before it
 * execs its program. A container named so had its program never seen.
 */
bool runtime_init_name(const char *name);

/* strlcpy semantics: always terminates, returns strlen(src). */
size_t str_copy(char *dst, const char *src, size_t cap);

/* Formats a wall-clock time as 2026-01-02T03:04:05.678Z (24 bytes + NUL). */
#define UTC_MS_MAX 64
void format_utc_ms(int64_t real_time_us, char out[UTC_MS_MAX]);

/* The last path component of s (s itself when it has no '/'). */
const char *base_name(const char *s);

/*
 * Room for element n of an array that grows by doubling (first elements,
 * then twice as many each time; *cap holds the count, size is one
 * element's): the array, moved or not, or NULL when there is no memory for
 * it (items and *cap are then untouched).
 *
 *	p = array_grow(list, n, &cap, sizeof(*list), 8);
 *	if (!p) ... -ENOMEM ...
 *	list = p; list[n++] = item;
 */
void *array_grow(void *items, size_t n, size_t *cap, size_t size, size_t first);

/*
 * A failure that is logged far from its cause says what failed there
 * (crun's libcrun_error_t, made small): the -errno its callers act on,
 * and the words of the place that knew, which the log line takes whole.
 *
 *	struct rg_error err = { 0 };
 *	rc = stopper_request(st, ..., &err);    deep down: return rg_error_set(err, -EIO, "curl_...: %s", ...);
 *	if (rc < 0) log_msg(..., LF_STR("error", err.msg), "cannot start an HTTP request");
 *
 * It is filled once, where the failure happens; err may be NULL (nobody
 * asks), and a function that succeeds leaves it alone.
 */
#define RG_ERROR_MSG_MAX 160
struct rg_error {
	int code; /* -errno, 0: none */
	char msg[RG_ERROR_MSG_MAX];
};

/* Fills err (not NULL) with code and the message; returns code, for `return rg_error_set(...)`. */
int rg_error_set(struct rg_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
