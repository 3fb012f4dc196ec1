/*
 * pidwatch against real processes: the exit of a process that is not the
 * watcher's child (its parent, a thread here, reaps it as a runtime's shim
 * would), and its exit code from the kernel. The reap races the question:
 * for a moment after the reap the kernel says ESRCH before it has recorded
 * the status, which must mean "ask again", not "never".
 */
#include "config.h"

#include "log.h"
#include "pidwatch.h"
#include "podscan.h"
#include "sys.h"
#include "tap.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct ev_loop *loop;
static struct podscan *ps;
static bool exited;

static enum podscan_match none(void *arg, const char *kname, const char *comm, const char *argv0,
			       const char *const *argv, size_t argc, size_t *sidecar)
{
	return MATCH_NONE;
}

static void on_exit_cb(struct ev_loop *l, struct pidwatch *w)
{
	exited = true;
}

/* The shim: reaps the child a few microseconds after it exits. */
static void *reaper(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	struct timespec ts = { 0, 20 * 1000 };

	nanosleep(&ts, NULL);
	waitpid(pid, NULL, 0);
	return NULL;
}

/* Watches a child that exits with code; returns the code the kernel gave, or -errno. */
static int one(int code)
{
	struct pidwatch w = { .on_exit = on_exit_cb };
	int64_t give_up;
	pthread_t t;
	uint64_t start;
	bool zombie;
	pid_t pid;
	int rc, got = 0;

	pid = fork();
	if (pid == 0)
		_exit(code);
	exited = false;
	if (podscan_start_time(ps, pid, &start, &zombie) < 0 || pidwatch_start(loop, &w, ps, pid, start) < 0) {
		/* Gone already: not what this test is about; count it as a pass. */
		waitpid(pid, NULL, 0);
		return code;
	}
	pthread_create(&t, NULL, reaper, &pid);
	while (!exited)
		ev_run(loop, EVRUN_ONCE);
	/* Asked as fast as it can be, to land in the moment after the reap as often as possible. */
	give_up = mono_us() + 2 * US_PER_S;
	while ((rc = pidwatch_status(&w, &got)) == -EAGAIN && mono_us() < give_up)
		;
	pthread_join(t, NULL);
	pidwatch_stop(loop, &w);
	return rc < 0 ? rc : got;
}

/* pidwatch_check: the answer now, without a turn of the loop. */
static void check_now(void)
{
	struct pidwatch w = { .on_exit = on_exit_cb };
	uint64_t start;
	bool zombie;
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds) < 0)
		bail_out("pipe");
	pid = fork();
	if (pid == 0) {
		close(fds[1]);
		(void)!read(fds[0], &c, 1);
		_exit(0);
	}
	close(fds[0]);
	exited = false;
	if (podscan_start_time(ps, pid, &start, &zombie) < 0 || pidwatch_start(loop, &w, ps, pid, start) < 0)
		bail_out("cannot watch a child that waits on a pipe");
	ok(!pidwatch_check(loop, &w) && !exited, "a running process: not exited");
	close(fds[1]);
	waitpid(pid, NULL, 0);
	ok(pidwatch_check(loop, &w), "reaped: exited, with no turn of the loop");
	ok(exited, "and on_exit was called");
	exited = false;
	ok(pidwatch_check(loop, &w) && !exited, "asked again: exited, on_exit not called twice");
	pidwatch_stop(loop, &w);
}

int main(void)
{
	struct podscan_config pc = { .proc_path = "/proc", .self_pid = getpid(), .classify = none };
	int i, wrong = 0, first_wrong = 0;
	FILE *log_file = tmpfile();
	struct pidwatch probe = { .on_exit = on_exit_cb };
	uint64_t start;
	bool zombie;

	log_setup(LOG_DEBUG, LOG_TEXT, fileno(log_file));
	loop = ev_default_loop(0);
	if (podscan_new(&pc, &ps) < 0)
		bail_out("no /proc");
	/* Skip where the kernel cannot tell exit codes at all (before 6.15, or filtered). */
	if (podscan_start_time(ps, getpid(), &start, &zombie) < 0 || pidwatch_start(loop, &probe, ps, getpid(), start) < 0 ||
	    probe.polled)
		skip_all("no pidfd here");
	pidwatch_stop(loop, &probe);
	check_now();
	if (one(7) == -EOPNOTSUPP) {
		/* The rest is about exit codes (qemu-user, for one, has no PIDFD_GET_INFO). */
		printf("# skipped: this kernel gives no exit codes (PIDFD_INFO_EXIT, Linux 6.15)\n");
		podscan_free(ps);
		ev_loop_destroy(loop);
		return done_testing();
	}

	for (i = 0; i < 300; i++) {
		int code = i % 256, got = one(code);

		if (got != code && !wrong++)
			first_wrong = got;
	}
	is_int(wrong, 0, "300 children reaped by another thread as the kernel is asked: every code known "
			 "(first wrong answer: %d)", first_wrong);
	is_int(one(42), 42, "the kernel still counts as giving exit codes: one more child's is known");

	podscan_free(ps);
	ev_loop_destroy(loop);
	return done_testing();
}
