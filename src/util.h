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
 * Every byte of fd up to its end, at most max: a buffer of malloc's in
 * *buf (NUL-terminated, free it) and its length in *len. -EFBIG when there
 * is more than max, -ENOMEM, or read's -errno; *buf is untouched then.
 */
int read_whole_fd(int fd, size_t max, char **buf, size_t *len);

/*
 * A descriptor held in reserve for the opens that must not fail for want of
 * one: the agent's pidfds may take every descriptor RLIMIT_NOFILE allows.
 * Taken before them (fd_reserve_take) and held to the end; when an open
 * fails with EMFILE, fd_reserve_openat closes the reserve and opens again,
 * which takes its number, and fd_reserve_close takes the reserve back
 * once that file is closed. One reserve serves any number of opens made
 * one after the other, never two files at once. Its descriptor is an
 * O_PATH one of "/", of its own: nothing is read or written through it,
 * and it depends on no other descriptor's lifetime.
 *
 *	struct fd_reserve r;
 *	fd_reserve_take(&r);
 *	fd = fd_reserve_openat(&r, dirfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
 *	... write ...
 *	fd_reserve_close(&r, fd);
 *	fd_reserve_drop(&r);
 *
 * A NULL reserve is none: the functions are then openat(2) and close(2).
 */
struct fd_reserve {
	int fd; /* -1 while lent to an open, or when it could not be taken */
};

/* Takes the reserve: 0, or -errno (it is then taken at the next fd_reserve_close). */
int fd_reserve_take(struct fd_reserve *r);
/* openat(2) that lends the reserve on EMFILE: the new descriptor, or -errno. */
int fd_reserve_openat(struct fd_reserve *r, int dirfd, const char *path, int flags, mode_t mode);
/* close(2) (0 or -errno), then the reserve is taken back if it was lent. */
int fd_reserve_close(struct fd_reserve *r, int fd);
void fd_reserve_drop(struct fd_reserve *r);

/*
 * Writes len bytes to path (relative to dirfd) atomically: a temporary file
 * in the same directory, fsync-free (the readers are in the same pod), then
 * rename over path. A symlink at path is replaced, never followed. The
 * temporary file is opened with the reserve r behind it (NULL: none).
 */
int write_atomic_at(int dirfd, const char *path, const void *data, size_t len, mode_t mode, struct fd_reserve *r);

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
 * The one error contract: a function that can fail with words takes
 * (char *err, size_t errlen) last and returns a -errno; the words, one line,
 * are written once, where the failure is known (a parser's position,
 * libcurl's call and its message), and the caller that logs or prints them
 * takes them whole. A caller that needs no words passes NULL, 0; a function
 * that succeeds leaves err alone.
 *
 *	char err[RG_ERR_MAX] = "";
 *	rc = stopper_request(st, ..., err, sizeof(err));   deep down: return failf(err, errlen, -EIO, "curl_...: %s", ...);
 *	if (rc < 0) log_msg(..., LF_STR("error", err[0] ? err : strerror(-rc)), "cannot start an HTTP request");
 */
#define RG_ERR_MAX 256
/* Writes the words into err (when err and errlen are not 0); returns code, for `return failf(...)`. */
int failf(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
