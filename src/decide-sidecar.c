/*
 * decide, for each sidecar: its readiness (polls, then the ready file),
 * its stop (the machine below), and its own exit code. decide.c holds the
 * phases, the conclusion and the end; decide-natives.c the apps' stop when
 * a sidecar fails while they run. All share decide-private.h.
 */
#include "config.h"

#include "decide-private.h"

#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* After SIGKILL a process is gone within milliseconds unless the kernel is stuck. */
#define KILL_CONFIRM_MIN_US (1 * US_PER_S)
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
/* A drain or stop request gets this long; a failed stop is retried while --stop-timeout lasts. */
#define STOP_REQUEST_US (5 * US_PER_S)
#define STOP_RETRY_FIRST_US (100 * US_PER_MS)
#define STOP_RETRY_MAX_US (2 * US_PER_S)
/* Without visible processes: how often to look whether the sidecar still accepts connections. */
#define GONE_PROBE_FIRST_US (20 * US_PER_MS)
#define GONE_PROBE_MAX_US (500 * US_PER_MS)

static bool is_2xx(int result)
{
	return result >= 200 && result < 300;
}

/* A 4xx is the endpoint saying no: asking again will not change that (408 and 429 may). */
static bool is_refusal(int result)
{
	return result >= 400 && result < 500 && result != 408 && result != 429;
}

void dside_init(struct decide *d, int64_t now)
{
	size_t i;

	for (i = 0; i < d->cfg.nsidecars; i++) {
		d->sidecars[i].ready.next_us = now;
		d->sidecars[i].ready.backoff_us = READY_POLL_FAST_US;
		d->sidecars[i].stop.retry_us = INT64_MAX;
		d->sidecars[i].exit.code = DECIDE_CODE_PENDING;
	}
}

/* A native one never counts: the kubelet starts and stops it. */
bool dside_counts(const struct decide *d, size_t k)
{
	return !d->cfg.sidecars[k].native && (!d->cfg.sidecars[k].optional || d->sidecars[k].seen);
}

bool dside_never_started(const struct decide *d, size_t k)
{
	return dside_counts(d, k) && !d->sidecars[k].seen && d->cfg.sidecars[k].confirm == CONFIRM_PROCESSES;
}

/* Detection only, and nothing detected yet: nothing is ready, for there may be a sidecar to come. */
static bool none_detected(const struct decide *d)
{
	size_t k;

	for (k = 0; k < d->cfg.nsidecars; k++)
		if (dside_counts(d, k))
			return false;
	/* Native specs alone: nothing is to come. */
	for (k = 0; k < d->cfg.nsidecars; k++)
		if (d->cfg.sidecars[k].optional)
			return true;
	return false;
}

/* ---- a request's result in words (decide's: the log's notes and the summary use them too) ------- */

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

/* ---- readiness ------------------------------------------------------------------ */

static bool readiness_pending(const struct decide *d)
{
	return d->cfg.readiness && !d->sidecars_ready && !d->ready_expired && d->phase < PHASE_DRAINING;
}

/* A ready sidecar's stop endpoint should listen too: one look, once it is ready and its container was seen. */
static void plan_check(struct decide *d, size_t k)
{
	struct decide_sidecar *sc = &d->sidecars[k];
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];

	/* After the pre-flight look at its command line, which may know why nothing listens. */
	if (sc->ready.check != CHECK_NOT_YET || !cfg->stop_url || sc->ready.state != READY_YES ||
	    !(sc->seen || cfg->confirm == CONFIRM_PORT))
		return;
	sc->ready.check = CHECK_DUE;
}

static void mark_ready(struct decide *d, size_t k, int64_t now)
{
	struct sidecar_ready *r = &d->sidecars[k].ready;

	r->state = READY_YES;
	r->at_us = now;
	plan_check(d, k);
	SAY_SC(d, k, .kind = NOTE_READY, .us = now - d->started_us, .count = r->polls,
	       .flag = !d->cfg.sidecars[k].ready_url, .blind = d->cfg.sidecars[k].confirm == CONFIRM_PORT);
}

bool dside_awaiting_process(const struct decide *d)
{
	size_t i;

	if (!readiness_pending(d))
		return false;
	/* Without a ready URL a sidecar is ready when its process shows up. */
	for (i = 0; i < d->cfg.nsidecars; i++)
		if (dside_counts(d, i) && !d->cfg.sidecars[i].ready_url && !d->sidecars[i].seen &&
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
		const struct sidecar_ready *r = &d->sidecars[i].ready;

		if (r->state == READY_YES || !dside_counts(d, i) || n >= sizeof(list) - 1)
			continue;
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s (%s)", n ? ", " : "", d->cfg.sidecars[i].name,
				      !d->cfg.sidecars[i].ready_url ? "no process seen"
				      : r->last		      ? decide_result_phrase(r->last, what)
							      : "no answer yet");
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

	return d->sidecars[k].ready.state == READY_YES ||
	       (!cfg->ready_url && (d->sidecars[k].seen || cfg->confirm == CONFIRM_PORT));
}

/* Sidecars without a ready URL seen, and whether every sidecar turned ready now (a real pass only). */
static bool readiness_update(struct decide *d, struct pass *p)
{
	bool all = true;
	size_t i;

	if (!readiness_pending(d))
		return false;
	for (i = 0; i < d->cfg.nsidecars; i++) {
		if (!dside_counts(d, i) || d->sidecars[i].ready.state == READY_YES || !ready_now(d, i))
			continue;
		if (!dpriv_go(p))
			return false;
		mark_ready(d, i, p->now);
	}
	for (i = 0; i < d->cfg.nsidecars; i++)
		all &= !dside_counts(d, i) || d->sidecars[i].ready.state == READY_YES;
	if (!all || none_detected(d) || !dpriv_go(p))
		return false;
	d->sidecars_ready = true;
	/* The file, or the command that waits for it; without either only a note. */
	d->writes[PROTOCOL_READY].wanted = d->cfg.protocol;
	d->writes[PROTOCOL_READY].next_us = p->now;
	SAY(d, .kind = d->cfg.ready_gates_apps ? NOTE_ALL_READY_COMMAND
		       : d->cfg.protocol       ? NOTE_ALL_READY
					       : NOTE_ALL_READY_NO_FILE);
	return true;
}

bool dside_readiness_step(struct decide *d, struct pass *p)
{
	size_t i;

	/* run --drain: the command waited for this, and starts now. */
	if (readiness_update(d, p) && d->cfg.ready_gates_apps) {
		d->command_started = true;
		p->act->kind = DECIDE_START_COMMAND;
		return true;
	}
	if (!readiness_pending(d))
		return false;
	for (i = 0; i < d->cfg.nsidecars; i++) {
		struct sidecar_ready *r = &d->sidecars[i].ready;

		if (!dside_counts(d, i) || r->state != READY_NOT || !d->cfg.sidecars[i].ready_url ||
		    !dpriv_reached(p, r->next_us) || !dpriv_go(p))
			continue;
		r->state = READY_ASKING;
		r->polls++;
		p->act->kind = DECIDE_HTTP;
		p->act->sidecar = i;
		p->act->purpose = DECIDE_HTTP_READY;
		p->act->url = d->cfg.sidecars[i].ready_url;
		p->act->connect_timeout_us = CONNECT_TIMEOUT_US;
		p->act->timeout_us = READY_REQUEST_US;
		return true;
	}
	return false;
}

void dside_expire_readiness(struct decide *d, struct pass *p)
{
	bool late = false;
	size_t k;

	if (!readiness_pending(d) || !dpriv_reached(p, d->started_us + d->cfg.ready_timeout_us))
		return;
	/* What turned ready by then still counts. */
	for (k = 0; k < d->cfg.nsidecars; k++)
		late |= dside_counts(d, k) && !ready_now(d, k);
	if (!(late || none_detected(d)) || !dpriv_go(p))
		return;
	d->ready_expired = true;
	note_ready_timeout(d);
}

static bool ready_result(struct decide *d, size_t k, int result, int64_t now)
{
	struct sidecar_ready *r = &d->sidecars[k].ready;

	if (r->state != READY_ASKING)
		return false;
	r->state = READY_NOT;
	r->last = result;
	if (!readiness_pending(d))
		return false;
	if (is_2xx(result)) {
		mark_ready(d, k, now);
		return true;
	}
	/* Fast while the proxy may be starting, then backing off. */
	if (now - d->started_us >= READY_FAST_WINDOW_US)
		r->backoff_us = dpriv_min64(r->backoff_us * 2, READY_POLL_MAX_US);
	r->next_us = now + r->backoff_us;
	SAY_SC(d, k, .kind = NOTE_NOT_READY_YET, .result = result, .us = r->backoff_us);
	return true;
}

/* Pre-flight: whether each ready sidecar's stop endpoint accepts connections. */
bool dside_check_step(struct decide *d, struct pass *p)
{
	size_t k;

	for (k = 0; k < d->cfg.nsidecars; k++) {
		struct sidecar_ready *r = &d->sidecars[k].ready;

		if (r->check != CHECK_DUE || !dpriv_go(p))
			continue;
		r->check = CHECK_ASKING;
		p->act->kind = DECIDE_HTTP;
		p->act->sidecar = k;
		p->act->purpose = DECIDE_HTTP_CHECK;
		p->act->url = d->cfg.sidecars[k].stop_url;
		p->act->connect_timeout_us = p->act->timeout_us = CONNECT_TIMEOUT_US;
		return true;
	}
	return false;
}

/* ---- the stop ------------------------------------------------------------------- */

/*
 * A sidecar's stop, as state + event -> next state: action. The drain takes
 * the sidecars one at a time, in reverse --sidecar order; the one being
 * stopped moves on each decide_next (and stays where it is while nothing
 * is due). Every request or signal is an action whose result comes back as
 * an event.
 *
 *   UP           not counted (detection never saw it)  -> GONE: none (not-found)
 *   UP           blind, no stop URL                    -> FAILED: none (not-visible)
 *   UP           blind, a stop URL                     -> as WATCHING below (nothing
 *                                                         to watch: the port confirms)
 *   UP           a live container, and the stop can go before the watches
 *                (a request, or a signal to the known roots)
 *                                                      -> as WATCHING below
 *   UP           otherwise (signal-all, nothing live)  -> WATCHING: WATCH
 *   UP, WATCHING stop signal, begun only just now      -> same: CATCHES, until it
 *                                                         catches, cannot tell, or
 *                                                         2 s after its start
 *   WATCHING     a drain URL                           -> DRAINING: HTTP drain
 *   WATCHING     otherwise                             -> STOPPING: HTTP stop, or SIGNAL
 *                                                         stop signal
 *   DRAINING     drain answered 2xx                    -> DRAINING: wait drain-time
 *   DRAINING     drain answered otherwise              -> DRAINING: none (over at once)
 *   DRAINING     drain-time over (and CATCHES as above)-> STOPPING: HTTP stop, or SIGNAL
 *   STOPPING     stop answered 2xx                     -> STOPPING: none (blind: GONE probes)
 *   STOPPING     stop answered 4xx                     -> TERMINATING: SIGNAL TERM
 *                                                         (blind: FAILED, stop-refused)
 *   STOPPING     stop failed, time left                -> STOPPING: HTTP stop after a backoff
 *   STOPPING     stop failed, no time left             -> STOPPING: none until --stop-timeout
 *   STOPPING     gone probe refused (blind)            -> GONE: none
 *   STOPPING     --stop-timeout                        -> TERMINATING: SIGNAL TERM (none when
 *                                                         TERM was the stop; blind: FAILED)
 *   TERMINATING  --kill-after                          -> KILLING: SIGNAL KILL, every process
 *   KILLING      --kill-after (1 s at least)           -> FAILED: none (still-running)
 *   DRAINING..KILLING   not watched yet                -> same: WATCH
 *   WATCHING..KILLING   processes gone                 -> GONE: none
 *   STOPPING..KILLING   signal failed for a while      -> same: SIGNAL again after 100 ms
 *   STOPPING..KILLING   signal not permitted, failed   -> FAILED: none (not-permitted, ...)
 *   GONE, FAILED        anything                       -> same: none (the event is ignored)
 *
 * A stop or drain request goes out before the watches (the start time of
 * each process keeps that safe); a signal to every process needs them
 * first, for it goes through them. A sidecar whose stop goes out from UP
 * (a live container) is looked at for its handler in UP: it stays UP until
 * its stop signal goes.
 */

static void http_action(struct decide *d, size_t k, enum decide_http_purpose purpose, const char *url,
			int64_t timeout_us, struct decide_action *act)
{
	struct sidecar_stop *st = &d->sidecars[k].stop;

	st->http_inflight = true;
	if (purpose == DECIDE_HTTP_DRAIN || purpose == DECIDE_HTTP_STOP)
		st->requests++;
	act->kind = DECIDE_HTTP;
	act->sidecar = k;
	act->purpose = purpose;
	act->url = url;
	act->connect_timeout_us = CONNECT_TIMEOUT_US;
	act->timeout_us = timeout_us > 0 ? timeout_us : 1;
	act->urgent = purpose != DECIDE_HTTP_GONE;
}

/* A signal: to the containers' roots, as the runtime's StopContainer does (its SIGKILL, and signal-all, to all). */
static void signal_action(struct decide *d, size_t k, int signo, struct decide_action *act)
{
	struct sidecar_stop *st = &d->sidecars[k].stop;

	st->last_signal = signo;
	st->signal_due = false;
	act->kind = DECIDE_SIGNAL;
	act->sidecar = k;
	act->signo = signo;
	act->all = signo == SIGKILL || d->cfg.sidecars[k].signal_all;
	act->urgent = true;
}

/* The watch of every process of the sidecar, once, as a rescan of this turn sees them. */
static void watch_action(struct decide *d, size_t k, struct pass *p)
{
	d->sidecars[k].stop.watched = true;
	p->act->kind = DECIDE_WATCH;
	p->act->sidecar = k;
	dpriv_look_first(d, p);
}

/* -> STOPPING: the stop request (a POST, retried when it fails) or the stop signal. */
static void start_stop(struct decide *d, size_t k, int64_t now, struct decide_action *act)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct sidecar_stop *st = &d->sidecars[k].stop;

	st->state = SC_STOPPING;
	st->stop_sent_us = now;
	st->deadline_us = now + d->cfg.stop_timeout_us;
	if (cfg->stop_url) {
		st->backoff_us = STOP_RETRY_FIRST_US;
		st->retry_us = INT64_MAX;
		http_action(d, k, DECIDE_HTTP_STOP, cfg->stop_url,
			    dpriv_min64(STOP_REQUEST_US, d->cfg.stop_timeout_us), act);
		return;
	}
	signal_action(d, k, cfg->stop_signal, act);
	act->first = true;
}

/* The first request to the sidecar: -> DRAINING with its drain, else -> STOPPING. */
static void begin_stop(struct decide *d, size_t k, int64_t now, struct decide_action *act)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];

	if (cfg->drain_url) {
		d->sidecars[k].stop.state = SC_DRAINING;
		http_action(d, k, DECIDE_HTTP_DRAIN, cfg->drain_url, STOP_REQUEST_US, act);
		return;
	}
	start_stop(d, k, now, act);
}

/* Whether signo kills a process that has no handler for it (its default action). */
static bool kills_by_default(int signo)
{
	return signo != SIGKILL && signo != SIGCHLD && signo != SIGCONT && signo != SIGURG && signo != SIGWINCH &&
	       signo != SIGSTOP && signo != SIGTSTP && signo != SIGTTIN && signo != SIGTTOU;
}

/* Whether the stop signal must wait for the sidecar's roots to catch it: one of their programs began just now. */
static bool catch_needed(const struct decide *d, size_t k, int64_t now)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	const struct decide_sidecar *sc = &d->sidecars[k];

	return !cfg->stop_url && cfg->confirm == CONFIRM_PROCESSES && sc->containers &&
	       kills_by_default(cfg->stop_signal) && now < sc->started_us + CATCH_WAIT_US;
}

/*
 * Before the stop signal goes to a sidecar whose program began only just
 * now (less than CATCH_WAIT_US ago), its roots are looked at until they
 * catch it and sleep (DECIDE_CATCHES): a program signalled right after its
 * exec, before it installed its handler, dies of the signal (143 for
 * SIGTERM), and that fails the pod. The wait ends CATCH_WAIT_US after the
 * program began, not after the stop was due: a program that has not set
 * up its handler by then will not (a shell), and one that began 1.7 s
 * before the apps were done has 0.3 s left to, not 2 s. Then the signal
 * goes anyway. A sidecar that began well before is signalled at once, even
 * if it was seen only just now (the agent started after it). 1: an action
 * (DECIDE_CATCHES); 0: waiting; -1: the signal may go.
 */
static int catch_step(struct decide *d, size_t k, struct pass *p)
{
	struct sidecar_catch *c = &d->sidecars[k].stop.catch;
	int signo = d->cfg.sidecars[k].stop_signal;
	int64_t started = d->sidecars[k].started_us;

	switch (c->state) {
	case CATCH_OVER:
		return -1;
	case CATCH_UNASKED:
		if (!catch_needed(d, k, p->now)) {
			if (p->act)
				c->state = CATCH_OVER;
			return -1;
		}
		if (!dpriv_go(p))
			return 0;
		c->state = CATCH_WAITING;
		c->from_us = c->next_us = p->now;
		break;
	case CATCH_WAITING:
		if (c->result > 0) {
			if (dpriv_go(p)) {
				c->state = CATCH_OVER;
				SAY_SC(d, k, .kind = NOTE_CATCHES, .signo = signo, .us = p->now - c->from_us);
			}
			return -1;
		}
		if (c->result < 0) {
			if (dpriv_go(p)) {
				c->state = CATCH_OVER;
				SAY_SC(d, k, .kind = NOTE_CATCHES_UNKNOWN, .signo = signo, .result = c->result);
			}
			return -1;
		}
		break;
	case CATCH_LOOKING:
		break;
	}
	if (dpriv_reached(p, started + CATCH_WAIT_US)) {
		if (dpriv_go(p)) {
			c->state = CATCH_OVER;
			SAY_SC(d, k, .kind = NOTE_CATCHES_NOT, .signo = signo, .us = p->now - started,
			       .limit_us = p->now - c->from_us);
		}
		return -1;
	}
	if (c->state == CATCH_LOOKING || !dpriv_reached(p, c->next_us) || !dpriv_go(p))
		return 0;
	/* The first look said not yet: say why the stop waits. */
	if (c->looks++ == 1)
		SAY_SC(d, k, .kind = NOTE_CATCHES_WAIT, .signo = signo, .us = started + CATCH_WAIT_US - p->now,
		       .limit_us = p->now - started);
	c->state = CATCH_LOOKING;
	c->next_us = p->now + CATCH_CHECK_US;
	p->act->kind = DECIDE_CATCHES;
	p->act->sidecar = k;
	p->act->signo = signo;
	return 1;
}

/* The stop's first request or signal, once the look at the handler allows it. */
static bool stop_goes(struct decide *d, size_t k, struct pass *p)
{
	int rc;

	if (!d->cfg.sidecars[k].drain_url && (rc = catch_step(d, k, p)) >= 0)
		return rc;
	if (!dpriv_go(p))
		return false;
	begin_stop(d, k, p->now, p->act);
	return true;
}

/* STOPPING: the stop request's retries, then (port) the probes. */
static bool stopping_http(struct decide *d, size_t k, struct pass *p)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct sidecar_stop *st = &d->sidecars[k].stop;

	if (!cfg->stop_url || st->http_inflight || !dpriv_reached(p, st->retry_us) || !dpriv_go(p))
		return false;
	st->retry_us = INT64_MAX;
	if (st->answer != ANSWER_ACCEPTED) {
		http_action(d, k, DECIDE_HTTP_STOP, cfg->stop_url,
			    dpriv_min64(STOP_REQUEST_US, st->deadline_us - p->now), p->act);
		return true;
	}
	/*
	 * Port: refused connections on the ready URL (else the stop URL) mean
	 * it is gone. Which door to watch is decided here alone, as what its
	 * answer means is: the stopper connects to the URL the action names.
	 */
	http_action(d, k, DECIDE_HTTP_GONE, cfg->ready_url ? cfg->ready_url : cfg->stop_url,
		    dpriv_min64(CONNECT_TIMEOUT_US, st->deadline_us - p->now), p->act);
	return true;
}

/* A sidecar that no signal can reach (port confirmation) has failed when it needs one: -> FAILED. */
static bool cannot_signal(struct decide *d, size_t k, enum stop_failure why)
{
	struct sidecar_stop *st = &d->sidecars[k].stop;

	if (d->cfg.sidecars[k].confirm != CONFIRM_PORT)
		return false;
	st->state = SC_FAILED;
	st->failure = why;
	return true;
}

/* STOPPING -> TERMINATING: the stop did not work within --stop-timeout, or was refused. */
static bool escalate(struct decide *d, size_t k, int64_t now, struct decide_action *act)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct sidecar_stop *st = &d->sidecars[k].stop;

	if (st->answer == ANSWER_REFUSED) {
		if (cannot_signal(d, k, FAILURE_STOP_REFUSED))
			return false;
		st->state = SC_TERMINATING;
		st->deadline_us = now + d->cfg.kill_after_us;
		signal_action(d, k, SIGTERM, act);
		return true;
	}
	if (cannot_signal(d, k, FAILURE_STILL_RUNNING)) {
		SAY_SC(d, k, .kind = NOTE_BLIND_TIMEOUT, .us = d->cfg.stop_timeout_us,
		       .flag = st->answer == ANSWER_ACCEPTED);
		return false;
	}
	st->state = SC_TERMINATING;
	st->deadline_us = now + d->cfg.kill_after_us;
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

/* UP: where the stop begins (see the list above). */
static bool stop_begins(struct decide *d, size_t k, struct pass *p)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct decide_sidecar *sc = &d->sidecars[k];

	if (!dside_counts(d, k)) {
		if (dpriv_go(p)) {
			sc->stop.state = SC_GONE;
			sc->stop.gone_from = SC_UP;
		}
		return false;
	}
	if (cfg->confirm == CONFIRM_PORT && !cfg->stop_url) {
		if (dpriv_go(p)) {
			cannot_signal(d, k, FAILURE_NOT_VISIBLE);
			SAY_SC(d, k, .kind = NOTE_NO_SIGNAL_BLIND);
		}
		return false;
	}
	/*
	 * The stop goes out before anything else: a request, or a signal to
	 * the roots (their pids are known). A signal to every process needs
	 * them collected and watched first; so does a sidecar with no live
	 * container known (there may be nothing to stop).
	 */
	if (cfg->confirm == CONFIRM_PORT ||
	    (sc->containers > 0 && (cfg->stop_url || cfg->drain_url || !cfg->signal_all)))
		return stop_goes(d, k, p);
	if (!dpriv_go(p))
		return false;
	sc->stop.state = SC_WATCHING;
	watch_action(d, k, p);
	return true;
}

/* The next step for sidecar k, the one being stopped; false: it waits (or is settled). */
static bool sidecar_step(struct decide *d, size_t k, struct pass *p)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct sidecar_stop *st = &d->sidecars[k].stop;
	int rc;

	/* The stop went out first: now its processes are collected and watched. */
	if (cfg->confirm == CONFIRM_PROCESSES && !st->watched && st->state >= SC_DRAINING && st->state <= SC_KILLING) {
		if (!dpriv_go(p))
			return false;
		watch_action(d, k, p);
		return true;
	}
	/* A signal that failed for want of resources, again. */
	if (st->signal_due && st->state >= SC_STOPPING && st->state <= SC_KILLING && dpriv_reached(p, st->retry_us)) {
		if (!dpriv_go(p))
			return false;
		signal_action(d, k, st->last_signal, p->act);
		return true;
	}
	switch (st->state) {
	case SC_UP:
		return stop_begins(d, k, p);
	case SC_WATCHING:
		return stop_goes(d, k, p);
	case SC_DRAINING:
		/* The drain request's own timeout bounds the wait for its answer. */
		if (st->http_inflight || !dpriv_reached(p, st->deadline_us))
			return false;
		if ((rc = catch_step(d, k, p)) >= 0)
			return rc;
		if (!dpriv_go(p))
			return false;
		start_stop(d, k, p->now, p->act);
		return true;
	case SC_STOPPING:
		if (st->answer == ANSWER_REFUSED || dpriv_reached(p, st->deadline_us))
			return dpriv_go(p) && escalate(d, k, p->now, p->act);
		return stopping_http(d, k, p);
	case SC_TERMINATING:
		if (!dpriv_reached(p, st->deadline_us) || !dpriv_go(p))
			return false;
		st->state = SC_KILLING;
		st->deadline_us = p->now + (d->cfg.kill_after_us > KILL_CONFIRM_MIN_US ? d->cfg.kill_after_us
											: KILL_CONFIRM_MIN_US);
		SAY_SC(d, k, .kind = NOTE_SENDING_SIGKILL);
		signal_action(d, k, SIGKILL, p->act);
		return true;
	case SC_KILLING:
		if (!dpriv_reached(p, st->deadline_us) || !dpriv_go(p))
			return false;
		st->state = SC_FAILED;
		st->failure = FAILURE_STILL_RUNNING;
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
	return sc->stop.state == SC_GONE || sc->stop.state == SC_FAILED;
}

bool dside_drain_step(struct decide *d, struct pass *p)
{
	while (d->current > 0) {
		size_t k = d->current - 1;

		if (sidecar_step(d, k, p))
			return true;
		if (!settled(&d->sidecars[k]) || !dpriv_go(p))
			return false;
		d->current--;
	}
	return false;
}

bool dside_failed(const struct decide *d)
{
	size_t i;

	for (i = 0; i < d->cfg.nsidecars; i++)
		if (d->sidecars[i].stop.state == SC_FAILED)
			return true;
	return false;
}

bool dside_awaited(const struct decide *d)
{
	size_t i;

	for (i = 0; i < d->cfg.nsidecars; i++)
		if (d->sidecars[i].stop.http_inflight || d->sidecars[i].exit.pending)
			return true;
	return false;
}

/* ---- exit codes --------------------------------------------------------------- */

bool dside_codes_step(struct decide *d, struct pass *p)
{
	bool due = false;
	size_t i;

	for (i = 0; i < d->cfg.nsidecars; i++) {
		struct sidecar_exit *ex = &d->sidecars[i].exit;

		if (!ex->pending || !ex->backoff_us || !dpriv_reached(p, ex->next_us) || !dpriv_go(p))
			continue;
		/* The attempt is made now; the next one, if needed, after the backoff. */
		ex->next_us = p->now + ex->backoff_us;
		ex->backoff_us = dpriv_min64(ex->backoff_us * 2, STATUS_MAX_US);
		due = true;
	}
	return due;
}

void dside_expire_codes(struct decide *d, struct pass *p)
{
	size_t i;

	/* Exit codes the kernel did not publish within STATUS_GIVE_UP_US are unknown. */
	for (i = 0; i < d->cfg.nsidecars; i++) {
		struct sidecar_exit *ex = &d->sidecars[i].exit;

		while (ex->pending && ex->backoff_us && dpriv_reached(p, ex->exited_us + STATUS_GIVE_UP_US) &&
		       dpriv_go(p))
			dside_status(d, i, DECIDE_CODE_UNKNOWN, p->now);
	}
}

/* ---- events ------------------------------------------------------------------- */

/* age: how long its root's program had run (0: unknown, or it began when seen). */
bool dside_seen(struct decide *d, size_t k, int64_t age, int64_t now)
{
	struct decide_sidecar *sc = &d->sidecars[k];
	int64_t started = now - (age > 0 ? age : 0);

	/* The youngest program of its roots decides whether its stop signal may have to wait. */
	if (!sc->seen || started > sc->started_us)
		sc->started_us = started;
	d->sidecars[k].seen = true;
	d->sidecars[k].seen_us = now;
	d->sidecars[k].containers++;
	plan_check(d, k);
	return true;
}

/* A root of the sidecar exited; pid: it was watched (0: gone before it could be). */
bool dside_exited(struct decide *d, size_t k, unsigned container, int pid, int64_t now)
{
	struct decide_sidecar *sc = &d->sidecars[k];

	/* Not of our doing: said, for it may fail the pod or leave the apps without their proxy. */
	if (pid && sc->stop.state == SC_UP)
		SAY_SC(d, k, .kind = NOTE_SIDECAR_EXITED_EARLY, .container = container, .pid = pid,
		       .flag = d->phase >= PHASE_DRAINING);
	if (sc->containers > 0)
		sc->containers--;
	/* Nobody asked it to stop: its code, when it comes, says what happened. */
	if (sc->stop.state == SC_UP && d->phase < PHASE_DRAINING)
		sc->exit.died++;
	sc->exit.pending++;
	sc->exit.exited_us = now;
	sc->exit.next_us = now;
	sc->exit.backoff_us = STATUS_FIRST_US;
	return true;
}

/*
 * A sidecar exited while the apps ran and before any stop of ours: its code
 * says what most likely happened, and the restart policy what it means
 * (the note about exit codes and their fix is for a stop that went wrong;
 * none was sent). --on-sidecar-exit=fail may stop the apps.
 */
static void sidecar_died(struct decide *d, size_t k, int code, int64_t now)
{
	bool never = d->cfg.policy == POLICY_NEVER;

	SAY_SC(d, k, .kind = NOTE_SIDECAR_DIED, .code = code, .flag = never, .always = d->cfg.policy == POLICY_ALWAYS,
	       .hint = never && code != 0 && d->cfg.on_sidecar_exit == SIDECAR_EXIT_WARN);
	dnat_apps_stop_begin(d, k, code, now);
}

bool dside_status(struct decide *d, size_t k, int code, int64_t now)
{
	struct sidecar_exit *ex = &d->sidecars[k].exit;
	bool died;

	if (code == DECIDE_CODE_PENDING)
		return true;
	if (ex->pending > 0)
		ex->pending--;
	if (!ex->pending)
		ex->backoff_us = 0;
	died = ex->died > 0;
	if (died) {
		ex->died--;
		sidecar_died(d, k, code, now);
	}
	if (code == DECIDE_CODE_UNKNOWN) {
		if (ex->code == DECIDE_CODE_PENDING && !ex->pending)
			ex->code = DECIDE_CODE_UNKNOWN;
		return true;
	}
	/*
	 * Of several containers, the first that fails the pod is the one to
	 * tell. Under Always a container that died while the pod ran was
	 * restarted, and fails nothing: its death was said, and the code to
	 * tell is that of the container the deletion stopped.
	 */
	if (died && d->cfg.policy == POLICY_ALWAYS)
		return true;
	if (ex->code <= 0)
		ex->code = code;
	/*
	 * What a non-zero exit after a stop will do to the pod, and what to
	 * change. Under Always the stop is the pod's deletion's: its exit code
	 * counts for nothing.
	 */
	if (code != 0 && !died && d->cfg.policy != POLICY_ALWAYS)
		SAY_SC(d, k, .kind = NOTE_SIDECAR_CODE, .code = code, .text = d->cfg.sidecars[k].exit_fix,
		       .flag = d->cfg.policy == POLICY_NEVER);
	return true;
}

bool dside_gone(struct decide *d, size_t k, int64_t now)
{
	struct sidecar_stop *st = &d->sidecars[k].stop;

	/* Not being stopped: nothing was asked of it. A failed sidecar stays failed: the stop was not ours. */
	if (st->state == SC_GONE || st->state == SC_UP || st->state == SC_FAILED)
		return false;
	st->gone_from = st->state;
	st->state = SC_GONE;
	st->gone_us = now;
	st->signal_due = false;
	return true;
}

bool dside_signal_result(struct decide *d, size_t k, int err, int64_t now)
{
	struct sidecar_stop *st = &d->sidecars[k].stop;

	/* ESRCH: it exited meanwhile; its watch reports that. */
	if (err == 0 || err == -ESRCH)
		return true;
	if (st->state == SC_GONE || st->state == SC_FAILED)
		return false;
	if (dpriv_transient(err)) {
		st->signal_due = true;
		st->retry_us = now + SIGNAL_RETRY_US;
		SAY_SC(d, k, .kind = NOTE_SIGNAL_RETRY, .result = err);
		return true;
	}
	st->state = SC_FAILED;
	/* Any other failure leaves it running. */
	st->failure = err == -EPERM ? FAILURE_NOT_PERMITTED : FAILURE_STILL_RUNNING;
	if (err == -EPERM)
		SAY_SC(d, k, .kind = NOTE_SIGNAL_NOT_PERMITTED, .signo = st->last_signal);
	else
		SAY_SC(d, k, .kind = NOTE_SIGNAL_FAILED, .result = err);
	return true;
}

/* Keeps the result of the last drain or stop request for the summary. */
static void keep_status(struct sidecar_stop *st, int result)
{
	if (st->requests > 0 && st->requests <= DECIDE_STATUSES_MAX)
		st->statuses[st->requests - 1] = result;
}

static bool stop_result(struct decide *d, size_t k, int result, int64_t now)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct sidecar_stop *st = &d->sidecars[k].stop;

	if (st->state != SC_STOPPING || st->answer != ANSWER_NONE)
		return false;
	if (is_2xx(result)) {
		st->answer = ANSWER_ACCEPTED;
		if (cfg->confirm == CONFIRM_PORT) {
			/* Nothing to watch: look at the door instead. */
			st->retry_us = now;
			st->backoff_us = GONE_PROBE_FIRST_US;
		}
		SAY_SC(d, k, .kind = NOTE_STOP_ACCEPTED, .result = result, .us = d->cfg.stop_timeout_us,
		       .blind = cfg->confirm == CONFIRM_PORT);
		return true;
	}
	if (is_refusal(result)) {
		st->answer = ANSWER_REFUSED;
		SAY_SC(d, k, .kind = NOTE_STOP_REFUSED, .result = result, .blind = cfg->confirm == CONFIRM_PORT);
		return true;
	}
	if (now + st->backoff_us >= st->deadline_us) {
		SAY_SC(d, k, .kind = NOTE_STOP_NO_TIME, .result = result);
		return true;
	}
	st->retry_us = now + st->backoff_us;
	SAY_SC(d, k, .kind = NOTE_STOP_RETRY, .result = result, .count = st->requests, .us = st->backoff_us);
	st->backoff_us = dpriv_min64(st->backoff_us * 2, STOP_RETRY_MAX_US);
	return true;
}

bool dside_http_result(struct decide *d, size_t k, enum decide_http_purpose purpose, int result, int64_t now)
{
	const struct decide_sidecar_config *cfg = &d->cfg.sidecars[k];
	struct sidecar_stop *st = &d->sidecars[k].stop;

	switch (purpose) {
	case DECIDE_HTTP_READY:
		return ready_result(d, k, result, now);
	case DECIDE_HTTP_DRAIN:
		st->http_inflight = false;
		keep_status(st, result);
		if (st->state != SC_DRAINING)
			return false;
		if (is_2xx(result)) {
			st->deadline_us = now + cfg->drain_time_us;
			if (cfg->drain_time_us)
				SAY_SC(d, k, .kind = NOTE_DRAIN_ACCEPTED, .result = result, .us = cfg->drain_time_us);
		} else {
			st->deadline_us = now;
			SAY_SC(d, k, .kind = NOTE_DRAIN_FAILED, .result = result);
		}
		return true;
	case DECIDE_HTTP_STOP:
		st->http_inflight = false;
		keep_status(st, result);
		return stop_result(d, k, result, now);
	case DECIDE_HTTP_CHECK:
		if (d->sidecars[k].ready.check != CHECK_ASKING)
			return false;
		d->sidecars[k].ready.check = CHECK_DONE;
		if (result == -ECONNREFUSED)
			SAY_SC(d, k, .kind = NOTE_STOP_ENDPOINT_SHUT, .text = cfg->stop_url);
		return true;
	case DECIDE_HTTP_GONE:
		st->http_inflight = false;
		if (st->state != SC_STOPPING)
			return false;
		if (result == -ECONNREFUSED) {
			SAY_SC(d, k, .kind = NOTE_PORT_CLOSED);
			dside_gone(d, k, now);
			return true;
		}
		st->retry_us = now + st->backoff_us;
		st->backoff_us = dpriv_min64(st->backoff_us * 2, GONE_PROBE_MAX_US);
		return true;
	}
	return false;
}

/* Pre-flight said its stop endpoint is missing: no look of ours to say it again (one in flight still reports). */
bool dside_no_endpoint(struct decide *d, size_t k)
{
	if (d->sidecars[k].ready.check == CHECK_ASKING)
		return false;
	d->sidecars[k].ready.check = CHECK_DONE;
	return true;
}

/* The outcome of DECIDE_CATCHES. */
bool dside_catches(struct decide *d, size_t k, int result)
{
	d->sidecars[k].stop.catch.result = result;
	if (d->sidecars[k].stop.catch.state != CATCH_LOOKING)
		return false;
	d->sidecars[k].stop.catch.state = CATCH_WAITING;
	return true;
}

/*
 * What the stop signal did to the sidecar's roots, looked at just before it
 * went: said when it fails the pod (no handler: 128 + the signal; ignored:
 * 137 after the timeouts), with the fix, and kept for the summary.
 */
bool dside_fate(struct decide *d, size_t k, int fate)
{
	struct sidecar_stop *st = &d->sidecars[k].stop;

	if (fate <= DECIDE_FATE_NONE || fate > DECIDE_FATE_DIES || st->fate != DECIDE_FATE_NONE)
		return false;
	st->fate = (enum decide_fate)fate;
	SAY_SC(d, k, .kind = NOTE_STOP_FATE, .signo = st->last_signal, .result = fate,
	       .code = fate == DECIDE_FATE_DIES ? 128 + st->last_signal : fate == DECIDE_FATE_IGNORES ? 137 : 0,
	       .flag = d->cfg.policy == POLICY_NEVER);
	return true;
}

/* Its program under rearguard sidecar ended: how, for the summary (its container's code comes from the kernel). */
bool dside_program(struct decide *d, size_t k, int code, const char *how)
{
	struct sidecar_stop *st = &d->sidecars[k].stop;

	if (!how || !*how || strlen(how) >= sizeof(st->program) || strcmp(st->program, how) == 0)
		return false;
	str_copy(st->program, how, sizeof(st->program));
	SAY_SC(d, k, .kind = NOTE_PROGRAM_ENDED, .text = st->program, .code = code);
	return true;
}

const char *decide_fate_word(enum decide_fate fate)
{
	switch (fate) {
	case DECIDE_FATE_NONE: return NULL;
	case DECIDE_FATE_WRAPPED: return "wrapped";
	case DECIDE_FATE_HANDLES: return "handles";
	case DECIDE_FATE_UNKNOWN: return "unknown";
	case DECIDE_FATE_IGNORES: return "ignores";
	case DECIDE_FATE_DIES: return "dies";
	}
	return NULL;
}

/* ---- views -------------------------------------------------------------------- */

static const char *outcome(const struct sidecar_stop *st, bool seen)
{
	switch (st->state) {
	case SC_GONE:
		switch (st->gone_from) {
		case SC_DRAINING:
		case SC_STOPPING: return "stopped";
		case SC_TERMINATING: return "terminated";
		case SC_KILLING: return "killed";
		case SC_UP:
		case SC_WATCHING:
		case SC_GONE:
		case SC_FAILED: break;
		}
		return seen ? "exited-before-stop" : "not-found";
	case SC_FAILED:
		switch (st->failure) {
		case FAILURE_STILL_RUNNING: return "still-running";
		case FAILURE_NOT_PERMITTED: return "not-permitted";
		case FAILURE_NOT_VISIBLE: return "not-visible";
		case FAILURE_STOP_REFUSED: return "stop-refused";
		}
		return "still-running";
	case SC_UP:
	case SC_WATCHING:
	case SC_DRAINING:
	case SC_STOPPING:
	case SC_TERMINATING:
	case SC_KILLING: break;
	}
	return "running";
}

static enum decide_stage stage(const struct sidecar_stop *st)
{
	switch (st->state) {
	case SC_UP: return DECIDE_SIDECAR_UP;
	case SC_GONE: return DECIDE_SIDECAR_GONE;
	case SC_FAILED: return DECIDE_SIDECAR_FAILED;
	case SC_WATCHING:
	case SC_DRAINING:
	case SC_STOPPING:
	case SC_TERMINATING:
	case SC_KILLING: break;
	}
	return DECIDE_SIDECAR_STOPPING;
}

bool decide_sidecar_view(const struct decide *d, size_t k, struct decide_sidecar_view *v)
{
	const struct decide_sidecar *sc;

	memset(v, 0, sizeof(*v));
	if (k >= d->cfg.nsidecars)
		return false;
	sc = &d->sidecars[k];
	v->name = d->cfg.sidecars[k].name;
	v->stage = stage(&sc->stop);
	v->outcome = outcome(&sc->stop, sc->seen);
	v->not_permitted = sc->stop.state == SC_FAILED && sc->stop.failure == FAILURE_NOT_PERMITTED;
	v->seen = sc->seen;
	v->counts = dside_counts(d, k);
	v->ready = sc->ready.state == READY_YES;
	v->ready_us = sc->ready.at_us;
	v->ready_polls = sc->ready.polls;
	v->ready_last = sc->ready.last;
	v->stop_sent_us = sc->stop.stop_sent_us;
	v->gone_us = sc->stop.gone_us;
	v->deadline_us = sc->stop.deadline_us;
	v->exit_code = sc->exit.code;
	v->fate = sc->stop.fate;
	v->program = sc->stop.program[0] ? sc->stop.program : NULL;
	v->requests = sc->stop.requests;
	memcpy(v->statuses, sc->stop.statuses, sizeof(v->statuses));
	return true;
}
