#include "config.h"

#include "decide.h"

#include "log.h"
#include "parse.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Rescan cadence while new containers may still appear. */
#define RESCAN_SLOW_US (1 * US_PER_S)      /* --apps not given, or a restart is awaited */
#define RESCAN_FAST_US (100 * US_PER_MS)   /* fewer apps seen than expected (or none yet) */
#define RESCAN_PENDING_US (20 * US_PER_MS) /* a container has not exec'd its entrypoint yet */
/* How long the exit waits for app exit codes the kernel has not published yet. */
#define STATUS_WAIT_US (3 * US_PER_S)
/* After SIGKILL a process is gone within milliseconds unless the kernel is stuck. */
#define KILL_CONFIRM_MIN_US (1 * US_PER_S)

static const char *fmt_us(int64_t us, char buf[32])
{
	format_duration(us / US_PER_MS, buf);
	return buf;
}

int decide_init(struct decide *d, const struct decide_config *cfg, int64_t now)
{
	memset(d, 0, sizeof(*d));
	d->cfg = *cfg;
	d->started_us = now;
	d->last_rescan_us = now;
	d->sidecars = calloc(cfg->nsidecars ? cfg->nsidecars : 1, sizeof(*d->sidecars));
	return d->sidecars ? 0 : -ENOMEM;
}

void decide_free(struct decide *d)
{
	free(d->apps);
	free(d->reports);
	free(d->sidecars);
	memset(d, 0, sizeof(*d));
}

static struct decide_app *find_app(struct decide *d, unsigned id)
{
	size_t i;

	for (i = 0; i < d->napps; i++)
		if (d->apps[i].id == id)
			return &d->apps[i];
	return NULL;
}

static unsigned live_apps(const struct decide *d)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < d->napps; i++)
		n += !d->apps[i].superseded;
	return n;
}

/* OnFailure: an app that failed (or whose code is unknown) may be restarted in place. */
static bool awaiting_restart(const struct decide *d, const struct decide_app *a)
{
	return d->cfg.policy == POLICY_ON_FAILURE && a->exited && !a->superseded && !a->gave_up &&
	       a->code != 0 && a->code != DECIDE_CODE_PENDING && d->term_us == 0;
}

static bool app_finished(const struct decide *d, const struct decide_app *a)
{
	if (!a->exited)
		return false;
	if (d->cfg.policy == POLICY_NEVER)
		return true;
	if (a->code == DECIDE_CODE_PENDING)
		return false;
	/* Under deletion the kubelet restarts nothing. */
	return a->code == 0 || d->term_us != 0 || a->gave_up;
}

static bool fewer_than_expected(const struct decide *d)
{
	unsigned live = live_apps(d);

	return live == 0 || (d->cfg.apps_expected && live < d->cfg.apps_expected);
}

static struct decide_app *add_app(struct decide *d, unsigned id, const char *name, int64_t now)
{
	struct decide_app *a;

	if (d->napps == d->capapps) {
		size_t cap = d->capapps ? d->capapps * 2 : 8;

		a = realloc(d->apps, cap * sizeof(*a));
		if (!a) {
			log_error("out of memory: app %s not tracked", name);
			return NULL;
		}
		d->apps = a;
		d->capapps = cap;
	}
	a = &d->apps[d->napps++];
	memset(a, 0, sizeof(*a));
	a->id = id;
	str_copy(a->name, name, sizeof(a->name));
	a->code = DECIDE_CODE_PENDING;
	a->reported = -1;
	a->seen_us = now;
	return a;
}

void decide_app_seen(struct decide *d, unsigned id, const char *name, int64_t now)
{
	size_t i;

	if (find_app(d, id) || d->phase >= PHASE_DRAINING)
		return;
	if (d->cfg.policy == POLICY_ON_FAILURE) {
		/* A failed container coming back under a new cgroup: the same app, restarted. */
		for (i = 0; i < d->napps; i++) {
			struct decide_app *old = &d->apps[i];

			if (old->superseded || !old->exited || old->code == 0 || strcmp(old->name, name) != 0)
				continue;
			old->superseded = true;
			log_msg(LOG_INFO, FIELDS(LF_STR("app", name), LF_INT("container", id), LF_INT("replaces", old->id)),
				"app restarted: waiting for the new attempt");
			break;
		}
	}
	add_app(d, id, name, now);
}

void decide_app_exited(struct decide *d, unsigned id, int64_t now)
{
	struct decide_app *a = find_app(d, id);

	if (!a || a->exited)
		return;
	a->exited = true;
	a->exited_us = now;
}

/* Says why the sidecars stay, when a new code makes the app one that is expected back. */
static void note_restart_wait(struct decide *d, const struct decide_app *a, int64_t now)
{
	char grace[32];

	if (awaiting_restart(d, a))
		log_msg(LOG_INFO, FIELDS(LF_STR("app", a->name), LF_INT("container", a->id)),
			"app %s under restartPolicy OnFailure: keeping the sidecars for its restart (at most %s)",
			a->code == DECIDE_CODE_UNKNOWN ? "exit code unknown" : "failed",
			fmt_us(d->cfg.restart_grace_us - (now - a->exited_us), grace));
}

/* The kubelet restarts (or not) by the container's own exit code: that one decides. */
static void log_disagreement(const struct decide_app *a, int kernel)
{
	log_msg(LOG_WARN,
		FIELDS(LF_STR("app", a->name), LF_INT("container", a->id), LF_STR("report", a->report),
		       LF_INT("reported", a->reported), LF_INT("exit_code", kernel)),
		"the app's report and its container's exit code differ: acting on the container's");
}

void decide_app_status(struct decide *d, unsigned id, int code, int64_t now)
{
	struct decide_app *a = find_app(d, id);
	int before;

	if (!a)
		return;
	before = a->code;
	if (code >= 0) {
		if (a->reported >= 0 && a->reported != code)
			log_disagreement(a, code);
		a->code = code;
		a->kernel_code = true;
	} else if (a->reported < 0) {
		a->code = code;
	}
	if (a->code != before)
		note_restart_wait(d, a, now);
}

/* Which app a report is about (see decide.h); NULL: none yet. */
static struct decide_app *report_target(struct decide *d, const char *name)
{
	struct decide_app *only = NULL, *a;
	size_t i, unreported = 0;

	for (i = d->napps; i-- > 0;) {
		a = &d->apps[i];
		if (a->id && !a->superseded && (strcmp(a->name, name) == 0 || strcmp(a->reports_as, name) == 0))
			return a;
	}
	for (i = d->napps; i-- > 0;) {
		a = &d->apps[i];
		if (a->id && !a->superseded && strcmp(a->report, name) == 0)
			return a;
	}
	for (i = 0; i < d->napps; i++) {
		a = &d->apps[i];
		if (a->id && !a->superseded && !a->report[0]) {
			only = a;
			unreported++;
		}
	}
	if (unreported == 1)
		return only;
	for (i = d->napps; i-- > 0;) {
		a = &d->apps[i];
		if (!a->id && !a->superseded && strcmp(a->report, name) == 0)
			return a;
	}
	return NULL;
}

void decide_app_reports_as(struct decide *d, unsigned id, const char *name)
{
	struct decide_app *a = find_app(d, id);

	if (a)
		str_copy(a->reports_as, name, sizeof(a->reports_as));
}

static void match_report(struct decide *d, const char *name, int code, int64_t now)
{
	struct decide_app *a = report_target(d, name);
	int before;

	if (!a) {
		a = add_app(d, 0, name, now);
		if (!a)
			return;
		log_msg(LOG_INFO, FIELDS(LF_STR("report", name)),
			"apps/NAME matches no app container: counting it as an app of its own");
	}
	/* The same report read again (after an overflow, or written twice): nothing new. */
	if (a->reported == code && strcmp(a->report, name) == 0)
		return;
	before = a->code;
	str_copy(a->report, name, sizeof(a->report));
	a->reported = code;
	log_msg(LOG_INFO, FIELDS(LF_STR("app", a->name), LF_INT("container", a->id), LF_STR("report", name),
				 LF_INT("exit_code", code), LF_STR("running", a->exited ? NULL : "yes")),
		"app reported that it finished");
	if (!a->exited) {
		a->exited = true;
		a->exited_us = now;
	}
	if (a->kernel_code) {
		if (a->code != code)
			log_disagreement(a, a->code);
	} else {
		a->code = code;
	}
	if (a->code != before)
		note_restart_wait(d, a, now);
}

void decide_app_report(struct decide *d, const char *name, int code, int64_t now)
{
	struct decide_report *r;
	size_t i;

	if (d->phase == PHASE_DONE)
		return;
	/* Draining: nothing rescans any more; the report only completes the summary. */
	if (d->phase == PHASE_DRAINING) {
		match_report(d, name, code, now);
		return;
	}
	for (i = 0; i < d->nreports; i++) {
		if (strcmp(d->reports[i].name, name) == 0) {
			d->reports[i].code = code;
			return;
		}
	}
	if (d->nreports == d->capreports) {
		size_t cap = d->capreports ? d->capreports * 2 : 4;

		r = realloc(d->reports, cap * sizeof(*r));
		if (!r) {
			log_error("out of memory: report %s ignored", name);
			return;
		}
		d->reports = r;
		d->capreports = cap;
	}
	r = &d->reports[d->nreports++];
	str_copy(r->name, name, sizeof(r->name));
	r->code = code;
}

void decide_app_forget(struct decide *d, unsigned id)
{
	struct decide_app *a = find_app(d, id);

	if (!a)
		return;
	memmove(a, a + 1, (size_t)(d->apps + d->napps - a - 1) * sizeof(*a));
	d->napps--;
}

void decide_sidecar_seen(struct decide *d, size_t sidecar)
{
	if (sidecar < d->cfg.nsidecars)
		d->sidecars[sidecar].seen = true;
}

void decide_sidecar_gone(struct decide *d, size_t sidecar, int64_t now)
{
	struct decide_sidecar *sc;

	if (sidecar >= d->cfg.nsidecars)
		return;
	sc = &d->sidecars[sidecar];
	/* A failed sidecar stays failed: the stop was not ours. */
	if (sc->state == SC_GONE || sc->state == SC_UP || sc->state == SC_FAILED)
		return;
	sc->gone_from = sc->state;
	sc->state = SC_GONE;
	sc->gone_us = now;
}

void decide_signal_result(struct decide *d, size_t sidecar, int err, int64_t now)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[sidecar];
	struct decide_sidecar *sc = &d->sidecars[sidecar];

	/* ESRCH: it exited meanwhile; its watch reports that. */
	if (err == 0 || err == -ESRCH || sc->state == SC_GONE)
		return;
	sc->state = SC_FAILED;
	sc->err = err;
	if (err == -EPERM)
		log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", cfg->name), LF_STR("signal", signal_name(sc->last_signal))),
			"not permitted to signal the sidecar: run rearguard with the sidecar's uid "
			"(securityContext.runAsUser) or add the KILL capability");
	else
		log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", cfg->name), LF_STR("error", strerror(-err))),
			"cannot signal the sidecar");
}

void decide_pending(struct decide *d, unsigned n)
{
	d->pending_containers = n;
}

void decide_rescanned(struct decide *d, int64_t now)
{
	size_t i;

	d->last_rescan_us = now;
	if (d->phase == PHASE_CONFIRMING)
		d->confirmed = true;
	for (i = 0; i < d->nreports; i++)
		match_report(d, d->reports[i].name, d->reports[i].code, now);
	d->nreports = 0;
}

void decide_terminate(struct decide *d, int64_t now)
{
	char grace[32];

	if (d->phase >= PHASE_DRAINING) {
		log_info("signal received: already draining");
		return;
	}
	if (d->term_us) {
		decide_drain_now(d, "second-signal", now);
		return;
	}
	d->term_us = now;
	log_info("termination requested: keeping the sidecars until the apps exit, at most %s "
		 "(a second signal drains at once)", fmt_us(d->cfg.term_grace_us, grace));
}

void decide_drain_now(struct decide *d, const char *reason, int64_t now)
{
	if (d->phase >= PHASE_DRAINING || d->drain_requested)
		return;
	d->drain_requested = true;
	d->drain_reason = reason;
}

/* OnFailure apps that did not come back within --restart-grace are done. */
static void expire_restart_grace(struct decide *d, int64_t now)
{
	char grace[32];
	size_t i;

	for (i = 0; i < d->napps; i++) {
		struct decide_app *a = &d->apps[i];

		if (!awaiting_restart(d, a) || now < a->exited_us + d->cfg.restart_grace_us)
			continue;
		a->gave_up = true;
		log_msg(LOG_WARN, FIELDS(LF_STR("app", a->name), LF_INT("container", a->id)),
			"app did not come back within --restart-grace %s: treating it as done",
			fmt_us(d->cfg.restart_grace_us, grace));
	}
}

/* Why the apps are done, or NULL while they are not. */
static const char *conclusion(struct decide *d, int64_t now)
{
	bool all = true;
	size_t i;

	if (d->drain_requested)
		return d->drain_reason;
	if (d->term_us && now >= d->term_us + d->cfg.term_grace_us)
		return "term-grace";
	for (i = 0; i < d->napps; i++)
		if (!d->apps[i].superseded && !app_finished(d, &d->apps[i]))
			all = false;
	if (fewer_than_expected(d)) {
		/* Only when the apps that did appear are all finished: a running one still needs the proxy. */
		if (all && now >= d->started_us + d->cfg.startup_timeout_us)
			return "startup-timeout";
		return NULL;
	}
	return all ? "apps-done" : NULL;
}

static int64_t rescan_interval(const struct decide *d)
{
	size_t i;

	if (d->pending_containers)
		return RESCAN_PENDING_US;
	if (fewer_than_expected(d))
		return RESCAN_FAST_US;
	if (!d->cfg.apps_expected)
		return RESCAN_SLOW_US;
	for (i = 0; i < d->napps; i++)
		if (awaiting_restart(d, &d->apps[i]))
			return RESCAN_SLOW_US;
	return 0;
}

static void log_drain_start(struct decide *d, const char *reason, int64_t now)
{
	char dur[32];
	unsigned live = live_apps(d);

	if (strcmp(reason, "startup-timeout") == 0)
		log_msg(LOG_ERROR, FIELDS(LF_STR("reason", reason), LF_INT("apps_seen", live)),
			"%s within --startup-timeout %s: draining the sidecars",
			live ? "fewer app containers than --apps appeared" : "no app container appeared",
			fmt_us(d->cfg.startup_timeout_us, dur));
	else if (strcmp(reason, "term-grace") == 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("reason", reason)),
			"apps still running %s after the termination request: draining the sidecars",
			fmt_us(d->cfg.term_grace_us, dur));
	else
		log_msg(LOG_INFO, FIELDS(LF_STR("reason", reason), LF_INT("apps", live)),
			"apps done: draining the sidecars");
}

static bool drain_step(struct decide *d, int64_t now, struct decide_action *act)
{
	char dur[32], dur2[32];
	size_t i;

	while (d->current > 0) {
		size_t k = d->current - 1;
		struct decide_sidecar *sc = &d->sidecars[k];
		const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];

		act->sidecar = k;
		switch (sc->state) {
		case SC_UP:
			sc->state = SC_WATCHING;
			act->kind = DECIDE_WATCH;
			return true;
		case SC_WATCHING:
			sc->state = SC_STOPPING;
			sc->stop_sent_us = now;
			sc->deadline_us = now + d->cfg.stop_timeout_us;
			sc->last_signal = cfg->stop_signal;
			act->kind = DECIDE_SIGNAL;
			act->signo = cfg->stop_signal;
			return true;
		case SC_STOPPING:
			if (now < sc->deadline_us)
				return false;
			sc->state = SC_TERMINATING;
			sc->deadline_us = now + d->cfg.kill_after_us;
			if (cfg->stop_signal == SIGTERM) {
				/* It has had its SIGTERM: a second one would only rush a drain. */
				log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name)),
					"still running %s after SIGTERM: SIGKILL in %s",
					fmt_us(d->cfg.stop_timeout_us, dur), fmt_us(d->cfg.kill_after_us, dur2));
				continue;
			}
			log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name)),
				"still running %s after the stop request: sending SIGTERM",
				fmt_us(d->cfg.stop_timeout_us, dur));
			sc->last_signal = SIGTERM;
			act->kind = DECIDE_SIGNAL;
			act->signo = SIGTERM;
			return true;
		case SC_TERMINATING:
			if (now < sc->deadline_us)
				return false;
			sc->state = SC_KILLING;
			sc->deadline_us = now + (d->cfg.kill_after_us > KILL_CONFIRM_MIN_US ? d->cfg.kill_after_us
											   : KILL_CONFIRM_MIN_US);
			sc->last_signal = SIGKILL;
			log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name)), "still running after SIGTERM: sending SIGKILL");
			act->kind = DECIDE_SIGNAL;
			act->signo = SIGKILL;
			return true;
		case SC_KILLING:
			if (now < sc->deadline_us)
				return false;
			sc->state = SC_FAILED;
			sc->err = -ETIMEDOUT;
			log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", cfg->name)),
				"still running after SIGKILL (stuck in the kernel?): giving up on it");
			d->current--;
			continue;
		case SC_GONE:
		case SC_FAILED:
			d->current--;
			continue;
		}
	}
	/*
	 * Every sidecar is settled. An app's exit code may still be on its way
	 * (the kernel publishes it once the shim reaps): the summary is worth a
	 * short wait.
	 */
	if (!d->settled_us)
		d->settled_us = now;
	for (i = 0; i < d->napps; i++)
		if (d->apps[i].exited && d->apps[i].code == DECIDE_CODE_PENDING && now < d->settled_us + STATUS_WAIT_US)
			return false;
	d->phase = PHASE_DONE;
	d->exit_code = 0;
	for (i = 0; i < d->cfg.nsidecars; i++)
		if (d->sidecars[i].state == SC_FAILED)
			d->exit_code = 1;
	act->kind = DECIDE_EXIT;
	act->exit_code = d->exit_code;
	return true;
}

bool decide_next(struct decide *d, int64_t now, struct decide_action *act)
{
	const char *reason;
	int64_t every;

	memset(act, 0, sizeof(*act));
	switch (d->phase) {
	case PHASE_WATCHING:
	case PHASE_CONFIRMING:
		/* A report names a container that may have started since the last scan. */
		if (d->nreports) {
			act->kind = DECIDE_RESCAN;
			return true;
		}
		expire_restart_grace(d, now);
		reason = conclusion(d, now);
		if (!reason) {
			d->phase = PHASE_WATCHING;
			d->confirmed = false;
			every = rescan_interval(d);
			if (every && now >= d->last_rescan_us + every) {
				act->kind = DECIDE_RESCAN;
				return true;
			}
			return false;
		}
		/* The kubelet starts containers one by one: look once more before concluding. */
		if (strcmp(reason, "apps-done") == 0 && !d->confirmed) {
			d->phase = PHASE_CONFIRMING;
			act->kind = DECIDE_RESCAN;
			return true;
		}
		d->phase = PHASE_DRAINING;
		d->decided_us = now;
		d->reason = reason;
		d->current = d->cfg.nsidecars;
		log_drain_start(d, reason, now);
		act->kind = DECIDE_APPS_DONE;
		act->reason = reason;
		return true;
	case PHASE_DRAINING:
		return drain_step(d, now, act);
	case PHASE_DONE:
		break;
	}
	return false;
}

int64_t decide_deadline(const struct decide *d, int64_t now)
{
	int64_t t = INT64_MAX, every;
	size_t i;

	switch (d->phase) {
	case PHASE_WATCHING:
	case PHASE_CONFIRMING:
		if (d->nreports)
			return now;
		if (fewer_than_expected(d))
			t = d->started_us + d->cfg.startup_timeout_us;
		for (i = 0; i < d->napps; i++)
			if (awaiting_restart(d, &d->apps[i]) && d->apps[i].exited_us + d->cfg.restart_grace_us < t)
				t = d->apps[i].exited_us + d->cfg.restart_grace_us;
		if (d->term_us && d->term_us + d->cfg.term_grace_us < t)
			t = d->term_us + d->cfg.term_grace_us;
		every = rescan_interval(d);
		if (every && d->last_rescan_us + every < t)
			t = d->last_rescan_us + every;
		break;
	case PHASE_DRAINING:
		if (d->current > 0) {
			const struct decide_sidecar *sc = &d->sidecars[d->current - 1];

			if (sc->state == SC_STOPPING || sc->state == SC_TERMINATING || sc->state == SC_KILLING)
				t = sc->deadline_us;
		} else if (d->settled_us) {
			t = d->settled_us + STATUS_WAIT_US;
		}
		break;
	case PHASE_DONE:
		break;
	}
	return t;
}

const char *decide_outcome(const struct decide_sidecar *sc)
{
	switch (sc->state) {
	case SC_GONE:
		switch (sc->gone_from) {
		case SC_STOPPING: return "stopped";
		case SC_TERMINATING: return "terminated";
		case SC_KILLING: return "killed";
		default: return sc->seen ? "exited-before-stop" : "not-found";
		}
	case SC_FAILED:
		return sc->err == -EPERM ? "not-permitted" : "still-running";
	default:
		return "running";
	}
}

size_t decide_app_count(const struct decide *d)
{
	return d->napps;
}
