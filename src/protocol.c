#include "config.h"

#include "protocol.h"

#include "log.h"
#include "parse.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file is complete when its writer closes it or renames it into place. */
#define DIR_MASK (IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_ONLYDIR | IN_EXCL_UNLINK)
#define PARENT_MASK (IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_EXCL_UNLINK)

/* The files in the directory itself, named by protocol_file_name(); the reports are in apps/. */
static const enum protocol_file dir_files[] = { PROTOCOL_READY, PROTOCOL_DRAIN, PROTOCOL_APPS_DONE, PROTOCOL_DONE };

/* ---- pure parts: names, exit codes, inotify events --------------------- */

bool protocol_name_ok(const char *name)
{
	size_t n = strlen(name), i;

	if (n == 0 || n > PROTOCOL_NAME_MAX || name[0] == '.')
		return false;
	for (i = 0; i < n; i++)
		if (name[i] <= ' ' || name[i] > '~' || name[i] == '/')
			return false;
	return true;
}

int protocol_parse_code(const char *buf, size_t len, int *code, const char **why)
{
	size_t i, digits = 0;
	int v = 0;

	if (len == 0) {
		*why = "empty";
		return -EINVAL;
	}
	if (len >= PROTOCOL_READ_MAX) {
		*why = "larger than 4 KiB";
		return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if ((c < ' ' && c != '\n' && c != '\t' && c != '\r') || c >= 0x7f) {
			*why = "binary content";
			return -EINVAL;
		}
	}
	while (digits < len && buf[digits] >= '0' && buf[digits] <= '9') {
		/* Saturate: the value only needs to be known to be too big. */
		if (v <= PROTOCOL_CODE_MAX)
			v = v * 10 + (buf[digits] - '0');
		digits++;
	}
	if (digits == 0 || !(digits == len || (digits == len - 1 && buf[digits] == '\n'))) {
		*why = "not a decimal exit code and a newline";
		return -EINVAL;
	}
	if (v > PROTOCOL_CODE_MAX) {
		*why = "exit code out of range (0 to 255)";
		return -EINVAL;
	}
	*code = v;
	return 0;
}

size_t protocol_decode(const void *buf, size_t len, int wd_dir, int wd_apps, int wd_parent, const char *base,
		       struct protocol_event *ev)
{
	struct inotify_event h;
	size_t total, n, i;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, buf, sizeof(h));
	total = sizeof(h) + h.len;
	if (total > len || total < sizeof(h))
		return 0;
	n = h.len < NAME_MAX ? h.len : NAME_MAX;
	memcpy(ev->name, (const char *)buf + sizeof(h), n);
	ev->name[n] = '\0';
	ev->kind = PROTOCOL_EV_NOTHING;
	ev->file = PROTOCOL_NFILES;

	if (h.mask & IN_Q_OVERFLOW) {
		ev->kind = PROTOCOL_EV_REREAD;
	} else if (h.mask & IN_IGNORED) {
		/* A watch removed by the kernel (directory deleted); old ones we removed ourselves are stale. */
		if (h.wd == wd_dir || h.wd == wd_apps)
			ev->kind = PROTOCOL_EV_REREAD;
	} else if (h.wd == wd_parent && wd_parent >= 0) {
		if ((h.mask & IN_ISDIR) && strcmp(ev->name, base) == 0)
			ev->kind = PROTOCOL_EV_DIR;
	} else if (h.wd == wd_dir && wd_dir >= 0) {
		if (h.mask & IN_ISDIR) {
			if (strcmp(ev->name, "apps") == 0)
				ev->kind = PROTOCOL_EV_APPS_DIR;
		} else {
			for (i = 0; i < ARRAY_SIZE(dir_files); i++) {
				if (strcmp(ev->name, protocol_file_name(dir_files[i])) == 0) {
					ev->kind = PROTOCOL_EV_FILE;
					ev->file = dir_files[i];
				}
			}
		}
	} else if (h.wd == wd_apps && wd_apps >= 0) {
		/* IN_CREATE alone is not enough: the content follows; temporary names start with '.'. */
		if (!(h.mask & IN_ISDIR) && (h.mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) && ev->name[0] &&
		    ev->name[0] != '.') {
			ev->kind = PROTOCOL_EV_FILE;
			ev->file = PROTOCOL_REPORT;
		}
	}
	return total;
}

/* ---- the directory ----------------------------------------------------- */

/* Watches the directory behind fd: through /proc so that the watch and the fd agree. */
static int add_watch(struct protocol *p, int fd, const char *path, uint32_t mask)
{
	char self[64];
	int wd;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	wd = inotify_add_watch(p->ifd, self, mask);
	if (wd < 0 && errno == ENOENT)
		wd = inotify_add_watch(p->ifd, path, mask); /* no /proc */
	return wd < 0 ? -errno : wd;
}

static void rm_watch(struct protocol *p, int *wd)
{
	if (*wd >= 0)
		inotify_rm_watch(p->ifd, *wd);
	*wd = -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Closes apps/ (its listing and its descriptor are one). */
static void close_apps(struct protocol *p)
{
	if (p->apps_dir)
		closedir(p->apps_dir);
	else
		close_fd(&p->appsfd);
	p->apps_dir = NULL;
	p->appsfd = -1;
}

/* Opens dirfd's apps/, creating it (mode PROTOCOL_APPS_MODE, whatever the umask) when asked. */
static int open_apps(int dirfd, bool create)
{
	int fd = openat(dirfd, "apps", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	bool made = false;

	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(dirfd, "apps", PROTOCOL_APPS_MODE) == 0)
			made = true;
		else if (errno != EEXIST)
			return -errno;
		fd = openat(dirfd, "apps", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	if (made)
		(void)fchmod(fd, PROTOCOL_APPS_MODE);
	return fd;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* 0, or -errno when apps/ cannot be used (said here: the protocol goes on without reports). */
static int attach_apps(struct protocol *p)
{
	struct stat old, now;
	char path[PATH_MAX];
	DIR *d;
	int fd, wd, err;

	/* The apps/ held already: nothing to open (a descriptor may be short: see protocol_open). */
	if (p->appsfd >= 0 && fstat(p->appsfd, &old) == 0 &&
	    fstatat(p->dirfd, "apps", &now, AT_SYMLINK_NOFOLLOW) == 0 && same_file(&old, &now))
		return 0;
	fd = open_apps(p->dirfd, p->flags & PROTOCOL_OPEN_CREATE);
	if (fd < 0) {
		/* Missing: its creation is an event on the directory. */
		if (fd != -ENOENT)
			log_msg(LOG_WARN, FIELDS(LF_STR("dir", p->dir), LF_STR("error", strerror(-fd))),
				"cannot use apps/: exit-code reports are not read until it can be");
		return fd;
	}
	if (p->appsfd >= 0 && fstat(p->appsfd, &old) == 0 && fstat(fd, &now) == 0 && same_file(&old, &now)) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/apps", p->dir);
	wd = add_watch(p, fd, path, DIR_MASK);
	if (wd < 0) {
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", p->dir), LF_STR("error", strerror(-wd))), "cannot watch apps/");
		close(fd);
		return wd;
	}
	/* Listed through the same descriptor, rewound (see reread). */
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", p->dir), LF_STR("error", strerror(-err))), "cannot list apps/");
		inotify_rm_watch(p->ifd, wd);
		close(fd);
		return err;
	}
	rm_watch(p, &p->wd_apps);
	close_apps(p);
	p->apps_dir = d;
	p->appsfd = fd;
	p->wd_apps = wd;
	return 0;
}

static const char *base_of(const struct protocol *p)
{
	return base_name(p->dir);
}

/* Watches the parent of a directory that does not exist yet. */
static int watch_parent(struct protocol *p)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(p->dir, '/');
	int fd, wd;

	if (p->wd_parent >= 0)
		return 0;
	if (!slash)
		str_copy(parent, ".", sizeof(parent));
	else if (slash == p->dir)
		str_copy(parent, "/", sizeof(parent));
	else
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - p->dir), p->dir);
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	wd = add_watch(p, fd, parent, PARENT_MASK);
	close(fd);
	if (wd < 0)
		return wd;
	p->wd_parent = wd;
	return 0;
}

/*
 * (Re)opens and watches the directory and apps/. 0 also while the directory
 * is awaited, and when apps/ cannot be used (it says why), unless for want
 * of a descriptor (EMFILE): at protocol_open, before the agent holds any
 * pidfd, that is a limit below what the protocol holds, which the agent
 * refuses to start with rather than run without reports.
 */
static int attach(struct protocol *p)
{
	bool made = false;
	int fd, wd, rc;

	if (p->dirfd < 0) {
		fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && (p->flags & PROTOCOL_OPEN_CREATE)) {
			if (mkdir(p->dir, PROTOCOL_DIR_MODE) == 0)
				made = true;
			else if (errno != EEXIST)
				return -errno;
			fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		if (fd < 0 && errno == ENOENT && !(p->flags & PROTOCOL_OPEN_CREATE)) {
			/* Watch the parent first, then look again: it may have appeared meanwhile. */
			rc = watch_parent(p);
			if (rc < 0)
				return rc;
			fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0 && errno == ENOENT)
				return 0;
		}
		if (fd < 0)
			return -errno;
		if (made)
			(void)fchmod(fd, PROTOCOL_DIR_MODE);
		wd = add_watch(p, fd, p->dir, DIR_MASK);
		if (wd < 0) {
			close(fd);
			return wd;
		}
		p->dirfd = fd;
		p->wd_dir = wd;
		rm_watch(p, &p->wd_parent);
	}
	if ((p->flags & PROTOCOL_OPEN_APPS) && attach_apps(p) == -EMFILE)
		return -EMFILE;
	return 0;
}

static void detach(struct protocol *p)
{
	rm_watch(p, &p->wd_dir);
	rm_watch(p, &p->wd_apps);
	close_fd(&p->dirfd);
	close_apps(p);
}

static bool is_regular_at(int dirfd, const char *name)
{
	struct stat st;

	return dirfd >= 0 && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* ---- reports ----------------------------------------------------------- */

/* Logs a malformed report, once per version of the file (name, inode, mtime, size). */
static void malformed(struct protocol *p, const char *name, const struct stat *st, const char *why)
{
	struct protocol_logged sig;
	char file[PROTOCOL_NAME_MAX + 8];
	unsigned i;

	memset(&sig, 0, sizeof(sig));
	str_copy(sig.name, name, sizeof(sig.name));
	if (st) {
		sig.dev = st->st_dev;
		sig.ino = st->st_ino;
		sig.mtime_ns = (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
		sig.size = (long long)st->st_size;
	}
	for (i = 0; i < ARRAY_SIZE(p->logged) && i < p->nlogged; i++)
		if (memcmp(&p->logged[i], &sig, sizeof(sig)) == 0)
			return;
	p->logged[p->nlogged++ % ARRAY_SIZE(p->logged)] = sig;
	snprintf(file, sizeof(file), "apps/%s", sig.name);
	log_msg(LOG_WARN, FIELDS(LF_STR("file", file), LF_STR("reason", why)), "ignoring a malformed exit-code report");
}

static void read_report(struct protocol *p, const char *name)
{
	char buf[PROTOCOL_READ_MAX + 1];
	const char *why = NULL;
	struct stat st;
	size_t len = 0;
	int fd, rc, code = 0;

	if (!protocol_name_ok(name)) {
		malformed(p, name, NULL, "the name is not 1 to 63 printable characters without a leading dot");
		return;
	}
	if (fstatat(p->appsfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return; /* gone again */
	if (!S_ISREG(st.st_mode)) {
		malformed(p, name, &st, S_ISLNK(st.st_mode) ? "a symbolic link (never followed)" : "not a regular file");
		return;
	}
	/*
	 * O_NONBLOCK: whatever replaced it meanwhile (a FIFO) must not block the
	 * loop. With the reserve behind it: a report the apps' pidfds left no
	 * descriptor for would be lost (it is read once), and a polled app's
	 * report is all that tells its exit code.
	 */
	fd = fd_reserve_openat(p->spare, p->appsfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
	if (fd < 0) {
		if (fd == -ELOOP)
			malformed(p, name, &st, "a symbolic link (never followed)");
		else if (fd != -ENOENT)
			malformed(p, name, &st,
				  fd == -EACCES ? "not readable by rearguard's uid (make it mode 0644)" : strerror(-fd));
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fd_reserve_close(p->spare, fd);
		malformed(p, name, NULL, "not a regular file");
		return;
	}
	rc = read_small_fd(fd, buf, sizeof(buf), &len, READ_TO_END);
	fd_reserve_close(p->spare, fd);
	if (rc < 0)
		why = strerror(-rc);
	else if (protocol_parse_code(buf, len, &code, &why) == 0)
		why = NULL;
	if (why) {
		malformed(p, name, &st, why);
		return;
	}
	p->cb(p, PROTOCOL_REPORT, name, code);
}

/*
 * Delivers every protocol file there is (at start, and after an overflow).
 * apps/ is listed through the descriptor held for it, rewound, as podscan
 * lists /proc: the only descriptor a reread opens is a report's, one at a
 * time, which the reserve can stand in for.
 */
static void reread(struct protocol *p)
{
	char name[NAME_MAX + 1];
	struct dirent *de;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dir_files) && p->ifd >= 0; i++)
		if (is_regular_at(p->dirfd, protocol_file_name(dir_files[i])))
			p->cb(p, dir_files[i], protocol_file_name(dir_files[i]), 0);
	if (!p->apps_dir || p->ifd < 0)
		return;
	rewinddir(p->apps_dir);
	/* A callback may close the protocol: it is looked at before each entry. */
	while (p->ifd >= 0 && (de = readdir(p->apps_dir)) != NULL) {
		if (de->d_name[0] == '.' || de->d_type == DT_DIR)
			continue;
		/* Copied: the entry lives in the listing's buffer, which is the protocol's. */
		str_copy(name, de->d_name, sizeof(name));
		read_report(p, name);
	}
}

void protocol_reread(struct protocol *p)
{
	if (p->dirfd >= 0)
		reread(p);
}

static bool deleted(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_nlink == 0;
}

static void reattach(struct protocol *p)
{
	int rc = attach(p);

	/* apps/ said its own. */
	if (rc < 0 && p->dirfd < 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", p->dir), LF_STR("error", strerror(-rc))),
			"cannot watch the directory");
	reread(p);
}

static void on_inotify(struct ev_loop *loop, ev_io *io, int revents)
{
	struct protocol *p = io->data;
	/* Room for many events; the kernel never splits one. */
	char buf[16 * (sizeof(struct inotify_event) + NAME_MAX + 1)] __attribute__((aligned(8)));
	struct protocol_event ev;
	bool again = false;

	for (;;) {
		ssize_t n = read(p->ifd, buf, sizeof(buf));
		size_t off = 0, used;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EAGAIN: drained */
		while (off < (size_t)n && p->ifd >= 0 &&
		       (used = protocol_decode(buf + off, (size_t)n - off, p->wd_dir, p->wd_apps, p->wd_parent,
					       base_of(p), &ev)) > 0) {
			off += used;
			switch (ev.kind) {
			case PROTOCOL_EV_NOTHING:
				break;
			case PROTOCOL_EV_FILE:
				if (ev.file == PROTOCOL_REPORT) {
					if (p->appsfd >= 0)
						read_report(p, ev.name);
				} else if (is_regular_at(p->dirfd, ev.name)) {
					p->cb(p, ev.file, ev.name, 0);
				}
				break;
			case PROTOCOL_EV_APPS_DIR:
			case PROTOCOL_EV_DIR:
			case PROTOCOL_EV_REREAD:
				again = true;
				break;
			}
		}
		if (p->ifd < 0)
			return; /* closed by a callback */
	}
	if (again) {
		log_msg(LOG_DEBUG, FIELDS(LF_STR("dir", p->dir)), "reading the directory again");
		/* A deleted directory's fd is useless: look it up again. */
		if (deleted(p->dirfd)) {
			detach(p);
		} else if (deleted(p->appsfd)) {
			rm_watch(p, &p->wd_apps);
			close_apps(p);
		}
		reattach(p);
	}
}

int protocol_open(struct protocol *p, struct ev_loop *loop, const char *dir, unsigned flags, protocol_cb *cb,
		  void *data, struct fd_reserve *spare)
{
	size_t n;
	int rc;

	memset(p, 0, sizeof(*p));
	p->ifd = p->dirfd = p->appsfd = -1;
	p->wd_dir = p->wd_apps = p->wd_parent = -1;
	p->loop = loop;
	p->flags = flags;
	p->cb = cb;
	p->data = data;
	p->spare = spare;
	p->dir = strdup(dir);
	if (!p->dir)
		return -ENOMEM;
	/* "/x/y/" names the same directory as "/x/y": its parent is /x. */
	for (n = strlen(p->dir); n > 1 && p->dir[n - 1] == '/'; n--)
		p->dir[n - 1] = '\0';
	p->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (p->ifd < 0) {
		rc = -errno;
		protocol_close(p);
		return rc;
	}
	rc = attach(p);
	if (rc < 0) {
		protocol_close(p);
		return rc;
	}
	ev_io_init(&p->io, on_inotify, p->ifd, EV_READ);
	p->io.data = p;
	ev_io_start(loop, &p->io);
	reread(p);
	return 0;
}

void protocol_close(struct protocol *p)
{
	if (p->ifd >= 0 && p->loop)
		ev_io_stop(p->loop, &p->io);
	close_fd(&p->dirfd);
	close_apps(p);
	close_fd(&p->ifd); /* removes every watch */
	p->wd_dir = p->wd_apps = p->wd_parent = -1;
	free(p->dir);
	p->dir = NULL;
}

int protocol_write(struct protocol *p, const char *name, const void *data, size_t len)
{
	if (p->dirfd < 0)
		return -ENOENT;
	return write_atomic_at(p->dirfd, name, data, len, PROTOCOL_FILE_MODE, p->spare);
}

static int open_report_dir(const char *dir, bool create)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;

	if (dirfd < 0)
		return -errno;
	fd = open_apps(dirfd, create);
	close(dirfd);
	return fd;
}

int protocol_write_report(const char *dir, const char *name, int code)
{
	char text[16];
	int fd = open_report_dir(dir, true), rc;

	if (fd < 0)
		return fd;
	snprintf(text, sizeof(text), "%d\n", code);
	rc = write_atomic_at(fd, name, text, strlen(text), PROTOCOL_FILE_MODE, NULL);
	close(fd);
	return rc;
}

int protocol_remove_report(const char *dir, const char *name)
{
	int fd = open_report_dir(dir, false), rc = 0;

	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	if (unlinkat(fd, name, 0) < 0 && errno != ENOENT)
		rc = -errno;
	close(fd);
	return rc;
}

/* ---- sidecars/: rearguard sidecar and the agent ---------------------------- */

int protocol_sidecars_dir(const char *dir, bool create)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	bool made = false;

	if (dirfd < 0)
		return -errno;
	fd = openat(dirfd, PROTOCOL_SIDECARS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(dirfd, PROTOCOL_SIDECARS, PROTOCOL_APPS_MODE) == 0)
			made = true;
		fd = openat(dirfd, PROTOCOL_SIDECARS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		fd = -errno;
	else if (made)
		(void)fchmod(fd, PROTOCOL_APPS_MODE); /* whatever the umask: every uid's wrapper writes here */
	close(dirfd);
	return fd;
}

int protocol_write_stop(const char *dir, const char *name, int signo)
{
	char file[PROTOCOL_NAME_MAX + sizeof(PROTOCOL_STOP_SUFFIX)], text[24];
	int fd, rc;

	if (!protocol_name_ok(name))
		return -EINVAL;
	fd = protocol_sidecars_dir(dir, true);
	if (fd < 0)
		return fd;
	snprintf(file, sizeof(file), "%s%s", name, PROTOCOL_STOP_SUFFIX);
	snprintf(text, sizeof(text), "%s\n", signal_name(signo));
	rc = write_atomic_at(fd, file, text, strlen(text), PROTOCOL_FILE_MODE, NULL);
	close(fd);
	return rc;
}

/* How a program ended, as the wrapper words it: exited:N, signal:NAME or timeout. */
static bool how_ok(const char *how)
{
	unsigned long n;
	int sig;

	if (strcmp(how, "timeout") == 0)
		return true;
	if (strncmp(how, "exited:", 7) == 0)
		return parse_uint(how + 7, 0, PROTOCOL_CODE_MAX, &n) == 0;
	if (strncmp(how, "signal:", 7) == 0)
		return parse_signal(how + 7, &sig) == 0 && strcmp(signal_name(sig), how + 7) == 0;
	return false;
}

int protocol_parse_end(const char *buf, size_t len, int *code, char *how, size_t cap, const char **why)
{
	char text[16 + PROTOCOL_HOW_MAX], *sp;
	unsigned long n;

	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len == 0 || len >= sizeof(text) || memchr(buf, '\0', len)) {
		*why = len == 0 ? "empty" : "not one short line";
		return -EINVAL;
	}
	memcpy(text, buf, len);
	text[len] = '\0';
	sp = strchr(text, ' ');
	if (!sp || sp == text) {
		*why = "not CODE HOW";
		return -EINVAL;
	}
	*sp = '\0';
	if (parse_uint(text, 0, PROTOCOL_CODE_MAX, &n) < 0 || !how_ok(sp + 1) || strlen(sp + 1) >= cap) {
		*why = "not CODE HOW (exited:N, signal:NAME or timeout)";
		return -EINVAL;
	}
	*code = (int)n;
	str_copy(how, sp + 1, cap);
	return 0;
}

int protocol_read_end(const char *dir, const char *name, int *code, char *how, size_t cap)
{
	char buf[64];
	const char *why;
	size_t len = 0;
	int fd, rc;

	if (!protocol_name_ok(name))
		return -EINVAL;
	fd = protocol_sidecars_dir(dir, false);
	if (fd < 0)
		return fd;
	rc = read_small_at(fd, name, O_NOFOLLOW | O_NONBLOCK, buf, sizeof(buf), &len);
	close(fd);
	if (rc < 0)
		return rc;
	return protocol_parse_end(buf, len, code, how, cap, &why);
}
