/*
 * decide, for the pod's containers beside the apps and the sidecars it
 * stops: the native sidecars, which it lists and leaves to the kubelet,
 * and the apps' own stop when a sidecar fails while they run
 * (--on-sidecar-exit=fail). decide-apps.c holds the apps, decide-sidecar.c
 * the sidecars; all share decide-private.h.
 */
#include "config.h"

#include "decide-private.h"

#include "util.h"

#include <signal.h>
#include <string.h>

/* ---- native sidecars ---------------------------------------------------------- */

const char *decide_native_known_by(enum decide_native_by by)
{
	static const char *const words[] = { "spec", "first", "restart" };

	return (size_t)by < ARRAY_SIZE(words) ? words[by] : "?";
}

bool dnat_seen(struct decide *d, unsigned id, const char *name, enum decide_native_by by, int64_t now)
{
	struct decide_native *n;
	size_t i;

	for (i = 0; i < d->nnatives; i++)
		if (d->natives[i].id == id)
			return false;
	n = array_grow(d->natives, d->nnatives, &d->capnatives, sizeof(*n), 4);
	if (!n) {
		/* Only the summary's list is short of it: a native sidecar needs nothing from decide. */
		SAY(d, .kind = NOTE_NATIVE_NOT_LISTED, .text = name, .container = id);
		return false;
	}
	d->natives = n;
	/* The one it replaces: the first of its name that exited and has not come back. */
	for (i = 0; by == NATIVE_BY_RESTART && i < d->nnatives; i++) {
		if (d->natives[i].exited && !d->natives[i].replaced && strcmp(d->natives[i].name, name) == 0) {
			d->natives[i].replaced = true;
			break;
		}
	}
	n = &d->natives[d->nnatives++];
	memset(n, 0, sizeof(*n));
	n->id = id;
	str_copy(n->name, name, sizeof(n->name));
	n->by = by;
	n->seen_us = now;
	SAY(d, .kind = NOTE_NATIVE_SEEN, .text = n->name, .container = id, .by = by, .flag = by == NATIVE_BY_RESTART);
	return true;
}

bool dnat_exited(struct decide *d, unsigned id, int64_t now)
{
	size_t i;

	for (i = 0; i < d->nnatives; i++) {
		struct decide_native *n = &d->natives[i];

		if (n->id != id || n->exited)
			continue;
		n->exited = true;
		n->exited_us = now;
		SAY(d, .kind = NOTE_NATIVE_EXITED, .text = n->name, .container = id);
		return true;
	}
	return false;
}

bool dnat_forget(struct decide *d, unsigned id)
{
	size_t i;

	for (i = 0; i < d->nnatives; i++) {
		if (d->natives[i].id != id)
			continue;
		memmove(&d->natives[i], &d->natives[i + 1], (d->nnatives - i - 1) * sizeof(*d->natives));
		d->nnatives--;
		return true;
	}
	return false;
}

bool decide_native_restarted(const struct decide *d, const char *name, int64_t since)
{
	size_t i;

	for (i = 0; i < d->nnatives; i++) {
		const struct decide_native *n = &d->natives[i];

		/* A spec's native is known again by its spec, under the spec's name, not its program's. */
		if (n->by != NATIVE_BY_SPEC && n->exited && !n->replaced && n->exited_us <= since &&
		    strcmp(n->name, name) == 0)
			return true;
	}
	return false;
}

size_t decide_native_count(const struct decide *d)
{
	return d->nnatives;
}

bool decide_native_view(const struct decide *d, size_t i, struct decide_native_view *v)
{
	const struct decide_native *n;

	memset(v, 0, sizeof(*v));
	if (i >= d->nnatives)
		return false;
	n = &d->natives[i];
	v->id = n->id;
	v->name = n->name;
	v->by = n->by;
	v->state = !n->exited ? DECIDE_NATIVE_RUNNING : n->replaced ? DECIDE_NATIVE_RESTARTED : DECIDE_NATIVE_EXITED;
	v->seen_us = n->seen_us;
	v->exited_us = n->exited_us;
	return true;
}

/* ---- the apps' stop after a sidecar failed ------------------------------------------ */

/*
 * --on-sidecar-exit=fail: a sidecar failed while the apps ran, under Never:
 * nothing will restart it, and the apps would hang without it until the
 * Job's activeDeadlineSeconds. They are stopped the way the kubelet stops
 * a container, so that the pod fails now and the Job's backoffLimit can
 * retry it. Not under OnFailure or Always (the kubelet restarts a failed
 * sidecar itself, and would restart the apps too), not for an exit 0 (a sidecar
 * that ends by its own choice, as Vault Agent's exit_after_auth does),
 * and not while the pod is being deleted (the kubelet stops the apps).
 */
void dnat_apps_stop_begin(struct decide *d, size_t k, int code, int64_t now)
{
	bool keep = true;
	enum decide_apps_kept why = APPS_KEPT_ON_FAILURE;

	if (d->cfg.on_sidecar_exit != SIDECAR_EXIT_FAIL || d->apps_stop_us || d->phase >= PHASE_DRAINING)
		return;
	if (d->cfg.policy == POLICY_ALWAYS)
		why = APPS_KEPT_ALWAYS;
	else if (d->cfg.policy != POLICY_NEVER)
		why = APPS_KEPT_ON_FAILURE;
	else if (code == 0)
		why = APPS_KEPT_EXIT_0;
	else if (d->term_us)
		why = APPS_KEPT_DELETED;
	else
		keep = false;
	if (keep) {
		SAY_SC(d, k, .kind = NOTE_APPS_STOP_NOT, .kept = why);
		return;
	}
	d->apps_stop_us = now;
	d->apps_stop_for = k;
	SAY_SC(d, k, .kind = NOTE_APPS_STOP, .us = d->cfg.kill_after_us);
}

/* The app a, being stopped after a sidecar failed: whether it is still to be signalled. */
static bool stoppable(const struct decide_app *a)
{
	return a->id && a->id != DECIDE_APP_COMMAND && !a->exited && !a->superseded && !a->signal_err &&
	       a->signal != SIGKILL;
}

/*
 * Each live app container gets SIGTERM to its main process, and
 * --kill-after later SIGKILL to every process, as the kubelet's grace
 * period ends; an app container that appears meanwhile gets the same.
 */
bool dnat_apps_stop_step(struct decide *d, struct pass *p)
{
	size_t i;

	if (!d->apps_stop_us)
		return false;
	for (i = 0; i < d->napps; i++) {
		struct decide_app *a = &d->apps[i];

		if (!stoppable(a) || !dpriv_reached(p, a->signal_next_us) || !dpriv_go(p))
			continue;
		a->signal = a->signal ? SIGKILL : SIGTERM;
		a->signal_next_us = a->signal == SIGTERM ? p->now + d->cfg.kill_after_us : INT64_MAX;
		p->act->kind = DECIDE_SIGNAL_APP;
		p->act->app = a->id;
		p->act->signo = a->signal;
		p->act->all = a->signal == SIGKILL;
		p->act->urgent = true;
		/* SIGKILL goes to every process of it: as a rescan of this turn lists them. */
		if (p->act->all)
			dpriv_look_first(d, p);
		return true;
	}
	return false;
}

bool dnat_app_signal_result(struct decide *d, unsigned id, int err, int64_t now)
{
	struct decide_app *a = dapps_find(d, id);

	if (!a || !a->signal)
		return false;
	/* ESRCH: it exited meanwhile; its watch reports that. */
	if (err == 0 || err == -ESRCH)
		return true;
	/* Not sent: the summary names only the signals that went out. */
	a->signal = a->signal == SIGKILL ? SIGTERM : 0;
	if (dpriv_transient(err)) {
		/* The same signal again shortly. */
		a->signal_next_us = now + SIGNAL_RETRY_US;
		SAY(d, .kind = NOTE_APP_SIGNAL_RETRY, .app = a->name, .container = id, .result = err);
		return true;
	}
	a->signal_err = err;
	SAY(d, .kind = err == -EPERM ? NOTE_APP_SIGNAL_NOT_PERMITTED : NOTE_APP_SIGNAL_FAILED, .app = a->name,
	    .container = id, .result = err);
	return true;
}
