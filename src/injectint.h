/*
 * What inject.c and injectsidecars.c share, and nothing else includes:
 * the state of one run over a stream, what a pod template shows (its
 * sidecars, native or not, and its apps), and the helpers both read the
 * tree with. inject.c walks streams, objects and templates and adds the
 * agent; injectsidecars.c finds a template's sidecars, writes their specs,
 * makes the fixes they need and checks their signal stops.
 */
#ifndef RG_INJECTINT_H
#define RG_INJECTINT_H

#include "inject.h"
#include "log.h"
#include "presets.h"
#include "yamldoc.h"

#include <stdbool.h>
#include <stddef.h>

#define MAX_SIDECARS 16
#define MAX_CONTAINERS 256
#define MAX_ARGV 64
#define AGENT_NAME "rearguard"
#define AGENT_UID "65532"
#define GATE_TIMEOUT "5m"
#define INFO false
#define WARN true

/* One run over a stream: the options in force and where the notes go. */
struct run {
	struct ystream *s;
	struct inject_options o;
	char *err;
	size_t errlen;
	struct inject_counts c;
};

/* One sidecar of a template, in --sidecar order. */
struct sidecar {
	const struct spec_preset *p; /* its row; NULL for one named by the user, or an unknown native one */
	size_t ctr;		     /* its index among the containers; NO_CTR: injected, or an init container */
	struct ynode *node;	     /* its container (or init container); NULL: injected by a webhook */
	bool native;		     /* a native sidecar, or a helper: the agent recognises it, never stops it */
	const char *named;	     /* a named one's SPEC (what follows CONTAINER=), "" for none */
	bool signal_stop;	     /* a fix its endpoint needs was refused: stopped by SIGTERM */
	char spec[PRESET_SPEC_MAX];
};

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
#define NO_CTR ((size_t)-1)

/* One line for the user about a node of a document ("LINE:COL: what: message"), counted when a warning. */
void inject_say(struct run *r, bool warning, const struct ynode *at, const char *what, const char *fmt, ...)
    RG_PRINTF(5, 6);
/* Stops the run: r->err gets "LINE:COL: what: message"; returns -EINVAL. */
int inject_fail(struct run *r, const struct ynode *at, const char *what, const char *fmt, ...) RG_PRINTF(4, 5);

/* Whether n is the scalar value (a missing node is not). */
bool inject_is(const struct ynode *n, const char *value);
/* What a node that should have been a list or a mapping is instead: "a scalar". */
const char *inject_shape(const struct ynode *n);
/* The collection of kind under key; NULL when absent or null, *bad when of another kind. */
struct ynode *inject_want(const struct ynode *parent, const char *key, enum ynode_kind kind, struct ynode **bad);
/* Says a template's field has the wrong shape and counts it left alone; returns 0. */
int inject_misshapen(struct run *r, const struct ynode *n, const char *what, const char *field, const char *key,
		     const char *want_word);
/* A label or annotation of a template, annotations first. */
const char *inject_meta_value(const struct ynode *meta, const char *key);
/* An annotation of a template (meta is its metadata), for presets_spec. */
const char *inject_annotation(const void *meta, const char *key);
/* A container's command + args as an argv (argv[0] NULL without a command); slots: where each lies. */
size_t inject_argv(const struct ynode *c, const char **argv, struct ynode ***slots);
/* The template's annotations, made (with its metadata) when missing; NULL when out of memory. */
struct ynode *inject_annotations(struct run *r, struct ynode *tmpl, struct ynode **meta);
/* The uid a runAsUser value names, or NULL. */
const char *inject_uid_of(const char *v);

/* injectsidecars.c */

/* Fills f from the template; -1 (said, counted) when a named sidecar's spec does not parse. */
int inject_find_sidecars(struct run *r, const struct ynode *meta, const struct ynode *ctrs, const struct ynode *inits,
			 struct found *f, const struct ynode *at, const char *what);
/* The fixes the plain sidecars need: annotations and flags. */
int inject_fix_sidecars(struct run *r, struct ynode *tmpl, struct ynode **meta, struct found *f, const struct ynode *at,
			const char *what);
/* Each sidecar's spec, plain ones first, native ones marked; duplicates dropped. */
int inject_write_specs(struct run *r, const struct ynode *meta, struct found *f, const struct ynode *at,
		       const char *what);
/* Warns of the signal stops the agent's uid may not send (sets f->root_agent under --signal-as-root). */
void inject_check_signals(struct run *r, const struct ynode *meta, const struct ynode *podspec, struct found *f,
			  const struct ynode *at, const char *what);
/* Whether start gating can work (says why not). */
bool inject_can_gate(struct run *r, const struct ynode *meta, const struct found *f, const struct ynode *at,
		     const char *what);
/* How notes name a sidecar. */
const char *inject_sidecar_name(const struct sidecar *sc);

#endif
