#include "config.h"

#include "decide.h"
#include "log.h"
#include "tap.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NONE (-1)
#define S (US_PER_S)
#define MS (US_PER_MS)

static struct decide d;
static int64_t T;
static struct decide_sidecar_config sidecars[] = {
	{ "proxy", SIGTERM },
	{ "logs", SIGINT },
};
static FILE *log_file;
static struct decide_action last;

static void setup(enum restart_policy policy, unsigned apps, size_t nsidecars)
{
	struct decide_config cfg = {
		.policy = policy,
		.apps_expected = apps,
		.startup_timeout_us = 600 * S,
		.restart_grace_us = 300 * S,
		.term_grace_us = 25 * S,
		.stop_timeout_us = 20 * S,
		.kill_after_us = 5 * S,
		.nsidecars = nsidecars,
		.sidecars = sidecars,
	};

	decide_free(&d);
	T = 1000 * S;
	decide_init(&d, &cfg, T);
	rewind(log_file);
	if (ftruncate(fileno(log_file), 0) < 0)
		abort();
}

static int next(void)
{
	if (!decide_next(&d, T, &last))
		return NONE;
	return (int)last.kind;
}

static int log_count(const char *needle)
{
	char buf[16384], *p;
	size_t n;
	int c = 0;

	fflush(log_file);
	n = (size_t)pread(fileno(log_file), buf, sizeof(buf) - 1, 0);
	buf[n] = '\0';
	for (p = buf; (p = strstr(p, needle)) != NULL; p++)
		c++;
	return c;
}

static bool logged(const char *needle)
{
	return log_count(needle) > 0;
}

/* A report arrives; the agent rescans (finding nothing new) as asked. */
static void report(const char *name, int code)
{
	decide_app_report(&d, name, code, T);
	is_int(next(), DECIDE_RESCAN, "report %s=%d: a rescan first", name, code);
	decide_rescanned(&d, T);
}

/* Answers rescans with nothing new until another action comes. */
static int next_skipping_rescans(void)
{
	int k;

	while ((k = next()) == DECIDE_RESCAN)
		decide_rescanned(&d, T);
	return k;
}

/* From the apps-done decision to the exit, with every sidecar stopping at once. */
static void drain_quickly(void)
{
	int k;

	while ((k = next()) != NONE && k != DECIDE_EXIT) {
		if (k == DECIDE_WATCH)
			continue;
		if (k == DECIDE_SIGNAL) {
			decide_signal_result(&d, last.sidecar, 0, T);
			T += 2 * MS;
			decide_sidecar_gone(&d, last.sidecar, T);
		}
	}
	is_int(k, DECIDE_EXIT, "the drain ends with an exit");
}

static void one_app_never(void)
{
	setup(POLICY_NEVER, 0, 1);
	is_int(next(), NONE, "nothing to do before any app");
	is_int(decide_deadline(&d, T), T + 100 * MS, "quick rescans while no app was seen");
	T += 100 * MS;
	is_int(next(), DECIDE_RESCAN, "rescan when due");
	decide_rescanned(&d, T);
	decide_app_seen(&d, 3, "job", T);
	is_int(next(), NONE, "app running: nothing to do");
	is_int(decide_deadline(&d, T), T + 1 * S, "without --apps, rescans every second while apps run");
	T += 2 * S;
	decide_app_exited(&d, 3, T);
	decide_app_status(&d, 3, 0, T);
	is_int(next(), DECIDE_RESCAN, "a rescan before concluding");
	decide_rescanned(&d, T);
	is_int(next(), DECIDE_APPS_DONE, "then the apps are done");
	is_str(last.reason, "apps-done", "reason apps-done");
	is_int(next(), DECIDE_WATCH, "watch the sidecar's processes");
	is_int(last.sidecar, 0, "sidecar 0");
	is_int(next(), DECIDE_SIGNAL, "send its stop signal");
	is_int(last.signo, SIGTERM, "SIGTERM");
	decide_signal_result(&d, 0, 0, T);
	is_int(next(), NONE, "wait for it");
	is_int(decide_deadline(&d, T), T + 20 * S, "at most --stop-timeout");
	T += 3 * MS;
	decide_sidecar_gone(&d, 0, T);
	is_int(next(), DECIDE_EXIT, "exit once it is gone");
	is_int(last.exit_code, 0, "exit 0");
	is_str(decide_outcome(&d.sidecars[0]), "stopped", "outcome stopped");
	is_int(d.sidecars[0].gone_us - d.sidecars[0].stop_sent_us, 3 * MS, "stop latency recorded");
	is_int(next(), NONE, "nothing after the exit");
	is_int(decide_deadline(&d, T), INT64_MAX, "no timer after the exit");
	is_int(d.apps[0].code, 0, "the exit code is recorded");
}

static void apps_expected(void)
{
	setup(POLICY_NEVER, 1, 1);
	is_int(decide_deadline(&d, T), T + 100 * MS, "--apps 1: quick rescans until it appears");
	decide_app_seen(&d, 3, "job", T);
	is_int(next(), NONE, "app running");
	is_int(decide_deadline(&d, T), INT64_MAX, "--apps 1 seen: no timer at all while it runs");
	decide_app_exited(&d, 3, T + S);
	T += S;
	is_int(next(), DECIDE_RESCAN, "confirming rescan");
	decide_rescanned(&d, T);
	is_int(next(), DECIDE_APPS_DONE, "apps done");

	setup(POLICY_NEVER, 2, 1);
	decide_app_seen(&d, 3, "a", T);
	decide_app_exited(&d, 3, T);
	is_int(next_skipping_rescans(), NONE, "--apps 2, one seen and exited: not done");
	decide_app_seen(&d, 4, "b", T);
	is_int(next_skipping_rescans(), NONE, "second app running: not done");
	is_int(decide_deadline(&d, T), INT64_MAX, "both seen: no timer");
	T += 5 * S;
	decide_app_exited(&d, 4, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "both exited: done");

	setup(POLICY_NEVER, 2, 1);
	decide_app_seen(&d, 3, "a", T);
	T += 2 * S;
	decide_app_exited(&d, 3, T);
	is_int(next_skipping_rescans(), NONE, "one of two exited");
	is_int(decide_deadline(&d, T), T + 100 * MS, "still looking for the second one");
	T = d.started_us + 600 * S;
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "the second never came: startup timeout");
	is_str(last.reason, "startup-timeout", "reason startup-timeout");
	ok(logged("fewer app containers than --apps"), "the log says fewer apps appeared");
}

static void two_apps(void)
{
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(&d, 3, "a", T);
	decide_app_seen(&d, 4, "b", T);
	T += S;
	decide_app_exited(&d, 3, T);
	is_int(next_skipping_rescans(), NONE, "first of two exited: not done");
	T += 2 * S;
	decide_app_exited(&d, 4, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "second exited: done");
}

static void confirm_finds_new_app(void)
{
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(&d, 3, "init-like", T);
	decide_app_exited(&d, 3, T);
	is_int(next(), DECIDE_RESCAN, "confirming rescan");
	decide_app_seen(&d, 4, "late", T); /* the rescan found a container started meanwhile */
	decide_rescanned(&d, T);
	is_int(next(), NONE, "not done: a new app appeared");
	is_int(d.phase, PHASE_WATCHING, "back to watching");
	decide_app_exited(&d, 4, T);
	is_int(next(), DECIDE_RESCAN, "a new confirming rescan");
	decide_rescanned(&d, T);
	is_int(next(), DECIDE_APPS_DONE, "done now");
}

static void on_failure(void)
{
	setup(POLICY_ON_FAILURE, 1, 1);
	decide_app_seen(&d, 3, "job", T);
	T += S;
	decide_app_exited(&d, 3, T);
	is_int(next_skipping_rescans(), NONE, "OnFailure: exit code pending, not done");
	decide_app_status(&d, 3, 1, T);
	is_int(next_skipping_rescans(), NONE, "OnFailure: failed app keeps its sidecars");
	ok(logged("keeping the sidecars for its restart"), "the log explains the wait");
	is_int(decide_deadline(&d, T), T + S, "rescans to see the restart");
	T += 10 * S;
	decide_app_seen(&d, 5, "job", T);
	ok(d.apps[0].superseded, "the new container of the same name replaces the failed one");
	is_int(next_skipping_rescans(), NONE, "restarted app running");
	is_int(decide_deadline(&d, T), INT64_MAX, "--apps 1 running again: no timer");
	T += S;
	decide_app_exited(&d, 5, T);
	decide_app_status(&d, 5, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "succeeded on the second attempt: done");

	setup(POLICY_ON_FAILURE, 0, 1);
	decide_app_seen(&d, 3, "job", T);
	decide_app_exited(&d, 3, T);
	decide_app_status(&d, 3, 2, T);
	is_int(next_skipping_rescans(), NONE, "failed, awaiting restart");
	is_int(decide_deadline(&d, T), T + S, "next rescan first");
	T += 299 * S;
	is_int(next_skipping_rescans(), NONE, "still within --restart-grace");
	T += S;
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "no restart within --restart-grace: done");
	ok(d.apps[0].gave_up, "gave up on the restart");
	ok(logged("did not come back"), "the log says so");

	setup(POLICY_ON_FAILURE, 0, 1);
	decide_app_seen(&d, 3, "job", T);
	decide_app_exited(&d, 3, T);
	decide_app_status(&d, 3, DECIDE_CODE_UNKNOWN, T);
	is_int(next_skipping_rescans(), NONE, "unknown exit code: waits for a restart too");
	decide_terminate(&d, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "pod deleted: no restart will come");

	setup(POLICY_ON_FAILURE, 0, 1);
	decide_app_seen(&d, 3, "a", T);
	decide_app_seen(&d, 4, "b", T);
	decide_app_exited(&d, 3, T);
	decide_app_status(&d, 3, 0, T);
	decide_app_seen(&d, 5, "a", T);
	ok(!d.apps[0].superseded, "a succeeded app is not replaced by a new one of the same name");

	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(&d, 3, "job", T);
	decide_app_exited(&d, 3, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "Never: the exit code does not matter");
}

static void terminate(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(&d, 3, "job", T);
	decide_terminate(&d, T);
	is_int(next(), NONE, "SIGTERM: the sidecars stay while the app runs");
	is_int(decide_deadline(&d, T), T + 25 * S, "for at most --term-grace");
	T += 3 * S;
	decide_app_exited(&d, 3, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "app exited within the grace: done");
	is_str(last.reason, "apps-done", "reason apps-done");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(&d, 3, "job", T);
	decide_terminate(&d, T);
	T += 25 * S;
	is_int(next(), DECIDE_APPS_DONE, "grace over: drain anyway");
	is_str(last.reason, "term-grace", "reason term-grace");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(&d, 3, "job", T);
	decide_terminate(&d, T);
	decide_terminate(&d, T + S);
	T += S;
	is_int(next(), DECIDE_APPS_DONE, "a second signal drains at once");
	is_str(last.reason, "second-signal", "reason second-signal");
	decide_terminate(&d, T);
	ok(logged("already draining"), "a signal while draining is only logged");
}

static void drain_file(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(&d, 3, "job", T);
	decide_drain_now(&d, "drain-file", T);
	is_int(next(), DECIDE_APPS_DONE, "drain requested: no confirming rescan needed");
	is_str(last.reason, "drain-file", "reason drain-file");
}

static void startup_timeout(void)
{
	setup(POLICY_NEVER, 0, 1);
	is_int(decide_deadline(&d, T), T + 100 * MS, "quick rescans first");
	T += 600 * S;
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "no app within --startup-timeout: drain");
	is_str(last.reason, "startup-timeout", "reason startup-timeout");
	ok(logged("no app container appeared"), "the log says why");
	drain_quickly();
}

static void escalation(void)
{
	setup(POLICY_NEVER, 1, 2);
	decide_drain_now(&d, "test", T);
	is_int(next(), DECIDE_APPS_DONE, "draining");
	is_int(next(), DECIDE_WATCH, "watch");
	is_int(last.sidecar, 1, "the last --sidecar is stopped first");
	is_int(next(), DECIDE_SIGNAL, "stop request");
	is_int(last.signo, SIGINT, "its own stop signal, SIGINT");
	decide_signal_result(&d, 1, 0, T);
	T += 20 * S - 1;
	is_int(next(), NONE, "not yet at --stop-timeout");
	T += 1;
	is_int(next(), DECIDE_SIGNAL, "--stop-timeout passed: escalate");
	is_int(last.signo, SIGTERM, "SIGTERM");
	decide_signal_result(&d, 1, 0, T);
	is_int(decide_deadline(&d, T), T + 5 * S, "then --kill-after");
	T += 5 * S;
	is_int(next(), DECIDE_SIGNAL, "--kill-after passed");
	is_int(last.signo, SIGKILL, "SIGKILL");
	T += MS;
	decide_sidecar_gone(&d, 1, T);
	is_str(decide_outcome(&d.sidecars[1]), "killed", "outcome killed");
	is_int(next(), DECIDE_WATCH, "then the first sidecar");
	is_int(last.sidecar, 0, "sidecar 0");
	is_int(next(), DECIDE_SIGNAL, "its stop request");
	is_int(last.signo, SIGTERM, "SIGTERM is its stop signal");
	T += 20 * S;
	is_int(next(), NONE, "no second SIGTERM after --stop-timeout");
	ok(logged("SIGKILL in 5s"), "the log says SIGKILL follows");
	is_int(decide_deadline(&d, T), T + 5 * S, "SIGKILL after --kill-after");
	T += 5 * S;
	is_int(next(), DECIDE_SIGNAL, "SIGKILL");
	is_int(last.signo, SIGKILL, "SIGKILL for the SIGTERM sidecar");
	T += 5 * S - 1;
	is_int(next(), NONE, "SIGKILL gets --kill-after to work");
	T += 1;
	is_int(next(), DECIDE_EXIT, "still there --kill-after after SIGKILL: give up");
	is_int(last.exit_code, 1, "exit 1: a sidecar could not be stopped");
	is_str(decide_outcome(&d.sidecars[0]), "still-running", "outcome still-running");
	ok(logged("still running after SIGKILL"), "the log says so");
}

static void terminated_by_sigterm(void)
{
	setup(POLICY_NEVER, 1, 2);
	decide_drain_now(&d, "test", T);
	next();
	next();
	next();
	T += 20 * S;
	is_int(next(), DECIDE_SIGNAL, "escalated to SIGTERM");
	T += MS;
	decide_sidecar_gone(&d, 1, T);
	is_str(decide_outcome(&d.sidecars[1]), "terminated", "outcome terminated");
}

static void eperm(void)
{
	setup(POLICY_NEVER, 1, 2);
	decide_drain_now(&d, "test", T);
	next();
	is_int(next(), DECIDE_WATCH, "watch logs");
	is_int(next(), DECIDE_SIGNAL, "signal logs");
	decide_signal_result(&d, 1, -EPERM, T);
	ok(logged("run rearguard with the sidecar's uid") && logged("KILL capability"), "EPERM names the fix");
	is_str(decide_outcome(&d.sidecars[1]), "not-permitted", "outcome not-permitted");
	decide_sidecar_gone(&d, 1, T);
	is_str(decide_outcome(&d.sidecars[1]), "not-permitted", "a failed sidecar stays failed");
	is_int(next(), DECIDE_WATCH, "the next sidecar is still stopped");
	is_int(last.sidecar, 0, "sidecar 0");
	is_int(next(), DECIDE_SIGNAL, "its stop");
	decide_signal_result(&d, 0, -ESRCH, T);
	decide_sidecar_gone(&d, 0, T);
	is_int(next(), DECIDE_EXIT, "exit");
	is_int(last.exit_code, 1, "exit 1 after EPERM");
}

static void not_found(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_drain_now(&d, "test", T);
	next();
	is_int(next(), DECIDE_WATCH, "watch");
	decide_sidecar_gone(&d, 0, T); /* nothing to watch */
	is_int(next(), DECIDE_EXIT, "nothing to stop: exit");
	is_int(last.exit_code, 0, "exit 0");
	is_str(decide_outcome(&d.sidecars[0]), "not-found", "never seen: not-found");

	setup(POLICY_NEVER, 1, 1);
	decide_sidecar_seen(&d, 0);
	decide_drain_now(&d, "test", T);
	next();
	next();
	decide_sidecar_gone(&d, 0, T);
	is_int(next(), DECIDE_EXIT, "exit");
	is_str(decide_outcome(&d.sidecars[0]), "exited-before-stop", "seen, then gone: exited-before-stop");
}

static void exit_waits_for_codes(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(&d, 3, "job", T);
	decide_app_exited(&d, 3, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "Never: done without the exit code");
	is_int(next(), DECIDE_WATCH, "watch");
	is_int(next(), DECIDE_SIGNAL, "stop");
	decide_sidecar_gone(&d, 0, T);
	is_int(next(), NONE, "the exit waits for the app's exit code");
	is_int(decide_deadline(&d, T), T + 3 * S, "for at most 3s");
	T += MS;
	decide_app_status(&d, 3, 0, T);
	is_int(next(), DECIDE_EXIT, "exit once the code is known");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(&d, 3, "job", T);
	decide_app_exited(&d, 3, T);
	next_skipping_rescans();
	next();
	next();
	decide_sidecar_gone(&d, 0, T);
	is_int(next(), NONE, "waiting for the code");
	T += 3 * S;
	is_int(next(), DECIDE_EXIT, "the code never came: exit anyway");
}

static void misc(void)
{
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(&d, 3, "a", T);
	decide_app_seen(&d, 3, "a", T);
	is_int(decide_app_count(&d), 1, "an app is counted once");
	decide_app_seen(&d, 4, "b", T);
	decide_app_forget(&d, 3);
	is_int(decide_app_count(&d), 1, "forget removes an app");
	is_int(d.apps[0].id, 4, "the other one stays");
	decide_pending(&d, 1);
	is_int(decide_deadline(&d, T), T + 20 * MS, "a container before its exec: rescans every 20ms");
	decide_pending(&d, 0);
	decide_app_exited(&d, 4, T);
	decide_app_exited(&d, 99, T);
	decide_app_status(&d, 99, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "unknown ids are ignored");
	decide_app_seen(&d, 7, "late", T);
	is_int(decide_app_count(&d), 1, "apps appearing during the drain are ignored");
}

static void reports(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(&d, 3, "job", T);
	decide_app_report(&d, "job", 0, T);
	ok(!d.apps[0].exited, "a report is not applied before the rescan");
	is_int(decide_deadline(&d, T), T, "the rescan is due at once");
	is_int(next(), DECIDE_RESCAN, "a rescan first: the reporting container may be new");
	decide_rescanned(&d, T);
	ok(d.apps[0].exited, "then the app is finished");
	is_int(d.apps[0].code, 0, "with the reported code");
	is_str(d.apps[0].report, "job", "matched by the container's name");
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "done although its process was never seen to exit");

	/* A shell that reports for its job and keeps a helper running. */
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(&d, 3, "sh", T);
	report("job", 0);
	is_str(d.apps[0].report, "job", "the only app container takes the report");
	ok(logged("running=yes"), "the log says its process still runs");
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "done while its root still runs");
	is_int(decide_app_count(&d), 1, "no second app for the report");

	/* The report comes before the scan that finds its container. */
	setup(POLICY_NEVER, 1, 1);
	decide_app_report(&d, "job", 0, T);
	is_int(next(), DECIDE_RESCAN, "rescan");
	decide_app_seen(&d, 4, "job", T); /* what the rescan found */
	decide_rescanned(&d, T);
	is_int(decide_app_count(&d), 1, "the report went to the container found by the rescan");
	is_int(d.apps[0].id, 4, "container 4");

	/* No container at all: an app known from its file (it came and went before the agent). */
	setup(POLICY_NEVER, 1, 1);
	report("job", 0);
	is_int(decide_app_count(&d), 1, "an app known only from its report");
	is_int(d.apps[0].id, 0, "without a container");
	ok(logged("matches no app container"), "the log says so");
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "it counts for --apps 1: done");
	is_str(last.reason, "apps-done", "reason apps-done, long before --startup-timeout");

	/* Two running containers, neither of that name: the report cannot pick one. */
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(&d, 3, "a", T);
	decide_app_seen(&d, 4, "b", T);
	report("job", 0);
	is_int(decide_app_count(&d), 3, "a third app, known from its report");
	ok(!d.apps[0].exited && !d.apps[1].exited, "the containers still run");
	is_int(next_skipping_rescans(), NONE, "not done while they run");

	/* A name reported before keeps going to the same container. */
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(&d, 3, "sh", T);
	report("job", 3);
	decide_app_seen(&d, 4, "py", T);
	report("job", 4);
	is_int(decide_app_count(&d), 2, "no app made up for the second report");
	is_int(d.apps[0].reported, 4, "it updated the first container's report");

	/* Apps under rearguard run: same process name, told apart by the name they report as. */
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(&d, 3, "rearguard", T);
	decide_app_reports_as(&d, 3, "a");
	decide_app_seen(&d, 4, "rearguard", T);
	decide_app_reports_as(&d, 4, "b");
	report("b", 0);
	is_int(decide_app_count(&d), 2, "the report went to a container");
	ok(d.apps[1].exited && !d.apps[0].exited, "to the one that reports as b");

	/* The same report read twice (a re-read after an overflow) says nothing new. */
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(&d, 3, "job", T);
	report("job", 0);
	report("job", 0);
	is_int(log_count("app reported that it finished"), 1, "logged once");

	/* While draining nothing rescans: the report completes the summary at once. */
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(&d, 3, "job", T);
	decide_drain_now(&d, "drain-file", T);
	is_int(next(), DECIDE_APPS_DONE, "draining");
	decide_app_report(&d, "job", 5, T);
	is_int(d.apps[0].reported, 5, "matched at once");
	is_int(next(), DECIDE_WATCH, "the drain goes on");
	drain_quickly();
	decide_app_report(&d, "job", 6, T);
	is_int(d.apps[0].reported, 5, "ignored after the exit");
}

static void reports_and_kernel(void)
{
	/* OnFailure: a reported failure keeps the sidecars for the restart. */
	setup(POLICY_ON_FAILURE, 1, 1);
	decide_app_seen(&d, 3, "job", T);
	report("job", 2);
	is_int(next_skipping_rescans(), NONE, "a reported failure: not done");
	ok(logged("keeping the sidecars for its restart"), "the log says why");
	T += S;
	decide_app_exited(&d, 3, T);
	decide_app_status(&d, 3, DECIDE_CODE_UNKNOWN, T);
	is_int(d.apps[0].code, 2, "an unknown kernel code keeps the reported one");
	is_int(log_count("keeping the sidecars"), 1, "the wait is explained once");
	T += 10 * S;
	decide_app_seen(&d, 5, "job", T);
	ok(d.apps[0].superseded, "the restarted container replaces it");
	report("job", 0);
	is_str(d.apps[1].report, "job", "the new report goes to the new container");
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "the restart succeeded: done");

	/* OnFailure, exit codes from files only: a reported 0 is done at once. */
	setup(POLICY_ON_FAILURE, 1, 1);
	decide_app_seen(&d, 3, "rearguard", T);
	report("job", 0);
	decide_app_exited(&d, 3, T);
	decide_app_status(&d, 3, DECIDE_CODE_UNKNOWN, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "reported 0, kernel silent: done, no --restart-grace");

	/* The kernel's code wins over a report, and the difference is logged. */
	setup(POLICY_ON_FAILURE, 1, 1);
	decide_app_seen(&d, 3, "sh", T);
	report("job", 3);
	is_int(next_skipping_rescans(), NONE, "reported 3: the restart is awaited");
	decide_app_exited(&d, 3, T);
	decide_app_status(&d, 3, 0, T);
	ok(logged("the app's report and its container's exit code differ"), "the difference is logged");
	ok(logged("reported=3 exit_code=0"), "with both codes");
	is_int(d.apps[0].code, 0, "the container's code counts (the kubelet will not restart it)");
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "done");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(&d, 3, "job", T);
	decide_app_exited(&d, 3, T);
	decide_app_status(&d, 3, 1, T);
	report("job", 0);
	ok(logged("reported=0 exit_code=1"), "a report after the kernel's code is compared too");
	is_int(d.apps[0].code, 1, "the kernel's code stays");
	is_int(d.apps[0].reported, 0, "the report is kept for the summary");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(&d, 3, "job", T);
	report("job", 7);
	decide_app_exited(&d, 3, T);
	decide_app_status(&d, 3, 7, T);
	ok(!logged("differ"), "agreeing codes are not a warning");
}

int main(void)
{
	log_file = tmpfile();
	log_setup(LOG_DEBUG, LOG_TEXT, fileno(log_file));
	one_app_never();
	apps_expected();
	two_apps();
	confirm_finds_new_app();
	on_failure();
	terminate();
	drain_file();
	startup_timeout();
	escalation();
	terminated_by_sigterm();
	eperm();
	not_found();
	exit_waits_for_codes();
	misc();
	reports();
	reports_and_kernel();
	decide_free(&d);
	return done_testing();
}
