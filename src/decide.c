#include "config.h"

#include "decide.h"

#include "log.h"
#include "parse.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
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
/* Readiness polls: at once, then backing off to the pace of pilot-agent wait. */
#define READY_POLL_FIRST_US (50 * US_PER_MS)
#define READY_POLL_MAX_US (500 * US_PER_MS)
#define READY_REQUEST_US (1 * US_PER_S)
/* On loopback a connect succeeds or is refused at once: a timeout means dropped packets. */
#define CONNECT_TIMEOUT_US (1 * US_PER_S)
/* A drain or stop request gets this long; a failed stop is retried while --stop-timeout lasts. */
#define STOP_REQUEST_US (5 * US_PER_S)
#define STOP_RETRY_FIRST_US (100 * US_PER_MS)
#define STOP_RETRY_MAX_US (2 * US_PER_S)
/* Without visible processes: how often to look whether the sidecar still accepts connections. */
#define GONE_PROBE_FIRST_US (20 * US_PER_MS)
#define GONE_PROBE_MAX_US (500 * US_PER_MS)

static const char *fmt_us(int64_t us, char buf[32])
{
	format_duration(us / US_PER_MS, buf);
	return buf;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static bool is_2xx(int result)
{
	return result >= 200 && result < 300;
}

/* A 4xx is the endpoint saying no: asking again will not change that (408 and 429 may). */
static bool is_refusal(int result)
{
	return result >= 400 && result < 500 && result != 408 && result != 429;
}

/* "answered 503", "connection refused", ... */
static const char *describe(int result, char buf[64])
{
	if (result > 0)
		snprintf(buf, 64, "answered %d", result);
	else if (result == 0)
		snprintf(buf, 64, "connected");
	else if (result == -ECONNREFUSED)
		snprintf(buf, 64, "connection refused");
	else if (result == -ETIMEDOUT)
		snprintf(buf, 64, "timed out");
	else if (result == -ECONNRESET)
		snprintf(buf, 64, "closed without an answer");
	else
		snprintf(buf, 64, "failed: %s", strerror(-result));
	return buf;
}

int decide_init(struct decide *d, const struct decide_config *cfg, int64_t now)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	d->cfg = *cfg;
	d->started_us = now;
	d->last_rescan_us = now;
	d->sidecars = calloc(cfg->nsidecars ? cfg->nsidecars : 1, sizeof(*d->sidecars));
	if (!d->sidecars)
		return -ENOMEM;
	for (i = 0; i < cfg->nsidecars; i++) {
		d->sidecars[i].ready_next_us = now;
		d->sidecars[i].ready_backoff_us = READY_POLL_FIRST_US;
		d->sidecars[i].retry_us = INT64_MAX;
	}
	return 0;
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

static void mark_ready(struct decide *d, size_t k, int64_t now)
{
	struct decide_sidecar *sc = &d->sidecars[k];

	sc->ready = true;
	sc->ready_us = now;
	log_msg(LOG_INFO,
		FIELDS(LF_STR("sidecar", d->cfg.sidecars[k].name), LF_MS("after", now - d->started_us),
		       LF_INT("polls", sc->ready_polls)),
		"sidecar ready%s", d->cfg.sidecars[k].ready_url ? "" : " (no ready URL: its process is running)");
}

/* Keeps the result of the last drain or stop request for the summary. */
static void note_status(struct decide_sidecar *sc, int result)
{
	if (sc->requests > 0 && sc->requests <= DECIDE_STATUSES_MAX)
		sc->statuses[sc->requests - 1] = result;
}

static void http_stop_result(struct decide *d, size_t k, int result, int64_t now)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct decide_sidecar *sc = &d->sidecars[k];
	char what[64], dur[32];

	if (sc->state != SC_STOPPING || sc->stop_accepted || sc->stop_refused)
		return;
	if (is_2xx(result)) {
		sc->stop_accepted = true;
		if (d->blind) {
			/* Nothing to watch: look at the door instead. */
			sc->retry_us = now;
			sc->backoff_us = GONE_PROBE_FIRST_US;
			log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", cfg->name)),
				"stop request %s: waiting for it to stop accepting connections (--stop-timeout %s)",
				describe(result, what), fmt_us(d->cfg.stop_timeout_us, dur));
		} else {
			log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", cfg->name)),
				"stop request %s: waiting for its processes to exit (--stop-timeout %s)",
				describe(result, what), fmt_us(d->cfg.stop_timeout_us, dur));
		}
		return;
	}
	if (is_refusal(result)) {
		sc->stop_refused = true;
		if (d->blind)
			log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", cfg->name)),
				"stop endpoint %s, and without a shared PID namespace no signal can be sent: "
				"giving up on it", describe(result, what));
		else
			log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name)),
				"stop endpoint %s: falling back to SIGTERM", describe(result, what));
		return;
	}
	if (now + sc->backoff_us >= sc->deadline_us) {
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name)),
			"stop request %s: no time left for another try within --stop-timeout", describe(result, what));
		return;
	}
	sc->retry_us = now + sc->backoff_us;
	log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", cfg->name), LF_INT("attempt", sc->requests)),
		"stop request %s: trying again in %s", describe(result, what), fmt_us(sc->backoff_us, dur));
	sc->backoff_us = min64(sc->backoff_us * 2, STOP_RETRY_MAX_US);
}

void decide_http_result(struct decide *d, size_t sidecar, enum decide_http_purpose purpose, int result, int64_t now)
{
	const struct decide_sidecar_config *cfg;
	struct decide_sidecar *sc;
	char what[64], dur[32];

	if (sidecar >= d->cfg.nsidecars)
		return;
	cfg = &d->cfg.sidecars[sidecar];
	sc = &d->sidecars[sidecar];
	switch (purpose) {
	case DECIDE_HTTP_READY:
		sc->ready_inflight = false;
		sc->ready_last = result;
		if (sc->ready || d->phase >= PHASE_DRAINING || d->ready_expired)
			return;
		if (is_2xx(result)) {
			mark_ready(d, sidecar, now);
			return;
		}
		sc->ready_next_us = now + sc->ready_backoff_us;
		log_msg(LOG_DEBUG, FIELDS(LF_STR("sidecar", cfg->name)), "not ready yet (%s): next poll in %s",
			describe(result, what), fmt_us(sc->ready_backoff_us, dur));
		sc->ready_backoff_us = min64(sc->ready_backoff_us * 2, READY_POLL_MAX_US);
		return;
	case DECIDE_HTTP_DRAIN:
		sc->http_inflight = false;
		note_status(sc, result);
		if (sc->state != SC_DRAINING)
			return;
		if (is_2xx(result)) {
			sc->deadline_us = now + cfg->drain_time_us;
			if (cfg->drain_time_us)
				log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", cfg->name)),
					"drain request %s: the stop request follows after drain-time %s",
					describe(result, what), fmt_us(cfg->drain_time_us, dur));
		} else {
			sc->deadline_us = now;
			log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name)),
				"drain request %s: going on with the stop request", describe(result, what));
		}
		return;
	case DECIDE_HTTP_STOP:
		sc->http_inflight = false;
		note_status(sc, result);
		http_stop_result(d, sidecar, result, now);
		return;
	case DECIDE_HTTP_GONE:
		sc->http_inflight = false;
		if (sc->state != SC_STOPPING)
			return;
		if (result == -ECONNREFUSED) {
			log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", cfg->name)),
				"sidecar no longer accepts connections: stopped");
			decide_sidecar_gone(d, sidecar, now);
			return;
		}
		sc->retry_us = now + sc->backoff_us;
		sc->backoff_us = min64(sc->backoff_us * 2, GONE_PROBE_MAX_US);
		return;
	}
}

void decide_blind(struct decide *d)
{
	d->blind = true;
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

bool decide_drain_now(struct decide *d, const char *reason, int64_t now)
{
	if (d->phase >= PHASE_DRAINING || d->drain_requested)
		return false;
	d->drain_requested = true;
	d->drain_reason = reason;
	return true;
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

static bool readiness_pending(const struct decide *d)
{
	return d->cfg.readiness && !d->ready_written && !d->ready_expired && d->phase < PHASE_DRAINING;
}

/* A sidecar without a ready URL is ready when its process shows up: rescans find it. */
static bool awaiting_sidecar_process(const struct decide *d)
{
	size_t i;

	if (!readiness_pending(d))
		return false;
	for (i = 0; i < d->cfg.nsidecars; i++)
		if (!d->cfg.sidecars[i].ready_url && !d->sidecars[i].seen)
			return true;
	return false;
}

static void log_ready_timeout(struct decide *d)
{
	char list[512] = "", what[64], dur[32];
	size_t i, n = 0;

	for (i = 0; i < d->cfg.nsidecars; i++) {
		const struct decide_sidecar *sc = &d->sidecars[i];

		if (sc->ready || n >= sizeof(list) - 1)
			continue;
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s (%s)", n ? ", " : "", d->cfg.sidecars[i].name,
				      !d->cfg.sidecars[i].ready_url ? "no process seen"
				      : sc->ready_last ? describe(sc->ready_last, what) : "no answer yet");
	}
	log_msg(LOG_ERROR, FIELDS(LF_STR("not_ready", list)),
		"sidecars not ready within --ready-timeout %s: the ready file will not be written; "
		"still watching the apps", fmt_us(d->cfg.ready_timeout_us, dur));
}

/* Readiness: polls that are due, sidecars seen, the ready file, --ready-timeout. */
static bool readiness_step(struct decide *d, int64_t now, struct decide_action *act)
{
	bool all = true;
	size_t i;

	if (!readiness_pending(d))
		return false;
	for (i = 0; i < d->cfg.nsidecars; i++)
		if (!d->sidecars[i].ready && !d->cfg.sidecars[i].ready_url && d->sidecars[i].seen)
			mark_ready(d, i, now);
	for (i = 0; i < d->cfg.nsidecars; i++)
		all &= d->sidecars[i].ready;
	if (all) {
		d->ready_written = true;
		log_info("every sidecar is ready: writing the ready file");
		act->kind = DECIDE_WRITE_READY;
		return true;
	}
	if (now >= d->started_us + d->cfg.ready_timeout_us) {
		d->ready_expired = true;
		log_ready_timeout(d);
		return false;
	}
	for (i = 0; i < d->cfg.nsidecars; i++) {
		struct decide_sidecar *sc = &d->sidecars[i];

		if (sc->ready || sc->ready_inflight || !d->cfg.sidecars[i].ready_url || now < sc->ready_next_us)
			continue;
		sc->ready_inflight = true;
		sc->ready_polls++;
		act->kind = DECIDE_HTTP;
		act->sidecar = i;
		act->purpose = DECIDE_HTTP_READY;
		act->url = d->cfg.sidecars[i].ready_url;
		act->connect_timeout_us = CONNECT_TIMEOUT_US;
		act->timeout_us = READY_REQUEST_US;
		return true;
	}
	return false;
}

static int64_t readiness_deadline(const struct decide *d)
{
	int64_t t;
	size_t i;

	if (!readiness_pending(d))
		return INT64_MAX;
	t = d->started_us + d->cfg.ready_timeout_us;
	for (i = 0; i < d->cfg.nsidecars; i++) {
		const struct decide_sidecar *sc = &d->sidecars[i];

		if (d->cfg.sidecars[i].ready_url && !sc->ready && !sc->ready_inflight)
			t = min64(t, sc->ready_next_us);
	}
	return t;
}

static int64_t rescan_interval(const struct decide *d)
{
	size_t i;

	if (d->pending_containers)
		return RESCAN_PENDING_US;
	if (fewer_than_expected(d) || awaiting_sidecar_process(d))
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
	else if (strcmp(reason, "apps-done") == 0)
		log_msg(LOG_INFO, FIELDS(LF_STR("reason", reason), LF_INT("apps", live)),
			"apps done: draining the sidecars");
	else
		log_msg(LOG_INFO, FIELDS(LF_STR("reason", reason), LF_INT("apps", live)),
			"drain requested: draining the sidecars");
}

static void http_action(struct decide *d, size_t k, enum decide_http_purpose purpose, const char *url,
			int64_t timeout_us, struct decide_action *act)
{
	struct decide_sidecar *sc = &d->sidecars[k];

	sc->http_inflight = true;
	if (purpose == DECIDE_HTTP_DRAIN || purpose == DECIDE_HTTP_STOP)
		sc->requests++;
	act->kind = DECIDE_HTTP;
	act->sidecar = k;
	act->purpose = purpose;
	act->url = url;
	act->connect_timeout_us = CONNECT_TIMEOUT_US;
	act->timeout_us = timeout_us > 0 ? timeout_us : 1;
}

/* The stop request: a POST (retried later when it fails) or the stop signal. */
static void start_stop(struct decide *d, size_t k, int64_t now, struct decide_action *act)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct decide_sidecar *sc = &d->sidecars[k];

	sc->state = SC_STOPPING;
	sc->stop_sent_us = now;
	sc->deadline_us = now + d->cfg.stop_timeout_us;
	act->sidecar = k;
	if (cfg->stop_url) {
		sc->backoff_us = STOP_RETRY_FIRST_US;
		sc->retry_us = INT64_MAX;
		http_action(d, k, DECIDE_HTTP_STOP, cfg->stop_url, min64(STOP_REQUEST_US, d->cfg.stop_timeout_us), act);
		return;
	}
	sc->last_signal = cfg->stop_signal;
	act->kind = DECIDE_SIGNAL;
	act->signo = cfg->stop_signal;
}

/* While the stop is under way: the stop request's retries, then (blind) the probes. */
static bool stopping_http(struct decide *d, size_t k, int64_t now, struct decide_action *act)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct decide_sidecar *sc = &d->sidecars[k];

	if (sc->http_inflight || now < sc->retry_us)
		return false;
	sc->retry_us = INT64_MAX;
	if (!sc->stop_accepted) {
		http_action(d, k, DECIDE_HTTP_STOP, cfg->stop_url, min64(STOP_REQUEST_US, sc->deadline_us - now), act);
		return true;
	}
	/* Blind: refused connections on the ready URL (else the stop URL) mean it is gone. */
	http_action(d, k, DECIDE_HTTP_GONE, cfg->ready_url ? cfg->ready_url : cfg->stop_url,
		    min64(CONNECT_TIMEOUT_US, sc->deadline_us - now), act);
	return true;
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
			if (d->blind)
				continue; /* nothing to watch */
			act->kind = DECIDE_WATCH;
			return true;
		case SC_WATCHING:
			if (d->blind && !cfg->stop_url) {
				sc->state = SC_FAILED;
				sc->err = -ENXIO;
				log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", cfg->name)),
					"cannot stop the sidecar with a signal: its processes are not visible "
					"(the pod needs shareProcessNamespace: true)");
				continue;
			}
			if (cfg->drain_url) {
				sc->state = SC_DRAINING;
				http_action(d, k, DECIDE_HTTP_DRAIN, cfg->drain_url, STOP_REQUEST_US, act);
				return true;
			}
			start_stop(d, k, now, act);
			return true;
		case SC_DRAINING:
			if (sc->http_inflight || now < sc->deadline_us)
				return false;
			start_stop(d, k, now, act);
			return true;
		case SC_STOPPING:
			if (sc->stop_refused && d->blind) {
				sc->state = SC_FAILED;
				sc->err = -EACCES;
				continue;
			}
			if (sc->stop_refused) {
				sc->state = SC_TERMINATING;
				sc->deadline_us = now + d->cfg.kill_after_us;
				sc->last_signal = SIGTERM;
				act->kind = DECIDE_SIGNAL;
				act->signo = SIGTERM;
				return true;
			}
			if (now < sc->deadline_us)
				return cfg->stop_url && stopping_http(d, k, now, act);
			if (d->blind) {
				sc->state = SC_FAILED;
				sc->err = -ETIMEDOUT;
				log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", cfg->name)),
					"%s within --stop-timeout %s, and without a shared PID namespace no signal can "
					"be sent: giving up on it",
					sc->stop_accepted ? "still accepting connections" : "the stop request was not accepted",
					fmt_us(d->cfg.stop_timeout_us, dur));
				continue;
			}
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
	/* So may a stop request's answer: a proxy answers, exits, and its exit can be seen first. */
	for (i = 0; i < d->cfg.nsidecars; i++)
		if (d->sidecars[i].http_inflight && now < d->settled_us + STATUS_WAIT_US)
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
			/* Readiness matters only while the apps may still need the sidecars. */
			if (readiness_step(d, now, act))
				return true;
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
		t = min64(t, readiness_deadline(d));
		break;
	case PHASE_DRAINING:
		if (d->current > 0) {
			const struct decide_sidecar *sc = &d->sidecars[d->current - 1];

			if (sc->state == SC_STOPPING || sc->state == SC_TERMINATING || sc->state == SC_KILLING)
				t = sc->deadline_us;
			if (sc->state == SC_DRAINING && !sc->http_inflight)
				t = sc->deadline_us;
			if (sc->state == SC_STOPPING && !sc->http_inflight)
				t = min64(t, sc->retry_us);
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
		case SC_DRAINING:
		case SC_STOPPING: return "stopped";
		case SC_TERMINATING: return "terminated";
		case SC_KILLING: return "killed";
		default: return sc->seen ? "exited-before-stop" : "not-found";
		}
	case SC_FAILED:
		switch (sc->err) {
		case -EPERM: return "not-permitted";
		case -ENXIO: return "not-visible";
		case -EACCES: return "stop-refused";
		default: return "still-running";
		}
	default:
		return "running";
	}
}

size_t decide_app_count(const struct decide *d)
{
	return d->napps;
}
