/* rearguard drain: the engine (engine.c) told to drain at once. */
#include "config.h"

#include "drain.h"

#include "engine.h"
#include "log.h"
#include "options.h"

static void hello(struct engine *e)
{
	log_msg(LOG_INFO, FIELDS(LF_INT("sidecars", engine_options(e)->nsidecars)), "rearguard %s draining",
		PACKAGE_VERSION);
}

static void start(struct engine *e)
{
	engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_DRAIN_NOW, .reason = REASON_DRAIN_COMMAND });
}

/* No signals of its own (interrupting a drain by hand ends it), no files, no readiness. */
static const struct engine_mode drain_mode = {
	.blind_ok = true,
	.spare_self = true,
	.failed_status = 2,
	.hello = hello,
	.start = start,
};

int drain_main(const struct agent_options *opt)
{
	return engine_run(&drain_mode, opt, NULL, NULL);
}
