#include "config.h"

#include "summary.h"

#include "decide.h"
#include "options.h"
#include "util.h"

#include <errno.h>

static void app_json(struct jbuf *j, const struct decide *d, const struct decide_app *a)
{
	jbuf_begin(j, '{');
	jbuf_key(j, "name");
	jbuf_str(j, a->name);
	jbuf_key(j, "container");
	if (a->id && a->id != DECIDE_APP_COMMAND)
		jbuf_int(j, a->id);
	else
		jbuf_null(j); /* known only from its apps/NAME report, or run --drain's command */
	jbuf_key(j, "exit_code");
	if (a->exited && a->code >= 0)
		jbuf_int(j, a->code);
	else
		jbuf_null(j);
	jbuf_key(j, "report");
	if (a->reported >= 0) {
		jbuf_begin(j, '{');
		jbuf_key(j, "name");
		jbuf_str(j, a->report);
		jbuf_key(j, "exit_code");
		jbuf_int(j, a->reported);
		jbuf_end(j, '}');
	} else {
		jbuf_null(j);
	}
	jbuf_key(j, "state");
	jbuf_str(j, !a->exited ? "running" : a->superseded ? "restarted" : "exited");
	jbuf_key(j, "exited_after_ms");
	jbuf_ms(j, a->exited ? a->exited_us - d->started_us : -1);
	jbuf_end(j, '}');
}

/* 200, "refused", "timeout", ...; null while none came. */
static void result_json(struct jbuf *j, int result)
{
	char buf[16];
	const char *word = decide_result_word(result, buf);

	if (!word)
		jbuf_null(j);
	else if (result > 0)
		jbuf_int(j, result);
	else
		jbuf_str(j, word);
}

static void sidecar_json(struct jbuf *j, const struct decide *d, const struct agent_options *opt, size_t i)
{
	const struct decide_sidecar *sc = &d->sidecars[i];
	char method[SPEC_URL_MAX + 16];
	unsigned k;

	spec_describe_stop(&opt->sidecars[i], method, sizeof(method));
	jbuf_begin(j, '{');
	jbuf_key(j, "name");
	jbuf_str(j, opt->sidecars[i].name);
	jbuf_key(j, "method");
	jbuf_str(j, method);
	jbuf_key(j, "outcome");
	jbuf_str(j, decide_outcome(sc));
	/* From the stop request to the last process gone. */
	jbuf_key(j, "stop_latency_ms");
	jbuf_ms(j, sc->stop_sent_us && sc->gone_us ? sc->gone_us - sc->stop_sent_us : -1);
	/* From the apps-done decision to the stop request, and to the sidecar's exit. */
	jbuf_key(j, "decision_to_stop_ms");
	jbuf_ms(j, sc->stop_sent_us && d->decided_us ? sc->stop_sent_us - d->decided_us : -1);
	jbuf_key(j, "decision_to_exit_ms");
	jbuf_ms(j, sc->gone_us && d->decided_us ? sc->gone_us - d->decided_us : -1);
	jbuf_key(j, "ready_after_ms");
	jbuf_ms(j, sc->ready_us ? sc->ready_us - d->started_us : -1);
	/* Drain and stop requests, and what each got: a status, or why none came. */
	jbuf_key(j, "requests");
	jbuf_int(j, sc->requests);
	jbuf_key(j, "statuses");
	jbuf_begin(j, '[');
	for (k = 0; k < sc->requests && k < DECIDE_STATUSES_MAX; k++)
		result_json(j, sc->statuses[k]);
	jbuf_end(j, ']');
	jbuf_end(j, '}');
}

void summary_build(struct jbuf *j, const struct decide *d, const struct agent_options *opt, int64_t now_us)
{
	size_t i;

	jbuf_begin(j, '{');
	jbuf_key(j, "rearguard");
	jbuf_str(j, PACKAGE_VERSION);
	jbuf_key(j, "exit_code");
	jbuf_int(j, d->exit_code);
	jbuf_key(j, "reason");
	jbuf_str(j, d->reason);
	jbuf_key(j, "decided_after_ms");
	jbuf_ms(j, d->decided_us ? d->decided_us - d->started_us : -1);
	jbuf_key(j, "finished_after_ms");
	jbuf_ms(j, now_us - d->started_us);
	jbuf_key(j, "apps");
	jbuf_begin(j, '[');
	for (i = 0; i < d->napps; i++)
		app_json(j, d, &d->apps[i]);
	jbuf_end(j, ']');
	jbuf_key(j, "sidecars");
	jbuf_begin(j, '[');
	for (i = 0; i < opt->nsidecars; i++)
		sidecar_json(j, d, opt, i);
	jbuf_end(j, ']');
	jbuf_end(j, '}');
}
