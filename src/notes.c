#include "config.h"

#include "notes.h"

#include "decide.h"
#include "log.h"
#include "parse.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* A duration as the command line writes it (20s, 2m, 250ms): buf is the caller's. */
static const char *dur(int64_t us, char buf[32])
{
	format_duration(us / 1000, buf);
	return buf;
}

static const char *err(int result)
{
	return strerror(-result);
}

/* NOTE_DRAIN: the drain begins, in the words of its reason. */
static void log_drain(const struct decide_note *n)
{
	const char *reason = decide_reason_word(n->reason);
	char d1[32];

	switch (n->reason) {
	case REASON_STARTUP_TIMEOUT:
		log_msg(LOG_ERROR, FIELDS(LF_STR("reason", reason), LF_INT("apps_seen", n->count)),
			"%s within --startup-timeout %s: draining the sidecars",
			n->count ? "fewer app containers than --apps appeared" : "no app container appeared",
			dur(n->us, d1));
		return;
	case REASON_TERM_GRACE:
		log_msg(LOG_WARN, FIELDS(LF_STR("reason", reason), LF_DURATION("held", n->limit_us)),
			"apps still running %s after the termination request: draining the sidecars", dur(n->us, d1));
		return;
	case REASON_APPS_DONE:
		if (n->limit_us) {
			log_msg(LOG_INFO,
				FIELDS(LF_STR("reason", reason), LF_INT("apps", n->count), LF_DURATION("held", n->limit_us)),
				"apps done %s after the termination request, the sidecars held for them: draining the "
				"sidecars",
				dur(n->limit_us, d1));
			return;
		}
		log_msg(LOG_INFO, FIELDS(LF_STR("reason", reason), LF_INT("apps", n->count)),
			"apps done: draining the sidecars");
		return;
	case REASON_SIDECAR_EXITED:
		log_msg(LOG_WARN,
			FIELDS(LF_STR("reason", reason), LF_INT("apps", n->count), LF_STR("sidecar", n->sidecar)),
			"apps stopped after their sidecar failed: draining the other sidecars");
		return;
	case REASON_NONE:
	case REASON_SECOND_SIGNAL:
	case REASON_READY_TIMEOUT:
	case REASON_RESUME:
	case REASON_DRAIN_FILE:
	case REASON_DRAIN_COMMAND:
	case REASON_SIGNAL:
		log_msg(LOG_INFO, FIELDS(LF_STR("reason", reason), LF_INT("apps", n->count)),
			"drain requested: draining the sidecars");
		return;
	}
}

/*
 * NOTE_ALWAYS_KEPT: a drain that restartPolicy Always refuses before the
 * pod's deletion, in the words of what asked for it.
 */
static void log_always_kept(const struct decide_note *n, const struct notes *ctx)
{
	const char *reason = decide_reason_word(n->reason);
	char d1[32];

	switch (n->reason) {
	case REASON_STARTUP_TIMEOUT:
		log_msg(LOG_WARN, FIELDS(LF_STR("reason", reason), LF_INT("apps_seen", n->count)),
			"%s within --startup-timeout %s: under restartPolicy Always the sidecars stay (only the pod's "
			"deletion stops them)",
			n->count ? "fewer app containers than --apps appeared" : "no app container appeared",
			dur(n->us, d1));
		return;
	case REASON_DRAIN_FILE:
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", ctx->dir), LF_STR("reason", reason)),
			"drain file ignored: under restartPolicy Always only the pod's deletion stops the sidecars (the "
			"kubelet would restart them, and rearguard, at once)");
		return;
	case REASON_RESUME:
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", ctx->dir), LF_STR("reason", reason)),
			"an earlier run of rearguard drained, but under restartPolicy Always the kubelet restarted this "
			"one, so the pod is not being deleted: its files are stale, and the sidecars are watched afresh");
		return;
	case REASON_NONE:
	case REASON_APPS_DONE:
	case REASON_SIDECAR_EXITED:
	case REASON_TERM_GRACE:
	case REASON_SECOND_SIGNAL:
	case REASON_READY_TIMEOUT:
	case REASON_DRAIN_COMMAND:
	case REASON_SIGNAL:
		break;
	}
	log_msg(LOG_WARN, FIELDS(LF_STR("reason", reason)),
		"drain refused: under restartPolicy Always only the pod's deletion stops the sidecars");
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
static const char *death_meaning(bool never, bool always, int code)
{
	if (always)
		return "Under restartPolicy Always the kubelet restarts it, in place and after its back-off (the apps are "
		       "without it meanwhile); rearguard takes the new container for the same sidecar, and holds and "
		       "stops it after the apps when the pod is deleted";
	if (never)
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

/* Why --on-sidecar-exit=fail leaves the apps alone (NOTE_APPS_STOP_NOT). */
static const char *apps_stop_not(enum decide_apps_kept kept)
{
	switch (kept) {
	case APPS_KEPT_ON_FAILURE:
		return "under restartPolicy OnFailure the kubelet restarts a failed sidecar itself, and would "
		       "restart apps stopped now";
	case APPS_KEPT_EXIT_0:
		return "it exited 0, which a sidecar does by its own choice: only a failure stops the apps";
	case APPS_KEPT_ALWAYS:
		return "under restartPolicy Always the kubelet restarts a sidecar that ends itself, and would restart "
		       "apps stopped now";
	case APPS_KEPT_DELETED:
		break;
	}
	return "the pod is being deleted: the kubelet stops the apps itself";
}


const char *notes_fate_fix(enum decide_fate fate)
{
	switch (fate) {
	case DECIDE_FATE_DIES:
		return "run its command under rearguard sidecar (rearguard inject and the webhook do where the pod "
		       "spec gives the command), make its program exit 0 on the signal, or stop it with a signal it "
		       "handles (stop=signal:NAME)";
	case DECIDE_FATE_IGNORES:
		return "run its command under rearguard sidecar (rearguard inject and the webhook do where the pod "
		       "spec gives the command), or stop it with a signal it handles (stop=signal:NAME)";
	case DECIDE_FATE_NONE:
	case DECIDE_FATE_WRAPPED:
	case DECIDE_FATE_HANDLES:
	case DECIDE_FATE_UNKNOWN:
		break;
	}
	return NULL;
}

/* What the stop signal does to the sidecar's main process, said as it goes: before its code says it. */
static void fate_note(const struct decide_note *n, const char *sig)
{
	const char *meaning = n->flag ? "which fails the pod under restartPolicy Never"
				      : "on which the kubelet restarts it under OnFailure, and the pod does not complete";

	switch ((enum decide_fate)n->result) {
	case DECIDE_FATE_DIES:
		log_msg(LOG_WARN,
			FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("signal", sig), LF_INT("exit_code", n->code),
			       LF_STR("fix", notes_fate_fix(DECIDE_FATE_DIES))),
			"%s's main process has no handler for SIG%s: it dies of it and its container exits %d, %s",
			n->sidecar, sig, n->code, meaning);
		return;
	case DECIDE_FATE_IGNORES:
		log_msg(LOG_WARN,
			FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("signal", sig), LF_INT("exit_code", n->code),
			       LF_STR("fix", notes_fate_fix(DECIDE_FATE_IGNORES))),
			"%s's main process ignores SIG%s: it ends only at SIGKILL, once --stop-timeout and --kill-after "
			"have passed, and its container exits %d, %s",
			n->sidecar, sig, n->code, meaning);
		return;
	case DECIDE_FATE_WRAPPED:
		log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("signal", sig)),
			"%s runs under rearguard sidecar: its container exits 0 when its program ends of the stop",
			n->sidecar);
		return;
	case DECIDE_FATE_HANDLES:
		log_msg(LOG_DEBUG, FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("signal", sig)),
			"%s's main process handles SIG%s", n->sidecar, sig);
		return;
	case DECIDE_FATE_UNKNOWN:
		log_msg(LOG_DEBUG, FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("signal", sig)),
			"cannot tell what SIG%s does to %s's main process", sig, n->sidecar);
		return;
	case DECIDE_FATE_NONE:
		break;
	}
	log_msg(LOG_DEBUG, FIELDS(LF_STR("sidecar", n->sidecar)), "what the stop signal does to %s was not looked at",
		n->sidecar);
}

/*
 * Each note of decide as the line users read. The switch names every kind
 * and has no default: a kind added to decide.h without its words here is
 * a compile error (-Wswitch).
 */
void notes_log(void *data, const struct decide_note *n)
{
	static const struct notes none;
	const struct notes *ctx = data ? data : &none;
	const char *sig = signal_name(n->signo);
	char d1[32], d2[32], what[64], cause[256];
	int died;

	switch (n->kind) {
	/* the apps and the pod */
	case NOTE_APP_RESTARTED:
		log_msg(LOG_INFO,
			FIELDS(LF_STR("app", n->app), LF_INT("container", n->container), LF_INT("replaces", n->other)),
			"app restarted: waiting for the new attempt");
		return;
	case NOTE_RESTART_WAIT:
		if (n->always) {
			log_msg(LOG_INFO,
				FIELDS(LF_STR("app", n->app), LF_INT("container", n->container),
				       LF_INT("exit_code", n->code >= 0 ? n->code : -1)),
				"app exited under restartPolicy Always: the kubelet restarts it; the sidecars stay (only the "
				"pod's deletion stops them)");
			return;
		}
		log_msg(LOG_INFO, FIELDS(LF_STR("app", n->app), LF_INT("container", n->container)),
			"app %s under restartPolicy OnFailure: keeping the sidecars for its restart (at most %s)",
			n->code == DECIDE_CODE_UNKNOWN ? "exit code unknown" : "failed", dur(n->us, d1));
		return;
	case NOTE_CODES_DIFFER:
		log_msg(LOG_WARN,
			FIELDS(LF_STR("app", n->app), LF_INT("container", n->container), LF_STR("report", n->report),
			       LF_INT("reported", n->reported), LF_INT("exit_code", n->code)),
			"the app's report and its container's exit code differ: acting on the container's");
		return;
	case NOTE_REPORT_ALONE:
		log_msg(LOG_INFO, FIELDS(LF_STR("report", n->report)),
			"apps/NAME matches no app container: counting it as an app of its own");
		return;
	case NOTE_REPORTED:
		log_msg(LOG_INFO,
			FIELDS(LF_STR("app", n->app), LF_INT("container", n->container), LF_STR("report", n->report),
			       LF_INT("exit_code", n->code), LF_STR("running", n->flag ? "yes" : NULL)),
			"app reported that it finished");
		return;
	case NOTE_APP_NOT_TRACKED:
		log_msg(LOG_ERROR, FIELDS(LF_INT("container", n->container)),
			"out of memory: app %s not tracked (the apps are not taken for done while it may run)", n->app);
		return;
	case NOTE_REPORT_NOT_TRACKED:
		log_error("out of memory: report %s ignored", n->report);
		return;
	case NOTE_RESTART_GIVEN_UP:
		log_msg(LOG_WARN, FIELDS(LF_STR("app", n->app), LF_INT("container", n->container)),
			"app did not come back within --restart-grace %s: treating it as done", dur(n->us, d1));
		return;
	case NOTE_CODE_UNPUBLISHED:
		log_msg(LOG_DEBUG, FIELDS(LF_STR("app", n->app), LF_INT("container", n->container)),
			"exit code not published by the kernel: unknown");
		return;
	case NOTE_RESCAN_FAILED:
		log_msg(LOG_WARN, FIELDS(LF_STR("error", err(n->result))), "cannot rescan /proc: trying again shortly");
		return;
	case NOTE_RESCAN_WORKS:
		log_info("rescanning /proc works again");
		return;
	case NOTE_STALLED:
		log_msg(LOG_WARN, FIELDS(LF_INT("stalled_ms", (long long)(n->us / 1000))),
			"the agent did not run for %s while a container was expected (the node's processors were busy): "
			"a container that lived less than that may have come and gone unseen; an app reported through "
			"`rearguard run` or apps/NAME is seen whatever the timing",
			dur(n->us, d1));
		return;
	case NOTE_TERMINATE:
		log_info("termination requested: keeping the sidecars until the apps exit, at most %s "
			 "(a second signal drains at once)",
			 dur(n->us, d1));
		return;
	case NOTE_TERMINATE_DRAINING:
		log_info("signal received: already draining");
		return;
	case NOTE_RESUME_APPS_DONE:
		log_msg(LOG_INFO, FIELDS(LF_STR("dir", ctx->dir)),
			"apps-done found: an earlier run of rearguard had decided the apps are done; draining now");
		return;
	case NOTE_RESUME_DONE:
		log_msg(LOG_INFO, FIELDS(LF_STR("dir", ctx->dir)),
			"done found: an earlier run of rearguard finished the drain; exiting");
		return;
	case NOTE_SIDECAR_WAIT:
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecars", n->text)),
			"apps done, but sidecar %s has not started yet: waiting for it up to --sidecar-wait %s, "
			"to stop it (the kubelet starts a sidecar listed after the apps after them)",
			n->text, dur(n->us, d1));
		return;
	case NOTE_SIDECAR_WAIT_OVER:
		log_msg(LOG_INFO, FIELDS(LF_DURATION("waited", n->us)), "the awaited sidecar started: stopping it");
		return;
	case NOTE_SIDECAR_WAIT_EXPIRED:
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecars", n->text)),
			"sidecar %s did not start within --sidecar-wait %s: draining without it (if it starts "
			"later nothing stops it; check its match= against the start-up log)",
			n->text, dur(n->us, d1));
		return;
	case NOTE_DRAIN:
		log_drain(n);
		return;
	case NOTE_ALWAYS_KEPT:
		log_always_kept(n, ctx);
		return;
	case NOTE_WRITTEN_AFTER_ALL:
		log_msg(LOG_INFO, FIELDS(LF_STR("file", protocol_file_name(n->file)), LF_INT("attempts", n->count)),
			"wrote the file after all");
		return;
	case NOTE_WRITE_FAILED:
		log_msg(LOG_WARN,
			FIELDS(LF_STR("file", protocol_file_name(n->file)), LF_STR("error", err(n->result)),
			       LF_INT("attempts", n->count)),
			"cannot write the file: trying again in %s", dur(n->us, d1));
		return;
	case NOTE_DONE_GIVEN_UP:
		log_msg(
		    LOG_ERROR, FIELDS(LF_STR("error", err(n->result))),
		    "could not write the done file within %s: exiting without it (a restarted agent will drain again)",
		    dur(n->us, d1));
		return;
	case NOTE_STOP_FAILED:
		log_msg(LOG_ERROR, FIELDS(LF_INT("drain_exit_code", n->code)), "not every sidecar could be stopped");
		return;
	case NOTE_IGNORED:
		log_msg(LOG_DEBUG, FIELDS(LF_STR("event", decide_event_name(n->event)), LF_STR("sidecar", n->sidecar)),
			"event changes nothing: ignored");
		return;
	/* readiness, and the sidecars' exits */
	case NOTE_READY:
		log_msg(LOG_INFO,
			FIELDS(LF_STR("sidecar", n->sidecar), LF_DURATION("after", n->us), LF_INT("polls", n->count)),
			"sidecar ready%s",
			!n->flag   ? ""
			: n->blind ? " (no ready URL, and its process cannot be seen)"
				   : " (no ready URL: its process is running)");
		return;
	case NOTE_NOT_READY_YET:
		log_msg(LOG_DEBUG, FIELDS(LF_STR("sidecar", n->sidecar)), "not ready yet (%s): next poll in %s",
			decide_result_phrase(n->result, what), dur(n->us, d1));
		return;
	case NOTE_ALL_READY:
		log_info("every sidecar is ready: writing the ready file");
		return;
	case NOTE_ALL_READY_COMMAND:
		log_info("every sidecar is ready: starting the command");
		return;
	case NOTE_ALL_READY_NO_FILE:
		log_info("every sidecar is ready (no ready file: the file protocol is unavailable)");
		return;
	case NOTE_NOT_READY_COMMAND:
		log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("url", n->text)),
			"sidecar not ready within %s: not starting the command (--no-wait starts it regardless)",
			dur(n->us, d1));
		return;
	case NOTE_NONE_DETECTED:
		log_msg(LOG_ERROR, NULL,
			"no known sidecar detected within --ready-timeout %s: the ready file will not "
			"be written; still watching the apps",
			dur(n->us, d1));
		return;
	case NOTE_NOT_READY:
		log_msg(LOG_ERROR, FIELDS(LF_STR("not_ready", n->text)),
			"sidecars not ready within --ready-timeout %s: the ready file will not be written; "
			"still watching the apps",
			dur(n->us, d1));
		return;
	case NOTE_STOP_ENDPOINT_SHUT:
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("url", n->text)),
			"the sidecar is ready, but its stop endpoint refuses connections: the stop request will "
			"fail and a signal will have to stop it");
		return;
	case NOTE_SIDECAR_EXITED_EARLY:
		log_msg(LOG_WARN,
			FIELDS(LF_INT("container", n->container), LF_STR("sidecar", n->sidecar), LF_INT("pid", n->pid)),
			"sidecar container exited %s",
			n->flag ? "before its stop: the stop was not ours" : "before the apps were done");
		return;
	case NOTE_SIDECAR_CODE:
		log_msg(
		    LOG_WARN,
		    FIELDS(LF_STR("sidecar", n->sidecar), LF_INT("exit_code", n->code), LF_STR("fix", n->text)),
		    "the sidecar exited %d: %s", n->code,
		    n->flag
			? "under restartPolicy Never the pod will be marked Failed although the apps succeeded"
			: "under restartPolicy OnFailure the kubelet will restart it, and the pod will not complete");
		return;
	case NOTE_SIDECAR_DIED:
		died = n->code > 128 && n->code < 128 + 65 ? n->code - 128 : 0;
		log_msg(n->code != 0 ? LOG_ERROR : LOG_WARN,
			FIELDS(LF_STR("sidecar", n->sidecar), LF_INT("exit_code", n->code),
			       LF_STR("signal", died > 0 ? signal_name(died) : NULL)),
			"sidecar %s %s. %s%s", n->sidecar, death_cause(n->code, cause, sizeof(cause)),
			death_meaning(n->flag, n->always, n->code),
			n->hint ? ": the apps run on without it until they end, or until the Job's "
				  "activeDeadlineSeconds (--on-sidecar-exit=fail stops them instead, so that the Job "
				  "fails now and its backoffLimit can retry it)"
				: "");
		return;
	/* native sidecars, and the apps stopped after a sidecar failed */
	case NOTE_NATIVE_SEEN:
		log_msg(
		    LOG_INFO,
		    FIELDS(LF_STR("native", n->text), LF_INT("container", n->container), LF_STR("known_by", decide_native_known_by(n->by))),
		    "%s: never waited for nor stopped (the kubelet restarts it, and stops it after the apps)",
		    n->flag ? "native sidecar restarted by the kubelet" : "native sidecar");
		return;
	case NOTE_NATIVE_EXITED:
		log_msg(LOG_INFO, FIELDS(LF_STR("native", n->text), LF_INT("container", n->container)),
			"native sidecar exited: the kubelet restarts it while the pod runs; its new container is "
			"known by its name");
		return;
	case NOTE_NATIVE_NOT_LISTED:
		log_error("out of memory: native sidecar %s not listed", n->text);
		return;
	case NOTE_APPS_STOP:
		log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("reason", decide_reason_word(REASON_SIDECAR_EXITED))),
			"--on-sidecar-exit=fail: stopping the apps as the kubelet would (SIGTERM to each main process, "
			"SIGKILL to every process --kill-after %s later), so that the Job fails now and its "
			"backoffLimit can retry it",
			dur(n->us, d1));
		return;
	case NOTE_APPS_STOP_NOT:
		log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", n->sidecar)),
			"--on-sidecar-exit=fail: the apps are not stopped: %s", apps_stop_not(n->kept));
		return;
	case NOTE_APP_SIGNAL_RETRY:
		log_msg(
		    LOG_WARN,
		    FIELDS(LF_STR("app", n->app), LF_INT("container", n->container), LF_STR("error", err(n->result))),
		    "cannot signal the app now: trying again shortly");
		return;
	case NOTE_APP_SIGNAL_NOT_PERMITTED:
		log_msg(LOG_ERROR, FIELDS(LF_STR("app", n->app), LF_INT("container", n->container)),
			"not permitted to signal the app: it runs on without its sidecar; for --on-sidecar-exit=fail, "
			"run rearguard under the apps' uid (securityContext.runAsUser), or as root with the KILL "
			"capability");
		return;
	case NOTE_APP_SIGNAL_FAILED:
		log_msg(
		    LOG_ERROR,
		    FIELDS(LF_STR("app", n->app), LF_INT("container", n->container), LF_STR("error", err(n->result))),
		    "cannot signal the app");
		return;
	/* the stop */
	case NOTE_STOP_ACCEPTED:
		log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", n->sidecar)),
			"stop request %s: waiting for %s (--stop-timeout %s)", decide_result_phrase(n->result, what),
			n->blind ? "it to stop accepting connections" : "its processes to exit", dur(n->us, d1));
		return;
	case NOTE_STOP_REFUSED:
		if (n->blind)
			log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", n->sidecar)),
				"stop endpoint %s, and without a shared PID namespace no signal can be sent: "
				"giving up on it",
				decide_result_phrase(n->result, what));
		else
			log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", n->sidecar)),
				"stop endpoint %s: falling back to SIGTERM", decide_result_phrase(n->result, what));
		return;
	case NOTE_STOP_NO_TIME:
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", n->sidecar)),
			"stop request %s: no time left for another try within --stop-timeout",
			decide_result_phrase(n->result, what));
		return;
	case NOTE_STOP_RETRY:
		log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", n->sidecar), LF_INT("attempt", n->count)),
			"stop request %s: trying again in %s", decide_result_phrase(n->result, what), dur(n->us, d1));
		return;
	case NOTE_DRAIN_ACCEPTED:
		log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", n->sidecar)),
			"drain request %s: the stop request follows after drain-time %s",
			decide_result_phrase(n->result, what), dur(n->us, d1));
		return;
	case NOTE_DRAIN_FAILED:
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", n->sidecar)),
			"drain request %s: going on with the stop request", decide_result_phrase(n->result, what));
		return;
	case NOTE_PORT_CLOSED:
		log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", n->sidecar)),
			"sidecar no longer accepts connections: stopped");
		return;
	case NOTE_NO_SIGNAL_BLIND:
		log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", n->sidecar)),
			"cannot stop the sidecar with a signal: its processes are not visible "
			"(the pod needs shareProcessNamespace: true)");
		return;
	case NOTE_BLIND_TIMEOUT:
		log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", n->sidecar)),
			"%s within --stop-timeout %s, and without a shared PID namespace no signal can "
			"be sent: giving up on it",
			n->flag ? "still accepting connections" : "the stop request was not accepted", dur(n->us, d1));
		return;
	case NOTE_SIGTERM_WAS_STOP:
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", n->sidecar)),
			"still running %s after SIGTERM: SIGKILL in %s", dur(n->us, d1), dur(n->limit_us, d2));
		return;
	case NOTE_SENDING_SIGTERM:
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", n->sidecar)),
			"still running %s after the stop request: sending SIGTERM", dur(n->us, d1));
		return;
	case NOTE_SENDING_SIGKILL:
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", n->sidecar)),
			"still running after SIGTERM: sending SIGKILL");
		return;
	case NOTE_KILL_FAILED:
		log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", n->sidecar)),
			"still running after SIGKILL (stuck in the kernel?): giving up on it");
		return;
	case NOTE_SIGNAL_RETRY:
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("error", err(n->result))),
			"cannot signal the sidecar now: trying again shortly");
		return;
	case NOTE_SIGNAL_NOT_PERMITTED:
		log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("signal", sig)),
			"not permitted to signal the sidecar: run rearguard with the sidecar's uid "
			"(securityContext.runAsUser), or as root with the KILL capability");
		return;
	case NOTE_SIGNAL_FAILED:
		log_msg(LOG_ERROR, FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("error", err(n->result))),
			"cannot signal the sidecar");
		return;
	case NOTE_CATCHES:
		log_msg(LOG_INFO,
			FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("signal", sig), LF_DURATION("waited", n->us)),
			"%s is ready for SIG%s: stopping", n->sidecar, sig);
		return;
	case NOTE_CATCHES_UNKNOWN:
		log_msg(LOG_WARN,
			FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("signal", sig),
			       LF_STR("error", decide_result_phrase(n->result, what))),
			"cannot tell whether %s catches SIG%s: stopping", n->sidecar, sig);
		return;
	case NOTE_CATCHES_NOT:
		log_msg(
		    LOG_WARN,
		    FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("signal", sig), LF_DURATION("waited", n->limit_us)),
		    "%s does not catch SIG%s %s after its start: stopping anyway (it may die of the signal)",
		    n->sidecar, sig, dur(n->us, d1));
		return;
	case NOTE_STOP_FATE:
		fate_note(n, sig);
		return;
	case NOTE_PROGRAM_ENDED:
		log_msg(n->code ? LOG_WARN : LOG_INFO,
			FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("program", n->text), LF_INT("exit_code", n->code)),
			"%s's program under rearguard sidecar ended (%s): its container exits %d", n->sidecar, n->text,
			n->code);
		return;
	case NOTE_CATCHES_WAIT:
		log_msg(LOG_INFO,
			FIELDS(LF_STR("sidecar", n->sidecar), LF_STR("signal", sig),
			       LF_DURATION("started_ago", n->limit_us)),
			"waiting for %s to catch SIG%s (started only just now; at most %s more)", n->sidecar, sig,
			dur(n->us, d1));
		return;
	}
	/* Not a kind decide.h knows. */
	log_msg(LOG_DEBUG, FIELDS(LF_INT("kind", n->kind)), "decide noted something without words");
}
