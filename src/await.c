#include "config.h"

#include "await.h"

#include "log.h"
#include "options.h"
#include "parse.h"
#include "util.h"

#include <errno.h>
#include <string.h>

/* The files one can wait for, the agent's: 0 and *file, or -EINVAL. */
static int file_of(const char *name, enum protocol_file *file)
{
	static const enum protocol_file awaitable[] = { PROTOCOL_READY, PROTOCOL_APPS_DONE, PROTOCOL_DONE };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(awaitable); i++) {
		if (strcmp(name, protocol_file_name(awaitable[i])) == 0) {
			*file = awaitable[i];
			return 0;
		}
	}
	return -EINVAL;
}

static void on_file(struct protocol *p, enum protocol_file file, const char *name, int code)
{
	struct await *w = p->data;

	if (file != w->file || w->held)
		return;
	w->held = true;
	/* While await_start runs, its return value says so. */
	if (ev_is_active(&w->timer)) {
		ev_timer_stop(w->loop, &w->timer);
		w->cb(w->loop, w, true);
	}
}

static void on_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct await *w = t->data;

	w->cb(loop, w, false);
}

int await_start(struct ev_loop *loop, struct await *w, const char *dir, const char *name, int64_t timeout_ms,
		await_cb *cb, void *data)
{
	int rc;

	memset(w, 0, sizeof(*w));
	w->loop = loop;
	w->cb = cb;
	w->data = data;
	rc = file_of(name, &w->file);
	if (rc < 0)
		return rc;
	ev_timer_init(&w->timer, on_timeout, (double)timeout_ms / 1000., 0.);
	w->timer.data = w;
	rc = protocol_open(&w->protocol, loop, dir, 0, on_file, w, NULL);
	if (rc < 0)
		return rc;
	w->open = true;
	if (w->held) {
		await_stop(loop, w);
		return 1;
	}
	ev_timer_start(loop, &w->timer);
	return 0;
}

void await_stop(struct ev_loop *loop, struct await *w)
{
	ev_timer_stop(loop, &w->timer);
	if (w->open)
		protocol_close(&w->protocol);
	w->open = false;
}

/* ---- rearguard wait ------------------------------------------------------ */

struct waiting {
	const struct wait_options *o;
	int rc;
};

static void waited(struct ev_loop *loop, struct await *w, bool held)
{
	struct waiting *st = w->data;
	char dur[32];

	if (!held) {
		format_duration(st->o->timeout_ms, dur);
		log_msg(LOG_ERROR, FIELDS(LF_STR("dir", st->o->dir)), "%s did not appear within %s", st->o->condition,
			dur);
	}
	st->rc = held ? 0 : 1;
	ev_break(loop, EVBREAK_ALL);
}

int await_main(const struct wait_options *o)
{
	struct ev_loop *loop = ev_default_loop(EVFLAG_AUTO);
	struct waiting st = { .o = o, .rc = 2 };
	struct await w;
	int rc;

	if (!loop) {
		log_error("cannot start the event loop");
		return 2;
	}
	rc = await_start(loop, &w, o->dir, o->condition, o->timeout_ms, waited, &st);
	if (rc < 0) {
		log_msg(LOG_ERROR, FIELDS(LF_STR("dir", o->dir), LF_STR("error", strerror(-rc))),
			"cannot watch the directory (nor its parent, for it to appear)");
		st.rc = 2;
	} else if (rc == 0) {
		ev_run(loop, 0);
		await_stop(loop, &w);
	} else {
		st.rc = 0;
	}
	ev_loop_destroy(loop);
	return st.rc;
}
