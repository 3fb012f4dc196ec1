/*
 * The log on a libev loop, for the engine and for rearguard run alike:
 * while the loop runs, lines are held and written once per iteration,
 * after whatever went out in it (a stop request before the lines that
 * explain it), and never waited for: what the output does not take waits
 * for it to be writable while the loop goes on.
 *
 *	rc = log_nonblocking();      at start
 *	evlog_complain(rc);          once the first line is out
 *	evlog_start(&l, loop);       the loop is about to run
 *	ev_run(loop, 0);
 *	evlog_stop(&l);
 *	log_finish(1000);            the last lines get a moment, not more
 */
#ifndef RG_EVLOG_H
#define RG_EVLOG_H

#include <ev.h>

struct evlog {
	struct ev_loop *loop;
	ev_prepare flush;
	ev_io io;
};

/* Says that the log output could not be made non-blocking (err < 0), and what that risks. */
void evlog_complain(int err);
void evlog_start(struct evlog *l, struct ev_loop *loop);
void evlog_stop(struct evlog *l);

#endif
