/*
 * decide's apps: their containers, their reports and exit codes, their
 * restarts under OnFailure, and what happens without memory for one
 * (decide-apps.c), through the harness of decide-harness.h.
 */
#include "config.h"

#include "decide-harness.h"

static void on_failure(void)
{
	setup(POLICY_ON_FAILURE, 1, 1);
	decide_app_seen(d, 3, "job", T);
	T += S;
	decide_app_exited(d, 3, T);
	is_int(next_skipping_rescans(), NONE, "OnFailure: exit code pending, not done");
	decide_app_status(d, 3, 1, T);
	is_int(next_skipping_rescans(), NONE, "OnFailure: failed app keeps its sidecars");
	ok(noted(NOTE_RESTART_WAIT) && note(NOTE_RESTART_WAIT)->code == 1, "a note explains the wait");
	is_int(decide_deadline(d, T), T + 100 * MS, "rescans to see the restart, quickly: it may live 200 ms");
	T += 10 * S;
	decide_app_seen(d, 5, "job", T);
	ok((app(0).state == DECIDE_APP_RESTARTED), "the new container of the same name replaces the failed one");
	is_int(next_skipping_rescans(), NONE, "restarted app running");
	is_int(decide_deadline(d, T), INT64_MAX, "--apps 1 running again: no timer");
	T += S;
	decide_app_exited(d, 5, T);
	decide_app_status(d, 5, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "succeeded on the second attempt: done");

	setup(POLICY_ON_FAILURE, 0, 1);
	decide_app_seen(d, 3, "job", T);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 2, T);
	is_int(next_skipping_rescans(), NONE, "failed, awaiting restart");
	is_int(decide_deadline(d, T), T + 100 * MS, "next rescan first");
	T += 299 * S;
	is_int(next_skipping_rescans(), NONE, "still within --restart-grace");
	T += S;
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "no restart within --restart-grace: done");
	ok(app(0).gave_up, "gave up on the restart");
	is_int(noted(NOTE_RESTART_GIVEN_UP), 1, "a note says so");

	setup(POLICY_ON_FAILURE, 0, 1);
	decide_app_seen(d, 3, "job", T);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, DECIDE_CODE_UNKNOWN, T);
	is_int(next_skipping_rescans(), NONE, "unknown exit code: waits for a restart too");
	decide_terminate(d, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "pod deleted: no restart will come");

	setup(POLICY_ON_FAILURE, 0, 1);
	decide_app_seen(d, 3, "a", T);
	decide_app_seen(d, 4, "b", T);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	decide_app_seen(d, 5, "a", T);
	ok(!(app(0).state == DECIDE_APP_RESTARTED), "a succeeded app is not replaced by a new one of the same name");

	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(d, 3, "job", T);
	decide_app_exited(d, 3, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "Never: the exit code does not matter");
}

/*
 * OnFailure behind an entrypoint that execs: the failed attempt was last
 * seen under the program's name, its restart first shows the script's.
 */
static void restart_renamed(void)
{
	setup(POLICY_ON_FAILURE, 0, 1);
	decide_app_seen(d, 3, "bash", T);
	decide_app_renamed(d, 3, "sh");
	T += S;
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 1, T);
	T += S;
	decide_app_seen(d, 4, "bash", T);
	ok(!noted(NOTE_APP_RESTARTED), "the restart still shows the script's name: not matched yet");
	is_int(next_skipping_rescans(), NONE, "the failed attempt is still awaited");
	decide_app_renamed(d, 4, "sh");
	ok(noted(NOTE_APP_RESTARTED) && note(NOTE_APP_RESTARTED)->container == 4 &&
		   note(NOTE_APP_RESTARTED)->other == 3,
	   "matched once its main process carries the program's name");
	ok(app(0).state == DECIDE_APP_RESTARTED, "the failed attempt is replaced");
	T += S;
	decide_app_exited(d, 4, T);
	decide_app_status(d, 4, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE,
	       "its success ends the wait at once, not --restart-grace later");

	/* An app seen before the failure is another app, whatever it execs later. */
	setup(POLICY_ON_FAILURE, 0, 1);
	decide_app_seen(d, 3, "sh", T);
	decide_app_seen(d, 4, "bash", T);
	T += S;
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 1, T);
	decide_app_renamed(d, 4, "sh");
	ok(app(0).state != DECIDE_APP_RESTARTED && !noted(NOTE_APP_RESTARTED),
	   "a container seen before the failure is no restart of it");

	/* One restart replaces one failed attempt. */
	setup(POLICY_ON_FAILURE, 0, 1);
	decide_app_seen(d, 3, "bash", T);
	decide_app_seen(d, 4, "sh", T);
	T += S;
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 1, T);
	decide_app_exited(d, 4, T);
	decide_app_status(d, 4, 1, T);
	T += S;
	decide_app_seen(d, 5, "bash", T);
	decide_app_renamed(d, 5, "sh");
	ok(app(0).state == DECIDE_APP_RESTARTED && app(1).state != DECIDE_APP_RESTARTED,
	   "a restart matched at sight is not matched again on exec");

	/* Two containers run the same program: the second is no restart of the first while its code is not known. */
	setup(POLICY_ON_FAILURE, 2, 1);
	decide_app_seen(d, 3, "job", T);
	T += S;
	decide_app_exited(d, 3, T);
	T += 10 * MS;
	decide_app_seen(d, 4, "job", T);
	ok(app(0).state != DECIDE_APP_RESTARTED && !noted(NOTE_APP_RESTARTED),
	   "a container seen while the code is unpublished replaces nothing");
	decide_app_status(d, 3, 0, T);
	is_int(next_skipping_rescans(), NONE, "the first succeeded; the second runs");
	decide_app_exited(d, 4, T);
	decide_app_status(d, 4, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "both over: done, not one of two seen");

	/* Under Never nothing is restarted: a rename replaces nothing. */
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(d, 3, "sh", T);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 1, T);
	T += S;
	decide_app_seen(d, 4, "bash", T);
	decide_app_renamed(d, 4, "sh");
	ok(app(0).state != DECIDE_APP_RESTARTED, "Never: no restart");
}

/*
 * OnFailure on a loaded kubelet: the second attempt exits before a rescan
 * sees its program, so it bears its runtime's name; the third is the
 * program again. Each replaces the one before.
 */
static void restart_unnamed(void)
{
	setup(POLICY_ON_FAILURE, 1, 1);
	decide_app_seen(d, 4, "sh", T);
	T += S;
	decide_app_exited(d, 4, T);
	decide_app_status(d, 4, 1, T);
	T += S;
	decide_app_seen(d, 5, "runc:[2:INIT]", T);
	ok(app(0).state == DECIDE_APP_RESTARTED, "an attempt whose program was not seen replaces the failed one");
	decide_app_exited(d, 5, T);
	decide_app_status(d, 5, 1, T);
	is_int(next_skipping_rescans(), NONE, "it failed too: awaiting its restart");
	T += 10 * S;
	decide_app_seen(d, 6, "sh", T);
	ok(app(1).state == DECIDE_APP_RESTARTED, "the program's third attempt replaces the unnamed second");
	T += S;
	decide_app_exited(d, 6, T);
	decide_app_status(d, 6, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "succeeded on the third attempt: done at once");

	/* Two apps: a name that matches wins over the unnamed failure. */
	setup(POLICY_ON_FAILURE, 2, 1);
	decide_app_seen(d, 3, "a", T);
	decide_app_seen(d, 4, "b", T);
	T += S;
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 1, T);
	T += S;
	decide_app_seen(d, 5, "runc:[2:INIT]", T);
	decide_app_exited(d, 5, T);
	decide_app_status(d, 5, 1, T);
	decide_app_exited(d, 4, T);
	decide_app_status(d, 4, 1, T);
	T += S;
	decide_app_seen(d, 6, "b", T);
	ok(app(1).state == DECIDE_APP_RESTARTED && app(2).state != DECIDE_APP_RESTARTED,
	   "b's restart replaces b, not the unnamed attempt");
	decide_app_seen(d, 7, "a", T);
	ok(app(2).state == DECIDE_APP_RESTARTED, "a's next attempt replaces the unnamed one, a's own restart");
}

static void misc(void)
{
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(d, 3, "a", T);
	decide_app_seen(d, 3, "a", T);
	is_int(decide_app_count(d), 1, "an app is counted once");
	decide_app_seen(d, 4, "b", T);
	decide_app_forget(d, 3);
	is_int(decide_app_count(d), 1, "forget removes an app");
	is_int(app(0).id, 4, "the other one stays");
	decide_pending(d, 1);
	is_int(decide_deadline(d, T), T + 20 * MS, "a container before its exec: rescans every 20ms");
	decide_pending(d, 0);
	decide_app_exited(d, 4, T);
	decide_app_exited(d, 99, T);
	decide_app_status(d, 99, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "unknown ids are ignored");
	decide_app_seen(d, 7, "late", T);
	is_int(decide_app_count(d), 1, "apps appearing during the drain are ignored");
}

static void reports(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_app_report(d, "job", 0, T);
	ok(!exited(0), "a report is not applied before the rescan");
	is_int(decide_deadline(d, T), T, "the rescan is due at once");
	is_int(next(), DECIDE_RESCAN, "a rescan first: the reporting container may be new");
	decide_rescanned(d, 0, T);
	ok(exited(0), "then the app is finished");
	is_int(app(0).code, 0, "with the reported code");
	is_str(app(0).report, "job", "matched by the container's name");
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "done although its process was never seen to exit");

	/* A shell that reports for its job and keeps a helper running. */
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(d, 3, "sh", T);
	report("job", 0);
	is_str(app(0).report, "job", "the only app container takes the report");
	ok(noted(NOTE_REPORTED) && note(NOTE_REPORTED)->flag, "the note says its process still runs");
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "done while its root still runs");
	is_int(decide_app_count(d), 1, "no second app for the report");

	/* The report comes before the scan that finds its container. */
	setup(POLICY_NEVER, 1, 1);
	decide_app_report(d, "job", 0, T);
	is_int(next(), DECIDE_RESCAN, "rescan");
	decide_app_seen(d, 4, "job", T); /* what the rescan found */
	decide_rescanned(d, 0, T);
	is_int(decide_app_count(d), 1, "the report went to the container found by the rescan");
	is_int(app(0).id, 4, "container 4");

	/* No container at all: an app known from its file (it came and went before the agent). */
	setup(POLICY_NEVER, 1, 1);
	report("job", 0);
	is_int(decide_app_count(d), 1, "an app known only from its report");
	is_int(app(0).id, 0, "without a container");
	is_str(note(NOTE_REPORT_ALONE)->report, "job", "a note says so");
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "it counts for --apps 1: done");
	is_str(decide_reason_word(last.reason), "apps-done", "reason apps-done, long before --startup-timeout");

	/* Two running containers, neither of that name: the report cannot pick one. */
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(d, 3, "a", T);
	decide_app_seen(d, 4, "b", T);
	report("job", 0);
	is_int(decide_app_count(d), 3, "a third app, known from its report");
	ok(!exited(0) && !exited(1), "the containers still run");
	is_int(next_skipping_rescans(), NONE, "not done while they run");

	/* A name reported before keeps going to the same container. */
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(d, 3, "sh", T);
	report("job", 3);
	decide_app_seen(d, 4, "py", T);
	report("job", 4);
	is_int(decide_app_count(d), 2, "no app made up for the second report");
	is_int(app(0).reported, 4, "it updated the first container's report");

	/* Apps under rearguard run: same process name, told apart by the name they report as. */
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(d, 3, "rearguard", T);
	decide_app_reports_as(d, 3, "a");
	decide_app_seen(d, 4, "rearguard", T);
	decide_app_reports_as(d, 4, "b");
	report("b", 0);
	is_int(decide_app_count(d), 2, "the report went to a container");
	ok(exited(1) && !exited(0), "to the one that reports as b");

	/* The same report read twice (a re-read after an overflow) says nothing new. */
	setup(POLICY_NEVER, 0, 1);
	decide_app_seen(d, 3, "job", T);
	report("job", 0);
	report("job", 0);
	is_int(noted(NOTE_REPORTED), 1, "noted once");

	/* While draining nothing rescans: the report completes the summary at once. */
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_drain_now(d, REASON_DRAIN_FILE, T);
	is_int(next(), DECIDE_APPS_DONE, "draining");
	decide_app_report(d, "job", 5, T);
	is_int(app(0).reported, 5, "matched at once");
	is_int(next(), DECIDE_WATCH, "the drain goes on");
	drain_quickly();
	decide_app_report(d, "job", 6, T);
	is_int(app(0).reported, 5, "ignored after the exit");
}

static void reports_and_kernel(void)
{
	/* OnFailure: a reported failure keeps the sidecars for the restart. */
	setup(POLICY_ON_FAILURE, 1, 1);
	decide_app_seen(d, 3, "job", T);
	report("job", 2);
	is_int(next_skipping_rescans(), NONE, "a reported failure: not done");
	ok(noted(NOTE_RESTART_WAIT) && note(NOTE_RESTART_WAIT)->code == 2, "a note says why");
	T += S;
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, DECIDE_CODE_UNKNOWN, T);
	is_int(app(0).code, 2, "an unknown kernel code keeps the reported one");
	is_int(noted(NOTE_RESTART_WAIT), 1, "the wait is explained once");
	T += 10 * S;
	decide_app_seen(d, 5, "job", T);
	ok((app(0).state == DECIDE_APP_RESTARTED), "the restarted container replaces it");
	report("job", 0);
	is_str(app(1).report, "job", "the new report goes to the new container");
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "the restart succeeded: done");

	/* OnFailure, exit codes from files only: a reported 0 is done at once. */
	setup(POLICY_ON_FAILURE, 1, 1);
	decide_app_seen(d, 3, "rearguard", T);
	report("job", 0);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, DECIDE_CODE_UNKNOWN, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "reported 0, kernel silent: done, no --restart-grace");

	/* The kernel's code wins over a report, and the difference is logged. */
	setup(POLICY_ON_FAILURE, 1, 1);
	decide_app_seen(d, 3, "sh", T);
	report("job", 3);
	is_int(next_skipping_rescans(), NONE, "reported 3: the restart is awaited");
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	is_int(noted(NOTE_CODES_DIFFER), 1, "the difference is noted");
	ok(note(NOTE_CODES_DIFFER)->reported == 3 && note(NOTE_CODES_DIFFER)->code == 0, "with both codes");
	is_int(app(0).code, 0, "the container's code counts (the kubelet will not restart it)");
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "done");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 1, T);
	report("job", 0);
	ok(noted(NOTE_CODES_DIFFER) && note(NOTE_CODES_DIFFER)->reported == 0 && note(NOTE_CODES_DIFFER)->code == 1,
	   "a report after the kernel's code is compared too");
	is_int(app(0).code, 1, "the kernel's code stays");
	is_int(app(0).reported, 0, "the report is kept for the summary");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	report("job", 7);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 7, T);
	ok(!noted(NOTE_CODES_DIFFER), "agreeing codes are not a warning");

	/*
	 * A report long before the root's exit (a wrapper that reports, then
	 * takes its time to exit): the kernel is still asked, for 2 s from the
	 * root's exit, and its code counts.
	 */
	setup(POLICY_NEVER, 2, 1);
	decide_app_seen(d, 3, "job", T);
	decide_app_seen(d, 4, "other", T);
	T += S;
	report("job", 0);
	T += 3 * S;
	decide_app_exited(d, 3, T);
	is_int(next(), DECIDE_STATUS, "the root exits 3 s after the report: the kernel is asked");
	ok(!noted(NOTE_CODE_UNPUBLISHED), "not given up at once");
	T += S;
	is_int(next(), DECIDE_STATUS, "still asked 1 s after the root's exit");
	decide_app_status(d, 3, 1, T);
	is_int(app(0).code, 1, "the kernel's code counts");
	ok(noted(NOTE_CODES_DIFFER) && note(NOTE_CODES_DIFFER)->reported == 0 && note(NOTE_CODES_DIFFER)->code == 1,
	   "and differs from the report");
}

static void statuses(void)
{
	static const int64_t gaps[] = { 1, 2, 4, 8, 16, 32, 64, 128, 128 };
	size_t i;

	setup(POLICY_ON_FAILURE, 1, 1);
	decide_app_seen(d, 3, "job", T);
	T += S;
	decide_app_exited(d, 3, T);
	is_int(next(), DECIDE_STATUS, "the kernel is asked for the code at once");
	for (i = 0; i < ARRAY_SIZE(gaps); i++) {
		is_int(decide_deadline(d, T), T + gaps[i] * MS, "then again after %lldms", (long long)gaps[i]);
		T += gaps[i] * MS;
		is_int(next(), DECIDE_STATUS, "asked again");
	}
	T = app(0).exited_us + 2 * S;
	is_int(next_skipping_rescans(), NONE, "2s after the exit: unknown, and under OnFailure a restart is awaited");
	is_int(app(0).code, DECIDE_CODE_UNKNOWN, "unknown");
	ok(noted(NOTE_RESTART_WAIT) && note(NOTE_RESTART_WAIT)->code == DECIDE_CODE_UNKNOWN, "the wait is explained");

	/* Never: the code does not hold up the decision. */
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_app_exited(d, 3, T);
	is_int(next(), DECIDE_APPS_DONE, "the drain before the exit code");
	is_int(next(), DECIDE_WATCH, "the stop's steps first");
	is_int(next(), DECIDE_SIGNAL, "the signal");
	is_int(next(), DECIDE_STATUS, "then the exit code");
}

/* Out of memory for a new app: it may still run, so the apps are not done without it. */
static void lost_app(void)
{
	setup(POLICY_NEVER, 0, 1);
	realloc_fails = true;
	decide_app_seen(d, 3, "a", T);
	realloc_fails = false;
	is_int(decide_app_count(d), 0, "no memory: the app is not tracked");
	is_int(noted(NOTE_APP_NOT_TRACKED), 1, "which is noted");
	is_str(note(NOTE_APP_NOT_TRACKED)->app, "a", "naming it");
	decide_app_seen(d, 4, "b", T);
	T += S;
	decide_app_exited(d, 4, T);
	decide_app_status(d, 4, 0, T);
	is_int(next_skipping_rescans(), NONE, "the other app is done, but the lost one may run: no drain");
	T += 60 * S;
	is_int(next_skipping_rescans(), NONE, "not later either");
	decide_drain_now(d, REASON_DRAIN_FILE, T);
	is_int(next(), DECIDE_APPS_DONE, "a drain file still drains");

	/* A report without memory for it is not taken for the app's end either. */
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	realloc_fails = true;
	decide_app_report(d, "job", 0, T);
	realloc_fails = false;
	is_int(noted(NOTE_REPORT_NOT_TRACKED), 1, "the report is noted as lost");
	is_int(next_skipping_rescans(), NONE, "and the app still runs as far as decide knows");
}

int main(void)
{
	on_failure();
	restart_renamed();
	restart_unnamed();
	misc();
	reports();
	reports_and_kernel();
	statuses();
	lost_app();
	return finish();
}
