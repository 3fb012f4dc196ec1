/*
 * rearguard explain, in memory:
 * - the agent's termination message: summary.c's writer (summary_build,
 *   and summary_termination's short form) and explain's reader on the same
 *   decide states, so that the two cannot drift; then that message in a
 *   pod's status, and the verdict it makes;
 * - what explain says the webhook would do is what the webhook does: every
 *   Job, CronJob and Pod of tests/inject/cases made into an AdmissionReview
 *   here and answered by review_answer, beside explain's verdict on the
 *   same file;
 * - bad input: one error with its line and column, nothing judged.
 */
#include "config.h"

#include "decide.h"
#include "explain.h"
#include "json.h"
#include "log.h"
#include "options.h"
#include "review.h"
#include "summary.h"
#include "tap.h"
#include "util.h"
#include "yamldoc.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A TAP comment: why a comparison failed. */
#define diag(...) (printf("# "), printf(__VA_ARGS__), printf("\n"))

static struct decide *d;
static struct agent_options opt;

/* One sidecar, stopped by spec (a preset or keys), apps exited 0: then the drain, each stop answered by answer(). */
static int drain(const char *spec, int http_status, int signal_err, int64_t *t)
{
	static struct decide_sidecar_config cfg[1];
	struct decide_config dc = {.policy = POLICY_NEVER, .nsidecars = 1, .sidecars = cfg,
				   .startup_timeout_us = 600 * US_PER_S, .stop_timeout_us = 2 * US_PER_S,
				   .kill_after_us = 1 * US_PER_S, .apps_expected = 1};
	struct decide_action act = {0};
	char err[256];
	int i;

	decide_free(d);
	if (opt.sidecars) {
		spec_free(&opt.sidecars[0]);
		free(opt.sidecars);
	}
	opt.sidecars = calloc(1, sizeof(*opt.sidecars));
	opt.nsidecars = 1;
	if (!opt.sidecars || spec_parse(spec, &opt.sidecars[0], err, sizeof(err)) < 0)
		bail_out(err);
	memset(cfg, 0, sizeof(cfg));
	str_copy(cfg[0].name, opt.sidecars[0].name, sizeof(cfg[0].name));
	cfg[0].stop_url = opt.sidecars[0].stop_url;
	cfg[0].stop_signal = cfg[0].stop_url ? 0 : opt.sidecars[0].stop_signal;
	if (decide_new(&dc, 0, &d) < 0)
		bail_out("decide_new");
	decide_sidecar_seen(d, 0, 0);
	decide_app_seen(d, 3, "job", 0);
	decide_app_exited(d, 3, US_PER_S);
	decide_app_status(d, 3, 0, US_PER_S);
	*t = US_PER_S;
	for (i = 0; i < 200; i++) {
		if (!decide_next(d, *t, &act)) {
			*t += US_PER_S;
			continue;
		}
		if (act.kind == DECIDE_EXIT)
			return act.exit_code;
		if (act.kind == DECIDE_HTTP && act.purpose == DECIDE_HTTP_STOP)
			decide_http_result(d, act.sidecar, act.purpose, http_status, *t);
		else if (act.kind == DECIDE_HTTP)
			decide_http_result(d, act.sidecar, act.purpose, -ECONNREFUSED, *t);
		else if (act.kind == DECIDE_SIGNAL && signal_err == 0 && act.signo == SIGKILL) {
			decide_signal_result(d, act.sidecar, 0, *t);
			decide_sidecar_exited(d, act.sidecar, *t);
			decide_sidecar_status(d, act.sidecar, 137, *t);
			decide_sidecar_gone(d, act.sidecar, *t);
		} else if (act.kind == DECIDE_SIGNAL) {
			decide_signal_result(d, act.sidecar, signal_err, *t);
		} else if (act.kind == DECIDE_WRITE) {
			decide_written(d, act.file, 0, *t);
		} else if (act.kind == DECIDE_RESCAN) {
			decide_rescanned(d, 0, *t);
		}
	}
	bail_out("the drain never ended");
	return -1;
}

/* A pod of a Job: app "job" exited 0, container SIDECAR running, the agent terminated with CODE and MESSAGE. */
static char *pod_with(const char *sidecar, const char *image, int code, const char *message, const char *phase)
{
	struct jbuf msg;
	char *out;
	size_t len;

	jbuf_init(&msg);
	jbuf_str(&msg, message);
	len = msg.len + 2048;
	out = malloc(len);
	if (!out || msg.failed)
		bail_out("out of memory");
	snprintf(out, len,
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"batch\","
		 "\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"nightly\"}]},\"spec\":{\"restartPolicy\":\"Never\","
		 "\"shareProcessNamespace\":true,\"containers\":[{\"name\":\"rearguard\",\"image\":\"r/rearguard:1\"},"
		 "{\"name\":\"job\",\"image\":\"busybox\"},{\"name\":\"%s\",\"image\":\"%s\"}]},"
		 "\"status\":{\"phase\":\"%s\",\"containerStatuses\":["
		 "{\"name\":\"rearguard\",\"state\":{\"terminated\":{\"exitCode\":%d,\"message\":%s}}},"
		 "{\"name\":\"job\",\"state\":{\"terminated\":{\"exitCode\":0,\"finishedAt\":\"2026-11-29T01:00:05Z\"}}},"
		 "{\"name\":\"%s\",\"state\":%s}]}}",
		 sidecar, image, phase, code, msg.buf, sidecar,
		 strcmp(phase, "Failed") == 0 ? "{\"terminated\":{\"exitCode\":137}}"
					      : "{\"running\":{\"startedAt\":\"2026-11-29T01:00:01Z\"}}");
	jbuf_free(&msg);
	return out;
}

/* explain's verdict and reason for one input: "hung-with-agent not-permitted". */
static const char *verdict_of(const char *text, const struct explain_options *o)
{
	static char out[640];
	struct explain_report r;
	char err[512];

	explain_report_init(&r, o);
	if (explain_buffer(&r, text, strlen(text), err, sizeof(err)) < 0 || explain_finish(&r) < 0 || r.n != 1) {
		snprintf(out, sizeof(out), "error: %.500s (%zu items)", err, r.n);
	} else {
		snprintf(out, sizeof(out), "%s %s", explain_verdict_word(r.items[0].verdict),
			 explain_reason_word(r.items[0].reason));
	}
	explain_report_free(&r);
	return out;
}

static void summaries(void)
{
	struct explain_options o = {.now_us = 0};
	struct explain_summary s;
	struct jbuf full, term;
	int64_t t;
	char *pod;

	/* A signal the agent may not send: exit 1, the error first, the outcome. */
	is_int(drain("name=fb,match=fluent-bit,stop=signal:TERM", 0, -EPERM, &t), 1, "not permitted: the agent exits 1");
	jbuf_init(&full);
	summary_build(&full, d, &opt, t);
	ok(explain_summary_read(full.buf, full.len, &s) == 0 && s.read, "summary_build's summary is read");
	is_int(s.exit_code, 1, "its exit code");
	is_str(s.reason, "apps-done", "its reason");
	ok(strstr(s.error, "not permitted to signal") != NULL, "its error: %s", s.error);
	is_int((int)s.nsidecars, 1, "one sidecar");
	is_str(s.sidecars[0].name, "fb", "by its spec's name");
	is_str(s.sidecars[0].outcome, "not-permitted", "its outcome");
	is_str(s.sidecars[0].method, "signal:TERM", "its method");
	is_str(s.failed_role, "agent", "the agent failed the pod");
	pod = pod_with("fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:3.0", 1, full.buf, "Running");
	is_str(verdict_of(pod, &o), "hung-with-agent not-permitted", "that message in a pod: not permitted");
	free(pod);
	/* The short form, as in a pod of many containers. */
	jbuf_init(&term);
	summary_termination(&term, full.buf, full.len, full.len - 1);
	ok(term.len < full.len, "the short form is shorter (%zu of %zu bytes)", term.len, full.len);
	ok(explain_summary_read(term.buf, term.len, &s) == 0 && s.truncated, "the short form is read, marked cut");
	is_str(s.sidecars[0].outcome, "not-permitted", "with the sidecar's outcome");
	pod = pod_with("fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:3.0", 1, term.buf, "Running");
	is_str(verdict_of(pod, &o), "hung-with-agent not-permitted", "the short form in a pod: the same verdict");
	free(pod);
	jbuf_free(&term);
	jbuf_free(&full);

	/* Linkerd's disabled shutdown: 404, then the SIGTERM that may not be sent. */
	is_int(drain("linkerd", 404, -EPERM, &t), 1, "404 and not permitted: exit 1");
	jbuf_init(&full);
	summary_build(&full, d, &opt, t);
	ok(explain_summary_read(full.buf, full.len, &s) == 0, "read");
	is_int(s.sidecars[0].status, 404, "the stop's first answer: 404");
	is_str(s.sidecars[0].outcome, "not-permitted", "then not permitted");
	pod = pod_with("linkerd-proxy", "cr.l5d.io/linkerd/proxy:edge-26.8.3", 1, full.buf, "Running");
	is_str(verdict_of(pod, &o), "hung-with-agent stop-refused", "in a pod: the stop refused");
	free(pod);
	jbuf_free(&full);

	/* A sidecar that ignores its stop and SIGTERM: killed, 137, the pod failed. */
	is_int(drain("name=stubborn,match=stubborn,stop=signal:TERM", 0, 0, &t), 0, "killed: the agent exits 0");
	jbuf_init(&full);
	summary_build(&full, d, &opt, t);
	ok(explain_summary_read(full.buf, full.len, &s) == 0, "read");
	is_str(s.sidecars[0].outcome, "killed", "killed");
	is_int(s.sidecars[0].exit_code, 137, "137");
	is_str(s.failed_role, "sidecar", "a sidecar failed the pod");
	pod = pod_with("fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:3.0", 0, full.buf, "Failed");
	is_str(verdict_of(pod, &o), "sidecar-failed sidecar-exit", "in a failed pod: the sidecar's 137 failed it");
	free(pod);
	/* A container no preset knows, named by the agent's spec only, that ran on and was killed. */
	pod = pod_with("stubborn", "example.com/stubborn:1", 0, full.buf, "Failed");
	is_str(verdict_of(pod, &o), "fine app-failed", "a container no spec names is an app: its 137 is an app's");
	free(pod);
	jbuf_free(&full);

	ok(explain_summary_read("{\"exit_code\":1}", 15, &s) < 0 && !s.read, "another program's JSON is no summary");
	ok(explain_summary_read("not json", 8, &s) < 0, "nor is text");
	ok(explain_summary_read("{\"rearguard\":\"0.5.0\",\"exit_code\":1,\"sidecars\":[{\"na", 49, &s) < 0,
	   "a message the kubelet cut is no summary");
}

/* ---- the webhook's decision ------------------------------------------------------ */

/* The review the API server would send for the pod of this template (metadata, spec), here made by hand. */
static int review_of(const struct ystream *s, const struct ynode *tmpl, const char *mesh, enum review_outcome *out)
{
	struct inject_options io = {.image = "registry.example.com/rearguard:test", .mesh = mesh};
	struct ybuf b = {0};
	struct review_answer a;
	const struct ynode *meta = ydoc_get(tmpl, "metadata"), *spec = ydoc_get(tmpl, "spec");
	int rc = 0;

	rc |= ybuf_add(&b, "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"t\","
			   "\"operation\":\"CREATE\",\"kind\":{\"kind\":\"Pod\",\"group\":\"\"},\"object\":{\"kind\":\"Pod\","
			   "\"apiVersion\":\"v1\",\"metadata\":",
		       strlen("{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\",\"request\":{"
			      "\"uid\":\"t\",\"operation\":\"CREATE\",\"kind\":{\"kind\":\"Pod\",\"group\":\"\"},\"object\":{"
			      "\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":"));
	rc |= meta && meta->kind == YNODE_MAP ? ydoc_json(s, meta, &b) : ybuf_add(&b, "{}", 2);
	rc |= ybuf_add(&b, ",\"spec\":", 8);
	rc |= spec && spec->kind == YNODE_MAP ? ydoc_json(s, spec, &b) : ybuf_add(&b, "{}", 2);
	rc |= ybuf_add(&b, "}}}", 3);
	if (rc) {
		ybuf_free(&b);
		return -1;
	}
	rc = review_answer(b.p, b.len, &io, &a);
	ybuf_free(&b);
	if (rc != 200)
		return -1;
	*out = a.outcome;
	review_answer_free(&a);
	return 0;
}

/*
 * A long-running pod that asks for rearguard (rearguard.io/inject:
 * services): the webhook changes it, and explain, which says why a pod
 * that should end does not, has nothing to say of it. Not compared.
 */
#define NOT_COMPARED REVIEW_OUTCOMES

static bool asks_services(const struct ynode *tmpl)
{
	const struct ynode *meta = ydoc_get(tmpl, "metadata");
	const char *v = ydoc_str(ydoc_get(ydoc_get(meta, "labels"), INJECT_LABEL));

	if (!v)
		v = ydoc_str(ydoc_get(ydoc_get(meta, "annotations"), INJECT_LABEL));
	return v && strcmp(v, INJECT_SERVICES) == 0;
}

/* Each template of a file, in its order: what the webhook does with its pod. */
static size_t webhook_outcomes(const char *text, size_t len, const char *mesh, enum review_outcome *out, size_t max)
{
	struct ystream s;
	char err[256];
	size_t i, k, n = 0;

	if (ydoc_parse(text, len, &s, err, sizeof(err)) < 0)
		return 0;
	for (i = 0; i < s.ndocs; i++) {
		const struct ynode *root = s.docs[i].root, *items = ydoc_get(root, "items");
		size_t count = items && items->kind == YNODE_SEQ ? items->n : 1;

		for (k = 0; k < count && n < max; k++) {
			const struct ynode *obj = items && items->kind == YNODE_SEQ ? items->items[k] : root;
			const char *kind = ydoc_str(ydoc_get(obj, "kind")), *api = ydoc_str(ydoc_get(obj, "apiVersion"));
			const struct ynode *tmpl = NULL;

			if (!kind || !api)
				continue;
			if (strcmp(kind, "Pod") == 0 && strcmp(api, "v1") == 0)
				tmpl = obj;
			else if (strcmp(kind, "Job") == 0 && strncmp(api, "batch/", 6) == 0)
				tmpl = ydoc_path(obj, "spec.template");
			else if (strcmp(kind, "CronJob") == 0 && strncmp(api, "batch/", 6) == 0)
				tmpl = ydoc_path(obj, "spec.jobTemplate.spec.template");
			else
				continue;
			if (tmpl && asks_services(tmpl))
				out[n] = NOT_COMPARED;
			else if (!tmpl || review_of(&s, tmpl, mesh, &out[n]) < 0)
				out[n] = REVIEW_SKIPPED;
			n++;
		}
	}
	ydoc_free(&s);
	return n;
}

static void webhook_cases(const char *dir, const char *mesh)
{
	struct dirent **names;
	int n, i;
	size_t compared = 0, added = 0, refused = 0;
	bool same = true;

	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		bail_out("no tests/inject/cases");
	for (i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		size_t len = strlen(name), k, nwh;
		enum review_outcome wh[64];
		struct explain_options o = {.inject = {.mesh = mesh}};
		struct explain_report r;
		char path[1024], err[512], *text = NULL;
		FILE *f;

		if (len < 6 || strcmp(name + len - 5, ".yaml") != 0) {
			free(names[i]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		free(names[i]);
		f = fopen(path, "re");
		if (!f || read_whole_fd(fileno(f), 1 << 20, &text, &len) < 0) {
			if (f)
				fclose(f);
			continue;
		}
		fclose(f);
		nwh = webhook_outcomes(text, len, mesh, wh, 64);
		explain_report_init(&r, &o);
		if (explain_buffer(&r, text, len, err, sizeof(err)) < 0 || explain_finish(&r) < 0) {
			/* A stream with a document that is no object: inject passes it on, explain refuses it. */
			diag("%s: explain refuses it: %s", path, err);
			refused++;
			explain_report_free(&r);
			free(text);
			continue;
		}
		if (r.n != nwh) {
			diag("%s: %zu objects judged, %zu reviewed", path, r.n, nwh);
			same = false;
		}
		for (k = 0; k < r.n && k < nwh; k++) {
			enum explain_webhook e = r.items[k].webhook;
			bool agree = (wh[k] == REVIEW_PATCHED) == (e == EXPLAIN_WEBHOOK_ADD) &&
				     (e != EXPLAIN_WEBHOOK_NOT_ASKED || wh[k] != REVIEW_PATCHED);

			if (wh[k] == NOT_COMPARED)
				continue;
			compared++;
			added += wh[k] == REVIEW_PATCHED;
			if (!agree) {
				diag("%s, object %zu (%s): explain says the webhook would %s, the webhook says %s", path, k,
				     r.items[k].name,
				     e == EXPLAIN_WEBHOOK_ADD ? "add" : e == EXPLAIN_WEBHOOK_LEAVE ? "leave" : "(not asked)",
				     review_outcome_word(wh[k]));
				same = false;
			}
			/* A template the webhook changes is at risk, unless its namespace opted in. */
			if (wh[k] == REVIEW_PATCHED && r.items[k].verdict != EXPLAIN_AT_RISK &&
			    r.items[k].reason != EXPLAIN_COMPLETED) {
				diag("%s, object %zu: the webhook adds rearguard, explain says %s", path, k,
				     explain_verdict_word(r.items[k].verdict));
				same = false;
			}
		}
		explain_report_free(&r);
		free(text);
	}
	free(names);
	ok(same && compared > 40 && added > 20 && refused < 8,
	   "--mesh %s: explain says what the webhook does, for %zu templates (%zu patched)", mesh ? mesh : "(none)",
	   compared, added);
}

static void bad_input(void)
{
	struct explain_options o = {0};
	struct explain_report r;
	char err[512];
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"[{\"Id\": \"4e1f\", \"State\": {\"Running\": true}}]", "1:1: a list, not a Kubernetes object"},
		{"{\"Id\": \"4e1f\", \"Config\": {}}", "1:1: an object without kind"},
		{"{\"apiVersion\": \"v1\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"Pod\"", "truncated dump?"},
		{"apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n", "items without a kind"},
		{"just some text\n", "1:1: a scalar, not a Kubernetes object"},
		{"  \n", "1:1: empty"},
		{"{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [3]}", "1:48: a scalar where a Kubernetes object"},
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		explain_report_init(&r, &o);
		err[0] = '\0';
		ok(explain_buffer(&r, cases[i].text, strlen(cases[i].text), err, sizeof(err)) == -EINVAL &&
			   strstr(err, cases[i].want) && r.n == 0,
		   "bad input %zu: %s", i, err);
		explain_report_free(&r);
	}
	explain_report_init(&r, &o);
	ok(explain_buffer(&r, "{\"apiVersion\":\"v1\",\"items\":[],\"kind\":\"List\"}", 44, err, sizeof(err)) == 0 &&
		   r.n == 0,
	   "an empty List is no error: nothing to judge");
	explain_report_free(&r);
}

int main(void)
{
	FILE *log_file = tmpfile();
	char dir[1024];

	log_setup(LOG_DEBUG, LOG_TEXT, fileno(log_file));
	summaries();
	snprintf(dir, sizeof(dir), "%s/tests/inject/cases", getenv("RG_SRCDIR") ? getenv("RG_SRCDIR") : "..");
	webhook_cases(dir, NULL);
	webhook_cases(dir, "istio");
	bad_input();
	if (opt.sidecars) {
		spec_free(&opt.sidecars[0]);
		free(opt.sidecars);
	}
	decide_free(d);
	return done_testing();
}
