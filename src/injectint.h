/*
 * What the inject files share, and nothing else includes: the readers of
 * a pod template (injectread.c), the plan being made (injectplan.c) and
 * what injectsidecars.c does for it: find a template's sidecars, plan the
 * fixes their stops need, write their specs, and check their signal stops.
 *
 * The order of the files is the order of their calls: inject.c (streams,
 * objects) -> injectplan.c (one template) -> injectsidecars.c (its
 * sidecars) -> injectread.c (the tree); injectapply.c carries a plan out.
 */
#ifndef RG_INJECTINT_H
#define RG_INJECTINT_H

#include "injectplan.h"
#include "injectread.h"
#include "log.h"
#include "yamldoc.h"

#include <stdbool.h>
#include <stddef.h>

#define AGENT_NAME "rearguard"
#define AGENT_UID "65532"
#define GATE_TIMEOUT "5m"
#define INFO false
#define WARN true

/* ---- injectwrap.c: sidecars under rearguard sidecar, and the binary's volume ---- */

/* The volume rearguard install fills (the init container WRAP_INSTALL), mounted at WRAP_DIR. */
#define WRAP_VOLUME "rearguard-bin"
#define WRAP_DIR "/opt/rearguard"
#define WRAP_BIN WRAP_DIR "/rearguard"
#define WRAP_INSTALL "rearguard-install"

struct planning;
/* Where the program is in a command line that runs it under rearguard sidecar; 0 when it does not. */
size_t inject_wrapped_at(const char *const *argv, size_t argc);
/* Marks the sidecars whose stop may fail the pod and whose command can be wrapped; says the others. */
void inject_plan_wraps(struct planning *pl, struct found *f);
/* The wrappers, their mounts, the binary's volume and its init container. 0 or -ENOMEM. */
int inject_apply_wraps(struct ystream *s, struct ynode *spec, const struct inject_options *o,
		       const struct inject_plan *plan);
/* A path of container c that another volume holds, where the binary's or the protocol's would go; NULL: free. */
const char *inject_bin_path_taken(const struct ynode *c);
/* The binary's volume mounted read-only in c, and the file protocol's (read-write for a wrapper), where missing. */
int inject_mount_bin(struct ystream *s, struct ynode *c, bool protocol_rw);
/* The binary's volume and its init container, once whatever else the pod has. 0 or -ENOMEM. */
int inject_add_installer(struct ystream *s, struct ynode *spec, const struct inject_options *o);

/* ---- injecthold.c: a long-running pod's holds, and its time ---- */

/* Marks the sidecars whose preStop hook will hold them, says the others, and checks the grace period. */
int inject_plan_holds(struct planning *pl, const struct ynode *meta, const struct ynode *spec, struct found *f);
/* The holds' hooks and mounts, and the installer they need. 0 or -ENOMEM. */
int inject_apply_holds(struct ystream *s, struct ynode *spec, const struct inject_options *o,
		       const struct inject_plan *plan);

/* ---- injectplan.c: the plan being made ---- */

struct planning {
	struct ystream *s;
	const struct inject_options *o;
	struct inject_plan *plan;
	char *err;
	size_t errlen;
};

/* A new note of the plan at node at (NULL: the object's place), counted when a warning; a spare one when they are all used. */
struct inject_note *plan_note(struct planning *pl, enum inject_note_kind kind, bool warning, const struct ynode *at);
/* Stops the planning: err gets "LINE:COL: message"; returns -EINVAL. */
int plan_fail(struct planning *pl, const struct ynode *at, const char *fmt, ...) RG_PRINTF(3, 4);
/* A fix the plan asks for; -ENOSPC when there are too many (never the case with MAX_SIDECARS' flags). */
int plan_fix(struct planning *pl, enum fix_kind kind, struct ynode *ctr, struct ynode **slot, const char *key,
	     const char *value);

/* ---- injectsidecars.c ---- */

/* Fills f from the template; -1 (said) when a named sidecar's spec does not parse. */
int inject_find_sidecars(struct planning *pl, const struct ynode *meta, const struct ynode *ctrs,
			 const struct ynode *inits, struct found *f);
/* Plans the fixes the plain sidecars need (annotations, flags, environment) and writes each one's spec. */
int inject_plan_sidecars(struct planning *pl, const struct ynode *meta, struct found *f);
/* Warns of the signal stops the agent's uid may not send (sets f->root_agent under --signal-as-root). */
void inject_check_signals(struct planning *pl, const struct ynode *meta, const struct ynode *podspec, struct found *f);
/* Whether start gating can work (says why not). */
bool inject_can_gate(struct planning *pl, const struct ynode *meta, const struct found *f);
/* How notes name a sidecar. */
const char *inject_sidecar_name(const struct sidecar *sc);

#endif
