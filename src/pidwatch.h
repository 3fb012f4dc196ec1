/*
 * Watches one process that is not our child: a container's root, or a
 * sidecar's process while it is being stopped. With a pidfd on the loop the
 * kernel wakes us when it exits (no polling); where pidfd_open is missing or
 * refused (old kernel, seccomp), the process is polled with its start time
 * (pid reuse) every 100 ms, and that is logged once.
 *
 * Exit and exit status arrive separately: the pidfd turns readable when the
 * process dies, but the kernel publishes the status (PIDFD_INFO_EXIT, Linux
 * >= 6.15) only once its parent (the runtime's shim) has reaped it. on_exit
 * is called at once; on_status follows as soon as the status is known, or
 * when it cannot be (status_known false).
 *
 *	w->on_exit = ...; w->on_status = ...; w->data = ...;
 *	rc = pidwatch_start(loop, w, ps, pid, start_time);
 *	if (rc == -ESRCH) ... it is gone already ...
 */
#ifndef RG_PIDWATCH_H
#define RG_PIDWATCH_H

#include <ev.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct podscan;
struct pidwatch;

typedef void pidwatch_cb(struct ev_loop *loop, struct pidwatch *w);

struct pidwatch {
	ev_io io;
	ev_timer timer; /* status retries, or polling without pidfd */
	const struct podscan *ps;
	int fd;         /* -1 when polling */
	pid_t pid;
	uint64_t start;
	bool active;
	bool exited;
	bool status_done;  /* on_status has been called */
	bool status_known;
	int status;     /* wait status, when status_known */
	int64_t exited_us; /* monotonic time the exit was noticed */
	double retry;   /* seconds until the next status attempt */
	pidwatch_cb *on_exit;
	pidwatch_cb *on_status;
	void *data;
};

/*
 * Starts watching pid, which must still have the given start time.
 * -ESRCH: it has exited already (callbacks are not called).
 */
int pidwatch_start(struct ev_loop *loop, struct pidwatch *w, const struct podscan *ps, pid_t pid, uint64_t start);
void pidwatch_stop(struct ev_loop *loop, struct pidwatch *w);

/* Sends sig to the watched process (through its pidfd: never to a reused pid). */
int pidwatch_kill(struct pidwatch *w, int sig);

/* Whether pidfds are in use (false after the fallback to polling). */
bool pidwatch_uses_pidfd(void);

#endif
