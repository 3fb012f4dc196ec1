#include "config.h"

#include "await.h"

#include "log.h"
#include "options.h"
#include "parse.h"

#include <errno.h>
#include <string.h>

static enum protocol_what what_of(const char *name)
{
	if (strcmp(name, "ready") == 0)
		return PROTOCOL_READY;
	if (strcmp(name, "apps-done") == 0)
		return PROTOCOL_APPS_DONE;
	if (strcmp(name, "done") == 0)
		return PROTOCOL_DONE;
	return PROTOCOL_NOTHING;
}

static void on_file(struct protocol *s, enum protocol_what what, const char *name, int code)
{
	struct await *w = s->data;

	if (what != w->what || w->held)
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
	w->what = what_of(name);
	w->cb = cb;
	w->data = data;
	if (w->what == PROTOCOL_NOTHING)
		return -EINVAL;
	ev_timer_init(&w->timer, on_timeout, (double)timeout_ms / 1000., 0.);
	w->timer.data = w;
	rc = protocol_open(&w->files, loop, dir, 0, on_file, w);
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
		protocol_close(&w->files);
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
