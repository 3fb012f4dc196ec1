/* rearguard run --drain: the engine (engine.c), whose one app is the command (child.c). */
#include "config.h"

#include "wrap.h"

#include "child.h"
#include "engine.h"
#include "log.h"
#include "options.h"
#include "util.h"

#include <string.h>

struct wrap {
	struct engine *e;
	const struct run_options *run;
	struct child child;
};

static void hello(struct engine *e)
{
	const struct wrap *w = engine_data(e);

	log_msg(LOG_INFO, FIELDS(LF_INT("sidecars", engine_options(e)->nsidecars), LF_STR("command", w->run->cmd[0])),
		"rearguard %s running the command, and stopping the sidecars after it", PACKAGE_VERSION);
}

static void configure(struct engine *e, struct decide_config *dc)
{
	const struct wrap *w = engine_data(e);

	/* One app, the command, which waits for the sidecars' ready URLs for at most --timeout. */
	dc->policy = POLICY_NEVER;
	dc->apps_expected = 1;
	dc->readiness = dc->ready_gates_apps = !w->run->no_wait;
	dc->ready_timeout_us = w->run->timeout_ms * US_PER_MS;
	dc->command = true;
	dc->command_not_ready = RUN_READY_TIMEOUT;
}

/* The command is over, or will never start: decide hears of it, the stop goes out, then the report. */
static void on_end(struct child *c, int code)
{
	struct wrap *w = c->data;

	/*
	 * Stopped before it started (the pod is being deleted): the sidecars go
	 * now, for that reason. Where decide ended it itself, it knows already
	 * and takes this as said.
	 */
	engine_tell(w->e, &(const struct decide_event){ .kind = DECIDE_EV_COMMAND_ENDED, .code = code,
							.reason = c->started ? REASON_NONE : REASON_SIGNAL });
	child_report(c);
}

static void start(struct engine *e)
{
	struct wrap *w = engine_data(e);

	w->e = e;
	child_open(&w->child, engine_loop(e), w->run, on_end, w);
	w->child.after_end = "signal received while stopping the sidecars: the drain goes on";
	engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_APP_SEEN, .id = DECIDE_APP_COMMAND,
						     .name = w->run->name });
	if (w->run->no_wait)
		child_start(&w->child);
}

/* The command is what waits for ready: every sidecar is. */
static void start_command(struct engine *e)
{
	struct wrap *w = engine_data(e);

	child_start(&w->child);
}

/* decide ended the command that never started (its sidecars were not ready): it is reported. */
static void apps_done(struct engine *e, const struct decide_action *act)
{
	struct wrap *w = engine_data(e);

	if (!act->command_ended)
		return;
	child_end(&w->child, act->exit_code);
}

/* The loop ended without decide's exit: the command's code if it has one. */
static int lost(struct engine *e)
{
	const struct wrap *w = engine_data(e);

	return w->child.over ? w->child.code : RUN_FAILED;
}

static void close_child(struct engine *e)
{
	struct wrap *w = engine_data(e);

	child_close(&w->child);
}

/* The command's signals are the child's: the engine takes none of its own. */
static const struct engine_mode wrap_mode = {
	.blind_ok = true,
	.failed_status = RUN_FAILED,
	.hello = hello,
	.configure = configure,
	.start = start,
	.start_command = start_command,
	.apps_done = apps_done,
	.lost = lost,
	.close = close_child,
};

int wrap_main(const struct run_options *run)
{
	struct wrap w;

	memset(&w, 0, sizeof(w));
	w.run = run;
	return engine_run(&wrap_mode, &run->drain_opts, &w, NULL);
}
