#include "config.h"

#include "decide-private.h"

#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Rescans, while a new container may still appear. Each is one readdir of
 * /proc (about 0.05 ms in a small pod), so fast enough to catch a container
 * that lives 200 ms costs little.
 */
#define RESCAN_FAST_US (100 * US_PER_MS)   /* a container is expected */
#define RESCAN_SLOW_US (1 * US_PER_S)      /* --apps not given, after start-up */
#define RESCAN_PENDING_US (20 * US_PER_MS) /* a container has not exec'd its entrypoint yet */
#define RESCAN_RETRY_US (100 * US_PER_MS)  /* after a rescan that failed */
/* Without --apps, start-up lasts this long, and this long after each new app container. */
#define STARTUP_WINDOW_US (30 * US_PER_S)
#define CONTAINER_WINDOW_US (10 * US_PER_S)
/*
 * Exit statuses: the kernel publishes one once the runtime's shim reaped
 * the process, usually within a millisecond or two of the exit.
 */
#define STATUS_FIRST_US (1 * US_PER_MS)
#define STATUS_MAX_US (128 * US_PER_MS)
#define STATUS_GIVE_UP_US (2 * US_PER_S)
/* How long the exit waits for app exit codes and stop answers still on their way. */
#define STATUS_WAIT_US (3 * US_PER_S)
/* Processes without a pidfd are looked at this often. */
#define POLL_US (100 * US_PER_MS)
/* After SIGKILL a process is gone within milliseconds unless the kernel is stuck. */
#define KILL_CONFIRM_MIN_US (1 * US_PER_S)
/* A signal that failed for want of resources (EMFILE, ENOMEM) is sent again after this. */
#define SIGNAL_RETRY_US (100 * US_PER_MS)
/* A sidecar seen this recently may not have installed its stop signal's handler: waited for this long at most. */
#define CATCH_WAIT_US (2 * US_PER_S)
#define CATCH_CHECK_US (20 * US_PER_MS)
/*
 * Readiness polls: every 50 ms while a proxy's start is plausible (its first
 * seconds), then backing off to the pace of pilot-agent wait.
 */
#define READY_POLL_FAST_US (50 * US_PER_MS)
#define READY_FAST_WINDOW_US (30 * US_PER_S)
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
/* Files of the protocol that could not be written are tried again; done not for ever. */
#define WRITE_RETRY_FIRST_US (50 * US_PER_MS)
#define WRITE_RETRY_MAX_US (1 * US_PER_S)
#define DONE_GIVE_UP_US (10 * US_PER_S)

static const char *const file_names[DECIDE_NFILES] = { "ready", "apps-done", "done" };

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

/* ---- notes ---------------------------------------------------------------- */

/* Hands a note to the sink: decide's only way of saying anything. */
static void say(const struct decide *d, const struct decide_note *n)
{
	if (d->cfg.sink)
		d->cfg.sink(d->cfg.sink_data, n);
}

#define SAY(d, ...) say((d), &(const struct decide_note){ __VA_ARGS__ })
/* A note about sidecar k: its name and index come with it. */
#define SAY_SC(d, idx, ...) SAY((d), .sidecar = (d)->cfg.sidecars[(idx)].name, .k = (idx), __VA_ARGS__)
/* A note about app a. */
#define SAY_APP(d, a, ...) SAY((d), .app = (a)->name, .container = (a)->id, __VA_ARGS__)

static bool sidecar_status(struct decide *d, size_t sidecar, int code, int64_t now);
static void exit_action(struct decide *d, struct decide_action *act);

/* ---- results in words ----------------------------------------------------- */

/* The results without an HTTP status, in the summary's word and the log's phrase. */
static const struct {
	int result;
	const char *word, *phrase;
} results[] = {
	{ -ECONNREFUSED, "refused", "connection refused" },
	{ -ETIMEDOUT, "timeout", "timed out" },
	{ -ECONNRESET, "no-answer", "closed without an answer" },
};

const char *decide_result_word(int result, char buf[16])
{
	size_t i;

	if (result == 0)
		return NULL;
	if (result > 0) {
		snprintf(buf, 16, "%d", result);
		return buf;
	}
	for (i = 0; i < ARRAY_SIZE(results); i++)
		if (results[i].result == result)
			return results[i].word;
	return "error";
}

const char *decide_result_phrase(int result, char buf[64])
{
	size_t i;

	if (result > 0) {
		snprintf(buf, 64, "answered %d", result);
		return buf;
	}
	if (result == 0)
		return "connected";
	for (i = 0; i < ARRAY_SIZE(results); i++)
		if (results[i].result == result)
			return results[i].phrase;
	snprintf(buf, 64, "failed: %s", strerror(-result));
	return buf;
}

/* ---- set-up -------------------------------------------------------------- */

int decide_new(const struct decide_config *cfg, int64_t now, struct decide **out)
{
	struct decide *d = calloc(1, sizeof(*d));
	size_t i;

	if (!d)
		return -ENOMEM;
	d->cfg = *cfg;
	d->started_us = now;
	d->last_rescan_us = now;
	d->sidecars = calloc(cfg->nsidecars ? cfg->nsidecars : 1, sizeof(*d->sidecars));
	if (!d->sidecars) {
		free(d);
		return -ENOMEM;
	}
	for (i = 0; i < cfg->nsidecars; i++) {
		d->sidecars[i].ready_next_us = now;
		d->sidecars[i].ready_backoff_us = READY_POLL_FAST_US;
		d->sidecars[i].retry_us = INT64_MAX;
		d->sidecars[i].exit_code = DECIDE_CODE_PENDING;
	}
	for (i = 0; i < DECIDE_NFILES; i++)
		d->files[i].backoff_us = WRITE_RETRY_FIRST_US;
	*out = d;
	return 0;
}

void decide_free(struct decide *d)
{
	if (!d)
		return;
	free(d->apps);
	free(d->reports);
	free(d->sidecars);
	free(d);
}

/* ---- apps ----------------------------------------------------------------- */

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

/* Every app container the pod has was seen: --apps N, and N of them. */
static bool all_expected_seen(const struct decide *d)
{
	return d->cfg.apps_expected && live_apps(d) >= d->cfg.apps_expected;
}

static bool any_awaiting_restart(const struct decide *d)
{
	size_t i;

	for (i = 0; i < d->napps; i++)
		if (awaiting_restart(d, &d->apps[i]))
			return true;
	return false;
}

/*
 * A new app. Without memory for it, it is counted as lost: it may still
 * run, so the apps are never done by themselves from then on (the drain
 * waits for a drain file, --term-grace or --startup-timeout), never early.
 */
static struct decide_app *add_app(struct decide *d, unsigned id, const char *name, int64_t now)
{
	struct decide_app *a = array_grow(d->apps, d->napps, &d->capapps, sizeof(*a), 8);

	if (!a) {
		d->lost_apps++;
		SAY(d, .kind = NOTE_APP_NOT_TRACKED, .app = name, .container = id);
		return NULL;
	}
	d->apps = a;
	a = &d->apps[d->napps++];
	memset(a, 0, sizeof(*a));
	a->id = id;
	str_copy(a->name, name, sizeof(a->name));
	a->code = DECIDE_CODE_PENDING;
	a->reported = -1;
	a->seen_us = now;
	return a;
}

static bool app_seen(struct decide *d, unsigned id, const char *name, int64_t now)
{
	size_t i;

	if (find_app(d, id) || d->phase >= PHASE_DRAINING)
		return false;
	d->last_container_us = now;
	if (d->cfg.policy == POLICY_ON_FAILURE) {
		/* A failed container coming back under a new cgroup: the same app, restarted. */
		for (i = 0; i < d->napps; i++) {
			struct decide_app *old = &d->apps[i];

			if (old->superseded || !old->exited || old->code == 0 || strcmp(old->name, name) != 0)
				continue;
			old->superseded = true;
			SAY(d, .kind = NOTE_APP_RESTARTED, .app = name, .container = id, .other = old->id);
			break;
		}
	}
	add_app(d, id, name, now);
	return true;
}

static bool app_exited(struct decide *d, unsigned id, int64_t now)
{
	struct decide_app *a = find_app(d, id);

	if (!a || a->root_exited)
		return false;
	a->root_exited = true;
	/* The kernel is asked for the code at once, then less and less often. */
	a->status_next_us = now;
	a->status_backoff_us = STATUS_FIRST_US;
	if (a->exited)
		return true;
	a->exited = true;
	a->exited_us = now;
	return true;
}

/* Says why the sidecars stay, when a new code makes the app one that is expected back. */
static void note_restart_wait(struct decide *d, const struct decide_app *a, int64_t now)
{
	if (awaiting_restart(d, a))
		SAY_APP(d, a, .kind = NOTE_RESTART_WAIT, .code = a->code,
			.us = d->cfg.restart_grace_us - (now - a->exited_us));
}

/* The kubelet restarts (or not) by the container's own exit code: that one decides. */
static void note_disagreement(const struct decide *d, const struct decide_app *a, int kernel)
{
	SAY_APP(d, a, .kind = NOTE_CODES_DIFFER, .report = a->report, .reported = a->reported, .code = kernel);
}

/* Whether the kernel's code for a is still to be asked for. */
static bool status_wanted(const struct decide_app *a)
{
	return a->root_exited && !a->kernel_code && a->status_backoff_us > 0;
}

static bool app_status(struct decide *d, unsigned id, int code, int64_t now)
{
	struct decide_app *a = find_app(d, id);
	int before;

	if (!a)
		return false;
	if (code == DECIDE_CODE_PENDING)
		return true; /* not yet: DECIDE_STATUS comes again on decide's clock */
	a->status_backoff_us = 0;
	before = a->code;
	if (code >= 0) {
		if (a->reported >= 0 && a->reported != code)
			note_disagreement(d, a, code);
		a->code = code;
		a->kernel_code = true;
	} else if (a->reported < 0) {
		a->code = code;
	}
	if (a->code != before)
		note_restart_wait(d, a, now);
	return true;
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

static bool app_reports_as(struct decide *d, unsigned id, const char *name)
{
	struct decide_app *a = find_app(d, id);

	if (!a)
		return false;
	str_copy(a->reports_as, name, sizeof(a->reports_as));
	return true;
}

static void match_report(struct decide *d, const char *name, int code, int64_t now)
{
	struct decide_app *a = report_target(d, name);
	int before;

	if (!a) {
		a = add_app(d, 0, name, now);
		if (!a)
			return;
		SAY(d, .kind = NOTE_REPORT_ALONE, .report = name);
	}
	/* The same report read again (after an overflow, or written twice): nothing new. */
	if (a->reported == code && strcmp(a->report, name) == 0)
		return;
	before = a->code;
	str_copy(a->report, name, sizeof(a->report));
	a->reported = code;
	SAY_APP(d, a, .kind = NOTE_REPORTED, .report = name, .code = code, .flag = !a->exited);
	if (!a->exited) {
		a->exited = true;
		a->exited_us = now;
	}
	if (a->kernel_code) {
		if (a->code != code)
			note_disagreement(d, a, a->code);
	} else {
		a->code = code;
	}
	if (a->code != before)
		note_restart_wait(d, a, now);
}

static bool app_report(struct decide *d, const char *name, int code, int64_t now)
{
	struct decide_report *r;
	size_t i;

	if (d->phase == PHASE_DONE)
		return false;
	/* Draining: no rescan is needed any more; the report only completes the summary. */
	if (d->phase == PHASE_DRAINING) {
		match_report(d, name, code, now);
		return true;
	}
	for (i = 0; i < d->nreports; i++) {
		if (strcmp(d->reports[i].name, name) == 0) {
			d->reports[i].code = code;
			return true;
		}
	}
	r = array_grow(d->reports, d->nreports, &d->capreports, sizeof(*r), 4);
	if (!r) {
		/* The app it is about is not done as far as decide knows: the drain waits, as it should. */
		SAY(d, .kind = NOTE_REPORT_NOT_TRACKED, .report = name);
		return false;
	}
	d->reports = r;
	r = &d->reports[d->nreports++];
	str_copy(r->name, name, sizeof(r->name));
	r->code = code;
	return true;
}

static bool app_renamed(struct decide *d, unsigned id, const char *name)
{
	struct decide_app *a = find_app(d, id);

	/* The name that identifies it across restarts is its program's, not the shell's before it. */
	if (!a || a->exited)
		return false;
	str_copy(a->name, name, sizeof(a->name));
	return true;
}

static bool app_forget(struct decide *d, unsigned id)
{
	struct decide_app *a = find_app(d, id);

	if (!a)
		return false;
	memmove(a, a + 1, (size_t)(d->apps + d->napps - a - 1) * sizeof(*a));
	d->napps--;
	return true;
}

/* OnFailure apps that did not come back within --restart-grace are done. */
static void expire_restart_grace(struct decide *d, int64_t now)
{
	size_t i;

	for (i = 0; i < d->napps; i++) {
		struct decide_app *a = &d->apps[i];

		if (!awaiting_restart(d, a) || now < a->exited_us + d->cfg.restart_grace_us)
			continue;
		a->gave_up = true;
		SAY_APP(d, a, .kind = NOTE_RESTART_GIVEN_UP, .us = d->cfg.restart_grace_us);
	}
}

/* Exit codes the kernel did not publish within STATUS_GIVE_UP_US are unknown. */
static void expire_statuses(struct decide *d, int64_t now)
{
	size_t i;

	for (i = 0; i < d->napps; i++) {
		struct decide_app *a = &d->apps[i];

		if (!status_wanted(a) || now < a->exited_us + STATUS_GIVE_UP_US)
			continue;
		SAY_APP(d, a, .kind = NOTE_CODE_UNPUBLISHED);
		app_status(d, a->id, DECIDE_CODE_UNKNOWN, now);
	}
	for (i = 0; i < d->cfg.nsidecars; i++) {
		struct decide_sidecar *sc = &d->sidecars[i];

		while (sc->codes_pending && sc->status_backoff_us && now >= sc->exited_us + STATUS_GIVE_UP_US)
			sidecar_status(d, i, DECIDE_CODE_UNKNOWN, now);
	}
}

/* DECIDE_STATUS when an exit code is due to be asked for. */
static bool status_step(struct decide *d, int64_t now, struct decide_action *act)
{
	bool due = false;
	size_t i;

	for (i = 0; i < d->napps; i++) {
		struct decide_app *a = &d->apps[i];

		if (!status_wanted(a) || now < a->status_next_us)
			continue;
		/* The attempt is made now; the next one, if needed, after the backoff. */
		a->status_next_us = now + a->status_backoff_us;
		a->status_backoff_us = min64(a->status_backoff_us * 2, STATUS_MAX_US);
		due = true;
	}
	for (i = 0; i < d->cfg.nsidecars; i++) {
		struct decide_sidecar *sc = &d->sidecars[i];

		if (!sc->codes_pending || !sc->status_backoff_us || now < sc->status_next_us)
			continue;
		sc->status_next_us = now + sc->status_backoff_us;
		sc->status_backoff_us = min64(sc->status_backoff_us * 2, STATUS_MAX_US);
		due = true;
	}
	if (due)
		act->kind = DECIDE_STATUS;
	return due;
}

static int64_t status_deadline(const struct decide *d)
{
	int64_t t = INT64_MAX;
	size_t i;

	for (i = 0; i < d->napps; i++) {
		const struct decide_app *a = &d->apps[i];

		if (status_wanted(a))
			t = min64(t, min64(a->status_next_us, a->exited_us + STATUS_GIVE_UP_US));
	}
	for (i = 0; i < d->cfg.nsidecars; i++) {
		const struct decide_sidecar *sc = &d->sidecars[i];

		if (sc->codes_pending && sc->status_backoff_us)
			t = min64(t, min64(sc->status_next_us, sc->exited_us + STATUS_GIVE_UP_US));
	}
	return t;
}

/* ---- sidecars --------------------------------------------------------------- */

/*
 * A ready sidecar's stop endpoint should listen too: one look, once the
 * sidecar is ready and its container was seen, so that the pre-flight look
 * at its command line (which may know why nothing listens) comes first.
 */
static void plan_check(struct decide *d, size_t k)
{
	struct decide_sidecar *sc = &d->sidecars[k];
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];

	if (sc->checked || sc->no_check || !cfg->stop_url || !sc->ready || !(sc->seen || cfg->confirm == CONFIRM_PORT))
		return;
	sc->checked = true;
	sc->check_due = true;
}

static bool sidecar_seen(struct decide *d, size_t sidecar, int64_t now)
{
	d->sidecars[sidecar].seen = true;
	d->sidecars[sidecar].seen_us = now;
	d->sidecars[sidecar].containers++;
	plan_check(d, sidecar);
	return true;
}

/* A root of the sidecar exited; pid: it was watched (0: gone before it could be). */
static bool sidecar_exited(struct decide *d, size_t sidecar, unsigned container, int pid, int64_t now)
{
	struct decide_sidecar *sc = &d->sidecars[sidecar];

	/* Not of our doing: said, for it may fail the pod or leave the apps without their proxy. */
	if (pid && sc->state == SC_UP)
		SAY_SC(d, sidecar, .kind = NOTE_SIDECAR_EXITED_EARLY, .container = container, .pid = pid,
		       .flag = d->phase >= PHASE_DRAINING);
	if (sc->containers > 0)
		sc->containers--;
	sc->codes_pending++;
	sc->exited_us = now;
	sc->status_next_us = now;
	sc->status_backoff_us = STATUS_FIRST_US;
	return true;
}

static bool sidecar_status(struct decide *d, size_t sidecar, int code, int64_t now)
{
	struct decide_sidecar *sc = &d->sidecars[sidecar];

	if (code == DECIDE_CODE_PENDING)
		return true;
	if (sc->codes_pending > 0)
		sc->codes_pending--;
	if (!sc->codes_pending)
		sc->status_backoff_us = 0;
	if (code == DECIDE_CODE_UNKNOWN) {
		if (sc->exit_code == DECIDE_CODE_PENDING && !sc->codes_pending)
			sc->exit_code = DECIDE_CODE_UNKNOWN;
		return true;
	}
	/* Of several containers, the first that fails the pod is the one to tell. */
	if (sc->exit_code <= 0)
		sc->exit_code = code;
	/* What a non-zero exit will do to the pod, and what to change. */
	if (code != 0)
		SAY_SC(d, sidecar, .kind = NOTE_SIDECAR_CODE, .code = code, .text = d->cfg.sidecars[sidecar].exit_fix,
		       .flag = d->cfg.policy == POLICY_NEVER);
	return true;
}

static bool sidecar_no_endpoint(struct decide *d, size_t sidecar)
{
	d->sidecars[sidecar].no_check = true;
	d->sidecars[sidecar].check_due = false;
	return true;
}

static bool sidecar_gone(struct decide *d, size_t sidecar, int64_t now)
{
	struct decide_sidecar *sc = &d->sidecars[sidecar];

	/* A failed sidecar stays failed: the stop was not ours. */
	if (sc->state == SC_GONE || sc->state == SC_UP || sc->state == SC_FAILED)
		return false;
	sc->gone_from = sc->state;
	sc->state = SC_GONE;
	sc->gone_us = now;
	sc->signal_due = false;
	return true;
}

static bool sidecar_catches(struct decide *d, size_t sidecar, int result)
{
	d->sidecars[sidecar].catch_inflight = false;
	d->sidecars[sidecar].catch_result = result;
	return true;
}

/* Failures that pass: the same signal is sent again shortly. */
static bool transient(int err)
{
	return err == -EMFILE || err == -ENFILE || err == -ENOMEM || err == -EAGAIN || err == -EINTR ||
	       err == -ENOBUFS;
}

static bool signal_result(struct decide *d, size_t sidecar, int err, int64_t now)
{
	struct decide_sidecar *sc = &d->sidecars[sidecar];

	/* ESRCH: it exited meanwhile; its watch reports that. */
	if (err == 0 || err == -ESRCH)
		return true;
	if (sc->state == SC_GONE || sc->state == SC_FAILED)
		return false;
	if (transient(err)) {
		sc->signal_due = true;
		sc->retry_us = now + SIGNAL_RETRY_US;
		SAY_SC(d, sidecar, .kind = NOTE_SIGNAL_RETRY, .result = err);
		return true;
	}
	sc->state = SC_FAILED;
	sc->err = err;
	if (err == -EPERM)
		SAY_SC(d, sidecar, .kind = NOTE_SIGNAL_NOT_PERMITTED, .signo = sc->last_signal);
	else
		SAY_SC(d, sidecar, .kind = NOTE_SIGNAL_FAILED, .result = err);
	return true;
}

/* ---- readiness ---------------------------------------------------------- */

/* Whether sidecar k counts: detection's sidecars only once a process of theirs was seen. */
static bool counts(const struct decide *d, size_t k)
{
	return !d->cfg.sidecars[k].optional || d->sidecars[k].seen;
}

/* Detection only, and nothing detected yet: nothing is ready, for there may be a sidecar to come. */
static bool none_detected(const struct decide *d)
{
	size_t k;

	for (k = 0; k < d->cfg.nsidecars; k++)
		if (counts(d, k))
			return false;
	return d->cfg.nsidecars > 0;
}

static bool readiness_pending(const struct decide *d)
{
	return d->cfg.readiness && !d->sidecars_ready && !d->ready_expired && d->phase < PHASE_DRAINING;
}

static void mark_ready(struct decide *d, size_t k, int64_t now)
{
	struct decide_sidecar *sc = &d->sidecars[k];

	sc->ready = true;
	sc->ready_us = now;
	plan_check(d, k);
	SAY_SC(d, k, .kind = NOTE_READY, .us = now - d->started_us, .count = sc->ready_polls,
	       .flag = !d->cfg.sidecars[k].ready_url, .blind = d->cfg.sidecars[k].confirm == CONFIRM_PORT);
}

/* A sidecar without a ready URL is ready when its process shows up: rescans find it. */
static bool awaiting_sidecar_process(const struct decide *d)
{
	size_t i;

	if (!readiness_pending(d))
		return false;
	for (i = 0; i < d->cfg.nsidecars; i++)
		if (!d->cfg.sidecars[i].optional && !d->cfg.sidecars[i].ready_url && !d->sidecars[i].seen &&
		    d->cfg.sidecars[i].confirm == CONFIRM_PROCESSES)
			return true;
	/* Detection: a sidecar may start after the agent; it is seen only by looking. */
	return none_detected(d);
}

/* Says which sidecars --ready-timeout found not ready, and why each. */
static void note_ready_timeout(struct decide *d)
{
	char list[512] = "", what[64];
	size_t i, n = 0;

	for (i = 0; i < d->cfg.nsidecars; i++) {
		const struct decide_sidecar *sc = &d->sidecars[i];

		if (sc->ready || !counts(d, i) || n >= sizeof(list) - 1)
			continue;
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s (%s)", n ? ", " : "", d->cfg.sidecars[i].name,
				      !d->cfg.sidecars[i].ready_url ? "no process seen"
				      : sc->ready_last ? decide_result_phrase(sc->ready_last, what) : "no answer yet");
		if (d->cfg.ready_gates_apps)
			SAY_SC(d, i, .kind = NOTE_NOT_READY_COMMAND, .text = d->cfg.sidecars[i].ready_url,
			       .us = d->cfg.ready_timeout_us);
	}
	if (none_detected(d))
		SAY(d, .kind = NOTE_NONE_DETECTED, .us = d->cfg.ready_timeout_us);
	else if (!d->cfg.ready_gates_apps)
		SAY(d, .kind = NOTE_NOT_READY, .text = list, .us = d->cfg.ready_timeout_us);
}

/* Whether sidecar k is ready, or is as good as ready (seen, without a ready URL). */
static bool ready_now(const struct decide *d, size_t k)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];

	return d->sidecars[k].ready || (!cfg->ready_url && (d->sidecars[k].seen || cfg->confirm == CONFIRM_PORT));
}

/* Sidecars without a ready URL seen, and whether every sidecar is ready now. */
static void readiness_update(struct decide *d, int64_t now)
{
	bool all = true;
	size_t i;

	if (!readiness_pending(d))
		return;
	for (i = 0; i < d->cfg.nsidecars; i++)
		if (counts(d, i) && !d->sidecars[i].ready && ready_now(d, i))
			mark_ready(d, i, now);
	for (i = 0; i < d->cfg.nsidecars; i++)
		all &= !counts(d, i) || d->sidecars[i].ready;
	if (all && !none_detected(d)) {
		d->sidecars_ready = true;
		/* The file, or the command that waits for it; without the file protocol only this line. */
		d->files[DECIDE_FILE_READY].wanted = d->cfg.files || d->cfg.ready_gates_apps;
		d->files[DECIDE_FILE_READY].next_us = now;
		SAY(d, .kind = d->cfg.ready_gates_apps ? NOTE_ALL_READY_COMMAND
			       : d->cfg.files	       ? NOTE_ALL_READY
						       : NOTE_ALL_READY_NO_FILE);
	}
}

/* Readiness polls that are due (the ready file itself comes from files_step). */
static bool readiness_step(struct decide *d, int64_t now, struct decide_action *act)
{
	size_t i;

	readiness_update(d, now);
	if (!readiness_pending(d))
		return false;
	for (i = 0; i < d->cfg.nsidecars; i++) {
		struct decide_sidecar *sc = &d->sidecars[i];

		if (!counts(d, i) || sc->ready || sc->ready_inflight || !d->cfg.sidecars[i].ready_url ||
		    now < sc->ready_next_us)
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

/*
 * --ready-timeout: looked at before the conclusion, which it may make
 * (ready_gates_apps). What turned ready by then still counts.
 */
static void expire_readiness(struct decide *d, int64_t now)
{
	size_t k;

	if (!readiness_pending(d) || now < d->started_us + d->cfg.ready_timeout_us)
		return;
	for (k = 0; k < d->cfg.nsidecars; k++) {
		if (!counts(d, k) || ready_now(d, k))
			continue;
		d->ready_expired = true;
		note_ready_timeout(d);
		return;
	}
	if (none_detected(d)) {
		d->ready_expired = true;
		note_ready_timeout(d);
	}
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

		if (counts(d, i) && d->cfg.sidecars[i].ready_url && !sc->ready && !sc->ready_inflight)
			t = min64(t, sc->ready_next_us);
	}
	return t;
}

static bool ready_result(struct decide *d, size_t k, int result, int64_t now)
{
	struct decide_sidecar *sc = &d->sidecars[k];

	sc->ready_inflight = false;
	sc->ready_last = result;
	if (sc->ready || !readiness_pending(d))
		return false;
	if (is_2xx(result)) {
		mark_ready(d, k, now);
		return true;
	}
	/* Fast while the proxy may be starting, then backing off. */
	if (now - d->started_us >= READY_FAST_WINDOW_US)
		sc->ready_backoff_us = min64(sc->ready_backoff_us * 2, READY_POLL_MAX_US);
	sc->ready_next_us = now + sc->ready_backoff_us;
	SAY_SC(d, k, .kind = NOTE_NOT_READY_YET, .result = result, .us = sc->ready_backoff_us);
	return true;
}

/* Pre-flight: whether each ready sidecar's stop endpoint accepts connections. */
static bool check_step(struct decide *d, struct decide_action *act)
{
	size_t k;

	for (k = 0; k < d->cfg.nsidecars; k++) {
		struct decide_sidecar *sc = &d->sidecars[k];

		if (!sc->check_due || sc->check_inflight)
			continue;
		sc->check_due = false;
		sc->check_inflight = true;
		act->kind = DECIDE_HTTP;
		act->sidecar = k;
		act->purpose = DECIDE_HTTP_CHECK;
		act->url = d->cfg.sidecars[k].stop_url;
		act->connect_timeout_us = act->timeout_us = CONNECT_TIMEOUT_US;
		return true;
	}
	return false;
}

/* ---- files ------------------------------------------------------------------ */

/* Which files may still be written: ready only while the apps may wait for it. */
static bool file_open(const struct decide *d, enum decide_file f)
{
	const struct decide_file_state *fs = &d->files[f];

	if (!fs->wanted || fs->written || fs->inflight)
		return false;
	return f != DECIDE_FILE_READY || d->phase < PHASE_DRAINING;
}

static bool files_step(struct decide *d, int64_t now, struct decide_action *act)
{
	size_t f;

	for (f = 0; f < DECIDE_NFILES; f++) {
		struct decide_file_state *fs = &d->files[f];

		if (!file_open(d, f) || now < fs->next_us)
			continue;
		fs->inflight = true;
		act->kind = DECIDE_WRITE;
		act->file = f;
		act->reason = d->reason;
		return true;
	}
	return false;
}

static int64_t files_deadline(const struct decide *d)
{
	int64_t t = INT64_MAX;
	size_t f;

	for (f = 0; f < DECIDE_NFILES; f++)
		if (file_open(d, f))
			t = min64(t, d->files[f].next_us);
	return t;
}

static bool written(struct decide *d, enum decide_file file, int err, int64_t now)
{
	struct decide_file_state *fs;

	if (file >= DECIDE_NFILES)
		return false;
	fs = &d->files[file];
	if (!fs->inflight)
		return false;
	fs->inflight = false;
	if (err == 0) {
		fs->written = true;
		if (fs->failures)
			SAY(d, .kind = NOTE_WRITTEN_AFTER_ALL, .file = file, .count = fs->failures + 1);
		return true;
	}
	if (!fs->failures)
		fs->first_failure_us = now;
	fs->failures++;
	fs->err = err;
	fs->next_us = now + fs->backoff_us;
	/* The first failure, and every tenth, are worth a line. */
	if (fs->failures % 10 == 1)
		SAY(d, .kind = NOTE_WRITE_FAILED, .file = file, .result = err, .count = fs->failures,
		    .us = fs->backoff_us);
	fs->backoff_us = min64(fs->backoff_us * 2, WRITE_RETRY_MAX_US);
	return true;
}

/* ---- HTTP ------------------------------------------------------------------- */

/* Keeps the result of the last drain or stop request for the summary. */
static void note_status(struct decide_sidecar *sc, int result)
{
	if (sc->requests > 0 && sc->requests <= DECIDE_STATUSES_MAX)
		sc->statuses[sc->requests - 1] = result;
}

static bool http_stop_result(struct decide *d, size_t k, int result, int64_t now)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct decide_sidecar *sc = &d->sidecars[k];

	if (sc->state != SC_STOPPING || sc->stop_accepted || sc->stop_refused)
		return false;
	if (is_2xx(result)) {
		sc->stop_accepted = true;
		if (cfg->confirm == CONFIRM_PORT) {
			/* Nothing to watch: look at the door instead. */
			sc->retry_us = now;
			sc->backoff_us = GONE_PROBE_FIRST_US;
		}
		SAY_SC(d, k, .kind = NOTE_STOP_ACCEPTED, .result = result, .us = d->cfg.stop_timeout_us,
		       .blind = cfg->confirm == CONFIRM_PORT);
		return true;
	}
	if (is_refusal(result)) {
		sc->stop_refused = true;
		SAY_SC(d, k, .kind = NOTE_STOP_REFUSED, .result = result, .blind = cfg->confirm == CONFIRM_PORT);
		return true;
	}
	if (now + sc->backoff_us >= sc->deadline_us) {
		SAY_SC(d, k, .kind = NOTE_STOP_NO_TIME, .result = result);
		return true;
	}
	sc->retry_us = now + sc->backoff_us;
	SAY_SC(d, k, .kind = NOTE_STOP_RETRY, .result = result, .count = sc->requests, .us = sc->backoff_us);
	sc->backoff_us = min64(sc->backoff_us * 2, STOP_RETRY_MAX_US);
	return true;
}

static bool http_result(struct decide *d, size_t sidecar, enum decide_http_purpose purpose, int result, int64_t now)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[sidecar];
	struct decide_sidecar *sc = &d->sidecars[sidecar];

	switch (purpose) {
	case DECIDE_HTTP_READY:
		return ready_result(d, sidecar, result, now);
	case DECIDE_HTTP_DRAIN:
		sc->http_inflight = false;
		note_status(sc, result);
		if (sc->state != SC_DRAINING)
			return false;
		if (is_2xx(result)) {
			sc->deadline_us = now + cfg->drain_time_us;
			if (cfg->drain_time_us)
				SAY_SC(d, sidecar, .kind = NOTE_DRAIN_ACCEPTED, .result = result, .us = cfg->drain_time_us);
		} else {
			sc->deadline_us = now;
			SAY_SC(d, sidecar, .kind = NOTE_DRAIN_FAILED, .result = result);
		}
		return true;
	case DECIDE_HTTP_STOP:
		sc->http_inflight = false;
		note_status(sc, result);
		return http_stop_result(d, sidecar, result, now);
	case DECIDE_HTTP_CHECK:
		sc->check_inflight = false;
		if (result == -ECONNREFUSED)
			SAY_SC(d, sidecar, .kind = NOTE_STOP_ENDPOINT_SHUT, .text = cfg->stop_url);
		return true;
	case DECIDE_HTTP_GONE:
		sc->http_inflight = false;
		if (sc->state != SC_STOPPING)
			return false;
		if (result == -ECONNREFUSED) {
			SAY_SC(d, sidecar, .kind = NOTE_PORT_CLOSED);
			sidecar_gone(d, sidecar, now);
			return true;
		}
		sc->retry_us = now + sc->backoff_us;
		sc->backoff_us = min64(sc->backoff_us * 2, GONE_PROBE_MAX_US);
		return true;
	}
	return false;
}

/* ---- the pod's processes ----------------------------------------------------- */

static void polling(struct decide *d, unsigned n)
{
	if (n && !d->polled)
		d->next_poll_us = 0;
	d->polled = n;
	if (n > d->polled_most)
		d->polled_most = n;
}

static void rescanned(struct decide *d, int err, int64_t now)
{
	size_t i;

	d->rescan_inflight = false;
	d->pids_moved = false;
	if (err < 0) {
		/* Nothing was learnt: no confirmation, no report matched; again shortly. */
		if (!d->rescan_err)
			SAY(d, .kind = NOTE_RESCAN_FAILED, .result = err);
		d->rescan_err = err;
		d->rescan_retry_us = now + RESCAN_RETRY_US;
		return;
	}
	if (d->rescan_err)
		SAY(d, .kind = NOTE_RESCAN_WORKS);
	d->rescan_err = 0;
	d->last_rescan_us = now;
	if (d->phase == PHASE_CONFIRMING)
		d->confirmed = true;
	for (i = 0; i < d->nreports; i++)
		match_report(d, d->reports[i].name, d->reports[i].code, now);
	d->nreports = 0;
}

/* The apps are done and a named sidecar is awaited (awaiting_named_sidecar). */
static bool sidecar_wait_running(const struct decide *d)
{
	return d->sidecar_wait_from_us && !d->sidecar_wait_over;
}

/* How often to rescan while watching; 0: no need. */
static int64_t rescan_interval(const struct decide *d, int64_t now)
{
	if (d->pending_containers)
		return RESCAN_PENDING_US;
	if (fewer_than_expected(d) || awaiting_sidecar_process(d) || any_awaiting_restart(d) ||
	    sidecar_wait_running(d))
		return RESCAN_FAST_US;
	if (d->cfg.apps_expected)
		return 0;
	/* Without --apps, another app may still come: quickly at start-up, then every second. */
	if (now < d->started_us + STARTUP_WINDOW_US || now < d->last_container_us + CONTAINER_WINDOW_US)
		return RESCAN_FAST_US;
	return RESCAN_SLOW_US;
}

bool decide_expects_process(const struct decide *d, int64_t now)
{
	int64_t every;

	if (d->phase != PHASE_WATCHING && d->phase != PHASE_CONFIRMING)
		return false;
	every = rescan_interval(d, now);
	return every > 0 && every <= RESCAN_FAST_US;
}

/* When the next rescan is due while watching (a failed one is retried); INT64_MAX: none. */
static int64_t rescan_due(const struct decide *d, int64_t now)
{
	int64_t every;

	if (d->rescan_inflight)
		return INT64_MAX;
	if (d->rescan_err)
		return d->rescan_retry_us;
	every = rescan_interval(d, now);
	return every ? d->last_rescan_us + every : INT64_MAX;
}

static bool rescan_action(struct decide *d, struct decide_action *act)
{
	d->rescan_inflight = true;
	d->pids_moved = false;
	act->kind = DECIDE_RESCAN;
	return true;
}

static bool poll_step(struct decide *d, int64_t now, struct decide_action *act)
{
	if (!d->polled || now < d->next_poll_us)
		return false;
	d->next_poll_us = now + POLL_US;
	act->kind = DECIDE_POLL;
	return true;
}

static int64_t poll_deadline(const struct decide *d)
{
	return d->polled ? d->next_poll_us : INT64_MAX;
}

/* ---- signals from outside ----------------------------------------------------- */

static bool drain_now(struct decide *d, const char *reason)
{
	if (d->phase >= PHASE_DRAINING || d->drain_requested)
		return false;
	d->drain_requested = true;
	d->drain_reason = reason;
	return true;
}

static void terminate(struct decide *d, int64_t now)
{
	if (d->phase >= PHASE_DRAINING) {
		SAY(d, .kind = NOTE_TERMINATE_DRAINING);
		return;
	}
	if (d->term_us) {
		drain_now(d, "second-signal");
		return;
	}
	d->term_us = now;
	SAY(d, .kind = NOTE_TERMINATE, .us = d->cfg.term_grace_us);
}

/* What an earlier run of the agent left: apps-done, the drain again; done, the exit. */
static bool found(struct decide *d, enum decide_file f)
{
	if (d->phase != PHASE_WATCHING)
		return false;
	switch (f) {
	case DECIDE_FILE_APPS_DONE:
		SAY(d, .kind = NOTE_RESUME_APPS_DONE);
		return drain_now(d, "resume");
	case DECIDE_FILE_DONE:
		SAY(d, .kind = NOTE_RESUME_DONE);
		d->resumed_done = true;
		return true;
	case DECIDE_FILE_READY:
	case DECIDE_NFILES:
		break;
	}
	return false;
}

/* ---- the conclusion ------------------------------------------------------------ */

/* Why the apps are done, or NULL while they are not. */
static const char *conclusion(struct decide *d, int64_t now)
{
	bool all = true;
	size_t i;

	if (d->drain_requested)
		return d->drain_reason;
	if (d->cfg.ready_gates_apps && d->ready_expired)
		return "ready-timeout";
	if (d->term_us && now >= d->term_us + d->cfg.term_grace_us)
		return "term-grace";
	for (i = 0; i < d->napps; i++)
		if (!d->apps[i].superseded && !app_finished(d, &d->apps[i]))
			all = false;
	/* An app that could not be tracked may still be running: never done without it. */
	if (d->lost_apps)
		all = false;
	if (fewer_than_expected(d)) {
		/* Only when the apps that did appear are all finished: a running one still needs the proxy. */
		if (all && now >= d->started_us + d->cfg.startup_timeout_us)
			return "startup-timeout";
		return NULL;
	}
	return all ? "apps-done" : NULL;
}

/* A sidecar named with --sidecar whose container was never seen: the kubelet may still start it. */
static bool never_started(const struct decide *d, size_t k)
{
	return !d->cfg.sidecars[k].optional && !d->sidecars[k].seen && d->cfg.sidecars[k].confirm == CONFIRM_PROCESSES;
}

/*
 * The apps are done, but a sidecar named with --sidecar has not started: a
 * sidecar listed after the apps is started after them (the kubelet starts
 * containers one by one), and once the agent has exited nothing stops it.
 * It is waited for, with rescans, at most --sidecar-wait; then the drain
 * goes on without it. Detection's sidecars are optional: never waited for.
 * True while the wait lasts.
 */
static bool awaiting_named_sidecar(struct decide *d, const char *reason, int64_t now)
{
	char list[512] = "";
	size_t k, n = 0;

	if (d->sidecar_wait_over || d->cfg.sidecar_wait_us <= 0 || strcmp(reason, "apps-done") != 0)
		return false;
	for (k = 0; k < d->cfg.nsidecars; k++)
		if (never_started(d, k) && n < sizeof(list) - 1)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "",
					      d->cfg.sidecars[k].name);
	if (!n) {
		if (d->sidecar_wait_from_us) {
			SAY(d, .kind = NOTE_SIDECAR_WAIT_OVER, .us = now - d->sidecar_wait_from_us);
			d->sidecar_wait_over = true;
		}
		return false;
	}
	if (!d->sidecar_wait_from_us) {
		d->sidecar_wait_from_us = now;
		SAY(d, .kind = NOTE_SIDECAR_WAIT, .text = list, .us = d->cfg.sidecar_wait_us);
		return true;
	}
	if (now < d->sidecar_wait_from_us + d->cfg.sidecar_wait_us)
		return true;
	d->sidecar_wait_over = true;
	SAY(d, .kind = NOTE_SIDECAR_WAIT_EXPIRED, .text = list, .us = d->cfg.sidecar_wait_us);
	return false;
}

/*
 * Whether "apps-done" needs one more look at /proc first: the kubelet starts
 * containers one by one, so one may have started since the last scan. Not
 * when --apps N were all seen: the pod has no other app container.
 */
static bool needs_confirmation(const struct decide *d, const char *reason)
{
	return strcmp(reason, "apps-done") == 0 && !d->confirmed && !all_expected_seen(d);
}

/* run --drain's command is over: an app that exited with code. */
static bool command_ended(struct decide *d, int code, int64_t now)
{
	if (!d->cfg.command || d->command_over)
		return false;
	d->command_over = true;
	d->command_code = code;
	app_exited(d, DECIDE_APP_COMMAND, now);
	app_status(d, DECIDE_APP_COMMAND, code, now);
	return true;
}

static void start_drain(struct decide *d, const char *reason, int64_t now, struct decide_action *act)
{
	int64_t limit = 0;

	d->phase = PHASE_DRAINING;
	d->decided_us = now;
	d->reason = reason;
	d->current = d->cfg.nsidecars;
	d->files[DECIDE_FILE_APPS_DONE].wanted = d->cfg.files;
	d->files[DECIDE_FILE_APPS_DONE].next_us = now;
	if (strcmp(reason, "startup-timeout") == 0)
		limit = d->cfg.startup_timeout_us;
	else if (strcmp(reason, "term-grace") == 0)
		limit = d->cfg.term_grace_us;
	SAY(d, .kind = NOTE_DRAIN, .reason = reason, .count = live_apps(d), .us = limit);
	act->kind = DECIDE_APPS_DONE;
	act->reason = reason;
	/* The sidecars were not ready in time: the command that waited for them never starts. */
	if (strcmp(reason, "ready-timeout") == 0 && !d->files[DECIDE_FILE_READY].written &&
	    !d->files[DECIDE_FILE_READY].inflight && command_ended(d, d->cfg.command_not_ready, now)) {
		act->command_ended = true;
		act->exit_code = d->cfg.command_not_ready;
	}
}

/* ---- the drain ------------------------------------------------------------------- */

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
	act->urgent = purpose != DECIDE_HTTP_GONE;
}

/*
 * A signal to the sidecar: to its containers' roots, as the runtime's
 * StopContainer does (its SIGKILL, and signal-all, to every process).
 */
static void signal_action(struct decide *d, size_t k, int signo, struct decide_action *act)
{
	struct decide_sidecar *sc = &d->sidecars[k];

	sc->last_signal = signo;
	sc->signal_due = false;
	act->kind = DECIDE_SIGNAL;
	act->sidecar = k;
	act->signo = signo;
	act->all = signo == SIGKILL || d->cfg.sidecars[k].signal_all;
	act->urgent = true;
}

/* The stop request: a POST (retried later when it fails) or the stop signal. */
static void start_stop(struct decide *d, size_t k, int64_t now, struct decide_action *act)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct decide_sidecar *sc = &d->sidecars[k];

	sc->state = SC_STOPPING;
	sc->stop_sent_us = now;
	sc->deadline_us = now + d->cfg.stop_timeout_us;
	if (cfg->stop_url) {
		sc->backoff_us = STOP_RETRY_FIRST_US;
		sc->retry_us = INT64_MAX;
		http_action(d, k, DECIDE_HTTP_STOP, cfg->stop_url, min64(STOP_REQUEST_US, d->cfg.stop_timeout_us), act);
		return;
	}
	signal_action(d, k, cfg->stop_signal, act);
}

/* Whether signo kills a process that has no handler for it (its default action). */
static bool kills_by_default(int signo)
{
	return signo != SIGKILL && signo != SIGCHLD && signo != SIGCONT && signo != SIGURG && signo != SIGWINCH &&
	       signo != SIGSTOP && signo != SIGTSTP && signo != SIGTTIN && signo != SIGTTOU;
}

/*
 * Before the stop signal goes to a sidecar seen only just now (within
 * CATCH_WAIT_US, or after the apps were done), its roots are looked at
 * until they catch it and sleep (DECIDE_CATCHES): a program signalled right
 * after its exec, before it installed its handler, dies of the signal (143
 * for SIGTERM), and that fails the pod. The wait lasts CATCH_WAIT_US at most; then the signal
 * goes anyway. A sidecar that was running well before is signalled at once.
 * 1: an action (DECIDE_CATCHES); 0: waiting; -1: the signal may go.
 */
static int catch_step(struct decide *d, size_t k, int64_t now, struct decide_action *act)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct decide_sidecar *sc = &d->sidecars[k];

	if (sc->catch_over)
		return -1;
	if (!sc->catch_from_us) {
		bool late = d->sidecar_wait_from_us && sc->seen_us >= d->sidecar_wait_from_us;

		if (cfg->stop_url || cfg->confirm != CONFIRM_PROCESSES || !sc->containers ||
		    !kills_by_default(cfg->stop_signal) || (now >= sc->seen_us + CATCH_WAIT_US && !late)) {
			sc->catch_over = true;
			return -1;
		}
		sc->catch_from_us = now;
		sc->catch_next_us = now;
	}
	if (!sc->catch_inflight && sc->catch_result > 0) {
		sc->catch_over = true;
		SAY_SC(d, k, .kind = NOTE_CATCHES, .signo = cfg->stop_signal, .us = now - sc->catch_from_us);
		return -1;
	}
	if (!sc->catch_inflight && sc->catch_result < 0) {
		sc->catch_over = true;
		SAY_SC(d, k, .kind = NOTE_CATCHES_UNKNOWN, .signo = cfg->stop_signal, .result = sc->catch_result);
		return -1;
	}
	if (now >= sc->catch_from_us + CATCH_WAIT_US) {
		sc->catch_over = true;
		SAY_SC(d, k, .kind = NOTE_CATCHES_NOT, .signo = cfg->stop_signal, .us = CATCH_WAIT_US);
		return -1;
	}
	if (sc->catch_inflight || now < sc->catch_next_us)
		return 0;
	/* The first look said not yet: say why the stop waits. */
	if (sc->catch_looks++ == 1)
		SAY_SC(d, k, .kind = NOTE_CATCHES_WAIT, .signo = cfg->stop_signal, .us = CATCH_WAIT_US,
		       .limit_us = now - sc->seen_us);
	sc->catch_inflight = true;
	sc->catch_next_us = now + CATCH_CHECK_US;
	act->kind = DECIDE_CATCHES;
	act->sidecar = k;
	act->signo = cfg->stop_signal;
	return 1;
}

/* The first request to the sidecar: its drain, else its stop. */
static void begin_stop(struct decide *d, size_t k, int64_t now, struct decide_action *act)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct decide_sidecar *sc = &d->sidecars[k];

	if (cfg->drain_url) {
		sc->state = SC_DRAINING;
		http_action(d, k, DECIDE_HTTP_DRAIN, cfg->drain_url, STOP_REQUEST_US, act);
		return;
	}
	start_stop(d, k, now, act);
}

/* While the stop is under way: the stop request's retries, then (port) the probes. */
static bool stopping_http(struct decide *d, size_t k, int64_t now, struct decide_action *act)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct decide_sidecar *sc = &d->sidecars[k];

	if (!cfg->stop_url || sc->http_inflight || now < sc->retry_us)
		return false;
	sc->retry_us = INT64_MAX;
	if (!sc->stop_accepted) {
		http_action(d, k, DECIDE_HTTP_STOP, cfg->stop_url, min64(STOP_REQUEST_US, sc->deadline_us - now), act);
		return true;
	}
	/* Port: refused connections on the ready URL (else the stop URL) mean it is gone. */
	http_action(d, k, DECIDE_HTTP_GONE, cfg->ready_url ? cfg->ready_url : cfg->stop_url,
		    min64(CONNECT_TIMEOUT_US, sc->deadline_us - now), act);
	return true;
}

/* A sidecar that no signal can reach (port confirmation) has failed when asked for one. */
static bool cannot_signal(struct decide *d, size_t k, int err)
{
	struct decide_sidecar *sc = &d->sidecars[k];

	if (d->cfg.sidecars[k].confirm != CONFIRM_PORT)
		return false;
	sc->state = SC_FAILED;
	sc->err = err;
	return true;
}

/* The stop did not work within --stop-timeout (or was refused): SIGTERM, or SIGKILL next. */
static bool escalate(struct decide *d, size_t k, int64_t now, struct decide_action *act)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct decide_sidecar *sc = &d->sidecars[k];

	if (sc->stop_refused) {
		if (cannot_signal(d, k, -EACCES))
			return false;
		sc->state = SC_TERMINATING;
		sc->deadline_us = now + d->cfg.kill_after_us;
		signal_action(d, k, SIGTERM, act);
		return true;
	}
	if (cannot_signal(d, k, -ETIMEDOUT)) {
		SAY_SC(d, k, .kind = NOTE_BLIND_TIMEOUT, .us = d->cfg.stop_timeout_us, .flag = sc->stop_accepted);
		return false;
	}
	sc->state = SC_TERMINATING;
	sc->deadline_us = now + d->cfg.kill_after_us;
	if (cfg->stop_signal == SIGTERM) {
		/* It has had its SIGTERM: a second one would only rush a drain. */
		SAY_SC(d, k, .kind = NOTE_SIGTERM_WAS_STOP, .us = d->cfg.stop_timeout_us,
		       .limit_us = d->cfg.kill_after_us);
		return false;
	}
	SAY_SC(d, k, .kind = NOTE_SENDING_SIGTERM, .us = d->cfg.stop_timeout_us);
	signal_action(d, k, SIGTERM, act);
	return true;
}

/* The next step for sidecar k, the one being stopped; false: it waits (or is settled). */
static bool sidecar_step(struct decide *d, size_t k, int64_t now, struct decide_action *act)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct decide_sidecar *sc = &d->sidecars[k];
	int rc;

	/* The stop went out first: now its processes are collected and watched. */
	if (cfg->confirm == CONFIRM_PROCESSES && !sc->watched && sc->state >= SC_DRAINING && sc->state <= SC_KILLING) {
		sc->watched = true;
		act->kind = DECIDE_WATCH;
		act->sidecar = k;
		return true;
	}
	/* A signal that failed for want of resources, again. */
	if (sc->signal_due && now >= sc->retry_us && sc->state >= SC_STOPPING && sc->state <= SC_KILLING) {
		signal_action(d, k, sc->last_signal, act);
		return true;
	}
	switch (sc->state) {
	case SC_UP:
		/* Looked for by detection and never seen: there is nothing to stop. */
		if (!counts(d, k)) {
			sc->state = SC_GONE;
			sc->gone_from = SC_UP;
			return false;
		}
		if (cfg->confirm == CONFIRM_PORT && !cfg->stop_url) {
			cannot_signal(d, k, -ENXIO);
			SAY_SC(d, k, .kind = NOTE_NO_SIGNAL_BLIND);
			return false;
		}
		/*
		 * The stop goes out before anything else: a request, or a signal
		 * to the roots (their pids are known). A signal to every process
		 * needs them collected and watched first; so does a sidecar with
		 * no live container known (there may be nothing to stop).
		 */
		if (cfg->confirm == CONFIRM_PORT || (sc->containers > 0 && (cfg->stop_url || cfg->drain_url || !cfg->signal_all))) {
			if (!cfg->drain_url && (rc = catch_step(d, k, now, act)) >= 0)
				return rc;
			begin_stop(d, k, now, act);
			return true;
		}
		sc->state = SC_WATCHING;
		sc->watched = true;
		act->kind = DECIDE_WATCH;
		act->sidecar = k;
		return true;
	case SC_WATCHING:
		if (!cfg->drain_url && (rc = catch_step(d, k, now, act)) >= 0)
			return rc;
		begin_stop(d, k, now, act);
		return true;
	case SC_DRAINING:
		if (sc->http_inflight || now < sc->deadline_us)
			return false;
		if ((rc = catch_step(d, k, now, act)) >= 0)
			return rc;
		start_stop(d, k, now, act);
		return true;
	case SC_STOPPING:
		if (sc->stop_refused || now >= sc->deadline_us)
			return escalate(d, k, now, act);
		return stopping_http(d, k, now, act);
	case SC_TERMINATING:
		if (now < sc->deadline_us)
			return false;
		sc->state = SC_KILLING;
		sc->deadline_us = now + (d->cfg.kill_after_us > KILL_CONFIRM_MIN_US ? d->cfg.kill_after_us
										   : KILL_CONFIRM_MIN_US);
		SAY_SC(d, k, .kind = NOTE_SENDING_SIGKILL);
		signal_action(d, k, SIGKILL, act);
		return true;
	case SC_KILLING:
		if (now < sc->deadline_us)
			return false;
		sc->state = SC_FAILED;
		sc->err = -ETIMEDOUT;
		SAY_SC(d, k, .kind = NOTE_KILL_FAILED);
		return false;
	case SC_GONE:
	case SC_FAILED:
		return false;
	}
	return false;
}

static bool settled(const struct decide_sidecar *sc)
{
	return sc->state == SC_GONE || sc->state == SC_FAILED;
}

/* The sidecars, one by one in reverse order, each settled before the next. */
static bool drain_step(struct decide *d, int64_t now, struct decide_action *act)
{
	while (d->current > 0) {
		size_t k = d->current - 1;

		if (sidecar_step(d, k, now, act))
			return true;
		if (!settled(&d->sidecars[k]))
			return false;
		d->current--;
	}
	return false;
}

static int64_t sidecar_deadline(const struct decide *d)
{
	const struct decide_sidecar *sc;
	int64_t t = INT64_MAX;

	if (d->current == 0)
		return t;
	sc = &d->sidecars[d->current - 1];
	if (sc->state == SC_STOPPING || sc->state == SC_TERMINATING || sc->state == SC_KILLING)
		t = sc->deadline_us;
	if (sc->state == SC_DRAINING && !sc->http_inflight)
		t = sc->deadline_us;
	if (sc->state == SC_STOPPING && !sc->http_inflight)
		t = min64(t, sc->retry_us);
	if (sc->signal_due)
		t = min64(t, sc->retry_us);
	if (sc->catch_from_us && !sc->catch_over)
		t = min64(t, sc->catch_inflight ? sc->catch_from_us + CATCH_WAIT_US : sc->catch_next_us);
	return t;
}

/*
 * Every sidecar is settled. An app's exit code may still be on its way (the
 * kernel publishes it once the shim reaps), and so may a stop request's
 * answer (a proxy answers, exits, and its exit can be seen first): the
 * summary is worth a short wait. Then done, then the exit.
 */
static bool finish_step(struct decide *d, int64_t now, struct decide_action *act)
{
	struct decide_file_state *done = &d->files[DECIDE_FILE_DONE];
	size_t i;

	if (!d->settled_us) {
		d->settled_us = now;
		d->exit_code = 0;
		for (i = 0; i < d->cfg.nsidecars; i++)
			if (d->sidecars[i].state == SC_FAILED)
				d->exit_code = 1;
	}
	if (now < d->settled_us + STATUS_WAIT_US) {
		for (i = 0; i < d->napps; i++)
			if (d->apps[i].exited && d->apps[i].code == DECIDE_CODE_PENDING)
				return false;
		for (i = 0; i < d->cfg.nsidecars; i++)
			if (d->sidecars[i].http_inflight || d->sidecars[i].codes_pending)
				return false;
	}
	if (d->cfg.files && !done->written) {
		if (!done->wanted) {
			done->wanted = true;
			done->next_us = now;
		}
		if (done->failures == 0 || now < done->first_failure_us + DONE_GIVE_UP_US) {
			if (files_step(d, now, act))
				return true;
			return false;
		}
		SAY(d, .kind = NOTE_DONE_GIVEN_UP, .result = done->err, .us = DONE_GIVE_UP_US);
		done->wanted = false;
	}
	exit_action(d, act);
	return true;
}

static int64_t finish_deadline(const struct decide *d)
{
	const struct decide_file_state *done = &d->files[DECIDE_FILE_DONE];
	int64_t t;

	if (!d->settled_us)
		return INT64_MAX;
	if (done->wanted && !done->written) {
		if (done->inflight)
			return INT64_MAX;
		return min64(done->next_us, done->first_failure_us + DONE_GIVE_UP_US);
	}
	t = d->settled_us + STATUS_WAIT_US;
	return min64(t, status_deadline(d));
}

/*
 * The containers the kubelet shares the termination messages' 12 KiB
 * among: the pod's, an attempt an OnFailure restart replaced not counted
 * again, and one init container assumed (istio-init, linkerd-init, a
 * migration ran before the agent could see it), so that a pod with one
 * still gets a message whole.
 */
static unsigned spec_containers(const struct decide *d)
{
	unsigned n = d->pod_containers;
	size_t i;

	for (i = 0; i < d->napps; i++)
		n -= d->apps[i].superseded && n > 1;
	return n + 1;
}

/* The end: the summary's exit code, and the process's exit status (run --drain: the command's code). */
static void exit_action(struct decide *d, struct decide_action *act)
{
	d->phase = PHASE_DONE;
	act->kind = DECIDE_EXIT;
	act->exit_code = d->exit_code;
	act->status = d->exit_code;
	act->resumed = d->resumed_done;
	act->containers = spec_containers(d);
	if (d->cfg.command && !d->resumed_done) {
		if (d->exit_code != 0)
			SAY(d, .kind = NOTE_STOP_FAILED, .code = d->exit_code);
		/* A command that never ended: none of its codes can be told (run --drain says 125). */
		act->status = d->command_over ? d->command_code : DECIDE_CODE_UNKNOWN;
	}
}

/* ---- the next action ---------------------------------------------------------- */

static bool watching_step(struct decide *d, int64_t now, struct decide_action *act)
{
	const char *reason;

	/*
	 * A report names a container that may have started since the last
	 * scan; a new pid may be one (a failed rescan keeps its retry time).
	 */
	if ((d->nreports || (d->pids_moved && !d->rescan_err)) && !d->rescan_inflight)
		return rescan_action(d, act);
	expire_restart_grace(d, now);
	expire_readiness(d, now);
	reason = conclusion(d, now);
	if (reason) {
		if (!needs_confirmation(d, reason)) {
			if (awaiting_named_sidecar(d, reason, now)) {
				if (status_step(d, now, act) || files_step(d, now, act))
					return true;
				if (now >= rescan_due(d, now))
					return rescan_action(d, act);
				return poll_step(d, now, act);
			}
			start_drain(d, reason, now, act);
			return true;
		}
		d->phase = PHASE_CONFIRMING;
		if (!d->rescan_inflight && (!d->rescan_err || now >= d->rescan_retry_us))
			return rescan_action(d, act);
		return false;
	}
	d->phase = PHASE_WATCHING;
	d->confirmed = false;
	if (status_step(d, now, act) || readiness_step(d, now, act) || files_step(d, now, act) || check_step(d, act))
		return true;
	if (now >= rescan_due(d, now))
		return rescan_action(d, act);
	return poll_step(d, now, act);
}

bool decide_next(struct decide *d, int64_t now, struct decide_action *act)
{
	memset(act, 0, sizeof(*act));
	/* An earlier run finished: nothing is left to do but to say so. */
	if (d->resumed_done && d->phase != PHASE_DONE) {
		exit_action(d, act);
		return true;
	}
	expire_statuses(d, now);
	switch (d->phase) {
	case PHASE_WATCHING:
	case PHASE_CONFIRMING:
		return watching_step(d, now, act);
	case PHASE_DRAINING:
		/* The stop first; the files, exit codes and looks at /proc after it. */
		if (drain_step(d, now, act) || files_step(d, now, act) || status_step(d, now, act) ||
		    poll_step(d, now, act))
			return true;
		if (d->rescan_err && !d->rescan_inflight && now >= d->rescan_retry_us)
			return rescan_action(d, act);
		if (d->current == 0)
			return finish_step(d, now, act);
		return false;
	case PHASE_DONE:
		break;
	}
	return false;
}

int64_t decide_deadline(struct decide *d, int64_t now)
{
	int64_t t = INT64_MAX;
	size_t i;

	if (d->resumed_done && d->phase != PHASE_DONE)
		return now;
	switch (d->phase) {
	case PHASE_WATCHING:
	case PHASE_CONFIRMING:
		if ((d->nreports || (d->pids_moved && !d->rescan_err)) && !d->rescan_inflight)
			return now;
		if (fewer_than_expected(d))
			t = d->started_us + d->cfg.startup_timeout_us;
		for (i = 0; i < d->napps; i++)
			if (awaiting_restart(d, &d->apps[i]))
				t = min64(t, d->apps[i].exited_us + d->cfg.restart_grace_us);
		if (d->term_us)
			t = min64(t, d->term_us + d->cfg.term_grace_us);
		if (sidecar_wait_running(d))
			t = min64(t, d->sidecar_wait_from_us + d->cfg.sidecar_wait_us);
		if (d->phase == PHASE_CONFIRMING && d->rescan_err && !d->rescan_inflight)
			t = min64(t, d->rescan_retry_us);
		t = min64(t, rescan_due(d, now));
		t = min64(t, readiness_deadline(d));
		t = min64(t, files_deadline(d));
		for (i = 0; i < d->cfg.nsidecars; i++)
			if (d->sidecars[i].check_due)
				t = now;
		t = min64(t, status_deadline(d));
		t = min64(t, poll_deadline(d));
		break;
	case PHASE_DRAINING:
		t = sidecar_deadline(d);
		t = min64(t, files_deadline(d));
		t = min64(t, status_deadline(d));
		t = min64(t, poll_deadline(d));
		if (d->rescan_err && !d->rescan_inflight)
			t = min64(t, d->rescan_retry_us);
		if (d->current == 0)
			t = min64(t, finish_deadline(d));
		break;
	case PHASE_DONE:
		break;
	}
	return t;
}

/* ---- views ------------------------------------------------------------------- */

static const char *outcome(const struct decide_sidecar *sc)
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

bool decide_draining(const struct decide *d)
{
	return d->phase >= PHASE_DRAINING;
}

void decide_view(const struct decide *d, struct decide_view *v)
{
	memset(v, 0, sizeof(*v));
	v->phase = d->phase;
	v->started_us = d->started_us;
	v->decided_us = d->decided_us;
	v->reason = d->reason;
	v->exit_code = d->exit_code;
	v->settled_us = d->settled_us;
	v->polled_most = d->polled_most;
	v->ready_written = d->files[DECIDE_FILE_READY].written;
	v->ready_expired = d->ready_expired;
	v->apps = d->napps;
}

void decide_app_view(const struct decide *d, size_t i, struct decide_app_view *v)
{
	const struct decide_app *a = &d->apps[i];

	memset(v, 0, sizeof(*v));
	v->id = a->id;
	v->name = a->name;
	v->state = a->superseded ? DECIDE_APP_RESTARTED : a->exited ? DECIDE_APP_EXITED : DECIDE_APP_RUNNING;
	v->code = a->code;
	v->gave_up = a->gave_up;
	v->report = a->report[0] ? a->report : NULL;
	v->reported = a->reported;
	v->seen_us = a->seen_us;
	v->exited_us = a->exited_us;
}

static enum decide_stage stage(const struct decide_sidecar *sc)
{
	switch (sc->state) {
	case SC_UP: return DECIDE_SIDECAR_UP;
	case SC_GONE: return DECIDE_SIDECAR_GONE;
	case SC_FAILED: return DECIDE_SIDECAR_FAILED;
	default: return DECIDE_SIDECAR_STOPPING;
	}
}

void decide_sidecar_view(const struct decide *d, size_t k, struct decide_sidecar_view *v)
{
	const struct decide_sidecar *sc = &d->sidecars[k];

	memset(v, 0, sizeof(*v));
	v->name = d->cfg.sidecars[k].name;
	v->stage = stage(sc);
	v->outcome = outcome(sc);
	v->seen = sc->seen;
	v->counts = counts(d, k);
	v->ready = sc->ready;
	v->ready_us = sc->ready_us;
	v->ready_polls = sc->ready_polls;
	v->ready_last = sc->ready_last;
	v->stop_sent_us = sc->stop_sent_us;
	v->gone_us = sc->gone_us;
	v->deadline_us = sc->deadline_us;
	v->exit_code = sc->exit_code;
	v->requests = sc->requests;
	memcpy(v->statuses, sc->statuses, sizeof(v->statuses));
}

const char *decide_file_name(enum decide_file f)
{
	return f < DECIDE_NFILES ? file_names[f] : "?";
}

/* ---- events ------------------------------------------------------------------- */

static const char *const event_names[] = {
	[DECIDE_EV_APP_SEEN] = "app-seen",
	[DECIDE_EV_APP_EXITED] = "app-exited",
	[DECIDE_EV_APP_STATUS] = "app-status",
	[DECIDE_EV_APP_RENAMED] = "app-renamed",
	[DECIDE_EV_APP_FORGET] = "app-forget",
	[DECIDE_EV_APP_REPORTS_AS] = "app-reports-as",
	[DECIDE_EV_APP_REPORT] = "app-report",
	[DECIDE_EV_COMMAND_ENDED] = "command-ended",
	[DECIDE_EV_SIDECAR_SEEN] = "sidecar-seen",
	[DECIDE_EV_SIDECAR_EXITED] = "sidecar-exited",
	[DECIDE_EV_SIDECAR_STATUS] = "sidecar-status",
	[DECIDE_EV_SIDECAR_GONE] = "sidecar-gone",
	[DECIDE_EV_NO_ENDPOINT] = "no-endpoint",
	[DECIDE_EV_CATCHES] = "catches",
	[DECIDE_EV_SIGNAL_RESULT] = "signal-result",
	[DECIDE_EV_HTTP_RESULT] = "http-result",
	[DECIDE_EV_WRITTEN] = "written",
	[DECIDE_EV_FOUND] = "found",
	[DECIDE_EV_PENDING] = "pending",
	[DECIDE_EV_POLLING] = "polling",
	[DECIDE_EV_CONTAINERS] = "containers",
	[DECIDE_EV_PIDS_MOVED] = "pids-moved",
	[DECIDE_EV_RESCANNED] = "rescanned",
	[DECIDE_EV_TERMINATE] = "terminate",
	[DECIDE_EV_DRAIN_NOW] = "drain-now",
};

const char *decide_event_name(enum decide_event_kind kind)
{
	return (size_t)kind < ARRAY_SIZE(event_names) && event_names[kind] ? event_names[kind] : "?";
}

/* Whether the event is about one sidecar (ev->sidecar). */
static bool about_sidecar(enum decide_event_kind kind)
{
	switch (kind) {
	case DECIDE_EV_SIDECAR_SEEN:
	case DECIDE_EV_SIDECAR_EXITED:
	case DECIDE_EV_SIDECAR_STATUS:
	case DECIDE_EV_SIDECAR_GONE:
	case DECIDE_EV_NO_ENDPOINT:
	case DECIDE_EV_CATCHES:
	case DECIDE_EV_SIGNAL_RESULT:
	case DECIDE_EV_HTTP_RESULT:
		return true;
	default:
		return false;
	}
}

static bool dispatch(struct decide *d, const struct decide_event *ev, int64_t now)
{
	switch (ev->kind) {
	case DECIDE_EV_APP_SEEN: return app_seen(d, ev->id, ev->name, now);
	case DECIDE_EV_APP_EXITED: return app_exited(d, ev->id, now);
	case DECIDE_EV_APP_STATUS: return app_status(d, ev->id, ev->code, now);
	case DECIDE_EV_APP_RENAMED: return app_renamed(d, ev->id, ev->name);
	case DECIDE_EV_APP_FORGET: return app_forget(d, ev->id);
	case DECIDE_EV_APP_REPORTS_AS: return app_reports_as(d, ev->id, ev->name);
	case DECIDE_EV_APP_REPORT: return app_report(d, ev->name, ev->code, now);
	case DECIDE_EV_COMMAND_ENDED: return command_ended(d, ev->code, now);
	case DECIDE_EV_SIDECAR_SEEN: return sidecar_seen(d, ev->sidecar, now);
	case DECIDE_EV_SIDECAR_EXITED: return sidecar_exited(d, ev->sidecar, ev->id, ev->pid, now);
	case DECIDE_EV_SIDECAR_STATUS: return sidecar_status(d, ev->sidecar, ev->code, now);
	case DECIDE_EV_SIDECAR_GONE: return sidecar_gone(d, ev->sidecar, now);
	case DECIDE_EV_NO_ENDPOINT: return sidecar_no_endpoint(d, ev->sidecar);
	case DECIDE_EV_CATCHES: return sidecar_catches(d, ev->sidecar, ev->result);
	case DECIDE_EV_SIGNAL_RESULT: return signal_result(d, ev->sidecar, ev->result, now);
	case DECIDE_EV_HTTP_RESULT: return http_result(d, ev->sidecar, ev->purpose, ev->result, now);
	case DECIDE_EV_WRITTEN: return written(d, ev->file, ev->result, now);
	case DECIDE_EV_FOUND: return found(d, ev->file);
	case DECIDE_EV_PENDING:
		d->pending_containers = ev->count;
		return true;
	case DECIDE_EV_POLLING:
		polling(d, ev->count);
		return true;
	case DECIDE_EV_CONTAINERS:
		d->pod_containers = ev->count;
		return true;
	case DECIDE_EV_PIDS_MOVED:
		d->pids_moved = true;
		return true;
	case DECIDE_EV_RESCANNED:
		rescanned(d, ev->result, now);
		return true;
	case DECIDE_EV_TERMINATE:
		terminate(d, now);
		return true;
	case DECIDE_EV_DRAIN_NOW: return drain_now(d, ev->name);
	}
	return false;
}

bool decide_event(struct decide *d, const struct decide_event *ev, int64_t now)
{
	bool sidecar = about_sidecar(ev->kind);

	/* Every sidecar event is checked here, once, against the sidecars there are. */
	if ((!sidecar || ev->sidecar < d->cfg.nsidecars) && dispatch(d, ev, now))
		return true;
	SAY(d, .kind = NOTE_IGNORED, .event = ev->kind,
	    .sidecar = sidecar && ev->sidecar < d->cfg.nsidecars ? d->cfg.sidecars[ev->sidecar].name : NULL,
	    .k = ev->sidecar);
	return false;
}
