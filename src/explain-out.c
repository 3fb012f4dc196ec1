/*
 * rearguard explain's report, for people (text) and for tools (JSON, the
 * schema of docs/explain.md): each verdict with its evidence, what the
 * webhook would do and the fixes, then, for more than one namespace, the
 * audit by namespace and the label that covers most. Every word a verdict,
 * a reason or a fix has is spelt here once, from its enum.
 */
#include "config.h"

#include "explain.h"

#include "json.h"
#include "log.h"
#include "presets.h"
#include "yamldoc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The JSON's schema version: a change that breaks a reader makes it 2. */
#define EXPLAIN_SCHEMA 1

const char *explain_verdict_word(enum explain_verdict v)
{
	switch (v) {
	case EXPLAIN_FINE: return "fine";
	case EXPLAIN_AT_RISK: return "at-risk";
	case EXPLAIN_SIDECAR_FAILED: return "sidecar-failed";
	case EXPLAIN_HUNG_AGENT: return "hung-with-agent";
	case EXPLAIN_HUNG: return "hung";
	case EXPLAIN_VERDICTS: break;
	}
	return "?";
}

const char *explain_reason_word(enum explain_reason why)
{
	switch (why) {
	case EXPLAIN_COMPLETED: return "completed";
	case EXPLAIN_NOT_A_JOB: return "not-a-job";
	case EXPLAIN_NO_SIDECAR: return "no-sidecar";
	case EXPLAIN_NATIVE: return "native";
	case EXPLAIN_COVERED: return "covered";
	case EXPLAIN_STOPPING: return "stopping";
	case EXPLAIN_APP_FAILED: return "app-failed";
	case EXPLAIN_NATIVE_TEARDOWN: return "native-teardown";
	case EXPLAIN_RUNS_ON: return "runs-on";
	case EXPLAIN_NOT_PERMITTED: return "not-permitted";
	case EXPLAIN_STOP_REFUSED: return "stop-refused";
	case EXPLAIN_IGNORED_STOP: return "ignored-stop";
	case EXPLAIN_APPS_NEVER_SEEN: return "apps-never-seen";
	case EXPLAIN_GATE_TIMEOUT: return "gate-timeout";
	case EXPLAIN_AGENT_ENDED: return "agent-ended";
	case EXPLAIN_NOT_KNOWN: return "not-known";
	case EXPLAIN_AGENT_WAITING: return "agent-waiting";
	case EXPLAIN_NO_AGENT: return "no-agent";
	case EXPLAIN_WEBHOOK_MISSED: return "webhook-missed";
	case EXPLAIN_INIT_SIDECAR: return "init-sidecar";
	case EXPLAIN_SIDECAR_EXIT: return "sidecar-exit";
	case EXPLAIN_AGENT_EXIT: return "agent-exit";
	case EXPLAIN_REASONS: break;
	}
	return "?";
}

const char *explain_fix_word(enum explain_fix_kind k)
{
	switch (k) {
	case EXPLAIN_FIX_LABEL: return "label-namespace";
	case EXPLAIN_FIX_WEBHOOK_DOWN: return "webhook-down";
	case EXPLAIN_FIX_INJECT: return "inject";
	case EXPLAIN_FIX_MESH_NATIVE: return "mesh-native";
	case EXPLAIN_FIX_NATIVE: return "native";
	case EXPLAIN_FIX_NAME_SIDECAR: return "name-sidecar";
	case EXPLAIN_FIX_ANNOTATION: return "annotation";
	case EXPLAIN_FIX_UID: return "uid";
	case EXPLAIN_FIX_STOP: return "stop";
	case EXPLAIN_FIX_EXIT: return "exit";
	case EXPLAIN_FIX_READY: return "ready";
	case EXPLAIN_FIX_APPS: return "apps";
	case EXPLAIN_FIX_SHARE: return "share-process-namespace";
	case EXPLAIN_FIX_INIT_RESTART: return "init-restart-policy";
	case EXPLAIN_FIX_KIND: break;
	}
	return "?";
}

static const char *object_word(enum explain_object k)
{
	switch (k) {
	case EXPLAIN_POD: return "Pod";
	case EXPLAIN_JOB: return "Job";
	case EXPLAIN_CRONJOB: return "CronJob";
	}
	return "?";
}

static const char *webhook_word(enum explain_webhook w)
{
	switch (w) {
	case EXPLAIN_WEBHOOK_NOT_ASKED: return NULL;
	case EXPLAIN_WEBHOOK_ADD: return "add";
	case EXPLAIN_WEBHOOK_LEAVE: return "leave";
	}
	return NULL;
}

/* What a verdict says in one line of the header. */
static const char *verdict_phrase(enum explain_verdict v)
{
	switch (v) {
	case EXPLAIN_FINE: return "fine";
	case EXPLAIN_AT_RISK: return "at risk";
	case EXPLAIN_SIDECAR_FAILED: return "failed because of a sidecar";
	case EXPLAIN_HUNG_AGENT: return "hung, with rearguard";
	case EXPLAIN_HUNG: return "hung";
	case EXPLAIN_VERDICTS: break;
	}
	return "?";
}

static int addf(struct ybuf *b, const char *fmt, ...) RG_PRINTF(2, 3);

static int addf(struct ybuf *b, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	return ybuf_add(b, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static int item_text(const struct explain_item *it, struct ybuf *b)
{
	int rc;
	size_t i;

	rc = addf(b, "%s %s/%s", object_word(it->kind), it->ns, it->name);
	if (rc == 0 && it->job)
		rc = addf(b, " (%s %s)", it->kind == EXPLAIN_POD ? "Job" : "CronJob", it->job);
	if (rc == 0)
		rc = addf(b, ": %s (%s)", verdict_phrase(it->verdict), explain_reason_word(it->reason));
	if (rc == 0 && it->container && it->verdict != EXPLAIN_FINE)
		rc = addf(b, ": container %s, %s", it->container,
			  it->preset ? it->preset->title : "which no preset knows");
	if (rc == 0)
		rc = addf(b, "\n");
	for (i = 0; rc == 0 && i < it->nevidence; i++)
		rc = addf(b, "  %s\n", it->evidence[i]);
	if (rc == 0 && it->webhook != EXPLAIN_WEBHOOK_NOT_ASKED)
		rc = addf(b, "  the webhook would %s%s%s\n",
			  it->webhook == EXPLAIN_WEBHOOK_ADD ? "add rearguard" : "leave it alone",
			  it->nsays ? ": " : "", it->nsays ? it->says[0] : "");
	/* The most direct first; the others are alternatives to it. */
	for (i = 0; rc == 0 && i < it->nfixes; i++)
		rc = addf(b, "  %s %s\n", i ? "or:" : "fix:", it->fixes[i].text ? it->fixes[i].text : "");
	return rc == 0 ? ybuf_add(b, "\n", 1) : rc;
}

/* The audit: one line a namespace, and the label that covers most. */
static int audit_text(const struct explain_report *r, struct ybuf *b)
{
	size_t i, bad = 0;
	int rc;

	rc = addf(b, "%-32s %-8s %6s %8s %7s %8s %7s %6s %9s\n", "NAMESPACE", "LABEL", "HUNG", "AT-RISK", "FAILED",
		  "COVERED", "NATIVE", "FINE", "BY-LABEL");
	for (i = 0; rc == 0 && i < r->nns; i++) {
		const struct explain_ns *n = &r->nss[i];

		if (!n->judged)
			continue;
		bad += n->judged - n->verdicts[EXPLAIN_FINE];
		rc = addf(b, "%-32s %-8s %6zu %8zu %7zu %8zu %7zu %6zu %9zu\n", n->name,
			  n->labelled ? "enabled" : n->disabled ? "disabled" : "-",
			  n->verdicts[EXPLAIN_HUNG] + n->verdicts[EXPLAIN_HUNG_AGENT], n->verdicts[EXPLAIN_AT_RISK],
			  n->verdicts[EXPLAIN_SIDECAR_FAILED], n->covered, n->native, n->verdicts[EXPLAIN_FINE],
			  n->by_label);
	}
	if (rc == 0 && r->best)
		rc = addf(b,
			  "the fix that covers most: kubectl label namespace %s rearguard.io/inject=enabled (%zu of the "
			  "%zu hung, at risk or failed)\n",
			  r->best->name, r->best->by_label, bad);
	else if (rc == 0 && bad)
		rc = addf(b, "no namespace's label covers them: see each one's fixes\n");
	return rc;
}

int explain_text(const struct explain_report *r, struct ybuf *b)
{
	size_t i, count[EXPLAIN_VERDICTS] = {0}, judged = 0, shown = 0;
	int rc = 0;

	for (i = 0; i < r->n; i++) {
		const struct explain_item *it = &r->items[i];

		if (it->reason == EXPLAIN_NOT_A_JOB && !r->o.all)
			continue;
		judged++;
		count[it->verdict]++;
		if (r->o.audit || (it->verdict == EXPLAIN_FINE && !r->o.all))
			continue;
		rc = item_text(it, b);
		shown++;
		if (rc < 0)
			return rc;
	}
	if (r->o.audit || r->nns > 1)
		rc = audit_text(r, b);
	if (rc == 0 && !judged)
		rc = addf(b, "no pod, Job or CronJob in the input (%zu Kubernetes object%s read)\n", r->objects,
			  r->objects == 1 ? "" : "s");
	else if (rc == 0)
		rc = addf(b, "%zu judged: %zu hung, %zu hung with rearguard, %zu at risk, %zu failed because of a sidecar, "
			     "%zu fine%s\n",
			  judged, count[EXPLAIN_HUNG], count[EXPLAIN_HUNG_AGENT], count[EXPLAIN_AT_RISK],
			  count[EXPLAIN_SIDECAR_FAILED], count[EXPLAIN_FINE],
			  count[EXPLAIN_FINE] && !r->o.all && !r->o.audit ? " (--all shows them)" : "");
	return rc;
}

static void str_or_null(struct jbuf *j, const char *s)
{
	if (s)
		jbuf_str(j, s);
	else
		jbuf_null(j);
}

static void item_json(const struct explain_item *it, struct jbuf *j)
{
	size_t i;

	jbuf_begin(j, '{');
	jbuf_key(j, "kind");
	jbuf_str(j, object_word(it->kind));
	jbuf_key(j, "namespace");
	jbuf_str(j, it->ns);
	jbuf_key(j, "name");
	jbuf_str(j, it->name);
	jbuf_key(j, it->kind == EXPLAIN_POD ? "job" : "cronjob");
	str_or_null(j, it->job);
	jbuf_key(j, "verdict");
	jbuf_str(j, explain_verdict_word(it->verdict));
	jbuf_key(j, "reason");
	jbuf_str(j, explain_reason_word(it->reason));
	jbuf_key(j, "container");
	str_or_null(j, it->container);
	/* The preset's name, "unknown" for a container no preset knows, null without a container. */
	jbuf_key(j, "sidecar");
	str_or_null(j, it->preset ? it->preset->name : it->unknown ? "unknown" : NULL);
	jbuf_key(j, "since");
	str_or_null(j, it->since);
	jbuf_key(j, "exit_code");
	if (it->exit_code >= 0)
		jbuf_int(j, it->exit_code);
	else
		jbuf_null(j);
	jbuf_key(j, "rearguard");
	jbuf_bool(j, it->agent);
	jbuf_key(j, "native_sidecars");
	jbuf_bool(j, it->native);
	jbuf_key(j, "evidence");
	jbuf_begin(j, '[');
	for (i = 0; i < it->nevidence; i++)
		jbuf_str(j, it->evidence[i]);
	jbuf_end(j, ']');
	jbuf_key(j, "webhook");
	str_or_null(j, webhook_word(it->webhook));
	jbuf_key(j, "webhook_says");
	jbuf_begin(j, '[');
	for (i = 0; i < it->nsays; i++)
		jbuf_str(j, it->says[i]);
	jbuf_end(j, ']');
	jbuf_key(j, "fixes");
	jbuf_begin(j, '[');
	for (i = 0; i < it->nfixes; i++) {
		jbuf_begin(j, '{');
		jbuf_key(j, "fix");
		jbuf_str(j, explain_fix_word(it->fixes[i].kind));
		jbuf_key(j, "text");
		jbuf_str(j, it->fixes[i].text ? it->fixes[i].text : "");
		jbuf_end(j, '}');
	}
	jbuf_end(j, ']');
	jbuf_end(j, '}');
}

void explain_json(const struct explain_report *r, struct jbuf *j)
{
	size_t i, v;

	jbuf_begin(j, '{');
	jbuf_key(j, "rearguard");
	jbuf_str(j, PACKAGE_VERSION);
	jbuf_key(j, "schema");
	jbuf_int(j, EXPLAIN_SCHEMA);
	jbuf_key(j, "exit_code");
	jbuf_int(j, explain_status(r));
	jbuf_key(j, "items");
	jbuf_begin(j, '[');
	for (i = 0; i < r->n; i++)
		if (r->items[i].reason != EXPLAIN_NOT_A_JOB || r->o.all)
			item_json(&r->items[i], j);
	jbuf_end(j, ']');
	jbuf_key(j, "namespaces");
	jbuf_begin(j, '[');
	for (i = 0; i < r->nns; i++) {
		const struct explain_ns *n = &r->nss[i];

		if (!n->judged)
			continue;
		jbuf_begin(j, '{');
		jbuf_key(j, "namespace");
		jbuf_str(j, n->name);
		jbuf_key(j, "label");
		str_or_null(j, n->labelled ? "enabled" : n->disabled ? "disabled" : NULL);
		jbuf_key(j, "judged");
		jbuf_int(j, (long long)n->judged);
		for (v = 0; v < EXPLAIN_VERDICTS; v++) {
			jbuf_key(j, explain_verdict_word((enum explain_verdict)v));
			jbuf_int(j, (long long)n->verdicts[v]);
		}
		jbuf_key(j, "covered");
		jbuf_int(j, (long long)n->covered);
		jbuf_key(j, "native");
		jbuf_int(j, (long long)n->native);
		jbuf_key(j, "by_label");
		jbuf_int(j, (long long)n->by_label);
		jbuf_end(j, '}');
	}
	jbuf_end(j, ']');
	jbuf_key(j, "best_label");
	if (r->best) {
		jbuf_begin(j, '{');
		jbuf_key(j, "namespace");
		jbuf_str(j, r->best->name);
		jbuf_key(j, "covers");
		jbuf_int(j, (long long)r->best->by_label);
		jbuf_end(j, '}');
	} else {
		jbuf_null(j);
	}
	jbuf_end(j, '}');
	jbuf_append(j, "\n", 1);
}
