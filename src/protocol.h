/*
 * The file protocol on the shared volume (--dir, an emptyDir):
 *
 *	ready       written by the agent: every sidecar is ready
 *	apps/NAME   written by an app: it finished; content "CODE\n"
 *	drain       written by anyone: drain now
 *	apps-done   written by the agent: the apps are done, the drain runs
 *	done        written by the agent: the JSON summary, at the end
 *
 * A struct protocol watches the directory (and apps/) with inotify on the
 * loop and calls back for each file of it that appears (enum protocol_file,
 * from protocol-files.h): for ready, drain, apps-done and done when a
 * regular file of that name exists, for apps/NAME with the parsed exit code.
 * The watch is set up before the directory is read, so nothing written
 * earlier is missed; an overflowed queue makes it read everything again, so
 * callbacks must be idempotent. Files are only read as regular files through
 * the directory fd (O_NOFOLLOW), at most PROTOCOL_READ_MAX bytes; a
 * malformed report is logged once and ignored.
 *
 *	protocol_open(&p, loop, dir, PROTOCOL_OPEN_AGENT, on_file, data, &spare);
 *	... on_file(&p, PROTOCOL_REPORT, "job", 0) ...
 *	protocol_write(&p, "apps-done", "apps-done\n", 10);
 *	protocol_close(&p);
 *
 * rearguard wait and run open one without flags: the directory may not
 * exist yet (its parent is watched until it does), and apps/ is not read.
 * protocol_write_report() writes apps/NAME for run.
 *
 * The agent's pidfds may take every descriptor RLIMIT_NOFILE allows, and
 * what the protocol must not lose then (the ready, apps-done and done
 * files, a report, read once) is opened with a descriptor held in reserve
 * behind it (struct fd_reserve, util.h), the agent's, lent at
 * protocol_open. Everything else is held from protocol_open on: inotify,
 * the directory, apps/ (listed through the same descriptor, rewound).
 */
#ifndef RG_PROTOCOL_H
#define RG_PROTOCOL_H

#include "protocol-files.h"

#include <dirent.h>
#include <ev.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PROTOCOL_READ_MAX 4096 /* bytes read from any file at most */
#define PROTOCOL_NAME_MAX 63   /* longest apps/NAME */
#define PROTOCOL_CODE_MAX 255

/* Modes: the volume is used by several uids; see docs/protocol.md. */
#define PROTOCOL_DIR_MODE 0777  /* --dir, when rearguard creates it (as the kubelet makes an emptyDir) */
#define PROTOCOL_APPS_MODE 01777 /* apps/: every uid may report, none may replace another's report */
#define PROTOCOL_FILE_MODE 0644  /* every file rearguard writes: readable by all */

/* protocol_open flags */
#define PROTOCOL_OPEN_CREATE 1u /* create the directory (and apps/) when missing */
#define PROTOCOL_OPEN_APPS 2u   /* watch and read apps/ */
#define PROTOCOL_OPEN_AGENT (PROTOCOL_OPEN_CREATE | PROTOCOL_OPEN_APPS)

struct fd_reserve;
struct protocol;
/* name: the file's (apps/NAME's NAME for a report); code: the exit code for PROTOCOL_REPORT, else 0. */
typedef void protocol_cb(struct protocol *p, enum protocol_file file, const char *name, int code);

/* A malformed report already logged, so that it is logged once. */
struct protocol_logged {
	char name[PROTOCOL_NAME_MAX + 1];
	dev_t dev;
	ino_t ino;
	long long mtime_ns, size;
};

struct protocol {
	ev_io io;
	struct ev_loop *loop;
	char *dir;
	unsigned flags;
	int ifd;          /* inotify */
	int dirfd;        /* -1 while the directory does not exist */
	int appsfd;       /* -1 while apps/ does not exist (or without PROTOCOL_OPEN_APPS) */
	DIR *apps_dir;    /* its listing, on the same descriptor */
	struct fd_reserve *spare; /* lent by the caller: behind the writes and the reports' reads */
	int wd_dir, wd_apps, wd_parent;
	protocol_cb *cb;
	void *data;
	struct protocol_logged logged[16];
	unsigned nlogged;
};

/*
 * Watches dir, then reads what is there (callbacks may run before it
 * returns). -errno when the directory cannot be used (nor, without
 * PROTOCOL_OPEN_CREATE, its parent watched), or inotify is unavailable.
 * spare (NULL: none) stays the caller's, and must outlive the protocol.
 */
int protocol_open(struct protocol *p, struct ev_loop *loop, const char *dir, unsigned flags, protocol_cb *cb,
		  void *data, struct fd_reserve *spare);
void protocol_close(struct protocol *p);

/* Delivers every protocol file there is once more (callbacks must be idempotent anyway). */
void protocol_reread(struct protocol *p);

/* Writes dir/name atomically (a temporary name, then rename: a symlink there is replaced). */
int protocol_write(struct protocol *p, const char *name, const void *data, size_t len);

/* For rearguard run: writes dir/apps/NAME ("CODE\n"), creating apps/ if needed; or removes it. */
int protocol_write_report(const char *dir, const char *name, int code);
int protocol_remove_report(const char *dir, const char *name);

/*
 * sidecars/, for rearguard sidecar (the wrapper of a sidecar's program)
 * and the agent:
 *
 *	sidecars/NAME.stop  written by the agent: send the signal named in it
 *	                    ("TERM\n") to the program; written again for each
 *	                    escalation (TERM, KILL)
 *	sidecars/NAME       written by the wrapper when its program ended:
 *	                    "CODE HOW\n", the container's exit code and how the
 *	                    program ended (exited:N, signal:NAME, timeout)
 *
 * The directory's fd, created (mode 1777, as apps/) when create is set and
 * it is missing; -errno.
 */
#define PROTOCOL_SIDECARS "sidecars"
#define PROTOCOL_STOP_SUFFIX ".stop"
#define PROTOCOL_HOW_MAX 32 /* "signal:RTMIN+30", "exited:255", "timeout" */
int protocol_sidecars_dir(const char *dir, bool create);
/* Writes sidecars/NAME.stop naming signo. */
int protocol_write_stop(const char *dir, const char *name, int signo);
/*
 * Reads sidecars/NAME: 0 with the code and how, -ENOENT when the wrapper
 * wrote none, -EINVAL when it is malformed.
 */
int protocol_read_end(const char *dir, const char *name, int *code, char *how, size_t cap);
/* Parses "CODE HOW\n" of sidecars/NAME; -EINVAL and why when it is not that. */
int protocol_parse_end(const char *buf, size_t len, int *code, char *how, size_t cap, const char **why);
/* Whether name is usable as apps/NAME: 1 to PROTOCOL_NAME_MAX printable characters, no '/', no leading '.'. */
bool protocol_name_ok(const char *name);

/*
 * Parses the content of apps/NAME: decimal digits and an optional newline,
 * 0 to 255. Returns 0 and stores the code, or -EINVAL and says why ("empty",
 * "binary content", ...), leaving *code alone. len may be PROTOCOL_READ_MAX
 * for a file that was longer (it was cut).
 */
int protocol_parse_code(const char *buf, size_t len, int *code, const char **why);

/* What one inotify event means to the watcher: a file, or one of its own concerns. */
enum protocol_event_kind {
	PROTOCOL_EV_NOTHING,  /* not a protocol file: a temporary name, a directory, an unknown name */
	PROTOCOL_EV_FILE,     /* a file of the protocol was written: see file */
	PROTOCOL_EV_APPS_DIR, /* apps/ appeared */
	PROTOCOL_EV_DIR,      /* the directory itself appeared in its parent */
	PROTOCOL_EV_REREAD,   /* the queue overflowed or a watch went away: read everything again */
};

/* One decoded inotify event. */
struct protocol_event {
	enum protocol_event_kind kind;
	enum protocol_file file; /* PROTOCOL_EV_FILE's; PROTOCOL_NFILES with the other kinds */
	char name[NAME_MAX + 1];
};

/*
 * Decodes the inotify event at the start of buf (len bytes) for a watcher
 * whose watches are wd_dir, wd_apps and wd_parent (-1: none) and whose
 * directory's last path component is base. Returns the bytes the event
 * takes, or 0 when buf does not hold a whole event.
 */
size_t protocol_decode(const void *buf, size_t len, int wd_dir, int wd_apps, int wd_parent, const char *base,
		       struct protocol_event *ev);

#endif
