#include "config.h"

#include "await.h"

#include "log.h"
#include "options.h"
#include "parse.h"
#include "pidwatch.h"
#include "podscan.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

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

/* ---- rearguard wait stopped: a sidecar's hold ----------------------------------- */

/*
 * A sidecar's preStop hook on a pod's deletion, `rearguard wait stopped`:
 * the kubelet sends the sidecar its SIGTERM when the hook returns, and
 * rearguard stops it after the apps, through its preset. So the hook
 * lasts until the sidecar has been stopped: until the main process of the
 * container it runs in exits (a hook runs in its container's cgroup, and
 * with the pod's shared PID namespace it sees that process: the earliest
 * there with parent pid 0), or until done appears (rearguard stopped what
 * it could: the kubelet's stop follows for whatever is left), or the
 * timeout. Returning as the main process exits, the hook is usually gone
 * before the runtime ends the container's other processes, and ends 0;
 * when the runtime is first, the kubelet records a failed hook (137), and
 * nothing else differs. Either way its SIGTERM finds nothing to stop.
 */
struct hold {
	struct podscan *ps;
	struct pidwatch main;
	ev_timer poll;  /* the main process watched without a pidfd: looked at this often */
	ev_signal term, intr;
	bool watching;
};

/* Only which container the hook runs in matters: nothing is an app or a sidecar. */
static enum podscan_match match_nothing(void *arg, const char *kname, const char *comm, const char *argv0,
					const char *const *argv, size_t argc, size_t *sidecar)
{
	return MATCH_NONE;
}

static void main_exited(struct ev_loop *loop, struct pidwatch *w)
{
	ev_break(loop, EVBREAK_ALL);
}

static void on_poll(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct hold *h = t->data;

	pidwatch_poll(loop, &h->main);
}

/*
 * SIGTERM or SIGINT: the container's processes are being stopped (a stop
 * signal-all sends to each of them), and the hold with them: it ends, 0.
 */
static void on_stop_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
	ev_break(loop, EVBREAK_ALL);
}

/*
 * Watches the main process of the container this process runs in. 0:
 * watched (its exit breaks the loop); 1: it is gone already; -ENOENT when
 * it cannot be told (no cgroup per container, no process of the container
 * older than this one); other -errno when /proc cannot be read.
 */
static int hold_start(struct ev_loop *loop, struct hold *h)
{
	struct podscan_config cfg = { .proc_path = "/proc", .self_pid = getpid(), .classify = match_nothing };
	struct podscan_container *own = NULL;
	size_t i;
	int rc;

	memset(h, 0, sizeof(*h));
	ev_signal_init(&h->term, on_stop_signal, SIGTERM);
	ev_signal_init(&h->intr, on_stop_signal, SIGINT);
	ev_signal_start(loop, &h->term);
	ev_signal_start(loop, &h->intr);
	rc = podscan_new(&cfg, &h->ps);
	if (rc == 0)
		rc = podscan_refresh(h->ps, NULL);
	if (rc < 0)
		return rc;
	for (i = 0; i < podscan_count(h->ps) && !podscan_flat(h->ps); i++)
		if (podscan_container(h->ps, i)->role == ROLE_SELF)
			own = podscan_container(h->ps, i);
	if (!own || !own->root || own->root == cfg.self_pid)
		return -ENOENT;
	h->main.on_exit = main_exited;
	rc = pidwatch_start(loop, &h->main, h->ps, own->root, own->root_start);
	if (rc == -ESRCH)
		return 1;
	if (rc < 0)
		return rc;
	h->watching = true;
	if (h->main.polled) {
		ev_timer_init(&h->poll, on_poll, 0.1, 0.1);
		h->poll.data = h;
		ev_timer_start(loop, &h->poll);
	}
	return 0;
}

static void hold_stop(struct ev_loop *loop, struct hold *h)
{
	ev_signal_stop(loop, &h->term);
	ev_signal_stop(loop, &h->intr);
	ev_timer_stop(loop, &h->poll);
	if (h->watching)
		pidwatch_stop(loop, &h->main);
	podscan_free(h->ps);
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
		log_msg(LOG_ERROR, FIELDS(LF_STR("dir", st->o->dir)), "%s did not %s within %s", st->o->condition,
			strcmp(st->o->condition, WAIT_STOPPED) == 0 ? "come" : "appear", dur);
	}
	st->rc = held ? 0 : 1;
	ev_break(loop, EVBREAK_ALL);
}

/*
 * The hold: done awaited as any file, and the container's main process
 * watched beside it. 1: it is over already; 0: the loop is to run.
 */
static int hold_begin(struct ev_loop *loop, struct hold *h, struct await *w, const struct wait_options *o,
		      struct waiting *st)
{
	int rc = hold_start(loop, h);

	if (rc == 1)
		return 1;
	/* Nothing to watch: done alone ends the hold, which is said (the hook's output shows only on a failure). */
	if (rc < 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("error", strerror(-rc))),
			"cannot tell this container's main process: holding until done appears");
	return await_start(loop, w, o->dir, protocol_file_name(PROTOCOL_DONE), o->timeout_ms, waited, st);
}

int await_main(const struct wait_options *o)
{
	struct ev_loop *loop = ev_default_loop(EVFLAG_AUTO);
	struct waiting st = { .o = o, .rc = 2 };
	bool stopped = strcmp(o->condition, WAIT_STOPPED) == 0;
	struct hold h = { 0 };
	struct await w;
	int rc;

	if (!loop) {
		log_error("cannot start the event loop");
		return 2;
	}
	if (stopped)
		rc = hold_begin(loop, &h, &w, o, &st);
	else
		rc = await_start(loop, &w, o->dir, o->condition, o->timeout_ms, waited, &st);
	if (rc < 0) {
		log_msg(LOG_ERROR, FIELDS(LF_STR("dir", o->dir), LF_STR("error", strerror(-rc))),
			"cannot watch the directory (nor its parent, for it to appear)");
		st.rc = 2;
	} else if (rc == 0) {
		/* The hold: the main process's exit breaks the loop as done does, and is over too. */
		if (stopped)
			st.rc = 0;
		ev_run(loop, 0);
		await_stop(loop, &w);
	} else {
		st.rc = 0;
	}
	if (stopped)
		hold_stop(loop, &h);
	ev_loop_destroy(loop);
	return st.rc;
}
