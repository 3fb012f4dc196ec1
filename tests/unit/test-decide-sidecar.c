/*
 * decide's sidecars: readiness, the stop by signal or HTTP and its
 * escalation, the wait for a young sidecar's handler, and each sidecar's
 * own exit code (decide-sidecar.c), through the harness of
 * decide-harness.h.
 */
#include "config.h"

#include "decide-harness.h"

/* App id exits 0 now: the apps are done. */
static void app_done(unsigned id)
{
	decide_app_exited(d, id, T);
	decide_app_status(d, id, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "the app is done");
}

/* One HTTP sidecar whose drain was asked for, up to its stop request. */
static void http_stop_asked(void)
{
	setup_with(POLICY_NEVER, 1, http_sidecars, 1, false);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	next();
	next();
	http_next(DECIDE_HTTP_STOP, "stop request");
}

/* A pod of one app and n sidecars whose drain was asked for: its first action (the apps' end) taken. */
static void drained(unsigned n)
{
	setup(POLICY_NEVER, 1, n);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	is_int(next(), DECIDE_APPS_DONE, "drained: the apps are done");
}

static void escalation(void)
{
	setup(POLICY_NEVER, 1, 2);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	is_int(next(), DECIDE_APPS_DONE, "draining");
	is_int(next(), DECIDE_WATCH, "watch");
	is_int(last.sidecar, 1, "the last --sidecar is stopped first");
	is_int(next(), DECIDE_SIGNAL, "stop request");
	is_int(last.signo, SIGINT, "its own stop signal, SIGINT");
	decide_signal_result(d, 1, 0, T);
	T += 20 * S - 1;
	is_int(next(), NONE, "not yet at --stop-timeout");
	T += 1;
	is_int(next(), DECIDE_SIGNAL, "--stop-timeout passed: escalate");
	is_int(last.signo, SIGTERM, "SIGTERM");
	decide_signal_result(d, 1, 0, T);
	is_int(decide_deadline(d, T), T + 5 * S, "then --kill-after");
	T += 5 * S;
	is_int(next(), DECIDE_SIGNAL, "--kill-after passed");
	is_int(last.signo, SIGKILL, "SIGKILL");
	T += MS;
	decide_sidecar_gone(d, 1, T);
	is_str(sc(1).outcome, "killed", "outcome killed");
	is_int(next(), DECIDE_WATCH, "then the first sidecar");
	is_int(last.sidecar, 0, "sidecar 0");
	is_int(next(), DECIDE_SIGNAL, "its stop request");
	is_int(last.signo, SIGTERM, "SIGTERM is its stop signal");
	T += 20 * S;
	is_int(next(), NONE, "no second SIGTERM after --stop-timeout");
	ok(noted(NOTE_SIGTERM_WAS_STOP) && note(NOTE_SIGTERM_WAS_STOP)->limit_us == 5 * S, "a note says SIGKILL follows in 5s");
	is_int(decide_deadline(d, T), T + 5 * S, "SIGKILL after --kill-after");
	T += 5 * S;
	is_int(next(), DECIDE_SIGNAL, "SIGKILL");
	is_int(last.signo, SIGKILL, "SIGKILL for the SIGTERM sidecar");
	T += 5 * S - 1;
	is_int(next(), NONE, "SIGKILL gets --kill-after to work");
	T += 1;
	is_int(next(), DECIDE_EXIT, "still there --kill-after after SIGKILL: give up");
	is_int(last.exit_code, 1, "exit 1: a sidecar could not be stopped");
	is_str(sc(0).outcome, "still-running", "outcome still-running");
	is_int(noted(NOTE_KILL_FAILED), 1, "a note says so");
}

/*
 * The stop signal, and only it, asks what it will do to the roots first;
 * what that was is noted once, with the code it makes, and kept for the
 * summary. A wrapped sidecar's program's end, told after, is kept too.
 */
static void fates(void)
{
	setup(POLICY_NEVER, 1, 2);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	is_int(next(), DECIDE_APPS_DONE, "draining");
	is_int(next(), DECIDE_WATCH, "watch");
	is_int(next(), DECIDE_SIGNAL, "the stop signal");
	ok(last.first, "the stop itself: what it does is looked at first");
	decide_signal_result(d, 1, 0, T);
	ok(DECIDE_TELL(d, T, .kind = DECIDE_EV_FATE, .sidecar = 1, .result = DECIDE_FATE_DIES), "its fate told");
	is_int(sc(1).fate, DECIDE_FATE_DIES, "kept for the summary");
	is_str(decide_fate_word(sc(1).fate), "dies", "as a word");
	ok(noted(NOTE_STOP_FATE) && note(NOTE_STOP_FATE)->code == 128 + SIGINT && note(NOTE_STOP_FATE)->flag,
	   "noted: 128 + its stop signal (SIGINT), under Never");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_FATE, .sidecar = 1, .result = DECIDE_FATE_HANDLES), "told once");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_FATE, .sidecar = 0, .result = 99), "no such fate");
	T += 20 * S;
	is_int(next(), DECIDE_SIGNAL, "--stop-timeout passed: escalate");
	ok(!last.first, "an escalation is no stop: not looked at");
	T += MS;
	decide_sidecar_gone(d, 1, T);
	is_int(next(), DECIDE_WATCH, "the other sidecar");
	is_int(next(), DECIDE_SIGNAL, "its stop");
	ok(last.first, "looked at too");
	decide_signal_result(d, 0, 0, T);
	ok(DECIDE_TELL(d, T, .kind = DECIDE_EV_FATE, .sidecar = 0, .result = DECIDE_FATE_IGNORES), "it ignores it");
	is_int(note(NOTE_STOP_FATE)->code, 137, "noted: 137, the SIGKILL after the timeouts");
	ok(DECIDE_TELL(d, T, .kind = DECIDE_EV_PROGRAM, .sidecar = 0, .code = 0, .name = "timeout"),
	   "its wrapper's report");
	is_str(sc(0).program, "timeout", "kept for the summary");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_PROGRAM, .sidecar = 0, .code = 0), "a report says how");
	ok(sc(1).program == NULL, "none for the other");
}

static void terminated_by_sigterm(void)
{
	drained(2);
	next();
	next();
	T += 20 * S;
	is_int(next(), DECIDE_SIGNAL, "escalated to SIGTERM");
	T += MS;
	decide_sidecar_gone(d, 1, T);
	is_str(sc(1).outcome, "terminated", "outcome terminated");
}

static void eperm(void)
{
	drained(2);
	is_int(next(), DECIDE_WATCH, "watch logs");
	is_int(next(), DECIDE_SIGNAL, "signal logs");
	decide_signal_result(d, 1, -EPERM, T);
	ok(noted_for(NOTE_SIGNAL_NOT_PERMITTED, "logs") && note(NOTE_SIGNAL_NOT_PERMITTED)->signo == SIGINT, "EPERM is its own note (which names the fix)");
	is_str(sc(1).outcome, "not-permitted", "outcome not-permitted");
	decide_sidecar_gone(d, 1, T);
	is_str(sc(1).outcome, "not-permitted", "a failed sidecar stays failed");
	is_int(next(), DECIDE_WATCH, "the next sidecar is still stopped");
	is_int(last.sidecar, 0, "sidecar 0");
	is_int(next(), DECIDE_SIGNAL, "its stop");
	decide_signal_result(d, 0, -ESRCH, T);
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_EXIT, "exit");
	is_int(last.exit_code, 1, "exit 1 after EPERM");
}

static void not_found(void)
{
	drained(1);
	is_int(next(), DECIDE_WATCH, "watch");
	decide_sidecar_gone(d, 0, T); /* nothing to watch */
	is_int(next(), DECIDE_EXIT, "nothing to stop: exit");
	is_int(last.exit_code, 0, "exit 0");
	is_str(sc(0).outcome, "not-found", "never seen: not-found");

	setup(POLICY_NEVER, 1, 1);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_sidecar_exited(d, 0, T);
	decide_sidecar_status(d, 0, 0, T);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	next();
	is_int(next(), DECIDE_WATCH, "its container is over: a look for what is left of it first");
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_EXIT, "exit");
	is_str(sc(0).outcome, "exited-before-stop", "seen, then gone: exited-before-stop");
}

/*
 * A sidecar seen only just now may not have installed its SIGTERM handler:
 * its roots are looked at until they catch the stop signal, at most 2 s.
 */
static void handler_wait(void)
{
	bool held = true, bounded = true;
	int64_t from;
	int i;

	/* Seen after the apps were done: not yet, not yet, then it catches. */
	setup_waiting(0, 1, 120 * S);
	app_exits_at_once();
	is_int(next_skipping_rescans(), NONE, "the sidecar is awaited");
	T += 100 * MS;
	decide_sidecar_seen(d, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "it started: the drain begins");
	is_int(next(), DECIDE_CATCHES, "a look at whether its root catches SIGTERM");
	is_int(last.signo, SIGTERM, "the look is for its stop signal");
	decide_sidecar_catches(d, 0, 0, T);
	is_int(next(), NONE, "not yet: no signal");
	is_int(decide_deadline(d, T), T + 20 * MS, "the next look is a deadline");
	ok(!noted(NOTE_CATCHES_WAIT), "one look said nothing yet");
	T += 20 * MS;
	is_int(next(), DECIDE_CATCHES, "another look");
	ok(noted_for(NOTE_CATCHES_WAIT, "proxy") && note(NOTE_CATCHES_WAIT)->signo == SIGTERM, "the wait is noted");
	decide_sidecar_catches(d, 0, 0, T);
	T += 20 * MS;
	is_int(next(), DECIDE_CATCHES, "a third look");
	decide_sidecar_catches(d, 0, 1, T);
	is_int(next(), DECIDE_SIGNAL, "it catches SIGTERM now: the signal goes out");
	is_int(last.signo, SIGTERM, "SIGTERM");
	ok(noted_for(NOTE_CATCHES, "proxy") && note(NOTE_CATCHES)->signo == SIGTERM, "the reason is noted");
	is_int(noted(NOTE_CATCHES_WAIT), 1, "the wait is said once");

	/* It never catches it: the signal goes after 2 s anyway. */
	setup(POLICY_NEVER, 1, 1);
	decide_sidecar_seen(d, 0, T);
	decide_app_seen(d, 3, "job", T);
	app_done(3);
	from = T;
	for (i = 0; i < 1000 && next() == DECIDE_CATCHES; i++) {
		decide_sidecar_catches(d, 0, 0, T);
		held = held && next() == NONE;
		bounded = bounded && decide_deadline(d, T) <= from + 2 * S;
		T = decide_deadline(d, T);
	}
	ok(held, "no signal while the root has no handler");
	ok(bounded, "no deadline past the 2 s");
	ok(i > 10, "looked again and again (%d looks)", i);
	is_int(last.kind, DECIDE_SIGNAL, "the wait ran out: the signal goes anyway");
	is_int(T, from + 2 * S, "after 2 s");
	ok(noted_for(NOTE_CATCHES_NOT, "proxy") && note(NOTE_CATCHES_NOT)->us == 2 * S, "and says why");

	/* An error reading it: the signal goes at once, with the reason. */
	setup(POLICY_NEVER, 1, 1);
	decide_sidecar_seen(d, 0, T);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	is_int(next(), DECIDE_APPS_DONE, "drain");
	is_int(next(), DECIDE_CATCHES, "a look");
	decide_sidecar_catches(d, 0, -EACCES, T);
	is_int(next(), DECIDE_SIGNAL, "cannot tell: the signal goes");
	ok(noted_for(NOTE_CATCHES_UNKNOWN, "proxy") && note(NOTE_CATCHES_UNKNOWN)->result == -EACCES, "noted");

	/* Running well before the apps were done: signalled at once, as ever. */
	setup(POLICY_NEVER, 1, 1);
	decide_sidecar_seen(d, 0, T - 2 * S);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	is_int(next(), DECIDE_APPS_DONE, "drain");
	is_int(next(), DECIDE_SIGNAL, "seen 2 s before: the signal at once, no look");

	/* A stop request is retried anyway; a stop signal that does not kill needs no handler. */
	setup_with(POLICY_NEVER, 1, http_sidecars, 1, false);
	decide_sidecar_seen(d, 0, T);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	is_int(next(), DECIDE_APPS_DONE, "drain");
	is_int(next(), DECIDE_HTTP, "stopped over HTTP: its request at once");
	{
		static const struct decide_sidecar_config winch[] = { { .name = "httpd", .stop_signal = SIGWINCH } };

		setup_with(POLICY_NEVER, 1, winch, 1, false);
		decide_sidecar_seen(d, 0, T);
		decide_drain_now(d, REASON_DRAIN_COMMAND, T);
		is_int(next(), DECIDE_APPS_DONE, "drain");
		is_int(next(), DECIDE_SIGNAL, "SIGWINCH kills nobody: at once");
	}
}

/*
 * The wait for a handler counts from the program's start, not from the
 * stop: the 2 s are the time a program takes to set its handler up, and
 * one that began long ago has had them, however late the agent saw it.
 */
static void handler_wait_from_start(void)
{
	bool held = true;
	int64_t from;
	int i;

	/* Seen 1.7 s before the app's exit, but begun 5 s before that (the agent started after it): at once. */
	setup(POLICY_NEVER, 1, 1);
	decide_sidecar_seen_aged(d, 0, 5 * S, T - 1700 * MS);
	decide_app_seen(d, 3, "job", T - 1700 * MS);
	app_done(3);
	is_int(next(), DECIDE_SIGNAL, "begun 6.7 s before: the signal at once, no look");
	ok(!noted(NOTE_CATCHES_WAIT) && !noted(NOTE_CATCHES_NOT), "and no word of a wait");

	/* Begun when it was seen, 1.7 s before the app's exit, and never catching: 0.3 s of looks, not 2 s. */
	setup(POLICY_NEVER, 1, 1);
	decide_sidecar_seen_aged(d, 0, 0, T - 1700 * MS);
	decide_app_seen(d, 3, "job", T - 1700 * MS);
	app_done(3);
	from = T;
	for (i = 0; i < 1000 && next() == DECIDE_CATCHES; i++) {
		decide_sidecar_catches(d, 0, 0, T);
		held = held && next() == NONE;
		T = decide_deadline(d, T);
	}
	ok(held && i > 1, "looked at while it had no handler (%d looks)", i);
	is_int(last.kind, DECIDE_SIGNAL, "then the signal goes");
	is_int(T - from, 300 * MS, "2 s after its start: 300 ms after the app's exit");
	ok(noted_for(NOTE_CATCHES_WAIT, "proxy") && note(NOTE_CATCHES_WAIT)->us == 280 * MS &&
		   note(NOTE_CATCHES_WAIT)->limit_us == 1720 * MS,
	   "the wait is said with the time left and the program's age");
	ok(noted_for(NOTE_CATCHES_NOT, "proxy") && note(NOTE_CATCHES_NOT)->us == 2 * S &&
		   note(NOTE_CATCHES_NOT)->limit_us == 300 * MS,
	   "its end says 2 s after its start, 300 ms waited");

	/* Two containers: the younger one's program decides. */
	setup(POLICY_NEVER, 1, 1);
	decide_sidecar_seen_aged(d, 0, 10 * S, T);
	decide_sidecar_seen_aged(d, 0, 1500 * MS, T);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	is_int(next(), DECIDE_APPS_DONE, "drain");
	from = T;
	for (i = 0; i < 1000 && next() == DECIDE_CATCHES; i++) {
		decide_sidecar_catches(d, 0, 0, T);
		T = decide_deadline(d, T);
	}
	ok(i > 1, "one began 1.5 s ago: looked at (%d looks)", i);
	is_int(last.kind, DECIDE_SIGNAL, "then the signal goes");
	is_int(T - from, 500 * MS, "2 s after the younger one's start");
}

static void readiness(void)
{
	static const int64_t schedule[] = { 50 * MS, 50 * MS, 50 * MS, 50 * MS, 50 * MS, 50 * MS };
	static const int64_t later[] = { 100 * MS, 200 * MS, 400 * MS, 500 * MS, 500 * MS };
	size_t i;

	/* mesh (ready URL) and logs (none: ready once its process is seen) */
	setup_with(POLICY_NEVER, 1, http_sidecars, 3, true);
	decide_app_seen(d, 3, "job", T);
	http_next(DECIDE_HTTP_READY, "first poll at start-up");
	is_int(last.sidecar, 0, "the mesh's");
	is_str(last.url, "http://127.0.0.1:15021/healthz/ready", "its ready URL");
	is_int(last.timeout_us, 1 * S, "a poll gets 1s");
	is_int(last.connect_timeout_us, 1 * S, "and 1s to connect");
	http_next(DECIDE_HTTP_READY, "the db's poll");
	is_int(last.sidecar, 1, "sidecar 1");
	is_int(next(), NONE, "one poll in flight per sidecar");
	is_int(decide_deadline(d, T), T + 100 * MS, "rescans look for the logs sidecar's process");
	decide_sidecar_seen(d, 2, T - LONG_AGO);
	is_int(next(), NONE, "logs seen: ready");
	ok(sc(2).ready && sc(2).ready_us == T, "logs ready once seen");
	decide_http_result(d, 1, DECIDE_HTTP_READY, 200, T);
	is_int(next(), NONE, "the db ready, its container not yet seen: no look at its stop endpoint yet");
	decide_sidecar_seen(d, 1, T - LONG_AGO);
	http_next(DECIDE_HTTP_CHECK, "the db seen: a look whether its stop endpoint listens");
	is_int(last.sidecar, 1, "the db's");
	is_str(last.url, "http://127.0.0.1:9091/quitquitquit", "at its stop URL");
	answer(DECIDE_HTTP_CHECK, 0);
	ok(!noted(NOTE_STOP_ENDPOINT_SHUT), "it connects: nothing to say");
	for (i = 0; i < ARRAY_SIZE(schedule); i++) {
		decide_http_result(d, 0, DECIDE_HTTP_READY, i % 2 ? 503 : -ECONNREFUSED, T);
		is_int(decide_deadline(d, T), T + schedule[i], "poll %zu: the next one after %lldms", i + 1,
		       (long long)(schedule[i] / MS));
		T += schedule[i];
		is_int(next(), DECIDE_HTTP, "poll %zu+1 due", i + 1);
	}
	is_int(sc(0).ready_polls, 7, "seven polls so far, every 50ms while the proxy may be starting");
	/* After the first 30s a start is less likely: the polls back off to the pace of pilot-agent wait. */
	T = view().started_us + 30 * S;
	for (i = 0; i < ARRAY_SIZE(later); i++) {
		decide_http_result(d, 0, DECIDE_HTTP_READY, 503, T);
		is_int(decide_deadline(d, T), T + later[i], "late poll %zu: the next one after %lldms", i + 1,
		       (long long)(later[i] / MS));
		T += later[i];
		is_int(next_skipping_rescans(), DECIDE_HTTP, "late poll %zu+1 due", i + 1);
	}
	decide_http_result(d, 0, DECIDE_HTTP_READY, 200, T);
	is_int(next(), DECIDE_WRITE, "all ready: write the ready file");
	is_int(last.file, PROTOCOL_READY, "the ready file");
	is_int(noted(NOTE_ALL_READY), 1, "noted");
	is_int(sc(0).ready_us, T, "mesh ready time recorded");
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	http_next(DECIDE_HTTP_CHECK, "the mesh's stop endpoint looked at, once its container was seen");
	answer(DECIDE_HTTP_CHECK, -ECONNREFUSED);
	ok(noted_for(NOTE_STOP_ENDPOINT_SHUT, "mesh"), "a refused one is noted");
	is_int(next(), NONE, "one write at a time");
	decide_written(d, PROTOCOL_READY, 0, T);
	ok(view().ready_written, "written");
	is_int(next(), NONE, "written once");
	is_int(decide_deadline(d, T), INT64_MAX, "--apps 1 seen, all ready: no timer while the app runs");
	decide_http_result(d, 0, DECIDE_HTTP_READY, 503, T);
	is_int(next(), NONE, "a late answer changes nothing");

	/* Readiness is polled while the apps start, and ends with the drain. */
	setup_with(POLICY_NEVER, 1, http_sidecars, 1, true);
	http_next(DECIDE_HTTP_READY, "poll");
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	decide_http_result(d, 0, DECIDE_HTTP_READY, 200, T);
	is_int(next(), DECIDE_APPS_DONE, "the drain starts: no ready file");
	ok(!view().ready_written, "not written at all");
	is_int(next(), DECIDE_WATCH, "watch");
	http_next(DECIDE_HTTP_STOP, "the stop request, no more polls");

	/* A stop endpoint that pre-flight found missing (and said why) is not looked at again. */
	setup_with(POLICY_NEVER, 1, http_sidecars, 1, true);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_sidecar_no_endpoint(d, 0);
	http_next(DECIDE_HTTP_READY, "poll");
	answer(DECIDE_HTTP_READY, 200);
	is_int(next(), DECIDE_WRITE, "the ready file");
	is_int(next(), NONE, "no look at a stop endpoint known to be missing");
}

static void ready_timeout(void)
{
	setup_with(POLICY_NEVER, 1, http_sidecars, 3, true);
	decide_app_seen(d, 3, "job", T);
	http_next(DECIDE_HTTP_READY, "poll mesh");
	answer(DECIDE_HTTP_READY, 503);
	http_next(DECIDE_HTTP_READY, "poll db");
	answer(DECIDE_HTTP_READY, 200);
	decide_sidecar_seen(d, 1, T - LONG_AGO);
	http_next(DECIDE_HTTP_CHECK, "db's stop endpoint");
	answer(DECIDE_HTTP_CHECK, 0);
	T = view().started_us + 300 * S - 1;
	is_int(next_skipping_rescans(), DECIDE_HTTP, "polls go on until --ready-timeout");
	ok(!noted(NOTE_NOT_READY), "no error yet");
	T += 1;
	is_int(next_skipping_rescans(), NONE, "--ready-timeout passed: no poll, no ready file");
	ok(view().ready_expired, "expired");
	ok(noted(NOTE_NOT_READY) && note(NOTE_NOT_READY)->us == 300 * S, "a note says so, with --ready-timeout");
	ok(!sc(0).ready && sc(0).ready_last == 503 && !sc(2).ready && !sc(2).seen, "naming each and why");
	ok(strstr(note(NOTE_NOT_READY)->text, "mesh") && strstr(note(NOTE_NOT_READY)->text, "logs"), "both in the note");
	ok(sc(1).ready && !strstr(note(NOTE_NOT_READY)->text, "db"), "not the ready one");
	decide_http_result(d, 0, DECIDE_HTTP_READY, 200, T);
	decide_sidecar_seen(d, 2, T - LONG_AGO);
	is_int(next(), NONE, "turning ready afterwards writes nothing");
	is_int(decide_deadline(d, T), INT64_MAX, "and polls nothing");
	decide_app_exited(d, 3, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "the apps still end the pod");
}

static void http_stop(void)
{
	setup_with(POLICY_NEVER, 1, http_sidecars, 1, false);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	is_int(next(), DECIDE_APPS_DONE, "draining");
	http_next(DECIDE_HTTP_STOP, "the stop request goes out first");
	ok(last.urgent, "urgent: out before anything else");
	is_str(last.url, "http://127.0.0.1:15020/quitquitquit", "to the stop URL");
	is_int(last.timeout_us, 5 * S, "which gets 5s");
	is_int(sc(0).stop_sent_us, T, "stop time recorded");
	is_int(next(), DECIDE_WATCH, "then its processes are watched");
	is_int(next(), NONE, "wait for the answer");
	is_int(decide_deadline(d, T), T + 20 * S, "within --stop-timeout");
	T += 2 * MS;
	answer(DECIDE_HTTP_STOP, 200);
	ok(noted(NOTE_STOP_ACCEPTED) && note(NOTE_STOP_ACCEPTED)->result == 200 && !note(NOTE_STOP_ACCEPTED)->blind &&
		   note(NOTE_STOP_ACCEPTED)->us == 20 * S,
	   "the answer is noted with what follows");
	is_int(next(), NONE, "a 200 proves nothing: wait for the processes");
	T += 5 * MS;
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_EXIT, "gone: exit");
	is_int(last.exit_code, 0, "exit 0");
	is_str(sc(0).outcome, "stopped", "stopped");
	is_int(sc(0).requests, 1, "one request");
	is_int(sc(0).statuses[0], 200, "answered 200");

	/* The proxy answers and exits: its exit may be seen before its answer is read. */
	http_stop_asked();
	decide_sidecar_gone(d, 0, T + MS);
	is_str(sc(0).outcome, "stopped", "gone: stopped");
	is_int(next(), NONE, "the exit waits for the answer in flight");
	is_int(decide_deadline(d, T), T + 3 * S, "at most 3s");
	answer(DECIDE_HTTP_STOP, 200);
	is_int(next(), DECIDE_EXIT, "then exits");
	is_int(sc(0).statuses[0], 200, "with the answer in the summary");
}

static void http_retries(void)
{
	static const int answers[] = { 503, -ECONNREFUSED, -ETIMEDOUT, 500, -ECONNRESET, 502, 408, 429, 503 };
	static const int64_t backoff[] = { 100 * MS, 200 * MS, 400 * MS, 800 * MS, 1600 * MS,
					   2 * S, 2 * S, 2 * S, 2 * S };
	int64_t deadline;
	size_t i;

	http_stop_asked();
	deadline = T + 20 * S;
	for (i = 0; i < ARRAY_SIZE(answers); i++) {
		answer(DECIDE_HTTP_STOP, answers[i]);
		is_int(next(), NONE, "answer %zu: not at once", i + 1);
		is_int(decide_deadline(d, T), T + backoff[i], "answer %zu: again after %lldms", i + 1,
		       (long long)(backoff[i] / MS));
		T += backoff[i];
		http_next(DECIDE_HTTP_STOP, "retry");
	}
	is_int(noted(NOTE_STOP_RETRY), 9, "each retry is noted");
	ok(notes_of(NOTE_STOP_RETRY, 0)->result == 503 && notes_of(NOTE_STOP_RETRY, 0)->us == 100 * MS, "with its wait");
	ok(notes_of(NOTE_STOP_RETRY, 1)->result == -ECONNREFUSED && notes_of(NOTE_STOP_RETRY, 1)->us == 200 * MS,
	   "and the reason");
	is_int(sc(0).requests, 10, "ten requests");
	is_int(sc(0).statuses[1], -ECONNREFUSED, "results kept");
	is_int(sc(0).statuses[7], 429, "the first eight of them");
	/* 14.7s in: a request may not outlast --stop-timeout. */
	answer(DECIDE_HTTP_STOP, 503);
	T = deadline - 3 * S;
	http_next(DECIDE_HTTP_STOP, "late retry");
	is_int(last.timeout_us, 3 * S, "gets only what is left of --stop-timeout");
	T += 2 * S + 500 * MS;
	answer(DECIDE_HTTP_STOP, 503);
	is_int(noted(NOTE_STOP_NO_TIME), 1, "no retry past --stop-timeout");
	is_int(decide_deadline(d, T), deadline, "next is --stop-timeout");
	T = deadline;
	is_int(next(), DECIDE_SIGNAL, "then SIGTERM");
	is_int(last.signo, SIGTERM, "SIGTERM, though the stop request was no signal");
	T += MS;
	decide_sidecar_gone(d, 0, T);
	is_str(sc(0).outcome, "terminated", "outcome terminated");
}

static void http_escalation(void)
{
	/* 200, and still running: linkerd2#6993. */
	http_stop_asked();
	answer(DECIDE_HTTP_STOP, 200);
	T += 20 * S;
	is_int(next(), DECIDE_SIGNAL, "still running at --stop-timeout: SIGTERM");
	is_int(last.signo, SIGTERM, "SIGTERM");
	T += 5 * S;
	is_int(next(), DECIDE_SIGNAL, "then SIGKILL");
	is_int(last.signo, SIGKILL, "SIGKILL");
	decide_sidecar_gone(d, 0, T);
	is_str(sc(0).outcome, "killed", "outcome killed");

	/* A hanging request: its answer comes after the escalation and changes nothing. */
	http_stop_asked();
	T += 5 * S;
	answer(DECIDE_HTTP_STOP, -ETIMEDOUT);
	T += 100 * MS;
	http_next(DECIDE_HTTP_STOP, "retried after the timeout");
	is_int(last.timeout_us, 5 * S, "with 5s again");
	T = sc(0).deadline_us;
	is_int(next(), DECIDE_SIGNAL, "abandoned at --stop-timeout: SIGTERM");
	answer(DECIDE_HTTP_STOP, 200);
	is_int(sc(0).stage, DECIDE_SIDECAR_STOPPING, "a late 200 changes nothing");
	is_str(sc(0).outcome, "running", "it is still being stopped");
	is_int(sc(0).statuses[1], 200, "but is recorded");

	/* 4xx: the endpoint refuses (Linkerd without its shutdown endpoint): a signal at once. */
	http_stop_asked();
	T += MS;
	answer(DECIDE_HTTP_STOP, 404);
	ok(noted(NOTE_STOP_REFUSED) && note(NOTE_STOP_REFUSED)->result == 404 && !note(NOTE_STOP_REFUSED)->blind,
	   "the fallback is noted");
	is_int(next(), DECIDE_SIGNAL, "SIGTERM at once");
	is_int(last.signo, SIGTERM, "SIGTERM");
	is_int(decide_deadline(d, T), T + 5 * S, "SIGKILL after --kill-after");
	decide_sidecar_gone(d, 0, T + MS);
	is_str(sc(0).outcome, "terminated", "outcome terminated");
}

static void http_drain(void)
{
	const struct decide_sidecar_config *db = &http_sidecars[1];

	setup_with(POLICY_NEVER, 1, db, 1, false);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	next();
	next();
	http_next(DECIDE_HTTP_DRAIN, "the drain request first");
	is_str(last.url, "http://127.0.0.1:9091/drain", "to the drain URL");
	is_int(decide_deadline(d, T), INT64_MAX, "its own timeout bounds it");
	T += 3 * MS;
	answer(DECIDE_HTTP_DRAIN, 200);
	is_int(next(), NONE, "then drain-time");
	is_int(decide_deadline(d, T), T + 2 * S, "of 2s");
	T += 2 * S;
	http_next(DECIDE_HTTP_STOP, "then the stop request");
	is_int(sc(0).stop_sent_us, T, "the stop time is the stop request's");
	is_int(decide_deadline(d, T), T + 20 * S, "--stop-timeout counts from it");
	answer(DECIDE_HTTP_STOP, 200);
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_EXIT, "exit");
	is_int(sc(0).requests, 2, "two requests");

	setup_with(POLICY_NEVER, 1, db, 1, false);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	next();
	next();
	http_next(DECIDE_HTTP_DRAIN, "drain");
	answer(DECIDE_HTTP_DRAIN, -ECONNREFUSED);
	ok(noted(NOTE_DRAIN_FAILED) && note(NOTE_DRAIN_FAILED)->result == -ECONNREFUSED, "a failed drain is noted");
	http_next(DECIDE_HTTP_STOP, "and the stop request follows at once");

	setup_with(POLICY_NEVER, 1, db, 1, false);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	next();
	next();
	http_next(DECIDE_HTTP_DRAIN, "drain");
	answer(DECIDE_HTTP_DRAIN, 200);
	decide_sidecar_gone(d, 0, T + S);
	is_str(sc(0).outcome, "stopped", "gone during drain-time: stopped");
	is_int(next(), DECIDE_EXIT, "exit, no stop request needed");
}

static void http_two_sidecars(void)
{
	setup_with(POLICY_NEVER, 1, http_sidecars, 2, false);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	next();
	is_int(next(), DECIDE_WATCH, "watch");
	is_int(last.sidecar, 1, "the last --sidecar first");
	http_next(DECIDE_HTTP_DRAIN, "its drain");
	answer(DECIDE_HTTP_DRAIN, 200);
	T += 2 * S;
	http_next(DECIDE_HTTP_STOP, "its stop");
	answer(DECIDE_HTTP_STOP, 200);
	is_int(next(), NONE, "the first sidecar waits until the second is gone");
	decide_sidecar_gone(d, 1, T);
	is_int(next(), DECIDE_WATCH, "now the first");
	is_int(last.sidecar, 0, "sidecar 0");
	http_next(DECIDE_HTTP_STOP, "its stop");
}

static void blind(void)
{
	struct decide_sidecar_config port[ARRAY_SIZE(http_sidecars)];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(port); i++) {
		port[i] = http_sidecars[i];
		port[i].confirm = CONFIRM_PORT;
	}
	/* mesh and logs, no processes visible: logs cannot be stopped, mesh is probed. */
	setup_with(POLICY_NEVER, 0, port, 3, false);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	is_int(next(), DECIDE_APPS_DONE, "draining");
	http_next(DECIDE_HTTP_DRAIN, "nothing to watch: db's drain at once");
	is_int(last.sidecar, 1, "db");
	ok(noted_for(NOTE_NO_SIGNAL_BLIND, "logs"), "logs (a signal sidecar) cannot be stopped");
	is_str(sc(2).outcome, "not-visible", "outcome not-visible");
	answer(DECIDE_HTTP_DRAIN, 200);
	T += 2 * S;
	http_next(DECIDE_HTTP_STOP, "db's stop");
	answer(DECIDE_HTTP_STOP, 200);
	ok(noted(NOTE_STOP_ACCEPTED) && note(NOTE_STOP_ACCEPTED)->blind, "what comes next is noted");
	http_next(DECIDE_HTTP_GONE, "a connect probe at once");
	is_str(last.url, "http://127.0.0.1:9090/startup", "on the ready URL");
	answer(DECIDE_HTTP_GONE, 0);
	is_int(decide_deadline(d, T), T + 20 * MS, "still accepting: again in 20ms");
	T += 20 * MS;
	http_next(DECIDE_HTTP_GONE, "probe 2");
	answer(DECIDE_HTTP_GONE, 0);
	is_int(decide_deadline(d, T), T + 40 * MS, "then 40ms");
	T += 40 * MS;
	http_next(DECIDE_HTTP_GONE, "probe 3");
	answer(DECIDE_HTTP_GONE, -ECONNREFUSED);
	is_str(sc(1).outcome, "stopped", "refused: db stopped");
	http_next(DECIDE_HTTP_STOP, "then mesh's stop");
	is_int(last.sidecar, 0, "mesh");
	answer(DECIDE_HTTP_STOP, 204);
	http_next(DECIDE_HTTP_GONE, "probe");
	answer(DECIDE_HTTP_GONE, -ECONNREFUSED);
	is_int(next(), DECIDE_EXIT, "exit");
	is_int(last.exit_code, 1, "exit 1: logs could not be stopped");

	/* Still accepting connections at --stop-timeout: no signal possible, so it failed. */
	setup_with(POLICY_NEVER, 0, port, 1, false);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	next();
	http_next(DECIDE_HTTP_STOP, "stop");
	answer(DECIDE_HTTP_STOP, 200);
	while (T < sc(0).deadline_us) {
		if (next() == DECIDE_HTTP)
			answer(DECIDE_HTTP_GONE, 0);
		T += 100 * MS;
	}
	is_int(next(), DECIDE_EXIT, "gives up at --stop-timeout");
	is_int(last.exit_code, 1, "exit 1");
	is_str(sc(0).outcome, "still-running", "outcome still-running");
	ok(noted(NOTE_BLIND_TIMEOUT) && note(NOTE_BLIND_TIMEOUT)->flag && note(NOTE_BLIND_TIMEOUT)->us == 20 * S,
	   "the note says why");

	/* A refusal cannot fall back to a signal either. */
	setup_with(POLICY_NEVER, 0, port, 1, false);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	next();
	http_next(DECIDE_HTTP_STOP, "stop");
	answer(DECIDE_HTTP_STOP, 404);
	is_int(next(), DECIDE_EXIT, "a 404: nothing else to try");
	is_str(sc(0).outcome, "stop-refused", "outcome stop-refused");

	/* Without a ready URL, the stop URL's door is watched. */
	{
		static const struct decide_sidecar_config vault = { .name = "vault",
								    .stop_url = "http://127.0.0.1:8200/agent/v1/quit",
								    .confirm = CONFIRM_PORT };

		setup_with(POLICY_NEVER, 0, &vault, 1, false);
		decide_drain_now(d, REASON_DRAIN_COMMAND, T);
		next();
		http_next(DECIDE_HTTP_STOP, "stop");
		answer(DECIDE_HTTP_STOP, 200);
		http_next(DECIDE_HTTP_GONE, "probe");
		is_str(last.url, "http://127.0.0.1:8200/agent/v1/quit", "on the stop URL");
	}
}

static void signal_retries(void)
{
	drained(1);
	is_int(next(), DECIDE_WATCH, "watch");
	is_int(next(), DECIDE_SIGNAL, "signal");
	decide_signal_result(d, 0, -EMFILE, T);
	is_str(sc(0).outcome, "running", "no fd to spare is no failure");
	ok(noted(NOTE_SIGNAL_RETRY) && note(NOTE_SIGNAL_RETRY)->result == -EMFILE, "noted");
	is_int(decide_deadline(d, T), T + 100 * MS, "tried again after 100ms");
	T += 100 * MS;
	is_int(next(), DECIDE_SIGNAL, "sent again");
	is_int(last.signo, SIGTERM, "the same signal");
	decide_signal_result(d, 0, 0, T);
	decide_sidecar_gone(d, 0, T + MS);
	is_str(sc(0).outcome, "stopped", "stopped");
}

static void root_signals(void)
{
	static const struct decide_sidecar_config nginx = { .name = "nginx", .stop_signal = SIGQUIT,
							    .exit_fix = "use its graceful signal" };
	static const struct decide_sidecar_config all = { .name = "old", .stop_signal = SIGQUIT, .signal_all = true };

	/* The stop signal goes to the roots, first; SIGTERM to the roots too; SIGKILL to every process. */
	setup_with(POLICY_NEVER, 1, &nginx, 1, false);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	is_int(next(), DECIDE_APPS_DONE, "draining");
	is_int(next(), DECIDE_SIGNAL, "the signal first: the roots are known");
	ok(!last.all && last.urgent, "to the roots alone, before anything else");
	is_int(last.signo, SIGQUIT, "its own stop signal");
	decide_signal_result(d, 0, 0, T);
	is_int(next(), DECIDE_WATCH, "then every process is watched");
	T += 20 * S;
	is_int(next(), DECIDE_SIGNAL, "--stop-timeout: SIGTERM");
	ok(!last.all && last.signo == SIGTERM, "to the roots");
	T += 5 * S;
	is_int(next(), DECIDE_SIGNAL, "--kill-after: SIGKILL");
	ok(last.all && last.signo == SIGKILL, "to every process, as the runtime's grace period ends");
	decide_sidecar_gone(d, 0, T);

	/* signal-all: 0.1.0's way, the processes watched first. */
	setup_with(POLICY_NEVER, 1, &all, 1, false);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	next();
	is_int(next(), DECIDE_WATCH, "signal-all: the processes first");
	is_int(next(), DECIDE_SIGNAL, "then the signal");
	ok(last.all, "to every process");
	T += 20 * S;
	is_int(next(), DECIDE_SIGNAL, "SIGTERM");
	ok(last.all, "to every process too");
}

static void sidecar_codes(void)
{
	static const struct decide_sidecar_config nginx = { .name = "nginx", .stop_signal = SIGTERM,
							    .exit_fix = "use its graceful signal" };

	setup_with(POLICY_NEVER, 1, &nginx, 1, false);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	next();
	is_int(next(), DECIDE_SIGNAL, "SIGTERM");
	decide_signal_result(d, 0, 0, T);
	is_int(next(), DECIDE_WATCH, "watch");
	T += MS;
	decide_sidecar_exited(d, 0, T);
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_STATUS, "its exit code is asked for");
	is_int(next(), NONE, "the exit waits for it");
	decide_sidecar_status(d, 0, 143, T);
	ok(noted(NOTE_SIDECAR_CODE) && note(NOTE_SIDECAR_CODE)->code == 143 && note(NOTE_SIDECAR_CODE)->flag,
	   "a non-zero code is noted with its consequence (Never)");
	is_str(note(NOTE_SIDECAR_CODE)->text, "use its graceful signal", "and the fix for its kind");
	is_int(sc(0).exit_code, 143, "kept for the summary");
	is_int(next(), DECIDE_EXIT, "then the exit");

	/* A sidecar that exits on its own before its stop is said, once its watch saw the exit. */
	setup_with(POLICY_NEVER, 1, &nginx, 1, false);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	DECIDE_TELL(d, T, .kind = DECIDE_EV_SIDECAR_EXITED, .sidecar = 0, .id = 5, .pid = 42);
	ok(noted_for(NOTE_SIDECAR_EXITED_EARLY, "nginx") && !note(NOTE_SIDECAR_EXITED_EARLY)->flag,
	   "an exit before the apps were done is noted");
	ok(note(NOTE_SIDECAR_EXITED_EARLY)->container == 5 && note(NOTE_SIDECAR_EXITED_EARLY)->pid == 42,
	   "with its container and root");
	decide_sidecar_seen(d, 0, T);
	decide_sidecar_exited(d, 0, T);
	is_int(noted(NOTE_SIDECAR_EXITED_EARLY), 1, "not for an exit no watch saw");

	/* Under OnFailure the consequence is another. */
	setup_with(POLICY_ON_FAILURE, 1, &nginx, 1, false);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_drain_now(d, REASON_DRAIN_COMMAND, T);
	next();
	is_int(next(), DECIDE_SIGNAL, "SIGTERM");
	decide_sidecar_exited(d, 0, T);
	decide_sidecar_status(d, 0, 1, T);
	ok(noted(NOTE_SIDECAR_CODE) && !note(NOTE_SIDECAR_CODE)->flag, "OnFailure: restarted");

	/* A code that never comes is unknown after 2s; 0 says nothing. */
	setup_with(POLICY_NEVER, 1, &nginx, 1, false);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_sidecar_exited(d, 0, T);
	T += 2 * S;
	next_skipping_rescans();
	is_int(sc(0).exit_code, DECIDE_CODE_UNKNOWN, "unknown after 2s");
	setup_with(POLICY_NEVER, 1, &nginx, 1, false);
	decide_sidecar_exited(d, 0, T);
	decide_sidecar_status(d, 0, 0, T);
	is_int(sc(0).exit_code, 0, "exit 0");
	ok(!noted(NOTE_SIDECAR_CODE), "is no warning");
}

/*
 * A sidecar that exits while the apps run, with no stop sent: noted as a
 * death, by its code and the policy (notes.c says what each means), and
 * not with the advice for a stop that went wrong.
 */
static void sidecar_dies(void)
{
	static const struct decide_sidecar_config envoy = { .name = "envoy", .stop_url = "http://127.0.0.1:1/stop",
							    .exit_fix = "a stop over HTTP ends a proxy with 0" };
	static const int codes[] = { 143, 139, 2, DECIDE_CODE_UNKNOWN };
	bool each = true;
	size_t i;

	setup_with(POLICY_NEVER, 1, &envoy, 1, false);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_app_seen(d, 3, "job", T - LONG_AGO);
	decide_sidecar_exited(d, 0, T);
	is_int(next(), DECIDE_STATUS, "its exit code is asked for");
	decide_sidecar_status(d, 0, 137, T);
	ok(noted(NOTE_SIDECAR_DIED) && note(NOTE_SIDECAR_DIED)->code == 137 && noted_for(NOTE_SIDECAR_DIED, "envoy"),
	   "SIGKILL with no stop sent: a death, with its code");
	ok(note(NOTE_SIDECAR_DIED)->flag, "under Never");
	ok(note(NOTE_SIDECAR_DIED)->hint, "with a word for the option that would act on it (the default only warns)");
	ok(!noted(NOTE_SIDECAR_CODE), "no advice about a stop that was never sent");
	is_int(sc(0).exit_code, 137, "the code is kept for the summary");
	is_int(next(), NONE, "the app still runs: nothing else to do (the default is a warning)");
	T += S;
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	is_int(next(), DECIDE_APPS_DONE, "the apps done: the drain");
	is_int(next(), DECIDE_WATCH, "a look for what is left of it");
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_EXIT, "exit");
	is_str(sc(0).outcome, "exited-before-stop", "outcome exited-before-stop");

	setup_with(POLICY_NEVER, 1, &envoy, 1, false);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	for (i = 0; i < ARRAY_SIZE(codes); i++) {
		decide_sidecar_exited(d, 0, T);
		decide_sidecar_status(d, 0, codes[i], T);
		each &= notes_of(NOTE_SIDECAR_DIED, (int)i)->code == codes[i];
	}
	is_int(noted(NOTE_SIDECAR_DIED), 4, "each death is noted once");
	ok(each, "each with its own code: a signal, a crash, a failure, unknown");

	setup_with(POLICY_ON_FAILURE, 1, &envoy, 1, false);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_sidecar_exited(d, 0, T);
	decide_sidecar_status(d, 0, 137, T);
	ok(noted(NOTE_SIDECAR_DIED) && !note(NOTE_SIDECAR_DIED)->flag, "OnFailure: a death under OnFailure");
	ok(noted(NOTE_SIDECAR_DIED) && !note(NOTE_SIDECAR_DIED)->hint, "the option does nothing there: not named");
	ok(!noted(NOTE_SIDECAR_CODE), "no word of a pod that will not complete");

	setup_with(POLICY_NEVER, 1, &envoy, 1, false);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_sidecar_exited(d, 0, T);
	decide_sidecar_status(d, 0, 0, T);
	ok(noted(NOTE_SIDECAR_DIED) && note(NOTE_SIDECAR_DIED)->code == 0 && !note(NOTE_SIDECAR_DIED)->hint,
	   "Never, exit 0: a death too, but no failure to act on");
}

int main(void)
{
	escalation();
	fates();
	terminated_by_sigterm();
	eperm();
	not_found();
	handler_wait();
	handler_wait_from_start();
	readiness();
	ready_timeout();
	http_stop();
	http_retries();
	http_escalation();
	http_drain();
	http_two_sidecars();
	blind();
	signal_retries();
	root_signals();
	sidecar_codes();
	sidecar_dies();
	return finish();
}
