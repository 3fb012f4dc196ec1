/*
 * A pod for the unit tests of pod, stopper and the engine, without root:
 * a fake /proc tree (as tests/unit/test-podscan.c writes one: every file
 * says what the kernel would show) whose pids are real children of the
 * test, so that their pidfds, signals and exit codes are real. The clock
 * is the test's own (fake_clock): time passes when the test says so.
 *
 *	fake_reset();
 *	fake_proc(1, 0, "pause", CG("/pause"), "/pause");
 *	pid = fake_child(CHILD_WAITS, &release);
 *	fake_proc(pid, 0, "job", CG("/app"), "/usr/bin/job");
 *	... fake_release(release, 3): it exits 3 ...
 */
#ifndef RG_FAKEPOD_H
#define RG_FAKEPOD_H

#include "log.h"
#include "pod.h"
#include "spec.h"
#include "tap.h"
#include "util.h"

#include <errno.h>
#include <ev.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define CG(path) "0::/kubepods/pod1" path "\n"

static char fake_root[256];
static int64_t fake_now = 1000 * US_PER_S;

/* The test's clock: monotonic microseconds that move only when the test moves them. */
static inline int64_t fake_clock(void)
{
	return fake_now;
}

static inline void fake_put(pid_t pid, const char *file, const char *data, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", fake_root, (int)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/%s", fake_root, (int)pid, file);
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, len, f) != len)
		abort();
	fclose(f);
}

/* A fresh tree: the entries /proc has besides pids, and a pid counter. */
static inline void fake_reset(void)
{
	char cmd[1024];

	if (!fake_root[0]) {
		snprintf(fake_root, sizeof(fake_root), "/tmp/rg-fakepod.XXXXXX");
		if (!mkdtemp(fake_root))
			abort();
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s/self' '%s/sys/kernel'", fake_root, fake_root, fake_root);
	if (system(cmd) != 0)
		abort();
	fake_put(0, "../sys/kernel/ns_last_pid", "1\n", 2);
}

static inline void fake_cleanup(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fake_root);
	if (fake_root[0] && system(cmd) != 0)
		abort();
}

/* The start time every fake process has: any value, as long as stat and the watches agree. */
#define FAKE_START(pid) (1000ULL + (unsigned long long)(pid))

/*
 * A process: its stat (sleeping), its cgroup (NULL: none, as a fork's is
 * not read), its command line (argv0, or NULL), and a status whose masks
 * say it catches SIGTERM, so that a stop signal need not wait for it.
 */
static inline void fake_proc(pid_t pid, pid_t ppid, const char *comm, const char *cgroup, const char *argv0)
{
	static const char status[] = "Name:\tx\nState:\tS (sleeping)\nSigBlk:\t0000000000000000\n"
				     "SigIgn:\t0000000000000000\nSigCgt:\t0000000000004000\n";
	char buf[512];

	snprintf(buf, sizeof(buf), "%d (%s) S %d %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 1000 100 0 0 0\n", (int)pid,
		 comm, (int)ppid, (int)pid, (int)pid, FAKE_START(pid));
	fake_put(pid, "stat", buf, strlen(buf));
	if (cgroup)
		fake_put(pid, "cgroup", cgroup, strlen(cgroup));
	if (argv0)
		fake_put(pid, "cmdline", argv0, strlen(argv0) + 1);
	fake_put(pid, "status", status, sizeof(status) - 1);
}

/* The same with a whole command line (its arguments separated by NULs, len bytes). */
static inline void fake_cmdline(pid_t pid, const char *cmdline, size_t len)
{
	fake_put(pid, "cmdline", cmdline, len);
}

static inline void fake_gone(pid_t pid)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%d'", fake_root, (int)pid);
	if (system(cmd) != 0)
		abort();
}

/* How a test child lives: it waits to be released, then exits with the code it is given. */
enum fake_child {
	CHILD_WAITS,        /* a byte on its pipe is its exit code; SIGTERM kills it */
	CHILD_TERM_EXITS,   /* as CHILD_WAITS, but SIGTERM makes it exit 0 */
	CHILD_IGNORES_TERM, /* as CHILD_WAITS, but SIGTERM is ignored */
};

static inline void exit_zero(int sig)
{
	_exit(0);
}

/*
 * A child of the test; *release is the pipe that ends it (fake_release), or -1.
 * SIGTERM is blocked across the fork and in the child until its handling
 * is set, so a SIGTERM sent as soon as this returns, however slowly the
 * child is scheduled, finds it living as how says.
 */
static inline pid_t fake_child(enum fake_child how, int *release)
{
	unsigned char code = 0;
	sigset_t term, old;
	int fds[2];
	pid_t pid;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	if (pipe(fds) < 0 || sigprocmask(SIG_BLOCK, &term, &old) < 0)
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		signal(SIGTERM, how == CHILD_TERM_EXITS ? exit_zero : how == CHILD_IGNORES_TERM ? SIG_IGN : SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(fds[1]);
		if (read(fds[0], &code, 1) != 1)
			code = 0;
		_exit(code);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fds[0]);
	*release = fds[1];
	return pid;
}

/* Ends a CHILD_* with code. */
static inline void fake_release(int release, int code)
{
	unsigned char c = (unsigned char)code;

	if (write(release, &c, 1) != 1)
		abort();
	close(release);
}

/*
 * What every test on the fake tree starts with: the log, every level of
 * it, in a temporary file (returned, for a test that reads it), and the
 * default loop (*loop, unless NULL), which the engine takes too.
 */
static inline FILE *fake_start(struct ev_loop **loop)
{
	FILE *log_file = tmpfile();

	if (!log_file)
		bail_out("no temporary file for the log");
	log_setup(LOG_DEBUG, LOG_TEXT, fileno(log_file));
	if (loop && !(*loop = ev_default_loop(0)))
		bail_out("no loop");
	return log_file;
}

/* spec, from text; the test cannot go on without it. */
static inline void fake_spec(struct sidecar_spec *spec, const char *text)
{
	char err[256];

	if (spec_parse(text, spec, err, sizeof(err)) < 0)
		bail_out(err);
}

/* The sidecar of fake_pod_app_sidecar, stopped by SIGTERM. */
#define FAKE_SIDECAR_SPEC "match=fluent-bit,stop=signal:TERM"

/* A fresh tree of the pod's pause and this process as the agent. */
static inline void fake_pod_base(void)
{
	fake_reset();
	fake_proc(1, 0, "pause", CG("/pause"), "/pause");
	fake_proc(getpid(), 0, "rearguard", CG("/agent"), "/rearguard");
}

/* fake_pod_base, an app (job, released by *app_rel) and a fluent-bit sidecar that lives as said. */
static inline void fake_pod_app_sidecar(enum fake_child sidecar, pid_t *app, int *app_rel, pid_t *sc, int *sc_rel)
{
	fake_pod_base();
	*app = fake_child(CHILD_WAITS, app_rel);
	fake_proc(*app, 0, "job", CG("/app"), "/usr/bin/job");
	*sc = fake_child(sidecar, sc_rel);
	fake_proc(*sc, 0, "fluent-bit", CG("/proxy"), "/usr/bin/fluent-bit");
}

/* The container whose root is root, as p's last scan found it; the test cannot go on without it. */
static inline const struct podscan_container *fake_container_of(const struct pod *p, pid_t root)
{
	char why[64];
	size_t i;

	for (i = 0; i < podscan_count(p->ps); i++)
		if (podscan_container(p->ps, i)->root == root)
			return podscan_container(p->ps, i);
	snprintf(why, sizeof(why), "no container whose root is %d", (int)root);
	bail_out(why);
	return NULL;
}

/* How a pod follows the fake tree: this process as the agent, the test's clock, the one sidecar spec. */
static inline void fake_pod_config(struct pod_config *cfg, struct ev_loop *loop, const struct sidecar_spec *spec)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->loop = loop;
	cfg->proc = fake_root;
	cfg->self = getpid();
	cfg->clock = fake_clock;
	cfg->sidecars = spec;
	cfg->nsidecars = 1;
}

/* Whether pid is gone (exited, and reaped by libev or by us). */
static inline bool fake_dead(pid_t pid)
{
	waitpid(pid, NULL, WNOHANG);
	return kill(pid, 0) < 0 && errno == ESRCH;
}

/*
 * A wait for what real children do: bounded by FAKE_WAIT_S of real time,
 * far more than a loaded machine needs, so that no test depends on how
 * fast it runs; a tick looks at the condition again now and then, for
 * what no watcher of the loop wakes it for (an exit code the kernel
 * records a moment after the reap).
 */
#define FAKE_WAIT_S 30.
#define FAKE_TICK_S 0.01

struct fake_wait {
	ev_timer guard, tick;
	bool expired;
};

static inline void fake_on_guard(struct ev_loop *loop, ev_timer *t, int revents)
{
	*(bool *)t->data = true;
}

static inline void fake_on_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
}

static inline void fake_wait_start(struct ev_loop *loop, struct fake_wait *w)
{
	w->expired = false;
	ev_timer_init(&w->guard, fake_on_guard, FAKE_WAIT_S, 0.);
	w->guard.data = &w->expired;
	ev_timer_init(&w->tick, fake_on_tick, FAKE_TICK_S, FAKE_TICK_S);
	ev_timer_start(loop, &w->guard);
	ev_timer_start(loop, &w->tick);
}

static inline void fake_wait_stop(struct ev_loop *loop, struct fake_wait *w)
{
	ev_timer_stop(loop, &w->guard);
	ev_timer_stop(loop, &w->tick);
}

/*
 * Waits for pid's exit without turning any loop (no watcher of the code
 * under test sees it go first), for FAKE_WAIT_S at most; then reaps it.
 * Whether it is gone.
 */
static inline bool fake_await_exit(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int64_t end = mono_us() + (int64_t)(FAKE_WAIT_S * US_PER_S), left;

	if (fd < 0)
		return fake_dead(pid);
	/* A SIGCHLD of another child may cut the wait short: it goes on, to the same end. */
	while ((left = end - mono_us()) > 0 && poll(&p, 1, (int)(left / US_PER_MS) + 1) < 0 && errno == EINTR)
		;
	close(fd);
	return fake_dead(pid);
}

/*
 * Turns loop until cond holds, each turn waiting for what the loop
 * watches (a pidfd, a socket, a timer): it goes on as soon as that comes.
 * The test's clock does not move; the test moves it where it means to.
 * cond is looked at before every turn, and may do something (a look at
 * exit codes); it does not hold when the wait ran out.
 */
#define FAKE_RUN_UNTIL(loop, cond)                                     \
	do {                                                           \
		struct fake_wait w_;                                   \
		fake_wait_start((loop), &w_);                          \
		while (!(cond) && !w_.expired)                         \
			ev_run((loop), EVRUN_ONCE);                    \
		fake_wait_stop((loop), &w_);                           \
	} while (0)

#endif
