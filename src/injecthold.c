/*
 * A long-running pod's holds (restartPolicy Always, opted in with
 * rearguard.io/inject: services): on the pod's deletion the kubelet sends
 * every container its SIGTERM at once, unless a preStop hook holds it. So
 * each sidecar the agent stops gets one, `rearguard wait stopped`, from
 * the binary that the wrapper's init container copies into its volume
 * (injectwrap.c): the kubelet's SIGTERM reaches the sidecar only once
 * rearguard has stopped it, after the apps, the last named first. No shell
 * in any image, no change to the sidecar's command.
 *
 * And the time a deletion takes: terminationGracePeriodSeconds must cover
 * the apps' stop (the agent's --term-grace, which rearguard.io/term-grace
 * sets) and then the sidecars', one after another (each its drain time and
 * SIDECAR_STOP_S); where it does not, the kubelet's SIGKILL may come
 * first, which is said, with by how much.
 */
#include "config.h"

#include "injectint.h"

#include "defaults.h"
#include "options.h"
#include "parse.h"
#include "spec.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * What a sidecar is given to end after its stop, beside its drain time: a
 * proxy ends within a second of its quit request, a log shipper flushes
 * within its own grace (Fluent Bit's is 5 s).
 */
#define SIDECAR_STOP_S 5
/* The kubelet's terminationGracePeriodSeconds when the pod gives none. */
#define GRACE_DEFAULT_S 30

/* Whether c's preStop hook is the hold already (the webhook reviews a pod again after another injector). */
static bool hold_there(const struct ynode *c)
{
	const struct ynode *cmd = ydoc_path(c, "lifecycle.preStop.exec.command");

	return cmd && cmd->kind == YNODE_SEQ && cmd->n >= 3 && inject_is(cmd->items[0], WRAP_BIN) &&
	       inject_is(cmd->items[1], "wait") && inject_is(cmd->items[2], WAIT_STOPPED);
}

/* Which sidecars the hooks hold: those the agent stops whose container the template has, free for the hook. */
static void choose(struct planning *pl, struct found *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		struct sidecar *sc = &f->sc[i];
		const char *taken;
		struct inject_note *nt;

		sc->held = sc->hook_there = false;
		if (sc->native)
			continue;
		if (!sc->node) {
			/* Its injector adds the container after rearguard: the webhook holds it once reviewed again. */
			plan_note(pl, NOTE_HOLD_LATER, WARN, NULL)->p = sc->p;
			continue;
		}
		if (hold_there(sc->node)) {
			sc->held = sc->hook_there = true;
			continue;
		}
		if (ydoc_path(sc->node, "lifecycle.preStop")) {
			nt = plan_note(pl, NOTE_HOLD_OWN, WARN, ydoc_path(sc->node, "lifecycle.preStop"));
			nt->p = sc->p;
			nt->ctr = inject_name(sc->node);
			continue;
		}
		if ((taken = inject_bin_path_taken(sc->node))) {
			nt = plan_note(pl, NOTE_HOLD_MOUNT, WARN, sc->node);
			nt->p = sc->p;
			nt->ctr = inject_name(sc->node);
			nt->a = taken;
			continue;
		}
		sc->held = true;
	}
}

/* The pod's terminationGracePeriodSeconds: its value, or the kubelet's default; -1 when it is no number. */
static long grace_of(const struct ynode *spec)
{
	const struct ynode *g = ydoc_get(spec, "terminationGracePeriodSeconds");
	unsigned long v;

	if (!g || ydoc_is_null(g))
		return GRACE_DEFAULT_S;
	if (!ydoc_str(g) || parse_uint(ydoc_str(g), 0, 1000000000, &v) < 0)
		return -1;
	return (long)v;
}

/* Whole seconds, rounded up: what a grace period in seconds must hold. */
static long seconds_up(int64_t ms)
{
	return (long)((ms + 999) / 1000);
}

/*
 * Whether the grace period covers the apps' stop and then the sidecars',
 * said when it does not. The apps' stop is the agent's --term-grace, from
 * the template's annotation (the agent's default without it, or with one
 * that is no duration, said).
 */
static int check_time(struct planning *pl, const struct ynode *meta, const struct ynode *spec, const struct found *f)
{
	struct inject_plan *plan = pl->plan;
	const char *v = inject_annotation(meta, INJECT_TERM_GRACE);
	int64_t apps_ms = 0, sidecars_ms = 0;
	struct sidecar_spec s;
	struct inject_note *nt;
	char why[256], d[32];
	size_t i;

	if (v && parse_duration_ms(v, &apps_ms) == 0) {
		plan->term_grace = v;
	} else {
		if (v) {
			nt = plan_note(pl, NOTE_TERM_GRACE_BAD, WARN, ydoc_get(ydoc_get(meta, "annotations"), INJECT_TERM_GRACE));
			nt->a = v;
			nt->b = DEFAULT_TERM_GRACE;
		}
		if (parse_duration_ms(DEFAULT_TERM_GRACE, &apps_ms) < 0)
			return plan_fail(pl, NULL, "the default --term-grace does not parse");
	}
	for (i = 0; i < f->n; i++) {
		if (f->sc[i].native)
			continue;
		sidecars_ms += SIDECAR_STOP_S * 1000;
		if (spec_read(f->sc[i].spec, &s, why, sizeof(why)) == 0) {
			sidecars_ms += s.drain_time_ms;
			spec_free(&s);
		}
	}
	plan->grace_s = grace_of(spec);
	if (plan->grace_s < 0) {
		/* The API server refuses it: the hold's limit is the default's, and nothing more is said of it. */
		plan->grace_s = GRACE_DEFAULT_S;
		return 0;
	}
	if (plan->grace_s >= seconds_up(apps_ms + sidecars_ms))
		return 0;
	nt = plan_note(pl, NOTE_GRACE_SHORT, WARN, ydoc_get(spec, "terminationGracePeriodSeconds"));
	nt->n = (size_t)(seconds_up(apps_ms + sidecars_ms) - plan->grace_s);
	snprintf(nt->words, sizeof(nt->words), "%ld", plan->grace_s);
	format_duration(apps_ms, d);
	nt->a = ydoc_strndup(pl->s, d, strlen(d));
	format_duration(sidecars_ms, d);
	nt->b = ydoc_strndup(pl->s, d, strlen(d));
	nt->flag = plan->term_grace != NULL;
	return nt->a && nt->b ? 0 : -ENOMEM;
}

int inject_plan_holds(struct planning *pl, const struct ynode *meta, const struct ynode *spec, struct found *f)
{
	choose(pl, f);
	return check_time(pl, meta, spec, f);
}

/* ---- applying ---------------------------------------------------------------- */

static struct ynode *text(struct ystream *s, const char *v)
{
	return ydoc_scalar(s, v, YDOC_TEXT);
}

/* c's preStop hook: the hold, for at most the grace period (the kubelet waits for it no longer). */
static int hook(struct ystream *s, struct ynode *c, long grace_s)
{
	struct ynode *life = ydoc_want_map(s, c, "lifecycle"), *stop = ydoc_new_map(s, false);
	struct ynode *exec = ydoc_new_map(s, false), *cmd = ydoc_new_seq(s, true);
	char timeout[32];
	const char *words[] = {WRAP_BIN, "wait", WAIT_STOPPED, "--timeout", timeout};
	size_t i;

	snprintf(timeout, sizeof(timeout), "%lds", grace_s > 0 ? grace_s : 1);
	if (!life || !stop || !exec || !cmd)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (ydoc_append(s, cmd, text(s, words[i])) < 0)
			return -ENOMEM;
	if (ydoc_set(s, exec, "command", cmd, false) < 0 || ydoc_set(s, stop, "exec", exec, false) < 0 ||
	    ydoc_set(s, life, "preStop", stop, false) < 0)
		return -ENOMEM;
	return 0;
}

int inject_apply_holds(struct ystream *s, struct ynode *spec, const struct inject_options *o,
		       const struct inject_plan *plan)
{
	const struct found *f = &plan->f;
	bool any = false;
	size_t i;
	int rc;

	for (i = 0; i < f->n; i++) {
		if (!f->sc[i].held)
			continue;
		any = true;
		if (f->sc[i].hook_there)
			continue;
		/* The protocol's volume read-only: the hold reads done, and writes nothing. */
		rc = hook(s, f->sc[i].node, plan->grace_s);
		if (rc == 0)
			rc = inject_mount_bin(s, f->sc[i].node, false);
		if (rc < 0)
			return rc;
	}
	return any ? inject_add_installer(s, spec, o) : 0;
}
