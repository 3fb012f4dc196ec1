#include "config.h"

#include "run.h"

#include "agent.h"
#include "await.h"
#include "log.h"
#include "options.h"
#include "parse.h"
#include "sentinel.h"
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
const int run_forwarded[6] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

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

int run_spawn_code(const char *cmd, int err)
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

static void on_child(struct ev_loop *loop, ev_child *w, int revents)
{
	struct run_child *c = w->data;
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
	c->on_exit(c, code);
}

int run_child_start(struct ev_loop *loop, struct run_child *c, char **cmd)
{
	posix_spawnattr_t attr;
	sigset_t none, deflt;
	size_t i;
	pid_t pid;
	int err;

	c->pid = 0;
	c->pidfd = -1;
	sigemptyset(&none);
	sigemptyset(&deflt);
	for (i = 0; i < ARRAY_SIZE(run_forwarded); i++)
		sigaddset(&deflt, run_forwarded[i]);
	sigaddset(&deflt, SIGPIPE);
	sigaddset(&deflt, SIGCHLD);
	err = posix_spawnattr_init(&attr);
	if (!err)
		err = posix_spawnattr_setsigmask(&attr, &none);
	if (!err)
		err = posix_spawnattr_setsigdefault(&attr, &deflt);
	if (!err)
		err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!err)
		err = posix_spawnp(&pid, cmd[0], NULL, &attr, cmd, environ);
	posix_spawnattr_destroy(&attr);
	if (err) {
		int code = run_spawn_code(cmd[0], err);

		log_msg(LOG_ERROR, FIELDS(LF_STR("command", cmd[0]), LF_STR("error", strerror(err)), LF_INT("exit_code", code)),
			"%s", code == RUN_NOT_FOUND ? "command not found" : "command cannot be executed");
		return code;
	}
	c->pid = pid;
	/* Our child cannot be reaped behind our back: the pidfd is surely its. */
	c->pidfd = sys_pidfd_open(pid);
	ev_child_init(&c->watcher, on_child, pid, 0);
	c->watcher.data = c;
	ev_child_start(loop, &c->watcher);
	log_msg(LOG_DEBUG, FIELDS(LF_STR("command", cmd[0]), LF_INT("pid", pid)), "command started");
	return 0;
}

int run_child_signal(struct run_child *c, int sig)
{
	if (!c->pid)
		return -ESRCH;
	if (c->pidfd >= 0)
		return sys_pidfd_send_signal(c->pidfd, sig);
	return kill(c->pid, sig) < 0 ? -errno : 0;
}

void run_child_stop(struct ev_loop *loop, struct run_child *c)
{
	ev_child_stop(loop, &c->watcher);
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
}

/* ---- rearguard run without --drain: the ready file, the command, the report ---- */

struct runner {
	struct ev_loop *loop;
	const struct run_options *o;
	struct await ready;
	bool waiting;
	struct run_child child;
	ev_signal sigs[ARRAY_SIZE(run_forwarded)];
	bool finished;
	int code;
};

/* The end, whatever it was: the report, then the exit with the same code. */
static void finish(struct runner *r, int code)
{
	int rc = sentinel_write_report(r->o->dir, r->o->name, code);

	if (rc < 0)
		log_msg(LOG_ERROR,
			FIELDS(LF_STR("dir", r->o->dir), LF_STR("report", r->o->name), LF_STR("error", strerror(-rc))),
			"cannot write the exit-code report");
	r->code = code;
	r->finished = true;
	ev_break(r->loop, EVBREAK_ALL);
}

static void on_command_exit(struct run_child *c, int code)
{
	finish(c->data, code);
}

static void start_command(struct runner *r)
{
	int code = run_child_start(r->loop, &r->child, r->o->cmd);

	if (code)
		finish(r, code);
}

static void on_ready(struct ev_loop *loop, struct await *w, bool held)
{
	struct runner *r = w->data;
	char dur[32];

	await_stop(loop, w);
	r->waiting = false;
	if (!held) {
		format_duration(r->o->timeout_ms, dur);
		log_msg(LOG_ERROR, FIELDS(LF_STR("dir", r->o->dir), LF_INT("exit_code", RUN_READY_TIMEOUT)),
			"ready did not appear within %s: not starting the command (--no-wait starts it regardless)",
			dur);
		finish(r, RUN_READY_TIMEOUT);
		return;
	}
	log_msg(LOG_INFO, FIELDS(LF_STR("command", r->o->cmd[0])), "ready: starting the command");
	start_command(r);
}

static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
	struct runner *r = s->data;
	int rc;

	if (r->child.pid) {
		rc = run_child_signal(&r->child, s->signum);
		log_msg(LOG_DEBUG, FIELDS(LF_STR("signal", signal_name(s->signum)), LF_STR("error", rc ? strerror(-rc) : NULL)),
			"signal forwarded to the command");
		return;
	}
	/* Stopped before the command started (the pod is being deleted): it never will. */
	if (r->waiting && (s->signum == SIGTERM || s->signum == SIGINT || s->signum == SIGQUIT)) {
		log_msg(LOG_INFO, FIELDS(LF_STR("signal", signal_name(s->signum))),
			"signal received while waiting for ready: not starting the command");
		await_stop(loop, &r->ready);
		r->waiting = false;
		finish(r, 128 + s->signum);
	}
}

int run_main(const struct run_options *o)
{
	struct runner r;
	size_t i;
	int rc;

	if (o->drain)
		return agent_wrap(o);
	memset(&r, 0, sizeof(r));
	r.o = o;
	r.code = RUN_FAILED;
	r.child.on_exit = on_command_exit;
	r.child.data = &r;
	r.child.pidfd = -1;
	signal(SIGPIPE, SIG_IGN);
	/* The default loop: the only one that reaps children (also orphans, when run is PID 1). */
	r.loop = ev_default_loop(EVFLAG_AUTO);
	if (!r.loop) {
		log_error("cannot start the event loop");
		return RUN_FAILED;
	}
	for (i = 0; i < ARRAY_SIZE(run_forwarded); i++) {
		ev_signal_init(&r.sigs[i], on_signal, run_forwarded[i]);
		r.sigs[i].data = &r;
		ev_signal_start(r.loop, &r.sigs[i]);
	}
	/* A report left by an earlier attempt of this container (restartPolicy OnFailure) is stale now. */
	rc = sentinel_remove_report(o->dir, o->name);
	if (rc < 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", o->dir), LF_STR("report", o->name), LF_STR("error", strerror(-rc))),
			"cannot remove the report of an earlier attempt");

	if (o->no_wait) {
		start_command(&r);
	} else {
		rc = await_start(r.loop, &r.ready, o->dir, "ready", o->timeout_ms, on_ready, &r);
		if (rc < 0) {
			log_msg(LOG_ERROR, FIELDS(LF_STR("dir", o->dir), LF_STR("error", strerror(-rc))),
				"cannot watch the directory for ready (nor its parent)");
			finish(&r, RUN_FAILED);
		} else if (rc == 1) {
			start_command(&r);
		} else {
			r.waiting = true;
			log_msg(LOG_INFO, FIELDS(LF_STR("dir", o->dir)), "waiting for ready");
		}
	}
	if (!r.finished)
		ev_run(r.loop, 0);
	/* The command's code is decided: a late signal must not become the exit status. */
	sys_hold_signals(run_forwarded, ARRAY_SIZE(run_forwarded));
	if (r.waiting)
		await_stop(r.loop, &r.ready);
	run_child_stop(r.loop, &r.child);
	for (i = 0; i < ARRAY_SIZE(run_forwarded); i++)
		ev_signal_stop(r.loop, &r.sigs[i]);
	ev_loop_destroy(r.loop);
	return r.code;
}
