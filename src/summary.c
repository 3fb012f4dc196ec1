#include "config.h"

#include "summary.h"

#include "decide.h"
#include "log.h"
#include "notes.h"
#include "options.h"
#include "parse.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void app_json(struct jbuf *j, const struct decide_view *dv, const struct decide_app_view *a)
{
	bool exited = a->state != DECIDE_APP_RUNNING;

	jbuf_begin(j, '{');
	jbuf_key(j, "name");
	jbuf_str(j, a->name);
	jbuf_key(j, "container");
	if (a->id && a->id != DECIDE_APP_COMMAND)
		jbuf_int(j, a->id);
	else
		jbuf_null(j); /* known only from its apps/NAME report, or run --drain's command */
	jbuf_key(j, "exit_code");
	if (exited && a->code >= 0)
		jbuf_int(j, a->code);
	else
		jbuf_null(j);
	jbuf_key(j, "report");
	if (a->reported >= 0) {
		jbuf_begin(j, '{');
		jbuf_key(j, "name");
		jbuf_str(j, a->report ? a->report : "");
		jbuf_key(j, "exit_code");
		jbuf_int(j, a->reported);
		jbuf_end(j, '}');
	} else {
		jbuf_null(j);
	}
	jbuf_key(j, "state");
	jbuf_str(j, !exited ? "running" : a->state == DECIDE_APP_RESTARTED ? "restarted" : "exited");
	/* The last signal rearguard sent it (--on-sidecar-exit=fail), null: none. */
	jbuf_key(j, "signal");
	if (a->signal) {
		char sig[16];

		snprintf(sig, sizeof(sig), "SIG%s", signal_name(a->signal));
		jbuf_str(j, sig);
	} else {
		jbuf_null(j);
	}
	jbuf_key(j, "exited_after_ms");
	jbuf_duration(j, exited ? a->exited_us - dv->started_us : -1);
	jbuf_end(j, '}');
}

/* 200, "refused", "timeout", ...; null while none came. */
static void result_json(struct jbuf *j, int result)
{
	char buf[16];
	const char *word = decide_result_word(result, buf);

	if (!word)
		jbuf_null(j);
	else if (result > 0)
		jbuf_int(j, result);
	else
		jbuf_str(j, word);
}

static void sidecar_json(struct jbuf *j, const struct decide_view *dv, const struct decide_sidecar_view *sc,
			 const struct sidecar_spec *spec)
{
	char method[SPEC_URL_MAX + 16];
	unsigned k;

	spec_describe_stop(spec, method, sizeof(method));
	jbuf_begin(j, '{');
	jbuf_key(j, "name");
	jbuf_str(j, spec->name);
	jbuf_key(j, "method");
	jbuf_str(j, method);
	jbuf_key(j, "outcome");
	jbuf_str(j, sc->outcome);
	/* From the stop request to the last process gone. */
	jbuf_key(j, "stop_latency_ms");
	jbuf_duration(j, sc->stop_sent_us && sc->gone_us ? sc->gone_us - sc->stop_sent_us : -1);
	/* From the apps-done decision to the stop request, and to the sidecar's exit. */
	jbuf_key(j, "decision_to_stop_ms");
	jbuf_duration(j, sc->stop_sent_us && dv->decided_us ? sc->stop_sent_us - dv->decided_us : -1);
	jbuf_key(j, "decision_to_exit_ms");
	jbuf_duration(j, sc->gone_us && dv->decided_us ? sc->gone_us - dv->decided_us : -1);
	/* The pod's deletion: from the agent's SIGTERM to this sidecar's stop, held meanwhile for the apps. */
	jbuf_key(j, "held_ms");
	jbuf_duration(j, dv->term_us && sc->stop_sent_us >= dv->term_us ? sc->stop_sent_us - dv->term_us : -1);
	jbuf_key(j, "ready_after_ms");
	jbuf_duration(j, sc->ready_us ? sc->ready_us - dv->started_us : -1);
	/* Its main process's own exit code, from the kernel: what the kubelet will see. */
	jbuf_key(j, "exit_code");
	if (sc->exit_code >= 0)
		jbuf_int(j, sc->exit_code);
	else
		jbuf_null(j);
	/*
	 * What its stop signal did to its main process, looked at before it
	 * went, with the fix where that fails the pod; how its program ended
	 * under rearguard sidecar (whose own code is exit_code).
	 */
	jbuf_key(j, "signal_fate");
	if (decide_fate_word(sc->fate))
		jbuf_str(j, decide_fate_word(sc->fate));
	else
		jbuf_null(j);
	if (notes_fate_fix(sc->fate)) {
		jbuf_key(j, "fix");
		jbuf_str(j, notes_fate_fix(sc->fate));
	}
	jbuf_key(j, "program");
	if (sc->program)
		jbuf_str(j, sc->program);
	else
		jbuf_null(j);
	/* Drain and stop requests, and what each got: a status, or why none came. */
	jbuf_key(j, "requests");
	jbuf_int(j, sc->requests);
	jbuf_key(j, "statuses");
	jbuf_begin(j, '[');
	for (k = 0; k < sc->requests && k < DECIDE_STATUSES_MAX; k++)
		result_json(j, sc->statuses[k]);
	jbuf_end(j, ']');
	jbuf_end(j, '}');
}

/* A native sidecar's container: listed, for it was neither waited for nor stopped. */
static void native_json(struct jbuf *j, const struct decide_native_view *n)
{
	jbuf_begin(j, '{');
	jbuf_key(j, "name");
	jbuf_str(j, n->name);
	jbuf_key(j, "container");
	jbuf_int(j, n->id);
	jbuf_key(j, "known_by");
	jbuf_str(j, decide_native_known_by(n->by));
	jbuf_key(j, "state");
	jbuf_str(j, n->state == DECIDE_NATIVE_RUNNING	  ? "running"
		    : n->state == DECIDE_NATIVE_RESTARTED ? "restarted"
							  : "exited");
	jbuf_end(j, '}');
}

static void failing(struct jbuf *j, const char *role, const char *name, int code)
{
	jbuf_begin(j, '{');
	jbuf_key(j, "role");
	jbuf_str(j, role);
	jbuf_key(j, "name");
	jbuf_str(j, name);
	jbuf_key(j, "exit_code");
	jbuf_int(j, code);
	jbuf_end(j, '}');
}

/*
 * The containers whose exit code makes the pod Failed under restartPolicy
 * Never (under OnFailure, restarted): apps (their last attempt), sidecars
 * (their main process) and the agent itself. None under Always: such a pod
 * ends by its deletion, and no exit code makes it Failed.
 */
static void fails_pod(struct jbuf *j, const struct decide *d, const struct decide_view *dv,
		      const struct agent_options *opt)
{
	struct decide_sidecar_view sc;
	struct decide_app_view a;
	size_t i;

	jbuf_begin(j, '[');
	if (opt->policy == POLICY_ALWAYS) {
		jbuf_end(j, ']');
		return;
	}
	for (i = 0; i < decide_app_count(d); i++) {
		decide_app_view(d, i, &a);
		if (a.state == DECIDE_APP_EXITED && a.code > 0)
			failing(j, "app", a.name, a.code);
	}
	for (i = 0; i < opt->nsidecars; i++) {
		decide_sidecar_view(d, i, &sc);
		if (sc.exit_code > 0)
			failing(j, "sidecar", opt->sidecars[i].name, sc.exit_code);
	}
	if (dv->exit_code != 0)
		failing(j, "agent", "rearguard", dv->exit_code);
	jbuf_end(j, ']');
}

/*
 * What made the agent fail, first of all: kubectl describe pod shows the
 * start of the termination message, and a sidecar's outcome stands deep
 * in it. The first sidecar that could not be stopped (the agent exits 1
 * for it), with the fix where it is one of uids. Nothing when none.
 */
static void error_first(struct jbuf *j, const struct decide *d, const struct agent_options *opt)
{
	struct decide_sidecar_view sc;
	size_t i;

	for (i = 0; i < opt->nsidecars; i++) {
		char text[256];

		decide_sidecar_view(d, i, &sc);
		if (sc.stage != DECIDE_SIDECAR_FAILED)
			continue;
		if (sc.not_permitted)
			snprintf(text, sizeof(text),
				 "sidecar %s not stopped: not permitted to signal it; run rearguard as its uid "
				 "(securityContext.runAsUser) or as root with the KILL capability",
				 opt->sidecars[i].name);
		else
			snprintf(text, sizeof(text), "sidecar %s not stopped: %s", opt->sidecars[i].name, sc.outcome);
		jbuf_key(j, "error");
		jbuf_str(j, text);
		return;
	}
}

void summary_build(struct jbuf *j, const struct decide *d, const struct agent_options *opt, int64_t now_us)
{
	struct decide_sidecar_view sc;
	struct decide_native_view n;
	struct decide_app_view a;
	struct decide_view dv;
	size_t i;

	decide_view(d, &dv);
	jbuf_begin(j, '{');
	if (dv.exit_code != 0)
		error_first(j, d, opt);
	jbuf_key(j, "rearguard");
	jbuf_str(j, PACKAGE_VERSION);
	jbuf_key(j, "exit_code");
	jbuf_int(j, dv.exit_code);
	jbuf_key(j, "reason");
	jbuf_str(j, decide_reason_word(dv.reason));
	jbuf_key(j, "decided_after_ms");
	jbuf_duration(j, dv.decided_us ? dv.decided_us - dv.started_us : -1);
	/* The pod's deletion: how long the sidecars were held for the apps after the agent's SIGTERM. */
	jbuf_key(j, "held_ms");
	jbuf_duration(j, dv.term_us && dv.decided_us >= dv.term_us ? dv.decided_us - dv.term_us : -1);
	jbuf_key(j, "finished_after_ms");
	jbuf_duration(j, now_us - dv.started_us);
	jbuf_key(j, "fails_pod");
	fails_pod(j, d, &dv, opt);
	/*
	 * What could not be done the usual way: processes without a pidfd, the
	 * longest time the agent did not run while a container was expected
	 * (null: never DECIDE_STALL_US), log lines not written.
	 */
	jbuf_key(j, "polled_processes");
	jbuf_int(j, dv.polled_most);
	jbuf_key(j, "stalled_ms");
	jbuf_duration(j, dv.stalled_most_us >= DECIDE_STALL_US ? dv.stalled_most_us : -1);
	jbuf_key(j, "log_lines_dropped");
	jbuf_int(j, (long long)log_dropped());
	jbuf_key(j, "apps");
	jbuf_begin(j, '[');
	for (i = 0; i < decide_app_count(d); i++) {
		decide_app_view(d, i, &a);
		app_json(j, &dv, &a);
	}
	jbuf_end(j, ']');
	jbuf_key(j, "sidecars");
	jbuf_begin(j, '[');
	for (i = 0; i < opt->nsidecars; i++) {
		decide_sidecar_view(d, i, &sc);
		/* Detection looked for every known sidecar: only those it found are the pod's. Natives are apart. */
		if (sc.counts)
			sidecar_json(j, &dv, &sc, &opt->sidecars[i]);
	}
	jbuf_end(j, ']');
	jbuf_key(j, "natives");
	jbuf_begin(j, '[');
	for (i = 0; i < decide_native_count(d); i++) {
		decide_native_view(d, i, &n);
		native_json(j, &n);
	}
	jbuf_end(j, ']');
	jbuf_end(j, '}');
}

/* ---- the termination log's short form ------------------------------------ */

/* Room kept for what closes the short form ("truncated", "full", the brackets). */
#define SHORT_RESERVE 160

/* Copies member key of the summary text into out, if it is there and fits. */
static void copy_member(struct jbuf *out, const char *full, size_t len, const char *key, size_t budget)
{
	size_t off, n;

	if (json_member(full, len, key, &off, &n) < 0 || out->len + strlen(key) + n + 4 > budget)
		return;
	jbuf_key(out, key);
	jbuf_raw_valuen(out, full + off, n);
}

/*
 * The elements of an array member, one by one, as long as they fit;
 * returns how many did not. Elements are copied as they are.
 */
static size_t copy_elements(struct jbuf *out, const char *full, size_t len, const char *key, size_t budget)
{
	size_t off, n, i, end, left = 0;

	jbuf_key(out, key);
	jbuf_begin(out, '[');
	if (json_member(full, len, key, &off, &n) == 0 && n >= 2 && full[off] == '[') {
		/* Each element is an object of ours: from '{' to its matching '}'. */
		for (i = off + 1; i < off + n; i = end) {
			size_t depth = 0, k;

			while (i < off + n && full[i] != '{')
				i++;
			if (i >= off + n)
				break;
			for (k = i, end = 0; k < off + n && !end; k++) {
				if (full[k] == '"') {
					size_t e = json_skip_string(full, off + n, k);

					k = e ? e - 1 : off + n; /* the loop steps past the closing quote */
				} else if (full[k] == '{') {
					depth++;
				} else if (full[k] == '}' && --depth == 0) {
					end = k + 1;
				}
			}
			if (!end)
				break;
			if (left || out->len + (end - i) + 2 > budget)
				left++;
			else
				jbuf_raw_valuen(out, full + i, end - i);
		}
	}
	jbuf_end(out, ']');
	return left;
}

/* How many elements an array member has (objects of ours: counted by their top-level '{'). */
static size_t count_elements(const char *full, size_t len, const char *key)
{
	size_t off, n, i, depth = 0, count = 0;

	if (json_member(full, len, key, &off, &n) < 0 || full[off] != '[')
		return 0;
	for (i = off; i < off + n; i++) {
		if (full[i] == '"') {
			size_t e = json_skip_string(full, off + n, i);

			i = e ? e - 1 : off + n; /* the loop steps past the closing quote */
		} else if (full[i] == '{' && depth++ == 0) {
			count++;
		} else if (full[i] == '}') {
			depth--;
		}
	}
	return count;
}

size_t summary_budget(unsigned containers)
{
	size_t share = SUMMARY_POD_TERMINATION_MAX / (containers ? containers : 1);

	return share < SUMMARY_TERMINATION_MAX ? share : SUMMARY_TERMINATION_MAX;
}

void summary_termination(struct jbuf *out, const char *full, size_t len, size_t limit)
{
	size_t budget = limit > SHORT_RESERVE ? limit - SHORT_RESERVE : 0, left;

	if (len <= limit) {
		jbuf_append(out, full, len);
		return;
	}
	/* Failures first: what made the pod fail is what a reader of kubectl describe needs. */
	jbuf_begin(out, '{');
	copy_member(out, full, len, "error", budget);
	copy_member(out, full, len, "rearguard", budget);
	copy_member(out, full, len, "exit_code", budget);
	copy_member(out, full, len, "reason", budget);
	left = copy_elements(out, full, len, "fails_pod", budget > 400 ? budget - 400 : 0);
	if (left) {
		jbuf_key(out, "fails_pod_not_shown");
		jbuf_int(out, (long long)left);
	}
	jbuf_key(out, "apps");
	jbuf_int(out, (long long)count_elements(full, len, "apps"));
	left = copy_elements(out, full, len, "sidecars", budget);
	if (left) {
		jbuf_key(out, "sidecars_not_shown");
		jbuf_int(out, (long long)left);
	}
	jbuf_key(out, "truncated");
	jbuf_bool(out, true);
	jbuf_key(out, "full");
	jbuf_str(out, "done");
	jbuf_end(out, '}');
}
