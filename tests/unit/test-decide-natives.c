/*
 * decide's native sidecars, listed and left alone, and the apps' stop
 * after a sidecar failed, --on-sidecar-exit=fail (decide-natives.c),
 * through the harness of decide-harness.h.
 */
#include "config.h"

#include "decide-harness.h"

/* One app and one sidecar, long running, under policy and --on-sidecar-exit what; then the sidecar exits with code. */
static void sidecar_exits_with(enum restart_policy policy, enum sidecar_exit_policy what, bool deleted, int code)
{
	setup(policy, 1, 1);
	cfg.on_sidecar_exit = what;
	renew();
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_app_seen(d, 3, "job", T - LONG_AGO);
	if (deleted)
		decide_terminate(d, T);
	decide_sidecar_exited(d, 0, T);
	decide_sidecar_status(d, 0, code, T);
}

/* --on-sidecar-exit=fail: a sidecar that fails while the apps run has the apps stopped, as the kubelet would. */
static void sidecar_fails_apps(void)
{
	setup(POLICY_NEVER, 2, 2);
	cfg.on_sidecar_exit = SIDECAR_EXIT_FAIL;
	renew();
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_sidecar_seen(d, 1, T - LONG_AGO);
	decide_app_seen(d, 3, "job", T - LONG_AGO);
	decide_app_seen(d, 4, "other", T - LONG_AGO);
	is_int(next(), NONE, "the apps run");
	decide_sidecar_exited(d, 1, T);
	is_int(next(), DECIDE_STATUS, "the sidecar's exit code is asked for");
	is_int(next(), NONE, "nothing is stopped before it is known: an exit 0 would not count");
	decide_sidecar_status(d, 1, 137, T);
	ok(noted_for(NOTE_APPS_STOP, "logs"), "the stop of the apps is noted, with the sidecar that failed");
	is_int(note(NOTE_APPS_STOP)->us, 5 * S, "and --kill-after");
	ok(noted(NOTE_SIDECAR_DIED) && !note(NOTE_SIDECAR_DIED)->hint, "no hint at the option that is given");
	is_int(next(), DECIDE_SIGNAL_APP, "a signal to the first app");
	is_int(last.app, 3, "container 3");
	is_int(last.signo, SIGTERM, "SIGTERM");
	ok(!last.all && last.urgent, "to its main process, before anything else");
	ok(!last.rescan_first, "its pid is known: no look at /proc first");
	decide_app_signal_result(d, 3, 0, T);
	is_int(next(), DECIDE_SIGNAL_APP, "then to the second");
	is_int(last.app, 4, "container 4");
	decide_app_signal_result(d, 4, -EPERM, T);
	ok(noted(NOTE_APP_SIGNAL_NOT_PERMITTED) && note(NOTE_APP_SIGNAL_NOT_PERMITTED)->container == 4,
	   "EPERM is noted (with the fix, in words)");
	is_int(next(), NONE, "then the grace");
	is_int(decide_deadline(d, T), T + 5 * S, "of --kill-after");
	T += 5 * S;
	is_int(next(), DECIDE_SIGNAL_APP, "still running after the grace");
	is_int(last.app, 3, "container 3");
	is_int(last.signo, SIGKILL, "SIGKILL");
	ok(last.all, "to every process of it");
	ok(last.rescan_first && last.pending_before_us == T - 30 * S,
	   "as a rescan made now lists them: decide asks for it, none having come back since the loop turned");
	decide_rescanned(d, 0, T);
	decide_app_signal_result(d, 3, 0, T);
	is_int(next(), NONE, "nothing more: the app that may not be signalled is left alone");
	is_int(decide_deadline(d, T), INT64_MAX, "no timer for the apps' stop any more");
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 137, T);
	is_int(next_skipping_rescans(), NONE, "the other app still runs: no drain yet");
	T += S;
	decide_app_exited(d, 4, T);
	decide_app_status(d, 4, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "both over: the drain");
	is_str(decide_reason_word(last.reason), "sidecar-exited", "reason sidecar-exited");
	ok(note(NOTE_DRAIN)->reason == REASON_SIDECAR_EXITED &&
		   noted_for(NOTE_DRAIN, "logs"),
	   "the drain's note says why, and which sidecar");
	is_int(next(), DECIDE_WATCH, "the failed sidecar: a look for what is left of it");
	is_int(last.sidecar, 1, "sidecar 1");
	decide_sidecar_gone(d, 1, T);
	is_int(next(), DECIDE_SIGNAL, "the other sidecar is stopped as usual");
	is_int(last.sidecar, 0, "sidecar 0");
	is_str(sc(1).outcome, "exited-before-stop", "the failed one: exited-before-stop");
	is_int(app(0).signal, SIGKILL, "the signals are kept for the summary");
	is_int(app(1).signal, 0, "but not one that was not sent");

	/* A transient failure: the same signal again shortly. */
	sidecar_exits_with(POLICY_NEVER, SIDECAR_EXIT_FAIL, false, 1);
	is_int(next(), DECIDE_SIGNAL_APP, "exit 1 is a failure too");
	decide_app_signal_result(d, 3, -EMFILE, T);
	ok(noted(NOTE_APP_SIGNAL_RETRY), "noted");
	is_int(next(), NONE, "not at once");
	T += 100 * MS;
	is_int(next(), DECIDE_SIGNAL_APP, "again after 100 ms");
	is_int(last.signo, SIGTERM, "SIGTERM again");
	/* An app container that appears meanwhile is stopped too. */
	decide_app_seen(d, 5, "late", T);
	is_int(next(), DECIDE_SIGNAL_APP, "the late app");
	is_int(last.app, 5, "container 5");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_APP_SIGNAL_RESULT, .id = 9),
	   "a result for a container it does not know is ignored");

	/* Unknown code: it may have failed, and nothing restarts it. */
	sidecar_exits_with(POLICY_NEVER, SIDECAR_EXIT_FAIL, false, DECIDE_CODE_UNKNOWN);
	is_int(next(), DECIDE_SIGNAL_APP, "an unknown code stops the apps");

	/* Not for an exit 0, not under OnFailure, not during a deletion, not by default. */
	sidecar_exits_with(POLICY_NEVER, SIDECAR_EXIT_FAIL, false, 0);
	is_int(next(), NONE, "exit 0: the apps run on");
	is_int(note(NOTE_APPS_STOP_NOT)->kept, APPS_KEPT_EXIT_0, "and the note says why");
	sidecar_exits_with(POLICY_ON_FAILURE, SIDECAR_EXIT_FAIL, false, 137);
	is_int(next(), NONE, "OnFailure: the kubelet restarts the sidecar; the apps run on");
	is_int(note(NOTE_APPS_STOP_NOT)->kept, APPS_KEPT_ON_FAILURE, "and the note says why");
	sidecar_exits_with(POLICY_NEVER, SIDECAR_EXIT_FAIL, true, 143);
	is_int(next(), NONE, "a pod being deleted: the kubelet stops the apps");
	is_int(note(NOTE_APPS_STOP_NOT)->kept, APPS_KEPT_DELETED, "and the note says why");
	sidecar_exits_with(POLICY_NEVER, SIDECAR_EXIT_WARN, false, 137);
	is_int(next(), NONE, "warn, the default: the apps run on");
	ok(!noted(NOTE_APPS_STOP) && !noted(NOTE_APPS_STOP_NOT), "without a word of a stop");
	ok(note(NOTE_SIDECAR_DIED)->hint, "the death's note names the option");
}

/*
 * Native sidecars: a spec that says native is never polled, waited for nor
 * stopped; containers known as natives are listed, never apps; a native one
 * that exited comes back under its name.
 */
static void natives(void)
{
	static const struct decide_sidecar_config mixed[] = {
		{ .name = "mesh", .ready_url = "http://127.0.0.1:15021/healthz/ready",
		  .stop_url = "http://127.0.0.1:15020/quitquitquit", .native = true },
		{ .name = "logs", .stop_signal = SIGTERM },
	};
	struct decide_native_view v;

	setup_with(POLICY_NEVER, 1, mixed, 2, true);
	cfg.sidecar_wait_us = 120 * S;
	renew();
	decide_sidecar_seen(d, 1, T - LONG_AGO);
	is_int(next(), DECIDE_WRITE, "no poll of the native one's ready URL: the ready file at once");
	is_int(last.file, PROTOCOL_READY, "ready");
	decide_written(d, PROTOCOL_READY, 0, T);
	decide_app_seen(d, 3, "job", T);
	T += S;
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	is_int(next(), DECIDE_APPS_DONE, "apps done: no wait for the native spec, never seen");
	ok(!noted(NOTE_SIDECAR_WAIT), "it is not awaited");
	is_int(next(), DECIDE_SIGNAL, "the plain sidecar is stopped");
	is_int(last.sidecar, 1, "logs");
	decide_signal_result(d, 1, 0, T);
	is_int(next(), DECIDE_WATCH, "watched");
	decide_sidecar_gone(d, 1, T);
	while (next() == DECIDE_WRITE)
		decide_written(d, last.file, 0, T);
	is_int(last.kind, DECIDE_EXIT, "then the exit: nothing is sent to the native one");
	is_int(last.exit_code, 0, "exit 0");
	ok(!sc(0).counts, "the native spec is not one of the sidecars rearguard stops");

	/* Containers known as natives: listed, never apps. */
	setup(POLICY_NEVER, 0, 1);
	decide_native_seen(d, 2, "vector", NATIVE_BY_START, T);
	decide_native_seen(d, 2, "vector", NATIVE_BY_START, T);
	is_int(decide_native_count(d), 1, "listed once");
	is_int(decide_app_count(d), 0, "not an app");
	ok(noted(NOTE_NATIVE_SEEN) == 1 && note(NOTE_NATIVE_SEEN)->by == NATIVE_BY_START &&
		   !note(NOTE_NATIVE_SEEN)->flag,
	   "noted with how it is known");
	ok(!decide_native_restarted(d, "vector", T), "running: a new one of its name is no restart");
	T += S;
	decide_native_exited(d, 2, T);
	ok(noted(NOTE_NATIVE_EXITED), "its exit is noted");
	ok(!decide_native_restarted(d, "vector", T - MS), "a container seen before its exit is no restart of it");
	ok(!decide_native_restarted(d, "job", T), "nor one of another name");
	ok(decide_native_restarted(d, "vector", T + S), "one of its name seen after its exit is");
	decide_native_seen(d, 7, "vector", NATIVE_BY_RESTART, T + S);
	ok(note(NOTE_NATIVE_SEEN)->flag && note(NOTE_NATIVE_SEEN)->by == NATIVE_BY_RESTART,
	   "the restart is noted");
	decide_native_view(d, 0, &v);
	is_int(v.state, DECIDE_NATIVE_RESTARTED, "the new one replaces the old");
	decide_native_view(d, 1, &v);
	ok(v.state == DECIDE_NATIVE_RUNNING && v.id == 7 && v.by == NATIVE_BY_RESTART, "and runs");
	ok(!decide_native_restarted(d, "vector", T + 2 * S), "one restart per exit");
	decide_native_forget(d, 7);
	is_int(decide_native_count(d), 1, "forget takes it off the list");
	decide_native_seen(d, 8, "otel", NATIVE_BY_SPEC, T);
	decide_native_exited(d, 8, T);
	ok(!decide_native_restarted(d, "otel", T + S), "a spec's native comes back by its spec, not by its name");
	decide_app_seen(d, 3, "job", T);
	decide_app_exited(d, 3, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "the apps alone decide");

	/* Without memory for it a native is only missing from the summary's list. */
	setup(POLICY_NEVER, 0, 1);
	realloc_fails = true;
	decide_native_seen(d, 2, "vector", NATIVE_BY_START, T);
	realloc_fails = false;
	ok(noted(NOTE_NATIVE_NOT_LISTED) && decide_native_count(d) == 0, "out of memory: noted, not listed");
}

int main(void)
{
	sidecar_fails_apps();
	natives();
	return finish();
}
