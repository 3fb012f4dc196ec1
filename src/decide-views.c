/*
 * What decide's users may read of it: views, copies of its state in the
 * public terms of decide.h, as of the last event or decision. summary.c,
 * the engine and the tests read decide only through these.
 */
#include "config.h"

#include "decide-private.h"

#include <string.h>

size_t decide_app_count(const struct decide *d)
{
	return d->napps;
}

void decide_view(const struct decide *d, struct decide_view *v)
{
	memset(v, 0, sizeof(*v));
	v->phase = d->phase;
	v->started_us = d->started_us;
	v->decided_us = d->decided_us;
	v->reason = d->reason;
	v->exit_code = d->exit_code;
	v->settled_us = d->settled_us;
	v->polled_most = d->polled_most;
	v->ready_written = d->writes[PROTOCOL_READY].written;
	v->ready_expired = d->ready_expired;
}

bool decide_app_view(const struct decide *d, size_t i, struct decide_app_view *v)
{
	const struct decide_app *a;

	memset(v, 0, sizeof(*v));
	if (i >= d->napps)
		return false;
	a = &d->apps[i];
	v->id = a->id;
	v->name = a->name;
	v->state = a->superseded ? DECIDE_APP_RESTARTED : a->exited ? DECIDE_APP_EXITED : DECIDE_APP_RUNNING;
	v->code = a->code;
	v->gave_up = a->gave_up;
	v->report = a->report[0] ? a->report : NULL;
	v->reported = a->reported;
	v->signal = a->signal;
	v->seen_us = a->seen_us;
	v->exited_us = a->exited_us;
	return true;
}

bool decide_sidecar_view(const struct decide *d, size_t k, struct decide_sidecar_view *v)
{
	if (k >= d->cfg.nsidecars) {
		memset(v, 0, sizeof(*v));
		return false;
	}
	sidecar_view(d, k, v);
	return true;
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
