#include "config.h"

#include "evlog.h"

#include "log.h"

#include <string.h>

/* The log output takes more: the lines that waited. */
static void on_writable(struct ev_loop *loop, ev_io *w, int revents)
{
	log_flush();
	if (!log_pending()) {
		ev_ref(loop);
		ev_io_stop(loop, w);
	}
}

/*
 * Before the loop waits: the lines of this iteration, after whatever went
 * out in it; what the output does not take waits for it to be writable,
 * and the loop goes on.
 */
static void on_prepare(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct evlog *l = w->data;

	log_flush();
	if (log_pending() && !ev_is_active(&l->io)) {
		ev_io_set(&l->io, log_fd(), EV_WRITE);
		ev_io_start(loop, &l->io);
		/* A stalled log keeps nothing alive: the loop ends when the work does. */
		ev_unref(loop);
	}
}

void evlog_complain(int err)
{
	if (err < 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("error", strerror(-err))),
			"cannot make the log output non-blocking: a stalled log pipe could stall the agent");
}

void evlog_start(struct evlog *l, struct ev_loop *loop)
{
	memset(l, 0, sizeof(*l));
	l->loop = loop;
	ev_prepare_init(&l->flush, on_prepare);
	l->flush.data = l;
	ev_init(&l->io, on_writable);
	log_hold();
	ev_prepare_start(loop, &l->flush);
	ev_unref(loop); /* the flush alone does not keep the loop running */
}

void evlog_stop(struct evlog *l)
{
	if (!l->loop)
		return;
	ev_ref(l->loop);
	ev_prepare_stop(l->loop, &l->flush);
	if (ev_is_active(&l->io)) {
		ev_ref(l->loop);
		ev_io_stop(l->loop, &l->io);
	}
	l->loop = NULL;
}
