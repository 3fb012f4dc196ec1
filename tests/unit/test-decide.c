/*
 * decide's phases, its conclusion that the apps are done, the files of the
 * protocol, the rescans and the end (decide.c), through the harness of
 * decide-harness.h.
 */
#include "config.h"

#include "decide-harness.h"

static void one_app_never(void)
{
	setup(POLICY_NEVER, 0, 1);
	is_int(next(), NONE, "nothing to do before any app");
	is_int(decide_deadline(d, T), T + 100 * MS, "quick rescans while no app was seen");
	T += 100 * MS;
	is_int(next(), DECIDE_RESCAN, "rescan when due");
	decide_rescanned(d, 0, T);
	decide_app_seen(d, 3, "job", T);
	is_int(next(), NONE, "app running: nothing to do");
	is_int(decide_deadline(d, T), T + 100 * MS, "without --apps, quick rescans during start-up: another may come");
	T += 40 * S;
	is_int(next(), DECIDE_RESCAN, "a rescan");
	decide_rescanned(d, 0, T);
	is_int(decide_deadline(d, T), T + 1 * S, "after start-up, rescans every second while apps run");
	T += 2 * S;
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	is_int(next(), DECIDE_RESCAN, "a rescan before concluding");
	decide_rescanned(d, 0, T);
	is_int(next(), DECIDE_APPS_DONE, "then the apps are done");
	is_str(decide_reason_word(last.reason), "apps-done", "reason apps-done");
	is_int(next(), DECIDE_WATCH, "watch the sidecar's processes");
	is_int(last.sidecar, 0, "sidecar 0");
	is_int(next(), DECIDE_SIGNAL, "send its stop signal");
	is_int(last.signo, SIGTERM, "SIGTERM");
	decide_signal_result(d, 0, 0, T);
	is_int(next(), NONE, "wait for it");
	is_int(decide_deadline(d, T), T + 20 * S, "at most --stop-timeout");
	T += 3 * MS;
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_EXIT, "exit once it is gone");
	is_int(last.exit_code, 0, "exit 0");
	is_str(sc(0).outcome, "stopped", "outcome stopped");
	is_int(sc(0).gone_us - sc(0).stop_sent_us, 3 * MS, "stop latency recorded");
	is_int(next(), NONE, "nothing after the exit");
	is_int(decide_deadline(d, T), INT64_MAX, "no timer after the exit");
	is_int(app(0).code, 0, "the exit code is recorded");
}

static void apps_expected(void)
{
	setup(POLICY_NEVER, 1, 1);
	is_int(decide_deadline(d, T), T + 100 * MS, "--apps 1: quick rescans until it appears");
	decide_app_seen(d, 3, "job", T);
	is_int(next(), NONE, "app running");
	is_int(decide_deadline(d, T), INT64_MAX, "--apps 1 seen: no timer at all while it runs");
	decide_app_exited(d, 3, T + S);
	T += S;
	is_int(next(), DECIDE_APPS_DONE, "--apps 1, seen and exited: done at once, no confirming rescan");

	setup(POLICY_NEVER, 2, 1);
	decide_app_seen(d, 3, "a", T);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	is_int(next_skipping_rescans(), NONE, "--apps 2, one seen and exited: not done");
	decide_app_seen(d, 4, "b", T);
	is_int(next_skipping_rescans(), NONE, "second app running: not done");
	is_int(decide_deadline(d, T), INT64_MAX, "both seen: no timer");
	T += 5 * S;
	decide_app_exited(d, 4, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "both exited: done");

	setup(POLICY_NEVER, 2, 1);
	decide_app_seen(d, 3, "a", T);
	T += 2 * S;
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	is_int(next_skipping_rescans(), NONE, "one of two exited");
	is_int(decide_deadline(d, T), T + 100 * MS, "still looking for the second one");
	T = view().started_us + 600 * S;
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "the second never came: startup timeout");
	is_str(decide_reason_word(last.reason), "startup-timeout", "reason startup-timeout");
	ok(noted(NOTE_DRAIN) && note(NOTE_DRAIN)->count == 1, "the note says how many of the apps appeared");
}

static void two_apps(void)
{
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(d, 3, "a", T);
	decide_app_seen(d, 4, "b", T);
	T += S;
	decide_app_exited(d, 3, T);
	is_int(next_skipping_rescans(), NONE, "first of two exited: not done");
	T += 2 * S;
	decide_app_exited(d, 4, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "second exited: done");
}

static void confirm_finds_new_app(void)
{
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(d, 3, "init-like", T);
	decide_app_exited(d, 3, T);
	is_int(next(), DECIDE_RESCAN, "confirming rescan");
	decide_app_seen(d, 4, "late", T); /* the rescan found a container started meanwhile */
	decide_rescanned(d, 0, T);
	is_int(next_skipping_rescans(), NONE, "not done: a new app appeared");
	is_int(view().phase, PHASE_WATCHING, "back to watching");
	decide_app_exited(d, 4, T);
	is_int(next(), DECIDE_RESCAN, "a new confirming rescan");
	decide_rescanned(d, 0, T);
	is_int(next(), DECIDE_APPS_DONE, "done now");
}

static void terminate(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_terminate(d, T);
	is_int(next(), NONE, "SIGTERM: the sidecars stay while the app runs");
	is_int(decide_deadline(d, T), T + 25 * S, "for at most --term-grace");
	T += 3 * S;
	decide_app_exited(d, 3, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "app exited within the grace: done");
	is_str(decide_reason_word(last.reason), "apps-done", "reason apps-done");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_terminate(d, T);
	T += 25 * S;
	is_int(next(), DECIDE_APPS_DONE, "grace over: drain anyway");
	is_str(decide_reason_word(last.reason), "term-grace", "reason term-grace");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_terminate(d, T);
	decide_terminate(d, T + S);
	T += S;
	is_int(next(), DECIDE_APPS_DONE, "a second signal drains at once");
	is_str(decide_reason_word(last.reason), "second-signal", "reason second-signal");
	decide_terminate(d, T);
	is_int(noted(NOTE_TERMINATE_DRAINING), 1, "a signal while draining is only noted");
}

static void drain_file(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	ok(decide_drain_now(d, REASON_DRAIN_FILE, T), "a drain request takes effect");
	ok(!decide_drain_now(d, REASON_DRAIN_FILE, T), "a second one does not");
	is_int(next(), DECIDE_APPS_DONE, "drain requested: no confirming rescan needed");
	is_str(decide_reason_word(last.reason), "drain-file", "reason drain-file");
	ok(!decide_drain_now(d, REASON_DRAIN_FILE, T), "nor one while draining");
}

static void startup_timeout(void)
{
	setup(POLICY_NEVER, 0, 1);
	is_int(decide_deadline(d, T), T + 100 * MS, "quick rescans first");
	T += 600 * S;
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "no app within --startup-timeout: drain");
	is_str(decide_reason_word(last.reason), "startup-timeout", "reason startup-timeout");
	ok(noted(NOTE_DRAIN) && note(NOTE_DRAIN)->count == 0, "the note says none appeared");
	drain_quickly();
}

/* A sidecar listed after the app starts after it: waited for, then stopped. */
static void sidecar_after_apps(void)
{
	setup_waiting(0, 1, 120 * S);
	app_exits_at_once();
	is_int(next(), NONE, "apps done, the sidecar not started: no drain yet");
	ok(noted(NOTE_SIDECAR_WAIT) && note(NOTE_SIDECAR_WAIT)->us == 120 * S, "the wait is noted, with --sidecar-wait");
	is_int(decide_deadline(d, T), T + 100 * MS, "quick rescans while it is awaited");
	T += 100 * MS;
	is_int(next(), DECIDE_RESCAN, "a rescan looks for it");
	decide_rescanned(d, 0, T);
	T += 100 * MS;
	is_int(next(), DECIDE_RESCAN, "and another");
	decide_sidecar_seen(d, 0, T);
	decide_rescanned(d, 0, T);
	is_int(next(), DECIDE_APPS_DONE, "it started: the drain begins");
	is_int(noted(NOTE_SIDECAR_WAIT_OVER), 1, "its start ends the wait");
	is_int(next(), DECIDE_CATCHES, "just started: does it catch its stop signal yet?");
	decide_sidecar_catches(d, 0, 1, T);
	is_int(next(), DECIDE_SIGNAL, "it does: its stop signal goes out");
	decide_signal_result(d, 0, 0, T);
	is_int(next(), DECIDE_WATCH, "then its processes are watched");
	T += 3 * MS;
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_EXIT, "exit");
	is_str(sc(0).outcome, "stopped", "outcome stopped, not not-found");
	is_int(noted(NOTE_SIDECAR_WAIT), 1, "the wait is said once");

	/* It never comes: the wait ends at --sidecar-wait, with a warning, and the drain goes on. */
	setup_waiting(0, 1, 120 * S);
	app_exits_at_once();
	is_int(next(), NONE, "waiting");
	T += 119 * S;
	is_int(next_skipping_rescans(), NONE, "still waiting after 119 s");
	ok(decide_deadline(d, T) <= T + 1 * S, "the wait's end is a deadline");
	T += 1 * S;
	is_int(next(), DECIDE_APPS_DONE, "--sidecar-wait over: the drain begins");
	ok(noted(NOTE_SIDECAR_WAIT_EXPIRED) && note(NOTE_SIDECAR_WAIT_EXPIRED)->us == 120 * S, "its end is noted");
	is_int(next(), DECIDE_WATCH, "a look for what there is of it");
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_EXIT, "exit");
	is_int(last.exit_code, 0, "exit 0, as before");
	is_str(sc(0).outcome, "not-found", "never started: not-found");

	/* --apps 1 seen: no rescans otherwise, but while the sidecar is awaited. */
	setup_waiting(1, 2, 120 * S);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	app_exits_at_once();
	is_int(next(), NONE, "the second sidecar is awaited");
	is_str(note(NOTE_SIDECAR_WAIT)->text, "logs", "the missing one is named");
	is_int(decide_deadline(d, T), T + 100 * MS, "with --apps all seen, rescans while a sidecar is awaited");

	/* No wait when every sidecar was seen, with --sidecar-wait 0, on a drain request, or for detection's. */
	setup_waiting(0, 1, 120 * S);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	app_exits_at_once();
	is_int(next(), DECIDE_APPS_DONE, "the sidecar was seen: the drain at once");
	setup_waiting(0, 1, 0);
	app_exits_at_once();
	is_int(next(), DECIDE_APPS_DONE, "--sidecar-wait 0: the drain at once");
	ok(!noted(NOTE_SIDECAR_WAIT) && !noted(NOTE_SIDECAR_WAIT_EXPIRED), "and no wait is mentioned");
	setup_waiting(0, 1, 120 * S);
	decide_app_seen(d, 3, "job", T);
	decide_drain_now(d, REASON_DRAIN_FILE, T);
	is_int(next(), DECIDE_APPS_DONE, "a drain request is not held for a missing sidecar");
	/* Nor the pod's deletion, where the app ends after SIGTERM: the kubelet starts nothing more then. */
	setup_waiting(0, 1, 120 * S);
	decide_app_seen(d, 3, "job", T);
	decide_terminate(d, T);
	T += 2 * S;
	decide_app_exited(d, 3, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "a deletion is not held for a missing sidecar");
	ok(!noted(NOTE_SIDECAR_WAIT), "and no wait is mentioned");
	{
		struct decide_sidecar_config detected[] = { { .name = "istio-proxy", .optional = true,
							      .stop_signal = SIGTERM } };

		setup_with(POLICY_NEVER, 0, detected, 1, false);
		cfg.sidecar_wait_us = 120 * S;
		renew();
		app_exits_at_once();
		is_int(next(), DECIDE_APPS_DONE, "a detected sidecar never seen is not waited for");
		ok(!noted(NOTE_SIDECAR_WAIT) && !noted(NOTE_SIDECAR_WAIT_EXPIRED), "and no wait is mentioned");
	}
}

static void exit_waits_for_codes(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_app_exited(d, 3, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "Never: done without the exit code");
	is_int(next(), DECIDE_WATCH, "watch");
	is_int(next(), DECIDE_SIGNAL, "stop");
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_STATUS, "the kernel is asked for the app's exit code");
	is_int(next(), NONE, "the exit waits for it");
	is_int(decide_deadline(d, T), T + 1 * MS, "asked again after 1ms");
	T += MS;
	is_int(next(), DECIDE_STATUS, "asked again");
	is_int(decide_deadline(d, T), T + 2 * MS, "then after 2ms");
	decide_app_status(d, 3, DECIDE_CODE_PENDING, T);
	is_int(next(), NONE, "not published yet: still waiting");
	decide_app_status(d, 3, 0, T);
	is_int(next(), DECIDE_EXIT, "exit once the code is known");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_app_exited(d, 3, T);
	next_skipping_rescans();
	next();
	next();
	decide_sidecar_gone(d, 0, T);
	is_int(next_skipping_rescans(), NONE, "waiting for the code");
	T += 2 * S - 1;
	is_int(next_skipping_rescans(), NONE, "still asking the kernel, up to 2s after the exit");
	T += 1;
	is_int(next(), DECIDE_EXIT, "the code never came: exit anyway");
	is_int(app(0).code, DECIDE_CODE_UNKNOWN, "unknown");
}

static void files(void)
{
	int k;

	/* The file protocol: apps-done after the stop is out, done at the end, each retried. */
	setup_with(POLICY_NEVER, 1, http_sidecars, 1, true);
	decide_app_seen(d, 3, "job", T);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	http_next(DECIDE_HTTP_READY, "a readiness poll");
	answer(DECIDE_HTTP_READY, 200);
	is_int(next(), DECIDE_WRITE, "the ready file");
	http_next(DECIDE_HTTP_CHECK, "and a look at the stop endpoint");
	answer(DECIDE_HTTP_CHECK, 0);
	decide_written(d, PROTOCOL_READY, -ENOSPC, T);
	ok(noted(NOTE_WRITE_FAILED) && note(NOTE_WRITE_FAILED)->us == 50 * MS && note(NOTE_WRITE_FAILED)->file == PROTOCOL_READY,
	   "a failed write is noted with the retry");
	ok(!view().ready_written, "not written");
	is_int(next(), NONE, "not at once");
	is_int(decide_deadline(d, T), T + 50 * MS, "again after 50ms");
	T += 50 * MS;
	is_int(next(), DECIDE_WRITE, "the ready file again");
	decide_written(d, PROTOCOL_READY, -ENOSPC, T);
	is_int(decide_deadline(d, T), T + 100 * MS, "then after 100ms");
	T += 100 * MS;
	is_int(next(), DECIDE_WRITE, "and again");
	decide_written(d, PROTOCOL_READY, 0, T);
	ok(view().ready_written, "written once there is room");
	ok(noted(NOTE_WRITTEN_AFTER_ALL) && note(NOTE_WRITTEN_AFTER_ALL)->count == 3, "which is noted");

	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	is_int(next(), DECIDE_APPS_DONE, "apps done");
	http_next(DECIDE_HTTP_STOP, "the stop first");
	is_int(next(), DECIDE_WATCH, "the watch");
	is_int(next(), DECIDE_WRITE, "then apps-done");
	is_int(last.file, PROTOCOL_APPS_DONE, "apps-done");
	is_str(decide_reason_word(last.reason), "apps-done", "with the reason");
	decide_written(d, PROTOCOL_APPS_DONE, -EACCES, T);
	answer(DECIDE_HTTP_STOP, 200);
	is_int(next(), NONE, "the failed apps-done waits its turn");
	T += 50 * MS;
	is_int(next(), DECIDE_WRITE, "apps-done again");
	decide_written(d, PROTOCOL_APPS_DONE, 0, T);
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_WRITE, "gone: the done file");
	is_int(last.file, PROTOCOL_DONE, "done");
	is_int(next(), NONE, "one write at a time");
	decide_written(d, PROTOCOL_DONE, -ENOSPC, T);
	for (k = next(); k != DECIDE_EXIT && T < view().settled_us + 11 * S; k = next()) {
		if (k == DECIDE_WRITE)
			decide_written(d, PROTOCOL_DONE, -ENOSPC, T);
		T += 10 * MS;
	}
	is_int(k, DECIDE_EXIT, "done never written: the exit comes anyway");
	ok(T >= view().settled_us + 10 * S, "after 10s of tries");
	ok(noted(NOTE_DONE_GIVEN_UP) && note(NOTE_DONE_GIVEN_UP)->us == 10 * S, "with an error that says so");
	is_int(last.exit_code, 0, "the sidecar is gone: exit 0");

	/* Without the file protocol nothing is written: the ready line only. */
	setup_with(POLICY_NEVER, 1, http_sidecars, 1, true);
	cfg.protocol = false;
	renew();
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	http_next(DECIDE_HTTP_READY, "poll");
	answer(DECIDE_HTTP_READY, 200);
	http_next(DECIDE_HTTP_CHECK, "the stop endpoint looked at");
	answer(DECIDE_HTTP_CHECK, 0);
	is_int(next(), NONE, "no ready file to write");
	is_int(noted(NOTE_ALL_READY_NO_FILE), 1, "the note says why");
}

static void rescan_failures(void)
{
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(d, 3, "job", T);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	is_int(next(), DECIDE_RESCAN, "the confirming rescan");
	is_int(next(), NONE, "asked once");
	decide_rescanned(d, -EMFILE, T);
	ok(noted(NOTE_RESCAN_FAILED) && note(NOTE_RESCAN_FAILED)->result == -EMFILE, "a failed rescan is noted");
	is_int(next(), NONE, "a failed rescan confirms nothing");
	is_int(decide_deadline(d, T), T + 100 * MS, "tried again after 100ms");
	T += 100 * MS;
	is_int(next(), DECIDE_RESCAN, "again");
	decide_rescanned(d, 0, T);
	is_int(next(), DECIDE_APPS_DONE, "confirmed: done");
	is_int(noted(NOTE_RESCAN_WORKS), 1, "the recovery is noted");

	/* A report is matched only after a rescan that worked. */
	setup(POLICY_NEVER, 1, 1);
	decide_app_report(d, "job", 0, T);
	is_int(next(), DECIDE_RESCAN, "a rescan for the report");
	decide_rescanned(d, -ENOMEM, T);
	is_int(decide_app_count(d), 0, "not matched yet");
	T += 100 * MS;
	is_int(next(), DECIDE_RESCAN, "tried again");
	decide_rescanned(d, 0, T);
	is_int(decide_app_count(d), 1, "matched now");

	/*
	 * A report still queued after a failed rescan waits for the retry
	 * time too: the engine carries a rescan out at once and asks again,
	 * and a rescan asked for again at once would never let it wait.
	 */
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_app_report(d, "job", 0, T);
	is_int(next(), DECIDE_RESCAN, "a rescan for the report of a known app");
	decide_rescanned(d, -EMFILE, T);
	is_int(next(), NONE, "failed: not asked again at once, though the report waits");
	is_int(decide_deadline(d, T), T + 100 * MS, "but after 100ms");
	T += 100 * MS;
	is_int(next(), DECIDE_RESCAN, "then again");
	decide_rescanned(d, 0, T);
	is_int(app(0).reported, 0, "and the report is matched");
}

static void polling(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	is_int(decide_deadline(d, T), INT64_MAX, "nothing polled: no timer");
	decide_polling(d, 2);
	is_int(next(), DECIDE_POLL, "processes without a pidfd: looked at");
	is_int(decide_deadline(d, T), T + 100 * MS, "every 100ms");
	T += 100 * MS;
	is_int(next(), DECIDE_POLL, "again");
	decide_polling(d, 0);
	is_int(decide_deadline(d, T), INT64_MAX, "none polled any more: no timer");
}

static void wrapper(void)
{
	static const struct decide_sidecar_config mesh = { .name = "istio",
							   .ready_url = "http://127.0.0.1:15021/healthz/ready",
							   .stop_url = "http://127.0.0.1:15020/quitquitquit" };
	struct decide_config wrap_cfg = {
		.policy = POLICY_NEVER, .apps_expected = 1, .startup_timeout_us = 600 * S, .stop_timeout_us = 20 * S,
		.kill_after_us = 5 * S, .readiness = true, .ready_timeout_us = 1 * S, .ready_gates_apps = true,
		.command = true, .command_not_ready = 124, .nsidecars = 1, .sidecars = &mesh, .sink = sink,
	};

	/* run --drain: the command waits for ready; without it, it never starts and the sidecars go. */
	cfg = wrap_cfg;
	T = 1000 * S;
	renew();
	decide_app_seen(d, DECIDE_APP_COMMAND, "job", T);
	http_next(DECIDE_HTTP_READY, "the ready URL is polled");
	answer(DECIDE_HTTP_READY, -ECONNREFUSED);
	is_int(decide_deadline(d, T), T + 50 * MS, "every 50ms");
	T += S;
	is_int(next(), DECIDE_APPS_DONE, "not ready within --timeout: the drain, with no command run");
	is_str(decide_reason_word(last.reason), "ready-timeout", "reason ready-timeout");
	ok(last.command_ended && last.exit_code == 124, "the command will never start: its code is 124");
	is_int(app(0).code, 124, "which is the app's");
	ok(noted(NOTE_NOT_READY_COMMAND) && note(NOTE_NOT_READY_COMMAND)->us == 1 * S, "a note says so");

	cfg = wrap_cfg;
	T = 1000 * S;
	renew();
	decide_app_seen(d, DECIDE_APP_COMMAND, "job", T);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	http_next(DECIDE_HTTP_READY, "poll");
	answer(DECIDE_HTTP_READY, 200);
	is_int(next(), DECIDE_START_COMMAND, "ready: the command starts");
	is_int(noted(NOTE_ALL_READY_COMMAND), 1, "noted as such");
	ok(view().ready_written, "the start is carried out");
	is_int(next(), DECIDE_HTTP, "once, and no ready file is written: the pre-flight look follows");
	is_int(last.purpose, DECIDE_HTTP_CHECK, "at the stop endpoint");
	decide_app_exited(d, DECIDE_APP_COMMAND, T + S);
	decide_app_status(d, DECIDE_APP_COMMAND, 3, T + S);
	T += S;
	is_int(next(), DECIDE_APPS_DONE, "the command exited: done at once");
	ok(!last.command_ended, "the command ran: nothing to end");
	http_next(DECIDE_HTTP_STOP, "the stop goes out first");
}

/* While a process is expected, a new pid brings the rescan forward; when none is, it is not watched. */
static void pids_moved(void)
{
	setup(POLICY_NEVER, 2, 1);
	ok(decide_expects_process(d, T), "two apps expected: the pid counter is watched");
	is_int(next(), NONE, "nothing to do yet");
	T += 10 * MS;
	decide_pids_moved(d);
	is_int(decide_deadline(d, T), T, "a new pid: due now, not in 90 ms");
	is_int(next(), DECIDE_RESCAN, "a rescan");
	is_int(next(), NONE, "one at a time");
	decide_rescanned(d, 0, T);
	is_int(next(), NONE, "and no second one for the same pid");
	decide_app_seen(d, 3, "job", T);
	decide_app_seen(d, 4, "job", T);
	decide_sidecar_seen(d, 0, T);
	ok(!decide_expects_process(d, T), "every app seen (--apps 2): no more watching");
	decide_rescanned(d, -EMFILE, T);
	decide_pids_moved(d);
	ok(decide_deadline(d, T) > T, "a failed rescan keeps its retry time, whatever the pids do");
}

/*
 * A stall (the engine's look at the pid counter came DECIDE_STALL_US late
 * or more) is said, then again only when twice as long as the last one
 * said; the longest is in the view, for the summary's stalled_ms.
 */
static void stalls(void)
{
	struct decide_view v;

	setup(POLICY_NEVER, 1, 1);
	decide_view(d, &v);
	is_int(v.stalled_most_us, 0, "no stall yet: none in the view");
	DECIDE_TELL(d, T, .kind = DECIDE_EV_STALLED, .age_us = 150 * MS);
	is_int(noted(NOTE_STALLED), 1, "a stall of 150 ms is said");
	is_int(note(NOTE_STALLED)->us, 150 * MS, "with its length");
	DECIDE_TELL(d, T, .kind = DECIDE_EV_STALLED, .age_us = 250 * MS);
	is_int(noted(NOTE_STALLED), 1, "one of 250 ms is not: less than twice the last said");
	DECIDE_TELL(d, T, .kind = DECIDE_EV_STALLED, .age_us = 300 * MS);
	is_int(noted(NOTE_STALLED), 2, "one of 300 ms is");
	DECIDE_TELL(d, T, .kind = DECIDE_EV_STALLED, .age_us = 120 * MS);
	decide_view(d, &v);
	is_int(v.stalled_most_us, 300 * MS, "the longest is in the view");
	is_int(next(), NONE, "a stall decides nothing by itself");
}

/*
 * Every rescan is decide's to ask for: the time a container may show its
 * runtime's init, which travels with each rescan; one wanted at once (a
 * sidecar's watched processes all exited, SIGHUP); a look of this turn of
 * the engine's loop for a watch; and the sidecars' exits asked for before
 * any stop is decided.
 */
static void rescans_asked(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_pending(d, 1);
	is_int(decide_deadline(d, T), T + 20 * MS, "a container pending: rescans every 20ms");
	T += 20 * MS;
	is_int(next(), DECIDE_RESCAN, "a rescan");
	is_int(last.pending_before_us, T - 30 * S, "a container seen 30 s ago or more is pending no longer");
	decide_rescanned(d, 0, T);
	T += 30 * S;
	is_int(next(), DECIDE_RESCAN, "30 s later");
	is_int(last.pending_before_us, T - 30 * S, "the limit follows decide's clock: podscan keeps none");
	decide_rescanned(d, 0, T);
	decide_pending(d, 0);

	decide_app_seen(d, 3, "job", T);
	is_int(decide_deadline(d, T), INT64_MAX, "--apps 1 seen: no rescans of decide's own");
	decide_rescan_wanted(d);
	is_int(decide_deadline(d, T), T, "a rescan wanted (SIGHUP): due now");
	is_int(next(), DECIDE_RESCAN, "the rescan");
	is_int(next(), NONE, "once");
	decide_rescanned(d, -EMFILE, T);
	decide_rescan_wanted(d);
	is_int(next(), DECIDE_RESCAN, "wanted again: at once, not at the failed one's retry");
	decide_rescanned(d, 0, T);
	is_int(next(), NONE, "one rescan a want");

	/* The drain: the exits first, the watch from a fresh look, a look again when its processes are gone. */
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	is_int(next(), DECIDE_APPS_DONE, "the apps are done");
	ok(last.check_exits, "the sidecar's roots are asked whether they exited, before its stop is decided");
	is_int(next(), DECIDE_SIGNAL, "the stop signal to its root");
	decide_signal_result(d, 0, 0, T);
	is_int(next(), DECIDE_WATCH, "then its processes are watched");
	ok(last.rescan_first, "the loop turned after the signal: as a rescan made now lists them");
	decide_rescanned(d, 0, T);
	is_int(next(), NONE, "waiting for them");
	decide_rescan_wanted(d);
	is_int(next(), DECIDE_RESCAN, "every watched process exited: one more look first");
	decide_rescanned(d, 0, T);
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_EXIT, "none left: the exit");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_RESCAN_WANTED), "after it, a rescan wanted changes nothing");

	setup(POLICY_NEVER, 0, 1);
	app_exits_at_once();
	is_int(next(), DECIDE_APPS_DONE, "done after the confirming rescan");
	ok(!last.check_exits, "no container of the sidecar known: no exit to ask about");
	is_int(next(), DECIDE_WATCH, "its processes are looked for");
	ok(!last.rescan_first, "as the confirming rescan, of this same turn, saw them");
}

/* An event about a sidecar decide does not have changes nothing (the signal result's too). */
static void out_of_range(void)
{
	bool taken;

	setup(POLICY_NEVER, 1, 1); /* sidecars[] has two; decide knows one */
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	next();
	taken = DECIDE_TELL(d, T, .kind = DECIDE_EV_SIGNAL_RESULT, .sidecar = 1, .result = -EPERM);
	ok(!taken, "a signal result for sidecar 1 of 1 is not taken");
	ok(!noted(NOTE_SIGNAL_NOT_PERMITTED) && !noted(NOTE_SIGNAL_FAILED), "nothing failed");
	is_int(noted(NOTE_IGNORED), 1, "it is noted as ignored");
	is_int(note(NOTE_IGNORED)->event, DECIDE_EV_SIGNAL_RESULT, "which event");
	is_str(sc(0).outcome, "running", "sidecar 0 is untouched");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_HTTP_RESULT, .sidecar = 7, .purpose = DECIDE_HTTP_STOP, .result = 200),
	   "nor an HTTP result for sidecar 7");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_SIDECAR_GONE, .sidecar = 1), "nor a sidecar gone");
	is_int(noted(NOTE_IGNORED), 3, "each noted");

	/* Late and repeated events are ignored the same way. */
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_APP_EXITED, .id = 99), "an unknown app's exit");
	decide_app_exited(d, 3, T);
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_APP_EXITED, .id = 3), "an exit told twice");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_SIDECAR_GONE, .sidecar = 0), "a sidecar gone before its stop");
	is_int(noted(NOTE_IGNORED), 3, "each noted as ignored");

	/* A view of an index decide does not have is refused too: one of zeroes. */
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_native_seen(d, 4, "mesh", NATIVE_BY_START, T);
	{
		struct decide_sidecar_view sv;
		struct decide_native_view nv;
		struct decide_app_view av;

		memset(&av, 0xff, sizeof(av));
		ok(!decide_app_view(d, 1, &av) && !av.name && !av.id, "no view of app 1 of 1");
		memset(&sv, 0xff, sizeof(sv));
		ok(!decide_sidecar_view(d, 1, &sv) && !sv.name && !sv.outcome, "nor of sidecar 1 of 1");
		memset(&nv, 0xff, sizeof(nv));
		ok(!decide_native_view(d, 1, &nv) && !nv.name && !nv.id, "nor of native 1 of 1");
		ok(decide_app_view(d, 0, &av) && decide_sidecar_view(d, 0, &sv) && decide_native_view(d, 0, &nv),
		   "index 0 of each is there");
	}

	/* An event without the name it is about changes nothing. */
	setup(POLICY_NEVER, 1, 1);
	ok(!decide_drain_now(d, REASON_NONE, T), "a drain without a reason is refused");
	ok(decide_drain_now(d, REASON_DRAIN_FILE, T), "a drain with one is still taken");
	is_int(next(), DECIDE_APPS_DONE, "and drains");
	is_str(decide_reason_word(last.reason), "drain-file", "for its reason");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_APP_SEEN, .id = 4), "an app seen without a name");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_APP_RENAMED, .id = 3), "renamed to no name");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_APP_REPORTS_AS, .id = 3), "reporting as no name");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_APP_REPORT, .code = 0), "a report of no name");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_NATIVE_SEEN, .id = 5, .by = NATIVE_BY_START), "a native of no name");
	is_int(noted(NOTE_IGNORED), 5, "each noted as ignored");
	ok(decide_app_count(d) == 1 && decide_native_count(d) == 0, "nothing added");
	is_str(app(0).name, "job", "the app keeps its name");
	is_int(next(), NONE, "no rescan for a report that was not taken");
}

/* A restarted agent: apps-done drains again, done exits at once with the earlier summary. */
static void resume(void)
{
	setup(POLICY_NEVER, 1, 1);
	ok(DECIDE_TELL(d, T, .kind = DECIDE_EV_FOUND, .file = PROTOCOL_APPS_DONE), "apps-done found");
	is_int(noted(NOTE_RESUME_APPS_DONE), 1, "noted");
	is_int(next(), DECIDE_APPS_DONE, "the drain at once, without an app");
	is_str(decide_reason_word(last.reason), "resume", "reason resume");

	setup(POLICY_NEVER, 1, 1);
	DECIDE_TELL(d, T, .kind = DECIDE_EV_CONTAINERS, .count = 4);
	ok(DECIDE_TELL(d, T, .kind = DECIDE_EV_FOUND, .file = PROTOCOL_DONE), "done found");
	is_int(noted(NOTE_RESUME_DONE), 1, "noted");
	is_int(decide_deadline(d, T), T, "due at once");
	is_int(next(), DECIDE_EXIT, "the exit at once");
	ok(last.resumed, "with the earlier run's summary");
	is_int(last.status, 0, "exit 0");
	is_int(last.containers, 5, "the pod's four containers and an init container share the termination messages");
	is_int(next(), NONE, "nothing after");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_FOUND, .file = PROTOCOL_APPS_DONE), "found files count at start only");
}

/* The kubelet's share of a termination message: attempts a restart replaced are not containers of the spec. */
static void termination_share(void)
{
	setup(POLICY_ON_FAILURE, 1, 1);
	DECIDE_TELL(d, T, .kind = DECIDE_EV_CONTAINERS, .count = 4);
	decide_app_seen(d, 3, "job", T);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 1, T);
	decide_app_seen(d, 4, "job", T);
	decide_app_exited(d, 4, T);
	decide_app_status(d, 4, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "done on the second attempt");
	drain_quickly();
	is_int(last.containers, 4, "four seen, one of them replaced, one init container: 4");
	is_int(last.status, 0, "exit 0");
	ok(!last.resumed, "a summary of its own");
}

/* run --drain's outcome: the command's code, whatever the stop did. */
static void command(void)
{
	static const struct decide_sidecar_config fb = { .name = "fb", .stop_signal = SIGTERM };
	struct decide_config c = {
		.policy = POLICY_NEVER, .apps_expected = 1, .startup_timeout_us = 600 * S, .stop_timeout_us = 20 * S,
		.kill_after_us = 5 * S, .command = true, .command_not_ready = 124, .nsidecars = 1, .sidecars = &fb,
		.sink = sink,
	};

	cfg = c;
	T = 1000 * S;
	renew();
	decide_app_seen(d, DECIDE_APP_COMMAND, "job", T);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	ok(DECIDE_TELL(d, T, .kind = DECIDE_EV_COMMAND_ENDED, .code = 3), "the command exits 3");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_COMMAND_ENDED, .code = 4), "once");
	is_int(next(), DECIDE_APPS_DONE, "done at once");
	ok(!last.command_ended, "nothing for the front-end to end");
	is_int(next(), DECIDE_SIGNAL, "the stop");
	decide_signal_result(d, 0, -EPERM, T);
	is_int(next(), DECIDE_EXIT, "the stop failed: the exit");
	is_int(last.exit_code, 1, "the summary's code is 1");
	is_int(last.status, 3, "the exit status is the command's");
	is_int(noted(NOTE_STOP_FAILED), 1, "the failed stop is noted");
	is_int(app(0).code, 3, "the command's code is its app's");

	/* Signalled before it started: it never will; its code is 128 + N. */
	renew();
	decide_app_seen(d, DECIDE_APP_COMMAND, "job", T);
	DECIDE_TELL(d, T, .kind = DECIDE_EV_COMMAND_ENDED, .code = 128 + SIGTERM, .reason = REASON_SIGNAL);
	is_int(next(), DECIDE_APPS_DONE, "drain");
	is_str(decide_reason_word(last.reason), "signal", "for the signal, not because the app is done");
	drain_quickly();
	is_int(last.status, 143, "exit 143");
	ok(!noted(NOTE_STOP_FAILED), "the stop worked: no note");
}

/* --startup-timeout passed, fewer apps than --apps, one still running: nothing to do, and no deadline in the past. */
static void after_startup_timeout(void)
{
	setup(POLICY_NEVER, 2, 1);
	decide_app_seen(d, 3, "a", T);
	T += 601 * S;
	is_int(next_skipping_rescans(), NONE, "one app runs: no drain");
	ok(decide_deadline(d, T) > T, "the next deadline is ahead (the rescan's), not --startup-timeout's, past");
	decide_app_exited(d, 3, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "it exits: the startup timeout drains");
	is_str(decide_reason_word(last.reason), "startup-timeout", "reason startup-timeout");
}

int main(void)
{
	one_app_never();
	apps_expected();
	two_apps();
	confirm_finds_new_app();
	terminate();
	drain_file();
	startup_timeout();
	sidecar_after_apps();
	exit_waits_for_codes();
	files();
	rescan_failures();
	polling();
	wrapper();
	pids_moved();
	stalls();
	rescans_asked();
	out_of_range();
	resume();
	termination_share();
	command();
	after_startup_timeout();
	return finish();
}
