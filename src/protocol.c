#include "config.h"

#include "protocol.h"

#include "log.h"
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

static const struct {
	const char *name;
	enum protocol_what what;
} dir_files[] = {
	{ "ready", PROTOCOL_READY },
	{ "drain", PROTOCOL_DRAIN },
	{ "apps-done", PROTOCOL_APPS_DONE },
	{ "done", PROTOCOL_DONE },
};

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
	ev->what = PROTOCOL_NOTHING;

	if (h.mask & IN_Q_OVERFLOW) {
		ev->what = PROTOCOL_REREAD;
	} else if (h.mask & IN_IGNORED) {
		/* A watch removed by the kernel (directory deleted); old ones we removed ourselves are stale. */
		if (h.wd == wd_dir || h.wd == wd_apps)
			ev->what = PROTOCOL_REREAD;
	} else if (h.wd == wd_parent && wd_parent >= 0) {
		if ((h.mask & IN_ISDIR) && strcmp(ev->name, base) == 0)
			ev->what = PROTOCOL_DIR;
	} else if (h.wd == wd_dir && wd_dir >= 0) {
		if (h.mask & IN_ISDIR) {
			if (strcmp(ev->name, "apps") == 0)
				ev->what = PROTOCOL_APPS_DIR;
		} else {
			for (i = 0; i < ARRAY_SIZE(dir_files); i++)
				if (strcmp(ev->name, dir_files[i].name) == 0)
					ev->what = dir_files[i].what;
		}
	} else if (h.wd == wd_apps && wd_apps >= 0) {
		/* IN_CREATE alone is not enough: the content follows; temporary names start with '.'. */
		if (!(h.mask & IN_ISDIR) && (h.mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) && ev->name[0] &&
		    ev->name[0] != '.')
			ev->what = PROTOCOL_REPORT;
	}
	return total;
}

/* ---- the directory ----------------------------------------------------- */

/* Watches the directory behind fd: through /proc so that the watch and the fd agree. */
static int add_watch(struct protocol *s, int fd, const char *path, uint32_t mask)
{
	char self[64];
	int wd;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	wd = inotify_add_watch(s->ifd, self, mask);
	if (wd < 0 && errno == ENOENT)
		wd = inotify_add_watch(s->ifd, path, mask); /* no /proc */
	return wd < 0 ? -errno : wd;
}

static void rm_watch(struct protocol *s, int *wd)
{
	if (*wd >= 0)
		inotify_rm_watch(s->ifd, *wd);
	*wd = -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
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

static void attach_apps(struct protocol *s)
{
	struct stat old, now;
	char path[PATH_MAX];
	int fd, wd;

	fd = open_apps(s->dirfd, s->flags & PROTOCOL_CREATE);
	if (fd < 0) {
		/* Missing: its creation is an event on the directory. */
		if (fd != -ENOENT)
			log_msg(LOG_WARN, FIELDS(LF_STR("dir", s->dir), LF_STR("error", strerror(-fd))),
				"cannot use apps/: exit-code reports are not read until it can be");
		return;
	}
	if (s->appsfd >= 0 && fstat(s->appsfd, &old) == 0 && fstat(fd, &now) == 0 && old.st_dev == now.st_dev &&
	    old.st_ino == now.st_ino) {
		close(fd);
		return;
	}
	snprintf(path, sizeof(path), "%s/apps", s->dir);
	wd = add_watch(s, fd, path, DIR_MASK);
	if (wd < 0) {
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", s->dir), LF_STR("error", strerror(-wd))), "cannot watch apps/");
		close(fd);
		return;
	}
	rm_watch(s, &s->wd_apps);
	close_fd(&s->appsfd);
	s->appsfd = fd;
	s->wd_apps = wd;
}

static const char *base_of(const struct protocol *s)
{
	return base_name(s->dir);
}

/* Watches the parent of a directory that does not exist yet. */
static int watch_parent(struct protocol *s)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(s->dir, '/');
	int fd, wd;

	if (s->wd_parent >= 0)
		return 0;
	if (!slash)
		str_copy(parent, ".", sizeof(parent));
	else if (slash == s->dir)
		str_copy(parent, "/", sizeof(parent));
	else
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - s->dir), s->dir);
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	wd = add_watch(s, fd, parent, PARENT_MASK);
	close(fd);
	if (wd < 0)
		return wd;
	s->wd_parent = wd;
	return 0;
}

/* (Re)opens and watches the directory and apps/. 0 also while the directory is awaited. */
static int attach(struct protocol *s)
{
	bool made = false;
	int fd, wd, rc;

	if (s->dirfd < 0) {
		fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && (s->flags & PROTOCOL_CREATE)) {
			if (mkdir(s->dir, PROTOCOL_DIR_MODE) == 0)
				made = true;
			else if (errno != EEXIST)
				return -errno;
			fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		if (fd < 0 && errno == ENOENT && !(s->flags & PROTOCOL_CREATE)) {
			/* Watch the parent first, then look again: it may have appeared meanwhile. */
			rc = watch_parent(s);
			if (rc < 0)
				return rc;
			fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0 && errno == ENOENT)
				return 0;
		}
		if (fd < 0)
			return -errno;
		if (made)
			(void)fchmod(fd, PROTOCOL_DIR_MODE);
		wd = add_watch(s, fd, s->dir, DIR_MASK);
		if (wd < 0) {
			close(fd);
			return wd;
		}
		s->dirfd = fd;
		s->wd_dir = wd;
		rm_watch(s, &s->wd_parent);
	}
	if (s->flags & PROTOCOL_APPS)
		attach_apps(s);
	return 0;
}

static void detach(struct protocol *s)
{
	rm_watch(s, &s->wd_dir);
	rm_watch(s, &s->wd_apps);
	close_fd(&s->dirfd);
	close_fd(&s->appsfd);
}

static bool is_regular_at(int dirfd, const char *name)
{
	struct stat st;

	return dirfd >= 0 && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* ---- reports ----------------------------------------------------------- */

/* Logs a malformed report, once per version of the file (name, inode, mtime, size). */
static void malformed(struct protocol *s, const char *name, const struct stat *st, const char *why)
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
	for (i = 0; i < ARRAY_SIZE(s->logged) && i < s->nlogged; i++)
		if (memcmp(&s->logged[i], &sig, sizeof(sig)) == 0)
			return;
	s->logged[s->nlogged++ % ARRAY_SIZE(s->logged)] = sig;
	snprintf(file, sizeof(file), "apps/%s", sig.name);
	log_msg(LOG_WARN, FIELDS(LF_STR("file", file), LF_STR("reason", why)), "ignoring a malformed exit-code report");
}

static void read_report(struct protocol *s, const char *name)
{
	char buf[PROTOCOL_READ_MAX + 1];
	const char *why = NULL;
	struct stat st;
	size_t len = 0;
	int fd, rc, code = 0;

	if (!protocol_name_ok(name)) {
		malformed(s, name, NULL, "the name is not 1 to 63 printable characters without a leading dot");
		return;
	}
	if (fstatat(s->appsfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return; /* gone again */
	if (!S_ISREG(st.st_mode)) {
		malformed(s, name, &st, S_ISLNK(st.st_mode) ? "a symbolic link (never followed)" : "not a regular file");
		return;
	}
	/* O_NONBLOCK: whatever replaced it meanwhile (a FIFO) must not block the loop. */
	fd = openat(s->appsfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ELOOP)
			malformed(s, name, &st, "a symbolic link (never followed)");
		else if (errno != ENOENT)
			malformed(s, name, &st, errno == EACCES ? "not readable by rearguard's uid (make it mode 0644)"
								: strerror(errno));
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		malformed(s, name, NULL, "not a regular file");
		return;
	}
	rc = read_small_fd(fd, buf, sizeof(buf), &len, READ_TO_END);
	close(fd);
	if (rc < 0)
		why = strerror(-rc);
	else if (protocol_parse_code(buf, len, &code, &why) == 0)
		why = NULL;
	if (why) {
		malformed(s, name, &st, why);
		return;
	}
	s->cb(s, PROTOCOL_REPORT, name, code);
}

/* Delivers every protocol file there is (at start, and after an overflow). */
static void reread(struct protocol *s)
{
	struct dirent *de;
	size_t i;
	DIR *d;
	int fd;

	for (i = 0; i < ARRAY_SIZE(dir_files) && s->ifd >= 0; i++)
		if (is_regular_at(s->dirfd, dir_files[i].name))
			s->cb(s, dir_files[i].what, dir_files[i].name, 0);
	if (s->appsfd < 0 || s->ifd < 0)
		return;
	fd = openat(s->appsfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", s->dir), LF_STR("error", strerror(errno))), "cannot list apps/");
		return;
	}
	while ((de = readdir(d)) != NULL && s->ifd >= 0)
		if (de->d_name[0] != '.' && de->d_type != DT_DIR)
			read_report(s, de->d_name);
	closedir(d);
}

void protocol_reread(struct protocol *s)
{
	if (s->dirfd >= 0)
		reread(s);
}

static bool deleted(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_nlink == 0;
}

static void reattach(struct protocol *s)
{
	int rc = attach(s);

	if (rc < 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", s->dir), LF_STR("error", strerror(-rc))),
			"cannot watch the directory");
	reread(s);
}

static void on_inotify(struct ev_loop *loop, ev_io *io, int revents)
{
	struct protocol *s = io->data;
	/* Room for many events; the kernel never splits one. */
	char buf[16 * (sizeof(struct inotify_event) + NAME_MAX + 1)] __attribute__((aligned(8)));
	struct protocol_event ev;
	bool again = false;

	for (;;) {
		ssize_t n = read(s->ifd, buf, sizeof(buf));
		size_t off = 0, used;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EAGAIN: drained */
		while (off < (size_t)n && s->ifd >= 0 &&
		       (used = protocol_decode(buf + off, (size_t)n - off, s->wd_dir, s->wd_apps, s->wd_parent,
					       base_of(s), &ev)) > 0) {
			off += used;
			switch (ev.what) {
			case PROTOCOL_NOTHING:
				break;
			case PROTOCOL_REPORT:
				if (s->appsfd >= 0)
					read_report(s, ev.name);
				break;
			case PROTOCOL_APPS_DIR:
			case PROTOCOL_DIR:
			case PROTOCOL_REREAD:
				again = true;
				break;
			default:
				if (is_regular_at(s->dirfd, ev.name))
					s->cb(s, ev.what, ev.name, 0);
				break;
			}
		}
		if (s->ifd < 0)
			return; /* closed by a callback */
	}
	if (again) {
		log_msg(LOG_DEBUG, FIELDS(LF_STR("dir", s->dir)), "reading the directory again");
		/* A deleted directory's fd is useless: look it up again. */
		if (deleted(s->dirfd)) {
			detach(s);
		} else if (deleted(s->appsfd)) {
			rm_watch(s, &s->wd_apps);
			close_fd(&s->appsfd);
		}
		reattach(s);
	}
}

int protocol_open(struct protocol *s, struct ev_loop *loop, const char *dir, unsigned flags, protocol_cb *cb,
		  void *data)
{
	size_t n;
	int rc;

	memset(s, 0, sizeof(*s));
	s->ifd = s->dirfd = s->appsfd = -1;
	s->wd_dir = s->wd_apps = s->wd_parent = -1;
	s->loop = loop;
	s->flags = flags;
	s->cb = cb;
	s->data = data;
	s->dir = strdup(dir);
	if (!s->dir)
		return -ENOMEM;
	/* "/x/y/" names the same directory as "/x/y": its parent is /x. */
	for (n = strlen(s->dir); n > 1 && s->dir[n - 1] == '/'; n--)
		s->dir[n - 1] = '\0';
	s->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (s->ifd < 0) {
		rc = -errno;
		protocol_close(s);
		return rc;
	}
	rc = attach(s);
	if (rc < 0) {
		protocol_close(s);
		return rc;
	}
	ev_io_init(&s->io, on_inotify, s->ifd, EV_READ);
	s->io.data = s;
	ev_io_start(loop, &s->io);
	reread(s);
	return 0;
}

void protocol_close(struct protocol *s)
{
	if (s->ifd >= 0 && s->loop)
		ev_io_stop(s->loop, &s->io);
	close_fd(&s->dirfd);
	close_fd(&s->appsfd);
	close_fd(&s->ifd); /* removes every watch */
	s->wd_dir = s->wd_apps = s->wd_parent = -1;
	free(s->dir);
	s->dir = NULL;
}

int protocol_write(struct protocol *s, const char *name, const void *data, size_t len)
{
	if (s->dirfd < 0)
		return -ENOENT;
	return write_atomic_at(s->dirfd, name, data, len, PROTOCOL_FILE_MODE);
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
	rc = write_atomic_at(fd, name, text, strlen(text), PROTOCOL_FILE_MODE);
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
