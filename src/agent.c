#include "config.h"

#include "agent.h"

#include "decide.h"
#include "http.h"
#include "json.h"
#include "log.h"
#include "notes.h"
#include "options.h"
#include "parse.h"
#include "pidwatch.h"
#include "pod.h"
#include "preflight.h"
#include "podscan.h"
#include "run.h"
#include "sentinel.h"
#include "stopper.h"
#include "summary.h"
#include "sys.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum agent_mode {
	MODE_AGENT,   /* the companion container */
	MODE_DRAIN,   /* rearguard drain: stop the sidecars now, once */
	MODE_WRAPPER, /* rearguard run --drain: the command is the app */
};

#define OWN_PIDS_MAX 16
/* How often the pid counter is looked at while a process is expected: one small read each time. */
#define PIDTICK_S 0.01

struct agent;

struct agent {
	struct ev_loop *loop;
	enum agent_mode mode;
	const struct agent_options *opt;
	const struct run_options *run; /* the wrapper's */
	struct pod pod;
	struct decide *d;
	struct notes notes;            /* what decide's notes name besides what it knows */
	struct decide_sidecar_config *sc_cfg;
	struct http *http;
	struct stopper *stoppers;      /* one per sidecar */
	struct http_request *polls;    /* one readiness poll per sidecar */
	ev_timer timer;                /* decide's deadline */
	ev_timer pidtick;              /* the pid counter, looked at while a process is expected */
	bool no_pidtick;               /* the counter cannot be read */
	ev_idle later;                 /* the decisions go on once a stop on its way is out */
	ev_prepare flush;              /* the log lines, once per loop iteration */
	ev_io log_io;                  /* the log output, while it has not taken everything */
	ev_signal sigs[ARRAY_SIZE(run_forwarded)];
	size_t nsigs;
	pid_t own[OWN_PIDS_MAX];       /* drain: this process and its ancestors */
	size_t nown;
	struct sentinel files;
	bool files_open;
	bool starting;                 /* before the loop: events are gathered, not acted upon */
	bool decide_ready;             /* decide exists: file events go to it */
	bool found_apps_done, found_done;
	char *done_text;               /* the done file an earlier run left, as found */
	size_t done_len;
	bool blind;                    /* no other container of the pod is visible */
	bool deciding, again;          /* run_decisions is on the stack; asked again meanwhile */
	bool finished;
	int exit_code;
	unsigned scan_iter;            /* the loop iteration of the last /proc scan, plus one */
	struct jbuf summary;           /* built once, at the end */
	bool *preflight_said;          /* per sidecar and kind: that warning was logged */
	bool can_kill;                 /* CAP_KILL */
	/* The wrapper's command. */
	struct run_child child;
	bool child_started, child_over;
	int child_code;
};

static void run_decisions(struct agent *a);
static void update_polling(struct agent *a);

static const char *sidecar_name(const struct agent *a, size_t k)
{
	return a->opt->sidecars[k].name;
}

/* ---- the pod ----------------------------------------------------------- */

/* Its processes are all gone: so are its containers' roots, whose exit codes decide is to wait for. */
static void sidecar_gone(struct agent *a, size_t k)
{
	pod_check_sidecar(&a->pod, k);
	decide_sidecar_gone(a->d, k, mono_us());
}

/* A sidecar being collected whose processes are all gone, as of a fresh scan. */
static void confirm_stops(struct agent *a)
{
	struct decide_sidecar_view v;
	size_t k;

	for (k = 0; k < a->opt->nsidecars; k++) {
		struct stopper *st = &a->stoppers[k];

		if (!st->collecting)
			continue;
		decide_sidecar_view(a->d, k, &v);
		if (v.stage == DECIDE_SIDECAR_GONE)
			continue;
		stopper_collect(st);
		if (stopper_gone(st))
			sidecar_gone(a, k);
	}
}

/* Rescans /proc and reports the outcome, whatever it is, to decide. */
static int rescan(struct agent *a)
{
	int rc = pod_refresh(&a->pod);

	if (rc == 0) {
		a->scan_iter = ev_iteration(a->loop) + 1;
		confirm_stops(a);
		update_polling(a);
		DECIDE_TELL(a->d, 0, .kind = DECIDE_EV_CONTAINERS, .count = pod_containers(&a->pod));
	}
	decide_rescanned(a->d, rc, mono_us());
	return rc;
}

/* How many processes are polled, for decide's clock. */
static void update_polling(struct agent *a)
{
	unsigned n = pod_polled(&a->pod);
	size_t i;

	for (i = 0; i < a->opt->nsidecars; i++)
		n += stopper_polled(&a->stoppers[i]);
	decide_polling(a->d, n);
}

static void poll_watches(struct agent *a)
{
	size_t i;

	pod_poll(&a->pod);
	for (i = 0; i < a->opt->nsidecars; i++)
		stopper_poll(&a->stoppers[i]);
	update_polling(a);
}

/* A root exited, and decide was told. */
static void on_root_exit(void *data)
{
	run_decisions(data);
}

struct preflight_ctx {
	struct agent *a;
	size_t k;
};

static void on_finding(void *data, enum preflight_kind kind, const char *message)
{
	struct preflight_ctx *ctx = data;
	bool *said = &ctx->a->preflight_said[ctx->k * PREFLIGHT_NKINDS + kind];

	if (*said)
		return;
	*said = true;
	log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", sidecar_name(ctx->a, ctx->k))), "pre-flight: %s", message);
	/* A stop endpoint known to be missing is said once: not again when it refuses, nor by the stop's answer. */
	if (kind == PREFLIGHT_CLOUDSQL_QUIT || kind == PREFLIGHT_CLOUDSQL_V1) {
		decide_sidecar_no_endpoint(ctx->a->d, ctx->k);
		ctx->a->stoppers[ctx->k].advised = true;
	}
}

/* A sidecar's container appeared: what it shows of the known traps, said once. */
static void on_sidecar(void *data, size_t k, const struct pod_container *c)
{
	struct agent *a = data;
	struct preflight_ctx ctx = { a, k };
	struct preflight_facts f = {
		.name = c->name, .nprocs = c->nprocs, .my_ruid = getuid(), .my_euid = geteuid(), .can_kill = a->can_kill,
	};
	char cmdline[4096];
	const char *argv[64];
	size_t n = 0, i;

	if (podscan_cmdline(a->pod.ps, c->root, c->root_start, cmdline, sizeof(cmdline), &n) == 0) {
		for (i = 0; i < n && f.argc < ARRAY_SIZE(argv); i += strlen(cmdline + i) + 1)
			argv[f.argc++] = cmdline + i;
		f.argv = argv;
	}
	f.uids_known = podscan_uids(a->pod.ps, c->root, c->root_start, &f.ruid, &f.suid) == 0;
	preflight_sidecar(&a->opt->sidecars[k], &f, on_finding, &ctx);
}

/* ---- stopping sidecars ------------------------------------------------------ */

static void on_stopper_http(struct stopper *st, enum decide_http_purpose purpose, int result)
{
	struct agent *a = st->cfg.data;

	decide_http_result(a->d, st->cfg.index, purpose, result, mono_us());
	run_decisions(a);
}

/* Every process it watched is gone: one more look shows whether something was forked meanwhile. */
static void on_stopper_empty(struct stopper *st)
{
	struct agent *a = st->cfg.data;

	rescan(a);
	run_decisions(a);
}

static void stop_watch(struct agent *a, size_t k)
{
	struct stopper *st = &a->stoppers[k];

	/*
	 * The processes are read from a fresh look at /proc: one made in this
	 * same loop iteration (the confirming rescan, the previous sidecar's)
	 * is fresh.
	 */
	bool fresh = a->scan_iter == ev_iteration(a->loop) + 1 || rescan(a) == 0;

	if (!st->collecting)
		stopper_collect(st);
	update_polling(a);
	log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", sidecar_name(a, k)), LF_INT("processes", st->live)),
		"stopping sidecar");
	/* Gone only as of a look that worked; else the rescan decide retries confirms it. */
	if (fresh && stopper_gone(st))
		sidecar_gone(a, k);
}

static void signal_sidecar(struct agent *a, size_t k, int sig, bool all)
{
	unsigned sent = 0;
	int err = stopper_signal(&a->stoppers[k], sig, all, &sent);

	log_msg(err ? LOG_WARN : LOG_INFO,
		FIELDS(LF_STR("sidecar", sidecar_name(a, k)), LF_INT("processes", sent),
		       LF_STR("error", err ? strerror(-err) : NULL)),
		"sent SIG%s", signal_name(sig));
	decide_signal_result(a->d, k, err, mono_us());
}

/* ---- readiness ------------------------------------------------------------- */

static void on_poll_done(struct http_request *r)
{
	struct agent *a = r->data;
	size_t k = (size_t)(r - a->polls);

	decide_http_result(a->d, k, DECIDE_HTTP_READY, r->err ? r->err : (int)r->status, mono_us());
	run_decisions(a);
}

static int start_poll(struct agent *a, const struct decide_action *act)
{
	const struct sidecar_spec *spec = &a->opt->sidecars[act->sidecar];
	struct http_request *r = &a->polls[act->sidecar];
	int rc = 0;

	if (!r->easy)
		rc = http_request_init(a->http, r, HTTP_GET, spec->ready_url, &spec->ready_at);
	return rc < 0 ? rc : http_request_start(r, act->connect_timeout_us, act->timeout_us);
}

static void start_request(struct agent *a, const struct decide_action *act)
{
	int rc;

	if (act->purpose == DECIDE_HTTP_READY)
		rc = start_poll(a, act);
	else
		rc = stopper_request(&a->stoppers[act->sidecar], act->purpose, act->connect_timeout_us, act->timeout_us);
	if (rc < 0) {
		log_msg(LOG_ERROR, FIELDS(LF_STR("url", act->url), LF_STR("error", strerror(-rc))),
			"cannot start an HTTP request");
		decide_http_result(a->d, act->sidecar, act->purpose, rc, mono_us());
	}
}

/* ---- the wrapper's command ---------------------------------------------------- */

/* The report of `rearguard run`, for an agent that may read it. */
static void write_report(struct agent *a)
{
	int rc = sentinel_write_report(a->run->dir, a->run->name, a->child_code);

	if (rc < 0)
		log_msg(LOG_ERROR,
			FIELDS(LF_STR("dir", a->run->dir), LF_STR("report", a->run->name), LF_STR("error", strerror(-rc))),
			"cannot write the exit-code report");
}

/* The command is over, or will never start: an app that exited with code. */
static void child_over(struct agent *a, int code)
{
	a->child_over = true;
	a->child_code = code;
	DECIDE_TELL(a->d, mono_us(), .kind = DECIDE_EV_COMMAND_ENDED, .code = code);
	run_decisions(a);
	/* After the decisions: the stop is out before the report is written. */
	write_report(a);
}

static void on_child_exit(struct run_child *c, int code)
{
	child_over(c->data, code);
}

static void start_child(struct agent *a)
{
	int code = run_child_start(a->loop, &a->child, a->run->cmd);

	a->child_started = true;
	if (code)
		child_over(a, code);
}

/* ---- files we write ---------------------------------------------------- */

static void write_termination_log(struct agent *a, const char *text, size_t len)
{
	/* A drain has none: the termination message belongs to the container it runs in. */
	int fd = a->opt->termination_log
			 ? open(a->opt->termination_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644)
			 : -1;

	if (fd >= 0) {
		(void)write_all(fd, text, len);
		close(fd);
	} else if (a->opt->termination_log) {
		log_msg(LOG_DEBUG, FIELDS(LF_STR("path", a->opt->termination_log), LF_STR("error", strerror(errno))),
			"termination log not writable: skipped");
	}
}

/* Writes a file of the protocol: name's content is text and a newline. */
static int write_file(struct agent *a, const char *name, const char *text, size_t len)
{
	char *data = malloc(len + 1);
	int rc;

	if (!data)
		return -ENOMEM;
	memcpy(data, text, len);
	data[len] = '\n';
	rc = sentinel_write(&a->files, name, data, len + 1);
	free(data);
	return rc;
}

/* The ready file names the sidecars, one a line. */
static int write_ready(struct agent *a)
{
	const struct agent_options *opt = a->opt;
	char text[1024] = "";
	size_t i, n = 0;
	int rc;

	for (i = 0; i < opt->nsidecars && n < sizeof(text); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", i ? "\n" : "", opt->sidecars[i].name);
	rc = write_file(a, "ready", text, strlen(text));
	if (rc == 0)
		log_msg(LOG_INFO, FIELDS(LF_STR("dir", opt->dir)), "wrote the ready file");
	return rc;
}

/* The summary, built once at the end: done, the termination log and the last line say the same. */
static const struct jbuf *summary(struct agent *a)
{
	if (!a->summary.buf && !a->summary.failed) {
		jbuf_init(&a->summary);
		summary_build(&a->summary, a->d, a->opt, mono_us());
	}
	return &a->summary;
}

static int write_done(struct agent *a)
{
	const struct jbuf *j = summary(a);

	return j->failed ? -ENOMEM : write_file(a, "done", j->buf, j->len);
}

static void carry_out_write(struct agent *a, enum decide_file file, const char *reason)
{
	int rc = 0;

	switch (file) {
	case DECIDE_FILE_READY:
		/* The wrapper's command is what waits for ready. */
		if (a->mode == MODE_WRAPPER) {
			if (!a->child_started && !a->child_over)
				start_child(a);
		} else {
			rc = write_ready(a);
		}
		break;
	case DECIDE_FILE_APPS_DONE:
		rc = write_file(a, "apps-done", reason, strlen(reason));
		break;
	case DECIDE_FILE_DONE:
		rc = write_done(a);
		break;
	case DECIDE_NFILES:
		break;
	}
	decide_written(a->d, file, rc, mono_us());
}

/* ---- the end ------------------------------------------------------------ */

/* The termination log: the summary, or its short form when the kubelet would cut it (decide says how short). */
static void write_summary_log(struct agent *a, const char *text, size_t len, unsigned containers)
{
	struct jbuf t;

	jbuf_init(&t);
	summary_termination(&t, text, len, summary_budget(containers));
	if (!t.failed)
		write_termination_log(a, t.buf, t.len);
	jbuf_free(&t);
}

static void finish(struct agent *a, const struct decide_action *act)
{
	const struct jbuf *j;

	a->finished = true;
	a->exit_code = act->status >= 0 ? act->status : RUN_FAILED;
	ev_break(a->loop, EVBREAK_ALL);
	/* An earlier run's summary: its done file, as it was found. */
	if (act->resumed) {
		if (a->done_text)
			write_summary_log(a, a->done_text, a->done_len, act->containers);
		return;
	}
	j = summary(a);
	if (!j->failed)
		write_summary_log(a, j->buf, j->len, act->containers);
	log_msg(LOG_INFO, FIELDS(LF_INT("exit_code", act->exit_code), LF_JSON("summary", j->failed ? "null" : j->buf)),
		"finished");
}

/* The drain began: in the wrapper, a command that never started ends with a code of its own. */
static void apps_done(struct agent *a, const struct decide_action *act)
{
	size_t k;

	/* From here on the stop must not wait on a process stuck in the kernel. */
	podscan_names_only(a->pod.ps);
	/*
	 * A sidecar that exited in the same breath as the last app (a pod
	 * deletion's SIGTERM reached both) has its exit recorded before its
	 * stop is decided: the stop would reach nothing, and it was not ours.
	 */
	for (k = 0; k < a->opt->nsidecars; k++)
		pod_check_sidecar(&a->pod, k);
	/* decide ended the command that never started (its sidecars were not ready): it is reported. */
	if (act->command_ended) {
		a->child_over = true;
		a->child_code = act->exit_code;
		write_report(a);
	}
}

/* ---- the decisions ------------------------------------------------------ */

static void carry_out(struct agent *a, const struct decide_action *act)
{
	switch (act->kind) {
	case DECIDE_RESCAN:
		rescan(a);
		break;
	case DECIDE_STATUS:
		pod_statuses(&a->pod);
		break;
	case DECIDE_POLL:
		poll_watches(a);
		break;
	case DECIDE_CATCHES:
		pod_catches(&a->pod, act->sidecar, act->signo, mono_us());
		break;
	case DECIDE_APPS_DONE:
		apps_done(a, act);
		break;
	case DECIDE_WATCH:
		stop_watch(a, act->sidecar);
		break;
	case DECIDE_SIGNAL:
		signal_sidecar(a, act->sidecar, act->signo, act->all);
		break;
	case DECIDE_HTTP:
		start_request(a, act);
		break;
	case DECIDE_WRITE:
		carry_out_write(a, act->file, act->reason);
		break;
	case DECIDE_EXIT:
		finish(a, act);
		break;
	}
}

static void arm_timer(struct agent *a)
{
	int64_t deadline, delay;

	ev_timer_stop(a->loop, &a->timer);
	if (!a->finished && !a->no_pidtick && decide_expects_process(a->d, mono_us())) {
		if (!ev_is_active(&a->pidtick))
			ev_timer_again(a->loop, &a->pidtick);
	} else {
		ev_timer_stop(a->loop, &a->pidtick);
	}
	/* While a stop is on its way, the idle watcher brings the decisions back. */
	if (a->finished || ev_is_active(&a->later))
		return;
	deadline = decide_deadline(a->d, mono_us());
	if (deadline == INT64_MAX)
		return;
	/* libev measures from its cached loop time: bring it up to date first. */
	ev_now_update(a->loop);
	delay = deadline - mono_us();
	ev_timer_set(&a->timer, delay > 0 ? (double)delay / US_PER_S : 0., 0.);
	ev_timer_start(a->loop, &a->timer);
}

/*
 * Asks decide for actions and carries them out, until there is nothing to
 * do before its next deadline. An event reported while this runs (a
 * request that failed at once, a watch that found its process gone) only
 * asks for one more round. After a stop request or signal the loop gets
 * the turn first, so that the stop is on the wire before the processes are
 * collected and the log lines are written.
 */
static void run_decisions(struct agent *a)
{
	struct decide_action act;

	if (a->deciding) {
		a->again = true;
		return;
	}
	a->deciding = true;
	ev_idle_stop(a->loop, &a->later);
	do {
		a->again = false;
		while (!a->finished && decide_next(a->d, mono_us(), &act)) {
			carry_out(a, &act);
			if (act.urgent && !a->finished) {
				ev_idle_start(a->loop, &a->later);
				a->again = false;
				break;
			}
		}
	} while (a->again && !a->finished);
	a->deciding = false;
	arm_timer(a);
}

static void on_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
	run_decisions(t->data);
}

/*
 * A look at the pid counter: a container can start and end between two
 * rescans (a runtime's init, then `true`, within tens of milliseconds); a
 * pid handed out since the last rescan brings the next one forward.
 */
static void on_pidtick(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct agent *a = t->data;
	int moved = pod_pids_moved(&a->pod);

	if (moved < 0) {
		log_msg(LOG_DEBUG, FIELDS(LF_STR("error", strerror(-moved))),
			"cannot read the pid counter: rescans on their own clock only");
		a->no_pidtick = true;
		ev_timer_stop(loop, t);
		return;
	}
	if (moved) {
		decide_pids_moved(a->d);
		run_decisions(a);
	}
}

static void on_later(struct ev_loop *loop, ev_idle *w, int revents)
{
	run_decisions(w->data);
}

/* The log output takes more: the lines that waited. */
static void on_log_writable(struct ev_loop *loop, ev_io *w, int revents)
{
	log_flush();
	if (!log_pending()) {
		ev_ref(loop);
		ev_io_stop(loop, w);
	}
}

/*
 * Before the loop waits: the log lines of this iteration, after whatever
 * went out in it; what the output does not take waits for it to be
 * writable, and the loop goes on.
 */
static void on_prepare(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct agent *a = w->data;

	log_flush();
	if (log_pending() && !ev_is_active(&a->log_io)) {
		ev_io_set(&a->log_io, log_fd(), EV_WRITE);
		ev_io_start(loop, &a->log_io);
		/* A stalled log keeps nothing alive: the loop ends when the agent's work does. */
		ev_unref(loop);
	}
}

/* ---- signals -------------------------------------------------------------- */

static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
	struct agent *a = s->data;
	int rc;

	if (a->mode == MODE_WRAPPER) {
		if (a->child.pid) {
			rc = run_child_signal(&a->child, s->signum);
			log_msg(LOG_DEBUG,
				FIELDS(LF_STR("signal", signal_name(s->signum)), LF_STR("error", rc ? strerror(-rc) : NULL)),
				"signal forwarded to the command");
			return;
		}
		/* Stopped before the command started (the pod is being deleted): it never will. */
		if (!a->child_started && !a->child_over &&
		    (s->signum == SIGTERM || s->signum == SIGINT || s->signum == SIGQUIT)) {
			log_msg(LOG_INFO, FIELDS(LF_STR("signal", signal_name(s->signum))),
				"signal received while waiting for ready: not starting the command");
			decide_drain_now(a->d, "signal", mono_us());
			child_over(a, 128 + s->signum);
			return;
		}
		/* The command is over: a pod deletion's signal must not end the drain it asks for. */
		log_msg(LOG_INFO, FIELDS(LF_STR("signal", signal_name(s->signum))),
			"signal received while stopping the sidecars: the drain goes on");
		return;
	}
	if (s->signum == SIGHUP) {
		/* A look at what the agent sees, for whoever debugs a pod; and the decisions with it. */
		log_info("SIGHUP: rescanning the pod");
		rescan(a);
		pod_list(&a->pod);
		run_decisions(a);
		return;
	}
	log_msg(LOG_INFO, FIELDS(LF_STR("signal", signal_name(s->signum))), "signal received");
	decide_terminate(a->d, mono_us());
	run_decisions(a);
}

static void watch_signals(struct agent *a)
{
	static const int agent_sigs[] = { SIGTERM, SIGINT, SIGHUP };
	const int *sigs = a->mode == MODE_WRAPPER ? run_forwarded : agent_sigs;
	size_t i, n = a->mode == MODE_WRAPPER ? ARRAY_SIZE(run_forwarded) : ARRAY_SIZE(agent_sigs);

	/* A drain has none: interrupting it by hand ends it. */
	if (a->mode == MODE_DRAIN)
		return;
	for (i = 0; i < n; i++) {
		ev_signal_init(&a->sigs[i], on_signal, sigs[i]);
		a->sigs[i].data = a;
		ev_signal_start(a->loop, &a->sigs[i]);
	}
	a->nsigs = n;
}

/* The exit status is decided: no signal may replace it with 128 + N while the engine tears down. */
static void hold_signals(struct agent *a)
{
	int sigs[ARRAY_SIZE(a->sigs)];
	size_t i;

	for (i = 0; i < a->nsigs; i++)
		sigs[i] = a->sigs[i].signum;
	sys_hold_signals(sigs, a->nsigs);
}

/* ---- the file protocol ------------------------------------------------- */

static void on_file(struct sentinel *s, enum sentinel_what what, const char *name, int code)
{
	struct agent *a = s->data;
	int64_t now = mono_us();

	switch (what) {
	case SENTINEL_REPORT:
		/* Read again once decide exists (see engine()). */
		if (!a->decide_ready)
			return;
		decide_app_report(a->d, name, code, now);
		break;
	case SENTINEL_DRAIN:
		if (!a->decide_ready)
			return;
		if (decide_drain_now(a->d, "drain-file", now))
			log_msg(LOG_INFO, FIELDS(LF_STR("dir", a->opt->dir)), "drain file found: draining now");
		break;
	case SENTINEL_APPS_DONE:
	case SENTINEL_DONE:
		/* Left by an earlier run of the agent; later ones are our own. */
		if (!a->decide_ready) {
			a->found_apps_done |= what == SENTINEL_APPS_DONE;
			a->found_done |= what == SENTINEL_DONE;
		}
		return;
	default:
		return;
	}
	if (!a->starting)
		run_decisions(a);
}

/*
 * Watches --dir before anything else happens, so that nothing written
 * meanwhile is missed. Without it (no volume mounted, a read-only root file
 * system) the agent still works from /proc alone.
 */
static void open_files(struct agent *a)
{
	int rc = sentinel_open(&a->files, a->loop, a->opt->dir, SENTINEL_AGENT, on_file, a);

	if (rc < 0) {
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", a->opt->dir), LF_STR("error", strerror(-rc))),
			"file protocol unavailable (mount an emptyDir at --dir to use it): "
			"no ready file, exit-code reports, drain file or resume after a restart");
		return;
	}
	a->files_open = true;
	log_msg(LOG_DEBUG, FIELDS(LF_STR("dir", a->opt->dir)), "watching the file protocol directory");
}

/*
 * A previous run of the agent in this pod finished (it was restarted after
 * that, as under restartPolicy OnFailure): its summary goes to this run's
 * termination log too, where the kubelet looks for it. Read as it is found.
 */
static void read_done(struct agent *a)
{
	/* done is ours, whatever its size (a summary of many apps is long), but not without bound. */
	const size_t max = 1 << 20;
	char *buf = malloc(max);
	size_t len = 0;

	if (buf && read_small_at(a->files.dirfd, "done", O_NOFOLLOW | O_NONBLOCK, buf, max, &len) == 0 && len < max - 1) {
		a->done_text = buf;
		a->done_len = len > 0 && buf[len - 1] == '\n' ? len - 1 : len;
		return;
	}
	log_msg(LOG_WARN, FIELDS(LF_STR("dir", a->opt->dir)), "cannot read done: the termination log stays empty");
	free(buf);
}

/* ---- start-up ----------------------------------------------------------- */

/* What decide is told of sidecar k, and what rearguard knows about its spec. */
static void configure_sidecar(struct agent *a, size_t k)
{
	const struct sidecar_spec *spec = &a->opt->sidecars[k];
	struct decide_sidecar_config *c = &a->sc_cfg[k];

	str_copy(c->name, spec->name, sizeof(c->name));
	/* An HTTP stop has no stop signal: SIGTERM is then the escalation, not a repeat. */
	c->stop_signal = spec->stop_url ? 0 : spec->stop_signal;
	c->stop_url = spec->stop_url;
	c->ready_url = spec->ready_url;
	c->drain_url = spec->drain_url;
	c->drain_time_us = spec->drain_time_ms * US_PER_MS;
	c->signal_all = spec->signal_all;
	c->optional = spec->detected;
	c->exit_fix = spec_exit_fix(spec);
	c->confirm = a->blind ? CONFIRM_PORT : CONFIRM_PROCESSES;
}

/* What the specs themselves give away, said once the agent is to act on the pod. */
static void warn_specs(const struct agent *a)
{
	const char *warning;
	size_t k;

	for (k = 0; k < a->opt->nsidecars; k++)
		if ((warning = spec_warning(&a->opt->sidecars[k])))
			log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", a->opt->sidecars[k].name)), "%s", warning);
}

static int init_decide(struct agent *a)
{
	const struct agent_options *opt = a->opt;
	struct decide_config dc = {
		.policy = opt->policy,
		.apps_expected = (unsigned)opt->apps,
		.startup_timeout_us = opt->startup_timeout_ms * US_PER_MS,
		/* The kubelet may still start a sidecar listed after the apps; not during a drain. */
		.sidecar_wait_us = a->mode == MODE_AGENT ? opt->sidecar_wait_ms * US_PER_MS : 0,
		.restart_grace_us = opt->restart_grace_ms * US_PER_MS,
		.term_grace_us = opt->term_grace_ms * US_PER_MS,
		.stop_timeout_us = opt->stop_timeout_ms * US_PER_MS,
		.kill_after_us = opt->kill_after_ms * US_PER_MS,
		.readiness = a->mode != MODE_DRAIN,
		.ready_timeout_us = opt->ready_timeout_ms * US_PER_MS,
		.files = a->files_open,
		.nsidecars = opt->nsidecars,
		.sidecars = a->sc_cfg,
		.sink = notes_log,
		.sink_data = &a->notes,
	};
	size_t k;

	for (k = 0; k < opt->nsidecars; k++)
		configure_sidecar(a, k);
	if (a->mode == MODE_WRAPPER) {
		/* One app, the command, which waits for the sidecars' ready URLs for at most --timeout. */
		dc.policy = POLICY_NEVER;
		dc.apps_expected = 1;
		dc.readiness = dc.ready_gates_apps = !a->run->no_wait;
		dc.ready_timeout_us = a->run->timeout_ms * US_PER_MS;
		dc.command = true;
		dc.command_not_ready = RUN_READY_TIMEOUT;
	}
	a->notes.dir = opt->dir;
	return decide_new(&dc, mono_us(), &a->d);
}

/* The requests of every sidecar, built now: when a stop is due, it only has to be sent. */
static int prepare_http(struct agent *a)
{
	size_t k;
	int rc = http_new(a->loop, &a->http);

	if (rc < 0)
		return rc;
	for (k = 0; k < a->opt->nsidecars; k++) {
		struct stopper_config sc = {
			.loop = a->loop,
			.http = a->http,
			.ps = a->pod.ps,
			.spec = &a->opt->sidecars[k],
			.index = k,
			.in_own_container = a->mode == MODE_DRAIN,
			.spare = a->own,
			.nspare = a->nown,
			.on_http = on_stopper_http,
			.on_empty = on_stopper_empty,
			.data = a,
		};

		stopper_init(&a->stoppers[k], &sc);
		a->polls[k].done = on_poll_done;
		a->polls[k].data = a;
	}
	/* libcurl's set-up takes milliseconds: after the first scan, never before a stop request. */
	for (k = 0; k < a->opt->nsidecars; k++) {
		rc = stopper_prepare(&a->stoppers[k]);
		if (rc < 0) {
			log_msg(LOG_WARN, FIELDS(LF_STR("error", strerror(-rc))),
				"cannot set up libcurl yet: trying again at the first request");
			break;
		}
	}
	return 0;
}

static void start_line(const struct agent *a)
{
	const struct agent_options *opt = a->opt;

	switch (a->mode) {
	case MODE_DRAIN:
		log_msg(LOG_INFO, FIELDS(LF_INT("sidecars", opt->nsidecars)), "rearguard %s draining", PACKAGE_VERSION);
		break;
	case MODE_WRAPPER:
		log_msg(LOG_INFO, FIELDS(LF_INT("sidecars", opt->nsidecars), LF_STR("command", a->run->cmd[0])),
			"rearguard %s running the command, and stopping the sidecars after it", PACKAGE_VERSION);
		break;
	case MODE_AGENT:
		log_msg(LOG_INFO,
			FIELDS(LF_INT("sidecars", opt->nsidecars),
			       LF_STR("restart_policy", opt->policy == POLICY_NEVER ? "Never" : "OnFailure"),
			       LF_INT("apps", opt->apps)),
			"rearguard %s starting", PACKAGE_VERSION);
		break;
	}
}

static void cleanup(struct agent *a)
{
	size_t i;

	if (a->loop) {
		ev_idle_stop(a->loop, &a->later);
		ev_timer_stop(a->loop, &a->timer);
		ev_timer_stop(a->loop, &a->pidtick);
		for (i = 0; i < a->nsigs; i++)
			ev_signal_stop(a->loop, &a->sigs[i]);
		run_child_stop(a->loop, &a->child);
	}
	for (i = 0; a->stoppers && i < a->opt->nsidecars; i++)
		stopper_free(&a->stoppers[i]);
	for (i = 0; a->polls && i < a->opt->nsidecars; i++)
		http_request_free(&a->polls[i]);
	http_free(a->http);
	pod_close(&a->pod);
	free(a->stoppers);
	free(a->polls);
	free(a->preflight_said);
	if (a->files_open)
		sentinel_close(&a->files);
	free(a->sc_cfg);
	free(a->done_text);
	jbuf_free(&a->summary);
	decide_free(a->d);
	if (a->loop)
		ev_loop_destroy(a->loop);
	/* The last lines (the summary among them) get a moment, not more, to reach a slow log. */
	log_finish(1000);
}

static int engine(const struct agent_options *opt, const struct run_options *run, enum agent_mode mode)
{
	struct agent a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.opt = opt;
	a.run = run;
	a.mode = mode;
	a.exit_code = mode == MODE_WRAPPER ? RUN_FAILED : 2;
	a.child.pidfd = -1;
	a.child.on_exit = on_child_exit;
	a.child.data = &a;
	signal(SIGPIPE, SIG_IGN);
	/* A log line is never waited for, from the first one on. */
	rc = log_nonblocking();
	start_line(&a);
	if (rc < 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("error", strerror(-rc))),
			"cannot make the log output non-blocking: a stalled log pipe could stall the agent");

	/* The default loop: the only one that reaps children (the wrapper's command). */
	a.loop = ev_default_loop(EVFLAG_AUTO);
	a.sc_cfg = calloc(opt->nsidecars, sizeof(*a.sc_cfg));
	a.stoppers = calloc(opt->nsidecars, sizeof(*a.stoppers));
	a.polls = calloc(opt->nsidecars, sizeof(*a.polls));
	a.preflight_said = calloc(opt->nsidecars * PREFLIGHT_NKINDS + 1, sizeof(*a.preflight_said));
	a.can_kill = sys_can_kill();
	if (!a.loop || !a.sc_cfg || !a.stoppers || !a.polls || !a.preflight_said) {
		log_error("cannot start the event loop");
		goto out;
	}
	ev_init(&a.timer, on_timer);
	a.timer.data = &a;
	ev_init(&a.pidtick, on_pidtick);
	a.pidtick.repeat = PIDTICK_S;
	a.pidtick.data = &a;
	ev_idle_init(&a.later, on_later);
	a.later.data = &a;
	ev_prepare_init(&a.flush, on_prepare);
	a.flush.data = &a;
	ev_init(&a.log_io, on_log_writable);

	{
		struct pod_config pc = {
			.loop = a.loop, .opt = opt, .apps = mode == MODE_AGENT, .on_exit = on_root_exit,
			.on_sidecar = on_sidecar, .data = &a,
		};

		rc = pod_open(&a.pod, &pc);
	}
	a.scan_iter = ev_iteration(a.loop) + 1;
	if (rc == -ENXIO && mode != MODE_AGENT) {
		log_warn("cannot see the pod's other containers (no shared PID namespace): a sidecar counts as "
			 "stopped once its stop URL answered 2xx and it no longer accepts connections");
		a.blind = true;
	} else if (rc == -ENXIO) {
		log_error("cannot see the pod's other containers: PID 1 is in rearguard's own container "
			  "(set shareProcessNamespace: true in the pod spec)");
		goto out;
	} else if (rc < 0) {
		goto out;
	}
	/* A drain may run in the sidecar's own container, under a shell: spare it and its ancestors. */
	if (mode == MODE_DRAIN)
		a.nown = podscan_ancestors(a.pod.ps, getpid(), a.own, OWN_PIDS_MAX);
	/* After the pod check: a pod the agent cannot work in leaves nothing in --dir. */
	a.starting = true;
	if (mode == MODE_AGENT)
		open_files(&a);
	if (init_decide(&a) < 0) {
		log_error("out of memory");
		goto out;
	}
	DECIDE_TELL(a.d, 0, .kind = DECIDE_EV_CONTAINERS, .count = pod_containers(&a.pod));
	/* An earlier run finished: its summary is all there is to pass on; nothing in the pod is touched. */
	if (a.found_done) {
		read_done(&a);
		DECIDE_TELL(a.d, mono_us(), .kind = DECIDE_EV_FOUND, .file = DECIDE_FILE_DONE);
		run_decisions(&a);
		goto out;
	}
	warn_specs(&a);
	if (prepare_http(&a) < 0) {
		log_error("out of memory");
		goto out;
	}
	if (mode == MODE_WRAPPER) {
		/* A report left by an earlier attempt of this container (OnFailure) is stale now. */
		rc = sentinel_remove_report(run->dir, run->name);
		if (rc < 0)
			log_msg(LOG_WARN, FIELDS(LF_STR("dir", run->dir), LF_STR("report", run->name),
						 LF_STR("error", strerror(-rc))),
				"cannot remove the report of an earlier attempt");
		decide_app_seen(a.d, DECIDE_APP_COMMAND, run->name, mono_us());
		if (run->no_wait)
			start_child(&a);
	}
	if (a.found_apps_done)
		DECIDE_TELL(a.d, mono_us(), .kind = DECIDE_EV_FOUND, .file = DECIDE_FILE_APPS_DONE);
	/* What the directory held at start (a drain file, reports) was read before decide existed. */
	a.decide_ready = true;
	if (a.files_open)
		sentinel_reread(&a.files);
	pod_follow(&a.pod, a.d);
	update_polling(&a);
	/* Reports found in the directory can be matched now that the pod is known. */
	decide_rescanned(a.d, 0, mono_us());
	a.starting = false;
	watch_signals(&a);
	if (mode == MODE_DRAIN)
		decide_drain_now(a.d, "drain-command", mono_us());

	/* From here on the log is written once per loop iteration (on_prepare). */
	log_hold();
	ev_prepare_start(a.loop, &a.flush);
	ev_unref(a.loop); /* the flush alone does not keep the loop running */
	run_decisions(&a);
	if (!a.finished)
		ev_run(a.loop, 0);
	hold_signals(&a);
	ev_ref(a.loop);
	ev_prepare_stop(a.loop, &a.flush);
	if (ev_is_active(&a.log_io)) {
		ev_ref(a.loop);
		ev_io_stop(a.loop, &a.log_io);
	}
	/* decide chose the exit status; a loop that ended without it failed. */
	if (!a.finished)
		a.exit_code = mode != MODE_WRAPPER ? 1 : a.child_over ? a.child_code : RUN_FAILED;
out:
	rc = a.exit_code;
	cleanup(&a);
	return rc;
}

int agent_run(const struct agent_options *opt)
{
	return engine(opt, NULL, MODE_AGENT);
}

int agent_drain(const struct agent_options *opt)
{
	return engine(opt, NULL, MODE_DRAIN);
}

int agent_wrap(const struct run_options *run)
{
	return engine(&run->drain_opts, run, MODE_WRAPPER);
}
