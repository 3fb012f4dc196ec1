/*
 * decide: its phases (watching, confirming, draining, done) and the steps
 * each takes, the rescans, the conclusion that the apps are done, the
 * files of the protocol, the end, and the events' dispatch. The apps, their
 * reports and restarts are decide-apps.c's; each sidecar's readiness, stop
 * and exit code, decide-sidecar.c's; the native sidecars and the apps' stop
 * after a sidecar failed, decide-natives.c's.
 */
#include "config.h"

#include "decide-private.h"

#include "util.h"

#include <errno.h>
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
/* How long the exit waits for app exit codes and stop answers still on their way. */
#define STATUS_WAIT_US (3 * US_PER_S)
/* Processes without a pidfd are looked at this often. */
#define POLL_US (100 * US_PER_MS)
/* Files of the protocol that could not be written are tried again; done not for ever. */
#define WRITE_RETRY_FIRST_US (50 * US_PER_MS)
#define WRITE_RETRY_MAX_US (1 * US_PER_S)
#define DONE_GIVE_UP_US (10 * US_PER_S)

/*
 * The drain's reasons, one word each: the only place they are spelt. A
 * switch, not a table, so that a reason added without its word does not
 * compile (-Wswitch).
 */
const char *decide_reason_word(enum decide_reason reason)
{
	switch (reason) {
	case REASON_NONE: return NULL;
	case REASON_APPS_DONE: return "apps-done";
	case REASON_SIDECAR_EXITED: return "sidecar-exited";
	case REASON_STARTUP_TIMEOUT: return "startup-timeout";
	case REASON_TERM_GRACE: return "term-grace";
	case REASON_SECOND_SIGNAL: return "second-signal";
	case REASON_READY_TIMEOUT: return "ready-timeout";
	case REASON_RESUME: return "resume";
	case REASON_DRAIN_FILE: return "drain-file";
	case REASON_DRAIN_COMMAND: return "drain-command";
	case REASON_SIGNAL: return "signal";
	}
	return NULL;
}

/* The restart policies in Kubernetes' words, the only place they are spelt. */
const char *decide_policy_word(enum restart_policy policy)
{
	switch (policy) {
	case POLICY_NEVER: return "Never";
	case POLICY_ON_FAILURE: return "OnFailure";
	case POLICY_ALWAYS: return "Always";
	}
	return "?";
}

int decide_policy_parse(const char *word, enum restart_policy *policy)
{
	static const enum restart_policy all[] = { POLICY_NEVER, POLICY_ON_FAILURE, POLICY_ALWAYS };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(all); i++) {
		if (strcmp(word, decide_policy_word(all[i])) == 0) {
			*policy = all[i];
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- set-up, and the view of the whole ------------------------------------ */

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
	dside_init(d, now);
	for (i = 0; i < PROTOCOL_NFILES; i++)
		d->writes[i].backoff_us = WRITE_RETRY_FIRST_US;
	*out = d;
	return 0;
}

void decide_free(struct decide *d)
{
	if (!d)
		return;
	free(d->apps);
	free(d->reports);
	free(d->natives);
	free(d->sidecars);
	free(d);
}

void decide_view(const struct decide *d, struct decide_view *v)
{
	memset(v, 0, sizeof(*v));
	v->phase = d->phase;
	v->started_us = d->started_us;
	v->term_us = d->term_us;
	v->decided_us = d->decided_us;
	v->reason = d->reason;
	v->exit_code = d->exit_code;
	v->settled_us = d->settled_us;
	v->polled_most = d->polled_most;
	v->stalled_most_us = d->stalled_most_us;
	v->ready_written = d->writes[PROTOCOL_READY].written || d->command_started;
	v->ready_expired = d->ready_expired;
}

/* ---- exit codes ---------------------------------------------------------------- */

/* DECIDE_STATUS when an exit code, an app's or a sidecar's, is due to be asked for. */
static bool status_step(struct decide *d, struct pass *p)
{
	bool due = dapps_status_step(d, p);

	due |= dside_codes_step(d, p);
	if (due)
		p->act->kind = DECIDE_STATUS;
	return due;
}

/* Exit codes, the apps' and the sidecars', that were not published in time are unknown. */
static void expire_statuses(struct decide *d, struct pass *p)
{
	dapps_expire_statuses(d, p);
	dside_expire_codes(d, p);
}

/* ---- files ------------------------------------------------------------------ */

/* Which files may still be written: ready only while the apps may wait for it. */
static bool writable(const struct decide *d, enum protocol_file f)
{
	const struct decide_write *fs = &d->writes[f];

	if (!fs->wanted || fs->written || fs->inflight)
		return false;
	return f != PROTOCOL_READY || d->phase < PHASE_DRAINING;
}

static bool files_step(struct decide *d, struct pass *p)
{
	size_t f;

	for (f = 0; f < PROTOCOL_NFILES; f++) {
		struct decide_write *fs = &d->writes[f];

		if (!writable(d, f) || !dpriv_reached(p, fs->next_us) || !dpriv_go(p))
			continue;
		fs->inflight = true;
		p->act->kind = DECIDE_WRITE;
		p->act->file = f;
		p->act->reason = d->reason;
		return true;
	}
	return false;
}

static bool write_result(struct decide *d, enum protocol_file file, int err, int64_t now)
{
	struct decide_write *fs;

	if (file >= PROTOCOL_NFILES)
		return false;
	fs = &d->writes[file];
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
	fs->backoff_us = dpriv_min64(fs->backoff_us * 2, WRITE_RETRY_MAX_US);
	return true;
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

/*
 * The agent was not given the processor for us while a process was
 * expected: said once, then again only for a stall twice as long as the
 * last said (a busy node stalls often), and the longest kept.
 */
static void stalled(struct decide *d, int64_t us)
{
	if (us > d->stalled_most_us)
		d->stalled_most_us = us;
	if (us < DECIDE_STALL_US || us < 2 * d->stall_said_us)
		return;
	d->stall_said_us = us;
	SAY(d, .kind = NOTE_STALLED, .us = us);
}

static void rescanned(struct decide *d, int err, int64_t now)
{
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
	d->looked = true;
	if (d->phase == PHASE_CONFIRMING)
		d->confirmed = true;
	dapps_match_reports(d, now);
}

/* The apps are done and a named sidecar is awaited (awaiting_named_sidecar). */
static bool sidecar_wait_running(const struct decide *d)
{
	return d->sidecar_wait_from_us && !d->sidecar_wait_over;
}

/*
 * How often to rescan while watching; 0: no need. An app's restart under
 * Always is the kubelet's alone, and nothing waits for it: it is looked
 * for every second (the deletion's confirming look finds one that came
 * since), not with the quick rescans and the pid counter's watch that a
 * Job's restart gets, which a crash-looping app would keep up for ever.
 */
static int64_t rescan_interval(const struct decide *d, int64_t now)
{
	bool restart = dapps_any_awaiting_restart(d);

	if (d->pending_containers)
		return RESCAN_PENDING_US;
	if (dapps_fewer_than_expected(d) || dside_awaiting_process(d) || sidecar_wait_running(d) ||
	    (restart && d->cfg.policy != POLICY_ALWAYS))
		return RESCAN_FAST_US;
	if (restart)
		return RESCAN_SLOW_US;
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

/*
 * Whether a rescan may be asked for now: none in flight, and after a
 * failure, not before its retry time (the pass learns it). The engine
 * carries a rescan out at once and asks again: a failed one asked for
 * again at the same instant would never give the event loop back, and
 * under EMFILE nothing in it would free a descriptor.
 */
static bool rescan_due(const struct decide *d, struct pass *p)
{
	return !d->rescan_inflight && (!d->rescan_err || dpriv_reached(p, d->rescan_retry_us));
}

static bool rescan_action(struct decide *d, struct pass *p)
{
	return dpriv_go(p) && dpriv_rescan(d, p);
}

/*
 * A rescan asked for (DECIDE_EV_RESCAN_WANTED): at once, not held back by
 * a failed rescan's retry time, for it is asked once per event.
 */
static bool wanted_rescan_step(struct decide *d, struct pass *p)
{
	return d->rescan_wanted && !d->rescan_inflight && rescan_action(d, p);
}

/* While watching: the next rescan when it is due (a failed one is retried). */
static bool rescan_step(struct decide *d, struct pass *p)
{
	int64_t every;

	if (!rescan_due(d, p))
		return false;
	if (d->rescan_err)
		return rescan_action(d, p);
	every = rescan_interval(d, p->now);
	return every && dpriv_reached(p, d->last_rescan_us + every) && rescan_action(d, p);
}

static bool poll_step(struct decide *d, struct pass *p)
{
	if (!d->polled || !dpriv_reached(p, d->next_poll_us) || !dpriv_go(p))
		return false;
	d->next_poll_us = p->now + POLL_US;
	p->act->kind = DECIDE_POLL;
	return true;
}

/* ---- signals from outside, and an earlier run's files -------------------------- */

/*
 * A drain without a reason would never be concluded: there is none to
 * give. Under Always the pod runs until it is deleted, and the kubelet
 * restarts what is stopped, the agent too: a drain before the deletion (a
 * drain file, an earlier run's apps-done) would stop the sidecars under
 * the apps and end in a loop of restarts. It is refused, and said.
 */
static bool drain_now(struct decide *d, enum decide_reason reason)
{
	if (reason == REASON_NONE || d->phase >= PHASE_DRAINING || d->drain_reason)
		return false;
	if (d->cfg.policy == POLICY_ALWAYS && !d->term_us) {
		SAY(d, .kind = NOTE_ALWAYS_KEPT, .reason = reason);
		return false;
	}
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
		drain_now(d, REASON_SECOND_SIGNAL);
		return;
	}
	d->term_us = now;
	SAY(d, .kind = NOTE_TERMINATE, .us = d->cfg.term_grace_us);
}

/*
 * What an earlier run of the agent left: apps-done, the drain again; done,
 * the exit. Under Always the kubelet restarts no container of a pod being
 * deleted: a run that finds them was restarted while the pod runs on, and
 * they are stale (refused, said: false).
 */
static bool found(struct decide *d, enum protocol_file f)
{
	if (d->phase != PHASE_WATCHING)
		return false;
	switch (f) {
	case PROTOCOL_APPS_DONE:
		if (d->cfg.policy != POLICY_ALWAYS)
			SAY(d, .kind = NOTE_RESUME_APPS_DONE);
		return drain_now(d, REASON_RESUME);
	case PROTOCOL_DONE:
		if (d->cfg.policy == POLICY_ALWAYS) {
			SAY(d, .kind = NOTE_ALWAYS_KEPT, .reason = REASON_RESUME);
			return false;
		}
		SAY(d, .kind = NOTE_RESUME_DONE);
		d->resumed_done = true;
		return true;
	case PROTOCOL_READY:
	case PROTOCOL_DRAIN:
	case PROTOCOL_REPORT:
	case PROTOCOL_NFILES:
		break;
	}
	return false;
}

/* ---- the conclusion ------------------------------------------------------------ */

/* Why the apps are done, or REASON_NONE while they are not (the pass learns when a limit runs out). */
static enum decide_reason conclusion(struct decide *d, struct pass *p)
{
	bool all;

	if (d->drain_reason != REASON_NONE)
		return d->drain_reason;
	if (d->cfg.ready_gates_apps && d->ready_expired)
		return REASON_READY_TIMEOUT;
	if (d->term_us && dpriv_reached(p, d->term_us + d->cfg.term_grace_us))
		return REASON_TERM_GRACE;
	all = dapps_all_finished(d);
	if (dapps_fewer_than_expected(d)) {
		/* Only when the apps that did appear are all finished: a running one still needs the proxy. */
		if (!all || d->startup_said || !dpriv_reached(p, d->started_us + d->cfg.startup_timeout_us))
			return REASON_NONE;
		if (d->cfg.policy != POLICY_ALWAYS)
			return REASON_STARTUP_TIMEOUT;
		/* Always: the sidecars stay for an app that may yet come (a crash loop's back-off); said once. */
		if (dpriv_go(p)) {
			d->startup_said = true;
			SAY(d, .kind = NOTE_ALWAYS_KEPT, .reason = REASON_STARTUP_TIMEOUT, .count = dapps_live(d),
			    .us = d->cfg.startup_timeout_us);
		}
		return REASON_NONE;
	}
	if (!all)
		return REASON_NONE;
	return d->apps_stop_us ? REASON_SIDECAR_EXITED : REASON_APPS_DONE;
}

/* The apps are over by themselves, or stopped after a sidecar failed: the kubelet may still start a container. */
static bool apps_over(enum decide_reason reason)
{
	return reason == REASON_APPS_DONE || reason == REASON_SIDECAR_EXITED;
}

/*
 * The apps are done, but a sidecar named with --sidecar has not started: a
 * sidecar listed after the apps is started after them (the kubelet starts
 * containers one by one), and once the agent has exited nothing stops it.
 * It is waited for, with rescans, at most --sidecar-wait; then the drain
 * goes on without it. Detection's sidecars are optional: never waited for.
 * True while the wait lasts.
 */
static bool awaiting_named_sidecar(struct decide *d, enum decide_reason reason, struct pass *p)
{
	char list[512] = "";
	size_t k, n = 0;

	/* In a deletion (SIGTERM came) the kubelet starts nothing more: there is nothing to wait for. */
	if (d->sidecar_wait_over || d->cfg.sidecar_wait_us <= 0 || !apps_over(reason) || d->term_us)
		return false;
	for (k = 0; k < d->cfg.nsidecars; k++)
		if (dside_never_started(d, k) && n < sizeof(list) - 1)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "",
					      d->cfg.sidecars[k].name);
	if (!n) {
		if (d->sidecar_wait_from_us) {
			if (!dpriv_go(p))
				return true;
			SAY(d, .kind = NOTE_SIDECAR_WAIT_OVER, .us = p->now - d->sidecar_wait_from_us);
			d->sidecar_wait_over = true;
		}
		return false;
	}
	if (!d->sidecar_wait_from_us) {
		if (!dpriv_go(p))
			return true;
		d->sidecar_wait_from_us = p->now;
		SAY(d, .kind = NOTE_SIDECAR_WAIT, .text = list, .us = d->cfg.sidecar_wait_us);
		return true;
	}
	if (!dpriv_reached(p, d->sidecar_wait_from_us + d->cfg.sidecar_wait_us) || !dpriv_go(p))
		return true;
	d->sidecar_wait_over = true;
	SAY(d, .kind = NOTE_SIDECAR_WAIT_EXPIRED, .text = list, .us = d->cfg.sidecar_wait_us);
	return false;
}

/*
 * Whether "apps-done" needs one more look at /proc first: the kubelet starts
 * containers one by one, so one may have started since the last scan. Not
 * when --apps N were all seen: the pod has no other app container. Under
 * Always always: an app's restart may have come since the last look, once
 * a second (its attempt before it counts among the N).
 */
static bool needs_confirmation(const struct decide *d, enum decide_reason reason)
{
	return apps_over(reason) && !d->confirmed &&
	       (!dapps_all_expected_seen(d) || d->cfg.policy == POLICY_ALWAYS);
}

/* run --drain's command is over: an app that exited with code. */
static bool command_ended(struct decide *d, int code, int64_t now)
{
	if (!d->cfg.command || d->command_over)
		return false;
	d->command_over = true;
	d->command_code = code;
	dapps_exited(d, DECIDE_APP_COMMAND, now);
	dapps_status(d, DECIDE_APP_COMMAND, code, now);
	return true;
}

static bool start_drain(struct decide *d, enum decide_reason reason, struct pass *p)
{
	struct decide_action *act = p->act;
	int64_t limit = 0;
	size_t k;

	if (!dpriv_go(p))
		return false;
	d->phase = PHASE_DRAINING;
	d->decided_us = p->now;
	d->reason = reason;
	d->current = d->cfg.nsidecars;
	d->writes[PROTOCOL_APPS_DONE].wanted = d->cfg.protocol;
	d->writes[PROTOCOL_APPS_DONE].next_us = p->now;
	if (reason == REASON_STARTUP_TIMEOUT)
		limit = d->cfg.startup_timeout_us;
	else if (reason == REASON_TERM_GRACE)
		limit = d->cfg.term_grace_us;
	SAY(d, .kind = NOTE_DRAIN, .reason = reason, .count = dapps_live(d), .us = limit,
	    .limit_us = d->term_us ? p->now - d->term_us : 0,
	    .sidecar = d->apps_stop_us ? d->cfg.sidecars[d->apps_stop_for].name : NULL);
	act->kind = DECIDE_APPS_DONE;
	act->reason = reason;
	/*
	 * Before any stop is decided, the roots of the sidecars' containers are
	 * asked whether they exited: one that exited with the last app (a pod
	 * deletion's SIGTERM reached both) is then known to have, and is not
	 * stopped (the stop would reach nothing, and the exit was not ours).
	 */
	for (k = 0; k < d->cfg.nsidecars; k++)
		act->check_exits |= d->sidecars[k].containers > 0;
	/* The sidecars were not ready in time: the command that waited for them never starts. */
	if (reason == REASON_READY_TIMEOUT && !d->command_started &&
	    command_ended(d, d->cfg.command_not_ready, p->now)) {
		act->command_ended = true;
		act->exit_code = d->cfg.command_not_ready;
	}
	return true;
}

/* ---- the end ------------------------------------------------------------------ */

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
static bool exit_action(struct decide *d, struct pass *p)
{
	struct decide_action *act = p->act;

	if (!dpriv_go(p))
		return false;
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
	return true;
}

/* An app's exit code, or a sidecar's answer or code, still on its way. */
static bool codes_awaited(const struct decide *d)
{
	return dapps_codes_awaited(d) || dside_awaited(d);
}

/*
 * Every sidecar is settled. An app's exit code may still be on its way (the
 * kernel publishes it once the shim reaps), and so may a stop request's
 * answer (a proxy answers, exits, and its exit can be seen first): the
 * summary is worth a short wait. Then done, then the exit.
 */
static bool finish_step(struct decide *d, struct pass *p)
{
	struct decide_write *done = &d->writes[PROTOCOL_DONE];

	if (!d->settled_us) {
		if (!dpriv_go(p))
			return false;
		d->settled_us = p->now;
		d->exit_code = dside_failed(d) ? 1 : 0;
	}
	if (p->now < d->settled_us + STATUS_WAIT_US && codes_awaited(d)) {
		dpriv_reached(p, d->settled_us + STATUS_WAIT_US);
		return false;
	}
	if (d->cfg.protocol && !done->written) {
		if (!done->wanted) {
			if (!dpriv_go(p))
				return false;
			done->wanted = true;
			done->next_us = p->now;
		}
		if (done->failures == 0 || !dpriv_reached(p, done->first_failure_us + DONE_GIVE_UP_US))
			return files_step(d, p);
		if (!dpriv_go(p))
			return false;
		SAY(d, .kind = NOTE_DONE_GIVEN_UP, .result = done->err, .us = DONE_GIVE_UP_US);
		done->wanted = false;
	}
	return exit_action(d, p);
}

/* ---- the next action ---------------------------------------------------------- */

static bool watching_step(struct decide *d, struct pass *p)
{
	enum decide_reason reason;

	/*
	 * A report names a container that may have started since the last
	 * scan; a new pid may be one (a failed rescan keeps its retry time).
	 */
	if ((d->nreports || d->pids_moved) && rescan_due(d, p))
		return rescan_action(d, p);
	if (wanted_rescan_step(d, p) || dnat_apps_stop_step(d, p))
		return true;
	dapps_expire_restart_grace(d, p);
	dside_expire_readiness(d, p);
	reason = conclusion(d, p);
	if (reason != REASON_NONE) {
		if (!needs_confirmation(d, reason)) {
			if (awaiting_named_sidecar(d, reason, p))
				return status_step(d, p) || files_step(d, p) || rescan_step(d, p) || poll_step(d, p);
			return start_drain(d, reason, p);
		}
		if (p->act)
			d->phase = PHASE_CONFIRMING;
		if (rescan_due(d, p))
			return rescan_action(d, p);
		return false;
	}
	if (p->act) {
		d->phase = PHASE_WATCHING;
		d->confirmed = false;
	}
	return status_step(d, p) || dside_readiness_step(d, p) || files_step(d, p) || dside_check_step(d, p) ||
	       rescan_step(d, p) || poll_step(d, p);
}

/* One pass over the steps: an action taken (act), or the time the next is due (a plan). */
static bool step(struct decide *d, struct pass *p)
{
	/* An earlier run finished: nothing is left to do but to say so. */
	if (d->resumed_done && d->phase != PHASE_DONE)
		return exit_action(d, p);
	expire_statuses(d, p);
	switch (d->phase) {
	case PHASE_WATCHING:
	case PHASE_CONFIRMING:
		return watching_step(d, p);
	case PHASE_DRAINING:
		/* The stop first (after a rescan asked for); the files, exit codes and looks at /proc after it. */
		if (wanted_rescan_step(d, p) || dside_drain_step(d, p) || files_step(d, p) || status_step(d, p) ||
		    poll_step(d, p))
			return true;
		if (d->rescan_err && rescan_due(d, p))
			return rescan_action(d, p);
		return d->current == 0 && finish_step(d, p);
	case PHASE_DONE:
		break;
	}
	return false;
}

bool decide_next(struct decide *d, int64_t now, struct decide_action *act)
{
	struct pass p = { .now = now, .act = act, .next = INT64_MAX };
	bool taken;

	/* The engine's loop turned since the last action: a rescan made before is of an earlier turn. */
	if (d->turning)
		d->looked = false;
	memset(act, 0, sizeof(*act));
	taken = step(d, &p);
	d->turning = !taken || act->urgent;
	return taken;
}

int64_t decide_deadline(struct decide *d, int64_t now)
{
	struct pass p = { .now = now, .act = NULL, .next = INT64_MAX };

	step(d, &p);
	return p.next;
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
	[DECIDE_EV_APP_SIGNAL_RESULT] = "app-signal-result",
	[DECIDE_EV_NATIVE_SEEN] = "native-seen",
	[DECIDE_EV_NATIVE_EXITED] = "native-exited",
	[DECIDE_EV_NATIVE_FORGET] = "native-forget",
	[DECIDE_EV_COMMAND_ENDED] = "command-ended",
	[DECIDE_EV_SIDECAR_SEEN] = "sidecar-seen",
	[DECIDE_EV_SIDECAR_EXITED] = "sidecar-exited",
	[DECIDE_EV_SIDECAR_STATUS] = "sidecar-status",
	[DECIDE_EV_SIDECAR_GONE] = "sidecar-gone",
	[DECIDE_EV_NO_ENDPOINT] = "no-endpoint",
	[DECIDE_EV_CATCHES] = "catches",
	[DECIDE_EV_SIGNAL_RESULT] = "signal-result",
	[DECIDE_EV_FATE] = "fate",
	[DECIDE_EV_PROGRAM] = "program",
	[DECIDE_EV_HTTP_RESULT] = "http-result",
	[DECIDE_EV_WRITTEN] = "written",
	[DECIDE_EV_FOUND] = "found",
	[DECIDE_EV_PENDING] = "pending",
	[DECIDE_EV_POLLING] = "polling",
	[DECIDE_EV_CONTAINERS] = "containers",
	[DECIDE_EV_PIDS_MOVED] = "pids-moved",
	[DECIDE_EV_STALLED] = "stalled",
	[DECIDE_EV_RESCANNED] = "rescanned",
	[DECIDE_EV_RESCAN_WANTED] = "rescan-wanted",
	[DECIDE_EV_TERMINATE] = "terminate",
	[DECIDE_EV_DRAIN_NOW] = "drain-now",
};

const char *decide_event_name(enum decide_event_kind kind)
{
	return (size_t)kind < ARRAY_SIZE(event_names) && event_names[kind] ? event_names[kind] : "?";
}

/* What an event must carry to be about anything: one of decide's sidecars, or a name. */
enum event_needs { NEEDS_NOTHING, NEEDS_SIDECAR, NEEDS_NAME };

static enum event_needs event_needs(enum decide_event_kind kind)
{
	switch (kind) {
	case DECIDE_EV_SIDECAR_SEEN:
	case DECIDE_EV_SIDECAR_EXITED:
	case DECIDE_EV_SIDECAR_STATUS:
	case DECIDE_EV_SIDECAR_GONE:
	case DECIDE_EV_NO_ENDPOINT:
	case DECIDE_EV_CATCHES:
	case DECIDE_EV_SIGNAL_RESULT:
	case DECIDE_EV_FATE:
	case DECIDE_EV_PROGRAM:
	case DECIDE_EV_HTTP_RESULT:
		return NEEDS_SIDECAR;
	case DECIDE_EV_APP_SEEN:
	case DECIDE_EV_APP_RENAMED:
	case DECIDE_EV_APP_REPORTS_AS:
	case DECIDE_EV_APP_REPORT:
	case DECIDE_EV_NATIVE_SEEN:
		return NEEDS_NAME;
	case DECIDE_EV_APP_EXITED:
	case DECIDE_EV_APP_STATUS:
	case DECIDE_EV_APP_FORGET:
	case DECIDE_EV_APP_SIGNAL_RESULT:
	case DECIDE_EV_NATIVE_EXITED:
	case DECIDE_EV_NATIVE_FORGET:
	case DECIDE_EV_COMMAND_ENDED:
	case DECIDE_EV_WRITTEN:
	case DECIDE_EV_FOUND:
	case DECIDE_EV_PENDING:
	case DECIDE_EV_POLLING:
	case DECIDE_EV_CONTAINERS:
	case DECIDE_EV_PIDS_MOVED:
	case DECIDE_EV_STALLED:
	case DECIDE_EV_RESCANNED:
	case DECIDE_EV_RESCAN_WANTED:
	case DECIDE_EV_TERMINATE:
	case DECIDE_EV_DRAIN_NOW:
		return NEEDS_NOTHING;
	}
	return NEEDS_NOTHING;
}

static bool dispatch(struct decide *d, const struct decide_event *ev, int64_t now)
{
	/* An event without the name it is about changes nothing, as one about a sidecar decide lacks. */
	if (event_needs(ev->kind) == NEEDS_NAME && !ev->name)
		return false;
	switch (ev->kind) {
	case DECIDE_EV_SIDECAR_SEEN: return dside_seen(d, ev->sidecar, ev->age_us, now);
	case DECIDE_EV_SIDECAR_EXITED: return dside_exited(d, ev->sidecar, ev->id, ev->pid, now);
	case DECIDE_EV_SIDECAR_STATUS: return dside_status(d, ev->sidecar, ev->code, now);
	case DECIDE_EV_SIDECAR_GONE: return dside_gone(d, ev->sidecar, now);
	case DECIDE_EV_NO_ENDPOINT: return dside_no_endpoint(d, ev->sidecar);
	case DECIDE_EV_CATCHES: return dside_catches(d, ev->sidecar, ev->result);
	case DECIDE_EV_SIGNAL_RESULT: return dside_signal_result(d, ev->sidecar, ev->result, now);
	case DECIDE_EV_FATE: return dside_fate(d, ev->sidecar, ev->result);
	case DECIDE_EV_PROGRAM: return dside_program(d, ev->sidecar, ev->code, ev->name);
	case DECIDE_EV_HTTP_RESULT: return dside_http_result(d, ev->sidecar, ev->purpose, ev->result, now);
	case DECIDE_EV_APP_SEEN: return dapps_seen(d, ev->id, ev->name, now);
	case DECIDE_EV_APP_EXITED: return dapps_exited(d, ev->id, now);
	case DECIDE_EV_APP_STATUS: return dapps_status(d, ev->id, ev->code, now);
	case DECIDE_EV_APP_RENAMED: return dapps_renamed(d, ev->id, ev->name);
	case DECIDE_EV_APP_FORGET: return dapps_forget(d, ev->id);
	case DECIDE_EV_APP_REPORTS_AS: return dapps_reports_as(d, ev->id, ev->name);
	case DECIDE_EV_APP_REPORT: return dapps_report(d, ev->name, ev->code, now);
	case DECIDE_EV_APP_SIGNAL_RESULT: return dnat_app_signal_result(d, ev->id, ev->result, now);
	case DECIDE_EV_NATIVE_SEEN: return dnat_seen(d, ev->id, ev->name, ev->by, now);
	case DECIDE_EV_NATIVE_EXITED: return dnat_exited(d, ev->id, now);
	case DECIDE_EV_NATIVE_FORGET: return dnat_forget(d, ev->id);
	case DECIDE_EV_COMMAND_ENDED:
		if (d->cfg.command)
			drain_now(d, ev->reason);
		return command_ended(d, ev->code, now);
	case DECIDE_EV_WRITTEN: return write_result(d, ev->file, ev->result, now);
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
	case DECIDE_EV_STALLED:
		stalled(d, ev->age_us);
		return true;
	case DECIDE_EV_RESCANNED:
		rescanned(d, ev->result, now);
		return true;
	case DECIDE_EV_RESCAN_WANTED:
		if (d->phase == PHASE_DONE)
			return false;
		d->rescan_wanted = true;
		return true;
	case DECIDE_EV_TERMINATE:
		terminate(d, now);
		return true;
	case DECIDE_EV_DRAIN_NOW: return drain_now(d, ev->reason);
	}
	return false;
}

bool decide_event(struct decide *d, const struct decide_event *ev, int64_t now)
{
	bool sidecar = event_needs(ev->kind) == NEEDS_SIDECAR;

	/* Every sidecar event is checked here, once, against the sidecars there are. */
	if ((!sidecar || ev->sidecar < d->cfg.nsidecars) && dispatch(d, ev, now))
		return true;
	SAY(d, .kind = NOTE_IGNORED, .event = ev->kind,
	    .sidecar = sidecar && ev->sidecar < d->cfg.nsidecars ? d->cfg.sidecars[ev->sidecar].name : NULL,
	    .k = ev->sidecar);
	return false;
}
