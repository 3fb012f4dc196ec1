#include "config.h"

#include "inject.h"
#include "injectint.h"

#include "argv.h"
#include "defaults.h"
#include "log.h"
#include "parse.h"
#include "presets.h"
#include "spec.h"
#include "util.h"
#include "yamldoc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

void inject_say(struct run *r, bool warning, const struct ynode *at, const char *what, const char *fmt, ...)
{
	char msg[768], line[1024];
	va_list ap;

	if (warning)
		r->c.warnings++;
	if (!r->o.note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%zu:%zu: %s%s: %s", at ? at->line : (size_t)0, at ? at->column : (size_t)0,
		 warning ? "warning: " : "", what, msg);
	one_line(line);
	r->o.note(r->o.note_data, warning, line);
}

int inject_fail(struct run *r, const struct ynode *at, const char *what, const char *fmt, ...)
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

/* Whether n is the scalar value (a missing node is not). */
bool inject_is(const struct ynode *n, const char *value)
{
	const char *v = ydoc_str(n);

	return v && strcmp(v, value) == 0;
}

/* What a node that should have been a list or a mapping is instead. */
const char *inject_shape(const struct ynode *n)
{
	switch (n->kind) {
	case YNODE_SCALAR:
		return "a scalar";
	case YNODE_SEQ:
		return "a list";
	case YNODE_MAP:
		return "a mapping";
	default:
		return "an alias";
	}
}

/*
 * The collection of kind under key: NULL when it is absent or null (Helm
 * renders an empty list as null), else the node; *bad when it is something
 * else.
 */
struct ynode *inject_want(const struct ynode *parent, const char *key, enum ynode_kind kind, struct ynode **bad)
{
	struct ynode *n = ydoc_get(parent, key);

	*bad = NULL;
	if (!n || ydoc_is_null(n))
		return NULL;
	if (n->kind != kind) {
		*bad = n;
		return NULL;
	}
	return n;
}

/* A template whose field has the wrong shape is left alone: the API server would refuse it anyway. */
int inject_misshapen(struct run *r, const struct ynode *n, const char *what, const char *field, const char *key,
		     const char *want_word)
{
	inject_say(r, WARN, n, what, "%s%s%s is %s, not %s: left unchanged (the API server refuses it as well)", field,
		   *field ? "." : "", key, inject_shape(n), want_word);
	r->c.left++;
	return 0;
}

/* A label or annotation of the template, annotations first (where injectors look first). */
const char *inject_meta_value(const struct ynode *meta, const char *key)
{
	const char *v = ydoc_str(ydoc_get(ydoc_get(meta, "annotations"), key));

	return v ? v : ydoc_str(ydoc_get(ydoc_get(meta, "labels"), key));
}

/* An annotation of the template, for presets_spec. */
const char *inject_annotation(const void *meta, const char *key)
{
	return ydoc_str(ydoc_get(ydoc_get(meta, "annotations"), key));
}

/*
 * command + args of a container as an argv; argv[0] NULL when there is no
 * command (the image's entrypoint runs). slots, when given, gets where
 * each argument lies in the tree (NULL for argv[0] then), for a fix in place.
 */
size_t inject_argv(const struct ynode *c, const char **argv, struct ynode ***slots)
{
	const struct ynode *cmd = ydoc_get(c, "command"), *args = ydoc_get(c, "args");
	size_t n = 0, i;

	if (cmd && cmd->kind == YNODE_SEQ && cmd->n > 0) {
		for (i = 0; i < cmd->n && n < MAX_ARGV; i++) {
			if (slots)
				slots[n] = &cmd->items[i];
			argv[n++] = ydoc_str(cmd->items[i]) ? ydoc_str(cmd->items[i]) : "";
		}
	} else {
		if (slots)
			slots[n] = NULL;
		argv[n++] = NULL;
	}
	if (args && args->kind == YNODE_SEQ)
		for (i = 0; i < args->n && n < MAX_ARGV; i++) {
			if (slots)
				slots[n] = &args->items[i];
			argv[n++] = ydoc_str(args->items[i]) ? ydoc_str(args->items[i]) : "";
		}
	return n == 1 && !argv[0] ? 0 : n;
}

bool inject_is_agent(const struct ynode *c)
{
	const char *image = ydoc_str(ydoc_get(c, "image"));

	return inject_is(ydoc_get(c, "name"), AGENT_NAME) || (image && presets_image_is(image, AGENT_NAME));
}

struct ynode *inject_annotations(struct run *r, struct ynode *tmpl, struct ynode **meta)
{
	if (!*meta) {
		*meta = ydoc_new_map(r->s, false);
		if (!*meta || ydoc_set(r->s, tmpl, "metadata", *meta, true) < 0)
			return NULL;
	}
	/* Absent or null: made; of another shape the template was left alone before. */
	return ydoc_want_map(r->s, *meta, "annotations");
}

/* The uid a value of runAsUser names, or NULL when it names none. */
const char *inject_uid_of(const char *v)
{
	const char *p = v;

	if (!v || !*v || strlen(v) > 10)
		return NULL;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return NULL;
	return v;
}

/* ---- the agent container ---------------------------------------------------- */

static struct ynode *pair_map(struct ystream *s, bool flow, const char *k1, struct ynode *v1, const char *k2,
			      struct ynode *v2)
{
	struct ynode *m = ydoc_new_map(s, flow);

	if (!m || ydoc_set(s, m, k1, v1, false) < 0 || (k2 && ydoc_set(s, m, k2, v2, false) < 0))
		return NULL;
	return m;
}

/* A string scalar, quoted where YAML would read it as something else. */
static struct ynode *text(struct ystream *s, const char *v)
{
	return ydoc_scalar(s, v, YDOC_TEXT);
}

/* A scalar written as is: a number or a boolean. */
static struct ynode *raw(struct ystream *s, const char *v)
{
	return ydoc_scalar(s, v, YDOC_RAW);
}

/* One {name, value} item of a container's env. */
static struct ynode *env_var(struct ystream *s, const char *name, const char *value)
{
	return pair_map(s, true, "name", text(s, name), "value", text(s, value));
}

/*
 * The agent as manifests/ write it: non-root, read-only, no capabilities,
 * the runtime's default seccomp profile (what Pod Security's restricted
 * level asks for), small requests. Where a sidecar it stops needs it
 * (f->root_agent, --signal-as-root): root with CAP_KILL and no other
 * capability, as manifests/job-signal-helper.yaml shows (Pod Security's
 * baseline level), for a non-root process cannot use CAP_KILL
 * (docs/decisions.md).
 */
static struct ynode *agent_container(struct run *r, const struct found *f, const char *policy, bool gate)
{
	struct ystream *s = r->s;
	struct ynode *c = ydoc_new_map(s, false), *env = ydoc_new_seq(s, false), *mounts = ydoc_new_seq(s, false);
	struct ynode *sc = ydoc_new_map(s, false), *drop = ydoc_new_seq(s, true), *res = ydoc_new_map(s, false);
	struct ynode *caps = pair_map(s, true, "drop", drop, NULL, NULL), *add = ydoc_new_seq(s, true);
	char apps[32], sidecars[MAX_SIDECARS * PRESET_SPEC_MAX] = "";
	bool natives = false;
	size_t i;

	if (!c || !env || !mounts || !sc || !drop || !res || !caps || !add)
		return NULL;
	snprintf(apps, sizeof(apps), "%zu", f->apps);
	for (i = 0; i < f->n; i++) {
		snprintf(sidecars + strlen(sidecars), sizeof(sidecars) - strlen(sidecars), "%s%s", i ? ";" : "",
			 f->sc[i].spec);
		natives |= f->sc[i].native && !(f->sc[i].p && f->sc[i].p->helper);
	}
	if (!r->o.image)
		r->c.placeholder = true;
	if (ydoc_set(s, c, "name", text(s, AGENT_NAME), false) < 0 ||
	    ydoc_set(s, c, "image", text(s, r->o.image ? r->o.image : INJECT_DEFAULT_IMAGE), false) < 0 ||
	    ydoc_append(s, env, env_var(s, "REARGUARD_APPS", apps)) < 0 ||
	    ydoc_append(s, env, env_var(s, "REARGUARD_RESTART_POLICY", policy)) < 0 ||
	    ydoc_append(s, env, env_var(s, "REARGUARD_SIDECARS", sidecars)) < 0 ||
	    /*
	     * The agent is listed first: with native sidecars, whatever runs
	     * before it is one of them, also where their program's name is
	     * only a guess (--first).
	     */
	    (natives && ydoc_append(s, env, env_var(s, "REARGUARD_FIRST", "true")) < 0) ||
	    ydoc_set(s, c, "env", env, false) < 0)
		return NULL;
	if (gate) {
		struct ynode *cmd = ydoc_new_seq(s, true);
		static const char *const words[] = {"/rearguard", "wait", "ready", "--timeout", GATE_TIMEOUT};

		for (i = 0; cmd && i < ARRAY_SIZE(words); i++)
			if (ydoc_append(s, cmd, text(s, words[i])) < 0)
				return NULL;
		if (!cmd || ydoc_set(s, c, "lifecycle",
				     pair_map(s, false, "postStart",
					      pair_map(s, false, "exec", pair_map(s, false, "command", cmd, NULL, NULL),
						       NULL, NULL),
					      NULL, NULL),
				     false) < 0)
			return NULL;
	}
	if (ydoc_append(s, mounts,
			pair_map(s, true, "name", text(s, AGENT_NAME), "mountPath", text(s, DEFAULT_DIR))) <
		0 ||
	    ydoc_set(s, c, "volumeMounts", mounts, false) < 0 || ydoc_append(s, drop, text(s, "ALL")) < 0 ||
	    ydoc_set(s, sc, "runAsUser", raw(s, f->root_agent ? "0" : AGENT_UID), false) < 0 ||
	    (!f->root_agent && ydoc_set(s, sc, "runAsGroup", raw(s, AGENT_UID), false) < 0) ||
	    ydoc_set(s, sc, "runAsNonRoot", raw(s, f->root_agent ? "false" : "true"), false) < 0 ||
	    ydoc_set(s, sc, "readOnlyRootFilesystem", raw(s, "true"), false) < 0 ||
	    ydoc_set(s, sc, "allowPrivilegeEscalation", raw(s, "false"), false) < 0 ||
	    (f->root_agent && (ydoc_append(s, add, text(s, "KILL")) < 0 || ydoc_set(s, caps, "add", add, false) < 0)) ||
	    ydoc_set(s, sc, "capabilities", caps, false) < 0 ||
	    ydoc_set(s, sc, "seccompProfile", pair_map(s, true, "type", text(s, "RuntimeDefault"), NULL, NULL), false) <
		0 ||
	    ydoc_set(s, c, "securityContext", sc, false) < 0 ||
	    ydoc_set(s, res, "requests", pair_map(s, true, "cpu", text(s, "5m"), "memory", text(s, "8Mi")), false) <
		0 ||
	    ydoc_set(s, res, "limits", pair_map(s, true, "memory", text(s, "32Mi"), NULL, NULL), false) < 0 ||
	    ydoc_set(s, c, "resources", res, false) < 0)
		return NULL;
	return c;
}

/* The file protocol's emptyDir, unless the pod has a volume of that name. */
static int add_volume(struct run *r, struct ynode *spec)
{
	struct ystream *s = r->s;
	struct ynode *vols = ydoc_want_seq(s, spec, "volumes"), *v;
	size_t i;

	if (!vols)
		return -ENOMEM;
	for (i = 0; i < vols->n; i++)
		if (inject_is(ydoc_get(vols->items[i], "name"), AGENT_NAME))
			return 0;
	v = pair_map(s, false, "name", text(s, AGENT_NAME), "emptyDir",
		     pair_map(s, true, "medium", text(s, "Memory"), "sizeLimit", text(s, "1Mi")));
	return ydoc_append(s, vols, v);
}

/*
 * kubectl logs and kubectl exec go to the pod's first container unless an
 * annotation names another: the agent, now first, would take their place.
 * The first app is named for both, unless the template names one already.
 */
static int default_container(struct run *r, struct ynode *tmpl, struct ynode **meta, const char *app)
{
	static const char *const keys[] = {"kubectl.kubernetes.io/default-container",
					   "kubectl.kubernetes.io/default-logs-container"};
	struct ynode *ann;
	size_t i;

	if (!app)
		return 0;
	ann = inject_annotations(r, tmpl, meta);
	if (!ann)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (!ydoc_get(ann, keys[i]) && ydoc_set(r->s, ann, keys[i], text(r->s, app), false) < 0)
			return -ENOMEM;
	return 0;
}

#define OTEL_PREFIX "instrumentation.opentelemetry.io/"

/*
 * The OpenTelemetry operator's auto-instrumentation (inject-java,
 * inject-python, ..., inject-sdk) goes into the containers that
 * container-names (or a language's own *-container-names) lists, and
 * without one into spec.containers[0]: the agent, now. The first app is
 * named, whatever the inject- annotations' values: a "false" on the
 * template may stand beside a namespace's "true" for another language.
 * A template that names containers itself keeps them (the operator
 * appends the common list to a language's own).
 */
static int otel_container_names(struct run *r, struct ynode *tmpl, struct ynode **meta, const char *app,
				const struct ynode *at, const char *what)
{
	const struct ynode *ann = ydoc_get(*meta, "annotations");
	const char *lang = NULL;
	size_t i, plen = strlen(OTEL_PREFIX), klen;
	struct ynode *out;

	if (!app || !ann || ann->kind != YNODE_MAP)
		return 0;
	for (i = 0; i + 1 < ann->n; i += 2) {
		const char *k = ydoc_str(ann->items[i]);

		if (!k || strncmp(k, OTEL_PREFIX, plen) != 0)
			continue;
		klen = strlen(k);
		/* container-names, java-container-names, ... and nginx's inject-nginx-container-names */
		if (klen >= sizeof("container-names") - 1 &&
		    strcmp(k + klen - (sizeof("container-names") - 1), "container-names") == 0)
			return 0;
		if (!lang && strncmp(k + plen, "inject-", 7) == 0)
			lang = k;
	}
	if (!lang)
		return 0;
	out = inject_annotations(r, tmpl, meta);
	if (!out || ydoc_set(r->s, out, OTEL_PREFIX "container-names", text(r->s, app), false) < 0)
		return -ENOMEM;
	inject_say(r, INFO, at, what,
		   "%s: the OpenTelemetry operator instruments the first container unless " OTEL_PREFIX
		   "container-names says which: set to %s, the first app, not the agent",
		   lang, app);
	return 0;
}

/* ---- one pod template ---------------------------------------------------------- */

/*
 * Whether a container or init container has a name, which the API server
 * requires and the specs of named and native sidecars are built from. One
 * without (missing, null, empty, or not a scalar) leaves its template
 * alone, with a warning where it is.
 */
static bool check_name(struct run *r, const struct ynode *c, const char *field, const char *list, size_t i,
		     const char *what)
{
	const struct ynode *name = ydoc_get(c, "name");

	if (name && name->kind == YNODE_SCALAR && !ydoc_is_null(name) && *name->value)
		return true;
	if (name && name->kind != YNODE_SCALAR)
		inject_say(r, WARN, name, what, "%s.spec.%s[%zu].name is %s, not a string: left unchanged", field,
			   list, i, inject_shape(name));
	else
		inject_say(r, WARN, name ? name : c, what,
			   "%s.spec.%s[%zu].name is %s: a container needs a name: left unchanged", field, list, i,
			   name && !ydoc_is_null(name) ? "empty" : "missing");
	r->c.left++;
	return false;
}

/*
 * Why a template without a sidecar is left alone: a refusal of the
 * injector --mesh names is the reason, not a missing --mesh; --mesh is
 * advised only when it was not given, and not to a template that refuses
 * a mesh.
 */
static void no_sidecar(struct run *r, const struct ynode *meta, const struct found *f, const struct ynode *at,
		       const char *what)
{
	char meshes[64], refusal[192] = "", mesh_hint[128] = "";
	const struct spec_preset *p = f->refused;

	if (p)
		snprintf(refusal, sizeof(refusal), "%s refuses %s's injector (%s=%s)",
			 f->mesh_refused ? "it" : "and it", p->name, p->inject_key,
			 inject_meta_value(meta, p->inject_key));
	if (!r->o.mesh && !(p && p->mesh)) {
		presets_mesh_words("|", meshes, sizeof(meshes));
		snprintf(mesh_hint, sizeof(mesh_hint), "a mesh that injects one namespace-wide needs --mesh %s; ",
			 meshes);
	}
	if (f->mesh_refused)
		inject_say(r, INFO, at, what,
			   "%s, which --mesh %s stands for, and shows no other known sidecar: left unchanged (a "
			   "sidecar inject does not know needs --sidecar CONTAINER or the annotation " INJECT_SIDECARS
			   ")",
			   refusal, r->o.mesh);
	else
		inject_say(r, INFO, at, what,
			   "no known sidecar in the template%s%s: left unchanged (%sa sidecar inject does not know "
			   "needs --sidecar CONTAINER or the annotation " INJECT_SIDECARS ")",
			   *refusal ? ", " : "", refusal, mesh_hint);
	r->c.left++;
}

/*
 * Why a template whose sidecars the agent would not stop is left alone:
 * native sidecars, which the kubelet stops (known or not), and helpers,
 * which end by themselves, each said as what it is.
 */
static void only_natives(struct run *r, const struct found *f, const struct ynode *at, const char *what)
{
	char natives[256] = "", helpers[256] = "";
	size_t i;

	for (i = 0; i < f->n; i++) {
		char *list = f->sc[i].p && f->sc[i].p->helper ? helpers : natives;

		snprintf(list + strlen(list), sizeof(natives) - strlen(list), "%s%s%s", *list ? ", " : "",
			 f->sc[i].p ? "" : "init container ", inject_sidecar_name(&f->sc[i]));
	}
	inject_say(r, INFO, at, what, "its sidecars are %s%s%s%s%s%s%s: left unchanged", *natives ? "native (" : "",
		   natives, *natives ? "), which the kubelet stops after the apps" : "",
		   *natives && *helpers ? ", and " : "", *helpers ? "helpers that end by themselves (" : "", helpers,
		   *helpers ? ")" : "");
	r->c.left++;
}

/*
 * Adds rearguard to one pod template (tmpl holds metadata and spec; for a
 * Pod it is the object). Returns 1 when it changed, 0 when it is left as it
 * is (with a note saying why), or an error.
 */
static int inject_template(struct run *r, struct ynode *tmpl, const char *field, bool job, const struct ynode *at,
			   const char *what)
{
	struct ynode *meta, *spec, *ctrs, *inits, *agent, *share, *bad;
	const char *policy, *v, *app;
	char list[256] = "";
	struct found f;
	bool gate = r->o.gate;
	size_t i, at_index = 0;
	int rc;

	meta = inject_want(tmpl, "metadata", YNODE_MAP, &bad);
	if (bad)
		return inject_misshapen(r, bad, what, field, "metadata", "a mapping");
	spec = inject_want(tmpl, "spec", YNODE_MAP, &bad);
	if (bad)
		return inject_misshapen(r, bad, what, field, "spec", "a mapping");
	if (meta) {
		inject_want(meta, "annotations", YNODE_MAP, &bad);
		if (bad)
			return inject_misshapen(r, bad, what, field, "metadata.annotations", "a mapping");
		inject_want(meta, "labels", YNODE_MAP, &bad);
		if (bad)
			return inject_misshapen(r, bad, what, field, "metadata.labels", "a mapping");
	}
	ctrs = spec ? inject_want(spec, "containers", YNODE_SEQ, &bad) : NULL;
	if (bad)
		return inject_misshapen(r, bad, what, field, "spec.containers", "a list");
	if (!ctrs || ctrs->n == 0) {
		inject_say(r, WARN,
			   ctrs	  ? ctrs
			   : spec ? spec
				  : tmpl,
			   what, "%s.spec.containers is %s: a pod needs at least one container: left unchanged", field,
			   ctrs ? "empty" : "missing");
		r->c.left++;
		return 0;
	}
	if (ctrs->n > MAX_CONTAINERS) {
		inject_say(r, WARN, ctrs, what, "more than %d containers: left unchanged", MAX_CONTAINERS);
		r->c.left++;
		return 0;
	}
	inject_want(spec, "volumes", YNODE_SEQ, &bad);
	if (bad)
		return inject_misshapen(r, bad, what, field, "spec.volumes", "a list");
	inits = inject_want(spec, "initContainers", YNODE_SEQ, &bad);
	if (bad)
		return inject_misshapen(r, bad, what, field, "spec.initContainers", "a list");
	for (i = 0; inits && i < inits->n; i++) {
		if (inits->items[i]->kind != YNODE_MAP) {
			inject_say(r, WARN, inits->items[i], what,
				   "%s.spec.initContainers[%zu] is %s, not a mapping: left unchanged", field, i,
				   inject_shape(inits->items[i]));
			r->c.left++;
			return 0;
		}
		if (!check_name(r, inits->items[i], field, "initContainers", i, what))
			return 0;
	}
	for (i = 0; i < ctrs->n; i++) {
		struct ynode *c = ctrs->items[i];

		if (c->kind != YNODE_MAP) {
			inject_say(r, WARN, c, what, "%s.spec.containers[%zu] is %s, not a mapping: left unchanged",
				   field, i, inject_shape(c));
			r->c.left++;
			return 0;
		}
		if (!check_name(r, c, field, "containers", i, what))
			return 0;
		if (inject_is_agent(c)) {
			inject_say(r, INFO, at, what, "already has rearguard (container %s): left unchanged",
				   ydoc_str(ydoc_get(c, "name")) ? ydoc_str(ydoc_get(c, "name")) : "?");
			r->c.left++;
			return 0;
		}
		inject_want(c, "args", YNODE_SEQ, &bad);
		if (!bad)
			inject_want(c, "command", YNODE_SEQ, &bad);
		if (bad) {
			inject_say(r, WARN, bad, what, "%s.spec.containers[%zu]: %s is %s, not a list: left unchanged",
				   field, i, bad == ydoc_get(c, "args") ? "args" : "command", inject_shape(bad));
			r->c.left++;
			return 0;
		}
	}
	v = inject_meta_value(meta, INJECT_LABEL);
	if (v && strcmp(v, "disabled") == 0) {
		inject_say(r, INFO, at, what, "%s=disabled: left unchanged", INJECT_LABEL);
		r->c.left++;
		return 0;
	}
	policy = ydoc_value(ydoc_get(spec, "restartPolicy"));
	if (!policy && job) {
		inject_say(r, INFO, at, what,
			   "no restartPolicy (a Job's pod needs Never or OnFailure): left unchanged");
		r->c.left++;
		return 0;
	}
	if (!policy || (strcmp(policy, "Never") != 0 && strcmp(policy, "OnFailure") != 0)) {
		inject_say(
		    r, INFO, at, what,
		    "restartPolicy %s restarts every container that ends, so the pod never finishes: left unchanged",
		    policy ? policy : "Always (the default)");
		r->c.left++;
		return 0;
	}
	rc = inject_find_sidecars(r, meta, ctrs, inits, &f, at, what);
	if (rc == -1) {
		r->c.left++;
		return 0;
	}
	if (rc < 0)
		return rc;
	if (f.n == 0) {
		no_sidecar(r, meta, &f, at, what);
		return 0;
	}
	if (f.plain == 0) {
		only_natives(r, &f, at, what);
		return 0;
	}
	if (f.apps == 0) {
		inject_say(r, INFO, at, what, "every container is a sidecar, none is an app: left unchanged");
		r->c.left++;
		return 0;
	}
	rc = inject_fix_sidecars(r, tmpl, &meta, &f, at, what);
	if (rc == 0)
		rc = inject_write_specs(r, meta, &f, at, what);
	if (rc < 0)
		return rc;
	inject_check_signals(r, meta, spec, &f, at, what);
	app = ydoc_str(ydoc_get(ctrs->items[f.first_app], "name"));
	for (i = 0; i < f.n; i++)
		if (!f.sc[i].native)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", *list ? ", " : "",
				 inject_sidecar_name(&f.sc[i]));
	for (i = 0, v = "; native: "; i < f.n; i++)
		if (f.sc[i].native) {
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", v,
				 inject_sidecar_name(&f.sc[i]));
			v = ", ";
		}
	if (gate)
		gate = inject_can_gate(r, meta, &f, at, what);
	if (gate) {
		/* The template's sidecars first, then the agent and its hook, then the apps. */
		struct ynode *order[MAX_CONTAINERS];
		size_t n = 0;

		for (i = 0; i < ctrs->n; i++)
			if (f.sidecar_ctr[i])
				order[n++] = ctrs->items[i];
		at_index = n;
		for (i = 0; i < ctrs->n; i++)
			if (!f.sidecar_ctr[i])
				order[n++] = ctrs->items[i];
		memcpy(ctrs->items, order, n * sizeof(order[0]));
	}
	rc = default_container(r, tmpl, &meta, app);
	if (rc == 0)
		rc = otel_container_names(r, tmpl, &meta, app, at, what);
	if (rc < 0)
		return rc;
	agent = agent_container(r, &f, policy, gate);
	if (!agent || ydoc_insert(r->s, ctrs, at_index, agent) < 0)
		return -ENOMEM;
	share = ydoc_get(spec, "shareProcessNamespace");
	/* Null is absent: nothing was set to say of. */
	if (share && !ydoc_is_null(share) && !inject_is(share, "true"))
		inject_say(
		    r, WARN, share, what,
		    "shareProcessNamespace was %s: set to true (rearguard watches the other containers through /proc)",
		    ydoc_str(share) ? ydoc_str(share) : inject_shape(share));
	if (ydoc_set(r->s, spec, "shareProcessNamespace", raw(r->s, "true"), true) < 0)
		return -ENOMEM;
	rc = add_volume(r, spec);
	if (rc < 0)
		return rc;
	inject_say(r, INFO, at, what, "rearguard added: %zu app%s, sidecars %s", f.apps, f.apps == 1 ? "" : "s", list);
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
static int inject_object(struct run *r, struct ynode *obj)
{
	const char *kind = ydoc_str(ydoc_get(obj, "kind")), *api = ydoc_str(ydoc_get(obj, "apiVersion"));
	bool batch = api && strncmp(api, "batch/", 6) == 0,
	     pod = kind && strcmp(kind, "Pod") == 0 && inject_is(ydoc_get(obj, "apiVersion"), "v1");
	bool job = batch && kind && strcmp(kind, "Job") == 0, cron = batch && kind && strcmp(kind, "CronJob") == 0;
	const struct ynode *mark;
	struct ynode *t, *bad = NULL;
	const char *field, *p;
	char what[320];
	size_t n;

	if (obj->kind != YNODE_MAP) {
		if (!ydoc_is_null(obj))
			inject_say(r, WARN, obj, "document", "%s, not a mapping: left unchanged", inject_shape(obj));
		return 0;
	}
	name_object(obj, pod || job || cron, what, sizeof(what));
	if (!kind)
		return 0;
	if (!pod && !job && !cron) {
		const struct ynode *apin = ydoc_get(obj, "apiVersion");
		bool ours = strcmp(kind, "Job") == 0 || strcmp(kind, "CronJob") == 0 || strcmp(kind, "Pod") == 0;
		const char *want = strcmp(kind, "Pod") == 0 ? "v1" : "batch/v1";

		/*
		 * Each object said is counted left unchanged. A workload of another
		 * API that shares a name with one of ours (a Volcano Job) is said, and
		 * so is one without an apiVersion, which is no other API's either.
		 */
		if (ours && apin && apin->kind != YNODE_SCALAR)
			inject_say(r, WARN, apin, what,
				   "apiVersion is %s, not a string (a %s's is %s): left unchanged (the API server "
				   "refuses it as well)",
				   inject_shape(apin), kind, want);
		else if (ours && (!api || !*api || ydoc_is_null(apin)))
			inject_say(r, WARN, obj, what,
				   "no apiVersion (a %s's is %s): left unchanged (the API server refuses it as well)",
				   kind, want);
		else if (ours)
			inject_say(r, INFO, obj, what, "not Kubernetes' %s (%s): left unchanged", kind, want);
		else if (api && strncmp(api, "argoproj.io/", 12) == 0 && strstr(kind, "Workflow"))
			inject_say(
			    r, INFO, obj, what,
			    "Argo Workflows stops the sidecars of its pods itself: left unchanged (docs/inject.md)");
		else if (api && strncmp(api, "tekton.dev/", 11) == 0 && (strstr(kind, "Run") || strstr(kind, "Task")))
			inject_say(r, INFO, obj, what,
				   "Tekton stops the sidecars of its pods itself: left unchanged (docs/inject.md)");
		else
			return 0;
		r->c.left++;
		return 0;
	}
	mark = helm_mark(obj, 0);
	if (mark) {
		inject_say(
		    r, WARN, mark, what,
		    "an unrendered Helm template ({{ ... }}): left unchanged; run helm template and inject its output");
		r->c.left++;
		return 0;
	}
	if (pod)
		return inject_template(r, obj, "", false, obj, what);
	field = cron ? "spec.jobTemplate.spec.template" : "spec.template";
	/* Each step of the path a mapping: its first step that is not says where. */
	for (t = obj, p = field; t && *p; p += n + (p[n] == '.')) {
		char key[32];

		n = strcspn(p, ".");
		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		t = inject_want(t, key, YNODE_MAP, &bad);
		if (bad) {
			snprintf(key, sizeof(key), "%.*s", (int)(p - field + n), field);
			return inject_misshapen(r, bad, what, "", key, "a mapping");
		}
	}
	if (!t) {
		inject_say(r, WARN, obj, what, "%s is missing: a %s needs a pod template: left unchanged", field, kind);
		r->c.left++;
		return 0;
	}
	return inject_template(r, t, field, true, obj, what);
}

int inject_pod(struct ystream *s, struct ynode *pod, const struct inject_options *o, char *err, size_t errlen)
{
	struct run r = {.s = s, .o = *o, .err = err, .errlen = errlen};
	char what[320];
	int rc;

	if (!pod || pod->kind != YNODE_MAP || !inject_is(ydoc_get(pod, "kind"), "Pod")) {
		inject_say(&r, WARN, pod, "object", "not a Pod: left unchanged");
		return 0;
	}
	/* No Helm check: a pod the API server holds was rendered, and "{{" in it is data. */
	name_object(pod, true, what, sizeof(what));
	rc = inject_template(&r, pod, "", false, pod, what);
	if (o->counts) {
		o->counts->changed += r.c.changed;
		o->counts->left += r.c.left;
		o->counts->warnings += r.c.warnings;
		o->counts->placeholder |= r.c.placeholder;
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return rc;
}

/* A boolean option of a functionConfig (true or false, as REARGUARD_GATE takes it). */
static int set_bool(struct run *r, const struct ynode *at, const char *key, const char *v, bool *opt,
		    enum inject_origin *from)
{
	bool on;

	if (!v || parse_bool(v, &on) < 0)
		return inject_fail(r, at, "functionConfig", "%s \"%s\" is not true or false", key, v ? v : "");
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
				return inject_fail(r, at, "functionConfig", "image needs a value");
			r->o.image = v;
			r->o.image_from = INJECT_FUNCTION_CONFIG;
		}
		return 0;
	}
	if (strcmp(key, "mesh") == 0) {
		if (!v || (*v && !presets_mesh(v))) {
			char meshes[64];

			presets_mesh_words(" or ", meshes, sizeof(meshes));
			return inject_fail(r, at, "functionConfig", "mesh \"%s\" is not %s", v ? v : "", meshes);
		}
		if (r->o.mesh_from < INJECT_FUNCTION_CONFIG) {
			r->o.mesh = *v ? v : NULL;
			r->o.mesh_from = INJECT_FUNCTION_CONFIG;
		}
		return 0;
	}
	if (strcmp(key, "gate") == 0)
		return set_bool(r, at, key, v, &r->o.gate, &r->o.gate_from);
	if (strcmp(key, "signal-as-root") == 0)
		return set_bool(r, at, key, v, &r->o.signal_as_root, &r->o.signal_as_root_from);
	return inject_fail(r, at, "functionConfig",
			   "unknown option \"%s\" (options: image, mesh, gate, signal-as-root)", key);
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
		if (!ydoc_is_null(root))
			inject_say(r, WARN, root, "document", "%s, not a mapping: left unchanged", inject_shape(root));
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

	rc = ydoc_parse(in, len, &s, err, errlen);
	if (rc == -EINVAL && memmem(in, len, "{{", 2) && strlen(err) + 1 < errlen)
		snprintf(err + strlen(err), errlen - strlen(err),
			 " (the input holds {{: an unrendered Helm template? run helm template and inject its output)");
	if (rc < 0)
		return rc;
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

			inject_say(&r, INFO, &at, "document",
				   "no place to edit its text here (items reordered or taken out, a line broken by "
				   "CR alone): written whole from its tree, its comments and layout lost");
		}
	ydoc_free(&s);
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
