/*
 * The pod scanner against fake /proc trees: every file it reads is written
 * here, so each test says exactly what the kernel would show.
 */
#include "config.h"

#include "podscan.h"
#include "tap.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

static void put(pid_t pid, const char *file, const char *data, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, (int)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/%s", root, (int)pid, file);
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, len, f) != len)
		abort();
	fclose(f);
}

static void stat_file(pid_t pid, pid_t ppid, const char *comm, unsigned long long start, unsigned flags,
		      char state)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%d (%s) %c %d %d %d 0 -1 %u 0 0 0 0 0 0 0 0 20 0 1 0 %llu 1000 100 0 0 0\n",
		 (int)pid, comm, state, (int)ppid, (int)pid, (int)pid, flags, start);
	put(pid, "stat", buf, strlen(buf));
}

/* A process; cgroup NULL writes no cgroup file (reading it would then fail). */
static void mkproc(pid_t pid, pid_t ppid, const char *comm, unsigned long long start, const char *cgroup,
		   const char *argv0)
{
	stat_file(pid, ppid, comm, start, 0, 'S');
	if (cgroup)
		put(pid, "cgroup", cgroup, strlen(cgroup));
	if (argv0)
		put(pid, "cmdline", argv0, strlen(argv0) + 1);
}

static void rmproc(pid_t pid)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%d'", root, (int)pid);
	if (system(cmd) != 0)
		abort();
}

static void reset(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", root, root);
	if (system(cmd) != 0)
		abort();
	mkdir(root, 0755);
	/* Entries /proc has besides pids. */
	mkdir(strcat(strcpy(cmd, root), "/self"), 0755);
	put(0, "../meminfo", "x", 1);
}

/* Sidecars: "envoy" or "pilot-agent" is sidecar 0, "consul-dataplane" sidecar 1; apps: all but "helper" when strict. */
static bool strict_apps;

static enum podscan_match classify_name(const char *name, size_t *sidecar)
{
	if (strcmp(name, "envoy") == 0 || strcmp(name, "pilot-agent") == 0) {
		*sidecar = 0;
		return MATCH_SIDECAR;
	}
	if (strcmp(name, "consul-dataplane") == 0) {
		*sidecar = 1;
		return MATCH_SIDECAR;
	}
	if (strict_apps)
		return strcmp(name, "job") == 0 ? MATCH_APP : MATCH_NONE;
	return MATCH_APP;
}

/* The process by its comm, else by argv[0]'s basename; the command lines seen are kept for a test. */
static char last_args[256];

/* The container names the classifier was last told, for a test. */
static char last_kname[64];

static enum podscan_match classify(void *arg, const char *kname, const char *comm, const char *argv0,
				   const char *const *argv, size_t argc, size_t *sidecar)
{
	enum podscan_match by_comm = classify_name(comm, sidecar), by_argv0;
	size_t i, n = 0;

	snprintf(last_kname, sizeof(last_kname), "%s", kname);
	last_args[0] = '\0';
	for (i = 0; i < argc && n < sizeof(last_args); i++)
		n += (size_t)snprintf(last_args + n, sizeof(last_args) - n, "%s%s", i ? " " : "", argv[i]);
	if (by_comm == MATCH_SIDECAR || !argv0[0])
		return by_comm;
	by_argv0 = classify_name(argv0, sidecar);
	return by_argv0 == MATCH_SIDECAR || by_comm == MATCH_NONE ? by_argv0 : by_comm;
}

static struct podscan *open_scan(pid_t self)
{
	struct podscan_config cfg = { .proc_path = root, .self_pid = self, .classify = classify };
	struct podscan *ps = NULL;

	if (podscan_new(&cfg, &ps) < 0)
		abort();
	return ps;
}

static struct podscan_container *by_root(struct podscan *ps, pid_t pid)
{
	size_t i;

	for (i = 0; i < podscan_count(ps); i++)
		if (podscan_container(ps, i)->root == pid)
			return podscan_container(ps, i);
	return NULL;
}

static struct podscan_container *by_name(struct podscan *ps, const char *name)
{
	size_t i;

	for (i = 0; i < podscan_count(ps); i++)
		if (strcmp(podscan_container(ps, i)->name, name) == 0)
			return podscan_container(ps, i);
	return NULL;
}

#define CG(path) "9:pids:/kubepods/pod1" path "\n0::/\n"

static void basic_pod(void)
{
	struct podscan_stats st;
	struct podscan_container *c;
	struct podscan *ps;
	struct podscan_proc *procs;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(5, 0, "rearguard", 200, CG("/agent"), "/rearguard");
	mkproc(10, 0, "job", 300, CG("/app"), "/usr/bin/job");
	mkproc(11, 10, "job", 310, NULL, NULL);          /* a fork: inherits, no file read */
	mkproc(12, 10, "(w) o)k", 320, NULL, "/bin/sh"); /* an exec'd child with a tricky comm */
	mkproc(20, 0, "pilot-agent", 250, CG("/istio"), "/usr/local/bin/pilot-agent");
	mkproc(21, 20, "envoy", 260, NULL, "/usr/local/bin/envoy");
	ps = open_scan(5);
	is_int(podscan_refresh(ps, &st), 0, "refresh succeeds");
	is_int(st.listed, 7, "seven pids listed (non-pid entries skipped)");
	is_int(st.classified, 7, "all seven read");
	is_int(st.cgroup_reads, 4, "cgroup read only for the ppid-0 processes");
	is_int(podscan_count(ps), 4, "four containers");
	ok(!podscan_flat(ps), "cgroups tell containers apart");

	c = by_root(ps, 1);
	ok(c && c->role == ROLE_PAUSE, "pid 1 is pause");
	c = by_root(ps, 5);
	ok(c && c->role == ROLE_SELF, "our own container is self");
	c = by_root(ps, 10);
	ok(c && c->role == ROLE_APP, "the job is an app");
	is_str(c ? c->name : "", "job", "app named after argv[0]");
	is_int(c ? c->nprocs : 0, 3, "app has three processes");
	ok(c && c->is_new && !c->root_gone, "new, running");
	is_str(c ? c->display : "", "/kubepods/pod1/app", "cgroup shown from the v1 line");
	is_int(podscan_procs(ps, c, &procs), 3, "three processes listed");
	ok(procs && procs[0].pid == 10 && procs[1].pid == 11 && procs[2].pid == 12, "oldest first");
	is_int(procs ? procs[2].start : 0, 320, "start times listed");
	free(procs);
	c = by_root(ps, 20);
	ok(c && c->role == ROLE_SIDECAR && c->sidecar == 0, "istio is sidecar 0");

	/* Nothing new: a rescan reads nothing. */
	is_int(podscan_refresh(ps, &st), 0, "second refresh");
	is_int(st.classified, 0, "known pids are not read again");
	ok(!by_root(ps, 10)->is_new, "no longer new");

	/* An exec session: a later ppid-0 process in the app's cgroup. */
	mkproc(30, 0, "sh", 900, CG("/app"), "/bin/sh");
	podscan_refresh(ps, &st);
	is_int(podscan_count(ps), 4, "an exec session is no new container");
	c = by_root(ps, 10);
	is_int(c->root, 10, "the root stays the earliest process");
	is_int(c->nprocs, 4, "the session counts as one of its processes");

	/* A process goes away. */
	rmproc(11);
	podscan_refresh(ps, &st);
	is_int(by_root(ps, 10)->nprocs, 3, "a gone process is forgotten");

	/* The root exits; as a zombie its cgroup file shows v1 paths at the root. */
	c = by_root(ps, 10);
	podscan_root_exited(ps, c);
	ok(c->root_gone, "root gone");
	stat_file(10, 0, "job", 300, 0, 'Z');
	put(10, "cgroup", "9:pids:/\n0::/\n", 13);
	podscan_refresh(ps, &st);
	is_int(podscan_count(ps), 4, "a zombie makes no container");
	is_int(st.classified, 1, "the zombie was looked at");
	podscan_refresh(ps, &st);
	is_int(st.classified, 1, "and is looked at again until it is reaped");
	/* Reaped, and its pid reused by a new container. */
	rmproc(10);
	mkproc(10, 0, "job", 1000, CG("/app-restarted"), "/usr/bin/job");
	podscan_refresh(ps, &st);
	is_int(podscan_count(ps), 5, "the reused pid starts a new container");
	c = by_name(ps, "job");
	c = podscan_find(ps, 5);
	ok(c && c->root == 10 && c->root_start == 1000 && c->is_new, "the restarted container has its own root");
	podscan_free(ps);
}

static void earliest_root(void)
{
	struct podscan *ps;
	struct podscan_container *c;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 150, CG("/agent"), "/rearguard");
	/* After pid wrap-around the root may have the higher pid. */
	mkproc(40, 0, "sh", 900, CG("/app"), "/bin/sh");
	mkproc(50, 0, "job", 200, CG("/app"), "/job");
	ps = open_scan(3);
	podscan_refresh(ps, NULL);
	c = by_name(ps, "job");
	ok(c && c->root == 50, "the earliest-started ppid-0 process is the root, not the lowest pid");
	podscan_free(ps);
}

static void pending_and_upgrades(void)
{
	struct podscan *ps;
	struct podscan_container *c;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 150, CG("/agent"), "/rearguard");
	mkproc(7, 0, "runc:[2:INIT]", 200, CG("/istio"), "runc\0init");
	mkproc(8, 0, "job", 210, CG("/app"), "/job");
	ps = open_scan(3);
	podscan_refresh(ps, NULL);
	c = by_root(ps, 7);
	ok(c && c->role == ROLE_PENDING, "a container still in runc init is pending");
	stat_file(7, 0, "pilot-agent", 200, 0, 'S');
	put(7, "cmdline", "/usr/local/bin/pilot-agent\0proxy", 33);
	podscan_refresh(ps, NULL);
	c = by_root(ps, 7);
	ok(c && c->role == ROLE_SIDECAR && c->role_changed, "after its exec it is the sidecar");
	is_str(c->name, "pilot-agent", "and named after its entrypoint");

	/* An app container whose root execs into a sidecar. */
	c = by_root(ps, 8);
	ok(c && c->role == ROLE_APP, "job is an app");
	stat_file(8, 0, "envoy", 210, 0, 'S');
	podscan_refresh(ps, NULL);
	c = by_root(ps, 8);
	ok(c->role == ROLE_SIDECAR && c->role_changed, "its root exec'd envoy: now a sidecar");

	/* A sidecar process appearing inside an app container. */
	mkproc(9, 0, "job", 300, CG("/app2"), "/job");
	podscan_refresh(ps, NULL);
	ok(by_root(ps, 9)->role == ROLE_APP, "second app");
	mkproc(60, 9, "consul-dataplan", 400, NULL, "/usr/bin/consul-dataplane");
	podscan_refresh(ps, NULL);
	c = by_root(ps, 9);
	ok(c->role == ROLE_SIDECAR && c->sidecar == 1 && c->role_changed,
	   "a child matching by argv[0] (comm truncated) makes it sidecar 1");
	podscan_free(ps);

	/* crun moves its init into the cgroup after it is visible in the pod. */
	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 150, CG("/agent"), "/rearguard");
	mkproc(8, 0, "job", 210, CG("/app"), "/job");
	mkproc(7, 0, "crun", 200, CG(""), "crun");
	ps = open_scan(3);
	podscan_refresh(ps, NULL);
	c = by_root(ps, 7);
	ok(c && c->role == ROLE_PENDING, "crun's child in crun's cgroup is pending");
	put(7, "cgroup", CG("/istio"), strlen(CG("/istio")));
	podscan_refresh(ps, NULL);
	c = by_root(ps, 7);
	ok(c && c->role == ROLE_PENDING && strcmp(c->display, "/kubepods/pod1/istio") == 0,
	   "moved into its cgroup: the container takes the new key");
	stat_file(7, 0, "envoy", 200, 0, 'S');
	podscan_refresh(ps, NULL);
	ok(by_root(ps, 7)->role == ROLE_SIDECAR, "then execs the sidecar");
	/* An exec session's runtime init, moved into an existing container. */
	mkproc(9, 0, "runc:[2:INIT]", 500, CG(""), "runc");
	podscan_refresh(ps, NULL);
	c = by_root(ps, 9);
	ok(c && c->role == ROLE_PENDING, "a runtime init in the runtime's cgroup is pending");
	put(9, "cgroup", CG("/app"), strlen(CG("/app")));
	podscan_refresh(ps, NULL);
	ok(c->root_gone && c->role == ROLE_OTHER && c->role_changed, "moved into the app: it was never a container");
	is_int(by_root(ps, 8)->nprocs, 2, "the app container absorbs it");
	is_int(by_root(ps, 8)->root, 8, "and keeps its root");
	podscan_refresh(ps, NULL);
	is_int(by_root(ps, 8)->nprocs, 2, "still two after the next refresh");
	/* The next init in the runtime's cgroup is new, not filed under the merged one. */
	mkproc(12, 0, "runc:[2:INIT]", 600, CG(""), "runc");
	podscan_refresh(ps, NULL);
	c = by_root(ps, 12);
	ok(c && c->is_new && c->role == ROLE_PENDING, "a later init in the runtime's cgroup is a new container");
	podscan_free(ps);
}

static void other_and_orphans(void)
{
	struct podscan *ps;
	struct podscan_container *c;

	reset();
	strict_apps = true;
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 150, CG("/agent"), "/rearguard");
	mkproc(10, 0, "helper", 200, CG("/helper"), "/helper");
	mkproc(11, 0, "job", 210, CG("/app"), "/job");
	/* Orphans of a container whose root is gone: reparented to pid 1. */
	mkproc(20, 1, "leftover", 220, CG("/dead"), "/leftover");
	/* A kernel thread (only visible with the host's pid namespace). */
	stat_file(30, 0, "kworker/0:1", 50, 0x00200000, 'I');
	ps = open_scan(3);
	podscan_refresh(ps, NULL);
	ok(by_root(ps, 10) && by_root(ps, 10)->role == ROLE_OTHER, "with --app, a non-matching container is other");
	ok(by_root(ps, 11) && by_root(ps, 11)->role == ROLE_APP, "the matching one is an app");
	c = by_name(ps, "");
	ok(c && c->root == 0 && c->root_gone, "a container seen without its root is over");
	is_int(c ? c->nprocs : 0, 1, "with its orphan");
	is_int(podscan_count(ps), 5, "the kernel thread makes no container");
	strict_apps = false;
	podscan_free(ps);
}

static void hybrid_and_flat(void)
{
	struct podscan *ps;

	/* Hybrid host: the unified line is the same for all, a v1 line differs. */
	reset();
	mkproc(1, 0, "pause", 100, "4:memory:/x\n3:pids:/p\n0::/\n", "/pause");
	mkproc(3, 0, "rearguard", 150, "4:memory:/x\n3:pids:/a\n0::/\n", "/rearguard");
	mkproc(10, 0, "job", 200, "4:memory:/x\n3:pids:/j\n0::/\n", "/job");
	ps = open_scan(3);
	podscan_refresh(ps, NULL);
	is_int(podscan_count(ps), 3, "containers differing only in a v1 hierarchy are told apart");
	podscan_free(ps);

	/* One cgroup for everyone: containers are the subtrees under ppid 0. */
	reset();
	mkproc(1, 0, "pause", 100, "0::/\n", "/pause");
	mkproc(3, 0, "sh", 150, "0::/\n", "/bin/sh");
	mkproc(4, 3, "rearguard", 160, "0::/\n", "/rearguard");
	mkproc(10, 0, "job", 200, "0::/\n", "/job");
	mkproc(11, 10, "worker", 210, "0::/\n", "/worker");
	mkproc(20, 0, "envoy", 220, "0::/\n", "/envoy");
	ps = open_scan(4);
	podscan_refresh(ps, NULL);
	ok(podscan_flat(ps), "flat mode detected");
	is_int(podscan_count(ps), 4, "four subtrees");
	ok(by_root(ps, 3) && by_root(ps, 3)->role == ROLE_SELF, "our subtree is self");
	ok(by_root(ps, 10) && by_root(ps, 10)->role == ROLE_APP && by_root(ps, 10)->nprocs == 2, "the job's subtree");
	ok(by_root(ps, 20) && by_root(ps, 20)->role == ROLE_SIDECAR, "the envoy subtree");
	podscan_free(ps);
}

static void no_shared_namespace(void)
{
	struct podscan *ps;
	size_t i;
	bool self = false;

	/* Without shareProcessNamespace our container's process is pid 1. */
	reset();
	mkproc(1, 0, "rearguard", 100, "0::/agent\n", "/rearguard");
	ps = open_scan(1);
	podscan_refresh(ps, NULL);
	for (i = 0; i < podscan_count(ps); i++)
		self |= podscan_container(ps, i)->role == ROLE_SELF;
	ok(!self, "no self container when we share pid 1's container");
	podscan_free(ps);
}

static void many_processes(void)
{
	struct podscan_stats st;
	struct podscan *ps;
	struct podscan_container *c;
	int i;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 150, CG("/agent"), "/rearguard");
	mkproc(10, 0, "forker", 200, CG("/app"), "/forker");
	for (i = 11; i < 3011; i++)
		mkproc(i, 10, "forker", 300 + i, NULL, NULL);
	ps = open_scan(3);
	podscan_refresh(ps, &st);
	c = by_root(ps, 10);
	is_int(c ? c->nprocs : 0, 3001, "3001 processes in the app");
	is_int(st.cgroup_reads, 3, "forks cost no cgroup read");
	for (i = 11; i < 3011; i += 2)
		rmproc(i);
	podscan_refresh(ps, &st);
	is_int(by_root(ps, 10)->nprocs, 1501, "half of them gone");
	for (i = 11; i < 3011; i += 2)
		mkproc(i, 10, "forker", 5000 + i, NULL, NULL);
	podscan_refresh(ps, &st);
	is_int(st.classified, 1500, "only the new ones read");
	is_int(by_root(ps, 10)->nprocs, 3001, "table consistent after deletions and reinserts");
	podscan_free(ps);
}

static void start_time(void)
{
	struct podscan *ps;
	uint64_t start = 0;
	bool zombie = false;
	long hz;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	stat_file(7, 0, "x", 777, 0, 'Z');
	ps = open_scan(1);
	is_int(podscan_start_time(ps, 7, &start, &zombie), 0, "start time of a zombie");
	ok(start == 777 && zombie, "zombie flagged");
	is_int(podscan_start_time(ps, 8, &start, &zombie), -ENOENT, "no such pid");
	podscan_free(ps);

	/* Ticks after boot against CLOCK_BOOTTIME: begun at the tick after the start, the youngest it can be. */
	hz = sysconf(_SC_CLK_TCK);
	is_int(podscan_age(250, 5000000), 5000000 - 251 * 1000000 / hz, "an age: from the tick after the start");
	is_int(podscan_age(1000, 5000000), 0, "a start later than now: 0");
	is_int(podscan_age(UINT64_MAX, 5000000), 0, "nor one too large to be a time");
}


/* What the agent reads of a process through podscan: its command line, its ancestors. */
static void cmdline_and_ancestors(void)
{
	static const char args[] = "rearguard\0run\0--name\0train\0--\0job";
	struct podscan *ps;
	pid_t chain[8];
	char buf[256];
	size_t len = 0;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(40, 0, "sh", 400, CG("/proxy"), "/bin/sh");
	mkproc(41, 40, "sh", 410, NULL, "/bin/sh");
	mkproc(42, 41, "rearguard", 420, NULL, NULL);
	put(42, "cmdline", args, sizeof(args));
	ps = open_scan(42);
	is_int(podscan_cmdline(ps, 42, 420, buf, sizeof(buf), &len), 0, "a command line");
	is_int(len, sizeof(args), "whole, with its NULs");
	ok(memcmp(buf, args, sizeof(args)) == 0, "as written");
	is_int(podscan_cmdline(ps, 42, 999, buf, sizeof(buf), &len), -ESRCH,
	       "not when the pid has another start time: another process now");
	is_int(podscan_cmdline(ps, 43, 420, buf, sizeof(buf), &len), -ESRCH, "nor when it is gone");
	is_int(podscan_ancestors(ps, 42, chain, 8), 3, "the process and its ancestors below pid 1");
	ok(chain[0] == 42 && chain[1] == 41 && chain[2] == 40, "in order");
	is_int(podscan_ancestors(ps, 42, chain, 2), 2, "at most as many as asked for");
	podscan_free(ps);
}

/*
 * A pid reused between two scans by a restarted container's root: the dead
 * container's processes are read again at each refresh, so the newcomer is
 * never filed under the container that is over.
 */
static void pid_reuse(void)
{
	struct podscan_stats st;
	struct podscan_container *c;
	struct podscan *ps;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(5, 0, "rearguard", 200, CG("/agent"), "/rearguard");
	mkproc(10, 0, "job", 300, CG("/app"), "/usr/bin/job");
	mkproc(11, 10, "helper", 310, NULL, "/usr/bin/helper");
	ps = open_scan(5);
	podscan_refresh(ps, &st);
	c = by_root(ps, 10);
	is_int(c ? c->nprocs : 0, 2, "the app and its helper");
	/* The failed attempt's root exits; its helper dies; the restart's root gets the helper's pid. */
	podscan_root_exited(ps, c);
	rmproc(10);
	rmproc(11);
	mkproc(11, 0, "job", 900, CG("/app-restarted"), "/usr/bin/job");
	podscan_refresh(ps, &st);
	is_int(podscan_count(ps), 4, "the restart is a container of its own");
	c = by_root(ps, 11);
	ok(c && c->is_new && c->root_start == 900 && c->role == ROLE_APP, "rooted at the reused pid, its new process");
	is_int(podscan_find(ps, 3)->nprocs, 0, "nothing is left in the old one");

	/* A pid a watch found to be somebody else now is read afresh at the next refresh. */
	mkproc(20, 0, "envoy", 500, CG("/istio"), "/usr/local/bin/envoy");
	mkproc(21, 20, "envoy", 510, NULL, NULL);
	podscan_refresh(ps, &st);
	c = by_root(ps, 20);
	is_int(c ? c->nprocs : 0, 2, "a sidecar and its child");
	rmproc(21);
	mkproc(21, 0, "job", 520, CG("/app2"), "/usr/bin/job");
	podscan_stale(ps, 21);
	podscan_refresh(ps, &st);
	is_int(by_root(ps, 20)->nprocs, 1, "the stale pid left the sidecar");
	c = by_root(ps, 21);
	ok(c && c->role == ROLE_APP, "and is a container of its own");
	podscan_free(ps);
}


static void interrupted(int signo)
{
	(void)signo;
}

/* SIGALRM in seconds (0: none) interrupts a blocking open or read with EINTR, not the test. */
static void interrupt_after(unsigned seconds)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = interrupted;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(seconds);
}

/*
 * Once the drain has begun no command line is read: a stuck process (here a
 * cmdline that is a FIFO nobody writes: reading it would block) cannot hold
 * up the stop. An alarm fails the test instead of hanging it. Nor does
 * podscan_cmdline read one for the stopper's pre-flight or pod's
 * `rearguard run` names: it refuses, without opening the file.
 */
static void names_only(void)
{
	static const char args[] = "/usr/local/bin/envoy\0-c\0/etc/envoy.yaml";
	struct podscan_stats st;
	struct podscan *ps;
	char path[600], buf[256];
	size_t len;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(5, 0, "rearguard", 200, CG("/agent"), "/rearguard");
	ps = open_scan(5);
	podscan_refresh(ps, &st);
	podscan_names_only(ps);
	mkproc(30, 0, "envoy", 900, CG("/istio"), NULL);
	snprintf(path, sizeof(path), "%s/30/cmdline", root);
	if (mkfifo(path, 0644) < 0)
		abort();
	alarm(5);
	is_int(podscan_refresh(ps, &st), 0, "a refresh with a process whose command line would block");
	alarm(0);
	ok(by_root(ps, 30) && by_root(ps, 30)->role == ROLE_SIDECAR, "named and classified from its comm alone");

	memset(buf, 'x', sizeof(buf));
	len = 12345;
	interrupt_after(2);
	is_int(podscan_cmdline(ps, 30, 900, buf, sizeof(buf), &len), -EPERM,
	       "podscan_cmdline refuses (-EPERM): the FIFO is not opened");
	interrupt_after(0);
	mkproc(31, 0, "envoy", 910, CG("/other"), NULL);
	put(31, "cmdline", args, sizeof(args));
	is_int(podscan_cmdline(ps, 31, 910, buf, sizeof(buf), &len), -EPERM, "nor a command line that can be read");
	ok(len == 12345 && buf[0] == 'x' && buf[sizeof(buf) - 1] == 'x', "nothing read, nothing written");
	podscan_free(ps);
}

/* A kubelet's cgroup paths are long: the display keeps them whole, also after a rekey. */
static void long_cgroup(void)
{
#define LONG_POD "/kubepods/besteffort/pod0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9"
#define LONG_ID "/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define LONG_SYSTEMD                                                                                            \
	"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0f1e2d3c_4b5a_6978_8695_a4b3c2d1e0f9" \
	".slice/cri-containerd-fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210.scope"
	const char *v1 = "9:pids:" LONG_POD LONG_ID "\n0::/\n";
	const char *v2 = "0::" LONG_SYSTEMD "\n";
	struct podscan_container *c;
	struct podscan *ps;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(5, 0, "rearguard", 200, CG("/agent"), "/rearguard");
	mkproc(10, 0, "job", 300, v1, "/usr/bin/job");
	mkproc(20, 0, "runc:[2:INIT]", 400, CG("/runc"), NULL);
	ps = open_scan(5);
	is_int(podscan_refresh(ps, NULL), 0, "refresh succeeds");
	c = by_root(ps, 10);
	is_str(c ? c->display : "", LONG_POD LONG_ID, "a kubelet's cgroup path is shown whole");
	put(20, "cgroup", v2, strlen(v2));
	is_int(podscan_refresh(ps, NULL), 0, "refresh succeeds");
	c = by_root(ps, 20);
	is_str(c ? c->display : "", LONG_SYSTEMD, "a systemd driver's path is shown whole after the move");
	podscan_free(ps);
#undef LONG_POD
#undef LONG_ID
#undef LONG_SYSTEMD
}

/* A pending root that exited before a refresh saw its program: its role and name, settled. */
static void pending_settled(void)
{
	struct podscan_container *c;
	struct podscan *ps;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 150, CG("/agent"), "/rearguard");
	mkproc(7, 0, "runc:[2:INIT]", 200, CG("/app"), "runc\0init");
	mkproc(8, 0, "runc:[2:INIT]", 210, CG("/istio"), "runc\0init");
	mkproc(9, 0, "runc:[2:INIT]", 220, CG("/app2"), "runc\0init");
	ps = open_scan(3);
	podscan_refresh(ps, NULL);
	ok(by_root(ps, 7)->role == ROLE_PENDING && by_root(ps, 8)->role == ROLE_PENDING, "pending at first");

	/* Reaped already: nothing of its program was seen. */
	rmproc(7);
	c = by_root(ps, 7);
	podscan_settle_pending(ps, c);
	ok(c->role == ROLE_APP && c->root_gone, "gone: an app, over");
	is_str(c->name, "runc:[2:INIT]", "named after the runtime's init, the only process seen");

	/* A zombie not reaped yet still shows the program it ran. */
	stat_file(8, 0, "envoy", 210, 0, 'Z');
	put(8, "cmdline", "", 0);
	c = by_root(ps, 8);
	podscan_settle_pending(ps, c);
	ok(c->role == ROLE_SIDECAR && c->sidecar == 0, "a zombie named envoy: the sidecar");
	is_str(c->name, "envoy", "named after its program");

	/* Another process with the pid now: its name is not the container's. */
	stat_file(9, 0, "job", 999, 0, 'S');
	c = by_root(ps, 9);
	podscan_settle_pending(ps, c);
	ok(c->role == ROLE_APP, "pid reused: an app still");
	is_str(c->name, "runc:[2:INIT]", "and not named after the newcomer");

	/* Settled once: a later refresh leaves them be. */
	podscan_refresh(ps, NULL);
	ok(by_root(ps, 8)->role == ROLE_SIDECAR && !by_root(ps, 8)->role_changed, "a refresh keeps the role");
	podscan_free(ps);
}

/*
 * A root seen between the two steps of its exec: the kernel has set its new
 * comm ("consul-dataplan", cut to 15 bytes) but not its command line yet.
 * Its comm alone would make it an app; it is pending until the command
 * line is there.
 */
static void exec_under_way(void)
{
	static const char args[] = "/usr/local/bin/consul-dataplane\0-addresses";
	struct podscan *ps;
	struct podscan_container *c;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 110, CG("/agent"), "rearguard");
	mkproc(7, 0, "consul-dataplan", 200, CG("/consul"), NULL);
	put(7, "cmdline", "", 0);
	mkproc(9, 0, "enter", 300, CG("/zombie"), NULL);
	put(9, "cmdline", "", 0);
	ps = open_scan(3);
	podscan_refresh(ps, NULL);
	c = by_root(ps, 7);
	ok(c && c->role == ROLE_PENDING, "an empty command line: pending, not an app by its cut comm");

	put(7, "cmdline", args, sizeof(args));
	podscan_refresh(ps, NULL);
	ok(c->role == ROLE_SIDECAR && c->sidecar == 1 && c->role_changed, "its command line read: the sidecar");
	is_str(c->name, "consul-dataplane", "named after its program");

	/* It exits before the command line is seen: its comm is the last word. */
	c = by_root(ps, 9);
	ok(c && c->role == ROLE_PENDING, "another one pending");
	rmproc(9);
	podscan_settle_pending(ps, c);
	ok(c->role == ROLE_APP && c->root_gone, "gone before its command line was read: an app by its comm");
	podscan_free(ps);
}

/*
 * A container pending for long enough (its caller says when: podscan keeps
 * no clock) is classified by what it shows at the next refresh: a runtime's
 * init by its name, a root whose command line stays empty by its comm.
 */
static void pending_over(void)
{
	struct podscan *ps;
	struct podscan_container *c, *e;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 110, CG("/agent"), "rearguard");
	mkproc(7, 0, "runc:[2:INIT]", 200, CG("/stuck"), "runc\0init");
	mkproc(8, 0, "job", 210, CG("/wiped"), NULL);
	put(8, "cmdline", "", 0);
	ps = open_scan(3);
	podscan_refresh(ps, NULL);
	c = by_root(ps, 7);
	e = by_root(ps, 8);
	ok(c && c->role == ROLE_PENDING && e && e->role == ROLE_PENDING, "both pending at first");
	podscan_refresh(ps, NULL);
	ok(c->role == ROLE_PENDING && e->role == ROLE_PENDING, "and for as long as no one says otherwise");
	podscan_pending_over(ps, c);
	podscan_pending_over(ps, e);
	ok(c->role == ROLE_PENDING, "said: nothing changes before the next refresh");
	podscan_refresh(ps, NULL);
	ok(c->role == ROLE_APP && c->role_changed, "the runtime's init that never exec'd: what its name matched");
	ok(e->role == ROLE_APP && e->role_changed, "the root whose command line stays empty: by its comm");
	is_str(e->name, "job", "named by it");
	podscan_free(ps);
}

/* Whether a process catches, ignores or blocks a signal: its status's masks. */
static void catches(void)
{
	static const char none[] = "Name:\tnginx\nState:\tS (sleeping)\n"
				   "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"
				   "SigCgt:\t0000000000000000\n";
	static const char caught[] = "Name:\tnginx\nState:\tS (sleeping)\n"
				     "SigBlk:\t0000000000000000\nSigIgn:\t0000000000001000\n"
				     "SigCgt:\t0000000000004a02\n";
	static const char busy[] = "Name:\tnginx\nState:\tR (running)\nSigBlk:\t0000000000000000\n"
				   "SigIgn:\t0000000000000000\nSigCgt:\t0000000000004a02\n";
	static const char blocked[] = "Name:\tfake\nState:\tS (sleeping)\n"
				      "SigBlk:\tfffffffe7ffbfeff\nSigIgn:\t0000000000000000\n"
				      "SigCgt:\t0000000000000000\n";
	struct podscan *ps;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(7, 0, "nginx", 700, CG("/c1"), "nginx");
	ps = open_scan(1);
	put(7, "status", none, strlen(none));
	is_int(podscan_catches(ps, 7, 700, SIGTERM), 0, "no handler yet: SIGTERM not caught");
	put(7, "status", caught, strlen(caught));
	is_int(podscan_catches(ps, 7, 700, SIGTERM), 1, "SigCgt has SIGTERM");
	is_int(podscan_catches(ps, 7, 700, SIGQUIT), 0, "but not SIGQUIT");
	is_int(podscan_catches(ps, 7, 700, SIGPIPE), PODSCAN_IGNORES, "an ignored signal counts, said so");
	put(7, "status", busy, strlen(busy));
	is_int(podscan_catches(ps, 7, 700, SIGTERM), 0, "caught, but still busy starting (R): not yet");
	put(7, "status", blocked, strlen(blocked));
	is_int(podscan_catches(ps, 7, 700, SIGTERM), 1, "a blocked signal (sigwait, signalfd) counts");
	is_int(podscan_catches(ps, 7, 701, SIGTERM), -ESRCH, "another process under the pid: gone");
	is_int(podscan_catches(ps, 8, 800, SIGTERM), -ESRCH, "no such pid: gone");
	put(7, "status", "Name:\tx\n", 8);
	is_int(podscan_catches(ps, 7, 700, SIGTERM), -EINVAL, "no masks: an error");
	/* What the stop signal will do now, whatever the state: the agent's look before it sends it. */
	put(7, "status", none, strlen(none));
	is_int(podscan_fate(ps, 7, 700, SIGTERM), PODSCAN_FATE_DIES, "no handler: it dies of SIGTERM");
	is_int(podscan_fate(ps, 7, 700, SIGWINCH), PODSCAN_FATE_IGNORES, "SIGWINCH's default ends nothing");
	put(7, "status", caught, strlen(caught));
	is_int(podscan_fate(ps, 7, 700, SIGTERM), PODSCAN_FATE_HANDLES, "SigCgt: it handles it");
	is_int(podscan_fate(ps, 7, 700, SIGQUIT), PODSCAN_FATE_DIES, "but dies of SIGQUIT");
	is_int(podscan_fate(ps, 7, 700, SIGPIPE), PODSCAN_FATE_IGNORES, "SigIgn: it ignores it");
	put(7, "status", busy, strlen(busy));
	is_int(podscan_fate(ps, 7, 700, SIGTERM), PODSCAN_FATE_HANDLES, "still starting, but its handler is there");
	put(7, "status", blocked, strlen(blocked));
	is_int(podscan_fate(ps, 7, 700, SIGTERM), PODSCAN_FATE_HANDLES, "blocked: it waits for it (signalfd)");
	is_int(podscan_fate(ps, 7, 701, SIGTERM), -ESRCH, "another process under the pid: gone");
	is_int(podscan_fate(ps, 7, 700, 0), -EINVAL, "no signal 0");
	podscan_free(ps);
}

/* The pid counter: moved since the last refresh began, or not; unreadable, an error. */
static void pid_counter(void)
{
	char path[512];
	struct podscan *ps;
	int i;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 110, CG("/agent"), "rearguard");
	ps = open_scan(3);
	is_int(podscan_pids_moved(ps), -ENOENT, "no counter: an error");
	podscan_free(ps);

	snprintf(path, sizeof(path), "%s/sys", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/kernel", root);
	mkdir(path, 0755);
	put(0, "../sys/kernel/ns_last_pid", "3\n", 2);
	ps = open_scan(3);
	is_int(podscan_pids_moved(ps), 1, "before any refresh: moved");
	podscan_refresh(ps, NULL);
	is_int(podscan_pids_moved(ps), 0, "refreshed since: not moved");
	put(0, "../sys/kernel/ns_last_pid", "41\n", 3);
	is_int(podscan_pids_moved(ps), 1, "a pid handed out: moved");
	is_int(podscan_pids_moved(ps), 1, "until the next refresh");
	/*
	 * Handed out, but not in /proc yet (the fork's cgroup work comes
	 * first): the refresh that read the counter did not see it, and more
	 * looks are asked for, or the container could live and die unseen.
	 */
	podscan_refresh(ps, NULL);
	is_int(podscan_pids_moved(ps), 1, "refreshed, but the newest pid was not listed: look again");
	mkproc(41, 0, "runc:[2:INIT]", 500, CG("/app"), "runc\0init");
	podscan_refresh(ps, NULL);
	ok(by_root(ps, 41) != NULL, "the next look finds it");
	is_int(podscan_pids_moved(ps), 0, "listed: not moved");
	/* One that never shows (gone, or a thread's): a few looks, then no more. */
	put(0, "../sys/kernel/ns_last_pid", "57\n", 3);
	for (i = 0; i < 10 && podscan_pids_moved(ps) == 1; i++)
		podscan_refresh(ps, NULL);
	ok(i >= 2 && i <= 6, "a pid never listed is looked for a few times, then not (%d refreshes)", i);
	is_int(podscan_pids_moved(ps), 0, "and then not moved");
	podscan_free(ps);
}

/* The lowest descriptor free now. */
static int lowest_free(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		abort();
	close(fd);
	return fd;
}

/*
 * Every descriptor the process may have is taken, as pidfds take them in an
 * agent that watches many processes under a low RLIMIT_NOFILE: a refresh
 * still reads the processes it has not seen, and every reader still works,
 * through the descriptor podscan holds in reserve.
 */
static void no_descriptor_left(void)
{
	static const char status[] = "Name:\tjob\nState:\tS (sleeping)\nUid:\t1001\t1001\t1001\t1001\n"
				     "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"
				     "SigCgt:\t0000000000004a02\n";
	struct podscan_stats st = { 0 };
	struct rlimit old, tight;
	struct podscan_container *c;
	struct podscan *ps;
	int fds[64], n = 0, i;
	uint64_t start = 0;
	bool zombie = true;
	uid_t ruid = 0, suid = 0;
	pid_t chain[8];
	char buf[64];
	size_t len = 0;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 110, CG("/agent"), "rearguard");
	ps = open_scan(3);
	is_int(podscan_refresh(ps, NULL), 0, "a first refresh");
	/* Written now: writing them takes descriptors too. */
	mkproc(20, 0, "job", 2000, CG("/app"), "/usr/bin/job");
	mkproc(21, 20, "sh", 2100, NULL, "/bin/sh");
	put(20, "status", status, strlen(status));

	if (getrlimit(RLIMIT_NOFILE, &old) < 0)
		abort();
	tight = old;
	tight.rlim_cur = (rlim_t)lowest_free() + 8;
	if (tight.rlim_cur > old.rlim_cur || setrlimit(RLIMIT_NOFILE, &tight) < 0)
		abort();
	while (n < 64 && (fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		n++;
	ok(n < 64 && errno == EMFILE, "every descriptor taken (%d more)", n);

	is_int(podscan_refresh(ps, &st), 0, "a refresh with no descriptor left");
	is_int(st.unreadable, 0, "every new process read");
	is_int(st.classified, 2, "both of them");
	c = by_root(ps, 20);
	ok(c && c->role == ROLE_APP && c->nprocs == 2, "the new container seen, with its two processes");
	is_str(c ? c->name : "", "job", "named from its root's command line");
	is_int(podscan_start_time(ps, 20, &start, &zombie), 0, "a start time read");
	ok(start == 2000 && !zombie, "the right one");
	is_int(podscan_cmdline(ps, 20, 2000, buf, sizeof(buf), &len), 0, "a command line read");
	is_int(podscan_uids(ps, 20, 2000, &ruid, &suid), 0, "uids read");
	ok(ruid == 1001 && suid == 1001, "the right ones");
	is_int(podscan_catches(ps, 20, 2000, SIGTERM), 1, "a signal mask read");
	is_int(podscan_ancestors(ps, 21, chain, 8), 2, "ancestors read");
	is_int(podscan_start_time(ps, 22, &start, &zombie), -ENOENT, "a pid that is not there: ENOENT");
	i = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ok(i < 0 && errno == EMFILE, "the reserve taken back after each read, also a failed one");
	if (i >= 0)
		close(i);

	while (n > 0)
		close(fds[--n]);
	if (setrlimit(RLIMIT_NOFILE, &old) < 0)
		abort();
	podscan_free(ps);
}

/* A pod of pause and the agent, and an app's init seen in the runtime's cgroup ("/runtime"): pending. */
static struct podscan *init_in_runtime(struct podscan_container **app, const char *what)
{
	struct podscan *ps;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 150, CG("/agent"), "/rearguard");
	mkproc(7, 0, "runc:[2:INIT]", 200, CG("/runtime"), "runc\0init");
	ps = open_scan(3);
	podscan_refresh(ps, NULL);
	*app = by_root(ps, 7);
	ok(*app && (*app)->role == ROLE_PENDING, "%san init in the runtime's cgroup: pending", what);
	return ps;
}

/*
 * Runtime inits seen in a cgroup that is not yet theirs (the runtime's own,
 * "/runtime" here), before they are moved into their container's.
 */
static void transient_cgroup(void)
{
	struct podscan_container *app, *side, *c;
	struct podscan *ps = init_in_runtime(&app, "");

	/* It exits before it moves (an app that ends at once); the next init shows up there too. */
	rmproc(7);
	podscan_settle_pending(ps, app);
	mkproc(8, 0, "runc:[2:INIT]", 300, CG("/runtime"), "runc\0init");
	podscan_refresh(ps, NULL);
	side = by_root(ps, 8);
	ok(side && side != app && side->role == ROLE_PENDING, "the next init is a container of its own");
	mkproc(8, 0, "envoy", 300, CG("/istio"), "envoy");
	podscan_refresh(ps, NULL);
	side = by_root(ps, 8);
	ok(side && side->role == ROLE_SIDECAR && side->sidecar == 0, "and is the sidecar once it execs");

	/* Two inits in the runtime's cgroup at once: each is a container of its own. */
	mkproc(9, 0, "runc:[2:INIT]", 400, CG("/runtime"), "runc\0init");
	podscan_refresh(ps, NULL);
	mkproc(10, 0, "runc:[2:INIT]", 410, CG("/runtime"), "runc\0init");
	podscan_refresh(ps, NULL);
	c = by_root(ps, 10);
	ok(c && c != by_root(ps, 9) && c->role == ROLE_PENDING && by_root(ps, 9)->nprocs == 1,
	   "the second is a container of its own while they share the cgroup");
	mkproc(9, 0, "job", 400, CG("/app2"), "job");
	podscan_refresh(ps, NULL);
	mkproc(10, 0, "consul-dataplane", 410, CG("/consul"), "consul-dataplane");
	podscan_refresh(ps, NULL);
	c = by_root(ps, 9);
	ok(c && c->role == ROLE_APP && c->nprocs == 1, "the first moved: an app of one process");
	c = by_root(ps, 10);
	ok(c && c->role == ROLE_SIDECAR && c->sidecar == 1, "the second, read afresh: the sidecar");
	podscan_free(ps);
}

/* A runtime's cgroup outside the pod's (/kubepods/pod1), where its exec sessions' inits are born. */
#define OUTSIDE "9:pids:/system.slice/containerd.service\n0::/\n"

/*
 * An init seen only outside the pod's cgroups that exits without running a
 * program never joined a container (an exec session's, a probe's): nothing
 * is left of it, and it is no app. One that moved into a cgroup of its own
 * first, or whose zombie shows one, is a container.
 */
static void outside_init(void)
{
	struct podscan_container *c;
	struct podscan *ps;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 150, CG("/agent"), "/rearguard");
	ps = open_scan(3);
	podscan_refresh(ps, NULL);
	mkproc(7, 0, "runc:[2:INIT]", 200, OUTSIDE, "runc\0init");
	podscan_refresh(ps, NULL);
	c = by_root(ps, 7);
	ok(c && c->role == ROLE_PENDING, "an init outside the pod: pending");
	rmproc(7);
	podscan_settle_pending(ps, c);
	ok(c && c->merged && c->root_gone && c->role == ROLE_OTHER && c->nprocs == 0,
	   "gone without a program, never in the pod: no container");

	/* Its cgroups outside the pod change (the host moves the runtime's): still not the pod's. */
	mkproc(10, 0, "runc:[2:INIT]", 250, OUTSIDE, "runc\0init");
	podscan_refresh(ps, NULL);
	c = by_root(ps, 10);
	mkproc(10, 0, "runc:[2:INIT]", 250, "9:pids:/system.slice/other\n0::/\n", "runc\0init");
	podscan_refresh(ps, NULL);
	rmproc(10);
	podscan_settle_pending(ps, c);
	ok(c && c->merged && c->role == ROLE_OTHER, "moved between cgroups outside the pod: no container");

	/* Moved into its own cgroup, then gone before its program was seen: a container. */
	mkproc(8, 0, "runc:[2:INIT]", 300, OUTSIDE, "runc\0init");
	podscan_refresh(ps, NULL);
	mkproc(8, 0, "runc:[2:INIT]", 300, CG("/app"), "runc\0init");
	podscan_refresh(ps, NULL);
	c = by_root(ps, 8);
	rmproc(8);
	podscan_settle_pending(ps, c);
	ok(c && !c->merged && c->role == ROLE_APP && strcmp(c->display, "/kubepods/pod1/app") == 0,
	   "moved into its own cgroup first: an app");

	/* Seen outside only, but its zombie shows its own cgroup and its program. */
	mkproc(9, 0, "runc:[2:INIT]", 400, OUTSIDE, "runc\0init");
	podscan_refresh(ps, NULL);
	c = by_root(ps, 9);
	stat_file(9, 0, "job", 400, 0, 'Z');
	put(9, "cgroup", CG("/app2"), strlen(CG("/app2")));
	put(9, "cmdline", "", 0);
	podscan_settle_pending(ps, c);
	ok(c && !c->merged && c->role == ROLE_APP && strcmp(c->name, "job") == 0 &&
	       strcmp(c->display, "/kubepods/pod1/app2") == 0,
	   "a zombie in its own cgroup: the app it ran");

	/* A flat pod (one cgroup for all) has no pod cgroup to tell by: the init is a container. */
	podscan_free(ps);
	reset();
	mkproc(1, 0, "pause", 100, OUTSIDE, "/pause");
	mkproc(3, 0, "rearguard", 150, OUTSIDE, "/rearguard");
	ps = open_scan(3);
	podscan_refresh(ps, NULL);
	mkproc(7, 0, "runc:[2:INIT]", 200, OUTSIDE, "runc\0init");
	podscan_refresh(ps, NULL);
	c = by_root(ps, 7);
	rmproc(7);
	podscan_settle_pending(ps, c);
	ok(c && !c->merged && c->role == ROLE_APP, "flat: an init gone at once is an app, as before");
	podscan_free(ps);
}

/*
 * A container's init seen in the runtime's cgroup; by the next rescan it
 * has moved and exec'd, and an exec session begun in it since is seen for
 * the first time: the session joins the container, not the other way round
 * (a container's root is its earliest process).
 */
static void session_before_move(void)
{
	struct podscan_container *app;
	struct podscan *ps = init_in_runtime(&app, "session before the move: ");

	mkproc(7, 0, "job", 200, CG("/app"), "/job");
	mkproc(9, 0, "sh", 400, CG("/app"), "/bin/sh");
	podscan_refresh(ps, NULL);
	ok(app && by_root(ps, 7) == app && !app->merged && app->role == ROLE_APP && app->nprocs == 2,
	   "the container is the app, with the session's process");
	ok(by_root(ps, 9) == NULL || by_root(ps, 9)->merged, "the session is no container");
	podscan_free(ps);
}

/*
 * An app's init and a sidecar's seen in the runtime's cgroup in the same
 * rescan, and the app's root exits before it moves: whether its exit is
 * settled before or after that rescan, the sidecar's init is a container
 * of its own, which becomes the sidecar once it moves and execs.
 */
static void shared_transient_cgroup(void)
{
	struct podscan_container *app, *side;
	struct podscan *ps;
	int exit_first;

	for (exit_first = 0; exit_first < 2; exit_first++) {
		ps = init_in_runtime(&app, exit_first ? "exit first: " : "rescan first: ");

		mkproc(8, 0, "runc:[2:INIT]", 300, CG("/runtime"), "runc\0init");
		if (exit_first) {
			rmproc(7);
			podscan_settle_pending(ps, app);
			podscan_root_exited(ps, app);
			podscan_refresh(ps, NULL);
		} else {
			podscan_refresh(ps, NULL);
			rmproc(7);
			podscan_settle_pending(ps, app);
			podscan_root_exited(ps, app);
		}
		side = by_root(ps, 8);
		ok(side && side != app && side->role == ROLE_PENDING, "the sidecar's init is a container of its own");
		ok(app->role == ROLE_APP && app->root_gone, "the app is over");

		mkproc(8, 0, "runc:[2:INIT]", 300, CG("/istio"), "runc\0init");
		podscan_refresh(ps, NULL);
		mkproc(8, 0, "envoy", 300, CG("/istio"), "envoy");
		podscan_refresh(ps, NULL);
		side = by_root(ps, 8);
		ok(side && side->role == ROLE_SIDECAR && side->sidecar == 0 &&
		       strcmp(side->display, "/kubepods/pod1/istio") == 0,
		   "moved and exec'd: the sidecar, in its own cgroup");
		podscan_free(ps);
	}
}

/*
 * An exec session's init and a sidecar's seen in the runtime's cgroup at
 * once: the session's moves into the app's cgroup and is merged into the
 * app; the sidecar's stays a container of its own.
 */
static void exec_session_beside_init(void)
{
	struct podscan_container *app, *session, *side;
	struct podscan *ps;

	reset();
	mkproc(1, 0, "pause", 100, CG("/pause"), "/pause");
	mkproc(3, 0, "rearguard", 150, CG("/agent"), "/rearguard");
	mkproc(5, 0, "job", 180, CG("/app"), "/job");
	ps = open_scan(3);
	podscan_refresh(ps, NULL);
	app = by_root(ps, 5);
	mkproc(7, 0, "runc:[2:INIT]", 200, CG("/runtime"), "runc\0init");
	podscan_refresh(ps, NULL);
	session = by_root(ps, 7);
	mkproc(8, 0, "runc:[2:INIT]", 300, CG("/runtime"), "runc\0init");
	podscan_refresh(ps, NULL);
	side = by_root(ps, 8);
	ok(session && side && side != session && session->role == ROLE_PENDING && side->role == ROLE_PENDING,
	   "two inits in the runtime's cgroup: two pending containers");

	mkproc(7, 0, "runc:[2:INIT]", 200, CG("/app"), "runc\0init");
	podscan_refresh(ps, NULL);
	ok(session && session->merged && session->root_gone, "the session's moved into the app: no container");
	is_int(app->nprocs, 2, "the app absorbs it alone");
	/* An init seen in the app's cgroup at once (runc's exec sessions, most often). */
	mkproc(9, 0, "runc:[2:INIT]", 400, CG("/app"), "runc\0init");
	podscan_refresh(ps, NULL);
	ok(by_root(ps, 9) == NULL && app->nprocs == 3, "an init in a live container's cgroup is a process of it");
	rmproc(9);
	podscan_refresh(ps, NULL);
	ok(side && by_root(ps, 8) == side && side->role == ROLE_PENDING,
	   "the sidecar's init is still a container of its own");

	mkproc(8, 0, "runc:[2:INIT]", 300, CG("/istio"), "runc\0init");
	podscan_refresh(ps, NULL);
	mkproc(8, 0, "envoy", 300, CG("/istio"), "envoy");
	podscan_refresh(ps, NULL);
	side = by_root(ps, 8);
	ok(side && side->role == ROLE_SIDECAR && side->sidecar == 0, "and is the sidecar once it moves and execs");
	is_int(app->nprocs, 2, "not a process of the app");

	/* After the pids wrapped, a session's init read before the container it is in. */
	mkproc(2, 0, "runc:[2:INIT]", 600, CG("/app2"), "runc\0init");
	mkproc(40, 0, "job", 500, CG("/app2"), "/job");
	podscan_refresh(ps, NULL);
	session = by_root(ps, 2);
	app = by_root(ps, 40);
	ok(session && app && session != app && session->role == ROLE_PENDING, "read first, it is pending for a moment");
	podscan_refresh(ps, NULL);
	ok(session && session->merged && app && app->nprocs == 2, "then merged into the container it is in");
	podscan_free(ps);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/rg-podscan-%d", tmp ? tmp : "/tmp", (int)getpid());
	basic_pod();
	earliest_root();
	pending_and_upgrades();
	other_and_orphans();
	hybrid_and_flat();
	no_shared_namespace();
	many_processes();
	start_time();
	cmdline_and_ancestors();
	pid_reuse();
	names_only();
	long_cgroup();
	pending_settled();
	pending_over();
	transient_cgroup();
	outside_init();
	session_before_move();
	shared_transient_cgroup();
	exec_session_beside_init();
	exec_under_way();
	pid_counter();
	catches();
	no_descriptor_left();
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			return 1;
	}
	return done_testing();
}
