/*
 * inject's decision for one pod template, as read, planned and applied:
 *
 *	struct inject_plan *plan = calloc(1, sizeof(*plan));
 *	int rc = inject_plan(s, tmpl, INJECT_POD, &opts, plan, err, sizeof(err));
 *	// rc 0: plan->change says whether rearguard goes in, plan->notes why,
 *	// plan->f what the pod shows (its sidecars, native or not, and apps);
 *	// nothing in the tree changed. -EINVAL (a spec too long), -ENOMEM.
 *	if (rc == 0 && plan->change)
 *		rc = inject_apply(s, tmpl, plan); // the changes, made in the tree
 *
 * inject_plan only reads the tree (it may copy strings into the stream's
 * arena): rearguard inject, the webhook and explain read the same plan.
 * inject_apply carries out what the plan says and nothing else: the fixes
 * the sidecars' stops need (annotations, flags, environment variables),
 * the order start gating needs, the annotations for kubectl's default
 * container and the OpenTelemetry operator, the agent container, the
 * shared process namespace and the volume.
 *
 * A template is a workload's pod template (metadata and spec) or a pod;
 * where says which, and with it the words of field paths in notes. A note
 * whose line is 0 is about the object as a whole.
 */
#ifndef RG_INJECTPLAN_H
#define RG_INJECTPLAN_H

#include "inject.h"
#include "injectnote.h"
#include "presets.h"

#include <stdbool.h>
#include <stddef.h>

#define MAX_SIDECARS 16
#define MAX_CONTAINERS 256
#define PLAN_MAX_FIXES 32
#define PLAN_MAX_NOTES 32

struct ystream;
struct ynode;

/*
 * What a template is: a pod (a Pod object, or the webhook's), a Job's or a
 * CronJob's pod template, or a long-running workload's (a Deployment's,
 * StatefulSet's, ReplicaSet's or DaemonSet's: spec.template).
 */
enum inject_where { INJECT_POD, INJECT_JOB_TEMPLATE, INJECT_CRONJOB_TEMPLATE, INJECT_WORKLOAD_TEMPLATE };

/* One sidecar of a template, in --sidecar order. */
struct sidecar {
	const struct spec_preset *p; /* its row; NULL for one named by the user, or an unknown native one */
	size_t ctr;		     /* its index among the containers; NO_CTR: injected, or an init container */
	struct ynode *node;	     /* its container (or init container); NULL: injected by a webhook */
	bool native;		     /* a native sidecar, or a helper: the agent recognises it, never stops it */
	const char *named;	     /* a named one's SPEC (what follows CONTAINER=), "" for none */
	bool signal_stop;	     /* its stop endpoint cannot be had: stopped by SIGTERM */
	bool wrapped;		     /* its command runs under rearguard sidecar (injectwrap.c) */
	bool wrap_words;	     /* ...and the wrapper's words are to be put before it (not there yet) */
	const char *self_stops;	     /* the wrapper that stops it once the apps are done (watchkiller, kubexit), or NULL */
	bool held;		     /* a long-running pod's: its preStop hook holds it on deletion (injecthold.c) */
	bool hook_there;	     /* ...and the hook is in its container already (the webhook reinvoked) */
	char spec[PRESET_SPEC_MAX];
};
#define NO_CTR ((size_t)-1)

/* What the template shows: the sidecars and the apps. */
struct found {
	size_t plain; /* sidecars the agent stops: neither native nor helpers */
	struct sidecar sc[MAX_SIDECARS];
	size_t n;
	size_t apps;
	size_t first_app;			/* the first app container's index */
	const char *named[MAX_CONTAINERS];	/* per container: the user's SPEC when named a sidecar, else NULL */
	const char *named_init[MAX_CONTAINERS]; /* the same per init container */
	bool sidecar_ctr[MAX_CONTAINERS];	/* per container: a sidecar */
	const struct spec_preset *refused;	/* a row whose injector the template refuses, --mesh's first */
	bool mesh_refused;			/* ...and it is the one --mesh names */
	bool root_agent; /* --signal-as-root, and a sidecar needs it: the agent runs as root with CAP_KILL */
};

/* A change a sidecar's stop needs. */
enum fix_kind {
	FIX_ANNOTATION, /* key: value among the template's annotations (absent before) */
	FIX_FLAG_ADD,	/* key (a flag, "--quitquitquit") put in ctr's args at at, after those added before */
	FIX_FLAG_ON,	/* the argument at slot, which turned the flag off, replaced by key */
	FIX_ENV,	/* ctr's environment variable key set to value: replaced where it is, else added */
};

struct fix {
	enum fix_kind kind;
	struct ynode *ctr;
	struct ynode **slot;
	const char *key, *value;
	size_t at;
};

struct inject_plan {
	enum inject_where where;
	bool change; /* rearguard goes in */
	struct found f;
	const char *policy;	  /* the restartPolicy: Never, OnFailure, or Always (services) */
	bool services;		  /* a long-running pod, opted in: gated, its sidecars held on deletion */
	const char *term_grace;	  /* the agent's --term-grace (rearguard.io/term-grace), or NULL: its default */
	long grace_s;		  /* the pod's terminationGracePeriodSeconds (30 when not given): the holds' limit */
	bool gate;		  /* start gating: the sidecars first, then the agent with its hook */
	const char *app;	  /* the first app's name: kubectl's default container */
	const char *otel;	  /* the OpenTelemetry operator's annotation that asks for instrumentation, or NULL */
	bool share_was_other;	  /* shareProcessNamespace said something else */
	bool no_ports;		  /* hostNetwork: no sidecar is stopped or polled over its admin port */
	struct fix fixes[PLAN_MAX_FIXES];
	size_t nfixes;
	struct inject_note notes[PLAN_MAX_NOTES];
	size_t nnotes;
	size_t warnings;
};

/*
 * Reads tmpl (a mapping: metadata, spec) and plans what rearguard inject
 * would do to it; the tree is not changed. 0, -EINVAL with err ("LINE:COL:
 * message", a spec that does not fit) or -ENOMEM.
 */
int inject_plan(struct ystream *s, struct ynode *tmpl, enum inject_where where, const struct inject_options *o,
		struct inject_plan *plan, char *err, size_t errlen);

/* Carries a plan whose change is true out on the tree it was made from. 0 or -ENOMEM. */
int inject_apply(struct ystream *s, struct ynode *tmpl, const struct inject_options *o, const struct inject_plan *plan);

#endif
