/*
 * A plan carried out on the tree it was read from (injectplan.h): the
 * fixes, the containers' order for start gating, the annotations for
 * kubectl's default container and the OpenTelemetry operator, the agent,
 * the shared process namespace and the volume. What is added goes where
 * the tree's writers (yamldoc-edit.c's text edits, review.c's JSON Patch)
 * find it: new nodes among items as read.
 */
#include "config.h"

#include "injectint.h"

#include "defaults.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct applying {
	struct ystream *s;
	struct ynode *tmpl, *meta;
};

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

/* The template's annotations, made (with its metadata) when missing; NULL when out of memory. */
static struct ynode *annotations(struct applying *a)
{
	if (!a->meta) {
		a->meta = ydoc_new_map(a->s, false);
		if (!a->meta || ydoc_set(a->s, a->tmpl, "metadata", a->meta, true) < 0)
			return NULL;
	}
	/* Absent or null: made; of another shape the plan left the template alone. */
	return ydoc_want_map(a->s, a->meta, "annotations");
}

/* key: value among the annotations, unless the key is there. */
static int annotate(struct applying *a, const char *key, const char *value)
{
	struct ynode *ann = annotations(a);

	if (!ann)
		return -ENOMEM;
	if (ydoc_get(ann, key))
		return 0;
	return ydoc_set(a->s, ann, key, text(a->s, value), false) < 0 ? -ENOMEM : 0;
}

/* A container's variable set: its value replaced where the variable is (the last entry of it), else added. */
static int set_env(struct applying *a, struct ynode *c, const char *name, const char *value)
{
	struct ynode *env = ydoc_want_seq(a->s, c, "env"), *entry = NULL, *v;
	size_t i;

	if (!env)
		return -ENOMEM;
	for (i = 0; i < env->n; i++)
		if (inject_is(ydoc_get(env->items[i], "name"), name))
			entry = env->items[i];
	if (!entry)
		return ydoc_append(a->s, env, env_var(a->s, name, value));
	/* A string, quoted where it must be ("true"), whatever the old value's style. */
	v = text(a->s, value);
	return v ? ydoc_set(a->s, entry, "value", v, false) : -ENOMEM;
}

/* One planned fix. added counts the flags put first in each container's args so far. */
static int apply_fix(struct applying *a, const struct fix *fx, struct ynode **last_ctr, size_t *added)
{
	struct ynode *args, *flag;
	size_t at;

	switch (fx->kind) {
	case FIX_ANNOTATION:
		return annotate(a, fx->key, fx->value);
	case FIX_FLAG_ON:
		flag = text(a->s, fx->key);
		if (!flag)
			return -ENOMEM;
		flag->style = (*fx->slot)->style;
		*fx->slot = flag;
		return 0;
	case FIX_FLAG_ADD:
		if (*last_ctr != fx->ctr) {
			*last_ctr = fx->ctr;
			*added = 0;
		}
		/* Absent or null (Helm's empty list): a list of the flags. */
		args = ydoc_want_seq(a->s, fx->ctr, "args");
		if (!args)
			return -ENOMEM;
		flag = text(a->s, fx->key);
		at = fx->at + *added;
		/* Quoted like the arguments around it. */
		if (flag && args->n > at && args->items[at]->kind == YNODE_SCALAR)
			flag->style = args->items[at]->style;
		(*added)++;
		return ydoc_insert(a->s, args, at > args->n ? args->n : at, flag);
	case FIX_ENV:
		return set_env(a, fx->ctr, fx->key, fx->value);
	}
	return 0;
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
static struct ynode *agent_container(struct ystream *s, const struct inject_options *o, const struct inject_plan *plan)
{
	const struct found *f = &plan->f;
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
	if (ydoc_set(s, c, "name", text(s, AGENT_NAME), false) < 0 ||
	    ydoc_set(s, c, "image", text(s, o->image ? o->image : INJECT_DEFAULT_IMAGE), false) < 0 ||
	    ydoc_append(s, env, env_var(s, "REARGUARD_APPS", apps)) < 0 ||
	    ydoc_append(s, env, env_var(s, "REARGUARD_RESTART_POLICY", plan->policy)) < 0 ||
	    ydoc_append(s, env, env_var(s, "REARGUARD_SIDECARS", sidecars)) < 0 ||
	    /* How long the sidecars are kept for the apps on a deletion, where the template says. */
	    (plan->term_grace && ydoc_append(s, env, env_var(s, "REARGUARD_TERM_GRACE", plan->term_grace)) < 0) ||
	    /*
	     * The agent is listed first: with native sidecars, whatever runs
	     * before it is one of them, also where their program's name is
	     * only a guess (--first).
	     */
	    (natives && ydoc_append(s, env, env_var(s, "REARGUARD_FIRST", "true")) < 0) ||
	    ydoc_set(s, c, "env", env, false) < 0)
		return NULL;
	if (plan->gate) {
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
			pair_map(s, true, "name", text(s, AGENT_NAME), "mountPath", text(s, DEFAULT_DIR))) < 0 ||
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
static int add_volume(struct ystream *s, struct ynode *spec)
{
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

/* Start gating: the template's sidecars first, then the agent and its hook, then the apps. The agent's index. */
static size_t gate_order(struct ynode *ctrs, const struct found *f)
{
	struct ynode *order[MAX_CONTAINERS];
	size_t i, n = 0, at;

	for (i = 0; i < ctrs->n; i++)
		if (f->sidecar_ctr[i])
			order[n++] = ctrs->items[i];
	at = n;
	for (i = 0; i < ctrs->n; i++)
		if (!f->sidecar_ctr[i])
			order[n++] = ctrs->items[i];
	memcpy(ctrs->items, order, n * sizeof(order[0]));
	return at;
}

int inject_apply(struct ystream *s, struct ynode *tmpl, const struct inject_options *o, const struct inject_plan *plan)
{
	struct applying a = {.s = s, .tmpl = tmpl, .meta = ydoc_get(tmpl, "metadata")};
	struct ynode *spec = ydoc_get(tmpl, "spec"), *ctrs = ydoc_get(spec, "containers"), *agent, *last = NULL;
	size_t i, pass, added = 0, at = 0;
	int rc;

	if (!plan->change)
		return 0;
	if (a.meta && ydoc_is_null(a.meta))
		a.meta = NULL;
	/*
	 * The arguments turned on in place first: their slots point into the
	 * lists as read, which a flag put in would shift under them.
	 */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < plan->nfixes; i++) {
			if ((plan->fixes[i].kind == FIX_FLAG_ADD) != (pass == 1))
				continue;
			rc = apply_fix(&a, &plan->fixes[i], &last, &added);
			if (rc < 0)
				return rc;
		}
	if (plan->gate)
		at = gate_order(ctrs, &plan->f);
	/*
	 * kubectl logs and kubectl exec go to the pod's first container unless
	 * an annotation names another: the agent, now first, would take their
	 * place. The first app is named for both, unless the template names
	 * one already.
	 */
	if (annotate(&a, "kubectl.kubernetes.io/default-container", plan->app) < 0 ||
	    annotate(&a, "kubectl.kubernetes.io/default-logs-container", plan->app) < 0 ||
	    (plan->otel && annotate(&a, INJECT_OTEL_NAMES, plan->app) < 0))
		return -ENOMEM;
	agent = agent_container(s, o, plan);
	if (!agent || ydoc_insert(s, ctrs, at, agent) < 0)
		return -ENOMEM;
	if (ydoc_set(s, spec, "shareProcessNamespace", raw(s, "true"), true) < 0)
		return -ENOMEM;
	rc = add_volume(s, spec);
	if (rc == 0)
		rc = inject_apply_wraps(s, spec, o, plan);
	return rc < 0 ? rc : inject_apply_holds(s, spec, o, plan);
}
