#include "config.h"

#include "child.h"

#include "log.h"
#include "options.h"
#include "parse.h"
#include "protocol.h"
#include "sys.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a container gets from the kubelet and the runtime, and passes on. */
static const int forwarded[CHILD_NSIGNALS] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/* Whether a file named cmd exists in a directory of PATH (that we may search). */
static bool in_path(const char *cmd)
{
	const char *path = getenv("PATH"), *p, *end;
	char file[PATH_MAX];
	struct stat st;

	/* execvp's default when PATH is unset. */
	for (p = path ? path : "/bin:/usr/bin"; *p; p = *end ? end + 1 : end) {
		int n;

		end = strchrnul(p, ':');
		/* An empty entry is the current directory. */
		if (end == p)
			n = snprintf(file, sizeof(file), "./%s", cmd);
		else
			n = snprintf(file, sizeof(file), "%.*s/%s", (int)(end - p), p, cmd);
		if (n > 0 && (size_t)n < sizeof(file) && stat(file, &st) == 0)
			return true;
	}
	return false;
}

int child_spawn_code(const char *cmd, int err)
{
	if (err == ENOENT || err == ENOTDIR)
		return RUN_NOT_FOUND;
	/*
	 * execvp says EACCES when a directory of PATH was not searchable, even
	 * if CMD is nowhere: as a shell would, call that "not found".
	 */
	if (err == EACCES && !strchr(cmd, '/') && !in_path(cmd))
		return RUN_NOT_FOUND;
	return RUN_CANNOT_EXEC;
}

/* The command is over (or will never start): said once, to the front-end. */
static void over(struct child *c, int code)
{
	if (c->over)
		return;
	c->over = true;
	c->code = code;
	c->on_end(c, code);
}

static void on_exit_status(struct ev_loop *loop, ev_child *w, int revents)
{
	struct child *c = w->data;
	int code = wait_status_code(w->rstatus);

	ev_child_stop(loop, w);
	c->pid = 0;
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
	if (WIFSIGNALED(w->rstatus))
		log_msg(LOG_INFO, FIELDS(LF_INT("exit_code", code), LF_STR("signal", signal_name(WTERMSIG(w->rstatus)))),
			"command killed by a signal");
	else
		log_msg(LOG_INFO, FIELDS(LF_INT("exit_code", code)), "command exited");
	over(c, code);
}

static int forward(struct child *c, int sig)
{
	if (!c->pid)
		return -ESRCH;
	if (c->pidfd >= 0)
		return sys_pidfd_send_signal(c->pidfd, sig);
	return kill(c->pid, sig) < 0 ? -errno : 0;
}

/* A signal the container got: the command's, or (before it started) the end of it. */
static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
	struct child *c = s->data;
	int rc;

	if (c->pid) {
		rc = forward(c, s->signum);
		log_msg(LOG_DEBUG, FIELDS(LF_STR("signal", signal_name(s->signum)), LF_STR("error", rc ? strerror(-rc) : NULL)),
			"signal forwarded to the command");
		return;
	}
	/* Stopped before the command started (the pod is being deleted): it never will. */
	if (!c->started && !c->over && (s->signum == SIGTERM || s->signum == SIGINT || s->signum == SIGQUIT)) {
		log_msg(LOG_INFO, FIELDS(LF_STR("signal", signal_name(s->signum))),
			"signal received while waiting for ready: not starting the command");
		over(c, 128 + s->signum);
		return;
	}
	if (c->over && c->after_end)
		log_msg(LOG_INFO, FIELDS(LF_STR("signal", signal_name(s->signum))), "%s", c->after_end);
}

void child_open(struct child *c, struct ev_loop *loop, const struct run_options *o, child_end_fn *on_end, void *data)
{
	size_t i;
	int rc;

	memset(c, 0, sizeof(*c));
	c->loop = loop;
	c->o = o;
	c->on_end = on_end;
	c->data = data;
	c->pidfd = -1;
	for (i = 0; i < ARRAY_SIZE(forwarded); i++) {
		ev_signal_init(&c->sigs[i], on_signal, forwarded[i]);
		c->sigs[i].data = c;
		ev_signal_start(loop, &c->sigs[i]);
	}
	/* A report left by an earlier attempt of this container (restartPolicy OnFailure) is stale now. */
	rc = protocol_remove_report(o->dir, o->name);
	if (rc < 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", o->dir), LF_STR("report", o->name), LF_STR("error", strerror(-rc))),
			"cannot remove the report of an earlier attempt");
}

int child_spawn(pid_t *pid, char **cmd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, deflt;
	int err, stderr_fd = log_inherited_fd();

	/* Every signal as in a fresh process: whatever rearguard catches or ignores, the command does not. */
	sigemptyset(&none);
	sigfillset(&deflt);
	sigdelset(&deflt, SIGKILL);
	sigdelset(&deflt, SIGSTOP);
	err = posix_spawn_file_actions_init(&fa);
	if (err)
		return err;
	if (stderr_fd >= 0)
		err = posix_spawn_file_actions_adddup2(&fa, stderr_fd, STDERR_FILENO);
	if (!err)
		err = posix_spawnattr_init(&attr);
	if (err) {
		posix_spawn_file_actions_destroy(&fa);
		return err;
	}
	err = posix_spawnattr_setsigmask(&attr, &none);
	if (!err)
		err = posix_spawnattr_setsigdefault(&attr, &deflt);
	if (!err)
		err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!err)
		err = posix_spawnp(pid, cmd[0], &fa, &attr, cmd, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return err;
}

void child_start(struct child *c)
{
	char **cmd = c->o->cmd;
	pid_t pid;
	int err;

	if (c->started || c->over)
		return;
	c->started = true;
	err = child_spawn(&pid, cmd);
	if (err) {
		int code = child_spawn_code(cmd[0], err);

		log_msg(LOG_ERROR, FIELDS(LF_STR("command", cmd[0]), LF_STR("error", strerror(err)), LF_INT("exit_code", code)),
			"%s", code == RUN_NOT_FOUND ? "command not found" : "command cannot be executed");
		over(c, code);
		return;
	}
	c->pid = pid;
	/* Our child cannot be reaped behind our back: the pidfd is surely its. */
	c->pidfd = sys_pidfd_open(pid);
	ev_child_init(&c->watcher, on_exit_status, pid, 0);
	c->watcher.data = c;
	ev_child_start(c->loop, &c->watcher);
	log_msg(LOG_DEBUG, FIELDS(LF_STR("command", cmd[0]), LF_INT("pid", pid)), "command started");
}

void child_end(struct child *c, int code)
{
	over(c, code);
}

void child_report(const struct child *c)
{
	int rc = protocol_write_report(c->o->dir, c->o->name, c->code);

	if (rc < 0)
		log_msg(LOG_ERROR,
			FIELDS(LF_STR("dir", c->o->dir), LF_STR("report", c->o->name), LF_STR("error", strerror(-rc))),
			"cannot write the exit-code report");
}

void child_close(struct child *c)
{
	size_t i;

	if (!c->loop)
		return;
	sys_hold_signals(forwarded, ARRAY_SIZE(forwarded));
	for (i = 0; i < ARRAY_SIZE(forwarded); i++)
		ev_signal_stop(c->loop, &c->sigs[i]);
	ev_child_stop(c->loop, &c->watcher);
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
}
