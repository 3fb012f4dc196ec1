/*
 * Waiting for a file of the protocol (ready, apps-done, done) with a
 * timeout, on the loop: inotify, no polling. The directory may not exist
 * yet; its parent is watched until it does. `rearguard wait` is this and
 * an exit code; `rearguard run` waits for ready with it.
 *
 *	rc = await_start(loop, &w, dir, "ready", timeout_ms, on_ready, data);
 *	rc == 1: it holds already; 0: on_ready(loop, &w, held) follows; < 0: -errno
 *	await_stop(loop, &w);
 */
#ifndef RG_AWAIT_H
#define RG_AWAIT_H

#include "protocol.h"

#include <ev.h>
#include <stdbool.h>
#include <stdint.h>

struct await;
/* held: the file is there; false: the timeout passed first. */
typedef void await_cb(struct ev_loop *loop, struct await *w, bool held);

struct await {
	struct protocol protocol;
	ev_timer timer;
	struct ev_loop *loop;
	enum protocol_file file; /* the one awaited */
	bool open, held;
	await_cb *cb;
	void *data;
};

int await_start(struct ev_loop *loop, struct await *w, const char *dir, const char *name, int64_t timeout_ms,
		await_cb *cb, void *data);
void await_stop(struct ev_loop *loop, struct await *w);

struct wait_options;
/* rearguard wait: 0 the condition holds, 1 timed out, 2 the directory cannot be watched. */
int await_main(const struct wait_options *o);

#endif
