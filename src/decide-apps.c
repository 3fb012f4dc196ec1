/*
 * decide, for the apps: their containers as they come and go, their
 * reports and exit codes (the kernel's and rearguard run's), and under
 * OnFailure their restarts, each matched to the failed attempt it
 * replaces. decide.c concludes from them that the apps are done;
 * decide-natives.c stops them after a sidecar failed. All share
 * decide-private.h.
 */
#include "config.h"

#include "decide-private.h"

#include "util.h"

#include <string.h>

/* A note about app a. */
#define SAY_APP(d, a, ...) SAY((d), .app = (a)->name, .container = (a)->id, __VA_ARGS__)

/* ---- apps ----------------------------------------------------------------- */

struct decide_app *dapps_find(struct decide *d, unsigned id)
{
	size_t i;

	for (i = 0; i < d->napps; i++)
		if (d->apps[i].id == id)
			return &d->apps[i];
	return NULL;
}

unsigned dapps_live(const struct decide *d)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < d->napps; i++)
		n += !d->apps[i].superseded;
	return n;
}

/*
 * Whether the kubelet restarts an app container that exited with code:
 * under OnFailure a failure (or a code that will never be known), under
 * Always whatever the code (one still on its way too), under Never none.
 */
static bool restarts(const struct decide *d, int code)
{
	switch (d->cfg.policy) {
	case POLICY_NEVER:
		return false;
	case POLICY_ON_FAILURE:
		return code != 0 && code != DECIDE_CODE_PENDING;
	case POLICY_ALWAYS:
		return true;
	}
	return false;
}

/* An app that exited and that the kubelet restarts in place: awaited (under deletion the kubelet restarts nothing). */
static bool awaiting_restart(const struct decide *d, const struct decide_app *a)
{
	return a->exited && !a->superseded && !a->gave_up && d->term_us == 0 && restarts(d, a->code);
}

static bool app_finished(const struct decide *d, const struct decide_app *a)
{
	if (!a->exited)
		return false;
	switch (d->cfg.policy) {
	case POLICY_NEVER:
		return true;
	case POLICY_ON_FAILURE:
		if (a->code == DECIDE_CODE_PENDING)
			return false;
		/* Under deletion the kubelet restarts nothing. */
		return a->code == 0 || d->term_us != 0 || a->gave_up;
	case POLICY_ALWAYS:
		/* Every exit is followed by a restart, but in a deletion: then, whatever the code, it is over. */
		return d->term_us != 0;
	}
	return true;
}

bool dapps_all_finished(const struct decide *d)
{
	bool all = true;
	size_t i;

	for (i = 0; i < d->napps; i++)
		if (!d->apps[i].superseded && !app_finished(d, &d->apps[i]))
			all = false;
	/* An app that could not be tracked may still be running: never done without it. */
	if (d->lost_apps)
		all = false;
	return all;
}

bool dapps_fewer_than_expected(const struct decide *d)
{
	unsigned live = dapps_live(d);

	return live == 0 || (d->cfg.apps_expected && live < d->cfg.apps_expected);
}

/* Every app container the pod has was seen: --apps N, and N of them. */
bool dapps_all_expected_seen(const struct decide *d)
{
	return d->cfg.apps_expected && dapps_live(d) >= d->cfg.apps_expected;
}

bool dapps_any_awaiting_restart(const struct decide *d)
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

/* a is the restart of the failed attempt old. */
static void replace_attempt(struct decide *d, struct decide_app *old, struct decide_app *a)
{
	old->superseded = true;
	a->restart = true;
	SAY_APP(d, a, .kind = NOTE_APP_RESTARTED, .other = old->id);
}

/*
 * OnFailure: a failed container coming back under a new cgroup is the same
 * app, restarted; a is the new one, under the name it has now. Looked at
 * when it appears and again when its main process execs another program:
 * an entrypoint that execs (docker-entrypoint.sh, sh -c 'exec job') shows
 * the script's name first, while the failed attempt was last seen under
 * the program's. The kubelet restarts a container only after it failed,
 * so one seen before that exit is another app, whatever its name, and so
 * is one seen while the exit's code is not known (it may be 0: then two
 * apps run the same program); and a new container replaces one failed
 * attempt, not two. Under Always every exit is followed by a restart,
 * whatever its code: only the order of exit and sighting counts.
 */
static void match_restart(struct decide *d, struct decide_app *a)
{
	struct decide_app *unnamed = NULL;
	size_t i;

	if (d->cfg.policy == POLICY_NEVER || a->restart || d->phase >= PHASE_DRAINING)
		return;
	for (i = 0; i < d->napps; i++) {
		struct decide_app *old = &d->apps[i];

		if (old == a || old->superseded || !old->exited || !restarts(d, old->code) || old->exited_us > a->seen_us)
			continue;
		if (strcmp(old->name, a->name) == 0) {
			replace_attempt(d, old, a);
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
		replace_attempt(d, unnamed, a);
}

bool dapps_seen(struct decide *d, unsigned id, const char *name, int64_t now)
{
	struct decide_app *a;

	if (dapps_find(d, id) || d->phase >= PHASE_DRAINING)
		return false;
	d->last_container_us = now;
	a = add_app(d, id, name, now);
	if (a)
		match_restart(d, a);
	return true;
}

bool dapps_exited(struct decide *d, unsigned id, int64_t now)
{
	struct decide_app *a = dapps_find(d, id);

	if (!a || a->root_exited_us)
		return false;
	a->root_exited_us = now;
	/* The kernel is asked for the code at once, then less and less often. */
	a->status_next_us = now;
	a->status_backoff_us = STATUS_FIRST_US;
	if (a->exited)
		return true;
	a->exited = true;
	a->exited_us = now;
	return true;
}

/*
 * Says why the sidecars stay, when a new code makes the app one that is
 * expected back: under OnFailure for --restart-grace at most, under Always
 * for as long as the pod runs.
 */
static void note_restart_wait(struct decide *d, const struct decide_app *a, int64_t now)
{
	bool always = d->cfg.policy == POLICY_ALWAYS;

	if (awaiting_restart(d, a))
		SAY_APP(d, a, .kind = NOTE_RESTART_WAIT, .code = a->code, .always = always,
			.us = always ? 0 : d->cfg.restart_grace_us - (now - a->exited_us));
}

/* The kubelet restarts (or not) by the container's own exit code: that one decides. */
static void note_disagreement(const struct decide *d, const struct decide_app *a, int kernel)
{
	SAY_APP(d, a, .kind = NOTE_CODES_DIFFER, .report = a->report, .reported = a->reported, .code = kernel);
}

/* Whether the kernel's code for a is still to be asked for. */
static bool status_wanted(const struct decide_app *a)
{
	return a->root_exited_us && !a->kernel_code && a->status_backoff_us > 0;
}

bool dapps_status(struct decide *d, unsigned id, int code, int64_t now)
{
	struct decide_app *a = dapps_find(d, id);
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

bool dapps_reports_as(struct decide *d, unsigned id, const char *name)
{
	struct decide_app *a = dapps_find(d, id);

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

bool dapps_report(struct decide *d, const char *name, int code, int64_t now)
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

void dapps_match_reports(struct decide *d, int64_t now)
{
	size_t i;

	for (i = 0; i < d->nreports; i++)
		match_report(d, d->reports[i].name, d->reports[i].code, now);
	d->nreports = 0;
}

bool dapps_renamed(struct decide *d, unsigned id, const char *name)
{
	struct decide_app *a = dapps_find(d, id);

	/* The name that identifies it across restarts is its program's, not the shell's before it. */
	if (!a || a->exited)
		return false;
	str_copy(a->name, name, sizeof(a->name));
	match_restart(d, a);
	return true;
}

bool dapps_forget(struct decide *d, unsigned id)
{
	struct decide_app *a = dapps_find(d, id);

	if (!a)
		return false;
	memmove(a, a + 1, (size_t)(d->apps + d->napps - a - 1) * sizeof(*a));
	d->napps--;
	return true;
}

/* OnFailure apps that did not come back within --restart-grace are done; under Always one always comes back. */
void dapps_expire_restart_grace(struct decide *d, struct pass *p)
{
	size_t i;

	if (d->cfg.policy != POLICY_ON_FAILURE)
		return;
	for (i = 0; i < d->napps; i++) {
		struct decide_app *a = &d->apps[i];

		if (!awaiting_restart(d, a) || !dpriv_reached(p, a->exited_us + d->cfg.restart_grace_us) ||
		    !dpriv_go(p))
			continue;
		a->gave_up = true;
		SAY_APP(d, a, .kind = NOTE_RESTART_GIVEN_UP, .us = d->cfg.restart_grace_us);
	}
}

/*
 * Exit codes the kernel did not publish within STATUS_GIVE_UP_US of the
 * root's exit are unknown. From the root's exit, not the app's: an app that
 * reported long before its root exited is asked about all the same.
 */
void dapps_expire_statuses(struct decide *d, struct pass *p)
{
	size_t i;

	for (i = 0; i < d->napps; i++) {
		struct decide_app *a = &d->apps[i];

		if (!status_wanted(a) || !dpriv_reached(p, a->root_exited_us + STATUS_GIVE_UP_US) || !dpriv_go(p))
			continue;
		SAY_APP(d, a, .kind = NOTE_CODE_UNPUBLISHED);
		dapps_status(d, a->id, DECIDE_CODE_UNKNOWN, p->now);
	}
}

bool dapps_status_step(struct decide *d, struct pass *p)
{
	bool due = false;
	size_t i;

	for (i = 0; i < d->napps; i++) {
		struct decide_app *a = &d->apps[i];

		if (!status_wanted(a) || !dpriv_reached(p, a->status_next_us) || !dpriv_go(p))
			continue;
		/* The attempt is made now; the next one, if needed, after the backoff. */
		a->status_next_us = p->now + a->status_backoff_us;
		a->status_backoff_us = dpriv_min64(a->status_backoff_us * 2, STATUS_MAX_US);
		due = true;
	}
	return due;
}

bool dapps_codes_awaited(const struct decide *d)
{
	size_t i;

	for (i = 0; i < d->napps; i++)
		if (d->apps[i].exited && d->apps[i].code == DECIDE_CODE_PENDING)
			return true;
	return false;
}

/* ---- views -------------------------------------------------------------------- */

size_t decide_app_count(const struct decide *d)
{
	return d->napps;
}

bool decide_app_view(const struct decide *d, size_t i, struct decide_app_view *v)
{
	const struct decide_app *a;

	memset(v, 0, sizeof(*v));
	if (i >= d->napps)
		return false;
	a = &d->apps[i];
	v->id = a->id;
	v->name = a->name;
	v->state = a->superseded ? DECIDE_APP_RESTARTED : a->exited ? DECIDE_APP_EXITED : DECIDE_APP_RUNNING;
	v->code = a->code;
	v->gave_up = a->gave_up;
	v->report = a->report[0] ? a->report : NULL;
	v->reported = a->reported;
	v->signal = a->signal;
	v->seen_us = a->seen_us;
	v->exited_us = a->exited_us;
	return true;
}
