#include "config.h"

#include "run.h"

#include "await.h"
#include "evlog.h"
#include "log.h"
#include "options.h"
#include "parse.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

/* The ready file, the command, the report. */
struct runner {
	struct ev_loop *loop;
	const struct run_options *o;
	struct await ready;
	bool waiting;
	struct child child;
	bool finished;
	int code;
};

/* The end, whatever it was: the report, then the exit with the same code. */
static void on_end(struct child *c, int code)
{
	struct runner *r = c->data;

	if (r->waiting) {
		await_stop(r->loop, &r->ready);
		r->waiting = false;
	}
	child_report(c);
	r->code = code;
	r->finished = true;
	ev_break(r->loop, EVBREAK_ALL);
}

static void on_ready(struct ev_loop *loop, struct await *w, bool held)
{
	struct runner *r = w->data;
	char dur[32];

	await_stop(loop, w);
	r->waiting = false;
	if (!held) {
		format_duration(r->o->timeout_ms, dur);
		log_msg(LOG_ERROR, FIELDS(LF_STR("dir", r->o->dir), LF_INT("exit_code", RUN_READY_TIMEOUT)),
			"ready did not appear within %s: not starting the command (--no-wait starts it regardless)",
			dur);
		child_end(&r->child, RUN_READY_TIMEOUT);
		return;
	}
	log_msg(LOG_INFO, FIELDS(LF_STR("command", r->o->cmd[0])), "ready: starting the command");
	child_start(&r->child);
}

int run_main(const struct run_options *o)
{
	struct evlog log;
	struct runner r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.code = RUN_FAILED;
	signal(SIGPIPE, SIG_IGN);
	/* The log as the engine's: never waited for, written once per loop iteration. */
	evlog_complain(log_nonblocking());
	/* The default loop: the only one that reaps children (also orphans, when run is PID 1). */
	r.loop = ev_default_loop(EVFLAG_AUTO);
	if (!r.loop) {
		log_error("cannot start the event loop");
		return RUN_FAILED;
	}
	child_open(&r.child, r.loop, o, on_end, &r);
	if (o->no_wait) {
		child_start(&r.child);
	} else {
		rc = await_start(r.loop, &r.ready, o->dir, "ready", o->timeout_ms, on_ready, &r);
		if (rc < 0) {
			log_msg(LOG_ERROR, FIELDS(LF_STR("dir", o->dir), LF_STR("error", strerror(-rc))),
				"cannot watch the directory for ready (nor its parent)");
			child_end(&r.child, RUN_FAILED);
		} else if (rc == 1) {
			child_start(&r.child);
		} else {
			r.waiting = true;
			log_msg(LOG_INFO, FIELDS(LF_STR("dir", o->dir)), "waiting for ready");
		}
	}
	if (!r.finished) {
		evlog_start(&log, r.loop);
		ev_run(r.loop, 0);
		evlog_stop(&log);
	}
	/* The command's code is decided: a late signal must not become the exit status. */
	child_close(&r.child);
	if (r.waiting)
		await_stop(r.loop, &r.ready);
	ev_loop_destroy(r.loop);
	log_finish(1000);
	return r.code;
}
