/*
 * rearguard inject over a YAML stream: its documents, the objects in them
 * (a List's or a kpt ResourceList's items too), the pod template of each
 * Job, CronJob and Pod, planned (injectplan.c) and applied
 * (injectapply.c), and the notes of each said to the caller, worded for a
 * template (injectnote.c).
 */
#include "config.h"

#include "inject.h"
#include "injectint.h"

#include "parse.h"
#include "presets.h"
#include "util.h"
#include "yamldoc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One run over a stream: the options in force, where the notes go, the plan of the template at hand. */
struct run {
	struct ystream *s;
	struct inject_options o;
	char *err;
	size_t errlen;
	struct inject_counts c;
	struct inject_plan *plan;
};

/*
 * Names and kinds come from the input and may hold any byte a YAML escape
 * gives: a control character in a message becomes '?', so that a note or
 * an error stays one line.
 */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/*
 * Says one note to the caller: "LINE:COL: [warning: ]WHAT: words", where
 * a note about no node in particular stands where its object does.
 * Warnings are counted.
 */
static void say(struct run *r, const struct inject_note *n, const struct ynode *obj, const char *what)
{
	char words[NOTE_WORDS_MAX], line[NOTE_WORDS_MAX + 400];
	size_t at_line = n->line, at_col = n->column;

	if (n->warning)
		r->c.warnings++;
	if (!r->o.note)
		return;
	if (at_line == 0 && obj) {
		at_line = obj->line;
		at_col = obj->column;
	}
	inject_note_words(n, NOTE_FOR_TEMPLATE, words, sizeof(words));
	snprintf(line, sizeof(line), "%zu:%zu: %s%s: %s", at_line, at_col, n->warning ? "warning: " : "", what, words);
	one_line(line);
	r->o.note(r->o.note_data, n->warning, line);
}

/* An object's own note (no template's): kind, said at node at. */
static struct inject_note *object_note(struct inject_note *n, enum inject_note_kind kind, bool warning,
				       const struct ynode *at)
{
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->warning = warning;
	n->line = at ? at->line : 0;
	n->column = at ? at->column : 0;
	return n;
}

/* Says an object's note and counts the object left unchanged. */
static int left(struct run *r, const struct inject_note *n, const struct ynode *obj, const char *what)
{
	say(r, n, obj, what);
	r->c.left++;
	return 0;
}

/* Stops the run: r->err gets "LINE:COL: what: message"; returns -EINVAL. */
static int fail(struct run *r, const struct ynode *at, const char *what, const char *fmt, ...) RG_PRINTF(4, 5);

static int fail(struct run *r, const struct ynode *at, const char *what, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "%zu:%zu: %s: %s", at ? at->line : (size_t)1, at ? at->column : (size_t)1, what,
		 msg);
	if (r->errlen > 0)
		one_line(r->err);
	return -EINVAL;
}

/*
 * One pod template (tmpl holds metadata and spec; for a Pod it is the
 * object): planned, its notes said, and applied when the plan says so.
 * Returns 1 when it changed, 0 when it is left as it is, or an error.
 */
static int inject_template(struct run *r, struct ynode *tmpl, enum inject_where where, const struct ynode *obj,
			   const char *what)
{
	char err[512];
	size_t i;
	int rc;

	rc = inject_plan(r->s, tmpl, where, &r->o, r->plan, err, sizeof(err));
	if (rc == -EINVAL) {
		/* "LINE:COL: message" of the plan: the object's name goes between. */
		const char *msg = strstr(err, ": ");

		snprintf(r->err, r->errlen, "%.*s: %s: %s", msg ? (int)(msg - err) : 0, err, what, msg ? msg + 2 : err);
		if (r->errlen > 0)
			one_line(r->err);
		return rc;
	}
	if (rc < 0)
		return rc;
	for (i = 0; i < r->plan->nnotes; i++)
		say(r, &r->plan->notes[i], obj, what);
	if (!r->plan->change) {
		r->c.left++;
		return 0;
	}
	rc = inject_apply(r->s, tmpl, &r->o, r->plan);
	if (rc < 0)
		return rc;
	if (!r->o.image)
		r->c.placeholder = true;
	r->c.changed++;
	return 1;
}

/* ---- objects, lists, streams ----------------------------------------------------- */

/*
 * The first place a document shows an unrendered Helm template: a key that
 * is a mapping ({{ .Values.x }} read as YAML), or a value that starts with
 * "{{" outside the annotations (where Vault's templates live). NULL if none.
 */
static const struct ynode *helm_mark(const struct ynode *n, int depth)
{
	const struct ynode *hit;
	size_t i;

	if (!n || depth > YDOC_MAX_DEPTH)
		return NULL;
	if (n->kind == YNODE_SCALAR)
		return n->len >= 2 && strncmp(n->value, "{{", 2) == 0 ? n : NULL;
	for (i = 0; i < n->n; i++) {
		if (n->kind == YNODE_MAP && i % 2 == 0) {
			if (n->items[i]->kind == YNODE_MAP || n->items[i]->kind == YNODE_SEQ)
				return n->items[i];
			if (inject_is(n->items[i], "annotations"))
				i++; /* its values are other programs' templates */
			continue;
		}
		hit = helm_mark(n->items[i], depth + 1);
		if (hit)
			return hit;
	}
	return NULL;
}

/* How notes name an object: Job "x" for the kinds inject handles, else its apiVersion and kind too. */
/* How notes name an object: Job "x" for the kinds inject handles, else its apiVersion and kind too. */
static void name_object(const struct ynode *obj, bool ours, char *what, size_t len)
{
	const char *kind = ydoc_str(ydoc_get(obj, "kind")), *api = ydoc_str(ydoc_get(obj, "apiVersion"));
	const char *name = ydoc_str(ydoc_path(obj, "metadata.name"));

	if (!name)
		name = ydoc_str(ydoc_path(obj, "metadata.generateName"));
	if (api && (!*api || ydoc_is_null(ydoc_get(obj, "apiVersion"))))
		api = NULL;
	snprintf(what, len, "%.64s%s%.64s%s%.128s%s", ours || !api ? "" : api, ours || !api ? "" : " ",
		 kind ? kind : "object", name ? " \"" : "", name ? name : "", name ? "\"" : "");
}

/* Adds rearguard to one object: 1 changed, 0 left alone, or an error. */

/*
 * Whether obj is a long-running workload of apps/v1 whose pods rearguard is
 * asked for (--services, or rearguard.io/inject: services on its pod
 * template). One that is not asked for is no concern of inject's: passed
 * over without a word, as before long-running pods could be asked for.
 */
static bool workload_asked(const struct run *r, const struct ynode *obj, const char *kind)
{
	static const char *const kinds[] = {"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet"};
	const char *v;
	size_t i;

	if (!kind || !inject_is(ydoc_get(obj, "apiVersion"), "apps/v1"))
		return false;
	for (i = 0; i < ARRAY_SIZE(kinds) && strcmp(kind, kinds[i]) != 0; i++)
		;
	if (i == ARRAY_SIZE(kinds))
		return false;
	v = inject_meta_value(ydoc_path(obj, "spec.template.metadata"), INJECT_LABEL);
	return r->o.services || (v && strcmp(v, INJECT_SERVICES) == 0);
}

/* Adds rearguard to one object: 1 changed, 0 left alone, or an error. */
static int inject_object(struct run *r, struct ynode *obj)
{
	const char *kind = ydoc_str(ydoc_get(obj, "kind")), *api = ydoc_str(ydoc_get(obj, "apiVersion"));
	bool batch = api && strncmp(api, "batch/", 6) == 0,
	     pod = kind && strcmp(kind, "Pod") == 0 && inject_is(ydoc_get(obj, "apiVersion"), "v1");
	bool job = batch && kind && strcmp(kind, "Job") == 0, cron = batch && kind && strcmp(kind, "CronJob") == 0;
	bool workload = obj->kind == YNODE_MAP && workload_asked(r, obj, kind);
	const struct ynode *mark;
	struct ynode *t, *bad = NULL;
	struct inject_note n;
	const char *field, *p;
	char what[320];
	size_t len;

	if (obj->kind != YNODE_MAP) {
		if (!ydoc_is_null(obj)) {
			object_note(&n, NOTE_NOT_MAPPING, WARN, obj)->a = inject_shape(obj);
			say(r, &n, obj, "document");
		}
		return 0;
	}
	name_object(obj, pod || job || cron || workload, what, sizeof(what));
	if (!kind)
		return 0;
	if (!pod && !job && !cron && !workload) {
		const struct ynode *apin = ydoc_get(obj, "apiVersion");
		bool ours = strcmp(kind, "Job") == 0 || strcmp(kind, "CronJob") == 0 || strcmp(kind, "Pod") == 0;

		/*
		 * Each object said is counted left unchanged. A workload of another
		 * API that shares a name with one of ours (a Volcano Job) is said, and
		 * so is one without an apiVersion, which is no other API's either.
		 */
		if (ours && apin && apin->kind != YNODE_SCALAR)
			object_note(&n, NOTE_API_NOT_STRING, WARN, apin)->a = inject_shape(apin);
		else if (ours && (!api || !*api || ydoc_is_null(apin)))
			object_note(&n, NOTE_NO_API_VERSION, WARN, obj);
		else if (ours)
			object_note(&n, NOTE_OTHER_API, INFO, obj);
		else if (api && strncmp(api, "argoproj.io/", 12) == 0 && strstr(kind, "Workflow"))
			object_note(&n, NOTE_ARGO_OBJECT, INFO, obj);
		else if (api && strncmp(api, "tekton.dev/", 11) == 0 && (strstr(kind, "Run") || strstr(kind, "Task")))
			object_note(&n, NOTE_TEKTON_OBJECT, INFO, obj);
		else
			return 0;
		n.b = kind;
		n.c = strcmp(kind, "Pod") == 0 ? "v1" : "batch/v1";
		return left(r, &n, obj, what);
	}
	mark = helm_mark(obj, 0);
	if (mark)
		return left(r, object_note(&n, NOTE_HELM_UNRENDERED, WARN, mark), obj, what);
	if (pod)
		return inject_template(r, obj, INJECT_POD, obj, what);
	field = cron ? "spec.jobTemplate.spec.template" : "spec.template";
	/* Each step of the path a mapping: its first step that is not says where. */
	for (t = obj, p = field; t && *p; p += len + (p[len] == '.')) {
		char key[32];

		len = strcspn(p, ".");
		snprintf(key, sizeof(key), "%.*s", (int)len, p);
		t = inject_want(t, key, YNODE_MAP, &bad);
		if (bad) {
			object_note(&n, NOTE_MISSHAPEN, WARN, bad);
			snprintf(n.words, sizeof(n.words), "%.*s", (int)(p - field + len), field);
			n.b = inject_shape(bad);
			n.c = "a mapping";
			return left(r, &n, obj, what);
		}
	}
	if (!t) {
		object_note(&n, NOTE_NO_TEMPLATE, WARN, obj);
		n.a = field;
		n.b = kind;
		return left(r, &n, obj, what);
	}
	return inject_template(r, t, cron ? INJECT_CRONJOB_TEMPLATE : workload ? INJECT_WORKLOAD_TEMPLATE : INJECT_JOB_TEMPLATE,
			       obj, what);
}

int inject_pod(struct ystream *s, struct ynode *pod, const struct inject_options *o, struct inject_plan *plan,
	       char *err, size_t errlen)
{
	int rc;

	if (!pod || pod->kind != YNODE_MAP || !inject_is(ydoc_get(pod, "kind"), "Pod")) {
		memset(plan, 0, sizeof(*plan));
		object_note(&plan->notes[0], NOTE_NOT_A_POD, WARN, pod);
		plan->nnotes = 1;
		plan->warnings = 1;
		return 0;
	}
	/* No Helm check: a pod the API server holds was rendered, and "{{" in it is data. */
	rc = inject_plan(s, pod, INJECT_POD, o, plan, err, errlen);
	if (rc == 0 && plan->change)
		rc = inject_apply(s, pod, o, plan);
	if (o->counts && rc == 0) {
		o->counts->changed += plan->change;
		o->counts->left += !plan->change;
		o->counts->warnings += plan->warnings;
		o->counts->placeholder |= plan->change && !o->image;
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return rc < 0 ? rc : plan->change;
}

/* A boolean option of a functionConfig (true or false, as REARGUARD_GATE takes it). */
static int set_bool(struct run *r, const struct ynode *at, const char *key, const char *v, bool *opt,
		    enum inject_origin *from)
{
	bool on;

	if (!v || parse_bool(v, &on) < 0)
		return fail(r, at, "functionConfig", "%s \"%s\" is not true or false", key, v ? v : "");
	if (*from < INJECT_FUNCTION_CONFIG) {
		*opt = on;
		*from = INJECT_FUNCTION_CONFIG;
	}
	return 0;
}

/* One option of a functionConfig; a flag given on the command line keeps its value. */
static int set_option(struct run *r, const struct ynode *at, const char *key, const char *v)
{
	if (strcmp(key, "image") == 0) {
		if (r->o.image_from < INJECT_FUNCTION_CONFIG) {
			if (!v || !*v)
				return fail(r, at, "functionConfig", "image needs a value");
			r->o.image = v;
			r->o.image_from = INJECT_FUNCTION_CONFIG;
		}
		return 0;
	}
	if (strcmp(key, "mesh") == 0) {
		if (!v || (*v && !presets_mesh(v))) {
			char meshes[64];

			presets_mesh_words(" or ", meshes, sizeof(meshes));
			return fail(r, at, "functionConfig", "mesh \"%s\" is not %s", v ? v : "", meshes);
		}
		if (r->o.mesh_from < INJECT_FUNCTION_CONFIG) {
			r->o.mesh = *v ? v : NULL;
			r->o.mesh_from = INJECT_FUNCTION_CONFIG;
		}
		return 0;
	}
	if (strcmp(key, "gate") == 0)
		return set_bool(r, at, key, v, &r->o.gate, &r->o.gate_from);
	if (strcmp(key, "services") == 0)
		return set_bool(r, at, key, v, &r->o.services, &r->o.services_from);
	if (strcmp(key, "signal-as-root") == 0)
		return set_bool(r, at, key, v, &r->o.signal_as_root, &r->o.signal_as_root_from);
	return fail(r, at, "functionConfig",
			   "unknown option \"%s\" (options: image, mesh, gate, services, signal-as-root)", key);
}

/* A KRM function's options: a ConfigMap's data, or a spec (a kustomize transformer's own kind). */
static int function_config(struct run *r, const struct ynode *fc)
{
	const struct ynode *opts;
	size_t i;
	int rc;

	if (!fc || fc->kind != YNODE_MAP)
		return 0;
	opts = ydoc_get(fc, "data");
	if (!opts || opts->kind != YNODE_MAP)
		opts = ydoc_get(fc, "spec");
	if (!opts || opts->kind != YNODE_MAP)
		return 0;
	for (i = 0; i + 1 < opts->n; i += 2) {
		const char *key = ydoc_str(opts->items[i]);

		rc = set_option(r, opts->items[i], key ? key : "?", ydoc_str(opts->items[i + 1]));
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One document of the stream: an object, or a List or ResourceList of them. */
static int inject_document(struct run *r, struct ydoc *d)
{
	struct ynode *root = d->root, *items;
	const char *kind, *api;
	size_t i;
	int rc, changed = 0;

	if (!root)
		return 0;
	if (root->kind != YNODE_MAP) {
		if (!ydoc_is_null(root)) {
			struct inject_note n;

			object_note(&n, NOTE_NOT_MAPPING, WARN, root)->a = inject_shape(root);
			say(r, &n, root, "document");
		}
		return 0;
	}
	kind = ydoc_str(ydoc_get(root, "kind"));
	api = ydoc_str(ydoc_get(root, "apiVersion"));
	items = ydoc_get(root, "items");
	if (kind && items && (items->kind == YNODE_SEQ || ydoc_is_null(items)) &&
	    (strcmp(kind, "ResourceList") == 0 || (strlen(kind) > 4 && strcmp(kind + strlen(kind) - 4, "List") == 0) ||
	     strcmp(kind, "List") == 0)) {
		struct inject_options saved = r->o;

		rc = 0;
		if (strcmp(kind, "ResourceList") == 0 && api && strncmp(api, "config.kubernetes.io/", 21) == 0) {
			rc = function_config(r, ydoc_get(root, "functionConfig"));
			if (rc < 0)
				return rc;
		}
		for (i = 0; items->kind == YNODE_SEQ && i < items->n; i++) {
			rc = inject_object(r, items->items[i]);
			if (rc < 0)
				break;
			changed |= rc;
		}
		r->o = saved;
	} else {
		rc = inject_object(r, root);
		changed = rc > 0;
	}
	if (rc < 0)
		return rc;
	d->changed = changed;
	return 0;
}

int inject_buffer(const char *in, size_t len, const struct inject_options *o, char **out, size_t *outlen, char *err,
		  size_t errlen)
{
	struct ystream s;
	struct ybuf b = {0};
	struct run r = {.s = &s, .o = *o, .err = err, .errlen = errlen};
	size_t i;
	int rc;

	r.plan = malloc(sizeof(*r.plan));
	if (!r.plan) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = ydoc_parse(in, len, &s, err, errlen);
	if (rc == -EINVAL && memmem(in, len, "{{", 2) && strlen(err) + 1 < errlen)
		snprintf(err + strlen(err), errlen - strlen(err),
			 " (the input holds {{: an unrendered Helm template? run helm template and inject its output)");
	if (rc < 0) {
		free(r.plan);
		return rc;
	}
	for (i = 0; i < s.ndocs && rc == 0; i++)
		rc = inject_document(&r, &s.docs[i]);
	if (rc == 0) {
		rc = ydoc_write(&s, &b);
		if (rc == -EINVAL)
			snprintf(err, errlen, "%zu:1: libyaml cannot write this document back after the change",
				 s.failed_line);
	}
	for (i = 0; i < s.ndocs && rc == 0; i++)
		if (s.docs[i].rewritten) {
			struct ynode at = {.line = s.docs[i].rewritten_line, .column = 1};
			struct inject_note n;

			say(&r, object_note(&n, NOTE_REWRITTEN, INFO, &at), NULL, "document");
		}
	ydoc_free(&s);
	free(r.plan);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (rc < 0) {
		ybuf_free(&b);
		return rc;
	}
	if (!b.p && ybuf_add(&b, "", 0) < 0)
		return -ENOMEM;
	if (o->counts) {
		o->counts->changed += r.c.changed;
		o->counts->left += r.c.left;
		o->counts->warnings += r.c.warnings;
		o->counts->placeholder |= r.c.placeholder;
	}
	*out = b.p;
	*outlen = b.len;
	return 0;
}

