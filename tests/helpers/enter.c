/*
 * Starts a container in a test pod the way a runtime does: joins the pod's
 * PID, network and mount namespaces (those of its pause process), forks so
 * the child is in the pod's PID namespace with parent pid 0, born into the
 * container's cgroup of the unified hierarchy (clone3's CLONE_INTO_CGROUP,
 * as runc creates a container's init in its cgroup) and moved into the
 * others before it goes on, gives it its own mount namespace and uid, then
 * execs the entrypoint. With --move-after it is born in the runtime's own
 * cgroup and moved into each of the container's once visible, as runc does
 * with an exec session's init and crun with a container's.
 * Installed as "runc", so until the exec the pod sees what it sees under
 * runc: a runtime-init process.
 *
 *   runc --target PID [--cgroup PROCS_FILE]... [--move-after yes] [--uid UID] [--pidfile FILE] [--exitfile FILE]
 *        [--pid N] [--bind FILE] [--hold FILE [--hold-exit CODE]] -- CMD [ARG...]
 *
 * The outer process waits for the child and exits with its status (or dies
 * of the same signal); --pidfile gets the child's pid as the host sees it,
 * --exitfile its exit status (the code, or 128 + signal) once it is gone.
 * --pid N gives the child the pid N in the pod's PID namespace, if N is free
 * (through ns_last_pid, as CRIU does): how the tests reuse a pid on purpose.
 * --bind FILE bind-mounts FILE onto itself in the child's mount namespace, as
 * the kubelet mounts a container's termination-message file from
 * .../pods/UID/containers/NAME/ID: how a container gets its name in the pod.
 * --hold FILE keeps the child a runtime init (named runc) until FILE exists,
 * for at most 30 s, then execs at once: as long as a test likes between a
 * container's appearance and its exec, and no time after. --hold-exit CODE
 * makes it exit with CODE then instead, without an exec: a runtime's init
 * that never ran a program (an exec probe's, done before it joined).
 * With ENTER_EXEC_LOG=FILE in the environment, the monotonic clock (in
 * microseconds) right before the exec is appended to FILE (the benchmark
 * times start-up from there); with ENTER_REAP_LOG=FILE, the clock right
 * after the child was reaped (when a runtime learns its container exited).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "runc(test): %s: %s\n", what, strerror(errno));
	_exit(125);
}

static void join(const char *target, const char *ns, int type)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/ns/%s", target, ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, type) < 0)
		die(path);
	close(fd);
}

/* Appends the monotonic clock in microseconds to path. */
static void append_clock(const char *path)
{
	struct timespec ts;
	FILE *f = fopen(path, "a");

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!f || fprintf(f, "%lld\n", (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000) < 0 || fclose(f) != 0)
		die(path);
}

/* Waits until path exists, looking every millisecond, for at most 30 s. */
static void hold(const char *path)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < 30000; i++) {
		if (access(path, F_OK) == 0)
			return;
		nanosleep(&ms, NULL);
	}
	errno = ETIMEDOUT;
	die(path);
}

/*
 * fork(), the child born into the cgroup v2 directory of one of the procs
 * files (CLONE_INTO_CGROUP), if one is; 0 in *into when none is, or when
 * the kernel cannot (then it is a plain fork, moved after as the others).
 */
static pid_t fork_into(const char *const *procs, int n, int *into)
{
	struct clone_args args = { .exit_signal = SIGCHLD };
	char dir[4096];
	struct statfs fs;
	pid_t pid;
	int i, fd = -1;

	*into = -1;
	for (i = 0; i < n && fd < 0; i++) {
		snprintf(dir, sizeof(dir), "%s", procs[i]);
		if (strrchr(dir, '/'))
			*strrchr(dir, '/') = '\0';
		if (statfs(dir, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC &&
		    (fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0)
			*into = i;
	}
	if (fd >= 0) {
		args.flags = CLONE_INTO_CGROUP;
		args.cgroup = (unsigned long long)fd;
		pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
		close(fd);
		if (pid >= 0 || (errno != ENOSYS && errno != E2BIG && errno != EINVAL))
			return pid;
		*into = -1;
	}
	return fork();
}

/* Writes "N\n" to path atomically, so a reader never sees half of it. */
static void write_number(const char *path, int n)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", n) < 0 || fclose(f) != 0 || rename(tmp, path) < 0)
		die(path);
}

/*
 * The next pid the pod's namespace hands out is want: ns_last_pid is that of
 * the writer's own namespace, so a child in the pod's writes it (the child
 * takes a pid of its own first, which does not matter).
 */
static void set_next_pid(long want)
{
	int status;
	pid_t helper = fork();

	if (helper < 0)
		die("fork");
	if (helper == 0) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");

		if (!f || fprintf(f, "%ld", want - 1) < 0 || fclose(f) != 0)
			_exit(1);
		_exit(0);
	}
	if (waitpid(helper, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("ns_last_pid");
}

int main(int argc, char **argv)
{
	const char *target = NULL, *pidfile = NULL, *exitfile = NULL, *holdfile = NULL, *bind = NULL, *cgroups[8];
	int ncg = 0, i, status, sync[2], into = -1;
	bool move_after = false;
	long uid = -1, want_pid = 0, hold_exit = -1;
	pid_t pid;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i += 2) {
		if (i + 1 >= argc)
			break;
		if (strcmp(argv[i], "--target") == 0)
			target = argv[i + 1];
		else if (strcmp(argv[i], "--cgroup") == 0 && ncg < 8)
			cgroups[ncg++] = argv[i + 1];
		else if (strcmp(argv[i], "--uid") == 0)
			uid = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--pidfile") == 0)
			pidfile = argv[i + 1];
		else if (strcmp(argv[i], "--exitfile") == 0)
			exitfile = argv[i + 1];
		else if (strcmp(argv[i], "--pid") == 0)
			want_pid = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--hold") == 0)
			holdfile = argv[i + 1];
		else if (strcmp(argv[i], "--move-after") == 0)
			move_after = strcmp(argv[i + 1], "yes") == 0;
		else if (strcmp(argv[i], "--bind") == 0)
			bind = argv[i + 1];
		else if (strcmp(argv[i], "--hold-exit") == 0)
			hold_exit = atol(argv[i + 1]);
		else
			break;
	}
	if (!target || i + 1 >= argc || strcmp(argv[i], "--") != 0) {
		fprintf(stderr, "usage: runc --target PID [--cgroup FILE]... [--uid UID] [--pidfile FILE] -- CMD...\n");
		return 125;
	}
	join(target, "net", CLONE_NEWNET);
	join(target, "pid", CLONE_NEWPID);
	join(target, "mnt", CLONE_NEWNS);

	if (want_pid > 1)
		set_next_pid(want_pid);
	if (pipe2(sync, O_CLOEXEC) < 0)
		die("pipe");
	pid = move_after ? fork() : fork_into(cgroups, ncg, &into);
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		char go;

		close(sync[1]);
		/* Wait until the parent has put us into our cgroups. */
		if (read(sync[0], &go, 1) != 1)
			_exit(125);
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			die("mount namespace");
		if (bind && mount(bind, bind, NULL, MS_BIND, NULL) < 0)
			die(bind);
		if (holdfile)
			hold(holdfile);
		if (holdfile && hold_exit >= 0)
			_exit((int)hold_exit);
		if (uid >= 0) {
			if (setgroups(0, NULL) < 0 || setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) < 0 ||
			    setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) < 0)
				die("uid");
		}
		if (getenv("ENTER_EXEC_LOG"))
			append_clock(getenv("ENTER_EXEC_LOG"));
		execvp(argv[i + 1], argv + i + 1);
		die(argv[i + 1]);
	}
	close(sync[0]);
	{
		char child[32];
		int n = snprintf(child, sizeof(child), "%d", (int)pid), j;

		/* The parent writes the pid as its own PID namespace numbers it. */
		for (j = 0; j < ncg; j++) {
			int fd;

			if (j == into)
				continue; /* born there */
			fd = open(cgroups[j], O_WRONLY | O_CLOEXEC);

			if (fd < 0 || write(fd, child, (size_t)n) != n)
				die(cgroups[j]);
			close(fd);
		}
		if (write(sync[1], "g", 1) != 1)
			die("sync");
		close(sync[1]);
	}
	if (pidfile)
		write_number(pidfile, (int)pid);
	/* Our own signals are not the container's business: it is stopped from the test. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	if (getenv("ENTER_REAP_LOG"))
		append_clock(getenv("ENTER_REAP_LOG"));
	if (exitfile)
		write_number(exitfile, WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		prctl(PR_SET_DUMPABLE, 0);
		kill(getpid(), WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}
