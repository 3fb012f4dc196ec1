#include "config.h"

#include "engine.h"

#include "evlog.h"
#include "http.h"
#include "json.h"
#include "log.h"
#include "notes.h"
#include "options.h"
#include "parse.h"
#include "pod.h"
#include "podscan.h"
#include "stopper.h"
#include "summary.h"
#include "sys.h"
#include "util.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OWN_PIDS_MAX 16
#define SIGNALS_MAX 8
/* How often the pid counter is looked at while a process is expected: one small read each time. */
#define PIDTICK_S 0.01

struct engine {
	const struct engine_mode *mode;
	void *data;                    /* the mode's */
	const struct agent_options *opt;
	struct engine_world world;
	struct ev_loop *loop;
	struct pod pod;
	struct decide *d;
	struct notes notes;            /* what decide's notes name besides what it knows */
	struct decide_sidecar_config *sc_cfg;
	struct http *http;
	struct stopper *sidecars;      /* one adapter per sidecar: all of its I/O */
	ev_timer timer;                /* decide's deadline */
	ev_timer pidtick;              /* the pid counter, looked at while a process is expected */
	int64_t pidtick_last;          /* when it was last looked at, or the watch (re)started */
	bool no_pidtick;               /* the counter cannot be read */
	ev_idle later;                 /* the decisions go on once a stop on its way is out */
	struct evlog log;
	ev_signal sigs[SIGNALS_MAX];
	size_t nsigs;
	pid_t own[OWN_PIDS_MAX];       /* drain: this process and its ancestors */
	size_t nown;
	bool blind;                    /* no other container of the pod is visible */
	bool can_kill;                 /* CAP_KILL */
	/*
	 * engine_decide is on the stack, or the engine is starting: an event is
	 * only taken, and decided on by the round under way (after the action
	 * that told it, decide_next is asked again) or the first one. Every
	 * scan and poll is one of decide's actions, carried out from
	 * engine_decide: its events are taken together, and decided on after it.
	 */
	bool deciding;
	bool finished;
	int exit_code;
	int scan_err;                  /* the last rescan's outcome: 0, or -errno (a look with holes) */
	struct jbuf summary;           /* built once, at the end */
};

int64_t engine_now(const struct engine *e)
{
	return e->world.clock();
}

static const char *sidecar_name(const struct engine *e, size_t k)
{
	return e->opt->sidecars[k].name;
}

/* ---- events ------------------------------------------------------------------- */

/* Every event, from whoever learnt of it, reaches decide here. */
static bool tell_at(struct engine *e, const struct decide_event *ev, int64_t when)
{
	bool taken = decide_event(e->d, ev, when);

	engine_decide(e);
	return taken;
}

bool engine_tell(struct engine *e, const struct decide_event *ev)
{
	return tell_at(e, ev, engine_now(e));
}

static void on_pod_event(void *data, const struct decide_event *ev, int64_t when)
{
	tell_at(data, ev, when);
}

static void on_sidecar_event(void *data, const struct decide_event *ev)
{
	engine_tell(data, ev);
}

/* ---- the pod -------------------------------------------------------------------- */

/* Its processes are all gone: so are its containers' roots, whose exit codes decide is to wait for. */
static void sidecar_gone(struct engine *e, size_t k)
{
	pod_check_sidecar(&e->pod, k);
	stopper_reports(&e->sidecars[k]);
	engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_SIDECAR_GONE, .sidecar = k });
}

/* A sidecar being collected whose processes are all gone, as of a fresh scan. */
static void confirm_stops(struct engine *e)
{
	struct decide_sidecar_view v;
	size_t k;

	for (k = 0; k < e->opt->nsidecars; k++) {
		struct stopper *st = &e->sidecars[k];

		if (!stopper_collecting(st))
			continue;
		decide_sidecar_view(e->d, k, &v);
		if (v.stage == DECIDE_SIDECAR_GONE)
			continue;
		stopper_collect(st);
		if (stopper_gone(st))
			sidecar_gone(e, k);
	}
}

/* How many processes are polled, for decide's clock. */
static void update_polling(struct engine *e)
{
	unsigned n = pod_polled(&e->pod);
	size_t i;

	for (i = 0; i < e->opt->nsidecars; i++)
		n += stopper_polled(&e->sidecars[i]);
	engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_POLLING, .count = n });
}

/*
 * DECIDE_RESCAN: rescans /proc (the containers pending since before
 * decide's limit classified by what they show) and reports the outcome,
 * whatever it is, to decide.
 */
static void rescan(struct engine *e, int64_t pending_before)
{
	int rc;

	pod_pending_over(&e->pod, pending_before);
	rc = e->scan_err = pod_refresh(&e->pod);
	if (rc == 0) {
		confirm_stops(e);
		update_polling(e);
		engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_CONTAINERS,
							     .count = pod_containers(&e->pod) });
	}
	engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_RESCANNED, .result = rc });
}

void engine_list(const struct engine *e)
{
	pod_list(&e->pod);
}

static void poll_watches(struct engine *e)
{
	size_t i;

	pod_poll(&e->pod);
	for (i = 0; i < e->opt->nsidecars; i++)
		stopper_poll(&e->sidecars[i]);
	update_polling(e);
}

/* A container of sidecar k appeared: its adapter looks at it (pre-flight). */
static void on_sidecar(void *data, size_t k, const struct podscan_container *c)
{
	struct engine *e = data;

	stopper_check(&e->sidecars[k], c);
}

/*
 * Every process a sidecar's adapter watched is gone: decide asks for one
 * more look, which shows whether something was forked meanwhile.
 */
static void on_sidecar_empty(void *data, size_t k)
{
	engine_tell(data, &(const struct decide_event){ .kind = DECIDE_EV_RESCAN_WANTED });
}

/* ---- carrying out --------------------------------------------------------------- */

static void stop_watch(struct engine *e, const struct decide_action *act)
{
	size_t k = act->sidecar;
	struct stopper *st = &e->sidecars[k];

	/* The processes are read from a look at /proc of this turn of the loop: decide's, or one it asks for now. */
	if (act->rescan_first)
		rescan(e, act->pending_before_us);
	if (!stopper_collecting(st))
		stopper_collect(st);
	update_polling(e);
	log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", sidecar_name(e, k)), LF_INT("processes", stopper_live(st))),
		"stopping sidecar");
	/* Gone only as of a look that worked; else the rescan decide retries confirms it. */
	if (!e->scan_err && stopper_gone(st))
		sidecar_gone(e, k);
}

static void signal_sidecar(struct engine *e, size_t k, int sig, bool all, bool first)
{
	/* The stop signal: what it will do to the main processes is read before it goes (microseconds). */
	int fate = first ? stopper_fate(&e->sidecars[k], sig) : DECIDE_FATE_NONE;
	unsigned sent = 0;
	int err = stopper_signal(&e->sidecars[k], sig, all, &sent);

	log_msg(err ? LOG_WARN : LOG_INFO,
		FIELDS(LF_STR("sidecar", sidecar_name(e, k)), LF_INT("processes", sent),
		       LF_STR("error", err ? strerror(-err) : NULL)),
		"sent SIG%s", signal_name(sig));
	engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_SIGNAL_RESULT, .sidecar = k, .result = err });
	if (fate != DECIDE_FATE_NONE && sent)
		engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_FATE, .sidecar = k, .result = fate });
}

/*
 * --on-sidecar-exit=fail: an app container stopped as the kubelet would;
 * its SIGKILL reaches every process of it, as a look at /proc of this turn
 * of the loop saw them (decide asks for one when it has none).
 */
static void signal_app(struct engine *e, const struct decide_action *act)
{
	unsigned sent = 0;
	int err;

	if (act->rescan_first)
		rescan(e, act->pending_before_us);
	err = pod_signal_app(&e->pod, act->app, act->signo, act->all, &sent);
	log_msg(err ? LOG_WARN : LOG_INFO,
		FIELDS(LF_INT("container", act->app), LF_INT("processes", sent),
		       LF_STR("error", err ? strerror(-err) : NULL)),
		"sent SIG%s to the app", signal_name(act->signo));
	engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_APP_SIGNAL_RESULT, .id = act->app,
						     .result = err });
}

static void start_request(struct engine *e, const struct decide_action *act)
{
	char err[RG_ERR_MAX] = "";
	int rc = stopper_request(&e->sidecars[act->sidecar], act->purpose, act->url, act->connect_timeout_us,
				 act->timeout_us, err, sizeof(err));

	if (rc < 0) {
		log_msg(LOG_ERROR,
			FIELDS(LF_STR("sidecar", sidecar_name(e, act->sidecar)), LF_STR("url", act->url),
			       LF_STR("error", err[0] ? err : strerror(-rc))),
			"cannot start an HTTP request");
		engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_HTTP_RESULT, .sidecar = act->sidecar,
							     .purpose = act->purpose, .result = rc });
	}
}

/* The drain began. */
static void apps_done(struct engine *e, const struct decide_action *act)
{
	size_t k;

	/* From here on the stop must not wait on a process stuck in the kernel. */
	podscan_names_only(e->pod.ps);
	/* decide asks that sidecars' exits be known before it decides their stops. */
	for (k = 0; act->check_exits && k < e->opt->nsidecars; k++)
		pod_check_sidecar(&e->pod, k);
	if (e->mode->apps_done)
		e->mode->apps_done(e, act);
}

static void written(struct engine *e, enum protocol_file file, enum decide_reason reason)
{
	int rc = e->mode->write ? e->mode->write(e, file, reason) : -ENOTSUP;

	engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_WRITTEN, .file = file, .result = rc });
}

/* The summary, built once at the end: done, the termination log and the last line say the same. */
const struct jbuf *engine_summary(struct engine *e)
{
	if (!e->summary.buf && !e->summary.failed) {
		jbuf_init(&e->summary);
		summary_build(&e->summary, e->d, e->opt, engine_now(e));
	}
	return &e->summary;
}

static void finish(struct engine *e, const struct decide_action *act)
{
	const struct jbuf *j;

	e->finished = true;
	e->exit_code = act->status >= 0 ? act->status : e->mode->failed_status;
	ev_break(e->loop, EVBREAK_ALL);
	/* An earlier run's summary is what the mode found; nothing new is said. */
	if (act->resumed) {
		if (e->mode->finish)
			e->mode->finish(e, act, NULL);
		return;
	}
	j = engine_summary(e);
	if (e->mode->finish)
		e->mode->finish(e, act, j->failed ? NULL : j);
	log_msg(LOG_INFO, FIELDS(LF_INT("exit_code", act->exit_code), LF_JSON("summary", j->failed ? "null" : j->buf)),
		"finished");
}

static void carry_out(struct engine *e, const struct decide_action *act)
{
	switch (act->kind) {
	case DECIDE_RESCAN:
		rescan(e, act->pending_before_us);
		break;
	case DECIDE_STATUS:
		pod_statuses(&e->pod);
		break;
	case DECIDE_POLL:
		poll_watches(e);
		break;
	case DECIDE_CATCHES:
		pod_catches(&e->pod, act->sidecar, act->signo);
		break;
	case DECIDE_APPS_DONE:
		apps_done(e, act);
		break;

	case DECIDE_WATCH:
		stop_watch(e, act);
		break;
	case DECIDE_SIGNAL:
		signal_sidecar(e, act->sidecar, act->signo, act->all, act->first);
		break;
	case DECIDE_SIGNAL_APP:
		signal_app(e, act);
		break;
	case DECIDE_HTTP:
		start_request(e, act);
		break;
	case DECIDE_WRITE:
		written(e, act->file, act->reason);
		break;
	case DECIDE_START_COMMAND:
		if (e->mode->start_command)
			e->mode->start_command(e);
		break;
	case DECIDE_EXIT:
		finish(e, act);
		break;
	}
}

static void arm_timer(struct engine *e)
{
	int64_t deadline, delay;

	ev_timer_stop(e->loop, &e->timer);
	if (!e->finished && !e->no_pidtick && decide_expects_process(e->d, engine_now(e))) {
		if (!ev_is_active(&e->pidtick)) {
			e->pidtick_last = engine_now(e);
			ev_timer_again(e->loop, &e->pidtick);
		}
	} else {
		ev_timer_stop(e->loop, &e->pidtick);
	}
	/* While a stop is on its way, the idle watcher brings the decisions back. */
	if (e->finished || ev_is_active(&e->later))
		return;
	deadline = decide_deadline(e->d, engine_now(e));
	if (deadline == INT64_MAX)
		return;
	/* libev measures from its cached loop time: bring it up to date first. */
	ev_now_update(e->loop);
	delay = deadline - engine_now(e);
	ev_timer_set(&e->timer, delay > 0 ? (double)delay / US_PER_S : 0., 0.);
	ev_timer_start(e->loop, &e->timer);
}

/*
 * Asks decide for actions and carries them out, until there is nothing to
 * do before its next deadline. An event reported while this runs (a
 * request that failed at once, a watch that found its process gone) is
 * decided on when decide is asked again, right after the action that told
 * it. After a stop request or signal the loop gets
 * the turn first, so that the stop is on the wire before the processes are
 * collected and the log lines are written.
 */
void engine_decide(struct engine *e)
{
	struct decide_action act;

	if (e->deciding)
		return;
	e->deciding = true;
	ev_idle_stop(e->loop, &e->later);
	while (!e->finished && decide_next(e->d, engine_now(e), &act)) {
		carry_out(e, &act);
		if (act.urgent && !e->finished) {
			ev_idle_start(e->loop, &e->later);
			break;
		}
	}
	e->deciding = false;
	arm_timer(e);
}

static void on_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
	engine_decide(t->data);
}

/*
 * A look at the pid counter: a container can start and end between two
 * rescans (a runtime's init, then `true`, within tens of milliseconds); a
 * pid handed out since the last rescan brings the next one forward. A look
 * that comes far later than its period is a stall (DECIDE_STALL_US): what
 * lived and died meanwhile may be gone unseen, and decide says so.
 */
static void on_pidtick(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct engine *e = t->data;
	int64_t now = engine_now(e), last = e->pidtick_last;
	int moved = pod_pids_moved(&e->pod);

	e->pidtick_last = now;
	if (now - last >= DECIDE_STALL_US)
		engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_STALLED, .age_us = now - last });

	if (moved < 0) {
		log_msg(LOG_DEBUG, FIELDS(LF_STR("error", strerror(-moved))),
			"cannot read the pid counter: rescans on their own clock only");
		e->no_pidtick = true;
		ev_timer_stop(loop, t);
		return;
	}
	if (moved)
		engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_PIDS_MOVED });
}

static void on_later(struct ev_loop *loop, ev_idle *w, int revents)
{
	engine_decide(w->data);
}

/* ---- signals -------------------------------------------------------------- */

static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
	struct engine *e = s->data;

	e->mode->signal(e, s->signum);
}

static void watch_signals(struct engine *e)
{
	size_t i;

	/* A mode takes signals only with an operation for them, and no more than there is room for. */
	assert(e->mode->nsignals <= SIGNALS_MAX);
	if (!e->mode->signal)
		return;
	for (i = 0; i < e->mode->nsignals; i++) {
		ev_signal_init(&e->sigs[i], on_signal, e->mode->signals[i]);
		e->sigs[i].data = e;
		ev_signal_start(e->loop, &e->sigs[i]);
	}
	e->nsigs = i;
}

/* The exit status is decided: no signal may replace it with 128 + N while the engine tears down. */
static void hold_signals(struct engine *e)
{
	int sigs[SIGNALS_MAX];
	size_t i;

	for (i = 0; i < e->nsigs; i++)
		sigs[i] = e->sigs[i].signum;
	sys_hold_signals(sigs, e->nsigs);
}

/* ---- start-up ----------------------------------------------------------- */

/* What decide is told of sidecar k, and what rearguard knows about its spec. */
static void configure_sidecar(struct engine *e, size_t k)
{
	const struct sidecar_spec *spec = &e->opt->sidecars[k];
	struct decide_sidecar_config *c = &e->sc_cfg[k];

	str_copy(c->name, spec->name, sizeof(c->name));
	/* An HTTP stop has no stop signal: SIGTERM is then the escalation, not a repeat. */
	c->stop_signal = spec->stop_url ? 0 : spec->stop_signal;
	c->stop_url = spec->stop_url;
	c->ready_url = spec->ready_url;
	c->drain_url = spec->drain_url;
	c->drain_time_us = spec->drain_time_ms * US_PER_MS;
	c->signal_all = spec->signal_all;
	c->optional = spec->detected;
	c->native = spec->native;
	c->exit_fix = spec_exit_fix(spec);
	c->confirm = e->blind ? CONFIRM_PORT : CONFIRM_PROCESSES;
}

/* What the specs themselves give away, said once the engine is to act on the pod. */
static void warn_specs(const struct engine *e)
{
	const char *warning;
	size_t k;

	for (k = 0; k < e->opt->nsidecars; k++)
		if ((warning = spec_warning(&e->opt->sidecars[k])))
			log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", e->opt->sidecars[k].name)), "%s", warning);
}

static int init_decide(struct engine *e)
{
	const struct agent_options *opt = e->opt;
	struct decide_config dc = {
		.policy = opt->policy,
		.apps_expected = (unsigned)opt->apps,
		.startup_timeout_us = opt->startup_timeout_ms * US_PER_MS,
		.restart_grace_us = opt->restart_grace_ms * US_PER_MS,
		.term_grace_us = opt->term_grace_ms * US_PER_MS,
		.stop_timeout_us = opt->stop_timeout_ms * US_PER_MS,
		.kill_after_us = opt->kill_after_ms * US_PER_MS,
		.ready_timeout_us = opt->ready_timeout_ms * US_PER_MS,
		.nsidecars = opt->nsidecars,
		.sidecars = e->sc_cfg,
		.sink = notes_log,
		.sink_data = &e->notes,
	};
	size_t k;

	for (k = 0; k < opt->nsidecars; k++)
		configure_sidecar(e, k);
	if (e->mode->configure)
		e->mode->configure(e, &dc);
	e->notes.dir = opt->dir;
	return decide_new(&dc, engine_now(e), &e->d);
}

/* Each sidecar's adapter, and its requests built now: when a stop is due, it only has to be sent. */
static int prepare_sidecars(struct engine *e)
{
	size_t k;
	int rc = http_new(e->loop, &e->http);

	if (rc < 0)
		return rc;
	for (k = 0; k < e->opt->nsidecars; k++) {
		struct stopper_config sc = {
			.loop = e->loop,
			.http = e->http,
			.ps = e->pod.ps,
			.spec = &e->opt->sidecars[k],
			.index = k,
			.in_own_container = e->mode->spare_self,
			.spare = e->own,
			.nspare = e->nown,
			.can_kill = e->can_kill,
			.dir = e->opt->dir,
			.sidecar_name = e->opt->sidecar_name,
			.on_event = on_sidecar_event,
			.on_empty = on_sidecar_empty,
			.data = e,
		};

		stopper_init(&e->sidecars[k], &sc);
	}
	/* libcurl's set-up takes milliseconds: after the first scan, never before a stop request. */
	for (k = 0; k < e->opt->nsidecars; k++) {
		char err[RG_ERR_MAX] = "";

		rc = stopper_prepare(&e->sidecars[k], err, sizeof(err));
		if (rc < 0) {
			log_msg(LOG_WARN,
				FIELDS(LF_STR("sidecar", sidecar_name(e, k)),
				       LF_STR("error", err[0] ? err : strerror(-rc))),
				"cannot set up libcurl yet: trying again at the first request");
			break;
		}
	}
	return 0;
}

/* The kubelet's restart of a native sidecar is known from the natives decide has listed. */
static bool native_restarted(void *data, const char *name, int64_t since)
{
	const struct engine *e = data;

	return e->d && decide_native_restarted(e->d, name, since);
}

/* The pod, as far as this process can see it; -errno (logged) when the engine cannot work in it. */
static int open_pod(struct engine *e)
{
	const struct agent_options *opt = e->opt;
	struct pod_config pc = {
		.loop = e->loop,
		.proc = e->world.proc,
		.self = e->world.self,
		.clock = e->world.clock,
		.sidecars = opt->sidecars,
		.nsidecars = opt->nsidecars,
		.detect = opt->detect,
		.app_re = opt->app_src ? &opt->app_re : NULL,
		.apps = e->mode->apps,
		.first = e->mode->first && e->mode->first(e),
		.native_restarted = native_restarted,
		.run_name = opt->run_name,
		.on_event = on_pod_event,
		.on_sidecar = on_sidecar,
		.data = e,
	};
	int rc = pod_open(&e->pod, &pc);

	if (rc == -ENXIO && e->mode->blind_ok) {
		log_warn("cannot see the pod's other containers (no shared PID namespace): a sidecar counts as "
			 "stopped once its stop URL answered 2xx and it no longer accepts connections");
		e->blind = true;
		return 0;
	}
	if (rc == -ENXIO)
		log_error("cannot see the pod's other containers: PID 1 is in rearguard's own container "
			  "(set shareProcessNamespace: true in the pod spec)");
	return rc;
}

static void cleanup(struct engine *e)
{
	size_t i;

	if (e->mode->close)
		e->mode->close(e);
	if (e->loop) {
		evlog_stop(&e->log);
		ev_idle_stop(e->loop, &e->later);
		ev_timer_stop(e->loop, &e->timer);
		ev_timer_stop(e->loop, &e->pidtick);
		for (i = 0; i < e->nsigs; i++)
			ev_signal_stop(e->loop, &e->sigs[i]);
	}
	for (i = 0; e->sidecars && i < e->opt->nsidecars; i++)
		stopper_free(&e->sidecars[i]);
	http_free(e->http);
	pod_close(&e->pod);
	free(e->sidecars);
	free(e->sc_cfg);
	jbuf_free(&e->summary);
	decide_free(e->d);
	if (e->loop)
		ev_loop_destroy(e->loop);
	/* The last lines (the summary among them) get a moment, not more, to reach a slow log. */
	log_finish(1000);
}

/* Everything up to the first decisions; false when the engine cannot work. */
static bool start(struct engine *e)
{
	const struct agent_options *opt = e->opt;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	/* A log line is never waited for, from the first one on. */
	rc = log_nonblocking();
	if (e->mode->hello)
		e->mode->hello(e);
	evlog_complain(rc);
	/* The default loop: the only one that reaps children (the wrapper's command). */
	e->loop = ev_default_loop(EVFLAG_AUTO);
	e->sc_cfg = calloc(opt->nsidecars + 1, sizeof(*e->sc_cfg));
	e->sidecars = calloc(opt->nsidecars + 1, sizeof(*e->sidecars));
	e->can_kill = sys_can_kill();
	if (!e->loop || !e->sc_cfg || !e->sidecars) {
		log_error("cannot start the event loop");
		return false;
	}
	ev_init(&e->timer, on_timer);
	e->timer.data = e;
	ev_init(&e->pidtick, on_pidtick);
	e->pidtick.repeat = PIDTICK_S;
	e->pidtick.data = e;
	ev_idle_init(&e->later, on_later);
	e->later.data = e;
	if (open_pod(e) < 0)
		return false;
	/* A drain may run in the sidecar's own container, under a shell: spare it and its ancestors. */
	if (e->mode->spare_self)
		e->nown = podscan_ancestors(e->pod.ps, e->world.self, e->own, OWN_PIDS_MAX);
	/* After the pod check: a pod the engine cannot work in leaves nothing behind. The decisions come after. */
	e->deciding = true;
	if (e->mode->open && e->mode->open(e) < 0)
		return false;
	if (init_decide(e) < 0) {
		log_error("out of memory");
		return false;
	}
	engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_CONTAINERS, .count = pod_containers(&e->pod) });
	/*
	 * An earlier run finished (the mode found its done file): the exit comes
	 * with the first decisions, the pod untouched.
	 */
	if (e->mode->resume && e->mode->resume(e)) {
		e->deciding = false;
		return true;
	}
	warn_specs(e);
	if (prepare_sidecars(e) < 0) {
		log_error("out of memory");
		return false;
	}
	if (e->mode->start)
		e->mode->start(e);
	pod_follow(&e->pod);
	update_polling(e);
	/* Reports found at start can be matched now that the pod is known. */
	engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_RESCANNED });
	e->deciding = false;
	watch_signals(e);
	/* From here on the log is written once per loop iteration. */
	evlog_start(&e->log, e->loop);
	return true;
}

int engine_open(struct engine **out, const struct engine_mode *mode, const struct agent_options *opt, void *data,
		const struct engine_world *world)
{
	struct engine *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (!e) {
		log_error("out of memory");
		return mode->failed_status;
	}
	e->mode = mode;
	e->data = data;
	e->opt = opt;
	if (world)
		e->world = *world;
	if (!e->world.clock)
		e->world.clock = mono_us;
	if (!e->world.self)
		e->world.self = getpid();
	e->exit_code = mode->failed_status;
	if (!start(e)) {
		int status = e->exit_code;

		cleanup(e);
		free(e);
		return status;
	}
	engine_decide(e);
	*out = e;
	return 0;
}

bool engine_finished(const struct engine *e)
{
	return e->finished;
}

int engine_close(struct engine *e)
{
	int status;

	hold_signals(e);
	/* decide chose the exit status; a loop that ended without it failed. */
	if (!e->finished)
		e->exit_code = e->mode->lost ? e->mode->lost(e) : 1;
	status = e->exit_code;
	cleanup(e);
	free(e);
	return status;
}

int engine_run(const struct engine_mode *mode, const struct agent_options *opt, void *data,
	       const struct engine_world *world)
{
	struct engine *e;
	int rc = engine_open(&e, mode, opt, data, world);

	if (!e)
		return rc;
	if (!engine_finished(e))
		ev_run(e->loop, 0);
	return engine_close(e);
}

/* ---- for the modes ------------------------------------------------------------ */

void *engine_data(const struct engine *e)
{
	return e->data;
}

const struct agent_options *engine_options(const struct engine *e)
{
	return e->opt;
}

struct ev_loop *engine_loop(const struct engine *e)
{
	return e->loop;
}
