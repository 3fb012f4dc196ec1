/*
 * The summary: each sidecar's own exit code, the containers that fail the
 * pod, and the termination log's form of it, which the kubelet must keep
 * whole (at most 4096 bytes, valid JSON) however many apps there were.
 */
#include "config.h"

#include "decide.h"
#include "log.h"
#include "options.h"
#include "summary.h"
#include "tap.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct decide *d;
static struct agent_options opt;

static void setup(unsigned napps, unsigned fail_every)
{
	static struct decide_sidecar_config cfg[2] = { { .name = "istio" }, { .name = "fluent-bit", .stop_signal = SIGTERM } };
	struct decide_config dc = { .policy = POLICY_NEVER, .nsidecars = 2, .sidecars = cfg,
				    .startup_timeout_us = 600 * US_PER_S, .stop_timeout_us = 20 * US_PER_S };
	char name[80], err[256];
	unsigned i;

	decide_free(d);
	if (decide_new(&dc, 0, &d) < 0)
		bail_out("decide_new");
	for (i = 0; i < napps; i++) {
		snprintf(name, sizeof(name), "a-rather-long-application-container-name-number-%u", i);
		decide_app_seen(d, i + 3, name, 0);
		decide_app_exited(d, i + 3, US_PER_S);
		decide_app_status(d, i + 3, i % fail_every == 0 ? 1 : 0, US_PER_S);
	}
	decide_sidecar_seen(d, 1, 0);
	decide_sidecar_exited(d, 1, 2 * US_PER_S);
	decide_sidecar_status(d, 1, 143, 2 * US_PER_S);
	if (!opt.sidecars) {
		opt.sidecars = calloc(2, sizeof(*opt.sidecars));
		opt.nsidecars = 2;
		if (spec_parse("istio", &opt.sidecars[0], err, sizeof(err)) < 0 ||
		    spec_parse("match=fluent-bit", &opt.sidecars[1], err, sizeof(err)) < 0)
			bail_out(err);
	}
}

/* A drain in which no sidecar may be signalled: the agent's exit code is 1. */
static void fail_the_drain(void)
{
	struct decide_action act = {0};
	int i;

	decide_drain_now(d, REASON_DRAIN_FILE, 3 * US_PER_S);
	for (i = 0; i < 100 && decide_next(d, 3 * US_PER_S, &act) && act.kind != DECIDE_EXIT; i++)
		if (act.kind == DECIDE_SIGNAL)
			decide_signal_result(d, act.sidecar, -EPERM, 3 * US_PER_S);
	if (act.kind != DECIDE_EXIT || act.exit_code != 1)
		bail_out("the drain did not fail");
}

/*
 * --on-sidecar-exit=fail: sidecar 1 is killed while two apps run; job gets
 * SIGTERM and then SIGKILL, other may not be signalled and exits 0.
 */
static void stop_the_apps(void)
{
	static struct decide_sidecar_config cfg[2] = { { .name = "istio" }, { .name = "fluent-bit", .stop_signal = SIGTERM } };
	struct decide_config dc = { .policy = POLICY_NEVER, .nsidecars = 2, .sidecars = cfg,
				    .startup_timeout_us = 600 * US_PER_S, .stop_timeout_us = 20 * US_PER_S,
				    .kill_after_us = 5 * US_PER_S, .apps_expected = 2,
				    .on_sidecar_exit = SIDECAR_EXIT_FAIL };
	struct decide_action act = {0};
	int64_t t = US_PER_S;
	int i;

	decide_free(d);
	if (decide_new(&dc, 0, &d) < 0)
		bail_out("decide_new");
	decide_sidecar_seen(d, 0, 0);
	decide_sidecar_seen(d, 1, 0);
	decide_app_seen(d, 3, "job", 0);
	decide_app_seen(d, 4, "other", 0);
	decide_sidecar_exited(d, 1, t);
	decide_sidecar_status(d, 1, 137, t);
	for (i = 0; i < 20; i++) {
		/* Nothing to do before --kill-after is over: then the SIGKILL. */
		if (!decide_next(d, t, &act)) {
			t += 6 * US_PER_S;
			continue;
		}
		if (act.kind != DECIDE_SIGNAL_APP)
			continue;
		decide_app_signal_result(d, act.app, act.app == 4 ? -EPERM : 0, t);
		if (act.signo == SIGKILL)
			break;
	}
	if (i == 20 || act.app != 3)
		bail_out("no SIGKILL for the app");
	decide_app_exited(d, 3, t);
	decide_app_status(d, 3, 137, t);
	decide_app_exited(d, 4, t);
	decide_app_status(d, 4, 0, t);
	for (i = 0; i < 20 && decide_next(d, t, &act) && act.kind != DECIDE_APPS_DONE; i++)
		;
	if (act.kind != DECIDE_APPS_DONE)
		bail_out("the apps are not done");
}

/*
 * restartPolicy Always: the pod is deleted 10 s in (the agent's SIGTERM),
 * its app stops 5 s later, the sidecar is stopped 0.2 s after that.
 */
static void deleted_pod(void)
{
	static struct decide_sidecar_config cfg[2] = { { .name = "istio" }, { .name = "fluent-bit", .stop_signal = SIGTERM } };
	struct decide_config dc = { .policy = POLICY_ALWAYS, .nsidecars = 2, .sidecars = cfg, .apps_expected = 1,
				    .startup_timeout_us = 600 * US_PER_S, .stop_timeout_us = 20 * US_PER_S,
				    .term_grace_us = 25 * US_PER_S };
	struct decide_action act = {0};
	int64_t t = 15 * US_PER_S;
	int i;

	decide_free(d);
	if (decide_new(&dc, 0, &d) < 0)
		bail_out("decide_new");
	decide_sidecar_seen(d, 1, 0);
	decide_app_seen(d, 3, "web", 0);
	decide_terminate(d, 10 * US_PER_S);
	decide_app_exited(d, 3, t);
	decide_app_status(d, 3, 0, t);
	for (i = 0; i < 20 && act.kind != DECIDE_EXIT; i++) {
		if (!decide_next(d, t, &act)) {
			t += 100 * US_PER_MS;
			continue;
		}
		if (act.kind == DECIDE_RESCAN)
			decide_rescanned(d, 0, t);
		else if (act.kind == DECIDE_SIGNAL)
			decide_signal_result(d, act.sidecar, 0, t);
		else if (act.kind == DECIDE_WATCH)
			decide_sidecar_gone(d, act.sidecar, t + 200 * US_PER_MS);
	}
	if (act.kind != DECIDE_EXIT)
		bail_out("the deletion did not end");
}

/* The text of member key (its JSON), "" when missing. */
static const char *member(const char *text, size_t len, const char *key)
{
	static char out[4096];
	size_t off, n;

	if (json_member(text, len, key, &off, &n) < 0 || n >= sizeof(out))
		return "";
	memcpy(out, text + off, n);
	out[n] = '\0';
	return out;
}

int main(void)
{
	struct jbuf full, term;
	FILE *log_file = tmpfile();

	log_setup(LOG_DEBUG, LOG_TEXT, fileno(log_file));

	setup(2, 3);
	jbuf_init(&full);
	summary_build(&full, d, &opt, 3 * US_PER_S);
	is_str(member(full.buf, full.len, "fails_pod"),
	       "[{\"role\":\"app\",\"name\":\"a-rather-long-application-container-name-number-0\",\"exit_code\":1},"
	       "{\"role\":\"sidecar\",\"name\":\"fluent-bit\",\"exit_code\":143}]",
	       "fails_pod: the failed app and the sidecar that exited 143");
	ok(strstr(full.buf, "\"name\":\"fluent-bit\",\"method\":\"signal:TERM\"") && strstr(full.buf, "\"exit_code\":143"),
	   "the sidecar's own exit code is in its entry");
	ok(strstr(full.buf, "\"name\":\"istio\"") && strstr(full.buf, "\"ready_after_ms\":null,\"exit_code\":null"),
	   "a sidecar whose code is not known: null");
	ok(strstr(full.buf, "\"signal_fate\":null,\"program\":null") != NULL,
	   "no stop signal looked at, no wrapper: null, and no fix");
	ok(strstr(full.buf, "\"fix\"") == NULL, "no fix where nothing fails of the stop");
	jbuf_free(&full);
	DECIDE_TELL(d, 2 * US_PER_S, .kind = DECIDE_EV_FATE, .sidecar = 1, .result = DECIDE_FATE_DIES);
	DECIDE_TELL(d, 2 * US_PER_S, .kind = DECIDE_EV_PROGRAM, .sidecar = 0, .code = 0, .name = "signal:TERM");
	jbuf_init(&full);
	summary_build(&full, d, &opt, 3 * US_PER_S);
	ok(strstr(full.buf, "\"exit_code\":143,\"signal_fate\":\"dies\",\"fix\":\"run its command under rearguard "
			    "sidecar") != NULL,
	   "a sidecar that dies of its stop signal: said, with the fix");
	ok(strstr(full.buf, "\"program\":\"signal:TERM\"") != NULL, "a wrapped program's end");
	jbuf_init(&term);
	summary_termination(&term, full.buf, full.len, SUMMARY_TERMINATION_MAX);
	ok(full.len <= SUMMARY_TERMINATION_MAX && term.len == full.len && memcmp(term.buf, full.buf, full.len) == 0,
	   "a short summary is its own termination log");
	jbuf_free(&term);
	jbuf_free(&full);

	/* --on-sidecar-exit=fail: the signal each app got from rearguard. */
	stop_the_apps();
	jbuf_init(&full);
	summary_build(&full, d, &opt, 8 * US_PER_S);
	ok(strstr(full.buf, "{\"name\":\"job\",\"container\":3,\"exit_code\":137,\"report\":null,\"state\":\"exited\","
			    "\"signal\":\"SIGKILL\"") &&
		   strstr(full.buf, "{\"name\":\"other\",\"container\":4,\"exit_code\":0,\"report\":null,"
				    "\"state\":\"exited\",\"signal\":null"),
	   "each app's signal from rearguard, null when none was sent");
	is_str(member(full.buf, full.len, "reason"), "\"sidecar-exited\"", "the reason: a sidecar failed");
	jbuf_free(&full);

	/* A long-running pod's deletion: how long the sidecars were held for the apps, in all and each. */
	deleted_pod();
	jbuf_init(&full);
	summary_build(&full, d, &opt, 16 * US_PER_S);
	is_str(member(full.buf, full.len, "held_ms"), "5000.000", "held 5 s for the app after SIGTERM");
	ok(strstr(full.buf, "\"name\":\"fluent-bit\"") && strstr(full.buf, "\"decision_to_exit_ms\":200.000,\"held_ms\":5000.000"),
	   "the sidecar: stopped after 5 s of holding, gone 0.2 s later");
	ok(strstr(full.buf, "\"name\":\"istio\"") &&
		   strncmp(strstr(strstr(full.buf, "\"name\":\"istio\""), "\"held_ms\":"), "\"held_ms\":null", 14) == 0,
	   "one never seen was not held");
	jbuf_free(&full);
	setup(1, 3);
	jbuf_init(&full);
	summary_build(&full, d, &opt, 3 * US_PER_S);
	is_str(member(full.buf, full.len, "held_ms"), "null", "no SIGTERM, no hold");
	is_str(member(full.buf, full.len, "stalled_ms"), "null", "never stalled: null");
	jbuf_free(&full);
	/* The longest stall while a container was expected. */
	setup(1, 3);
	DECIDE_TELL(d, US_PER_S, .kind = DECIDE_EV_STALLED, .age_us = 420 * US_PER_MS);
	DECIDE_TELL(d, US_PER_S, .kind = DECIDE_EV_STALLED, .age_us = 130 * US_PER_MS);
	jbuf_init(&full);
	summary_build(&full, d, &opt, 3 * US_PER_S);
	is_str(member(full.buf, full.len, "stalled_ms"), "420.000", "the longest stall in stalled_ms");
	jbuf_free(&full);

	/* Native sidecars: listed apart from the sidecars rearguard stops. */
	setup(1, 3);
	decide_native_seen(d, 7, "vector", NATIVE_BY_START, 0);
	decide_native_seen(d, 8, "mesh", NATIVE_BY_SPEC, 0);
	decide_native_exited(d, 7, US_PER_S);
	decide_native_seen(d, 9, "vector", NATIVE_BY_RESTART, 2 * US_PER_S);
	jbuf_init(&full);
	summary_build(&full, d, &opt, 3 * US_PER_S);
	is_str(member(full.buf, full.len, "natives"),
	       "[{\"name\":\"vector\",\"container\":7,\"known_by\":\"first\",\"state\":\"restarted\"},"
	       "{\"name\":\"mesh\",\"container\":8,\"known_by\":\"spec\",\"state\":\"running\"},"
	       "{\"name\":\"vector\",\"container\":9,\"known_by\":\"restart\",\"state\":\"running\"}]",
	       "natives: each container, how it was known, and what became of it");
	jbuf_free(&full);

	/* 45 apps with long names: over 4096 bytes. */
	setup(45, 3);
	fail_the_drain();
	jbuf_init(&full);
	summary_build(&full, d, &opt, 3 * US_PER_S);
	ok(full.len > SUMMARY_TERMINATION_MAX, "45 apps: %zu bytes", full.len);
	ok(strncmp(full.buf, "{\"error\":\"sidecar ", 18) == 0 && strstr(full.buf, "not permitted to signal it; run "),
	   "a sidecar not permitted to be signalled is named first, with the fix");
	jbuf_init(&term);
	summary_termination(&term, full.buf, full.len, SUMMARY_TERMINATION_MAX);
	ok(term.len <= SUMMARY_TERMINATION_MAX, "the termination log's form fits: %zu bytes", term.len);
	ok(term.buf[0] == '{' && term.buf[term.len - 1] == '}', "one object");
	is_str(member(term.buf, term.len, "truncated"), "true", "says it is cut");
	is_str(member(term.buf, term.len, "full"), "\"done\"", "and where the whole one is");
	is_str(member(term.buf, term.len, "exit_code"), "1", "the exit code");
	is_str(member(term.buf, term.len, "reason"), "\"drain-file\"", "the reason");
	is_str(member(term.buf, term.len, "apps"), "45", "the apps, counted");
	ok(strncmp(term.buf, "{\"error\":\"sidecar ", 18) == 0, "the short form names it first too");
	ok(strncmp(member(term.buf, term.len, "fails_pod"), "[{\"role\":\"app\"", 14) == 0, "the failures first");
	ok(strstr(member(term.buf, term.len, "fails_pod"), "number-42\",\"exit_code\":1},{\"role\":\"sidecar\"") &&
		   strstr(member(term.buf, term.len, "fails_pod"), "\"role\":\"agent\""),
	   "all 15 failed apps, the sidecar and the agent, as they fit");
	ok(strstr(member(term.buf, term.len, "sidecars"), "\"exit_code\":143") != NULL, "the sidecars with their codes");
	jbuf_free(&term);

	/* Every app failed: more than fits; the rest is counted. */
	jbuf_free(&full);
	setup(45, 1);
	jbuf_init(&full);
	summary_build(&full, d, &opt, 3 * US_PER_S);
	jbuf_init(&term);
	summary_termination(&term, full.buf, full.len, SUMMARY_TERMINATION_MAX);
	ok(term.len <= SUMMARY_TERMINATION_MAX, "45 failed apps: it fits (%zu bytes)", term.len);
	ok(atoi(member(term.buf, term.len, "fails_pod_not_shown")) > 0, "the failures that did not fit are counted");
	jbuf_free(&term);

	/* A done file of any size, read back by a restarted agent: the same short form. */
	jbuf_init(&term);
	summary_termination(&term, full.buf, full.len, SUMMARY_TERMINATION_MAX);
	ok(term.len <= SUMMARY_TERMINATION_MAX && !term.failed, "from the done text: it fits again");
	jbuf_free(&term);
	jbuf_init(&term);
	summary_termination(&term, "{\"rearguard\":\"0\",\"apps\":[", 25, SUMMARY_TERMINATION_MAX);
	ok(!term.failed && term.len <= SUMMARY_TERMINATION_MAX, "a short text is taken as it is, whatever it holds");
	jbuf_free(&term);
	jbuf_free(&full);
	{
		/* A long text that is not a summary: still a valid, short object. */
		char *junk = malloc(10000);

		memset(junk, 'x', 10000);
		jbuf_init(&term);
		summary_termination(&term, junk, 10000, SUMMARY_TERMINATION_MAX);
		ok(term.len <= SUMMARY_TERMINATION_MAX && term.buf[0] == '{', "junk: a short object anyway");
		is_str(member(term.buf, term.len, "truncated"), "true", "marked cut");
		jbuf_free(&term);
		free(junk);
	}

	/* In a pod of many containers the kubelet keeps less of each message. */
	is_int(summary_budget(3), 4096, "3 containers: 4096 bytes each");
	is_int(summary_budget(4), 3072, "4 containers: 12 KiB / 4");
	is_int(summary_budget(47), 261, "47 containers: 261 bytes");
	is_int(summary_budget(0), 4096, "none known: 4096");
	setup(45, 3);
	jbuf_init(&full);
	summary_build(&full, d, &opt, 3 * US_PER_S);
	jbuf_init(&term);
	summary_termination(&term, full.buf, full.len, summary_budget(47));
	ok(term.len <= 261, "47 containers: the short form fits in 261 bytes (%zu)", term.len);
	is_str(member(term.buf, term.len, "truncated"), "true", "and says it is cut");
	ok(strncmp(term.buf, "{\"rearguard\":", 13) == 0 && term.buf[term.len - 1] == '}', "one whole object");
	jbuf_free(&term);
	jbuf_free(&full);

	spec_free(&opt.sidecars[0]);
	spec_free(&opt.sidecars[1]);
	free(opt.sidecars);
	decide_free(d);
	return done_testing();
}
