/*
 * The engine: one libev loop that follows the pod and carries out what
 * decide decides. It holds what every mode needs (the loop, the pod, one
 * adapter per sidecar, decide and its timer, the log's flushing, the
 * signals, the end and the clean-up); a mode is a small table of what
 * differs (struct engine_mode): the agent (agent.c), rearguard drain
 * (drain.c) and rearguard run --drain (wrap.c).
 *
 *	return engine_run(&agent_mode, opt, data, NULL);
 *
 * or, a step at a time (the unit tests, with a fake /proc and their own
 * clock):
 *
 *	engine_open(&e, &mode, opt, data, &world);
 *	while (!engine_finished(e)) { ev_run(engine_loop(e), EVRUN_NOWAIT); ... engine_decide(e); }
 *	status = engine_close(e);
 *
 * Every event, whoever learns of it (the pod, a sidecar's adapter, the
 * file protocol, the command, a signal), reaches decide through
 * engine_tell; the decisions follow at once, unless the engine is carrying
 * out an action (a scan, say) or starting: their events are taken
 * together, and decided on after.
 */
#ifndef RG_ENGINE_H
#define RG_ENGINE_H

#include "decide.h"

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct agent_options;
struct engine;
struct jbuf;

/* What differs between the modes. Any operation may be NULL: nothing to do. */
struct engine_mode {
	bool apps;             /* containers may be apps (the agent); drain and the wrapper stop sidecars only */
	bool blind_ok;         /* without the pod's other containers visible, stops are confirmed by port */
	bool spare_self;       /* this process and its ancestors are never watched nor signalled (drain) */
	int failed_status;     /* the exit status when the engine cannot start */
	const int *signals;    /* the signals the engine takes (mode's signal op) */
	size_t nsignals;
	/* The first log line. */
	void (*hello)(struct engine *e);
	/*
	 * Before the pod is opened: whether containers that ran before this
	 * one are native sidecars (the agent's --first, on its first run).
	 */
	bool (*first)(struct engine *e);
	/* Before decide exists (the agent opens the file protocol): 0, or -errno to give up. */
	int (*open)(struct engine *e);
	/* What decide is told besides the options. */
	void (*configure)(struct engine *e, struct decide_config *dc);
	/*
	 * decide exists. True when an earlier run finished (the agent found
	 * its done file) and decide was told: its decisions come at once, and
	 * the pod is not touched.
	 */
	bool (*resume)(struct engine *e);
	/* What decide is told first (an earlier run's apps-done, the command, the drain). */
	void (*start)(struct engine *e);
	void (*signal)(struct engine *e, int signo);
	/* DECIDE_WRITE: 0 or -errno. */
	int (*write)(struct engine *e, enum protocol_file file, enum decide_reason reason);
	/* DECIDE_START_COMMAND: the command that waited for the sidecars starts (run --drain). */
	void (*start_command)(struct engine *e);
	/* DECIDE_APPS_DONE, after the engine's own part. */
	void (*apps_done)(struct engine *e, const struct decide_action *act);
	/* DECIDE_EXIT: the summary (NULL when resumed, or out of memory) is out in the log next. */
	void (*finish)(struct engine *e, const struct decide_action *act, const struct jbuf *summary);
	/* The exit status when the loop ended without DECIDE_EXIT. */
	int (*lost)(struct engine *e);
	void (*close)(struct engine *e);
};

/* Where the engine looks and what time it is: NULL fields are the real ones. */
struct engine_world {
	const char *proc;       /* /proc */
	pid_t self;             /* getpid(), as proc numbers it */
	int64_t (*clock)(void); /* mono_us */
};

int engine_run(const struct engine_mode *mode, const struct agent_options *opt, void *data,
	       const struct engine_world *world);

/* The same in steps. engine_open: 0, or the exit status when it cannot start (e is then NULL). */
int engine_open(struct engine **e, const struct engine_mode *mode, const struct agent_options *opt, void *data,
		const struct engine_world *world);
/* Whether decide's exit was carried out: nothing is left but engine_close. */
bool engine_finished(const struct engine *e);
/* Frees everything; the exit status. */
int engine_close(struct engine *e);

/* ---- for the modes ------------------------------------------------------------ */

void *engine_data(const struct engine *e);
const struct agent_options *engine_options(const struct engine *e);
struct ev_loop *engine_loop(const struct engine *e);
int64_t engine_now(const struct engine *e);
/* Tells decide what happened; the decisions follow unless the engine is carrying out an action or starting. */
bool engine_tell(struct engine *e, const struct decide_event *ev);
/* Asks decide for what is to be done, and does it. */
void engine_decide(struct engine *e);
/* Logs every container the pod has (SIGHUP, after the rescan it asks decide for). */
void engine_list(const struct engine *e);
/* The summary (decide's views in JSON), built once, at the first call. */
const struct jbuf *engine_summary(struct engine *e);

#endif
