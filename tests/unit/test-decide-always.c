/*
 * decide under restartPolicy Always: a long-running pod (a Deployment's, a
 * StatefulSet's, a DaemonSet's), through the harness of decide-harness.h.
 *
 * The kubelet restarts every container of such a pod that ends, apps and
 * sidecars alike, whatever its exit code. So nothing is concluded from an
 * exit: an app that exits is awaited back, a sidecar that exits is
 * restarted, and the agent neither waits for nor stops anything while the
 * pod runs. Only the pod's deletion, which reaches the agent as its own
 * SIGTERM, starts the ordered stop: the sidecars are held while the apps
 * stop, then stopped one by one, the last named first.
 */
#include "config.h"

#include "decide-harness.h"

/* The one app and the one sidecar of a long-running pod, both running for a while. */
static void running_pod(void)
{
	setup(POLICY_ALWAYS, 1, 1);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_app_seen(d, 3, "web", T);
	T += 60 * S;
}

/* Its deletion: the agent's SIGTERM, then the app's exit, then its exit code. */
static void app_stops(void)
{
	decide_terminate(d, T);
	T += 5 * S;
	decide_app_exited(d, 3, T);
}

/* An app that exits is restarted by the kubelet, whatever its code: nothing is drained. */
static void app_exits(void)
{
	static const int codes[] = { 0, 1, 137, DECIDE_CODE_UNKNOWN };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(codes); i++) {
		running_pod();
		is_int(next(), NONE, "running: nothing to do");
		is_int(decide_deadline(d, T), INT64_MAX, "with --apps 1 seen and running: no timer at all");
		decide_app_exited(d, 3, T);
		decide_app_status(d, 3, codes[i], T);
		is_int(next_skipping_rescans(), NONE, "the app exited %d: no drain, the kubelet restarts it", codes[i]);
		ok(noted(NOTE_RESTART_WAIT) && note(NOTE_RESTART_WAIT)->always && note(NOTE_RESTART_WAIT)->us == 0,
		   "exit %d: a note says the sidecars stay, with no limit", codes[i]);
		is_int(note(NOTE_RESTART_WAIT)->code, codes[i], "with its code");
		ok(!noted(NOTE_DRAIN), "and no drain is noted");
	}

	/* Its restart is looked for every second: nothing waits for it, and a crash loop may last for ever. */
	running_pod();
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 2, T);
	is_int(next(), DECIDE_RESCAN, "a rescan looks for the restart");
	decide_rescanned(d, 0, T);
	is_int(decide_deadline(d, T), T + 1 * S, "and another a second later");
	ok(!decide_expects_process(d, T), "without the pid counter's quick watch");
	T += 10 * S;
	is_int(next(), DECIDE_RESCAN, "the next rescan");
	decide_app_seen(d, 7, "web", T);
	decide_rescanned(d, 0, T);
	is_int(app(0).state, DECIDE_APP_RESTARTED, "the new container of the same name is its restart");
	is_int(next(), NONE, "the restarted app runs: nothing to do");
	is_int(decide_deadline(d, T), INT64_MAX, "and no timer again");

	/* An exit 0 is followed by a restart too, and one whose code is still on its way. */
	running_pod();
	decide_app_exited(d, 3, T);
	decide_app_seen(d, 8, "web", T + 2 * S);
	is_int(app(0).state, DECIDE_APP_RESTARTED, "a restart seen before its attempt's code came replaces it");
	running_pod();
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	decide_app_seen(d, 8, "web", T + 2 * S);
	is_int(app(0).state, DECIDE_APP_RESTARTED, "an exit 0 is restarted and replaced as a failure is");

	/* --restart-grace is OnFailure's: under Always the app is never given up on. */
	running_pod();
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 1, T);
	T += 3600 * S;
	is_int(next_skipping_rescans(), NONE, "an hour later: still no drain");
	ok(!app(0).gave_up, "the restart was not given up on");
	ok(!noted(NOTE_RESTART_GIVEN_UP), "nor is that said");
}

/* A sidecar that exits is restarted by the kubelet: neither waited for, nor stopped, nor a reason to stop the apps. */
static void sidecar_exits(void)
{
	running_pod();
	decide_sidecar_exited(d, 0, T);
	decide_sidecar_status(d, 0, 137, T);
	is_int(next_skipping_rescans(), NONE, "the sidecar died: no drain, no stop");
	ok(noted(NOTE_SIDECAR_DIED) && note(NOTE_SIDECAR_DIED)->always && !note(NOTE_SIDECAR_DIED)->flag,
	   "its death is said, with what Always makes of it");
	ok(!note(NOTE_SIDECAR_DIED)->hint, "without a word for --on-sidecar-exit=fail, which does nothing here");
	ok(!noted(NOTE_SIDECAR_CODE), "nor advice about a stop, since none was sent");
	is_int(sc(0).stage, DECIDE_SIDECAR_UP, "it is not being stopped");
	T += 10 * S;
	decide_sidecar_seen(d, 0, T);
	is_int(next_skipping_rescans(), NONE, "its restart runs: nothing to do");

	/* The deletion stops the restarted container, once, as any other. */
	T += LONG_AGO;
	app_stops();
	decide_app_status(d, 3, 143, T);
	is_int(next(), DECIDE_RESCAN, "the deletion's confirming look");
	decide_rescanned(d, 0, T);
	is_int(next(), DECIDE_APPS_DONE, "the app is over: the drain");
	is_int(next(), DECIDE_SIGNAL, "the restarted sidecar gets its stop signal");
	decide_signal_result(d, 0, 0, T);
	is_int(next(), DECIDE_WATCH, "then its processes are watched");
	decide_sidecar_exited(d, 0, T + 10 * MS);
	decide_sidecar_status(d, 0, 0, T + 10 * MS);
	decide_sidecar_gone(d, 0, T + 10 * MS);
	T += 10 * MS;
	is_int(next_skipping_rescans(), DECIDE_EXIT, "and the agent exits");
	is_int(last.exit_code, 0, "0");
	is_int(sc(0).exit_code, 0, "its code is the stopped container's, not the 137 of the one restarted");

	/* --on-sidecar-exit=fail does not stop the apps under Always: the kubelet would restart them. */
	running_pod();
	cfg.on_sidecar_exit = SIDECAR_EXIT_FAIL;
	renew();
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_app_seen(d, 3, "web", T);
	decide_sidecar_exited(d, 0, T);
	decide_sidecar_status(d, 0, 1, T);
	is_int(next_skipping_rescans(), NONE, "no app is signalled");
	is_int(note(NOTE_APPS_STOP_NOT)->kept, APPS_KEPT_ALWAYS, "and the note says why");
}

/* The deletion: the sidecars are held while the apps stop, then stopped in reverse order. */
static void deletion(void)
{
	int64_t term;

	setup(POLICY_ALWAYS, 1, 2);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_sidecar_seen(d, 1, T - LONG_AGO);
	decide_app_seen(d, 3, "web", T);
	T += 60 * S;
	term = T;
	decide_terminate(d, T);
	is_int(next(), NONE, "SIGTERM: the sidecars are held while the app runs");
	is_int(decide_deadline(d, T), T + 25 * S, "for at most --term-grace");
	is_int(view().term_us, term, "the hold began at SIGTERM");
	T += 5 * S;
	decide_app_exited(d, 3, T);
	is_int(next(), DECIDE_RESCAN, "the app is over: one more look, though --apps 1 were seen (a restart may hide)");
	decide_rescanned(d, 0, T);
	is_int(next(), DECIDE_APPS_DONE, "nothing new: the drain, without waiting for the app's exit code");
	is_str(decide_reason_word(last.reason), "apps-done", "for the reason apps-done");
	is_int(note(NOTE_DRAIN)->limit_us, 5 * S, "the note says how long the sidecars were held");
	is_int(next(), DECIDE_SIGNAL, "the sidecar named last is stopped first");
	is_int(last.sidecar, 1, "logs");
	decide_signal_result(d, 1, 0, T);
	is_int(next(), DECIDE_WATCH, "its processes are watched");
	is_int(next_skipping_rescans(), NONE, "and the first waits until it is gone");
	decide_app_status(d, 3, 143, T);
	T += 200 * MS;
	decide_sidecar_gone(d, 1, T);
	is_int(next(), DECIDE_SIGNAL, "then the sidecar named first");
	is_int(last.sidecar, 0, "proxy");
	decide_signal_result(d, 0, 0, T);
	is_int(next(), DECIDE_WATCH, "watched");
	T += 200 * MS;
	decide_sidecar_gone(d, 0, T);
	is_int(next_skipping_rescans(), DECIDE_EXIT, "every sidecar gone: the exit");
	is_int(sc(1).stop_sent_us - term, 5 * S, "the sidecar named last was held 5 s");
	is_int(sc(0).stop_sent_us - term, 5 * S + 200 * MS, "the first 5.2 s, until the other was gone");
	ok(view().decided_us - view().term_us == 5 * S, "the view holds the hold");

	/* An app in its restart's back-off at the deletion: nothing to hold the sidecars for. */
	running_pod();
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 1, T);
	T += 20 * S;
	decide_terminate(d, T);
	is_int(next(), DECIDE_RESCAN, "SIGTERM while the app is down: one look for a restart");
	decide_rescanned(d, 0, T);
	is_int(next(), DECIDE_APPS_DONE, "none came: the drain at once");

	/* Its restart came, unseen by the once-a-second rescans: the deletion's look finds it, and holds for it. */
	running_pod();
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 1, T);
	T += 300 * MS;
	decide_terminate(d, T);
	is_int(next(), DECIDE_RESCAN, "SIGTERM: one look");
	decide_app_seen(d, 9, "web", T);
	decide_rescanned(d, 0, T);
	is_int(next(), NONE, "the restart runs: the sidecars are held for it");
	is_int(app(0).state, DECIDE_APP_RESTARTED, "it replaced the attempt before it");
	T += 2 * S;
	decide_app_exited(d, 9, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "it stopped: the drain");

	/* The apps outlive --term-grace: the drain goes on without them. */
	running_pod();
	decide_terminate(d, T);
	T += 25 * S;
	is_int(next(), DECIDE_APPS_DONE, "--term-grace over: the drain");
	is_str(decide_reason_word(last.reason), "term-grace", "for the reason term-grace");
	is_int(note(NOTE_DRAIN)->limit_us, 25 * S, "held 25 s");

	/* A second SIGTERM drains at once, as for a Job. */
	running_pod();
	decide_terminate(d, T);
	decide_terminate(d, T + S);
	T += S;
	is_int(next(), DECIDE_APPS_DONE, "a second signal: the drain at once");
	is_str(decide_reason_word(last.reason), "second-signal", "second-signal");

	/* A named sidecar that never started is not waited for: in a deletion the kubelet starts nothing. */
	setup(POLICY_ALWAYS, 1, 1);
	cfg.sidecar_wait_us = 120 * S;
	renew();
	decide_app_seen(d, 3, "web", T);
	app_stops();
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "the drain at once");
	ok(!noted(NOTE_SIDECAR_WAIT), "no wait for the missing sidecar");
}

/* The drains a Job knows but a long-running pod must not have before its deletion. */
static void refused_drains(void)
{
	running_pod();
	ok(!decide_drain_now(d, REASON_DRAIN_FILE, T), "a drain file before the deletion is refused");
	ok(noted(NOTE_ALWAYS_KEPT) && note(NOTE_ALWAYS_KEPT)->reason == REASON_DRAIN_FILE, "and said");
	is_int(next(), NONE, "the sidecars stay");
	decide_terminate(d, T);
	ok(decide_drain_now(d, REASON_DRAIN_FILE, T), "in the deletion it drains at once");
	is_int(next(), DECIDE_APPS_DONE, "without waiting for the app");
	is_str(decide_reason_word(last.reason), "drain-file", "drain-file");

	/* An earlier run's files: under Always a restarted agent is no deletion's, and they are stale. */
	setup(POLICY_ALWAYS, 1, 1);
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_FOUND, .file = PROTOCOL_APPS_DONE), "apps-done found: refused");
	ok(!DECIDE_TELL(d, T, .kind = DECIDE_EV_FOUND, .file = PROTOCOL_DONE), "done found: refused");
	is_int(noted(NOTE_ALWAYS_KEPT), 2, "each said");
	ok(!noted(NOTE_RESUME_APPS_DONE) && !noted(NOTE_RESUME_DONE), "neither is taken for a resume");
	decide_app_seen(d, 3, "web", T);
	is_int(next_skipping_rescans(), NONE, "the agent watches afresh");

	/* No app within --startup-timeout: said once, no drain. */
	setup(POLICY_ALWAYS, 1, 1);
	T += 600 * S;
	is_int(next_skipping_rescans(), NONE, "no app within --startup-timeout: no drain");
	ok(noted(NOTE_ALWAYS_KEPT) && note(NOTE_ALWAYS_KEPT)->reason == REASON_STARTUP_TIMEOUT &&
		   note(NOTE_ALWAYS_KEPT)->us == 600 * S,
	   "said, with --startup-timeout");
	T += 600 * S;
	is_int(next_skipping_rescans(), NONE, "still none");
	is_int(noted(NOTE_ALWAYS_KEPT), 1, "said once");
	decide_terminate(d, T);
	T += 25 * S;
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "the deletion drains after --term-grace");
}

/* Whatever happens while the pod runs, the agent never ends by itself. */
static void never_ends_alone(void)
{
	unsigned seed = 35, id = 3;
	int i, k;

	setup(POLICY_ALWAYS, 2, 2);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_sidecar_seen(d, 1, T - LONG_AGO);
	decide_app_seen(d, id++, "web", T);
	decide_app_seen(d, id++, "worker", T);
	for (i = 0; i < 500; i++) {
		seed = seed * 1103515245u + 12345u;
		T += (seed >> 8) % (30 * S);
		switch ((seed >> 4) % 4) {
		case 0: /* an app exits, with any code, and is restarted */
			decide_app_exited(d, id - 2, T);
			decide_app_status(d, id - 2, (int)((seed >> 12) % 256), T);
			T += S;
			decide_app_seen(d, id++, "web", T);
			break;
		case 1: /* a sidecar dies and comes back */
			decide_sidecar_exited(d, (seed >> 12) % 2, T);
			decide_sidecar_status(d, (seed >> 12) % 2, 137, T);
			decide_sidecar_seen(d, (seed >> 12) % 2, T + S);
			break;
		case 2: /* someone writes the drain file */
			decide_drain_now(d, REASON_DRAIN_FILE, T);
			break;
		default: /* nothing but time */
			break;
		}
		while ((k = next()) != NONE) {
			if (k == DECIDE_APPS_DONE || k == DECIDE_EXIT || k == DECIDE_SIGNAL || k == DECIDE_HTTP ||
			    k == DECIDE_WATCH || k == DECIDE_SIGNAL_APP)
				break;
			if (k == DECIDE_RESCAN)
				decide_rescanned(d, 0, T);
		}
		if (k != NONE)
			break;
	}
	is_int(i, 500, "500 events over hours: no drain, no stop, no exit (the last action: %d)", k);
	is_int(view().phase, PHASE_WATCHING, "still watching");
}

/* The restart policies in Kubernetes' words. */
static void words(void)
{
	enum restart_policy p = POLICY_NEVER;

	is_str(decide_policy_word(POLICY_ALWAYS), "Always", "Always");
	ok(decide_policy_parse("Always", &p) == 0 && p == POLICY_ALWAYS, "Always read back");
	ok(decide_policy_parse("OnFailure", &p) == 0 && p == POLICY_ON_FAILURE, "OnFailure read back");
	ok(decide_policy_parse("always", &p) == -EINVAL && p == POLICY_ON_FAILURE, "Kubernetes' case only, untouched");
}

int main(void)
{
	app_exits();
	sidecar_exits();
	deletion();
	refused_drains();
	never_ends_alone();
	words();
	return finish();
}
