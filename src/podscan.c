#include "config.h"

#include "podscan.h"
#include "podscan-private.h"

#include "argv.h"
#include "log.h"
#include "proc.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One live process. Kept small: a pod may hold tens of thousands. */
struct proc_entry {
	pid_t pid; /* 0: empty slot */
	pid_t ppid;
	uint32_t gen;       /* refresh that last listed it */
	uint32_t comm_hash; /* a fork without exec keeps its parent's comm */
	uint32_t container; /* index + 1 into containers; 0: none (kernel thread) */
	uint64_t start;
};

struct container {
	struct podscan_container pub;
	uint32_t index; /* in podscan.containers */
	size_t match_sidecar; /* first sidecar spec one of its processes matched, or PODSCAN_NO_SIDECAR */
	bool match_app;    /* one of its processes matched --app (or there is no --app) */
	bool has_pid1, has_self;
	/*
	 * The root's command line was empty when last read: an exec in
	 * progress (the kernel sets comm before the new command line), so
	 * what the root is not known yet. Pending until it is.
	 */
	bool root_unread;
	/*
	 * Its caller said it has had long enough to exec (podscan_pending_over):
	 * it is classified by what it shows, a runtime's init or a command line
	 * read mid-exec (its comm then), and never pending again.
	 */
	bool pending_over;
	/*
	 * Created for a runtime's init, in the cgroup it was first seen in,
	 * which may be the runtime's for a moment, shared with other inits,
	 * rather than the container's: no other root is filed by this key
	 * until the init has moved or exec'd there (it is the container's
	 * then). A container that is over keeps it for good.
	 */
	bool transient_key;
	char root_comm[PROC_COMM_MAX + 1];
};

struct podscan {
	struct podscan_config cfg;
	DIR *dir;           /* /proc, listed at each refresh, rewound rather than opened again */
	int proc_fd;        /* its descriptor, which every file of /proc is opened relative to */
	/*
	 * A descriptor held in reserve, lent to a read of /proc when no other
	 * descriptor can be had (see open_proc_file). Behind a pointer: the
	 * readers that take a const podscan lend it too, which changes nothing
	 * of what the scan holds about the pod.
	 */
	struct fd_reserve *spare;
	int last_pid_fd;    /* sys/kernel/ns_last_pid; -1 not opened yet, -2 cannot be */
	long last_pid;      /* its value when the last refresh began; -1 unknown */
	/*
	 * A pid is handed out before its process shows in /proc (the fork's
	 * cgroup work comes between, and may wait on other cgroup writes): the
	 * newest pid when the last refresh began, if its listing did not have
	 * it, and how many listings in a row missed it. podscan_pids_moved
	 * asks for a few more looks, or a container that lives less than a
	 * rescan interval slips through.
	 */
	long unlisted_pid;
	unsigned unlisted_looks;
	struct proc_entry *slots;
	size_t cap, used;
	uint32_t gen;
	struct container **containers;
	size_t ncontainers, capc;
	unsigned next_id;
	bool flat, first_done;
	bool no_cmdlines;   /* names from comm alone (podscan_names_only) */
	bool names_seen;    /* podscan_names_seen */
	/*
	 * The pod's cgroup (proc_cgroup_pod): every container's is below it, a
	 * runtime's is not. Empty when the layout shows none (flat, or pid 1
	 * not beside the agent).
	 */
	char pod_cgroup[512];
	char mounts[32768]; /* a root's mount table, read once per container */
	pid_t *fresh;
	size_t nfresh, capfresh;
	struct podscan_stats stats;
	char buf[4096];
};

/* ---- the pid table: open addressing, linear probing ----------------- */

static size_t slot_of(const struct podscan *ps, pid_t pid)
{
	return ((uint32_t)pid * 2654435761u) & (ps->cap - 1);
}

static struct proc_entry *table_find(const struct podscan *ps, pid_t pid)
{
	size_t i;

	for (i = slot_of(ps, pid); ps->slots[i].pid; i = (i + 1) & (ps->cap - 1))
		if (ps->slots[i].pid == pid)
			return &ps->slots[i];
	return NULL;
}

static int table_grow(struct podscan *ps)
{
	struct proc_entry *old = ps->slots;
	size_t oldcap = ps->cap, i;

	ps->slots = calloc(oldcap * 2, sizeof(*ps->slots));
	if (!ps->slots) {
		ps->slots = old;
		return -ENOMEM;
	}
	ps->cap = oldcap * 2;
	for (i = 0; i < oldcap; i++) {
		size_t j;

		if (!old[i].pid)
			continue;
		for (j = slot_of(ps, old[i].pid); ps->slots[j].pid; j = (j + 1) & (ps->cap - 1))
			;
		ps->slots[j] = old[i];
	}
	free(old);
	return 0;
}

static struct proc_entry *table_insert(struct podscan *ps, pid_t pid)
{
	size_t i;

	if ((ps->used + 1) * 2 > ps->cap && table_grow(ps) < 0)
		return NULL;
	for (i = slot_of(ps, pid); ps->slots[i].pid; i = (i + 1) & (ps->cap - 1))
		;
	memset(&ps->slots[i], 0, sizeof(ps->slots[i]));
	ps->slots[i].pid = pid;
	ps->used++;
	return &ps->slots[i];
}

/* Backward-shift deletion: no tombstones, lookups stay short. */
static void table_remove(struct podscan *ps, struct proc_entry *e)
{
	size_t mask = ps->cap - 1, i = (size_t)(e - ps->slots), j = i;

	for (;;) {
		ps->slots[i].pid = 0;
		for (;;) {
			size_t k;

			j = (j + 1) & mask;
			if (!ps->slots[j].pid) {
				ps->used--;
				return;
			}
			k = slot_of(ps, ps->slots[j].pid);
			/* The entry at j may move to i only if its home is not in (i, j]. */
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		ps->slots[i] = ps->slots[j];
		i = j;
	}
}

/* ---- reading /proc ---------------------------------------------------- */

/* Takes the reserve back, if it is out: a failure is tried again after the next read. */
static void keep_spare(const struct podscan *ps)
{
	if (ps->spare->fd < 0)
		(void)fd_reserve_take(ps->spare);
}

/*
 * Opens a file of /proc. When the process has no descriptor left (its
 * pidfds took them), the reserve is lent to the open and taken back once
 * the file is closed (fd_reserve_openat, close_proc_file): a rescan, a
 * start-time check or a poll is never refused for want of a descriptor,
 * however many processes are watched. Only the loop's thread opens
 * descriptors, but for libcurl's resolver thread (a URL that names its
 * host, other than localhost): should it take the number meanwhile, that
 * one read fails as it would have without a reserve, and the reserve is
 * taken back at the next read or refresh.
 */
static int open_proc_file(const struct podscan *ps, const char *path)
{
	return fd_reserve_openat(ps->spare, ps->proc_fd, path, O_RDONLY | O_CLOEXEC, 0);
}

/* Closes what open_proc_file opened: the number it freed is the reserve's again, if the open took it. */
static void close_proc_file(const struct podscan *ps, int fd)
{
	(void)fd_reserve_close(ps->spare, fd);
}

/* Reads /proc/PID/what into buf, in one read (see READ_ONE_SHOT). */
int podscan_read_pid_file(const struct podscan *ps, char *buf, size_t cap, pid_t pid, const char *what,
			  size_t *len)
{
	char path[64];
	int fd, rc;

	snprintf(path, sizeof(path), "%d/%s", (int)pid, what);
	fd = open_proc_file(ps, path);
	if (fd < 0)
		return fd;
	rc = read_small_fd(fd, buf, cap, len, READ_ONE_SHOT);
	close_proc_file(ps, fd);
	return rc;
}

static int read_stat(struct podscan *ps, pid_t pid, struct proc_stat *st)
{
	size_t len;
	int rc = podscan_read_pid_file(ps, ps->buf, sizeof(ps->buf), pid, "stat", &len);

	if (rc < 0)
		return rc;
	rc = proc_parse_stat(ps->buf, len, st);
	if (rc == 0 && st->pid != pid)
		return -EINVAL;
	return rc;
}

static void read_argv0(struct podscan *ps, pid_t pid, char *out, size_t outlen)
{
	size_t len;

	out[0] = '\0';
	/* A command line is read under the process's memory lock: a process stuck in D state holds it. */
	if (ps->no_cmdlines)
		return;
	if (podscan_read_pid_file(ps, ps->buf, sizeof(ps->buf), pid, "cmdline", &len) == 0)
		proc_parse_argv0(ps->buf, len, out, outlen);
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}


/* ---- containers -------------------------------------------------------- */

static struct container *container_new(struct podscan *ps, const char *key)
{
	struct container *c, **grown = array_grow(ps->containers, ps->ncontainers, &ps->capc, sizeof(*grown), 8);

	if (!grown)
		return NULL;
	ps->containers = grown;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pub.key = strdup(key);
	c->pub.display = malloc(strlen(key) + 1);
	if (!c->pub.key || !c->pub.display) {
		free(c->pub.key);
		free(c->pub.display);
		free(c);
		return NULL;
	}
	c->pub.id = ++ps->next_id;
	c->index = (uint32_t)ps->ncontainers;
	c->pub.is_new = true;
	c->pub.sidecar = PODSCAN_NO_SIDECAR;
	c->match_sidecar = PODSCAN_NO_SIDECAR;
	if (strncmp(key, "tree:", 5) == 0)
		strcpy(c->pub.display, key);
	else
		proc_cgroup_display(key, c->pub.display, strlen(key) + 1);
	ps->containers[ps->ncontainers++] = c;
	return c;
}

/*
 * The container a process that cannot inherit one from its parent is filed
 * under, by its cgroup key: the newest container with that key, else a new
 * one. Several containers may have a key. A runtime may move its init into
 * the container's cgroup only after the process is visible in the pod, so
 * the cgroup an init is first seen in may be the runtime's for a moment,
 * where the init of every container it starts is seen: a runtime's init
 * is a container of its own there, followed into its cgroup by
 * rekey_pending, and a process with parent pid 0 (a container's root, or
 * an exec session's) is never filed under such a container. Nor under a
 * container that is over: it gains no new main process. In the cgroup of
 * a live container, it is an exec session's, a process of that container.
 */
static struct container *container_by_key(struct podscan *ps, const struct proc_stat *st, const char *key)
{
	bool root = st->ppid == 0;
	struct container *c;
	size_t i;

	for (i = ps->ncontainers; i-- > 0;) {
		c = ps->containers[i];
		if (!c->pub.merged && strcmp(c->pub.key, key) == 0 && !(root && (c->transient_key || c->pub.root_gone)))
			return c;
	}
	c = container_new(ps, key);
	if (c && root && runtime_init_name(st->comm))
		c->transient_key = true;
	return c;
}

/* The most arguments of a command line handed to classify. */
#define ARGS_MAX 32

/*
 * The container's name in the pod, from its root's mount table, once: the
 * runtime's init has its mounts before it execs the program. Only where
 * the agent's own container has its name (names_seen): in a pod that
 * shows none (no kubelet), no mount table is read at every rescan. A mount table
 * takes no lock of the process's (as a command line does): read in the
 * drain too.
 */
static int mount_name(struct podscan *ps, pid_t pid, char *out, size_t outlen)
{
	char path[64];
	size_t len;
	int fd, rc;

	snprintf(path, sizeof(path), "%d/mountinfo", (int)pid);
	fd = open_proc_file(ps, path);
	if (fd < 0)
		return fd;
	/* Generated a page at a time: read to its end. */
	rc = read_small_fd(fd, ps->mounts, sizeof(ps->mounts), &len, READ_TO_END);
	close_proc_file(ps, fd);
	return rc < 0 ? rc : proc_mountinfo_container(ps->mounts, len, out, outlen);
}

static void read_kname(struct podscan *ps, struct container *c)
{
	if (!c->pub.kname[0] && c->pub.root && ps->names_seen &&
	    mount_name(ps, c->pub.root, c->pub.kname, sizeof(c->pub.kname)) < 0)
		c->pub.kname[0] = '\0';
}

/* A process's command line, split into at most ARGS_MAX arguments; argv[0]'s basename too. */
struct args {
	char buf[4096];
	char *argv[ARGS_MAX + 1];
	size_t argc;
	bool empty; /* read, and empty: a kernel thread, a zombie, or an exec under way */
	char argv0[PODSCAN_NAME_MAX];
};

static void read_args(struct podscan *ps, pid_t pid, struct args *a)
{
	size_t len = 0;

	a->argc = 0;
	a->empty = false;
	a->argv0[0] = '\0';
	/* A command line is read under the process's memory lock: a process stuck in D state holds it. */
	if (ps->no_cmdlines || podscan_read_pid_file(ps, a->buf, sizeof(a->buf), pid, "cmdline", &len) < 0)
		return;
	a->empty = len == 0;
	proc_parse_argv0(a->buf, len, a->argv0, sizeof(a->argv0));
	a->argc = argv_split(a->buf, len, a->argv, ARRAY_SIZE(a->argv));
}

static void apply_match(struct podscan *ps, struct container *c, const char *comm, const struct args *a)
{
	size_t sidecar = PODSCAN_NO_SIDECAR;

	switch (ps->cfg.classify(ps->cfg.arg, c->pub.kname, comm, a ? a->argv0 : "",
				a ? (const char *const *)a->argv : NULL, a ? a->argc : 0, &sidecar)) {
	case MATCH_SIDECAR:
		if (c->match_sidecar == PODSCAN_NO_SIDECAR)
			c->match_sidecar = sidecar;
		break;
	case MATCH_APP:
		c->match_app = true;
		break;
	case MATCH_NONE:
		break;
	}
}

static enum podscan_role role_of(const struct container *c)
{
	if (c->has_pid1)
		return ROLE_PAUSE;
	if (c->has_self)
		return ROLE_SELF;
	/* Known by its name already (the runtime's init has the container's mounts), it has not run its program. */
	if (c->pub.root && !c->pub.root_gone && (runtime_init_name(c->root_comm) || c->root_unread) &&
	    !c->pending_over)
		return ROLE_PENDING;
	if (c->match_sidecar != PODSCAN_NO_SIDECAR)
		return ROLE_SIDECAR;
	return c->match_app ? ROLE_APP : ROLE_OTHER;
}

/* The container key of a process that cannot inherit one from its parent. */
static int key_of(struct podscan *ps, const struct proc_stat *st, char *key, size_t keylen)
{
	size_t len;
	int rc;

	if (ps->flat) {
		/* Without a cgroup per container, a container is a subtree under ppid 0. */
		if (st->ppid != 0)
			return -ENOENT;
		snprintf(key, keylen, "tree:%d:%llu", (int)st->pid, (unsigned long long)st->starttime);
		return 0;
	}
	ps->stats.cgroup_reads++;
	rc = podscan_read_pid_file(ps, ps->buf, sizeof(ps->buf), st->pid, "cgroup", &len);
	if (rc < 0)
		return rc;
	return proc_cgroup_key(ps->buf, len, key, keylen) < 0 ? -EINVAL : 0;
}

/* A pid that could not be read for want of resources: the refresh is incomplete. */
static void unreadable(struct podscan *ps, int err)
{
	if (!ps->stats.unreadable++)
		ps->stats.error = err;
}

/* Reads a pid never seen before and files it under its container. */
static void classify_new(struct podscan *ps, pid_t pid)
{
	struct proc_entry *e, *parent;
	struct container *c = NULL;
	bool inherited = false;
	char key[sizeof(ps->buf)];
	struct proc_stat st;
	struct args args;

	int rc = read_stat(ps, pid, &st);

	if (rc < 0) {
		/* Gone already; or unreadable (EMFILE, ENOMEM...): looked at again next time, and said. */
		if (rc != -ENOENT && rc != -ESRCH)
			unreadable(ps, rc);
		return;
	}
	ps->stats.classified++;
	/*
	 * A zombie is over, and its cgroup file lies (v1 shows it back in the
	 * root cgroup): leave it out of the table until it is reaped.
	 */
	if (st.state == 'Z' || st.state == 'X')
		return;
	e = table_insert(ps, pid);
	if (!e) {
		unreadable(ps, -ENOMEM);
		return;
	}
	e->ppid = st.ppid;
	e->start = st.starttime;
	e->gen = ps->gen;
	e->comm_hash = hash_str(st.comm);
	if (st.flags & PF_KTHREAD_FLAG)
		return;

	/* A fork stays in its parent's cgroup: no need to read its own. */
	parent = st.ppid > 1 ? table_find(ps, st.ppid) : NULL;
	if (parent && parent->container && parent->gen == ps->gen && parent->start <= st.starttime) {
		c = ps->containers[parent->container - 1];
		inherited = true;
	} else {
		rc = key_of(ps, &st, key, sizeof(key));
		c = rc == 0 ? container_by_key(ps, &st, key) : NULL;
		if (!c) {
			/* Not filed under any container: forgotten, so that the next refresh reads it again. */
			table_remove(ps, e);
			if (rc != -ENOENT && rc != -ESRCH)
				unreadable(ps, rc < 0 ? rc : -ENOMEM);
			return;
		}
	}
	e->container = c->index + 1;
	if (pid == 1)
		c->has_pid1 = true;
	if (pid == ps->cfg.self_pid)
		c->has_self = true;

	/* The root is chosen when the container is first seen, never later. */
	if (c->pub.is_new && st.ppid == 0 &&
	    (!c->pub.root || st.starttime < c->pub.root_start ||
	     (st.starttime == c->pub.root_start && pid < c->pub.root))) {
		c->pub.root = pid;
		c->pub.root_start = st.starttime;
		str_copy(c->root_comm, st.comm, sizeof(c->root_comm));
		read_kname(ps, c);
	}

	if (c->match_sidecar != PODSCAN_NO_SIDECAR)
		return;
	/* A fork that kept its parent's comm runs the same program: its name says nothing new. */
	if (inherited && e->comm_hash == parent->comm_hash) {
		apply_match(ps, c, st.comm, NULL);
		return;
	}
	read_args(ps, pid, &args);
	/*
	 * A root caught between the two steps of its exec has its new comm and
	 * no command line yet: a comm cut to 15 bytes alone would misname it.
	 * It is read again at the next refresh.
	 */
	if (pid == c->pub.root && args.empty) {
		c->root_unread = true;
		return;
	}
	apply_match(ps, c, st.comm, &args);
}

static void name_from_root(struct podscan *ps, struct container *c)
{
	read_argv0(ps, c->pub.root, c->pub.name, sizeof(c->pub.name));
	if (c->pub.name[0] == '\0')
		str_copy(c->pub.name, c->root_comm, sizeof(c->pub.name));
}

/* Nothing is left of c: it was never a container (its processes, if any, are another's now). */
static void never_a_container(struct container *c)
{
	c->pub.merged = true;
	c->pub.root_gone = true;
	c->pub.nprocs = 0;
	c->match_app = false;
	c->match_sidecar = PODSCAN_NO_SIDECAR;
	c->root_comm[0] = '\0';
}

/* from was an exec session's runtime init in into: its processes are into's, and it was never a container. */
static void merge_into(struct podscan *ps, struct container *from, struct container *into)
{
	size_t i;

	for (i = 0; i < ps->cap; i++)
		if (ps->slots[i].pid && ps->slots[i].container == from->index + 1)
			ps->slots[i].container = into->index + 1;
	into->pub.nprocs += from->pub.nprocs;
	never_a_container(from);
}

/*
 * A runtime may move its init into the container's cgroup only after the
 * process is visible in the pod (crun does): while a container is pending,
 * its root's cgroup is read again, and each pending container is settled
 * on its own, whichever other inits were seen where it was. A new key
 * either renames the container (its own cgroup), or shows it was a process
 * of a live container all along (an exec session's runtime init), which
 * then absorbs its processes. So does the key it has, once a live
 * container that has run its program has it too (an exec session's init
 * seen before its container, a pid lower after the pids wrapped).
 */
static void rekey_pending(struct podscan *ps, struct container *c)
{
	char key[sizeof(ps->buf)];
	struct container *other = NULL, *o;
	char *copy, *shown;
	size_t len, i;
	bool moved;

	if (ps->flat || podscan_read_pid_file(ps, ps->buf, sizeof(ps->buf), c->pub.root, "cgroup", &len) < 0 ||
	    proc_cgroup_key(ps->buf, len, key, sizeof(key)) < 0)
		return;
	moved = strcmp(key, c->pub.key) != 0;
	for (i = 0; i < ps->ncontainers; i++) {
		o = ps->containers[i];
		if (o != c && !o->pub.merged && !o->pub.root_gone && (moved || !o->transient_key) &&
		    strcmp(o->pub.key, key) == 0)
			other = o;
	}
	if (!other && !moved)
		return;
	/*
	 * The other began later, and is new or still pending itself: an exec
	 * session's, started in the container c is (a container's root is its
	 * earliest process), seen there before c's move was: it joins c.
	 */
	if (other && (other->pub.is_new || other->pub.role == ROLE_PENDING) &&
	    other->pub.root_start > c->pub.root_start) {
		merge_into(ps, other, c);
		other->pub.role = ROLE_OTHER;
		other->pub.role_changed = !other->pub.is_new;
		other = NULL;
	}
	if (!other) {
		copy = strdup(key);
		shown = malloc(strlen(key) + 1);
		if (!copy || !shown) {
			free(copy);
			free(shown);
			return;
		}
		free(c->pub.key);
		free(c->pub.display);
		c->pub.key = copy;
		c->pub.display = shown;
		proc_cgroup_display(key, shown, strlen(key) + 1);
		/*
		 * Moved there by the runtime: the cgroup is the container's own,
		 * if it is one of the pod's. Outside them it is still the
		 * runtime's (whose own cgroups may change meanwhile).
		 */
		c->transient_key = ps->pod_cgroup[0] && !proc_cgroup_within(key, ps->pod_cgroup);
		return;
	}
	merge_into(ps, c, other);
}

/*
 * A root may exec after we first saw it: the runtime's init becomes the
 * entrypoint, a shell execs the proxy. Its new name may change the role.
 */
static void recheck_root(struct podscan *ps, struct container *c, const struct proc_stat *st, bool final)
{
	char before[PODSCAN_NAME_MAX];
	struct args args;

	if (strcmp(st->comm, c->root_comm) == 0 && !c->root_unread)
		return;
	if (runtime_init_name(c->root_comm)) {
		/* What the runtime's init matched says nothing about the container. */
		c->match_app = false;
		c->match_sidecar = PODSCAN_NO_SIDECAR;
	}
	str_copy(c->root_comm, st->comm, sizeof(c->root_comm));
	read_args(ps, c->pub.root, &args);
	/* Still between the steps of its exec: next time, unless this is the last look (then comm alone). */
	c->root_unread = args.empty && !final && st->state != 'Z';
	if (!c->root_unread)
		apply_match(ps, c, st->comm, &args);
	str_copy(before, c->pub.name, sizeof(before));
	name_from_root(ps, c);
	c->pub.renamed = strcmp(before, c->pub.name) != 0;
}

/* A live container's root, read once per refresh: its cgroup while pending, its name. */
static void refresh_root(struct podscan *ps, struct container *c)
{
	struct proc_stat st;

	/* Gone or reused: its exit is the watcher's to report. */
	if (read_stat(ps, c->pub.root, &st) < 0 || st.starttime != c->pub.root_start)
		return;
	if (c->pub.role == ROLE_PENDING) {
		rekey_pending(ps, c);
		if (c->pub.root_gone)
			return;
		read_kname(ps, c);
	}
	recheck_root(ps, c, &st, c->pending_over);
	/* Runtimes exec the program in the container's cgroup: where it runs is its own. */
	if (!runtime_init_name(c->root_comm))
		c->transient_key = false;
}

static void detect_flat(struct podscan *ps)
{
	char one[sizeof(ps->buf)], one_key[sizeof(ps->buf)], self_key[sizeof(ps->buf)];
	size_t one_len, len;

	if (ps->cfg.self_pid == 1 || podscan_read_pid_file(ps, one, sizeof(one), 1, "cgroup", &one_len) < 0 ||
	    podscan_read_pid_file(ps, ps->buf, sizeof(ps->buf), ps->cfg.self_pid, "cgroup", &len) < 0)
		return;
	/* pause and the agent always have their own cgroups under a runtime that makes them. */
	ps->flat = strcmp(one, ps->buf) == 0;
	if (ps->flat ||
	    proc_cgroup_key(ps->buf, len, self_key, sizeof(self_key)) < 0 ||
	    proc_cgroup_key(one, one_len, one_key, sizeof(one_key)) < 0 ||
	    proc_cgroup_pod(self_key, one_key, ps->pod_cgroup, sizeof(ps->pod_cgroup)) < 0)
		ps->pod_cgroup[0] = '\0';
}

/* Whether e's pid still has e's start time (an unreadable stat proves nothing: yes). */
static bool still_same(struct podscan *ps, const struct proc_entry *e)
{
	struct proc_stat st;
	int rc = read_stat(ps, e->pid, &st);

	if (rc == -ENOENT || rc == -ESRCH)
		return true; /* gone: the listing will drop it */
	return rc < 0 || st.starttime == e->start;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int push_fresh(struct podscan *ps, pid_t pid)
{
	pid_t *p = array_grow(ps->fresh, ps->nfresh, &ps->capfresh, sizeof(*p), 256);

	if (!p)
		return -ENOMEM;
	ps->fresh = p;
	ps->fresh[ps->nfresh++] = pid;
	return 0;
}

/* The pid namespace's last pid handed out, or -errno. */
static long read_last_pid(struct podscan *ps)
{
	char buf[24];
	ssize_t n;
	long v;
	char *end;

	if (ps->last_pid_fd == -2)
		return -ENOENT;
	if (ps->last_pid_fd < 0) {
		ps->last_pid_fd = openat(ps->proc_fd, "sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);
		if (ps->last_pid_fd < 0) {
			n = -errno;
			/* Resource shortage passes; a missing or forbidden file does not. */
			if (n != -EMFILE && n != -ENFILE && n != -ENOMEM)
				ps->last_pid_fd = -2;
			else
				ps->last_pid_fd = -1;
			return n;
		}
	}
	n = pread(ps->last_pid_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || v < 0)
		return -EINVAL;
	return v;
}

/*
 * How many listings in a row may miss the newest pid before it counts as
 * gone (or a thread's, which no listing shows) rather than not shown yet.
 */
#define UNLISTED_LOOKS_MAX 5

/* After a listing: whether it had the newest pid handed out when it began. */
static void note_newest(struct podscan *ps, bool listed)
{
	if (listed || ps->last_pid <= 0) {
		ps->unlisted_pid = 0;
		return;
	}
	if (ps->unlisted_pid != ps->last_pid) {
		ps->unlisted_pid = ps->last_pid;
		ps->unlisted_looks = 0;
	}
	ps->unlisted_looks++;
}

int podscan_pids_moved(struct podscan *ps)
{
	long now = read_last_pid(ps);

	if (now < 0)
		return (int)now;
	if (ps->last_pid < 0)
		return 1;
	return now != ps->last_pid || (ps->unlisted_pid && ps->unlisted_looks < UNLISTED_LOOKS_MAX);
}

int podscan_refresh(struct podscan *ps, struct podscan_stats *stats)
{
	struct dirent *de;
	bool newest_listed = false;
	size_t i;

	memset(&ps->stats, 0, sizeof(ps->stats));
	keep_spare(ps);
	/* Before the listing: a pid handed out after this read moves the counter again. */
	ps->last_pid = read_last_pid(ps);
	ps->gen++;
	ps->nfresh = 0;
	for (i = 0; i < ps->ncontainers; i++) {
		ps->containers[i]->pub.is_new = false;
		ps->containers[i]->pub.role_changed = false;
		ps->containers[i]->pub.renamed = false;
	}
	if (!ps->first_done) {
		char own[PODSCAN_NAME_MAX];

		detect_flat(ps);
		/* The agent's own container named by the kubelet's mount: every container's name can be seen. */
		ps->names_seen = !ps->flat && mount_name(ps, ps->cfg.self_pid, own, sizeof(own)) >= 0;
		ps->first_done = true;
	}

	rewinddir(ps->dir);
	errno = 0;
	while ((de = readdir(ps->dir)) != NULL) {
		const char *p = de->d_name;
		struct proc_entry *e;
		long pid = 0;

		if (*p < '1' || *p > '9')
			continue;
		for (; *p >= '0' && *p <= '9'; p++)
			pid = pid * 10 + (*p - '0');
		if (*p || pid > INT32_MAX)
			continue;
		ps->stats.listed++;
		newest_listed |= pid == ps->last_pid;
		e = table_find(ps, (pid_t)pid);
		if (e && e->container && ps->containers[e->container - 1]->pub.root_gone && !still_same(ps, e)) {
			/* A process of a container that is over: its pid may name a newcomer now. */
			table_remove(ps, e);
			e = NULL;
		}
		if (e)
			e->gen = ps->gen;
		else if (push_fresh(ps, (pid_t)pid) < 0)
			return -ENOMEM;
	}
	if (errno)
		return -errno;
	note_newest(ps, newest_listed);

	/* In pid order parents come before children, so forks find their parent filed. */
	qsort(ps->fresh, ps->nfresh, sizeof(*ps->fresh), cmp_pid);
	for (i = 0; i < ps->nfresh; i++)
		classify_new(ps, ps->fresh[i]);

	/* Forget what was not listed. */
	ps->nfresh = 0;
	for (i = 0; i < ps->cap; i++)
		if (ps->slots[i].pid && ps->slots[i].gen != ps->gen && push_fresh(ps, ps->slots[i].pid) < 0)
			return -ENOMEM;
	for (i = 0; i < ps->nfresh; i++)
		table_remove(ps, table_find(ps, ps->fresh[i]));

	for (i = 0; i < ps->ncontainers; i++)
		ps->containers[i]->pub.nprocs = 0;
	for (i = 0; i < ps->cap; i++)
		if (ps->slots[i].pid && ps->slots[i].container)
			ps->containers[ps->slots[i].container - 1]->pub.nprocs++;

	for (i = 0; i < ps->ncontainers; i++) {
		struct container *c = ps->containers[i];
		enum podscan_role role;

		if (c->pub.is_new) {
			if (c->pub.root)
				name_from_root(ps, c);
			else
				c->pub.root_gone = true;
			c->pub.role = role_of(c);
			c->pub.sidecar = c->match_sidecar;
			continue;
		}
		if (c->pub.root_gone || c->pub.role == ROLE_PAUSE || c->pub.role == ROLE_SELF ||
		    c->pub.role == ROLE_SIDECAR)
			continue;
		refresh_root(ps, c);
		role = role_of(c);
		if (role != c->pub.role) {
			c->pub.role = role;
			c->pub.sidecar = c->match_sidecar;
			c->pub.role_changed = true;
		}
	}

	if (stats)
		*stats = ps->stats;
	return 0;
}

int podscan_new(const struct podscan_config *cfg, struct podscan **out)
{
	struct podscan *ps = calloc(1, sizeof(*ps));
	int fd;

	if (!ps)
		return -ENOMEM;
	ps->cfg = *cfg;
	ps->proc_fd = -1;
	ps->last_pid_fd = -1;
	ps->last_pid = -1;
	ps->cap = 256;
	ps->slots = calloc(ps->cap, sizeof(*ps->slots));
	ps->spare = malloc(sizeof(*ps->spare));
	if (!ps->slots || !ps->spare) {
		free(ps->slots);
		free(ps->spare);
		free(ps);
		return -ENOMEM;
	}
	ps->spare->fd = -1;
	/*
	 * What a rescan needs is taken now and held: the directory, which one
	 * descriptor serves both for listing and as openat's base, and the
	 * reserve. Without them there is no podscan; with them a rescan cannot
	 * fail for want of a descriptor.
	 */
	fd = open(cfg->proc_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	ps->dir = fdopendir(fd);
	if (!ps->dir) {
		close(fd);
		goto fail;
	}
	ps->proc_fd = dirfd(ps->dir);
	keep_spare(ps);
	if (ps->spare->fd < 0)
		goto fail;
	*out = ps;
	return 0;
fail:
	fd = -errno;
	podscan_free(ps);
	return fd;
}

void podscan_free(struct podscan *ps)
{
	size_t i;

	if (!ps)
		return;
	if (ps->dir)
		closedir(ps->dir);
	if (ps->spare)
		fd_reserve_drop(ps->spare);
	free(ps->spare);
	if (ps->last_pid_fd >= 0)
		close(ps->last_pid_fd);
	for (i = 0; i < ps->ncontainers; i++) {
		free(ps->containers[i]->pub.key);
		free(ps->containers[i]->pub.display);
		free(ps->containers[i]);
	}
	free(ps->containers);
	free(ps->slots);
	free(ps->fresh);
	free(ps);
}

size_t podscan_count(const struct podscan *ps)
{
	return ps->ncontainers;
}

struct podscan_container *podscan_container(const struct podscan *ps, size_t i)
{
	return i < ps->ncontainers ? &ps->containers[i]->pub : NULL;
}

struct podscan_container *podscan_find(const struct podscan *ps, unsigned id)
{
	size_t i;

	for (i = 0; i < ps->ncontainers; i++)
		if (ps->containers[i]->pub.id == id)
			return &ps->containers[i]->pub;
	return NULL;
}

bool podscan_flat(const struct podscan *ps)
{
	return ps->flat;
}

bool podscan_names_seen(const struct podscan *ps)
{
	return ps->names_seen;
}

void podscan_settle_pending(struct podscan *ps, struct podscan_container *pub)
{
	struct container *c = (struct container *)pub;
	struct proc_stat st;

	if (pub->role != ROLE_PENDING || pub->root_gone)
		return;
	if (read_stat(ps, pub->root, &st) == 0 && st.starttime == pub->root_start) {
		/* A zombie still shows where it ended: its own cgroup, or a live container's. */
		rekey_pending(ps, c);
		if (pub->merged) {
			pub->role = ROLE_OTHER;
			return;
		}
		recheck_root(ps, c, &st, true);
	} else if (c->root_unread) {
		apply_match(ps, c, c->root_comm, NULL);
	}
	c->root_unread = false;
	if (c->transient_key && runtime_init_name(c->root_comm) && ps->pod_cgroup[0] &&
	    !proc_cgroup_within(pub->key, ps->pod_cgroup)) {
		/*
		 * Seen only outside the pod's cgroups, and gone without running a
		 * program: a runtime's process (an exec session's init, a probe's)
		 * that never joined a container. Runtimes run a container's
		 * program in the container's cgroup.
		 */
		never_a_container(c);
		pub->role = ROLE_OTHER;
		return;
	}
	if (runtime_init_name(c->root_comm))
		str_copy(pub->name, c->root_comm, sizeof(pub->name));
	pub->root_gone = true;
	pub->role = role_of(c);
	pub->sidecar = c->match_sidecar;
}

void podscan_pending_over(struct podscan *ps, struct podscan_container *pub)
{
	(void)ps;
	((struct container *)pub)->pending_over = true;
}

void podscan_root_exited(struct podscan *ps, struct podscan_container *c)
{
	struct proc_entry *e;

	c->root_gone = true;
	/* The pid is free for reuse: a new process with it must be read afresh. */
	e = c->root ? table_find(ps, c->root) : NULL;
	if (e && e->start == c->root_start) {
		table_remove(ps, e);
		if (c->nprocs)
			c->nprocs--;
	}
}

static int cmp_proc(const void *a, const void *b)
{
	const struct podscan_proc *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

ssize_t podscan_procs(const struct podscan *ps, const struct podscan_container *c, struct podscan_proc **out)
{
	uint32_t idx = ((const struct container *)c)->index + 1;
	struct podscan_proc *procs;
	size_t i, n = 0;

	*out = NULL;
	for (i = 0; i < ps->cap; i++)
		if (ps->slots[i].pid && ps->slots[i].container == idx)
			n++;
	if (n == 0)
		return 0;
	procs = malloc(n * sizeof(*procs));
	if (!procs)
		return -ENOMEM;
	n = 0;
	for (i = 0; i < ps->cap; i++) {
		if (ps->slots[i].pid && ps->slots[i].container == idx) {
			procs[n].pid = ps->slots[i].pid;
			procs[n].start = ps->slots[i].start;
			n++;
		}
	}
	qsort(procs, n, sizeof(*procs), cmp_proc);
	*out = procs;
	return (ssize_t)n;
}

void podscan_names_only(struct podscan *ps)
{
	ps->no_cmdlines = true;
}

void podscan_stale(struct podscan *ps, pid_t pid)
{
	struct proc_entry *e = table_find(ps, pid);

	if (e)
		table_remove(ps, e);
}

const char *podscan_role_name(enum podscan_role role)
{
	static const char *const names[] = { "pending", "pause", "self", "app", "sidecar", "other" };

	return names[role];
}

bool podscan_cmdlines_off(const struct podscan *ps)
{
	return ps->no_cmdlines;
}
