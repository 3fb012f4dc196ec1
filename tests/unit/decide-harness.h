/*
 * The harness of decide's unit tests (test-decide, test-decide-apps,
 * test-decide-sidecar, test-decide-natives): one decide at a time (d), set
 * up for a policy, apps and sidecars, driven with synthetic events by the
 * test's own clock (T), its actions taken one by one (next(), the last in
 * last), its notes kept (noted(), note()) and its state read through its
 * views (app(), sc(), view()). A program links with -Wl,--wrap=realloc, so
 * that realloc_fails makes decide's allocations fail.
 *
 *	setup(POLICY_NEVER, 1, 1);
 *	decide_app_seen(d, 3, "job", T);
 *	is_int(next(), DECIDE_RESCAN, "...");
 *	...
 *	return finish();
 */
#ifndef RG_DECIDE_HARNESS_H
#define RG_DECIDE_HARNESS_H

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
__attribute__((unused)) static struct decide_sidecar_config http_sidecars[] = {
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
	char sidecar[TEXT_MAX], app[TEXT_MAX], report[TEXT_MAX], text[TEXT_MAX];
} notes[NOTES_MAX];
static size_t nnotes;

static inline const char *keep_str(char *buf, const char *s)
{
	if (!s)
		return NULL;
	snprintf(buf, TEXT_MAX, "%s", s);
	return buf;
}

/* decide's sink: every note, in order. */
static inline void sink(void *data, const struct decide_note *n)
{
	struct kept *k;

	if (nnotes == NOTES_MAX)
		bail_out("too many notes");
	k = &notes[nnotes++];
	k->n = *n;
	k->n.sidecar = keep_str(k->sidecar, n->sidecar);
	k->n.app = keep_str(k->app, n->app);
	k->n.report = keep_str(k->report, n->report);
	k->n.text = keep_str(k->text, n->text);
}

/* The n-th note of kind (from 0); a zeroed one when there are fewer. */
static inline const struct decide_note *notes_of(enum decide_note_kind kind, int n)
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
static inline int noted(enum decide_note_kind kind)
{
	int c = 0;
	size_t i;

	for (i = 0; i < nnotes; i++)
		c += notes[i].n.kind == kind;
	return c;
}

/* The last note of kind; one of all zeroes (kind 0 aside) when there is none. */
static inline const struct decide_note *note(enum decide_note_kind kind)
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
static inline bool noted_for(enum decide_note_kind kind, const char *name)
{
	size_t i;

	for (i = 0; i < nnotes; i++)
		if (notes[i].n.kind == kind && notes[i].n.sidecar && strcmp(notes[i].n.sidecar, name) == 0)
			return true;
	return false;
}

/* ---- what decide knows, through its views ---- */

static inline struct decide_view view(void)
{
	struct decide_view v;

	decide_view(d, &v);
	return v;
}

static inline struct decide_app_view app(size_t i)
{
	struct decide_app_view v;

	if (i >= decide_app_count(d))
		bail_out("no such app");
	decide_app_view(d, i, &v);
	return v;
}

/* Whether app i exited (or reported that it finished; a restarted one had too). */
static inline bool exited(size_t i)
{
	return app(i).state != DECIDE_APP_RUNNING;
}

static inline struct decide_sidecar_view sc(size_t k)
{
	struct decide_sidecar_view v;

	decide_sidecar_view(d, k, &v);
	return v;
}

/* A new decide for cfg, at T. */
static inline void renew(void)
{
	decide_free(d);
	nnotes = 0;
	if (decide_new(&cfg, T, &d) < 0)
		bail_out("decide_new");
}

static inline void setup_with(enum restart_policy policy, unsigned apps, const struct decide_sidecar_config *scs,
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
static inline void setup(enum restart_policy policy, unsigned apps, size_t nsidecars)
{
	setup_with(policy, apps, sidecars, nsidecars, false);
}

/*
 * Where decide_next had nothing to do but its deadline had already come:
 * the engine would wake up at once, find nothing, and spin.
 */
static int spins;

static inline int next(void)
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
static inline void report(const char *name, int code)
{
	decide_app_report(d, name, code, T);
	is_int(next(), DECIDE_RESCAN, "report %s=%d: a rescan first", name, code);
	decide_rescanned(d, 0, T);
}

/*
 * Answers rescans with nothing new, and lets exit-code lookups find nothing
 * yet, until another action comes.
 */
static inline int next_skipping_rescans(void)
{
	int k;

	while ((k = next()) == DECIDE_RESCAN || k == DECIDE_STATUS)
		if (k == DECIDE_RESCAN)
			decide_rescanned(d, 0, T);
	return k;
}

/* From the apps-done decision to the exit, with every sidecar stopping at once. */
static inline void drain_quickly(void)
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

/* With --sidecar-wait: setup(), then the wait set. */
static inline void setup_waiting(unsigned apps, size_t nsidecars, int64_t wait_us)
{
	setup(POLICY_NEVER, apps, nsidecars);
	cfg.sidecar_wait_us = wait_us;
	renew();
}

/* The one app exits 0; the rescan before concluding finds nothing new. */
static inline void app_exits_at_once(void)
{
	decide_app_seen(d, 3, "job", T);
	decide_app_exited(d, 3, T);
	decide_app_status(d, 3, 0, T);
	if (next() == DECIDE_RESCAN)
		decide_rescanned(d, 0, T);
}

/* Expects a DECIDE_HTTP for purpose next; false (and a failed test) otherwise. */
static inline bool http_next(enum decide_http_purpose purpose, const char *what)
{
	int k = next();

	is_int(k, DECIDE_HTTP, "%s: an HTTP request", what);
	is_int(last.purpose, purpose, "%s: its purpose", what);
	return k == DECIDE_HTTP && last.purpose == purpose;
}

static inline void answer(enum decide_http_purpose purpose, int result)
{
	decide_http_result(d, last.sidecar, purpose, result, T);
}

/* The end of a program: decide_next never had nothing to do with its deadline come; the plan. */
static inline int finish(void)
{
	is_int(spins, 0, "decide_next never had nothing to do with its deadline come");
	decide_free(d);
	return done_testing();
}

#endif
