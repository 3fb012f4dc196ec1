/*
 * inject's decision for one pod template, read and planned without
 * changing it (injectplan.h): whether rearguard goes in, what its sidecars
 * are and what their stops need, and every reason, as notes.
 *
 * The questions come in the order a person would ask them: is the
 * template one the API server takes; does it ask to be left alone, or is
 * it a pod rearguard must not touch (a mirror pod, a controller that stops
 * its sidecars itself, a shared PID or network namespace with the node);
 * will its pod ever finish (the restart policy); has it sidecars to stop
 * and apps to wait for. Then the sidecars' fixes and specs, the checks of
 * their signals, start gating.
 */
#include "config.h"

#include "injectint.h"

#include "presets.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define OTEL_PREFIX "instrumentation.opentelemetry.io/"
/* The kubelet's annotation on the mirror pod of a static pod. */
#define MIRROR_KEY "kubernetes.io/config.mirror"
#define MANAGED_BY "app.kubernetes.io/managed-by"

/* A template left as it is because of a field's shape: where, what it is, what it should be. */
static int misshapen(struct planning *pl, const struct ynode *n, const char *field, const char *key, const char *want)
{
	struct inject_note *nt = plan_note(pl, NOTE_MISSHAPEN, WARN, n);

	snprintf(nt->words, sizeof(nt->words), "%s%s%s", field, *field ? "." : "", key);
	nt->b = inject_shape(n);
	nt->c = want;
	return 0;
}

/*
 * Whether a container or init container has a name, which the API server
 * requires and the specs of named and native sidecars are built from. One
 * without (missing, null, empty, or not a scalar) leaves its template
 * alone, with a warning where it is.
 */
static bool check_name(struct planning *pl, const struct ynode *c, const char *field, const char *list, size_t i)
{
	const struct ynode *name = ydoc_get(c, "name");
	struct inject_note *nt;

	if (name && name->kind == YNODE_SCALAR && !ydoc_is_null(name) && *name->value)
		return true;
	if (name && name->kind != YNODE_SCALAR) {
		nt = plan_note(pl, NOTE_NAME_NOT_STRING, WARN, name);
		nt->c = inject_shape(name);
	} else {
		nt = plan_note(pl, NOTE_NAME_MISSING, WARN, name ? name : c);
		nt->flag = name && !ydoc_is_null(name);
	}
	nt->a = field;
	nt->b = list;
	nt->n = i;
	return false;
}

/*
 * Whether the template is one the API server takes, where inject reads it:
 * its metadata, spec, containers and init containers of the right shapes,
 * each with a name. *meta, *spec, *ctrs and *inits are what it found.
 */
static bool well_formed(struct planning *pl, const struct ynode *tmpl, const char *field, struct ynode **meta,
			struct ynode **spec, struct ynode **ctrs, struct ynode **inits)
{
	struct ynode *bad;
	struct inject_note *nt;
	size_t i;

	*meta = inject_want(tmpl, "metadata", YNODE_MAP, &bad);
	if (bad)
		return misshapen(pl, bad, field, "metadata", "a mapping");
	*spec = inject_want(tmpl, "spec", YNODE_MAP, &bad);
	if (bad)
		return misshapen(pl, bad, field, "spec", "a mapping");
	if (*meta) {
		inject_want(*meta, "annotations", YNODE_MAP, &bad);
		if (bad)
			return misshapen(pl, bad, field, "metadata.annotations", "a mapping");
		inject_want(*meta, "labels", YNODE_MAP, &bad);
		if (bad)
			return misshapen(pl, bad, field, "metadata.labels", "a mapping");
	}
	*ctrs = *spec ? inject_want(*spec, "containers", YNODE_SEQ, &bad) : NULL;
	if (bad)
		return misshapen(pl, bad, field, "spec.containers", "a list");
	if (!*ctrs || (*ctrs)->n == 0) {
		nt = plan_note(pl, NOTE_NO_CONTAINERS, WARN, *ctrs ? *ctrs : *spec ? *spec : tmpl);
		nt->a = field;
		nt->flag = *ctrs != NULL;
		return false;
	}
	if ((*ctrs)->n > MAX_CONTAINERS) {
		plan_note(pl, NOTE_TOO_MANY_CONTAINERS, WARN, *ctrs)->n = MAX_CONTAINERS;
		return false;
	}
	inject_want(*spec, "volumes", YNODE_SEQ, &bad);
	if (bad)
		return misshapen(pl, bad, field, "spec.volumes", "a list");
	*inits = inject_want(*spec, "initContainers", YNODE_SEQ, &bad);
	if (bad)
		return misshapen(pl, bad, field, "spec.initContainers", "a list");
	for (i = 0; *inits && i < (*inits)->n; i++) {
		const struct ynode *c = (*inits)->items[i];

		if (c->kind != YNODE_MAP) {
			nt = plan_note(pl, NOTE_ITEM_NOT_MAPPING, WARN, c);
			nt->a = field;
			nt->b = "initContainers";
			nt->n = i;
			nt->c = inject_shape(c);
			return false;
		}
		if (!check_name(pl, c, field, "initContainers", i))
			return false;
	}
	for (i = 0; i < (*ctrs)->n; i++) {
		const struct ynode *c = (*ctrs)->items[i];

		if (c->kind != YNODE_MAP) {
			nt = plan_note(pl, NOTE_ITEM_NOT_MAPPING, WARN, c);
			nt->a = field;
			nt->b = "containers";
			nt->n = i;
			nt->c = inject_shape(c);
			return false;
		}
		if (!check_name(pl, c, field, "containers", i))
			return false;
		if (inject_is_agent(c)) {
			plan_note(pl, NOTE_HAS_AGENT, INFO, NULL)->ctr = inject_name(c) ? inject_name(c) : "?";
			return false;
		}
		inject_want(c, "args", YNODE_SEQ, &bad);
		if (!bad)
			inject_want(c, "command", YNODE_SEQ, &bad);
		if (bad) {
			nt = plan_note(pl, NOTE_COMMAND_NOT_LIST, WARN, bad);
			nt->a = field;
			nt->n = i;
			nt->b = bad == ydoc_get(c, "args") ? "args" : "command";
			nt->c = inject_shape(bad);
			return false;
		}
	}
	return true;
}

/*
 * Why a template without a sidecar is left alone: a refusal of the
 * injector --mesh names is the reason, not a missing --mesh; --mesh is
 * advised only when it was not given, and not to a template that refuses
 * a mesh.
 */
static void no_sidecar(struct planning *pl, const struct ynode *meta, const struct found *f)
{
	struct inject_note *nt = plan_note(pl, NOTE_NO_SIDECAR, INFO, NULL);
	const struct spec_preset *p = f->refused;

	nt->p = p;
	nt->a = p ? inject_meta_value(meta, p->inject_key) : NULL;
	nt->flag = f->mesh_refused;
	nt->b = pl->o->mesh;
	if (!pl->o->mesh && !(p && p->mesh))
		presets_mesh_words("|", nt->words, sizeof(nt->words));
}

/*
 * Why a template whose sidecars the agent would not stop is left alone:
 * native sidecars, which the kubelet stops (known or not), and helpers,
 * which end by themselves, each said as what it is.
 */
static void only_natives(struct planning *pl, const struct found *f)
{
	struct inject_note *nt = plan_note(pl, NOTE_ONLY_NATIVES, INFO, NULL);
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct sidecar *sc = &f->sc[i];
		char *list = (sc->p && sc->p->helper) || sc->self_stops ? nt->words2 : nt->words;

		snprintf(list + strlen(list), NOTE_LIST_MAX - strlen(list), "%s%s%s%s%s", *list ? ", " : "",
			 sc->p ? "" : "init container ", inject_sidecar_name(sc), sc->self_stops ? " under " : "",
			 sc->self_stops ? sc->self_stops : "");
	}
}

/*
 * The OpenTelemetry operator's auto-instrumentation (inject-java,
 * inject-python, ..., inject-sdk) goes into the containers that
 * container-names (or a language's own *-container-names) lists, and
 * without one into spec.containers[0]: the agent, once added. The first
 * app is named, whatever the inject- annotations' values: a "false" on the
 * template may stand beside a namespace's "true" for another language. A
 * template that names containers itself keeps them (the operator appends
 * the common list to a language's own). The annotation that asks, or NULL.
 */
static const char *otel_language(const struct ynode *meta)
{
	const struct ynode *ann = ydoc_get(meta, "annotations");
	const char *lang = NULL;
	size_t i, plen = strlen(OTEL_PREFIX), klen, names = sizeof("container-names") - 1;

	if (!ann || ann->kind != YNODE_MAP)
		return NULL;
	for (i = 0; i + 1 < ann->n; i += 2) {
		const char *k = ydoc_str(ann->items[i]);

		if (!k || strncmp(k, OTEL_PREFIX, plen) != 0)
			continue;
		klen = strlen(k);
		/* container-names, java-container-names, ... and nginx's inject-nginx-container-names */
		if (klen >= names && strcmp(k + klen - names, "container-names") == 0)
			return NULL;
		if (!lang && strncmp(k + plen, "inject-", 7) == 0)
			lang = k;
	}
	return lang;
}

/* The sidecars in the note that says rearguard was added: the ones it stops, and the native ones. */
static void sidecar_lists(const struct found *f, struct inject_note *nt)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		char *list = f->sc[i].native ? nt->words2 : nt->words;

		snprintf(list + strlen(list), NOTE_LIST_MAX - strlen(list), "%s%s", *list ? ", " : "",
			 inject_sidecar_name(&f->sc[i]));
	}
}

/*
 * A pod whose controller stops its sidecars itself, and which a shared
 * process namespace breaks (docs/inject.md): an Argo Workflows step (its
 * executor, the wait container, kills the sidecars when the main
 * container ends, and refuses to in a pod that shares its process
 * namespace), a Tekton TaskRun's pod (the controller swaps each sidecar's
 * image for one that exits), an Airflow KubernetesPodOperator's pod (it
 * reads its xcom sidecar, then kills its shell by an exec). Known by the
 * labels and annotations their controllers put on every pod, or Argo's
 * wait container. Said, and true.
 */
static bool controlled(struct planning *pl, const struct ynode *meta, const struct ynode *ctrs)
{
	static const struct {
		const char *controller, *key;
		bool label; /* a label; else an annotation */
	} marks[] = {
		{"Argo Workflows", "workflows.argoproj.io/workflow", true},
		{"Argo Workflows", "workflows.argoproj.io/node-id", false},
		{"Argo Workflows", "workflows.argoproj.io/node-name", false},
		{"Tekton", "tekton.dev/taskRun", true},
		{"Tekton", "tekton.dev/pipelineRun", true},
		/* It stops its xcom sidecar by an exec that a shared process namespace defeats (apache/airflow#45047). */
		{"Airflow's KubernetesPodOperator", "kubernetes_pod_operator", true},
	};
	const char *by = NULL, *who = NULL, *managed = ydoc_str(ydoc_get(ydoc_get(meta, "labels"), MANAGED_BY));
	struct inject_note *nt;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(marks) && !by; i++)
		if (ydoc_get(ydoc_get(meta, marks[i].label ? "labels" : "annotations"), marks[i].key)) {
			who = marks[i].controller;
			by = marks[i].key;
		}
	if (!by && managed && strcmp(managed, "tekton-pipelines") == 0) {
		who = "Tekton";
		by = MANAGED_BY "=tekton-pipelines";
	}
	for (i = 0; i < ctrs->n && !by; i++) {
		const char *image = ydoc_str(ydoc_get(ctrs->items[i], "image"));

		if (inject_is(ydoc_get(ctrs->items[i], "name"), "wait") && image && presets_image_is(image, "argoexec")) {
			who = "Argo Workflows";
			by = "its wait container, argoexec";
		}
	}
	if (!by)
		return false;
	nt = plan_note(pl, NOTE_CONTROLLER, WARN, NULL);
	nt->a = who;
	nt->b = by;
	return true;
}

/*
 * Whether the pod keeps its own process namespace, which the agent needs:
 * with hostPID the API server refuses shareProcessNamespace (said). With
 * hostNetwork a sidecar's admin ports on 127.0.0.1 are the node's, shared
 * with every pod there, where a stop request or a readiness poll could
 * reach another pod's sidecar: rearguard uses none (plan->no_ports, said):
 * each sidecar is stopped by SIGTERM, none is polled, no flag or
 * annotation that opens a port is added (docs/decisions.md).
 */
static bool own_pid_namespace(struct planning *pl, const struct ynode *spec)
{
	if (inject_is(ydoc_get(spec, "hostPID"), "true")) {
		plan_note(pl, NOTE_HOST_PID, WARN, ydoc_get(spec, "hostPID"));
		return false;
	}
	if (inject_is(ydoc_get(spec, "hostNetwork"), "true")) {
		plan_note(pl, NOTE_HOST_NETWORK, WARN, ydoc_get(spec, "hostNetwork"));
		pl->plan->no_ports = true;
	}
	return true;
}

static const char *field_of(enum inject_where where)
{
	switch (where) {
	case INJECT_POD:
		return "";
	case INJECT_JOB_TEMPLATE:
		return "spec.template";
	case INJECT_CRONJOB_TEMPLATE:
		return "spec.jobTemplate.spec.template";
	case INJECT_WORKLOAD_TEMPLATE:
		return "spec.template";
	}
	return "";
}

/* Whether the template asks for a long-running pod's order: rearguard.io/inject: services, or --services. */
static bool services_asked(const struct planning *pl, const struct ynode *meta)
{
	const char *v = inject_meta_value(meta, INJECT_LABEL);

	return pl->o->services || (v && strcmp(v, INJECT_SERVICES) == 0);
}

/*
 * Whether rearguard has something to do for the pod's restart policy (the
 * plan's policy then): a pod that finishes, one of Never or OnFailure; or
 * a long-running one, Always (a pod's default, a workload's only one),
 * where the template asks for it (plan->services).
 */
static bool policy_ok(struct planning *pl, const struct ynode *meta, const struct ynode *spec)
{
	const char *policy = ydoc_value(ydoc_get(spec, "restartPolicy"));
	bool job = pl->plan->where == INJECT_JOB_TEMPLATE || pl->plan->where == INJECT_CRONJOB_TEMPLATE;

	if (!policy && job) {
		plan_note(pl, NOTE_NO_POLICY, INFO, NULL);
		return false;
	}
	if (policy && (strcmp(policy, "Never") == 0 || strcmp(policy, "OnFailure") == 0)) {
		pl->plan->policy = policy;
		return true;
	}
	if ((policy && strcmp(policy, "Always") != 0) || job || !services_asked(pl, meta)) {
		plan_note(pl, NOTE_RESTARTS, INFO, NULL)->a = policy;
		return false;
	}
	pl->plan->policy = "Always";
	pl->plan->services = true;
	return true;
}

/* What the pod's sidecars and apps are, and whether there is something to do: the plan's f. */
static int sidecars_and_apps(struct planning *pl, const struct ynode *meta, const struct ynode *ctrs,
			     const struct ynode *inits)
{
	struct found *f = &pl->plan->f;
	int rc = inject_find_sidecars(pl, meta, ctrs, inits, f);

	if (rc < 0)
		return rc == -1 ? 0 : rc;
	if (f->n == 0)
		no_sidecar(pl, meta, f);
	else if (f->plain == 0)
		only_natives(pl, f);
	else if (f->apps == 0)
		plan_note(pl, NOTE_ALL_SIDECARS, INFO, NULL);
	else
		return 1;
	return 0;
}

int inject_plan(struct ystream *s, struct ynode *tmpl, enum inject_where where, const struct inject_options *o,
		struct inject_plan *plan, char *err, size_t errlen)
{
	struct planning pl = {.s = s, .o = o, .plan = plan, .err = err, .errlen = errlen};
	struct ynode *meta = NULL, *spec = NULL, *ctrs = NULL, *inits = NULL, *share;
	const char *v;
	struct inject_note *nt;
	int rc;

	/* Field by field: the notes and the sidecars' arrays are tens of KiB, and only what is used is set. */
	plan->where = where;
	plan->change = plan->gate = plan->share_was_other = plan->no_ports = plan->services = false;
	plan->policy = plan->app = plan->otel = plan->term_grace = NULL;
	plan->grace_s = 0;
	plan->nfixes = plan->nnotes = plan->warnings = 0;
	plan->f.n = plan->f.plain = plan->f.apps = 0;
	if (!well_formed(&pl, tmpl, field_of(where), &meta, &spec, &ctrs, &inits))
		return 0;
	v = inject_meta_value(meta, INJECT_LABEL);
	if (v && strcmp(v, "disabled") == 0) {
		plan_note(&pl, NOTE_DISABLED, INFO, NULL);
		return 0;
	}
	if (inject_annotation(meta, MIRROR_KEY)) {
		plan_note(&pl, NOTE_MIRROR, INFO, NULL);
		return 0;
	}
	if (!policy_ok(&pl, meta, spec) || controlled(&pl, meta, ctrs))
		return 0;
	rc = sidecars_and_apps(&pl, meta, ctrs, inits);
	if (rc <= 0 || !own_pid_namespace(&pl, spec))
		return rc;
	rc = inject_plan_sidecars(&pl, meta, &plan->f);
	if (rc < 0)
		return rc;
	/* A long-running pod's sidecars end by its deletion, where no exit code counts: nothing to wrap. */
	if (!plan->services)
		inject_plan_wraps(&pl, &plan->f);
	inject_check_signals(&pl, meta, spec, &plan->f);
	/* A long-running pod is always gated: its apps start once the sidecars are ready. */
	plan->gate = (o->gate || plan->services) && !plan->no_ports && inject_can_gate(&pl, meta, &plan->f);
	if (plan->services && (rc = inject_plan_holds(&pl, meta, spec, &plan->f)) < 0)
		return rc;
	plan->app = inject_name(ctrs->items[plan->f.first_app]);
	plan->otel = otel_language(meta);
	if (plan->otel) {
		nt = plan_note(&pl, NOTE_OTEL_NAMES, INFO, NULL);
		nt->a = plan->otel;
		nt->ctr = plan->app;
	}
	share = ydoc_get(spec, "shareProcessNamespace");
	/* Null is absent: nothing was set to say of. */
	if (share && !ydoc_is_null(share) && !inject_is(share, "true")) {
		plan->share_was_other = true;
		plan_note(&pl, NOTE_SHARE_SET, WARN, share)->a = ydoc_str(share) ? ydoc_str(share) : inject_shape(share);
	}
	nt = plan_note(&pl, NOTE_ADDED, INFO, NULL);
	nt->n = plan->f.apps;
	nt->flag = plan->services;
	sidecar_lists(&plan->f, nt);
	plan->change = true;
	return 0;
}
