#include "config.h"

#include "log.h"
#include "options.h"
#include "run.h"
#include "sidecar.h"
#include "tap.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/rg-run.XXXXXX";
static char name[] = "job";
/* argv strings are not const: these are ours to hand out. */
static char sh[] = "sh", dash_c[] = "-c", exit3_src[] = "exit 3", kill_src[] = "kill -TERM $$";
static char stderr_src[] = "echo to-stderr >&2";
static char not_in_path[] = "rg-no-such-command", not_there[] = "/nonexistent/job";

/* rearguard run --no-wait? --name job --timeout 0 -- CMD...; returns its exit code. */
static int run(bool wait, char **cmd)
{
	struct run_options o = {
		.name = name,
		.dir = dir,
		.timeout_ms = 0,
		.no_wait = !wait,
		.cmd = cmd,
	};

	return run_main(&o);
}

/* The content of apps/job, "" when there is none. */
static const char *report(void)
{
	static char buf[64];
	char path[256];
	size_t len;

	snprintf(path, sizeof(path), "%s/apps/job", dir);
	if (read_small_at(AT_FDCWD, path, 0, buf, sizeof(buf), &len) < 0)
		buf[0] = '\0';
	return buf;
}

int main(void)
{
	char noexec_path[300], marker[300], touch_cmd[400], path[300];
	char *exit3[] = { sh, dash_c, exit3_src, NULL };
	char *killed[] = { sh, dash_c, kill_src, NULL };
	char *missing[] = { not_in_path, NULL };
	char *missing_path[] = { not_there, NULL };
	char *noexec[] = { noexec_path, NULL };
	char *touch[] = { sh, dash_c, touch_cmd, NULL };
	FILE *log_file = tmpfile();
	int fd;

	log_setup(LOG_DEBUG, LOG_TEXT, fileno(log_file));
	if (!mkdtemp(dir))
		abort();

	/* rearguard sidecar: how its program's end becomes the container's code (wait statuses, built by hand). */
#define EXITED(n) ((n) << 8)
#define KILLED(s) (s)
	is_int(sidecar_code(EXITED(0), false, 0), 0, "exit 0 before any stop: 0");
	is_int(sidecar_code(EXITED(1), false, 0), 1, "exit 1 before any stop: untouched");
	is_int(sidecar_code(KILLED(SIGSEGV), false, 0), 139, "a crash before any stop: 139, as a shell says it");
	is_int(sidecar_code(KILLED(SIGTERM), false, 0), 143, "SIGTERM before the stop began (passed on): 143");
	is_int(sidecar_code(KILLED(SIGTERM), true, 1ull << (SIGTERM - 1)), 0, "dies of the stop signal it was sent: 0");
	is_int(sidecar_code(KILLED(SIGQUIT), true, 1ull << (SIGQUIT - 1)), 0, "of QUIT, the stop of nginx: 0");
	is_int(sidecar_code(KILLED(SIGQUIT), true, 1ull << (SIGTERM - 1)), 131, "of a signal it was not sent: untouched");
	is_int(sidecar_code(KILLED(SIGKILL), true, 0), 0, "SIGKILL during the stop (the timeout's): 0");
	is_int(sidecar_code(KILLED(SIGSEGV), true, 1ull << (SIGTERM - 1)), 139, "a crash during the stop: 139");
	is_int(sidecar_code(EXITED(143), true, 1ull << (SIGTERM - 1)), 0, "exit 143 after SIGTERM (the JVM's way): 0");
	is_int(sidecar_code(EXITED(143), false, 0), 143, "exit 143 with no stop: untouched");
	is_int(sidecar_code(EXITED(1), true, 1ull << (SIGTERM - 1)), 1, "exit 1 during the stop: untouched");
	is_int(sidecar_code(EXITED(0), true, 1ull << (SIGTERM - 1)), 0, "exit 0 of the stop: 0");

	/* How a failure to start maps to an exit code, as in a shell. */
	is_int(child_spawn_code("job", ENOENT), RUN_NOT_FOUND, "ENOENT: 127");
	is_int(child_spawn_code("a/job", ENOTDIR), RUN_NOT_FOUND, "ENOTDIR: 127");
	is_int(child_spawn_code("/bin/sh", EACCES), RUN_CANNOT_EXEC, "EACCES for a path: 126");
	is_int(child_spawn_code("sh", EACCES), RUN_CANNOT_EXEC, "EACCES for a command in PATH: 126");
	is_int(child_spawn_code("rg-no-such-command", EACCES), RUN_NOT_FOUND,
	       "EACCES (an unsearchable PATH directory) for a command in no PATH directory: 127");
	is_int(child_spawn_code("sh", ENOEXEC), RUN_CANNOT_EXEC, "ENOEXEC: 126");

	is_int(run(false, exit3), 3, "exit 3: run exits 3");
	is_str(report(), "3\n", "apps/job says 3");
	is_int(run(false, killed), 128 + 15, "killed by SIGTERM: 143");
	is_str(report(), "143\n", "apps/job says 143");
	is_int(run(false, missing), RUN_NOT_FOUND, "a command not in PATH: 127");
	is_str(report(), "127\n", "apps/job says 127");
	is_int(run(false, missing_path), RUN_NOT_FOUND, "a path that does not exist: 127");
	snprintf(noexec_path, sizeof(noexec_path), "%s/not-executable", dir);
	fd = open(noexec_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	close(fd);
	is_int(run(false, noexec), RUN_CANNOT_EXEC, "a file that is not executable: 126");
	is_str(report(), "126\n", "apps/job says 126");

	/* Waiting for ready (--timeout 0: only a look). */
	snprintf(marker, sizeof(marker), "%s/started", dir);
	snprintf(touch_cmd, sizeof(touch_cmd), "touch '%s'", marker);
	is_int(run(true, touch), RUN_READY_TIMEOUT, "no ready within --timeout: 124");
	ok(access(marker, F_OK) < 0, "the command was not started");
	is_str(report(), "124\n", "apps/job says 124");
	snprintf(path, sizeof(path), "%s/ready", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	close(fd);
	is_int(run(true, touch), 0, "with ready there: the command runs");
	ok(access(marker, F_OK) == 0, "it was started");
	is_str(report(), "0\n", "apps/job says 0");

	/*
	 * The log on a pipe (as a container runtime gives it) is made
	 * non-blocking on a description of its own: the command still gets
	 * the stderr rearguard was given. Last: the log is rearguard's stderr
	 * from here on.
	 */
	{
		char *echo[] = { sh, dash_c, stderr_src, NULL };
		char buf[8192];
		int p[2], saved = dup(2);
		ssize_t n;

		if (saved < 0 || pipe(p) < 0 || dup2(p[1], 2) < 0)
			abort();
		close(p[1]);
		log_setup(LOG_INFO, LOG_TEXT, 2);
		is_int(run(false, echo), 0, "a command that writes to its stderr");
		if (dup2(saved, 2) < 0)
			abort();
		close(saved);
		fcntl(p[0], F_SETFL, O_NONBLOCK);
		n = read(p[0], buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		ok(strstr(buf, "to-stderr\n") != NULL, "its stderr reached the pipe");
		ok(strstr(buf, "command exited") != NULL, "and so did the log");
		close(p[0]);
	}

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		abort();
	return done_testing();
}
