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
/* A sidecar seen this long before its stop has had time to install its handlers: signalled at once. */
#define LONG_AGO (10 * S)

/*
 * Every realloc of the code under test comes through here (the program is
 * linked with -Wl,--wrap=realloc): it fails on demand, as without memory.
 */
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
static bool realloc_fails;

void *__wrap_realloc(void *p, size_t n)
{
	return realloc_fails ? NULL : __real_realloc(p, n);
}

static struct decide *d;
static struct decide_config cfg;
static int64_t T;
static struct decide_sidecar_config sidecars[] = {
	{ .name = "proxy", .stop_signal = SIGTERM },
	{ .name = "logs", .stop_signal = SIGINT },
};
/* Stopped over HTTP: a mesh proxy, and a database proxy with a drain step. */
static struct decide_sidecar_config http_sidecars[] = {
	{ .name = "mesh", .ready_url = "http://127.0.0.1:15021/healthz/ready",
	  .stop_url = "http://127.0.0.1:15020/quitquitquit" },
	{ .name = "db", .ready_url = "http://127.0.0.1:9090/startup", .drain_url = "http://127.0.0.1:9091/drain",
	  .drain_time_us = 2 * US_PER_S, .stop_url = "http://127.0.0.1:9091/quitquitquit" },
	{ .name = "logs", .stop_signal = SIGTERM },
};
static struct decide_action last;

/* ---- what decide says: its notes, kept with copies of their strings ---- */

#define NOTES_MAX 4096
#define TEXT_MAX 160

static struct kept {
	struct decide_note n;
	char sidecar[TEXT_MAX], app[TEXT_MAX], report[TEXT_MAX], reason[TEXT_MAX], text[TEXT_MAX];
} notes[NOTES_MAX];
static size_t nnotes;

static const char *keep_str(char *buf, const char *s)
{
	if (!s)
		return NULL;
	snprintf(buf, TEXT_MAX, "%s", s);
	return buf;
}

/* decide's sink: every note, in order. */
static void sink(void *data, const struct decide_note *n)
{
	struct kept *k;

	if (nnotes == NOTES_MAX)
		bail_out("too many notes");
	k = &notes[nnotes++];
	k->n = *n;
	k->n.sidecar = keep_str(k->sidecar, n->sidecar);
	k->n.app = keep_str(k->app, n->app);
	k->n.report = keep_str(k->report, n->report);
	k->n.reason = keep_str(k->reason, n->reason);
	k->n.text = keep_str(k->text, n->text);
}

/* The n-th note of kind (from 0); a zeroed one when there are fewer. */
static const struct decide_note *notes_of(enum decide_note_kind kind, int n)
{
	static struct decide_note none;
	size_t i;

	for (i = 0; i < nnotes; i++)
		if (notes[i].n.kind == kind && n-- == 0)
			return &notes[i].n;
	memset(&none, 0, sizeof(none));
	return &none;
}

/* How many notes of kind decide gave since the set-up. */
static int noted(enum decide_note_kind kind)
{
	int c = 0;
	size_t i;

	for (i = 0; i < nnotes; i++)
		c += notes[i].n.kind == kind;
	return c;
}

/* The last note of kind; one of all zeroes (kind 0 aside) when there is none. */
static const struct decide_note *note(enum decide_note_kind kind)
{
	static struct decide_note none;
	size_t i;

	for (i = nnotes; i-- > 0;)
		if (notes[i].n.kind == kind)
			return &notes[i].n;
	memset(&none, 0, sizeof(none));
	none.k = (size_t)-1;
	return &none;
}

/* Whether a note of kind was about the sidecar named name. */
static bool noted_for(enum decide_note_kind kind, const char *name)
{
	size_t i;

	for (i = 0; i < nnotes; i++)
		if (notes[i].n.kind == kind && notes[i].n.sidecar && strcmp(notes[i].n.sidecar, name) == 0)
			return true;
	return false;
}

/* ---- what decide knows, through its views ---- */

static struct decide_view view(void)
{
	struct decide_view v;

	decide_view(d, &v);
	return v;
}

static struct decide_app_view app(size_t i)
{
	struct decide_app_view v;

	if (i >= decide_app_count(d))
		bail_out("no such app");
	decide_app_view(d, i, &v);
	return v;
}

/* Whether app i exited (or reported that it finished; a restarted one had too). */
static bool exited(size_t i)
{
	return app(i).state != DECIDE_APP_RUNNING;
}

static struct decide_sidecar_view sc(size_t k)
{
	struct decide_sidecar_view v;

	decide_sidecar_view(d, k, &v);
	return v;
}

/* A new decide for cfg, at T. */
static void renew(void)
{
	decide_free(d);
	nnotes = 0;
	if (decide_new(&cfg, T, &d) < 0)
		bail_out("decide_new");
}

static void setup_with(enum restart_policy policy, unsigned apps, const struct decide_sidecar_config *scs,
		       size_t nsidecars, bool readiness)
{
	struct decide_config c = {
		.policy = policy,
		.apps_expected = apps,
		.startup_timeout_us = 600 * S,
		.restart_grace_us = 300 * S,
		.term_grace_us = 25 * S,
		.stop_timeout_us = 20 * S,
		.kill_after_us = 5 * S,
		.readiness = readiness,
		.ready_timeout_us = 300 * S,
		/* The readiness tests have the file protocol; the others leave the files out. */
		.protocol = readiness,
		.nsidecars = nsidecars,
		.sidecars = scs,
		.sink = sink,
	};

	cfg = c;
	T = 1000 * S;
	renew();
}

/* Signal sidecars, readiness off: the agent core's tests. */
static void setup(enum restart_policy policy, unsigned apps, size_t nsidecars)
{
	setup_with(policy, apps, sidecars, nsidecars, false);
}

/*
 * Where decide_next had nothing to do but its deadline had already come:
 * the engine would wake up at once, find nothing, and spin.
 */
static int spins;

static int next(void)
{
	if (decide_next(d, T, &last))
		return (int)last.kind;
	if (decide_deadline(d, T) <= T) {
		if (!spins++)
			printf("# a deadline in the past with nothing to do, at %lld\n", (long long)(T - view().started_us));
	}
	return NONE;
}

/* A report arrives; the agent rescans (finding nothing new) as asked. */
static void report(const char *name, int code)
{
	decide_app_report(d, name, code, T);
	is_int(next(), DECIDE_RESCAN, "report %s=%d: a rescan first", name, code);
	decide_rescanned(d, 0, T);
}

/*
 * Answers rescans with nothing new, and lets exit-code lookups find nothing
 * yet, until another action comes.
 */
static int next_skipping_rescans(void)
{
	int k;

	while ((k = next()) == DECIDE_RESCAN || k == DECIDE_STATUS)
		if (k == DECIDE_RESCAN)
			decide_rescanned(d, 0, T);
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
			decide_signal_result(d, last.sidecar, 0, T);
			T += 2 * MS;
			decide_sidecar_gone(d, last.sidecar, T);
		}
	}
	is_int(k, DECIDE_EXIT, "the drain ends with an exit");
}

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
	is_str(last.reason, "apps-done", "reason apps-done");
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
	is_str(last.reason, "startup-timeout", "reason startup-timeout");
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
	is_str(last.reason, "apps-done", "reason apps-done");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_terminate(d, T);
	T += 25 * S;
	is_int(next(), DECIDE_APPS_DONE, "grace over: drain anyway");
	is_str(last.reason, "term-grace", "reason term-grace");

	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	decide_terminate(d, T);
	decide_terminate(d, T + S);
	T += S;
	is_int(next(), DECIDE_APPS_DONE, "a second signal drains at once");
	is_str(last.reason, "second-signal", "reason second-signal");
	decide_terminate(d, T);
	is_int(noted(NOTE_TERMINATE_DRAINING), 1, "a signal while draining is only noted");
}

static void drain_file(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_app_seen(d, 3, "job", T);
	ok(decide_drain_now(d, "drain-file", T), "a drain request takes effect");
	ok(!decide_drain_now(d, "drain-file", T), "a second one does not");
	is_int(next(), DECIDE_APPS_DONE, "drain requested: no confirming rescan needed");
	is_str(last.reason, "drain-file", "reason drain-file");
	ok(!decide_drain_now(d, "drain-file", T), "nor one while draining");
}

static void startup_timeout(void)
{
	setup(POLICY_NEVER, 0, 1);
	is_int(decide_deadline(d, T), T + 100 * MS, "quick rescans first");
	T += 600 * S;
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "no app within --startup-timeout: drain");
	is_str(last.reason, "startup-timeout", "reason startup-timeout");
	ok(noted(NOTE_DRAIN) && note(NOTE_DRAIN)->count == 0, "the note says none appeared");
	drain_quickly();
}

static void escalation(void)
{
	setup(POLICY_NEVER, 1, 2);
	decide_drain_now(d, "test", T);
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

static void terminated_by_sigterm(void)
{
	setup(POLICY_NEVER, 1, 2);
	decide_drain_now(d, "test", T);
	next();
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
	setup(POLICY_NEVER, 1, 2);
	decide_drain_now(d, "test", T);
	next();
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
	setup(POLICY_NEVER, 1, 1);
	decide_drain_now(d, "test", T);
	next();
	is_int(next(), DECIDE_WATCH, "watch");
	decide_sidecar_gone(d, 0, T); /* nothing to watch */
	is_int(next(), DECIDE_EXIT, "nothing to stop: exit");
	is_int(last.exit_code, 0, "exit 0");
	is_str(sc(0).outcome, "not-found", "never seen: not-found");

	setup(POLICY_NEVER, 1, 1);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_sidecar_exited(d, 0, T);
	decide_sidecar_status(d, 0, 0, T);
	decide_drain_now(d, "test", T);
	next();
	is_int(next(), DECIDE_WATCH, "its container is over: a look for what is left of it first");
	decide_sidecar_gone(d, 0, T);
	is_int(next(), DECIDE_EXIT, "exit");
	is_str(sc(0).outcome, "exited-before-stop", "seen, then gone: exited-before-stop");
}

/* With --sidecar-wait: setup(), then the wait set. */
static void setup_waiting(unsigned apps, size_t nsidecars, int64_t wait_us)
{
	setup(POLICY_NEVER, apps, nsidecars);
	cfg.sidecar_wait_us = wait_us;
	renew();
}

/* The one app exits 0; the rescan before concluding finds nothing new. */
static void app_exits_at_once(void)
{
	decide_app_seen(d, 3, "job", T);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	if (next() == DECIDE_RESCAN)
		decide_rescanned(d, 0, T);
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
	decide_drain_now(d, "drain-file", T);
	is_int(next(), DECIDE_APPS_DONE, "a drain request is not held for a missing sidecar");
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
	is_str(last.reason, "apps-done", "reason apps-done, long before --startup-timeout");

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
	decide_drain_now(d, "drain-file", T);
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

/* ---- HTTP: readiness, stop requests, drain, blind stops ------------------ */

/* Expects a DECIDE_HTTP for purpose next; false (and a failed test) otherwise. */
static bool http_next(enum decide_http_purpose purpose, const char *what)
{
	int k = next();

	is_int(k, DECIDE_HTTP, "%s: an HTTP request", what);
	is_int(last.purpose, purpose, "%s: its purpose", what);
	return k == DECIDE_HTTP && last.purpose == purpose;
}

static void answer(enum decide_http_purpose purpose, int result)
{
	decide_http_result(d, last.sidecar, purpose, result, T);
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
	decide_drain_now(d, "test", T);
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
	decide_drain_now(d, "test", T);
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
	setup_with(POLICY_NEVER, 1, http_sidecars, 1, false);
	decide_drain_now(d, "test", T);
	next();
	next();
	http_next(DECIDE_HTTP_STOP, "stop request");
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

	setup_with(POLICY_NEVER, 1, http_sidecars, 1, false);
	decide_drain_now(d, "test", T);
	next();
	next();
	http_next(DECIDE_HTTP_STOP, "stop request");
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
	setup_with(POLICY_NEVER, 1, http_sidecars, 1, false);
	decide_drain_now(d, "test", T);
	next();
	next();
	http_next(DECIDE_HTTP_STOP, "stop request");
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
	setup_with(POLICY_NEVER, 1, http_sidecars, 1, false);
	decide_drain_now(d, "test", T);
	next();
	next();
	http_next(DECIDE_HTTP_STOP, "stop request");
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
	setup_with(POLICY_NEVER, 1, http_sidecars, 1, false);
	decide_drain_now(d, "test", T);
	next();
	next();
	http_next(DECIDE_HTTP_STOP, "stop request");
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
	decide_drain_now(d, "test", T);
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
	decide_drain_now(d, "test", T);
	next();
	next();
	http_next(DECIDE_HTTP_DRAIN, "drain");
	answer(DECIDE_HTTP_DRAIN, -ECONNREFUSED);
	ok(noted(NOTE_DRAIN_FAILED) && note(NOTE_DRAIN_FAILED)->result == -ECONNREFUSED, "a failed drain is noted");
	http_next(DECIDE_HTTP_STOP, "and the stop request follows at once");

	setup_with(POLICY_NEVER, 1, db, 1, false);
	decide_drain_now(d, "test", T);
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
	decide_drain_now(d, "test", T);
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
	decide_drain_now(d, "drain-command", T);
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
	decide_drain_now(d, "drain-command", T);
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
	decide_drain_now(d, "drain-command", T);
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
		decide_drain_now(d, "drain-command", T);
		next();
		http_next(DECIDE_HTTP_STOP, "stop");
		answer(DECIDE_HTTP_STOP, 200);
		http_next(DECIDE_HTTP_GONE, "probe");
		is_str(last.url, "http://127.0.0.1:8200/agent/v1/quit", "on the stop URL");
	}
}


/* ---- results as events: files, rescans, exit codes, polling, signals ---- */

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
	is_str(last.reason, "apps-done", "with the reason");
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

static void signal_retries(void)
{
	setup(POLICY_NEVER, 1, 1);
	decide_drain_now(d, "test", T);
	next();
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
	is_str(last.reason, "ready-timeout", "reason ready-timeout");
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
	is_int(next(), DECIDE_WRITE, "ready: the command starts (what the ready file is for)");
	is_int(last.file, PROTOCOL_READY, "as the ready file");
	is_int(noted(NOTE_ALL_READY_COMMAND), 1, "noted as such");
	decide_written(d, PROTOCOL_READY, 0, T);
	decide_app_exited(d, DECIDE_APP_COMMAND, T + S);
	decide_app_status(d, DECIDE_APP_COMMAND, 3, T + S);
	T += S;
	is_int(next(), DECIDE_APPS_DONE, "the command exited: done at once");
	ok(!last.command_ended, "the command ran: nothing to end");
	http_next(DECIDE_HTTP_STOP, "the stop goes out first");
}

/* ---- signals as the runtime sends them, and the sidecars' own exit codes ---- */

static void root_signals(void)
{
	static const struct decide_sidecar_config nginx = { .name = "nginx", .stop_signal = SIGQUIT,
							    .exit_fix = "use its graceful signal" };
	static const struct decide_sidecar_config all = { .name = "old", .stop_signal = SIGQUIT, .signal_all = true };

	/* The stop signal goes to the roots, first; SIGTERM to the roots too; SIGKILL to every process. */
	setup_with(POLICY_NEVER, 1, &nginx, 1, false);
	decide_sidecar_seen(d, 0, T - LONG_AGO);
	decide_drain_now(d, "test", T);
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
	decide_drain_now(d, "test", T);
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
	decide_drain_now(d, "test", T);
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
	decide_drain_now(d, "test", T);
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
	is_str(last.reason, "sidecar-exited", "reason sidecar-exited");
	ok(note(NOTE_DRAIN)->reason && strcmp(note(NOTE_DRAIN)->reason, "sidecar-exited") == 0 &&
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
	is_str(note(NOTE_APPS_STOP_NOT)->reason, "exit-0", "and the note says why");
	sidecar_exits_with(POLICY_ON_FAILURE, SIDECAR_EXIT_FAIL, false, 137);
	is_int(next(), NONE, "OnFailure: the kubelet restarts the sidecar; the apps run on");
	is_str(note(NOTE_APPS_STOP_NOT)->reason, "on-failure", "and the note says why");
	sidecar_exits_with(POLICY_NEVER, SIDECAR_EXIT_FAIL, true, 143);
	is_int(next(), NONE, "a pod being deleted: the kubelet stops the apps");
	is_str(note(NOTE_APPS_STOP_NOT)->reason, "deleted", "and the note says why");
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
	ok(noted(NOTE_NATIVE_SEEN) == 1 && strcmp(note(NOTE_NATIVE_SEEN)->reason, "first") == 0 &&
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
	ok(note(NOTE_NATIVE_SEEN)->flag && strcmp(note(NOTE_NATIVE_SEEN)->reason, "restart") == 0,
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
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "the app is done");
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
	decide_drain_now(d, "test", T);
	is_int(next(), DECIDE_APPS_DONE, "drain");
	is_int(next(), DECIDE_CATCHES, "a look");
	decide_sidecar_catches(d, 0, -EACCES, T);
	is_int(next(), DECIDE_SIGNAL, "cannot tell: the signal goes");
	ok(noted_for(NOTE_CATCHES_UNKNOWN, "proxy") && note(NOTE_CATCHES_UNKNOWN)->result == -EACCES, "noted");

	/* Running well before the apps were done: signalled at once, as ever. */
	setup(POLICY_NEVER, 1, 1);
	decide_sidecar_seen(d, 0, T - 2 * S);
	decide_drain_now(d, "test", T);
	is_int(next(), DECIDE_APPS_DONE, "drain");
	is_int(next(), DECIDE_SIGNAL, "seen 2 s before: the signal at once, no look");

	/* A stop request is retried anyway; a stop signal that does not kill needs no handler. */
	setup_with(POLICY_NEVER, 1, http_sidecars, 1, false);
	decide_sidecar_seen(d, 0, T);
	decide_drain_now(d, "test", T);
	is_int(next(), DECIDE_APPS_DONE, "drain");
	is_int(next(), DECIDE_HTTP, "stopped over HTTP: its request at once");
	{
		static const struct decide_sidecar_config winch[] = { { .name = "httpd", .stop_signal = SIGWINCH } };

		setup_with(POLICY_NEVER, 1, winch, 1, false);
		decide_sidecar_seen(d, 0, T);
		decide_drain_now(d, "test", T);
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
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "the app is done");
	is_int(next(), DECIDE_SIGNAL, "begun 6.7 s before: the signal at once, no look");
	ok(!noted(NOTE_CATCHES_WAIT) && !noted(NOTE_CATCHES_NOT), "and no word of a wait");

	/* Begun when it was seen, 1.7 s before the app's exit, and never catching: 0.3 s of looks, not 2 s. */
	setup(POLICY_NEVER, 1, 1);
	decide_sidecar_seen_aged(d, 0, 0, T - 1700 * MS);
	decide_app_seen(d, 3, "job", T - 1700 * MS);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	is_int(next_skipping_rescans(), DECIDE_APPS_DONE, "the app is done");
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
	decide_drain_now(d, "test", T);
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
	decide_drain_now(d, "drain-file", T);
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

/* An event about a sidecar decide does not have changes nothing (the signal result's too). */
static void out_of_range(void)
{
	bool taken;

	setup(POLICY_NEVER, 1, 1); /* sidecars[] has two; decide knows one */
	decide_drain_now(d, "test", T);
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
	ok(!decide_drain_now(d, NULL, T), "a drain without a reason is refused");
	ok(decide_drain_now(d, "test", T), "a drain with one is still taken");
	is_int(next(), DECIDE_APPS_DONE, "and drains");
	is_str(last.reason, "test", "for its reason");

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
	is_str(last.reason, "resume", "reason resume");

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
	DECIDE_TELL(d, T, .kind = DECIDE_EV_COMMAND_ENDED, .code = 128 + SIGTERM, .name = "signal");
	is_int(next(), DECIDE_APPS_DONE, "drain");
	is_str(last.reason, "signal", "for the signal, not because the app is done");
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
	is_str(last.reason, "startup-timeout", "reason startup-timeout");
}

int main(void)
{
	one_app_never();
	apps_expected();
	two_apps();
	confirm_finds_new_app();
	on_failure();
	restart_renamed();
	restart_unnamed();
	terminate();
	drain_file();
	startup_timeout();
	escalation();
	terminated_by_sigterm();
	eperm();
	not_found();
	sidecar_after_apps();
	handler_wait();
	handler_wait_from_start();
	exit_waits_for_codes();
	misc();
	reports();
	reports_and_kernel();
	readiness();
	ready_timeout();
	http_stop();
	http_retries();
	http_escalation();
	http_drain();
	http_two_sidecars();
	blind();
	files();
	rescan_failures();
	statuses();
	polling();
	signal_retries();
	wrapper();
	root_signals();
	sidecar_codes();
	sidecar_dies();
	sidecar_fails_apps();
	natives();
	pids_moved();
	lost_app();
	out_of_range();
	resume();
	termination_share();
	command();
	after_startup_timeout();
	is_int(spins, 0, "decide_next never had nothing to do with its deadline come");
	decide_free(d);
	return done_testing();
}
