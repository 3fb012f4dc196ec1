#include "config.h"

#include "run.h"

#include "agent.h"
#include "await.h"
#include "http.h"
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
static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/* Readiness polls of --drain (no agent writes ready then): as the agent polls. */
#define PROBE_FIRST_RETRY 0.05
#define PROBE_MAX_RETRY 0.5
#define PROBE_TIMEOUT_US (1 * US_PER_S)

struct runner;

/* --drain: one sidecar's ready URL, asked until it answers 2xx. */
struct probe {
	struct http_request req;
	ev_timer retry;
	struct runner *r;
	const struct sidecar_spec *spec;
	double backoff;
	bool ready;
};

struct runner {
	struct ev_loop *loop;
	const struct run_options *o;
	struct await ready;
	bool waiting;
	struct http *http;      /* --drain only */
	struct probe *probes;
	size_t nprobes, unready;
	ev_timer deadline;      /* --timeout for the probes */
	ev_child child;
	ev_signal sigs[ARRAY_SIZE(forwarded)];
	pid_t pid;   /* 0: no child running */
	int pidfd;   /* signals go through it: never to a reused pid */
	bool finished;
	int code;
};

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

/*
 * The end, whatever it was: the report, then the exit with the same code
 * (after the drain, with --drain: see run_main).
 */
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

static void on_child(struct ev_loop *loop, ev_child *w, int revents)
{
	struct runner *r = w->data;
	int code = wait_status_code(w->rstatus);

	ev_child_stop(loop, w);
	r->pid = 0;
	if (r->pidfd >= 0)
		close(r->pidfd);
	r->pidfd = -1;
	if (WIFSIGNALED(w->rstatus))
		log_msg(LOG_INFO, FIELDS(LF_INT("exit_code", code), LF_STR("signal", signal_name(WTERMSIG(w->rstatus)))),
			"command killed by a signal");
	else
		log_msg(LOG_INFO, FIELDS(LF_INT("exit_code", code)), "command exited");
	finish(r, code);
}

/* Runs CMD with the signal state of a fresh process: nothing blocked, nothing ignored. */
static void start_child(struct runner *r)
{
	posix_spawnattr_t attr;
	sigset_t none, deflt;
	size_t i;
	pid_t pid;
	int err;

	sigemptyset(&none);
	sigemptyset(&deflt);
	for (i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&deflt, forwarded[i]);
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
		err = posix_spawnp(&pid, r->o->cmd[0], NULL, &attr, r->o->cmd, environ);
	posix_spawnattr_destroy(&attr);
	if (err) {
		int code = run_spawn_code(r->o->cmd[0], err);

		log_msg(LOG_ERROR, FIELDS(LF_STR("command", r->o->cmd[0]), LF_STR("error", strerror(err)),
					  LF_INT("exit_code", code)),
			"%s", code == RUN_NOT_FOUND ? "command not found" : "command cannot be executed");
		finish(r, code);
		return;
	}
	r->pid = pid;
	/* Our child cannot be reaped behind our back: the pidfd is surely its. */
	r->pidfd = sys_pidfd_open(pid);
	ev_child_init(&r->child, on_child, pid, 0);
	r->child.data = r;
	ev_child_start(r->loop, &r->child);
	log_msg(LOG_DEBUG, FIELDS(LF_STR("command", r->o->cmd[0]), LF_INT("pid", pid)), "command started");
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
	start_child(r);
}

static void stop_probes(struct runner *r)
{
	size_t i;

	for (i = 0; i < r->nprobes; i++) {
		http_cancel(r->http, &r->probes[i].req);
		ev_timer_stop(r->loop, &r->probes[i].retry);
	}
	ev_timer_stop(r->loop, &r->deadline);
	r->waiting = false;
}

static void probe_send(struct probe *p)
{
	int rc = http_start(p->r->http, &p->req, HTTP_GET, p->spec->ready_url, PROBE_TIMEOUT_US, PROBE_TIMEOUT_US);

	if (rc < 0) {
		/* Cannot even start a request: ask again later rather than give up early. */
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", p->spec->name), LF_STR("error", strerror(-rc))),
			"cannot ask the sidecar whether it is ready");
		ev_timer_set(&p->retry, PROBE_MAX_RETRY, 0.);
		ev_timer_start(p->r->loop, &p->retry);
	}
}

static void on_probe_retry(struct ev_loop *loop, ev_timer *t, int revents)
{
	probe_send(t->data);
}

static void on_probe(struct http_request *req)
{
	struct probe *p = req->data;
	struct runner *r = p->r;

	if (req->err == 0 && req->status >= 200 && req->status < 300) {
		p->ready = true;
		log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", p->spec->name)), "sidecar ready");
		if (--r->unready == 0) {
			stop_probes(r);
			log_msg(LOG_INFO, FIELDS(LF_STR("command", r->o->cmd[0])), "every sidecar is ready: starting the command");
			start_child(r);
		}
		return;
	}
	ev_timer_set(&p->retry, p->backoff, 0.);
	ev_timer_start(r->loop, &p->retry);
	p->backoff = p->backoff * 2 < PROBE_MAX_RETRY ? p->backoff * 2 : PROBE_MAX_RETRY;
}

static void on_probe_deadline(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct runner *r = t->data;
	char dur[32];
	size_t i;

	stop_probes(r);
	format_duration(r->o->timeout_ms, dur);
	for (i = 0; i < r->nprobes; i++)
		if (!r->probes[i].ready)
			log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", r->probes[i].spec->name),
						  LF_STR("url", r->probes[i].spec->ready_url)),
				"sidecar not ready within %s: not starting the command (--no-wait starts it regardless)",
				dur);
	finish(r, RUN_READY_TIMEOUT);
}

/*
 * --drain: no agent runs, so nobody writes ready; ask the sidecars' ready
 * URLs directly. A sidecar without one is not waited for.
 */
static int start_probes(struct runner *r)
{
	const struct agent_options *d = &r->o->drain_opts;
	size_t i;
	int rc;

	r->probes = calloc(d->nsidecars, sizeof(*r->probes));
	if (!r->probes)
		return -ENOMEM;
	rc = http_new(r->loop, &r->http);
	if (rc < 0)
		return rc;
	for (i = 0; i < d->nsidecars; i++) {
		struct probe *p = &r->probes[r->nprobes];

		if (!d->sidecars[i].ready_url)
			continue;
		p->r = r;
		p->spec = &d->sidecars[i];
		p->backoff = PROBE_FIRST_RETRY;
		p->req.done = on_probe;
		p->req.data = p;
		ev_init(&p->retry, on_probe_retry);
		p->retry.data = p;
		r->nprobes++;
	}
	r->unready = r->nprobes;
	if (r->nprobes == 0)
		return 1;
	ev_timer_init(&r->deadline, on_probe_deadline, (double)r->o->timeout_ms / 1000., 0.);
	r->deadline.data = r;
	ev_timer_start(r->loop, &r->deadline);
	for (i = 0; i < r->nprobes; i++)
		probe_send(&r->probes[i]);
	r->waiting = true;
	log_msg(LOG_INFO, FIELDS(LF_INT("sidecars", r->nprobes)), "waiting for the sidecars to be ready");
	return 0;
}

static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
	struct runner *r = s->data;
	int rc;

	if (r->pid) {
		rc = r->pidfd >= 0 ? sys_pidfd_send_signal(r->pidfd, s->signum) : (kill(r->pid, s->signum) < 0 ? -errno : 0);
		log_msg(LOG_DEBUG, FIELDS(LF_STR("signal", signal_name(s->signum)), LF_STR("error", rc ? strerror(-rc) : NULL)),
			"signal forwarded to the command");
		return;
	}
	/* Stopped before the command started (the pod is being deleted): it never will. */
	if (r->waiting && (s->signum == SIGTERM || s->signum == SIGINT || s->signum == SIGQUIT)) {
		log_msg(LOG_INFO, FIELDS(LF_STR("signal", signal_name(s->signum))),
			"signal received while waiting for ready: not starting the command");
		if (r->http)
			stop_probes(r);
		else
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

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.pidfd = -1;
	r.code = RUN_FAILED;
	signal(SIGPIPE, SIG_IGN);
	/* The default loop: the only one that reaps children (also orphans, when run is PID 1). */
	r.loop = ev_default_loop(EVFLAG_AUTO);
	if (!r.loop) {
		log_error("cannot start the event loop");
		return RUN_FAILED;
	}
	for (i = 0; i < ARRAY_SIZE(forwarded); i++) {
		ev_signal_init(&r.sigs[i], on_signal, forwarded[i]);
		r.sigs[i].data = &r;
		ev_signal_start(r.loop, &r.sigs[i]);
	}
	/* A report left by an earlier attempt of this container (restartPolicy OnFailure) is stale now. */
	rc = sentinel_remove_report(o->dir, o->name);
	if (rc < 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", o->dir), LF_STR("report", o->name), LF_STR("error", strerror(-rc))),
			"cannot remove the report of an earlier attempt");

	if (o->no_wait) {
		start_child(&r);
	} else if (o->drain) {
		rc = start_probes(&r);
		if (rc == 1) {
			start_child(&r);
		} else if (rc < 0) {
			log_msg(LOG_ERROR, FIELDS(LF_STR("error", strerror(-rc))), "cannot poll the sidecars' ready URLs");
			finish(&r, RUN_FAILED);
		}
	} else {
		rc = await_start(r.loop, &r.ready, o->dir, "ready", o->timeout_ms, on_ready, &r);
		if (rc < 0) {
			log_msg(LOG_ERROR, FIELDS(LF_STR("dir", o->dir), LF_STR("error", strerror(-rc))),
				"cannot watch the directory for ready (nor its parent)");
			finish(&r, RUN_FAILED);
		} else if (rc == 1) {
			start_child(&r);
		} else {
			r.waiting = true;
			log_msg(LOG_INFO, FIELDS(LF_STR("dir", o->dir)), "waiting for ready");
		}
	}
	if (!r.finished)
		ev_run(r.loop, 0);
	if (r.http) {
		stop_probes(&r);
		http_free(r.http);
	} else if (r.waiting) {
		await_stop(r.loop, &r.ready);
	}
	free(r.probes);
	for (i = 0; i < ARRAY_SIZE(forwarded); i++)
		ev_signal_stop(r.loop, &r.sigs[i]);
	ev_loop_destroy(r.loop);
	if (o->drain) {
		/*
		 * The wrapper model: with the command over (or never started), the
		 * sidecars go, so that the pod can complete. The exit code stays the
		 * command's; a sidecar that could not be stopped is in the log.
		 */
		/*
		 * The watchers above are gone and left their signals at SIG_DFL: a
		 * pod deletion's SIGTERM (which reaches run when it is not PID 1)
		 * must not end the drain it asks for. INT and QUIT still interrupt.
		 */
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGUSR1, SIG_IGN);
		signal(SIGUSR2, SIG_IGN);
		log_msg(LOG_INFO, FIELDS(LF_INT("exit_code", r.code)), "draining the sidecars before exiting");
		rc = agent_drain(&o->drain_opts);
		if (rc != 0)
			log_msg(LOG_ERROR, FIELDS(LF_INT("drain_exit_code", rc)), "not every sidecar could be stopped");
	}
	return r.code;
}
