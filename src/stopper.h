/*
 * Stops one sidecar, the way decide says: it holds the sidecar's drain,
 * stop and gone-probe requests (built ahead of time, so that the stop goes
 * out at once when it is due), collects the sidecar's processes from the
 * pod as podscan last saw it and watches each of them, signals them, and
 * tells its owner when the last one it watches is gone, so that one more
 * look at /proc can confirm that nothing new was forked meanwhile.
 *
 *	stopper_init(&st, &cfg);       once per sidecar
 *	stopper_prepare(&st);          libcurl is set up: build the requests
 *	stopper_request(&st, DECIDE_HTTP_STOP, connect_us, timeout_us);
 *	stopper_collect(&st);          after each refresh of podscan, once collecting
 *	if (stopper_gone(&st)) ... every process it found is gone ...
 *	stopper_signal(&st, SIGTERM);
 *	stopper_free(&st);
 *
 * A process that cannot be watched with a pidfd is polled (stopper_poll),
 * and one that could not be watched at all (no memory) is never counted as
 * gone: stopper_gone() stays false until a later collect watches it.
 */
#ifndef RG_STOPPER_H
#define RG_STOPPER_H

#include "decide.h"
#include "http.h"
#include "pidwatch.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct podscan;
struct sidecar_spec;
struct stopper;

/* A request of the sidecar's finished: result is an HTTP status, 0 (a probe connected) or -errno. */
typedef void stopper_http_fn(struct stopper *st, enum decide_http_purpose purpose, int result);
/* Every process the stopper watches has exited: time to look again. */
typedef void stopper_empty_fn(struct stopper *st);

struct stopper_config {
	struct ev_loop *loop;
	struct http *http;
	struct podscan *ps;
	const struct sidecar_spec *spec;
	size_t index;         /* the sidecar's index, for podscan's containers */
	bool in_own_container; /* rearguard drain in the sidecar's own container (a preStop hook) */
	const pid_t *spare;   /* never watched nor signalled: this process and its ancestors */
	size_t nspare;
	stopper_http_fn *on_http;
	stopper_empty_fn *on_empty;
	void *data;
};

struct stopper_proc {
	struct pidwatch pw;
	struct stopper *st;
};

struct stopper {
	struct stopper_config cfg;
	struct stopper_proc **procs;
	size_t n, cap;
	unsigned live;       /* watched and not exited */
	unsigned missed;     /* found by the last collect but not watched (no memory) */
	bool collecting;     /* stopper_collect was called: its processes are being watched */
	bool advised;        /* advice about its stop endpoint was logged */
	struct http_request drain, stop, gone, check;
};

void stopper_init(struct stopper *st, const struct stopper_config *cfg);
/* Builds the requests the sidecar's spec has. -errno when libcurl cannot. */
int stopper_prepare(struct stopper *st);
/* Starts the drain, stop or gone request now. -errno when it cannot be started. */
int stopper_request(struct stopper *st, enum decide_http_purpose purpose, int64_t connect_timeout_us,
		    int64_t timeout_us);
/* Watches every live process of the sidecar's containers not watched yet. Returns the live count. */
unsigned stopper_collect(struct stopper *st);
/* Whether the processes it collected are gone, every one (after a collect on a fresh scan). */
bool stopper_gone(const struct stopper *st);
/*
 * Sends sig to the root of each of the sidecar's containers (watching it
 * first if need be), or with all to each watched live process. 0, or the
 * -errno that matters most (-EPERM first); *sent: how many got it.
 */
int stopper_signal(struct stopper *st, int sig, bool all, unsigned *sent);
/* Looks at the processes watched by polling (DECIDE_POLL); how many are polled. */
void stopper_poll(struct stopper *st);
unsigned stopper_polled(const struct stopper *st);
void stopper_free(struct stopper *st);

#endif
