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
		d->sidecars[i].ready_backoff_us = READY_POLL_FAST_US;
		d->sidecars[i].retry_us = INT64_MAX;
		d->sidecars[i].exit_code = DECIDE_CODE_PENDING;
	}
	for (i = 0; i < DECIDE_NFILES; i++)
		d->files[i].backoff_us = WRITE_RETRY_FIRST_US;
	return 0;
}

void decide_free(struct decide *d)
{
	free(d->apps);
	free(d->reports);
	free(d->natives);
	free(d->sidecars);
	memset(d, 0, sizeof(*d));
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

/* a is the restart of the failed attempt old. */
static void replace_attempt(struct decide_app *old, struct decide_app *a)
{
	old->superseded = true;
	a->restart = true;
	log_msg(LOG_INFO, FIELDS(LF_STR("app", a->name), LF_INT("container", a->id), LF_INT("replaces", old->id)),
		"app restarted: waiting for the new attempt");
}

/*
 * OnFailure: a failed container coming back under a new cgroup is the same
 * app, restarted; a is the new one, under the name it has now. Looked at
 * when it appears and again when its main process execs another program:
 * an entrypoint that execs (docker-entrypoint.sh, sh -c 'exec job') shows
 * the script's name first, while the failed attempt was last seen under
 * the program's. The kubelet restarts a container only after it exited,
 * so one seen before that exit is another app, whatever its name; and a
 * new container replaces one failed attempt, not two.
 */
static void match_restart(struct decide *d, struct decide_app *a)
{
	struct decide_app *unnamed = NULL;
	size_t i;

	if (d->cfg.policy != POLICY_ON_FAILURE || a->restart || d->phase >= PHASE_DRAINING)
		return;
	for (i = 0; i < d->napps; i++) {
		struct decide_app *old = &d->apps[i];

		if (old == a || old->superseded || !old->exited || old->code == 0 || old->exited_us > a->seen_us)
			continue;
		if (strcmp(old->name, a->name) == 0) {
			replace_attempt(old, a);
			return;
		}
		/*
		 * An attempt that exited before its program was seen bears its
		 * runtime's name, and so may the restart: either may be any
		 * app's. The earliest such failure is the one replaced, when no
		 * name matches (one app per attempt, as the kubelet restarts).
		 */
		if (!unnamed && (runtime_init_name(old->name) || runtime_init_name(a->name)))
			unnamed = old;
	}
	if (unnamed)
		replace_attempt(unnamed, a);
}

void decide_app_seen(struct decide *d, unsigned id, const char *name, int64_t now)
{
	struct decide_app *a;

	if (find_app(d, id) || d->phase >= PHASE_DRAINING)
		return;
	d->last_container_us = now;
	a = add_app(d, id, name, now);
	if (a)
		match_restart(d, a);
}

void decide_app_exited(struct decide *d, unsigned id, int64_t now)
{
	struct decide_app *a = find_app(d, id);

	if (!a || a->root_exited)
		return;
	a->root_exited = true;
	/* The kernel is asked for the code at once, then less and less often. */
	a->status_next_us = now;
	a->status_backoff_us = STATUS_FIRST_US;
	if (a->exited)
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

/* Whether the kernel's code for a is still to be asked for. */
static bool status_wanted(const struct decide_app *a)
{
	return a->root_exited && !a->kernel_code && a->status_backoff_us > 0;
}

void decide_app_status(struct decide *d, unsigned id, int code, int64_t now)
{
	struct decide_app *a = find_app(d, id);
	int before;

	if (!a || code == DECIDE_CODE_PENDING)
		return; /* not yet: DECIDE_STATUS comes again on decide's clock */
	a->status_backoff_us = 0;
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
	/* Draining: no rescan is needed any more; the report only completes the summary. */
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

void decide_app_renamed(struct decide *d, unsigned id, const char *name)
{
	struct decide_app *a = find_app(d, id);

	/* The name that identifies it across restarts is its program's, not the shell's before it. */
	if (a && !a->exited) {
		str_copy(a->name, name, sizeof(a->name));
		match_restart(d, a);
	}
}

void decide_app_forget(struct decide *d, unsigned id)
{
	struct decide_app *a = find_app(d, id);

	if (!a)
		return;
	memmove(a, a + 1, (size_t)(d->apps + d->napps - a - 1) * sizeof(*a));
	d->napps--;
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

/* Exit codes the kernel did not publish within STATUS_GIVE_UP_US are unknown. */
static void expire_statuses(struct decide *d, int64_t now)
{
	size_t i;

	for (i = 0; i < d->napps; i++) {
		struct decide_app *a = &d->apps[i];

		if (!status_wanted(a) || now < a->exited_us + STATUS_GIVE_UP_US)
			continue;
		log_msg(LOG_DEBUG, FIELDS(LF_STR("app", a->name), LF_INT("container", a->id)),
			"exit code not published by the kernel: unknown");
		decide_app_status(d, a->id, DECIDE_CODE_UNKNOWN, now);
	}
	for (i = 0; i < d->cfg.nsidecars; i++) {
		struct decide_sidecar *sc = &d->sidecars[i];

		while (sc->codes_pending && sc->status_backoff_us && now >= sc->exited_us + STATUS_GIVE_UP_US)
			decide_sidecar_status(d, i, DECIDE_CODE_UNKNOWN, now);
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

/* ---- native sidecars ---------------------------------------------------------- */

const char *decide_native_known_by(enum decide_native_by by)
{
	static const char *const words[] = { "spec", "first", "restart" };

	return by < ARRAY_SIZE(words) ? words[by] : "?";
}

void decide_native_seen(struct decide *d, unsigned id, const char *name, enum decide_native_by by, int64_t now)
{
	struct decide_native *n;
	size_t i;

	for (i = 0; i < d->nnatives; i++)
		if (d->natives[i].id == id)
			return;
	if (d->nnatives == d->capnatives) {
		size_t cap = d->capnatives ? d->capnatives * 2 : 4;

		n = realloc(d->natives, cap * sizeof(*n));
		if (!n) {
			/* Only the summary's list is short of it: a native sidecar needs nothing from us. */
			log_error("out of memory: native sidecar %s not listed", name);
			return;
		}
		d->natives = n;
		d->capnatives = cap;
	}
	/* The one it replaces: the first of its name that exited and has not come back. */
	for (i = 0; by == NATIVE_BY_RESTART && i < d->nnatives; i++) {
		if (d->natives[i].exited && !d->natives[i].replaced && strcmp(d->natives[i].name, name) == 0) {
			d->natives[i].replaced = true;
			break;
		}
	}
	n = &d->natives[d->nnatives++];
	memset(n, 0, sizeof(*n));
	n->id = id;
	str_copy(n->name, name, sizeof(n->name));
	n->by = by;
	n->seen_us = now;
	log_msg(LOG_INFO,
		FIELDS(LF_STR("native", name), LF_INT("container", id), LF_STR("known_by", decide_native_known_by(by))),
		"%s: never waited for nor stopped (the kubelet restarts it, and stops it after the apps)",
		by == NATIVE_BY_RESTART ? "native sidecar restarted by the kubelet" : "native sidecar");
}

void decide_native_exited(struct decide *d, unsigned id, int64_t now)
{
	size_t i;

	for (i = 0; i < d->nnatives; i++) {
		struct decide_native *n = &d->natives[i];

		if (n->id != id || n->exited)
			continue;
		n->exited = true;
		n->exited_us = now;
		log_msg(LOG_INFO, FIELDS(LF_STR("native", n->name), LF_INT("container", id)),
			"native sidecar exited: the kubelet restarts it while the pod runs; its new container is "
			"known by its name");
		return;
	}
}

void decide_native_forget(struct decide *d, unsigned id)
{
	size_t i;

	for (i = 0; i < d->nnatives; i++) {
		if (d->natives[i].id != id)
			continue;
		memmove(&d->natives[i], &d->natives[i + 1], (d->nnatives - i - 1) * sizeof(*d->natives));
		d->nnatives--;
		return;
	}
}

bool decide_native_restarted(const struct decide *d, const char *name, int64_t since)
{
	size_t i;

	for (i = 0; i < d->nnatives; i++) {
		const struct decide_native *n = &d->natives[i];

		/* A spec's native is known again by its spec, under the spec's name, not its program's. */
		if (n->by != NATIVE_BY_SPEC && n->exited && !n->replaced && n->exited_us <= since &&
		    strcmp(n->name, name) == 0)
			return true;
	}
	return false;
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

void decide_sidecar_seen(struct decide *d, size_t sidecar, int64_t now)
{
	if (sidecar >= d->cfg.nsidecars)
		return;
	d->sidecars[sidecar].seen = true;
	d->sidecars[sidecar].seen_us = now;
	d->sidecars[sidecar].containers++;
	plan_check(d, sidecar);
}

void decide_sidecar_exited(struct decide *d, size_t sidecar, int64_t now)
{
	struct decide_sidecar *sc;

	if (sidecar >= d->cfg.nsidecars)
		return;
	sc = &d->sidecars[sidecar];
	if (sc->containers > 0)
		sc->containers--;
	/* Nobody asked it to stop: its code, when it comes, says what happened. */
	if (sc->state == SC_UP && d->phase < PHASE_DRAINING)
		sc->died++;
	sc->codes_pending++;
	sc->exited_us = now;
	sc->status_next_us = now;
	sc->status_backoff_us = STATUS_FIRST_US;
}

/* Says what a sidecar's non-zero exit will do to the pod, and what to change. */
static void warn_exit_code(const struct decide *d, size_t k, int code)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];

	log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name), LF_INT("exit_code", code), LF_STR("fix", cfg->exit_fix)),
		"the sidecar exited %d: %s", code,
		d->cfg.policy == POLICY_NEVER
			? "under restartPolicy Never the pod will be marked Failed although the apps succeeded"
			: "under restartPolicy OnFailure the kubelet will restart it, and the pod will not complete");
}

/* What became of a sidecar that exited while the apps ran, by its exit code (or DECIDE_CODE_UNKNOWN). */
static const char *death_cause(int code, char *buf, size_t len)
{
	int sig = code > 128 && code < 128 + 65 ? code - 128 : 0;

	if (code == DECIDE_CODE_UNKNOWN)
		return "exited while the apps ran, with no stop from rearguard (its exit code is unknown)";
	if (code == 0)
		return "exited 0 while the apps ran, with no stop from rearguard";
	if (sig == SIGKILL)
		snprintf(buf, len,
			 "was killed by SIGKILL (exit code %d) while the apps ran, with no stop from rearguard: "
			 "most likely by the out-of-memory killer (see its memory limit), or by a person",
			 code);
	else if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT)
		snprintf(buf, len,
			 "was ended by SIG%s (exit code %d) while the apps ran, with no stop from rearguard: "
			 "by a person or another program",
			 signal_name(sig), code);
	else if (sig == SIGSEGV || sig == SIGABRT || sig == SIGBUS || sig == SIGFPE || sig == SIGILL)
		snprintf(buf, len, "crashed (SIG%s, exit code %d) while the apps ran", signal_name(sig), code);
	else
		snprintf(buf, len, "exited %d on its own while the apps ran: it failed (its own log says why)", code);
	return buf;
}

/* What a sidecar's exit while the apps ran means for them and the pod: who restarts it, if anyone. */
static const char *death_meaning(const struct decide *d, int code)
{
	if (d->cfg.policy == POLICY_NEVER)
		return code == 0 ? "The apps have lost it, and under restartPolicy Never nothing restarts it"
				 : "The apps have lost it, under restartPolicy Never nothing restarts it, and its "
				   "exit code will mark the pod Failed";
	if (code == 0)
		return "Under restartPolicy OnFailure the kubelet restarts only a container that failed: this one "
		       "stays gone, and the apps have lost it";
	return "Under restartPolicy OnFailure the kubelet restarts a container that exited non-zero, in place and "
	       "after its back-off (the apps are without it meanwhile); rearguard takes the new container for the "
	       "same sidecar, and stops it after the apps";
}

/*
 * --on-sidecar-exit=fail: a sidecar failed while the apps ran, under Never:
 * nothing will restart it, and the apps would hang without it until the
 * Job's activeDeadlineSeconds. They are stopped the way the kubelet stops
 * a container, so that the pod fails now and the Job's backoffLimit can
 * retry it. Not under OnFailure (the kubelet restarts a failed sidecar
 * itself, and would restart the apps too), not for an exit 0 (a sidecar
 * that ends by its own choice, as Vault Agent's exit_after_auth does),
 * and not while the pod is being deleted (the kubelet stops the apps).
 */
static void start_apps_stop(struct decide *d, size_t k, int code, int64_t now)
{
	const char *name = d->cfg.sidecars[k].name, *why = NULL;
	char dur[32];

	if (d->cfg.on_sidecar_exit != SIDECAR_EXIT_FAIL || d->apps_stop_us || d->phase >= PHASE_DRAINING)
		return;
	if (d->cfg.policy != POLICY_NEVER)
		why = "under restartPolicy OnFailure the kubelet restarts a failed sidecar itself, and would "
		      "restart apps stopped now";
	else if (code == 0)
		why = "it exited 0, which a sidecar does by its own choice: only a failure stops the apps";
	else if (d->term_us)
		why = "the pod is being deleted: the kubelet stops the apps itself";
	if (why) {
		log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", name)),
			"--on-sidecar-exit=fail: the apps are not stopped: %s", why);
		return;
	}
	d->apps_stop_us = now;
	d->apps_stop_for = k;
	log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", name), LF_STR("reason", "sidecar-exited")),
		"--on-sidecar-exit=fail: stopping the apps as the kubelet would (SIGTERM to each main process, SIGKILL "
		"to every process --kill-after %s later), so that the Job fails now and its backoffLimit can retry it",
		fmt_us(d->cfg.kill_after_us, dur));
}

/*
 * A sidecar exited while the apps ran and before any stop of ours: its
 * code says what most likely happened. The warning about exit codes and
 * their fix (warn_exit_code) is for a stop that went wrong; none was sent.
 */
static void sidecar_died(struct decide *d, size_t k, int code, int64_t now)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	bool hint = d->cfg.policy == POLICY_NEVER && code != 0 && d->cfg.on_sidecar_exit == SIDECAR_EXIT_WARN;
	char cause[256];

	log_msg(code != 0 ? LOG_ERROR : LOG_WARN,
		FIELDS(LF_STR("sidecar", cfg->name), LF_INT("exit_code", code),
		       LF_STR("signal", code > 128 && code < 128 + 65 ? signal_name(code - 128) : NULL)),
		"sidecar %s %s. %s%s", cfg->name, death_cause(code, cause, sizeof(cause)), death_meaning(d, code),
		hint ? ": the apps run on without it until they end, or until the Job's activeDeadlineSeconds "
		       "(--on-sidecar-exit=fail stops them instead, so that the Job fails now and its backoffLimit "
		       "can retry it)"
		     : "");
	start_apps_stop(d, k, code, now);
}

void decide_sidecar_status(struct decide *d, size_t sidecar, int code, int64_t now)
{
	struct decide_sidecar *sc;
	bool died;

	if (sidecar >= d->cfg.nsidecars || code == DECIDE_CODE_PENDING)
		return;
	sc = &d->sidecars[sidecar];
	if (sc->codes_pending > 0)
		sc->codes_pending--;
	if (!sc->codes_pending)
		sc->status_backoff_us = 0;
	died = sc->died > 0;
	if (died) {
		sc->died--;
		sidecar_died(d, sidecar, code, now);
	}
	if (code == DECIDE_CODE_UNKNOWN) {
		if (sc->exit_code == DECIDE_CODE_PENDING && !sc->codes_pending)
			sc->exit_code = DECIDE_CODE_UNKNOWN;
		return;
	}
	/* Of several containers, the first that fails the pod is the one to tell. */
	if (sc->exit_code <= 0)
		sc->exit_code = code;
	if (code != 0 && !died)
		warn_exit_code(d, sidecar, code);
}

void decide_sidecar_no_endpoint(struct decide *d, size_t sidecar)
{
	if (sidecar < d->cfg.nsidecars) {
		d->sidecars[sidecar].no_check = true;
		d->sidecars[sidecar].check_due = false;
	}
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
	sc->signal_due = false;
}

void decide_sidecar_catches(struct decide *d, size_t sidecar, int result, int64_t now)
{
	(void)now;
	if (sidecar >= d->cfg.nsidecars)
		return;
	d->sidecars[sidecar].catch_inflight = false;
	d->sidecars[sidecar].catch_result = result;
}

/* Failures that pass: the same signal is sent again shortly. */
static bool transient(int err)
{
	return err == -EMFILE || err == -ENFILE || err == -ENOMEM || err == -EAGAIN || err == -EINTR ||
	       err == -ENOBUFS;
}

void decide_signal_result(struct decide *d, size_t sidecar, int err, int64_t now)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[sidecar];
	struct decide_sidecar *sc = &d->sidecars[sidecar];

	/* ESRCH: it exited meanwhile; its watch reports that. */
	if (err == 0 || err == -ESRCH || sc->state == SC_GONE || sc->state == SC_FAILED)
		return;
	if (transient(err)) {
		sc->signal_due = true;
		sc->retry_us = now + SIGNAL_RETRY_US;
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name), LF_STR("error", strerror(-err))),
			"cannot signal the sidecar now: trying again shortly");
		return;
	}
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

void decide_app_signal_result(struct decide *d, unsigned id, int err, int64_t now)
{
	struct decide_app *a = find_app(d, id);

	/* ESRCH: it exited meanwhile; its watch reports that. */
	if (!a || err == 0 || err == -ESRCH)
		return;
	if (transient(err)) {
		/* The same signal again shortly. */
		a->signal = a->signal == SIGKILL ? SIGTERM : 0;
		a->signal_next_us = now + SIGNAL_RETRY_US;
		log_msg(LOG_WARN,
			FIELDS(LF_STR("app", a->name), LF_INT("container", id), LF_STR("error", strerror(-err))),
			"cannot signal the app now: trying again shortly");
		return;
	}
	/* Not sent: the summary names only the signals that went out. */
	a->signal_err = err;
	a->signal = a->signal == SIGKILL ? SIGTERM : 0;
	if (err == -EPERM)
		log_msg(LOG_ERROR, FIELDS(LF_STR("app", a->name), LF_INT("container", id)),
			"not permitted to signal the app: it runs on without its sidecar; for --on-sidecar-exit=fail, "
			"run rearguard under the apps' uid (securityContext.runAsUser), or as root with the KILL "
			"capability");
	else
		log_msg(LOG_ERROR,
			FIELDS(LF_STR("app", a->name), LF_INT("container", id), LF_STR("error", strerror(-err))),
			"cannot signal the app");
}

/* ---- readiness ---------------------------------------------------------- */

/*
 * Whether sidecar k counts: detection's sidecars only once a process of
 * theirs was seen; a native one never (the kubelet starts and stops it).
 */
static bool counts(const struct decide *d, size_t k)
{
	return !d->cfg.sidecars[k].native && (!d->cfg.sidecars[k].optional || d->sidecars[k].seen);
}

/* Detection only, and nothing detected yet: nothing is ready, for there may be a sidecar to come. */
static bool none_detected(const struct decide *d)
{
	size_t k;

	for (k = 0; k < d->cfg.nsidecars; k++)
		if (counts(d, k))
			return false;
	for (k = 0; k < d->cfg.nsidecars; k++)
		if (d->cfg.sidecars[k].optional)
			return true;
	return false;
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
	log_msg(LOG_INFO,
		FIELDS(LF_STR("sidecar", d->cfg.sidecars[k].name), LF_MS("after", now - d->started_us),
		       LF_INT("polls", sc->ready_polls)),
		"sidecar ready%s",
		d->cfg.sidecars[k].ready_url ? ""
		: d->cfg.sidecars[k].confirm == CONFIRM_PORT ? " (no ready URL, and its process cannot be seen)"
							     : " (no ready URL: its process is running)");
}

/* A sidecar without a ready URL is ready when its process shows up: rescans find it. */
static bool awaiting_sidecar_process(const struct decide *d)
{
	size_t i;

	if (!readiness_pending(d))
		return false;
	for (i = 0; i < d->cfg.nsidecars; i++)
		if (counts(d, i) && !d->cfg.sidecars[i].ready_url && !d->sidecars[i].seen &&
		    d->cfg.sidecars[i].confirm == CONFIRM_PROCESSES)
			return true;
	/* Detection: a sidecar may start after the agent; it is seen only by looking. */
	return none_detected(d);
}

static void log_ready_timeout(struct decide *d)
{
	char list[512] = "", what[64], dur[32];
	size_t i, n = 0;

	for (i = 0; i < d->cfg.nsidecars; i++) {
		const struct decide_sidecar *sc = &d->sidecars[i];

		if (sc->ready || !counts(d, i) || n >= sizeof(list) - 1)
			continue;
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s (%s)", n ? ", " : "", d->cfg.sidecars[i].name,
				      !d->cfg.sidecars[i].ready_url ? "no process seen"
				      : sc->ready_last ? decide_result_phrase(sc->ready_last, what) : "no answer yet");
		if (d->cfg.ready_gates_apps)
			log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", d->cfg.sidecars[i].name),
						  LF_STR("url", d->cfg.sidecars[i].ready_url)),
				"sidecar not ready within %s: not starting the command (--no-wait starts it regardless)",
				fmt_us(d->cfg.ready_timeout_us, dur));
	}
	if (none_detected(d))
		log_msg(LOG_ERROR, NULL, "no known sidecar detected within --ready-timeout %s: the ready file will not "
			"be written; still watching the apps", fmt_us(d->cfg.ready_timeout_us, dur));
	else if (!d->cfg.ready_gates_apps)
		log_msg(LOG_ERROR, FIELDS(LF_STR("not_ready", list)),
			"sidecars not ready within --ready-timeout %s: the ready file will not be written; "
			"still watching the apps", fmt_us(d->cfg.ready_timeout_us, dur));
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
		log_info(d->cfg.ready_gates_apps ? "every sidecar is ready: starting the command"
			 : d->cfg.files		 ? "every sidecar is ready: writing the ready file"
						 : "every sidecar is ready (no ready file: the file protocol is unavailable)");
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
		log_ready_timeout(d);
		return;
	}
	if (none_detected(d)) {
		d->ready_expired = true;
		log_ready_timeout(d);
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

static void ready_result(struct decide *d, size_t k, int result, int64_t now)
{
	struct decide_sidecar *sc = &d->sidecars[k];
	char what[64], dur[32];

	sc->ready_inflight = false;
	sc->ready_last = result;
	if (sc->ready || !readiness_pending(d))
		return;
	if (is_2xx(result)) {
		mark_ready(d, k, now);
		return;
	}
	/* Fast while the proxy may be starting, then backing off. */
	if (now - d->started_us >= READY_FAST_WINDOW_US)
		sc->ready_backoff_us = min64(sc->ready_backoff_us * 2, READY_POLL_MAX_US);
	sc->ready_next_us = now + sc->ready_backoff_us;
	log_msg(LOG_DEBUG, FIELDS(LF_STR("sidecar", d->cfg.sidecars[k].name)), "not ready yet (%s): next poll in %s",
		decide_result_phrase(result, what), fmt_us(sc->ready_backoff_us, dur));
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

void decide_written(struct decide *d, enum decide_file file, int err, int64_t now)
{
	struct decide_file_state *fs;
	char dur[32];

	if (file >= DECIDE_NFILES)
		return;
	fs = &d->files[file];
	if (!fs->inflight)
		return;
	fs->inflight = false;
	if (err == 0) {
		fs->written = true;
		if (fs->failures)
			log_msg(LOG_INFO, FIELDS(LF_STR("file", file_names[file]), LF_INT("attempts", fs->failures + 1)),
				"wrote the file after all");
		return;
	}
	if (!fs->failures)
		fs->first_failure_us = now;
	fs->failures++;
	fs->err = err;
	fs->next_us = now + fs->backoff_us;
	/* The first failure, and every tenth, are worth a line. */
	if (fs->failures % 10 == 1)
		log_msg(LOG_WARN,
			FIELDS(LF_STR("file", file_names[file]), LF_STR("error", strerror(-err)),
			       LF_INT("attempts", fs->failures)),
			"cannot write the file: trying again in %s", fmt_us(fs->backoff_us, dur));
	fs->backoff_us = min64(fs->backoff_us * 2, WRITE_RETRY_MAX_US);
}

bool decide_ready_written(const struct decide *d)
{
	return d->files[DECIDE_FILE_READY].written;
}

/* ---- HTTP ------------------------------------------------------------------- */

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
		if (cfg->confirm == CONFIRM_PORT) {
			/* Nothing to watch: look at the door instead. */
			sc->retry_us = now;
			sc->backoff_us = GONE_PROBE_FIRST_US;
			log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", cfg->name)),
				"stop request %s: waiting for it to stop accepting connections (--stop-timeout %s)",
				decide_result_phrase(result, what), fmt_us(d->cfg.stop_timeout_us, dur));
		} else {
			log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", cfg->name)),
				"stop request %s: waiting for its processes to exit (--stop-timeout %s)",
				decide_result_phrase(result, what), fmt_us(d->cfg.stop_timeout_us, dur));
		}
		return;
	}
	if (is_refusal(result)) {
		sc->stop_refused = true;
		if (cfg->confirm == CONFIRM_PORT)
			log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", cfg->name)),
				"stop endpoint %s, and without a shared PID namespace no signal can be sent: "
				"giving up on it", decide_result_phrase(result, what));
		else
			log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name)),
				"stop endpoint %s: falling back to SIGTERM", decide_result_phrase(result, what));
		return;
	}
	if (now + sc->backoff_us >= sc->deadline_us) {
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name)),
			"stop request %s: no time left for another try within --stop-timeout",
			decide_result_phrase(result, what));
		return;
	}
	sc->retry_us = now + sc->backoff_us;
	log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", cfg->name), LF_INT("attempt", sc->requests)),
		"stop request %s: trying again in %s", decide_result_phrase(result, what), fmt_us(sc->backoff_us, dur));
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
		ready_result(d, sidecar, result, now);
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
					decide_result_phrase(result, what), fmt_us(cfg->drain_time_us, dur));
		} else {
			sc->deadline_us = now;
			log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name)),
				"drain request %s: going on with the stop request", decide_result_phrase(result, what));
		}
		return;
	case DECIDE_HTTP_STOP:
		sc->http_inflight = false;
		note_status(sc, result);
		http_stop_result(d, sidecar, result, now);
		return;
	case DECIDE_HTTP_CHECK:
		sc->check_inflight = false;
		if (result == -ECONNREFUSED)
			log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name), LF_STR("url", cfg->stop_url)),
				"the sidecar is ready, but its stop endpoint refuses connections: the stop request will "
				"fail and a signal will have to stop it");
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

/* ---- the pod's processes ----------------------------------------------------- */

void decide_pending(struct decide *d, unsigned n)
{
	d->pending_containers = n;
}

void decide_polling(struct decide *d, unsigned n)
{
	if (n && !d->polled)
		d->next_poll_us = 0;
	d->polled = n;
	if (n > d->polled_most)
		d->polled_most = n;
}

void decide_rescanned(struct decide *d, int err, int64_t now)
{
	size_t i;

	d->rescan_inflight = false;
	d->pids_moved = false;
	if (err < 0) {
		/* Nothing was learnt: no confirmation, no report matched; again shortly. */
		if (!d->rescan_err)
			log_msg(LOG_WARN, FIELDS(LF_STR("error", strerror(-err))),
				"cannot rescan /proc: trying again shortly");
		d->rescan_err = err;
		d->rescan_retry_us = now + RESCAN_RETRY_US;
		return;
	}
	if (d->rescan_err)
		log_info("rescanning /proc works again");
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

void decide_pids_moved(struct decide *d)
{
	d->pids_moved = true;
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
	if (fewer_than_expected(d)) {
		/* Only when the apps that did appear are all finished: a running one still needs the proxy. */
		if (all && now >= d->started_us + d->cfg.startup_timeout_us)
			return "startup-timeout";
		return NULL;
	}
	if (!all)
		return NULL;
	return d->apps_stop_us ? "sidecar-exited" : "apps-done";
}

/* The apps are over by themselves, or stopped after a sidecar failed: the kubelet may still start a container. */
static bool apps_over(const char *reason)
{
	return strcmp(reason, "apps-done") == 0 || strcmp(reason, "sidecar-exited") == 0;
}

/* A sidecar named with --sidecar whose container was never seen: the kubelet may still start it. */
static bool never_started(const struct decide *d, size_t k)
{
	return counts(d, k) && !d->sidecars[k].seen && d->cfg.sidecars[k].confirm == CONFIRM_PROCESSES;
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
	char list[512] = "", dur[32];
	size_t k, n = 0;

	if (d->sidecar_wait_over || d->cfg.sidecar_wait_us <= 0 || !apps_over(reason))
		return false;
	for (k = 0; k < d->cfg.nsidecars; k++)
		if (never_started(d, k) && n < sizeof(list) - 1)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "",
					      d->cfg.sidecars[k].name);
	if (!n) {
		if (d->sidecar_wait_from_us) {
			log_msg(LOG_INFO, FIELDS(LF_MS("waited", now - d->sidecar_wait_from_us)),
				"the awaited sidecar started: stopping it");
			d->sidecar_wait_over = true;
		}
		return false;
	}
	if (!d->sidecar_wait_from_us) {
		d->sidecar_wait_from_us = now;
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecars", list)),
			"apps done, but sidecar %s has not started yet: waiting for it up to --sidecar-wait %s, "
			"to stop it (the kubelet starts a sidecar listed after the apps after them)",
			list, fmt_us(d->cfg.sidecar_wait_us, dur));
		return true;
	}
	if (now < d->sidecar_wait_from_us + d->cfg.sidecar_wait_us)
		return true;
	d->sidecar_wait_over = true;
	log_msg(LOG_WARN, FIELDS(LF_STR("sidecars", list)),
		"sidecar %s did not start within --sidecar-wait %s: draining without it (if it starts "
		"later nothing stops it; check its match= against the start-up log)",
		list, fmt_us(d->cfg.sidecar_wait_us, dur));
	return false;
}

/*
 * Whether "apps-done" needs one more look at /proc first: the kubelet starts
 * containers one by one, so one may have started since the last scan. Not
 * when --apps N were all seen: the pod has no other app container.
 */
static bool needs_confirmation(const struct decide *d, const char *reason)
{
	return apps_over(reason) && !d->confirmed && !all_expected_seen(d);
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
	else if (strcmp(reason, "sidecar-exited") == 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("reason", reason), LF_INT("apps", live),
					 LF_STR("sidecar", d->cfg.sidecars[d->apps_stop_for].name)),
			"apps stopped after their sidecar failed: draining the other sidecars");
	else
		log_msg(LOG_INFO, FIELDS(LF_STR("reason", reason), LF_INT("apps", live)),
			"drain requested: draining the sidecars");
}

static void start_drain(struct decide *d, const char *reason, int64_t now, struct decide_action *act)
{
	d->phase = PHASE_DRAINING;
	d->decided_us = now;
	d->reason = reason;
	d->current = d->cfg.nsidecars;
	d->files[DECIDE_FILE_APPS_DONE].wanted = d->cfg.files;
	d->files[DECIDE_FILE_APPS_DONE].next_us = now;
	log_drain_start(d, reason, now);
	act->kind = DECIDE_APPS_DONE;
	act->reason = reason;
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
	const char *sig = signal_name(cfg->stop_signal);
	char dur[32], err[64];

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
		log_msg(LOG_INFO,
			FIELDS(LF_STR("sidecar", cfg->name), LF_STR("signal", sig),
			       LF_MS("waited", now - sc->catch_from_us)),
			"%s catches SIG%s: stopping", cfg->name, sig);
		return -1;
	}
	if (!sc->catch_inflight && sc->catch_result < 0) {
		sc->catch_over = true;
		log_msg(LOG_WARN,
			FIELDS(LF_STR("sidecar", cfg->name), LF_STR("signal", sig),
			       LF_STR("error", decide_result_phrase(sc->catch_result, err))),
			"cannot tell whether %s catches SIG%s: stopping", cfg->name, sig);
		return -1;
	}
	if (now >= sc->catch_from_us + CATCH_WAIT_US) {
		sc->catch_over = true;
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name), LF_STR("signal", sig)),
			"%s does not catch SIG%s after %s: stopping anyway (it may die of the signal)", cfg->name, sig,
			fmt_us(CATCH_WAIT_US, dur));
		return -1;
	}
	if (sc->catch_inflight || now < sc->catch_next_us)
		return 0;
	/* The first look said not yet: say why the stop waits. */
	if (sc->catch_looks++ == 1)
		log_msg(
		    LOG_INFO,
		    FIELDS(LF_STR("sidecar", cfg->name), LF_STR("signal", sig), LF_MS("seen_ago", now - sc->seen_us)),
		    "waiting for %s to catch SIG%s (seen only just now; at most %s)", cfg->name, sig,
		    fmt_us(CATCH_WAIT_US, dur));
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
	char dur[32], dur2[32];

	if (sc->stop_refused) {
		if (cannot_signal(d, k, -EACCES))
			return false;
		sc->state = SC_TERMINATING;
		sc->deadline_us = now + d->cfg.kill_after_us;
		signal_action(d, k, SIGTERM, act);
		return true;
	}
	if (cannot_signal(d, k, -ETIMEDOUT)) {
		log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", cfg->name)),
			"%s within --stop-timeout %s, and without a shared PID namespace no signal can "
			"be sent: giving up on it",
			sc->stop_accepted ? "still accepting connections" : "the stop request was not accepted",
			fmt_us(d->cfg.stop_timeout_us, dur));
		return false;
	}
	sc->state = SC_TERMINATING;
	sc->deadline_us = now + d->cfg.kill_after_us;
	if (cfg->stop_signal == SIGTERM) {
		/* It has had its SIGTERM: a second one would only rush a drain. */
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name)), "still running %s after SIGTERM: SIGKILL in %s",
			fmt_us(d->cfg.stop_timeout_us, dur), fmt_us(d->cfg.kill_after_us, dur2));
		return false;
	}
	log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name)), "still running %s after the stop request: sending SIGTERM",
		fmt_us(d->cfg.stop_timeout_us, dur));
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
			log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", cfg->name)),
				"cannot stop the sidecar with a signal: its processes are not visible "
				"(the pod needs shareProcessNamespace: true)");
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
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", cfg->name)), "still running after SIGTERM: sending SIGKILL");
		signal_action(d, k, SIGKILL, act);
		return true;
	case SC_KILLING:
		if (now < sc->deadline_us)
			return false;
		sc->state = SC_FAILED;
		sc->err = -ETIMEDOUT;
		log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", cfg->name)),
			"still running after SIGKILL (stuck in the kernel?): giving up on it");
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
	char dur[32];
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
		log_msg(LOG_ERROR, FIELDS(LF_STR("error", strerror(-done->err))),
			"could not write the done file within %s: exiting without it (a restarted agent will drain again)",
			fmt_us(DONE_GIVE_UP_US, dur));
		done->wanted = false;
	}
	d->phase = PHASE_DONE;
	act->kind = DECIDE_EXIT;
	act->exit_code = d->exit_code;
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

/* The app a, being stopped after a sidecar failed: whether it is still to be signalled. */
static bool stoppable(const struct decide_app *a)
{
	return a->id && a->id != DECIDE_APP_COMMAND && !a->exited && !a->superseded && !a->signal_err &&
	       a->signal != SIGKILL;
}

/*
 * --on-sidecar-exit=fail: each live app container gets SIGTERM to its main
 * process, and --kill-after later SIGKILL to every process, as the
 * kubelet's grace period ends; an app container that appears meanwhile
 * gets the same.
 */
static bool apps_stop_step(struct decide *d, int64_t now, struct decide_action *act)
{
	size_t i;

	if (!d->apps_stop_us)
		return false;
	for (i = 0; i < d->napps; i++) {
		struct decide_app *a = &d->apps[i];

		if (!stoppable(a) || now < a->signal_next_us)
			continue;
		a->signal = a->signal ? SIGKILL : SIGTERM;
		a->signal_next_us = a->signal == SIGTERM ? now + d->cfg.kill_after_us : INT64_MAX;
		act->kind = DECIDE_SIGNAL_APP;
		act->app = a->id;
		act->signo = a->signal;
		act->all = a->signal == SIGKILL;
		act->urgent = true;
		return true;
	}
	return false;
}

static int64_t apps_stop_deadline(const struct decide *d)
{
	int64_t t = INT64_MAX;
	size_t i;

	for (i = 0; d->apps_stop_us && i < d->napps; i++)
		if (stoppable(&d->apps[i]))
			t = min64(t, d->apps[i].signal_next_us);
	return t;
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
	if (apps_stop_step(d, now, act))
		return true;
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

int64_t decide_deadline(const struct decide *d, int64_t now)
{
	int64_t t = INT64_MAX;
	size_t i;

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
		t = min64(t, apps_stop_deadline(d));
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
