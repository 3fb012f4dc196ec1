/*
 * review_answer: AdmissionReviews in, answers out, each patch applied by
 * the RFC 6902 applier below (add, replace, remove; paths unescaped) and
 * the pod it makes compared with what rearguard inject writes for the same
 * pod. Every pod template of tests/inject/cases goes through the same
 * comparison, and every patched pod reviewed again must give no patch.
 */
#include "config.h"

#include "inject.h"
#include "review.h"
#include "tap.h"
#include "util.h"
#include "yamldoc.h"

#include "../helpers/jsonpatch.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

static const struct inject_options opts = {.image = "registry.example.com/rearguard:test"};

/* ---- JSON trees: parsing, comparing, writing ------------------------------------ */

/* Equal as JSON values: members in any order. */
static bool equal(const struct ynode *a, const struct ynode *b)
{
	size_t i;

	if (!a || !b || a->kind != b->kind)
		return false;
	if (a->kind == YNODE_SCALAR)
		return a->len == b->len && memcmp(a->value, b->value, a->len) == 0 && quoted(a) == quoted(b);
	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i += a->kind == YNODE_MAP ? 2 : 1)
		if (a->kind == YNODE_MAP ? !equal(ydoc_get(b, ydoc_str(a->items[i])), a->items[i + 1])
					 : !equal(a->items[i], b->items[i]))
			return false;
	return true;
}

static char *json_of(const struct ystream *s, const struct ynode *n)
{
	struct ybuf b = {0};

	if (ydoc_json(s, n, &b) < 0) {
		ybuf_free(&b);
		return NULL;
	}
	return b.p;
}

static bool is(const struct ynode *n, const char *v)
{
	const char *s = ydoc_str(n);

	return s && strcmp(s, v) == 0;
}

/* ---- reviews -------------------------------------------------------------------------- */

static char *review_of(const char *api, const char *kind, const char *op, const char *object)
{
	size_t n = strlen(object) + 512;
	char *r = malloc(n);

	snprintf(r, n,
		 "{\"apiVersion\":\"admission.k8s.io/%s\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"0b9c-42\","
		 "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"%s\"},\"resource\":{\"group\":\"\",\"version\":"
		 "\"v1\",\"resource\":\"pods\"},\"namespace\":\"jobs\",\"operation\":\"%s\",\"object\":%s}}",
		 api, kind, op, object);
	return r;
}

/* What one review gave: the status, the answer's tree, the patch decoded. */
struct result {
	int status;
	struct review_answer a;
	struct tree answer;
	char *patch;
	size_t patchlen;
	size_t warnings;
	bool warnings_short;
};

static void result_free(struct result *r)
{
	review_answer_free(&r->a);
	if (r->status == 200)
		ydoc_free(&r->answer.s);
	free(r->patch);
	memset(r, 0, sizeof(*r));
}

static bool review(const char *body, const struct inject_options *o, struct result *r)
{
	const struct ynode *resp, *w;
	const char *b64;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->status = review_answer(body, strlen(body), o, &r->a);
	if (r->status != 200)
		return r->status == 400;
	if (!parse(r->a.body, r->a.len, &r->answer))
		return false;
	resp = ydoc_get(r->answer.root, "response");
	b64 = ydoc_str(ydoc_get(resp, "patch"));
	if (b64 && !(r->patch = unbase64(b64, &r->patchlen)))
		return false;
	w = ydoc_get(resp, "warnings");
	r->warnings_short = true;
	for (i = 0; w && i < w->n; i++)
		r->warnings_short &= w->items[i]->len <= REVIEW_WARNING_MAX;
	r->warnings = w ? w->n : 0;
	return true;
}

/* inject's own output for the pod as a JSON document, parsed. */
static bool inject_json(const char *pod, const struct inject_options *o, struct tree *t)
{
	char *out, err[512];
	size_t len;
	bool good;

	if (inject_buffer(pod, strlen(pod), o, &out, &len, err, sizeof(err)) < 0) {
		printf("# inject: %s\n", err);
		return false;
	}
	good = parse(out, len, t);
	free(out);
	return good;
}

/*
 * The pod, reviewed: the answer's patch applied to it gives what inject
 * writes (with REVIEW_INJECTED besides), and the patched pod reviewed
 * again gives no patch. Returns the patched pod's JSON (to free), or NULL.
 */
static char *check_pod(const char *name, const char *pod, const struct inject_options *o, bool want_patch)
{
	struct result r, again;
	struct tree t, want, pt;
	char *body = review_of("v1", "Pod", "CREATE", pod), *patched = NULL;
	struct ynode *ann;
	bool good;

	good = review(body, o, &r) && r.status == 200;
	ok(good, "%s: answered", name);
	free(body);
	if (!good) {
		result_free(&r);
		return NULL;
	}
	ok(r.warnings_short, "%s: every warning at most %d bytes", name, REVIEW_WARNING_MAX);
	is_str(ydoc_str(ydoc_path(r.answer.root, "response.allowed")), "true", "%s: allowed", name);
	is_int(r.patch != NULL, want_patch, "%s: %s", name, want_patch ? "a patch" : "no patch");
	is_int(r.a.outcome, want_patch ? REVIEW_PATCHED : REVIEW_UNCHANGED, "%s: the outcome", name);
	if (!r.patch || !parse(pod, strlen(pod), &t)) {
		result_free(&r);
		return NULL;
	}
	good = apply(&t, r.patch, r.patchlen, &pt);
	ok(good, "%s: the patch applies to the pod as sent", name);
	if (good && inject_json(pod, o, &want)) {
		ann = ydoc_path(want.root, "metadata.annotations");
		ok(ann && ydoc_set(&want.s, ann, REVIEW_INJECTED, ydoc_scalar(&want.s, PACKAGE_VERSION, YDOC_TEXT),
				   false) == 0,
		   "%s: marked", name);
		ok(equal(t.root, want.root), "%s: the patched pod is what inject writes, marked", name);
		if (!equal(t.root, want.root)) {
			char *g = json_of(&t.s, t.root), *w = json_of(&want.s, want.root);

			printf("#   got  %s\n#   want %s\n", g, w);
			free(g);
			free(w);
		}
		ydoc_free(&want.s);
		patched = json_of(&t.s, t.root);
	}
	ydoc_free(&pt.s);
	ydoc_free(&t.s);
	result_free(&r);
	if (patched) {
		body = review_of("v1", "Pod", "CREATE", patched);
		good = review(body, o, &again) && again.status == 200;
		ok(good && !again.patch && again.a.outcome == REVIEW_UNCHANGED && again.warnings == 0,
		   "%s: reviewed again (reinvoked): no patch, nothing said", name);
		result_free(&again);
		free(body);
	}
	return patched;
}

#define ISTIO_POD                                                                                                   \
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"report-\",\"namespace\":\"jobs\"," \
	"\"labels\":{\"job-name\":\"report\"}%s},\"spec\":{\"restartPolicy\":\"%s\",\"containers\":["              \
	"{\"name\":\"report\",\"image\":\"busybox\",\"args\":[\"sh\",\"-c\",\"true\"],\"resources\":{},"             \
	"\"terminationMessagePath\":\"/dev/termination-log\",\"imagePullPolicy\":\"IfNotPresent\"},"                \
	"{\"name\":\"istio-proxy\",\"image\":\"docker.io/istio/proxyv2:1.20.0\",\"args\":[\"proxy\",\"sidecar\"],"  \
	"\"ports\":[{\"containerPort\":15090,\"protocol\":\"TCP\",\"name\":\"http-envoy-prom\"}]}%s]%s}}"

static char *pod(const char *annotations, const char *policy, const char *more_ctrs, const char *more_spec)
{
	char *p = malloc(4096);

	snprintf(p, 4096, ISTIO_POD, annotations, policy, more_ctrs, more_spec);
	return p;
}

static void istio_job(void)
{
	char *p = pod("", "Never", "", ""), *patched;
	struct result r;
	char *body;

	patched = check_pod("an Istio Job's pod", p, &opts, true);
	body = review_of("v1", "Pod", "CREATE", p);
	if (review(body, &opts, &r) && r.patch) {
		ok(strstr(r.patch, "\"path\":\"/metadata/annotations\""), "the annotations are made where absent");
		ok(strstr(r.patch, "\"path\":\"/spec/containers/0\"") && strstr(r.patch, "\"op\":\"add\""),
		   "the agent is added first");
		ok(!strstr(r.patch, "\"path\":\"/spec\","), "no replacement of /spec");
		ok(r.warnings >= 1, "what inject said is a warning (%zu)", r.warnings);
		is_str(ydoc_str(ydoc_path(r.answer.root, "apiVersion")), "admission.k8s.io/v1", "v1 answered in v1");
		is_str(ydoc_str(ydoc_path(r.answer.root, "response.uid")), "0b9c-42", "the request's uid");
		is_str(ydoc_str(ydoc_path(r.answer.root, "response.patchType")), "JSONPatch", "a JSON Patch");
	}
	result_free(&r);
	free(body);
	free(patched);
	free(p);
	/* An annotation key with a slash, in annotations that exist: escaped as ~1. */
	p = pod(",\"annotations\":{\"a~b/c\":\"x\"}", "OnFailure", "", "");
	body = review_of("v1", "Pod", "CREATE", p);
	if (review(body, &opts, &r) && r.patch)
		ok(strstr(r.patch, "/metadata/annotations/kubectl.kubernetes.io~1default-container"),
		   "a slash in a key is ~1 in the path");
	result_free(&r);
	free(body);
	free(check_pod("annotations there, OnFailure", p, &opts, true));
	free(p);
	/* --gate reorders the containers: the list is replaced whole, and a second review leaves it. */
	p = pod("", "Never", "", "");
	{
		struct inject_options gated = opts;

		gated.gate = true;
		body = review_of("v1", "Pod", "CREATE", p);
		if (review(body, &gated, &r) && r.patch)
			ok(strstr(r.patch, "{\"op\":\"replace\",\"path\":\"/spec/containers\","),
			   "gated: the containers replaced whole");
		result_free(&r);
		free(body);
		free(check_pod("gated", p, &gated, true));
	}
	free(p);
}

/*
 * A sidecar no preset knows, stopped by SIGTERM, with its command given:
 * the webhook wraps it as inject does (the patch puts the wrapper's words
 * before the command, mounts, the binary's volume and its installer), and a
 * second review changes nothing; one without a command is only said.
 */
static void wrapped(void)
{
	static const char web[] =
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"report-\",\"annotations\":"
	    "{\"rearguard.io/sidecars\":\"web,entry\"}},\"spec\":{\"restartPolicy\":\"OnFailure\",\"containers\":["
	    "{\"name\":\"report\",\"image\":\"busybox\",\"command\":[\"sh\",\"-c\",\"true\"]},"
	    "{\"name\":\"web\",\"image\":\"busybox\",\"command\":[\"sh\",\"-c\",\"exec busybox httpd -f\"]},"
	    "{\"name\":\"entry\",\"image\":\"registry.acme.example/entry:1\"}]}}";
	struct result r;
	char *body = review_of("v1", "Pod", "CREATE", web);

	if (review(body, &opts, &r) && r.patch) {
		ok(strstr(r.patch, "{\"op\":\"add\",\"path\":\"/spec/containers/2/command/0\",\"value\":"
				   "\"/opt/rearguard/rearguard\"}") != NULL,
		   "the wrapper's words go before web's command, one by one");
		ok(strstr(r.patch, "\"path\":\"/spec/initContainers\"") && strstr(r.patch, "rearguard-install"),
		   "the installer is added");
		ok(r.warnings >= 2, "what was wrapped and what could not be is said (%zu)", r.warnings);
	}
	result_free(&r);
	free(body);
	free(check_pod("a wrapped sidecar", web, &opts, true));
}

/* Another injector added a proxy after the first review: the reinvocation gives it its spec and fixes. */
static void reinvocation(void)
{
	static const char cloudsql[] = "{\"name\":\"cloud-sql-proxy\",\"image\":\"gcr.io/cloud-sql-connectors/"
				       "cloud-sql-proxy:2.8.0\",\"args\":[\"project:region:db\"]}";
	char *p = pod("", "Never", "", ""), *patched = check_pod("before a mesh", p, &opts, true), *grown, *body;
	struct tree t, added, pt;
	const struct ynode *env;
	const char *spec = NULL;
	struct ynode *ctrs;
	struct result r;
	size_t i;

	free(p);
	if (!patched || !parse(patched, strlen(patched), &t) || !parse(cloudsql, strlen(cloudsql), &added)) {
		ok(0, "the patched pod parses");
		free(patched);
		return;
	}
	/* The other injector's container, last as webhooks put theirs; the API server's defaults on the agent. */
	ctrs = ydoc_path(t.root, "spec.containers");
	ok(ctrs && inject_is_agent(ctrs->items[0]), "the agent is first in the patched pod");
	ydoc_set(&t.s, ctrs->items[0], "terminationMessagePath", ydoc_scalar(&t.s, "/dev/termination-log", YDOC_TEXT),
		 false);
	ydoc_set(&t.s, ctrs->items[0], "imagePullPolicy", ydoc_scalar(&t.s, "IfNotPresent", YDOC_TEXT), false);
	/* The ServiceAccount admission plugin mounts the token in every container, the agent's too. */
	{
		static const char token[] = "{\"name\":\"default-token-x\",\"readOnly\":true,\"mountPath\":"
					    "\"/var/run/secrets/kubernetes.io/serviceaccount\"}";
		struct tree tk;
		struct result r0;
		char *defaulted, *b0;

		if (parse(token, strlen(token), &tk)) {
			ydoc_append(&t.s, ydoc_get(ctrs->items[0], "volumeMounts"), graft(&t.s, tk.root));
			ydoc_free(&tk.s);
		}
		defaulted = json_of(&t.s, t.root);
		b0 = review_of("v1", "Pod", "CREATE", defaulted);
		ok(review(b0, &opts, &r0) && !r0.patch && r0.a.outcome == REVIEW_UNCHANGED,
		   "reinvoked after the API server's defaults and the token's volumeMount: no patch");
		result_free(&r0);
		free(b0);
		free(defaulted);
	}
	ydoc_append(&t.s, ctrs, graft(&t.s, added.root));
	grown = json_of(&t.s, t.root);
	ydoc_free(&t.s);
	body = review_of("v1", "Pod", "CREATE", grown);
	ok(review(body, &opts, &r) && r.patch, "reinvoked after another injector: a patch");
	is_int(r.a.outcome, REVIEW_PATCHED, "...patched");
	if (r.patch && parse(grown, strlen(grown), &t)) {
		ok(apply(&t, r.patch, r.patchlen, &pt), "...which applies");
		env = ydoc_get(ydoc_path(t.root, "spec.containers")->items[0], "env");
		for (i = 0; env && i < env->n; i++)
			if (is(ydoc_get(env->items[i], "name"), "REARGUARD_SIDECARS"))
				spec = ydoc_str(ydoc_get(env->items[i], "value"));
		ok(spec && strstr(spec, "istio") && strstr(spec, "cloud"), "the agent stops the new proxy too: %s",
		   spec ? spec : "(none)");
		ok(strstr(r.patch, "terminationMessagePath") == NULL, "the API server's defaults stay");
		free(patched);
		patched = json_of(&t.s, t.root);
		ydoc_free(&pt.s);
		ydoc_free(&t.s);
	}
	result_free(&r);
	free(body);
	body = review_of("v1", "Pod", "CREATE", patched);
	ok(review(body, &opts, &r) && !r.patch && r.warnings == 0, "and again: no patch");
	result_free(&r);
	free(body);
	ydoc_free(&added.s);
	free(grown);
	free(patched);
}

/* Each review the webhook does not patch, and what it says. */
static void skips(void)
{
	static const struct {
		const char *name, *api, *kind, *op, *object;
		int status;
		enum review_outcome outcome;
		bool warns;
	} cases[] = {
	    {"a ConfigMap", "v1", "ConfigMap", "CREATE", "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}", 200,
	     REVIEW_SKIPPED, true},
	    {"an UPDATE", "v1", "Pod", "UPDATE", "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}", 200, REVIEW_SKIPPED, true},
	    {"no object", "v1", "Pod", "CREATE", "null", 200, REVIEW_SKIPPED, true},
	    {"a Deployment's pod", "v1", "Pod", "CREATE", NULL, 200, REVIEW_UNCHANGED, false},
	    {"opted out", "v1", "Pod", "CREATE", NULL, 200, REVIEW_UNCHANGED, true},
	    {"no sidecar", "v1", "Pod", "CREATE",
	     "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"},\"spec\":{\"restartPolicy\":"
	     "\"Never\",\"containers\":[{\"name\":\"a\",\"image\":\"busybox\"}]}}",
	     200, REVIEW_UNCHANGED, true},
	    {"a native sidecar only", "v1", "Pod", "CREATE",
	     "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"},\"spec\":{\"restartPolicy\":"
	     "\"Never\",\"initContainers\":[{\"name\":\"istio-proxy\",\"image\":\"docker.io/istio/proxyv2:1.20.0\","
	     "\"restartPolicy\":\"Always\"}],\"containers\":[{\"name\":\"a\",\"image\":\"busybox\"}]}}",
	     200, REVIEW_UNCHANGED, true},
	    {"rearguard there, by hand", "v1", "Pod", "CREATE", NULL, 200, REVIEW_UNCHANGED, true},
	    {"v1beta1", "v1beta1", "Pod", "CREATE", NULL, 200, REVIEW_PATCHED, true},
	};
	char *made[ARRAY_SIZE(cases)] = {0};
	size_t i;

	made[3] = pod("", "Always", "", "");
	made[4] = pod(",\"labels\":{\"rearguard.io/inject\":\"disabled\"}", "Never", "", "");
	made[7] = pod("", "Never", ",{\"name\":\"rearguard\",\"image\":\"example.com/rearguard:1\"}", "");
	made[8] = pod("", "Never", "", "");
	/* The labels of made[4] come twice: the second mapping wins in neither; build it by hand. */
	free(made[4]);
	made[4] = malloc(4096);
	snprintf(made[4], 4096, ISTIO_POD, ",\"annotations\":{\"rearguard.io/inject\":\"disabled\"}", "Never", "", "");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *body = review_of(cases[i].api, cases[i].kind, cases[i].op, made[i] ? made[i] : cases[i].object);
		struct result r;
		bool good = review(body, &opts, &r);

		is_int(r.status, cases[i].status, "%s: status", cases[i].name);
		if (good && r.status == 200) {
			is_int(r.a.outcome, cases[i].outcome, "%s: %s", cases[i].name,
			       review_outcome_word(cases[i].outcome));
			is_int(r.warnings > 0, cases[i].warns, "%s: %s", cases[i].name,
			       cases[i].warns ? "says why" : "says nothing");
			is_str(ydoc_str(ydoc_path(r.answer.root, "response.allowed")), "true", "%s: allowed",
			       cases[i].name);
			is_int(r.patch != NULL, cases[i].outcome == REVIEW_PATCHED, "%s: patch", cases[i].name);
			if (strcmp(cases[i].api, "v1beta1") == 0)
				is_str(ydoc_str(ydoc_get(r.answer.root, "apiVersion")), "admission.k8s.io/v1beta1",
				       "v1beta1 answered in v1beta1");
		}
		result_free(&r);
		free(body);
		free(made[i]);
	}
}

static bool parsers_agree(const char *text);

/* What is not JSON, which libyaml reads: ydoc_parse_json says where, in one line. */
static void not_json(void)
{
	static const char *const texts[] = {
	    "{\"a\":\"x\ny\"}", "{\"a\":1,}", "[1,]", "{\"a\":01}", "{a: 1}", "{\"a\":1} {}", "'a'",
	    "{\"a\":\"\\x41\"}", "{\"a\":-}", "{\"a\":1.}", "{\"a\":1e}", "[tru]", "{\"a\" 1}", "",
	    "[1 2]", "{\"a\":&x 1}", "\"abc",
	};
	static const char *const good[] = {
	    "{}", "[]", " {\"a\" : [1, -2.5e+3, true, false, null, \"\\u00e9\\/\\t\"]}\r\n", "\"x\"",
	    "{\"a\":{\"b\":[{}]},\"a\":2}",
	};
	char err[128];
	struct ystream s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(texts); i++) {
		int rc = ydoc_parse_json(texts[i], strlen(texts[i]), &s, err, sizeof(err));

		ok(rc == -EINVAL && strchr(err, ':') && !strchr(err, '\n'), "not JSON (%zu): %s", i,
		   rc == -EINVAL ? err : "read");
		if (rc == 0)
			ydoc_free(&s);
	}
	for (i = 0; i < ARRAY_SIZE(good); i++)
		ok(parsers_agree(good[i]), "JSON (%zu) read as libyaml reads it", i);
	ok(ydoc_parse_json("\"\\ud83d\\ude00\"", 14, &s, err, sizeof(err)) == 0 &&
	       strcmp(s.docs[0].root->value, "\xf0\x9f\x98\x80") == 0,
	   "a surrogate pair is one character (libyaml refuses them)");
	ydoc_free(&s);
	ok(ydoc_parse_json("\"\\ud800x\"", 9, &s, err, sizeof(err)) == 0 && strcmp(s.docs[0].root->value, "\xef\xbf\xbdx") == 0,
	   "a lone surrogate is U+FFFD");
	ydoc_free(&s);
}

static void invalid(void)
{
	static const char *const bodies[] = {
	    "",
	    "garbage",
	    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"1\"",
	    "[1, 2]",
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}",
	    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
	    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"\"}}",
	    "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest: {uid: a}\n",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bodies); i++) {
		struct review_answer a;
		int status = review_answer(bodies[i], strlen(bodies[i]), &opts, &a);

		is_int(status, 400, "no review (%zu): 400", i);
		ok(a.body && a.len > 1 && a.body[a.len - 1] == '\n' && !memchr(a.body, '\n', a.len - 1),
		   "...said in one line: %s", a.what);
		is_int(a.outcome, REVIEW_INVALID, "...invalid");
		review_answer_free(&a);
	}
}

/* The same tree, node for node: kinds, values, quoting, where each was read, the items as read. */
static bool same_tree(const struct ynode *a, const struct ynode *b, const char **why)
{
	size_t i;

	if (a->kind != b->kind || a->line != b->line || a->column != b->column || a->start != b->start ||
	    a->end != b->end || a->orig_n != b->orig_n || a->n != b->n) {
		*why = "kind, place or size";
		return false;
	}
	if (a->kind == YNODE_SCALAR) {
		if (a->len != b->len || memcmp(a->value, b->value, a->len) != 0 || a->style != b->style) {
			*why = a->value;
			return false;
		}
		return true;
	}
	if (a->style != b->style) {
		*why = "style";
		return false;
	}
	for (i = 0; i < a->n; i++)
		if (a->orig[i] != a->items[i] || b->orig[i] != b->items[i] || !same_tree(a->items[i], b->items[i], why))
			return false;
	return true;
}

/* ydoc_parse_json reads a JSON text as ydoc_parse (libyaml) does. */
static bool parsers_agree(const char *text)
{
	struct ystream y, j;
	char err[256];
	const char *why = "";
	bool same;

	if (ydoc_parse(text, strlen(text), &y, err, sizeof(err)) < 0) {
		printf("# ydoc_parse: %s\n", err);
		return false;
	}
	if (ydoc_parse_json(text, strlen(text), &j, err, sizeof(err)) < 0) {
		printf("# ydoc_parse_json: %s\n", err);
		ydoc_free(&y);
		return false;
	}
	same = y.ndocs == 1 && same_tree(y.docs[0].root, j.docs[0].root, &why) && j.docs[0].json == y.docs[0].json;
	if (!same)
		printf("# differ at: %s\n", why);
	ydoc_free(&y);
	ydoc_free(&j);
	return same;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	long n;

	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (text = malloc((size_t)n + 1)) && fread(text, 1, (size_t)n, f) == (size_t)n) {
		text[n] = '\0';
		*len = (size_t)n;
	} else {
		free(text);
		text = NULL;
	}
	if (f)
		fclose(f);
	return text;
}

/*
 * Every pod template of inject's golden cases (their options' cases
 * apart), as a pod: reviewed, patched, compared with inject's output.
 */
static void golden(void)
{
	const char *src = getenv("srcdir");
	char dir[4096], path[8192];
	struct dirent *e;
	size_t pods = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/tests/inject/cases", src ? src : ".");
	d = opendir(dir);
	if (!d) {
		ok(0, "%s: %s", dir, strerror(errno));
		return;
	}
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name), len, k;
		struct tree t;
		char *text;

		if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%.*s.args", dir, (int)(n - 5), e->d_name);
		if (access(path, F_OK) == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!(text = slurp(path, &len)) || ydoc_parse(text, len, &t.s, path, sizeof(path)) < 0) {
			free(text);
			continue;
		}
		for (k = 0; k < t.s.ndocs; k++) {
			const struct ynode *obj = t.s.docs[k].root, *tmpl;
			const char *kind = ydoc_str(ydoc_get(obj, "kind"));
			char *meta, *spec, *podtext, *patched, name[600];
			size_t m;

			if (!kind)
				continue;
			tmpl = strcmp(kind, "Job") == 0	      ? ydoc_path(obj, "spec.template")
			       : strcmp(kind, "CronJob") == 0 ? ydoc_path(obj, "spec.jobTemplate.spec.template")
			       : strcmp(kind, "Pod") == 0     ? obj
							      : NULL;
			if (!tmpl || !ydoc_get(tmpl, "spec") || ydoc_get(tmpl, "spec")->kind != YNODE_MAP)
				continue;
			meta = ydoc_get(tmpl, "metadata") ? json_of(&t.s, ydoc_get(tmpl, "metadata")) : strdup("{}");
			spec = json_of(&t.s, ydoc_get(tmpl, "spec"));
			if (!meta || !spec || strstr(spec, "{{") || strstr(meta, "{{")) {
				free(meta);
				free(spec);
				continue;
			}
			m = strlen(meta) + strlen(spec) + 64;
			podtext = malloc(m);
			snprintf(podtext, m, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":%s,\"spec\":%s}", meta,
				 spec);
			snprintf(name, sizeof(name), "%s, document %zu", e->d_name, k + 1);
			ok(parsers_agree(podtext), "%s: the JSON parser reads it as libyaml does", name);
			{
				struct result r;
				char *body = review_of("v1", "Pod", "CREATE", podtext);
				bool patch = review(body, &opts, &r) && r.patch;

				result_free(&r);
				free(body);
				patched = check_pod(name, podtext, &opts, patch);
				ok(!patch || patched, "%s: patched", name);
			}
			pods++;
			free(patched);
			free(podtext);
			free(meta);
			free(spec);
		}
		ydoc_free(&t.s);
		free(text);
	}
	closedir(d);
	ok(pods >= 40, "the golden cases gave %zu pods", pods);
}

int main(void)
{
	istio_job();
	wrapped();
	reinvocation();
	skips();
	invalid();
	not_json();
	golden();
	return done_testing();
}
