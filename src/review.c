/*
 * The webhook's decision: an AdmissionReview read, inject's decision made
 * on its pod (inject_pod), and the answer written with the change as a
 * JSON Patch.
 *
 * inject changes the review's pod in its tree, and the patch is what the
 * change walk finds (yamldoc-changes.c, which inject's text edits use
 * too): a member the pod lacked is added, an item inject put in a list is
 * added at its index, a value put in another's place replaces it. A list
 * whose items inject reordered (--gate) is replaced whole. Nothing inject did not
 * change appears in the patch, so the patch applies to the object as sent
 * whatever else the API server put in it.
 *
 * A pod reviewed again (reinvocationPolicy: IfNeeded: another webhook
 * changed it after ours) carries REVIEW_INJECTED. Its agent is taken out
 * and the pod injected afresh, so that a proxy another injector added is
 * found, given its spec and its fixes; the agent made again replaces the
 * old one only where it differs from what the old one holds (the API
 * server filled in defaults since: those are no difference), so a pod
 * with nothing new gets an empty patch.
 */
#include "config.h"

#include "review.h"

#include "inject.h"
#include "injectplan.h"
#include "json.h"
#include "log.h"
#include "util.h"
#include "yamldoc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define PATH_MAX_LEN 2048

const char *review_outcome_word(enum review_outcome o)
{
	static const char *const words[REVIEW_OUTCOMES] = {"patched", "unchanged", "skipped", "invalid"};

	return o < REVIEW_OUTCOMES ? words[o] : "?";
}

/* ---- the patch ------------------------------------------------------------------ */

struct patch {
	const struct ystream *s; /* the tree given to inject: the values come from it */
	struct jbuf j;		 /* the operations, a JSON array */
	size_t n;
	int err;
};

/*
 * The place (the change walk's, yamldoc.h) as an RFC 6901 pointer, ~ and
 * / escaped, at out + *n; false when it does not fit, or when a mapping on
 * the way has the key twice: the path would be the API server's other
 * member (its decoder keeps a key's last value, inject read the first).
 */
static bool place_path(const struct ydoc_place *pl, char *out, size_t *n)
{
	char num[24];
	size_t i, k;

	if (!pl)
		return true;
	if (!place_path(pl->up, out, n) || *n + 1 >= PATH_MAX_LEN)
		return false;
	out[(*n)++] = '/';
	if (!pl->key) {
		k = (size_t)snprintf(num, sizeof(num), "%zu", pl->index);
		if (*n + k >= PATH_MAX_LEN)
			return false;
		memcpy(out + *n, num, k);
		*n += k;
		return true;
	}
	if (pl->key->kind != YNODE_SCALAR || ydoc_get(pl->coll, pl->key->value) != pl->node)
		return false;
	for (i = 0; i < pl->key->len; i++) {
		char c = pl->key->value[i];
		const char *esc = c == '~' ? "~0" : c == '/' ? "~1" : NULL;

		if (*n + 3 >= PATH_MAX_LEN)
			return false;
		if (esc) {
			memcpy(out + *n, esc, 2);
			*n += 2;
		} else {
			out[(*n)++] = c;
		}
	}
	return true;
}

/*
 * value as JSON at the end of the patch's text. ydoc_json writes into a
 * ybuf, which is laid out as a jbuf is (the bytes, their length, the room,
 * a NUL after them): the patch's own buffer is lent to it, so that a value
 * as large as the pod (a list replaced whole) is written once, not copied.
 */
static int append_json(struct patch *p, const struct ynode *value)
{
	struct ybuf b = {p->j.buf, p->j.len, p->j.cap};
	int rc;

	if (p->j.failed)
		return -ENOMEM;
	rc = ydoc_json(p->s, value, &b);
	p->j.buf = b.p;
	p->j.len = b.len;
	p->j.cap = b.cap;
	p->j.pending_key = false;
	return rc;
}

/* One operation: op "add" or "replace" of value at the place (a path no patch can say: -EINVAL). */
static void op(struct patch *p, const char *name, const struct ydoc_place *at, const struct ynode *value)
{
	size_t mark = p->j.len, n = 0;
	char path[PATH_MAX_LEN];
	int rc;

	if (p->err)
		return;
	if (!place_path(at, path, &n)) {
		p->err = -EINVAL;
		return;
	}
	path[n] = '\0';
	jbuf_begin(&p->j, '{');
	jbuf_key(&p->j, "op");
	jbuf_str(&p->j, name);
	jbuf_key(&p->j, "path");
	jbuf_str(&p->j, path);
	jbuf_key(&p->j, "value");
	rc = append_json(p, value);
	if (rc < 0) {
		p->err = rc;
		p->j.len = mark;
		return;
	}
	jbuf_end(&p->j, '}');
	p->n++;
}

enum jkind { J_NULL, J_BOOL, J_NUMBER, J_STRING };

/* What JSON value a scalar is. */
static enum jkind jkind(const struct ynode *n)
{
	char *end;

	if (n->text || n->tag || (n->style != YAML_ANY_SCALAR_STYLE && n->style != YAML_PLAIN_SCALAR_STYLE))
		return J_STRING;
	if (n->len == 0 || strcmp(n->value, "null") == 0 || strcmp(n->value, "~") == 0)
		return J_NULL;
	if (strcmp(n->value, "true") == 0 || strcmp(n->value, "false") == 0)
		return J_BOOL;
	strtod(n->value, &end);
	return *end == '\0' ? J_NUMBER : J_STRING;
}

/*
 * Whether a holds all that b says: equal scalars, every member of b in a
 * with a value that holds it, each item of a list held by one of a's, in
 * order. a may hold more (the defaults the API server filled in, the
 * items its admission plugins added).
 */
static bool holds(const struct ynode *a, const struct ynode *b, int depth)
{
	size_t i, j;

	if (!a || a->kind != b->kind || depth > YDOC_MAX_DEPTH)
		return false;
	switch (b->kind) {
	case YNODE_SCALAR:
		return a->len == b->len && memcmp(a->value, b->value, b->len) == 0 && jkind(a) == jkind(b);
	case YNODE_MAP:
		for (i = 0; i + 1 < b->n; i += 2) {
			const char *k = ydoc_str(b->items[i]);

			if (!k || !holds(ydoc_get(a, k), b->items[i + 1], depth + 1))
				return false;
		}
		return true;
	case YNODE_SEQ:
		/* b's items in order among a's: the API server adds items too (the service account's volumeMount). */
		for (i = j = 0; i < b->n; i++) {
			while (j < a->n && !holds(a->items[j], b->items[i], depth + 1))
				j++;
			if (j++ == a->n)
				return false;
		}
		return true;
	default:
		return false;
	}
}

/*
 * One change of the pod (the change walk's) as an operation: a member
 * added, an item put in at its index, a value put in another's place
 * (unless the old one holds it already: the API server's defaults are no
 * difference), a list reordered (--gate) replaced whole.
 */
static int patch_change(void *data, const struct ydoc_change *c)
{
	struct patch *p = data;

	switch (c->kind) {
	case YDOC_ADDED:
		op(p, "add", c->at, c->now);
		break;
	case YDOC_REPLACED:
		if (!holds(c->old, c->now, 0))
			op(p, "replace", c->at, c->now);
		break;
	case YDOC_REWRITTEN:
		op(p, "replace", c->at, c->now);
		break;
	}
	return p->err;
}

/* What inject changed in the pod, against its collections' items as read. */
static void diff(struct patch *p, const struct ynode *pod)
{
	int rc = ydoc_changes(pod, patch_change, p);

	if (rc < 0 && !p->err)
		p->err = rc == -ELOOP ? -EINVAL : rc;
}

/* Names come from the request and may hold any byte: a control character becomes '?', one line stays one. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* ---- the answer ----------------------------------------------------------------- */

struct warnings {
	char text[REVIEW_MAX_WARNINGS][REVIEW_WARNING_MAX + 1];
	size_t n;
};

/*
 * One warning: "rearguard: " and words about the pod, whole up to
 * REVIEW_WARNING_MAX bytes (the API server keeps 256 characters of each);
 * longer ones are cut at a space, with "...". Names come from the request
 * and may hold any byte: a control character becomes '?'.
 */
static void add_warning(struct warnings *w, const char *fmt, ...) RG_PRINTF(2, 3);

static void add_warning(struct warnings *w, const char *fmt, ...)
{
	char line[NOTE_WORDS_MAX + 64];
	size_t n, cut;
	va_list ap;

	if (w->n == REVIEW_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	one_line(line);
	n = strlen(line);
	if (n > REVIEW_WARNING_MAX) {
		cut = REVIEW_WARNING_MAX - 3;
		while (cut > REVIEW_WARNING_MAX / 2 && line[cut] != ' ')
			cut--;
		if (line[cut] != ' ') /* no space in the second half: cut at a character */
			for (cut = REVIEW_WARNING_MAX - 3; cut > 0 && ((unsigned char)line[cut] & 0xc0) == 0x80; cut--)
				;
		memcpy(line + cut, "...", 4);
	}
	snprintf(w->text[w->n++], sizeof(w->text[0]), "%s", line);
}

/* One of the plan's notes as a warning. */
static void warn_words(void *data, const char *words)
{
	add_warning(data, "rearguard: %s", words);
}

/* The plan's notes as warnings about the pod: what was done or why not first, then the rest in order. */
static void warn_notes(struct warnings *w, const struct inject_plan *plan)
{
	inject_plan_words(plan, warn_words, w);
}

static const char *str_at(const struct ynode *n, const char *path)
{
	return ydoc_str(ydoc_path(n, path));
}

/* Takes the agent out of the pod's containers: whether there was one. */
static bool take_agent_out(struct ynode *pod)
{
	struct ynode *ctrs = ydoc_path(pod, "spec.containers");
	size_t i;

	for (i = 0; ctrs && ctrs->kind == YNODE_SEQ && i < ctrs->n; i++)
		if (inject_is_agent(ctrs->items[i])) {
			memmove(ctrs->items + i, ctrs->items + i + 1, (ctrs->n - i - 1) * sizeof(ctrs->items[0]));
			ctrs->n--;
			return true;
		}
	return false;
}

/* The request's pod, or NULL with why not in a->what (a review of something else). */
static struct ynode *pod_of(const struct ynode *req, struct review_answer *a)
{
	const char *group = str_at(req, "kind.group"), *kind = str_at(req, "kind.kind"),
		   *op_word = ydoc_str(ydoc_get(req, "operation")), *sub = ydoc_str(ydoc_get(req, "subResource"));
	struct ynode *obj = ydoc_get(req, "object");

	if (!kind || strcmp(kind, "Pod") != 0 || (group && *group)) {
		snprintf(a->what, sizeof(a->what), "a review of %.64s%s%.64s, not of a Pod", kind ? kind : "no kind",
			 group && *group ? " in " : "", group && *group ? group : "");
		return NULL;
	}
	if (!op_word || strcmp(op_word, "CREATE") != 0 || (sub && *sub)) {
		snprintf(a->what, sizeof(a->what), "a review of a Pod's %.32s%s%.32s, not its CREATE",
			 op_word ? op_word : "no operation", sub && *sub ? " of " : "", sub && *sub ? sub : "");
		return NULL;
	}
	if (!obj || obj->kind != YNODE_MAP) {
		snprintf(a->what, sizeof(a->what), "a Pod's review without the pod (request.object)");
		return NULL;
	}
	return obj;
}

static void name_pod(const struct ynode *req, const struct ynode *pod, struct review_answer *a)
{
	const char *ns = ydoc_str(ydoc_get(req, "namespace")), *name = str_at(pod, "metadata.name");

	if (!ns)
		ns = str_at(pod, "metadata.namespace");
	if (!name || !*name)
		name = str_at(pod, "metadata.generateName");
	snprintf(a->what, sizeof(a->what), "%.63s/%.160s%s", ns ? ns : "", name ? name : "(no name)",
		 name && !str_at(pod, "metadata.name") ? "*" : "");
	one_line(a->what);
}

/*
 * RFC 4648's base64 of n bytes as a JSON string value of j, written as it
 * is made: the answer holds the patch once, encoded.
 */
static void base64_value(struct jbuf *j, const char *in, size_t n)
{
	static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = (const unsigned char *)in;
	char out[4096];
	size_t i, o = 0;

	jbuf_raw_valuen(j, "\"", 1);
	for (i = 0; i + 2 < n; i += 3) {
		out[o++] = digits[p[i] >> 2];
		out[o++] = digits[(p[i] & 3) << 4 | p[i + 1] >> 4];
		out[o++] = digits[(p[i + 1] & 15) << 2 | p[i + 2] >> 6];
		out[o++] = digits[p[i + 2] & 63];
		if (o == sizeof(out)) {
			jbuf_append(j, out, o);
			o = 0;
		}
	}
	if (i < n) {
		out[o++] = digits[p[i] >> 2];
		out[o++] = digits[(p[i] & 3) << 4 | (i + 1 < n ? p[i + 1] >> 4 : 0)];
		out[o++] = i + 1 < n ? digits[(p[i + 1] & 15) << 2] : '=';
		out[o++] = '=';
	}
	out[o++] = '"';
	jbuf_append(j, out, o);
}

/* The response: allowed, the patch when there is one, the warnings. */
static int write_answer(struct review_answer *a, const char *api, const struct patch *p, const struct warnings *w)
{
	struct jbuf j;
	size_t i;

	jbuf_init(&j);
	jbuf_begin(&j, '{');
	jbuf_key(&j, "apiVersion");
	jbuf_str(&j, api);
	jbuf_key(&j, "kind");
	jbuf_str(&j, "AdmissionReview");
	jbuf_key(&j, "response");
	jbuf_begin(&j, '{');
	jbuf_key(&j, "uid");
	jbuf_str(&j, a->uid);
	jbuf_key(&j, "allowed");
	jbuf_bool(&j, true);
	if (p && p->n > 0) {
		jbuf_key(&j, "patchType");
		jbuf_str(&j, "JSONPatch");
		jbuf_key(&j, "patch");
		base64_value(&j, p->j.buf, p->j.len);
	}
	if (w->n > 0) {
		jbuf_key(&j, "warnings");
		jbuf_begin(&j, '[');
		for (i = 0; i < w->n; i++)
			jbuf_str(&j, w->text[i]);
		jbuf_end(&j, ']');
	}
	jbuf_end(&j, '}');
	jbuf_end(&j, '}');
	jbuf_append(&j, "\n", 1);
	if (j.failed) {
		jbuf_free(&j);
		return -ENOMEM;
	}
	a->body = j.buf;
	a->len = j.len;
	return 200;
}

/* 400: a->what says why in one line, which is also the body. */
static int invalid(struct review_answer *a, const char *fmt, ...) RG_PRINTF(2, 3);

static int invalid(struct review_answer *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->what, sizeof(a->what), fmt, ap);
	va_end(ap);
	one_line(a->what);
	a->outcome = REVIEW_INVALID;
	a->len = strlen(a->what) + 1;
	a->body = malloc(a->len + 1);
	if (!a->body)
		return -ENOMEM;
	snprintf(a->body, a->len + 1, "%s\n", a->what);
	return 400;
}

/*
 * Pods that get no warning: a controller's long-running ones (a
 * restartPolicy of Always), whose creator reads none and whose log they
 * would fill.
 */
static bool quiet(const struct ynode *pod)
{
	const char *policy = str_at(pod, "spec.restartPolicy");

	return !policy || strcmp(policy, "Always") == 0;
}

/* The pod's change as a patch, into p; its outcome. */
static int decide(struct ystream *sb, struct ynode *pod_b, const struct inject_options *o, struct patch *p,
		  struct warnings *w, struct review_answer *a)
{
	struct inject_options io = *o;
	struct inject_plan *plan;
	struct ynode *ann;
	bool again = false;
	char err[512] = "";
	int rc;

	plan = malloc(sizeof(*plan));
	if (!plan)
		return -ENOMEM;
	/* Marked: the agent is this webhook's, and the pod is injected afresh without it. */
	if (ydoc_str(ydoc_get(ydoc_path(pod_b, "metadata.annotations"), REVIEW_INJECTED)))
		again = take_agent_out(pod_b);
	io.note = NULL;
	io.counts = NULL;
	rc = inject_pod(sb, pod_b, &io, plan, err, sizeof(err));
	if (rc < 0)
		goto out;
	/*
	 * What a first review said is not said again when reinvoked; a pod its
	 * restartPolicy leaves alone (a Deployment's) says nothing: its creator
	 * is a controller, whose log the warnings would fill.
	 */
	if (!again && !(rc == 0 && quiet(pod_b)))
		warn_notes(w, plan);
	if (rc == 0) {
		a->outcome = REVIEW_UNCHANGED;
		rc = 0;
		goto out;
	}
	if (!again) {
		/* inject made the annotations for kubectl's default container: they are there. */
		ann = ydoc_path(pod_b, "metadata.annotations");
		if (!ann || ann->kind != YNODE_MAP ||
		    ydoc_set(sb, ann, REVIEW_INJECTED, ydoc_scalar(sb, PACKAGE_VERSION, YDOC_TEXT), false) < 0) {
			rc = -ENOMEM;
			goto out;
		}
	}
	p->s = sb;
	diff(p, pod_b);
	rc = p->err;
	if (rc == 0 && again && p->n > 0)
		warn_notes(w, plan); /* something new: said once more, with what it was */
	a->outcome = p->n > 0 ? REVIEW_PATCHED : REVIEW_UNCHANGED;
out:
	free(plan);
	return rc;
}

/*
 * What a review too large to hold whole is read for: what it is (an
 * AdmissionReview of a Pod's CREATE, or not) and the pod's name, for the
 * answer and the log.
 */
static const char *const envelope[] = {
	"apiVersion", "kind", "request.uid", "request.kind.group", "request.kind.kind", "request.operation",
	"request.subResource", "request.namespace", "request.object.metadata.name",
	"request.object.metadata.generateName", "request.object.metadata.namespace", NULL,
};

int review_answer(const char *body, size_t len, const struct inject_options *o, struct review_answer *a)
{
	struct ystream sa;
	struct ynode *ra, *pod_b;
	const struct ynode *req_a;
	struct patch p = {0};
	struct warnings w = {.n = 0};
	const char *api, *kind, *uid;
	char err[256];
	bool v1, big = false;
	int rc;

	memset(a, 0, sizeof(*a));
	rc = ydoc_parse_json_some(body, len, NULL, REVIEW_MAX_NODES, &sa, err, sizeof(err));
	if (rc == -E2BIG) {
		/* More than a pod has: read again for what the review is, and answer it without a decision. */
		big = true;
		rc = ydoc_parse_json_some(body, len, envelope, REVIEW_MAX_NODES, &sa, err, sizeof(err));
	}
	if (rc == -ENOMEM)
		return rc;
	if (rc == -E2BIG)
		return invalid(a, "the review holds too many values: %s", err);
	if (rc < 0)
		return invalid(a, "the body is not JSON: %s", err);
	if ((ra = sa.docs[0].root)->kind != YNODE_MAP) {
		ydoc_free(&sa);
		return invalid(a, "the body is not a JSON object");
	}
	api = ydoc_str(ydoc_get(ra, "apiVersion"));
	kind = ydoc_str(ydoc_get(ra, "kind"));
	req_a = ydoc_get(ra, "request");
	uid = ydoc_str(ydoc_get(req_a, "uid"));
	if (!kind || strcmp(kind, "AdmissionReview") != 0 || !api ||
	    (strcmp(api, "admission.k8s.io/v1") != 0 && strcmp(api, "admission.k8s.io/v1beta1") != 0)) {
		rc = invalid(a, "not an AdmissionReview of admission.k8s.io/v1 or v1beta1 (kind %.64s, apiVersion %.64s)",
			     kind ? kind : "none", api ? api : "none");
		ydoc_free(&sa);
		return rc;
	}
	/* The tree goes before the answer is written (the patch is all that needs it): api is one of two. */
	v1 = strcmp(api, "admission.k8s.io/v1") == 0;
	api = v1 ? "admission.k8s.io/v1" : "admission.k8s.io/v1beta1";
	if (!req_a || req_a->kind != YNODE_MAP || !uid || !*uid || strlen(uid) >= sizeof(a->uid)) {
		ydoc_free(&sa);
		return invalid(a, "an AdmissionReview without a request and its uid");
	}
	snprintf(a->uid, sizeof(a->uid), "%s", uid);
	if (!pod_of(req_a, a)) {
		one_line(a->what);
		/* Allowed as it is: a configuration that sends other kinds is said in the log. */
		a->outcome = REVIEW_SKIPPED;
		add_warning(&w, "rearguard: %s: allowed unchanged", a->what);
		ydoc_free(&sa);
		return write_answer(a, api, NULL, &w);
	}
	pod_b = ydoc_get(req_a, "object");
	name_pod(req_a, pod_b, a);
	if (big) {
		a->outcome = REVIEW_SKIPPED;
		add_warning(&w,
			    "rearguard: %s: allowed unchanged: more than %d values in the review, more than a pod has",
			    a->what, REVIEW_MAX_NODES);
		ydoc_free(&sa);
		return write_answer(a, api, NULL, &w);
	}
	jbuf_init(&p.j);
	jbuf_begin(&p.j, '[');
	rc = decide(&sa, pod_b, o, &p, &w, a);
	jbuf_end(&p.j, ']');
	ydoc_free(&sa);
	if (rc == 0 && p.j.failed)
		rc = -ENOMEM;
	if (rc == -EINVAL) {
		/* No patch can say it (a path too long, an alias): the pod as it is. */
		a->outcome = REVIEW_SKIPPED;
		p.n = 0;
		w.n = 0;
		add_warning(&w, "rearguard: %s: no patch can say the change (a key twice, an alias): allowed unchanged", a->what);
		rc = 0;
	}
	a->npatch = rc == 0 ? p.n : 0;
	if (rc == 0)
		rc = write_answer(a, api, &p, &w);
	jbuf_free(&p.j);
	return rc;
}

void review_answer_free(struct review_answer *a)
{
	free(a->body);
	a->body = NULL;
	a->len = 0;
}
