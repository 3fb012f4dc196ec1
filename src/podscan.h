/*
 * The pod as /proc shows it: which containers exist, which process is each
 * one's root, and what role each container plays.
 *
 * A container is the set of processes that share a cgroup (every line of
 * /proc/PID/cgroup). Its root is its earliest-started process with ppid 0:
 * exec sessions and exec probes also have ppid 0, but start later. Where
 * every process shows the same cgroup (no cgroup per container), the
 * subtrees under the ppid-0 processes are the containers instead. A
 * runtime's init (runc:[2:INIT]) with ppid 0 is a container of its own
 * wherever it is first seen, but in a live container's cgroup (an exec
 * session's): the cgroup may be the runtime's for a moment, shared by other
 * inits, until it is moved into its own, or into a live container's, which
 * then takes its processes (it was an exec session's; merged).
 *
 * podscan_refresh() reads /proc and classifies only the pids it has not seen
 * before: a process whose parent is known inherits the parent's container
 * (a fork stays in its cgroup), so a busy pod costs one readdir, plus one
 * stat per new process. Roots never change once chosen; a root that exits
 * (reported by the caller, who watches it) ends its container for good: a
 * restarted container shows up under a new cgroup, so as a new container.
 * The processes of a container that is over are read again at every
 * refresh until they are gone, so that a pid reused meanwhile (by a
 * restarted container's root, say) is never filed under the dead one.
 *
 * podscan is the only reader of /proc: start times, command lines and
 * ancestors are read through it too, so the unit tests' fake /proc covers
 * everything the agent sees. From podscan_new() on it holds /proc open and
 * one descriptor in reserve for its reads, so that none of them fails when
 * the caller's pidfds have taken every other descriptor.
 *
 *	struct podscan *ps;
 *	podscan_new(&cfg, &ps);
 *	podscan_refresh(ps, &stats);
 *	for (i = 0; i < podscan_count(ps); i++) { c = podscan_container(ps, i); ... }
 */
#ifndef RG_PODSCAN_H
#define RG_PODSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PODSCAN_NAME_MAX 64

enum podscan_role {
	ROLE_PENDING, /* its root is still the runtime's init (runc:[2:INIT]): not exec'd yet */
	ROLE_PAUSE,   /* holds pid 1 */
	ROLE_SELF,    /* the agent's own container */
	ROLE_APP,
	ROLE_SIDECAR,
	ROLE_OTHER,   /* --app given and nothing in it matches */
};

enum podscan_match { MATCH_NONE, MATCH_APP, MATCH_SIDECAR };

struct podscan_config {
	const char *proc_path; /* "/proc"; the unit tests build a fake tree */
	pid_t self_pid;        /* the agent's pid as proc_path numbers it */
	/*
	 * Classifies one process by its container's name in the pod (kname, ""
	 * when unknown), its comm, the basename of its argv[0] ("" when
	 * unknown) and its whole command line (argc 0 when it was not read: a
	 * fork of a known process, or the drain's scans).
	 */
	enum podscan_match (*classify)(void *arg, const char *kname, const char *comm, const char *argv0,
				       const char *const *argv, size_t argc, size_t *sidecar);
	void *arg;
};

/* The sidecar index of a container that is no sidecar, or of a process no sidecar spec took. */
#define PODSCAN_NO_SIDECAR SIZE_MAX

struct podscan_container {
	unsigned id;            /* 1, 2, ... in order of discovery */
	char *key;              /* cgroup key, or "tree:PID:START" without cgroups */
	char *display;          /* the cgroup path worth logging, whole (part of key, or key) */
	enum podscan_role role;
	size_t sidecar;         /* spec index when role == ROLE_SIDECAR, else PODSCAN_NO_SIDECAR */
	pid_t root;             /* 0: its root had exited before it was first seen */
	uint64_t root_start;
	char name[PODSCAN_NAME_MAX]; /* the root's argv[0] basename, else its comm */
	/*
	 * The container's name in its pod, as the kubelet mounted it (its
	 * termination-message file, proc_mountinfo_container); "" when no
	 * mount names it (no kubelet, or its root was gone first).
	 */
	char kname[PODSCAN_NAME_MAX];
	unsigned nprocs;        /* live processes at the last refresh */
	bool root_gone;         /* its root exited: the container is over */
	bool merged;            /* no container: an exec session's runtime init, merged into the one it joined */
	bool is_new;            /* first seen by the last refresh */
	bool role_changed;      /* role set or changed by the last refresh (not for new ones) */
	bool renamed;           /* its root exec'd under another name at the last refresh */
	/* The caller's: when it first saw the container, by its own clock (podscan reads none). */
	int64_t seen_us;
	void *data;             /* the caller's, for its own state of this container */
};

struct podscan_stats {
	unsigned listed;     /* pids in /proc */
	unsigned classified; /* new pids read this time */
	unsigned cgroup_reads;
	unsigned unreadable; /* new pids that could not be read (EMFILE, ENOMEM...): read again next time */
	int error;           /* the first of those errors */
};

struct podscan;

int podscan_new(const struct podscan_config *cfg, struct podscan **out);
void podscan_free(struct podscan *ps);

/*
 * Rescans /proc. -errno only when /proc itself cannot be read; pids that
 * could not be read are counted in the stats (the picture is incomplete).
 */
int podscan_refresh(struct podscan *ps, struct podscan_stats *stats);

size_t podscan_count(const struct podscan *ps);
struct podscan_container *podscan_container(const struct podscan *ps, size_t i);
struct podscan_container *podscan_find(const struct podscan *ps, unsigned id);

/*
 * Whether the pid namespace handed out a pid (a process or a thread was
 * born) since the last refresh began: its counter, ns_last_pid, moved.
 * Reading it is one small read, cheap enough to do far more often than a
 * refresh: a container that lives and dies between two refreshes moves it.
 * A pid is handed out before its process shows in /proc (a fork's cgroup
 * work comes between): while the last refresh did not list the newest pid,
 * it says yes again, for a few refreshes (after which the pid counts as a
 * process gone already, or a thread's). 1 yes, 0 no, -errno when the
 * counter cannot be read (then never).
 */
int podscan_pids_moved(struct podscan *ps);

/* True when containers are told apart by process subtree, not by cgroup. */
bool podscan_flat(const struct podscan *ps);

/*
 * True when the kubelet's mounts name the containers (the agent's own has
 * its name, kname), from the first refresh on: a container whose name is
 * not known is then one whose main process exited before its mounts could
 * be read, not one of a pod without names.
 */
bool podscan_names_seen(const struct podscan *ps);

/* The root of c exited: c is over, and its pid may now be reused by anyone. */
void podscan_root_exited(struct podscan *ps, struct podscan_container *c);

/* A process as the last refresh saw it: its start time tells it from a later one with its pid. */
struct podscan_proc {
	pid_t pid;
	uint64_t start;
};

/*
 * The live processes of c as of the last refresh, oldest first, in *out,
 * which the caller frees (NULL when there are none). Returns how many, or
 * -ENOMEM.
 */
ssize_t podscan_procs(const struct podscan *ps, const struct podscan_container *c, struct podscan_proc **out);

/*
 * Reads the start time of pid and whether it is a zombie (exited, not yet
 * reaped). -ENOENT when no such pid exists; other -errno (EMFILE, ...) when
 * it could not be read, which says nothing about the process.
 */
int podscan_start_time(const struct podscan *ps, pid_t pid, uint64_t *start, bool *zombie);

/*
 * How long a process of start time start (clock ticks after boot, as
 * /proc/PID/stat gives it) has run at boot (boot_us(): CLOCK_BOOTTIME, the
 * clock /proc counts from, in the time namespace /proc shows too), in
 * microseconds. The start is cut to a whole tick: the process is taken to
 * have begun at the next one, the youngest it can be. 0 when the start is
 * later (or cannot be told).
 */
int64_t podscan_age(uint64_t start, int64_t boot);

/*
 * The command line of pid (NUL-separated arguments, at most cap - 1 bytes,
 * NUL-terminated), if pid still has the given start time. -ESRCH when it is
 * gone or is another process now; -EPERM, with nothing read, after
 * podscan_names_only.
 */
int podscan_cmdline(const struct podscan *ps, pid_t pid, uint64_t start, char *buf, size_t cap, size_t *len);

/* The real and saved uids of pid (the Uid line of its status), if it still has the start time. */
int podscan_uids(const struct podscan *ps, pid_t pid, uint64_t start, uid_t *ruid, uid_t *suid);

/*
 * Whether pid (if it still has the start time) is ready for signo: it
 * catches, ignores or blocks it (SigCgt, SigIgn, SigBlk in its status) and
 * sleeps (State S: its start-up is over). 1 yes, PODSCAN_IGNORES yes but
 * it ignores signo (it will not end of it), 0 not yet, -ESRCH when it is
 * gone, or -errno.
 */
#define PODSCAN_IGNORES 2
int podscan_catches(const struct podscan *ps, pid_t pid, uint64_t start, int signo);

/*
 * What pid (if it still has the start time) does with signo, read from
 * the SigCgt, SigIgn and SigBlk masks of its status: PODSCAN_FATE_* below,
 * or -ESRCH when it is gone, or -errno. Unlike podscan_catches, whatever
 * its state: this is what the signal will do to it now.
 */
#define PODSCAN_FATE_HANDLES 1 /* it catches or blocks it */
#define PODSCAN_FATE_IGNORES 2 /* it ignores it: the signal does nothing */
#define PODSCAN_FATE_DIES 3    /* neither, and the default action ends a process: it dies of it */
int podscan_fate(const struct podscan *ps, pid_t pid, uint64_t start, int signo);

/* pid and its ancestors up to (not including) pid 1, at most cap of them; returns how many. */
size_t podscan_ancestors(const struct podscan *ps, pid_t pid, pid_t *out, size_t cap);

/*
 * From now on no command line is read: names come from comm alone, and
 * podscan_cmdline refuses with -EPERM. Reading /proc/PID/cmdline takes the
 * process's memory lock, which a process stuck in the kernel (D state) may
 * hold for ever; once the drain has begun, names no longer matter (a
 * sidecar's forks are filed by their parent), and the stop must not wait
 * on a stuck process.
 */
void podscan_names_only(struct podscan *ps);

/*
 * The root of pending container c exited (or was gone before it could be
 * watched): its role and name are settled now, from what is left to see.
 * A zombie not reaped yet still shows the name of the program it ran;
 * otherwise the program was never seen, and the container keeps the
 * runtime init's name and what that name matched (an app, unless --app
 * says otherwise). A zombie whose cgroup is a live container's was an exec
 * session's (merged). An init seen only outside the pod's cgroups that
 * never ran a program never joined a container: merged too, with nothing
 * left of it (an exec session's or a probe's, done before it joined; a
 * runtime runs a container's program in the container's cgroup). Call
 * before podscan_root_exited().
 */
void podscan_settle_pending(struct podscan *ps, struct podscan_container *c);

/*
 * Container c has had long enough to exec its program (the caller's
 * clock says so: decide's, through pod): from the next refresh on it is
 * never pending, and is classified by what its root shows, the runtime's
 * init, or its comm where its command line is still empty (an exec that
 * never completes, a root that wipes its command line). podscan keeps no
 * time of its own.
 */
void podscan_pending_over(struct podscan *ps, struct podscan_container *c);

/*
 * pid is not the process the last refresh filed under its number (a watch
 * found another start time): the next refresh reads it afresh.
 */
void podscan_stale(struct podscan *ps, pid_t pid);

const char *podscan_role_name(enum podscan_role role);

#endif
