/*
 * inject's notes: made for the plan (plan_note, with the plan's other
 * record, its fixes), and worded, the one place they are: a switch over
 * their kinds with the words for a template (rearguard inject) and for a
 * pod (the webhook's warnings). See injectnote.h.
 */
#include "config.h"

#include "injectnote.h"

#include "inject.h"
#include "injectint.h"
#include "log.h"
#include "parse.h"
#include "presets.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AS_ROOT                                                                                                        \
	"as root with only the KILL capability (--signal-as-root; Pod Security's baseline level admits that, "       \
	"restricted does not)"
#define SIDECAR_HINT "a sidecar inject does not know needs --sidecar CONTAINER or the annotation " INJECT_SIDECARS

/* ---- the plan's records ------------------------------------------------------ */

struct inject_note *plan_note(struct planning *pl, enum inject_note_kind kind, bool warning, const struct ynode *at)
{
	static struct inject_note spare; /* never read: the notes past the last are dropped */
	struct inject_plan *plan = pl->plan;
	struct inject_note *n = plan->nnotes < PLAN_MAX_NOTES ? &plan->notes[plan->nnotes++] : &spare;

	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->warning = warning;
	if (at) {
		n->line = at->line;
		n->column = at->column;
	}
	plan->warnings += warning;
	return n;
}

int plan_fail(struct planning *pl, const struct ynode *at, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(pl->err, pl->errlen, "%zu:%zu: %s", at ? at->line : (size_t)1, at ? at->column : (size_t)1, msg);
	return -EINVAL;
}

int plan_fix(struct planning *pl, enum fix_kind kind, struct ynode *ctr, struct ynode **slot, const char *key,
	     const char *value)
{
	struct inject_plan *plan = pl->plan;

	if (plan->nfixes == PLAN_MAX_FIXES)
		return -ENOSPC;
	plan->fixes[plan->nfixes++] = (struct fix){.kind = kind, .ctr = ctr, .slot = slot, .key = key, .value = value};
	return 0;
}

/* ---- the words -------------------------------------------------------------------- */

struct out {
	char *p;
	size_t len, used; /* used: the length the whole text has */
};

static void put(struct out *o, const char *fmt, ...) RG_PRINTF(2, 3);

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->used < o->len ? o->p + o->used : NULL, o->used < o->len ? o->len - o->used : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->used += (size_t)n;
}

static const char *or(const char *s, const char *otherwise)
{
	return s ? s : otherwise;
}

/* How a sidecar is named in a sentence: its container, else its row's title. */
static void label(struct out *o, const struct inject_note *n)
{
	if (n->ctr)
		put(o, "container %s", n->ctr);
	else
		put(o, "%s", n->p ? n->p->title : "a sidecar");
}

/* Why a sidecar is or may be root (NOTE_SIGNAL_ROOT, NOTE_REQUEST_ROOT): a field, its image, or nothing that tells. */
static void root_why(struct out *o, const struct inject_note *n)
{
	switch ((enum note_root)n->n) {
	case ROOT_UNKNOWN:
		put(o, "may run as root: no runAsUser says which uid, and its image%s%s%s does not tell", n->b ? " (" : "",
		    or(n->b, ""), n->b ? ")" : "");
		break;
	case ROOT_BY_IMAGE:
		put(o, "runs as root, as its image %s does, and no runAsUser says otherwise", or(n->b, "?"));
		break;
	case ROOT_BY_FIELD:
		put(o, "runs as root (%s: 0)", or(n->a, "runAsUser"));
		break;
	}
}

/* ---- rearguard inject, over workloads' templates ------------------------------- */

static void for_template(struct out *o, const struct inject_note *n)
{
	const char *pname = n->p ? n->p->name : "?";

	switch (n->kind) {
	case NOTE_NOT_MAPPING:
		put(o, "%s, not a mapping: left unchanged", n->a);
		break;
	case NOTE_API_NOT_STRING:
		put(o, "apiVersion is %s, not a string (a %s's is %s): left unchanged (the API server refuses it as well)",
		    n->a, n->b, n->c);
		break;
	case NOTE_NO_API_VERSION:
		put(o, "no apiVersion (a %s's is %s): left unchanged (the API server refuses it as well)", n->b, n->c);
		break;
	case NOTE_OTHER_API:
		put(o, "not Kubernetes' %s (%s): left unchanged", n->b, n->c);
		break;
	case NOTE_ARGO_OBJECT:
		put(o, "Argo Workflows stops the sidecars of its pods itself: left unchanged (docs/inject.md)");
		break;
	case NOTE_TEKTON_OBJECT:
		put(o, "Tekton stops the sidecars of its pods itself: left unchanged (docs/inject.md)");
		break;
	case NOTE_HELM_UNRENDERED:
		put(o, "an unrendered Helm template ({{ ... }}): left unchanged; run helm template and inject its output");
		break;
	case NOTE_NO_TEMPLATE:
		put(o, "%s is missing: a %s needs a pod template: left unchanged", n->a, n->b);
		break;
	case NOTE_NOT_A_POD:
		put(o, "not a Pod: left unchanged");
		break;
	case NOTE_REWRITTEN:
		put(o, "no place to edit its text here (items reordered or taken out, a line broken by CR alone): written "
		       "whole from its tree, its comments and layout lost");
		break;
	case NOTE_MISSHAPEN:
		put(o, "%s is %s, not %s: left unchanged (the API server refuses it as well)", n->words, n->b, n->c);
		break;
	case NOTE_NO_CONTAINERS:
		put(o, "%s.spec.containers is %s: a pod needs at least one container: left unchanged", n->a,
		    n->flag ? "empty" : "missing");
		break;
	case NOTE_TOO_MANY_CONTAINERS:
		put(o, "more than %zu containers: left unchanged", n->n);
		break;
	case NOTE_ITEM_NOT_MAPPING:
		put(o, "%s.spec.%s[%zu] is %s, not a mapping: left unchanged", n->a, n->b, n->n, n->c);
		break;
	case NOTE_NAME_NOT_STRING:
		put(o, "%s.spec.%s[%zu].name is %s, not a string: left unchanged", n->a, n->b, n->n, n->c);
		break;
	case NOTE_NAME_MISSING:
		put(o, "%s.spec.%s[%zu].name is %s: a container needs a name: left unchanged", n->a, n->b, n->n,
		    n->flag ? "empty" : "missing");
		break;
	case NOTE_COMMAND_NOT_LIST:
		put(o, "%s.spec.containers[%zu]: %s is %s, not a list: left unchanged", n->a, n->n, n->b, n->c);
		break;
	case NOTE_HAS_AGENT:
		put(o, "already has rearguard (container %s): left unchanged", or(n->ctr, "?"));
		break;
	case NOTE_DISABLED:
		put(o, "%s=disabled: left unchanged", INJECT_LABEL);
		break;
	case NOTE_MIRROR:
		put(o, "a mirror pod (the kubelet's copy of a static pod, which it runs itself): left unchanged");
		break;
	case NOTE_CONTROLLER:
		put(o, "%s (%s) stops the sidecars of its pods itself, as a shared process namespace or a second "
		       "stopper would break: left unchanged (docs/inject.md)",
		    n->a, n->b);
		break;
	case NOTE_HOST_PID:
		put(o, "hostPID is true, and the API server refuses shareProcessNamespace beside it, which rearguard "
		       "needs to watch the apps: left unchanged");
		break;
	case NOTE_HOST_NETWORK:
		put(o, "hostNetwork is true: a sidecar's admin ports are then the node's, shared with every pod there, so "
		       "rearguard uses none: each sidecar is stopped by SIGTERM and none is polled for readiness, and no "
		       "flag or annotation that opens a port is added (docs/decisions.md)");
		break;
	case NOTE_NO_POLICY:
		put(o, "no restartPolicy (a Job's pod needs Never or OnFailure): left unchanged");
		break;
	case NOTE_RESTARTS:
		put(o, "restartPolicy %s restarts every container that ends, so the pod never finishes: left unchanged "
		       "(" INJECT_LABEL ": " INJECT_SERVICES ", or --" INJECT_SERVICES ", asks for a long-running pod's "
		       "order: the apps started after the sidecars, and stopped before them)",
		    or(n->a, "Always (the default)"));
		break;
	case NOTE_NO_SIDECAR:
		if (n->flag) {
			put(o, "it refuses %s's injector (%s=%s), which --mesh %s stands for, and shows no other known "
			       "sidecar: left unchanged (" SIDECAR_HINT ")",
			    pname, n->p->inject_key, n->a, n->b);
			break;
		}
		put(o, "no known sidecar in the template");
		if (n->p)
			put(o, ", and it refuses %s's injector (%s=%s)", pname, n->p->inject_key, n->a);
		put(o, ": left unchanged (");
		if (*n->words)
			put(o, "a mesh that injects one namespace-wide needs --mesh %s; ", n->words);
		put(o, SIDECAR_HINT ")");
		break;
	case NOTE_ONLY_NATIVES:
		put(o, "its sidecars are ");
		if (*n->words)
			put(o, "native (%s), which the kubelet stops after the apps", n->words);
		if (*n->words && *n->words2)
			put(o, ", and ");
		if (*n->words2)
			put(o, "helpers that end by themselves (%s)", n->words2);
		put(o, ": left unchanged");
		break;
	case NOTE_ALL_SIDECARS:
		put(o, "every container is a sidecar, none is an app: left unchanged");
		break;
	case NOTE_NAMED_NO_SPEC:
		put(o, "container %s: \"%s\" is no preset, stop (signal:TERM, http://...) or spec (keys): left unchanged",
		    n->ctr, n->a);
		break;
	case NOTE_NAMED_BAD_SPEC:
		put(o, "container %s: %s: left unchanged", n->ctr, n->words);
		break;
	case NOTE_ADDED:
		put(o, "rearguard added%s: %zu app%s, sidecars %s%s%s", n->flag ? " for a long-running pod" : "", n->n,
		    n->n == 1 ? "" : "s", n->words, *n->words2 ? "; native: " : "", n->words2);
		if (n->flag)
			put(o, "; the apps start once the sidecars are ready, and on the pod's deletion the sidecars are "
			       "held by their preStop hooks until the apps have exited, then stopped, the last first");
		break;
	case NOTE_SHARE_SET:
		put(o, "shareProcessNamespace was %s: set to true (rearguard watches the other containers through /proc)",
		    n->a);
		break;
	case NOTE_OTEL_NAMES:
		put(o, "%s: the OpenTelemetry operator instruments the first container unless " INJECT_OTEL_NAMES
		       " says which: set to %s, the first app, not the agent",
		    n->a, n->ctr);
		break;
	case NOTE_FLAG_ON:
		put(o, "%s turned off what %s's stop needs: set to %s", n->a, pname, n->b);
		break;
	case NOTE_FLAG_ADDED:
		put(o, "container %s: %s added, which %s's stop needs", n->ctr, n->a, pname);
		break;
	case NOTE_ENV_SET:
		put(o, "container %s: %s set to %s%s%s%s, which %s's stop needs", n->ctr, n->a, n->b,
		    n->c ? " (it was " : "", or(n->c, ""), n->c ? ")" : "", pname);
		break;
	case NOTE_MESH_SHOWN:
		put(o, "%s %s is %s's proxy%s: --mesh %s adds nothing of its own%s", n->flag ? "init container" : "container",
		    n->ctr, pname, n->flag ? ", a native sidecar" : "", n->a,
		    n->p && strcmp(n->p->mesh, n->a) == 0 ? "" : " (the template shows that mesh, not a second)");
		break;
	case NOTE_NONE_KEY:
		put(o, "%s=true: %s runs as an init container only, no sidecar to stop", n->a, pname);
		break;
	case NOTE_PRESET_NOTE:
		put(o, "container %s: %s %s", n->ctr, n->p->title, n->p->note);
		break;
	case NOTE_NAMED_UNKNOWN:
		put(o, "%s names \"%s\", which is no container of the template", INJECT_SIDECARS, n->words);
		break;
	case NOTE_NATIVE_GUESS:
		put(o, "init container %s runs as a native sidecar: rearguard is told its program is called %s, the "
		       "container's name, for want of a command; if it is not, name it with " INJECT_SIDECARS
		       ": \"%s=match=PROGRAM,native\"",
		    n->ctr, n->ctr, n->ctr);
		break;
	case NOTE_FIX_REFUSED:
		put(o, "%s is \"%s\", not %s: left as it is, so the sidecar is stopped by SIGTERM", n->a, n->b, n->c);
		break;
	case NOTE_FIX_TOO_LATE:
		put(o, "container %s: %s's injector ran without %s, which it alone reads, and rearguard cannot change "
		       "the container to the same effect: %s's stop request will fail, and it will be stopped by SIGTERM",
		    n->ctr, pname, n->a, pname);
		break;
	case NOTE_VERSION_UNKNOWN:
		put(o, "container %s: its image (%s) does not tell which version of %s it runs, so %s, which its first "
		       "releases lack (and a flag it lacks stops it at once), %s not added: add %s yourself if it has "
		       "%s, or name the image with its version tag%s",
		    n->ctr, or(n->a, "none"), n->p->title, n->words, strchr(n->words, ',') ? "are" : "is",
		    strchr(n->words, ',') ? "them" : "it", strchr(n->words, ',') ? "them" : "it",
		    n->p->flags[0].stop_endpoint && strstr(n->words, n->p->flags[0].name)
			? "; without its stop endpoint it is stopped by SIGTERM"
			: "");
		break;
	case NOTE_FLAG_TOO_NEW:
		put(o, "container %s: %s %s has no --%s (%s and later): not added; its stop falls back to SIGTERM", n->ctr,
		    n->p->title, n->c, n->a, n->b);
		break;
	case NOTE_SHELL:
		label(o, n);
		put(o, " is stopped by SIG%s, which reaches its %s -c, not the program the script starts: the program "
		       "runs on until SIGKILL; begin the script with exec (%s -c 'exec PROGRAM ...'), and have the program "
		       "end with 0 on SIG%s or run under rearguard sidecar (inject does that where its command is given), "
		       "give the sidecar an HTTP stop, or stop every process of it (" INJECT_SIDECARS
		       ": \"%s=%s%sstop=signal-all:%s\")",
		    signal_name(n->sig), n->a, n->a, signal_name(n->sig), or(n->ctr, "?"), n->p ? n->p->name : "",
		    n->p ? "," : "", signal_name(n->sig));
		break;
	case NOTE_WRAPPED:
		put(o, "container %s: its command now runs under rearguard sidecar (installed by the init container "
		       "rearguard-install), so that SIG%s, its stop, ends it with 0, as a native sidecar's stop does not "
		       "fail the pod; where its program exits 0 on SIG%s itself, mark it handles-stop in " INJECT_SIDECARS
		       " (\"%s=handles-stop\") and it is left as it is",
		    n->ctr, signal_name(n->sig), signal_name(n->sig), n->ctr);
		break;
	case NOTE_WRAP_NO_COMMAND:
		put(o, "container %s is stopped by SIG%s and its spec gives no command (its image's entrypoint runs), so it "
		       "cannot run under rearguard sidecar: a program without a handler for SIG%s dies of it, and its exit "
		       "code %d fails the pod under restartPolicy Never (OnFailure restarts it); write its command into "
		       "the spec (then inject again), or make its program exit 0 on SIG%s and mark it handles-stop in "
		       INJECT_SIDECARS " (\"%s=handles-stop\")",
		    n->ctr, signal_name(n->sig), signal_name(n->sig), 128 + n->sig, signal_name(n->sig), n->ctr);
		break;
	case NOTE_WRAP_MOUNT:
		put(o, "container %s mounts another volume at %s, where rearguard sidecar would go, so its command is not "
		       "wrapped: a program without a handler for SIG%s dies of it, and its exit code %d fails the pod under "
		       "restartPolicy Never; free the path, or make its program exit 0 on SIG%s",
		    n->ctr, n->a, signal_name(n->sig), 128 + n->sig, signal_name(n->sig));
		break;
	case NOTE_SIGNAL_UID:
		label(o, n);
		put(o, " is stopped by a signal and runs as uid %s, rearguard as uid " AGENT_UID
		       ", which may not signal it: run rearguard as uid %s (its securityContext.runAsUser) or " AS_ROOT
		       ", or give the sidecar an HTTP stop (stop=URL)",
		    n->a, n->a);
		break;
	case NOTE_SIGNAL_ROOT:
		label(o, n);
		put(o, " is stopped by a signal and ");
		root_why(o, n);
		put(o, "; rearguard (uid " AGENT_UID ", no capabilities) may not signal it, so it would run on %s: set the "
		       "sidecar's securityContext.runAsUser to " AGENT_UID ", rearguard's uid, or run rearguard " AS_ROOT,
		    n->flag ? "until the kubelet kills it when the pod's grace period ends" : "and the pod never complete");
		break;
	case NOTE_REQUEST_ROOT:
		label(o, n);
		put(o, " ");
		root_why(o, n);
		put(o, ": should its stop request fail, rearguard (uid " AGENT_UID ", no capabilities) may not follow with "
		       "SIGTERM and SIGKILL; set the sidecar's securityContext.runAsUser to " AGENT_UID
		       ", or run rearguard " AS_ROOT);
		break;
	case NOTE_ROOT_AGENT:
		put(o, "rearguard runs as root with only the KILL capability (--signal-as-root), to signal %s: Pod "
		       "Security's baseline level admits that, restricted does not",
		    n->words);
		break;
	case NOTE_NOT_GATED_WORD:
		put(o, "not gated: %s's injector puts its sidecar after the containers unless %s sets %s: true, so the "
		       "agent's postStart hook would hold the sidecar back until it times out (with %s it gates the app "
		       "by itself)",
		    pname, n->p->first_key, n->p->first_word, n->p->first_word);
		break;
	case NOTE_NOT_GATED_OFF:
		put(o, "not gated: %s=%s puts %s's sidecar after the containers", n->p->first_key, n->p->first_off, pname);
		break;
	case NOTE_NOT_GATED_AFTER:
		put(o, "not gated: %s's injector adds its sidecar after the containers, where the agent's postStart hook "
		       "would hold it back until it times out",
		    pname);
		break;
	case NOTE_HOLD_LATER:
		put(o, "%s's injector adds its proxy when the pod is created, after rearguard inject: no preStop hook "
		       "holds it, and on the pod's deletion it gets its SIGTERM with the apps (rearguard's webhook holds it, "
		       "as it sees the pod after that injector)",
		    pname);
		break;
	case NOTE_HOLD_OWN:
		put(o, "container %s has a preStop hook of its own, so rearguard's does not hold it: on the pod's deletion "
		       "it gets its SIGTERM when that hook ends, whether the apps have exited or not",
		    or(n->ctr, "?"));
		break;
	case NOTE_HOLD_MOUNT:
		put(o, "container %s mounts another volume at %s, where its preStop hook's binary would go, so it is not "
		       "held: on the pod's deletion it gets its SIGTERM with the apps; free the path",
		    or(n->ctr, "?"), n->a);
		break;
	case NOTE_GRACE_SHORT:
		put(o, "terminationGracePeriodSeconds (%s) does not cover the apps' stop (%s, %s) and then the sidecars' "
		       "(%s): it is %zu s short, and on a deletion that takes that long the kubelet kills a sidecar before "
		       "rearguard has stopped it; raise it to %zu%s",
		    n->words, n->a, n->flag ? INJECT_TERM_GRACE : "rearguard's default --term-grace", n->b, n->n,
		    (size_t)strtoul(n->words, NULL, 10) + n->n,
		    n->flag ? ", or lower " INJECT_TERM_GRACE : ", or set " INJECT_TERM_GRACE " to what the apps take");
		break;
	case NOTE_TERM_GRACE_BAD:
		put(o, INJECT_TERM_GRACE " is \"%s\", not a duration (10s, 2m): rearguard keeps the sidecars for the apps "
		       "its default %s",
		    n->a, n->b);
		break;
	case NOTE_KINDS:
		break;
	}
}

/* ---- the webhook, about one pod ---------------------------------------------------- */

/*
 * The essential first, in few words: the API server keeps a warning
 * whole up to 256 characters, and kubectl prints it on one line after
 * "Warning: rearguard: ". Field paths are the pod's own (spec.containers),
 * and the advice is what the pod's author can change.
 */
static void for_pod(struct out *o, const struct inject_note *n)
{
	const char *pname = n->p ? n->p->name : "?";

	switch (n->kind) {
	case NOTE_NOT_MAPPING:
	case NOTE_API_NOT_STRING:
	case NOTE_NO_API_VERSION:
	case NOTE_OTHER_API:
	case NOTE_ARGO_OBJECT:
	case NOTE_TEKTON_OBJECT:
	case NOTE_HELM_UNRENDERED:
	case NOTE_NO_TEMPLATE:
	case NOTE_REWRITTEN:
		for_template(o, n);
		break;
	case NOTE_NOT_A_POD:
		put(o, "not a Pod: left as it is");
		break;
	case NOTE_MISSHAPEN:
		put(o, "not changed: %s is %s, not %s", n->words, n->b, n->c);
		break;
	case NOTE_NO_CONTAINERS:
		put(o, "not changed: spec.containers is %s", n->flag ? "empty" : "missing");
		break;
	case NOTE_TOO_MANY_CONTAINERS:
		put(o, "not changed: more than %zu containers", n->n);
		break;
	case NOTE_ITEM_NOT_MAPPING:
		put(o, "not changed: spec.%s[%zu] is %s, not a mapping", n->b, n->n, n->c);
		break;
	case NOTE_NAME_NOT_STRING:
		put(o, "not changed: spec.%s[%zu].name is %s, not a string", n->b, n->n, n->c);
		break;
	case NOTE_NAME_MISSING:
		put(o, "not changed: spec.%s[%zu] has %s name", n->b, n->n, n->flag ? "an empty" : "no");
		break;
	case NOTE_COMMAND_NOT_LIST:
		put(o, "not changed: spec.containers[%zu].%s is %s, not a list", n->n, n->b, n->c);
		break;
	case NOTE_HAS_AGENT:
		put(o, "not changed: container %s is rearguard already", or(n->ctr, "?"));
		break;
	case NOTE_DISABLED:
		put(o, "not changed: %s is disabled", INJECT_LABEL);
		break;
	case NOTE_MIRROR:
		put(o, "not changed: a mirror pod");
		break;
	case NOTE_CONTROLLER:
		put(o, "not changed: a pod of %s (%s), which stops its sidecars itself", n->a, n->b);
		break;
	case NOTE_HOST_PID:
		put(o, "not changed: hostPID is true, and shareProcessNamespace, which the agent needs, cannot be set "
		       "beside it");
		break;
	case NOTE_HOST_NETWORK:
		put(o, "hostNetwork: the sidecars' admin ports are the node's, so each is stopped by SIGTERM, none is "
		       "polled, and no port is opened");
		break;
	case NOTE_NO_POLICY:
		put(o, "not changed: no restartPolicy");
		break;
	case NOTE_RESTARTS:
		put(o, "not changed: restartPolicy %s restarts every container (" INJECT_LABEL "=" INJECT_SERVICES
		       " asks for a long-running pod's order)",
		    or(n->a, "Always"));
		break;
	case NOTE_NO_SIDECAR:
		put(o, "not changed: no sidecar rearguard knows");
		if (n->p)
			put(o, " (%s=%s)", n->p->inject_key, n->a);
		put(o, "; name one in the annotation " INJECT_SIDECARS);
		break;
	case NOTE_ONLY_NATIVES:
		put(o, "not changed: its sidecars are ");
		if (*n->words)
			put(o, "native (%s), stopped by the kubelet", n->words);
		if (*n->words && *n->words2)
			put(o, ", and ");
		if (*n->words2)
			put(o, "helpers that end by themselves (%s)", n->words2);
		break;
	case NOTE_ALL_SIDECARS:
		put(o, "not changed: every container is a sidecar, none is an app");
		break;
	case NOTE_NAMED_NO_SPEC:
		put(o, "not changed: %s names container %s \"%s\", which is no preset, stop or spec", INJECT_SIDECARS,
		    n->ctr, n->a);
		break;
	case NOTE_NAMED_BAD_SPEC:
		put(o, "not changed: container %s's spec in %s: %s", n->ctr, INJECT_SIDECARS, n->words);
		break;
	case NOTE_ADDED:
		if (n->flag) {
			put(o, "added the agent: the app%s start%s after %s, which on deletion %s held until the app%s "
			       "exit%s%s%s%s",
			    n->n == 1 ? "" : "s", n->n == 1 ? "s" : "", n->words, strchr(n->words, ',') ? "are" : "is",
			    n->n == 1 ? "" : "s", n->n == 1 ? "s" : "", *n->words2 ? " (native, left to the kubelet: " : "",
			    n->words2, *n->words2 ? ")" : "");
			break;
		}
		put(o, "added the agent: it stops %s once the app%s end%s%s%s%s", n->words, n->n == 1 ? "" : "s",
		    n->n == 1 ? "s" : "", *n->words2 ? " (native, left to the kubelet: " : "", n->words2,
		    *n->words2 ? ")" : "");
		break;
	case NOTE_SHARE_SET:
		put(o, "shareProcessNamespace set to true (it was %s): the agent watches the apps through /proc", n->a);
		break;
	case NOTE_OTEL_NAMES:
		put(o, INJECT_OTEL_NAMES " set to %s, so that %s instruments the app, not the agent", n->ctr, n->a);
		break;
	case NOTE_FLAG_ON:
		put(o, "container %s: %s turned on (it was %s), for %s's stop", or(n->ctr, "?"), n->b, n->a, pname);
		break;
	case NOTE_FLAG_ADDED:
		put(o, "container %s: %s added, for %s's stop", n->ctr, n->a, pname);
		break;
	case NOTE_ENV_SET:
		put(o, "container %s: %s=%s set, for %s's stop", n->ctr, n->a, n->b, pname);
		break;
	case NOTE_MESH_SHOWN:
	case NOTE_NONE_KEY:
		for_template(o, n);
		break;
	case NOTE_PRESET_NOTE:
		put(o, "container %s: %s %s", n->ctr, pname, or(n->p->note_short, n->p->note));
		break;
	case NOTE_NAMED_UNKNOWN:
		put(o, "%s names \"%s\", which is no container of this pod", INJECT_SIDECARS, n->words);
		break;
	case NOTE_NATIVE_GUESS:
		put(o, "init container %s, a native sidecar without a command, is told to the agent by its name", n->ctr);
		break;
	case NOTE_FIX_REFUSED:
		put(o, "%s is \"%s\", not %s: the sidecar will be stopped by SIGTERM", n->a, n->b, n->c);
		break;
	case NOTE_FIX_TOO_LATE:
		put(o, "container %s: %s's injector ran without %s: its stop request will fail and it will get SIGTERM",
		    n->ctr, pname, n->a);
		break;
	case NOTE_VERSION_UNKNOWN:
		put(o, "container %s: its image does not tell %s's version, so %s (not in every version) not added", n->ctr,
		    pname, n->words);
		break;
	case NOTE_FLAG_TOO_NEW:
		put(o, "container %s: %s %s has no --%s (%s and later): stopped by SIGTERM", n->ctr, pname, n->c, n->a,
		    n->b);
		break;
	case NOTE_SHELL:
		label(o, n);
		put(o, ": SIG%s reaches its %s -c, not the program: begin the script with exec, and have the program end "
		       "with 0 on SIG%s or run under rearguard sidecar",
		    signal_name(n->sig), n->a, signal_name(n->sig));
		break;
	case NOTE_WRAPPED:
		put(o, "container %s runs under rearguard sidecar: its stop by SIG%s ends it with 0", n->ctr,
		    signal_name(n->sig));
		break;
	case NOTE_WRAP_NO_COMMAND:
		put(o, "container %s gives no command, so it cannot run under rearguard sidecar: if its program dies of "
		       "SIG%s (%d), that fails the pod; write its command, or make its program exit 0 on SIG%s",
		    n->ctr, signal_name(n->sig), 128 + n->sig, signal_name(n->sig));
		break;
	case NOTE_WRAP_MOUNT:
		put(o, "container %s mounts another volume at %s: it cannot run under rearguard sidecar, and if its "
		       "program dies of SIG%s (%d), that fails the pod",
		    n->ctr, n->a, signal_name(n->sig), 128 + n->sig);
		break;
	case NOTE_SIGNAL_UID:
		label(o, n);
		put(o, " runs as uid %s, which the agent (uid " AGENT_UID ") may not signal: %s", n->a,
		    n->flag ? "on deletion it is killed at the grace period's end" : "the pod will not complete");
		break;
	case NOTE_SIGNAL_ROOT:
		label(o, n);
		put(o, " %s root, which the agent (uid " AGENT_UID ") may not signal: %s",
		    n->n == ROOT_UNKNOWN ? "may run as" : "runs as",
		    n->flag ? "on deletion it is killed at the grace period's end" : "the pod will not complete");
		break;
	case NOTE_REQUEST_ROOT:
		label(o, n);
		put(o, " %s root: if its stop request fails, the agent may not signal it", n->n == ROOT_UNKNOWN ? "may run as"
												  : "runs as");
		break;
	case NOTE_ROOT_AGENT:
		put(o, "the agent runs as root with only CAP_KILL (--signal-as-root), to signal %s", n->words);
		break;
	case NOTE_NOT_GATED_WORD:
		put(o, "not gated: %s's sidecar comes after the apps unless %s sets %s", pname, n->p->first_key,
		    n->p->first_word);
		break;
	case NOTE_NOT_GATED_OFF:
		put(o, "not gated: %s=%s puts %s's sidecar after the apps", n->p->first_key, n->p->first_off, pname);
		break;
	case NOTE_NOT_GATED_AFTER:
		put(o, "not gated: %s's sidecar comes after the apps", pname);
		break;
	case NOTE_HOLD_LATER:
		put(o, "%s's proxy is not in the pod yet: it is held once rearguard sees it", pname);
		break;
	case NOTE_HOLD_OWN:
		put(o, "container %s has its own preStop hook: not held, it gets SIGTERM on deletion when that hook ends",
		    or(n->ctr, "?"));
		break;
	case NOTE_HOLD_MOUNT:
		put(o, "container %s mounts another volume at %s: not held on deletion", or(n->ctr, "?"), n->a);
		break;
	case NOTE_GRACE_SHORT:
		put(o, "terminationGracePeriodSeconds %s is %zu s short of the apps' stop (%s) and the sidecars' (%s): "
		       "raise it to %zu",
		    n->words, n->n, n->a, n->b, (size_t)strtoul(n->words, NULL, 10) + n->n);
		break;
	case NOTE_TERM_GRACE_BAD:
		put(o, INJECT_TERM_GRACE " \"%s\" is no duration: %s used", n->a, n->b);
		break;
	case NOTE_KINDS:
		break;
	}
}

size_t inject_note_words(const struct inject_note *n, enum note_reader reader, char *out, size_t len)
{
	struct out o = {.p = out, .len = len};

	if (len > 0)
		out[0] = '\0';
	switch (reader) {
	case NOTE_FOR_TEMPLATE:
		for_template(&o, n);
		break;
	case NOTE_FOR_POD:
		for_pod(&o, n);
		break;
	}
	return o.used;
}

bool inject_note_leaves(enum inject_note_kind kind)
{
	switch (kind) {
	case NOTE_NOT_MAPPING:
	case NOTE_API_NOT_STRING:
	case NOTE_NO_API_VERSION:
	case NOTE_OTHER_API:
	case NOTE_ARGO_OBJECT:
	case NOTE_TEKTON_OBJECT:
	case NOTE_HELM_UNRENDERED:
	case NOTE_NO_TEMPLATE:
	case NOTE_NOT_A_POD:
	case NOTE_MISSHAPEN:
	case NOTE_NO_CONTAINERS:
	case NOTE_TOO_MANY_CONTAINERS:
	case NOTE_ITEM_NOT_MAPPING:
	case NOTE_NAME_NOT_STRING:
	case NOTE_NAME_MISSING:
	case NOTE_COMMAND_NOT_LIST:
	case NOTE_HAS_AGENT:
	case NOTE_DISABLED:
	case NOTE_MIRROR:
	case NOTE_CONTROLLER:
	case NOTE_HOST_PID:
	case NOTE_NO_POLICY:
	case NOTE_RESTARTS:
	case NOTE_NO_SIDECAR:
	case NOTE_ONLY_NATIVES:
	case NOTE_ALL_SIDECARS:
	case NOTE_NAMED_NO_SPEC:
	case NOTE_NAMED_BAD_SPEC:
		return true;
	case NOTE_REWRITTEN:
	case NOTE_HOST_NETWORK:
	case NOTE_ADDED:
	case NOTE_SHARE_SET:
	case NOTE_OTEL_NAMES:
	case NOTE_FLAG_ON:
	case NOTE_FLAG_ADDED:
	case NOTE_ENV_SET:
	case NOTE_MESH_SHOWN:
	case NOTE_NONE_KEY:
	case NOTE_PRESET_NOTE:
	case NOTE_NAMED_UNKNOWN:
	case NOTE_NATIVE_GUESS:
	case NOTE_FIX_REFUSED:
	case NOTE_FIX_TOO_LATE:
	case NOTE_VERSION_UNKNOWN:
	case NOTE_FLAG_TOO_NEW:
	case NOTE_SHELL:
	case NOTE_WRAPPED:
	case NOTE_WRAP_NO_COMMAND:
	case NOTE_WRAP_MOUNT:
	case NOTE_SIGNAL_UID:
	case NOTE_SIGNAL_ROOT:
	case NOTE_REQUEST_ROOT:
	case NOTE_ROOT_AGENT:
	case NOTE_NOT_GATED_WORD:
	case NOTE_NOT_GATED_OFF:
	case NOTE_NOT_GATED_AFTER:
	case NOTE_HOLD_LATER:
	case NOTE_HOLD_OWN:
	case NOTE_HOLD_MOUNT:
	case NOTE_GRACE_SHORT:
	case NOTE_TERM_GRACE_BAD:
	case NOTE_KINDS:
		return false;
	}
	return false;
}

void inject_plan_words(const struct inject_plan *plan, void (*fn)(void *data, const char *words), void *data)
{
	char words[NOTE_WORDS_MAX];
	size_t i, pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < plan->nnotes; i++) {
			const struct inject_note *n = &plan->notes[i];
			bool essential = n->kind == NOTE_ADDED || inject_note_leaves(n->kind);

			if (essential != (pass == 0))
				continue;
			inject_note_words(n, NOTE_FOR_POD, words, sizeof(words));
			fn(data, words);
		}
}
