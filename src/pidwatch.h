/*
 * Watches one process that is not our child: a container's root, or a
 * sidecar's process while it is being stopped. With a pidfd on the loop the
 * kernel wakes us when it exits (no polling). A process that cannot get a
 * pidfd (an old kernel or a seccomp profile without pidfd_open, or no fd to
 * spare: EMFILE, ENFILE, ENOMEM) is polled instead, never taken for exited:
 * pidwatch_poll() looks at it, and the caller's clock (decide's) says when.
 *
 * Exit and exit status arrive separately: the pidfd turns readable when the
 * process dies, but the kernel publishes the status (PIDFD_INFO_EXIT, Linux
 * >= 6.15) only once its parent (the runtime's shim) has reaped it. on_exit
 * is called at once; pidwatch_status() asks for the status afterwards, as
 * often as the caller's clock says.
 *
 *	w->on_exit = ...; w->data = ...;
 *	rc = pidwatch_start(loop, w, ps, pid, start_time);
 *	if (rc == -ESRCH) ... it is gone already ...
 *	if (w->polled) ... call pidwatch_poll(loop, w) now and then ...
 *	rc = pidwatch_status(w, &code);   after on_exit: 0, -EAGAIN (not yet), other: never
 *	pidwatch_stop(loop, w);
 */
#ifndef RG_PIDWATCH_H
#define RG_PIDWATCH_H

#include <errno.h>
#include <ev.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct podscan;
struct pidwatch;

typedef void pidwatch_cb(struct ev_loop *loop, struct pidwatch *w);

struct pidwatch {
	ev_io io;
	const struct podscan *ps;
	int fd;         /* -1 when polled */
	int why_polled; /* the -errno pidfd_open gave, when polled */
	pid_t pid;
	uint64_t start;
	bool active;    /* started, not stopped */
	bool polled;
	bool exited;
	bool status_done; /* pidwatch_status gave its final answer */
	pidwatch_cb *on_exit;
	void *data;
};

/*
 * Starts watching pid, which must still have the given start time.
 * -ESRCH: it has exited already (on_exit is not called). Any other failure
 * to get a pidfd makes a polled watch (w->polled, w->why_polled), still 0.
 */
int pidwatch_start(struct ev_loop *loop, struct pidwatch *w, const struct podscan *ps, pid_t pid, uint64_t start);
void pidwatch_stop(struct ev_loop *loop, struct pidwatch *w);

/*
 * A polled watch: calls on_exit when the process is gone, a zombie, or its
 * pid names another process now. A look that fails for want of resources
 * (EMFILE reading /proc) proves nothing: it is still there.
 */
void pidwatch_poll(struct ev_loop *loop, struct pidwatch *w);
/*
 * Asks now, without waiting for the loop: a pidfd that turned readable (or,
 * for a polled watch, a look at /proc) calls on_exit at once. For a caller
 * that learned of exits by other means (a sidecar's processes all gone) and
 * must not conclude before this watch has had its say. Whether it exited.
 */
bool pidwatch_check(struct ev_loop *loop, struct pidwatch *w);
/* Whether the watch waits on pidwatch_poll (polled, active, its process not seen to exit yet). */
bool pidwatch_polling(const struct pidwatch *w);

/*
 * After on_exit: the exit code (the code, or 128 + signal). 0; -EAGAIN when
 * the kernel has not published it yet (ask again later, for a while: a
 * kernel that knows PIDFD_GET_INFO but not PIDFD_INFO_EXIT says the same);
 * any other -errno when it never will (no PIDFD_INFO_EXIT, no pidfd).
 */
int pidwatch_status(struct pidwatch *w, int *code);

/* Sends sig to the watched process (through its pidfd: never to a reused pid). */
int pidwatch_kill(struct pidwatch *w, int sig);

/*
 * Of the results of signalling several processes, the one to report: a
 * process already gone (-ESRCH) is no error, and EPERM, which has a fix,
 * outranks the others.
 */
static inline int pidwatch_worse(int err, int rc)
{
	if (rc == 0 || rc == -ESRCH)
		return err;
	return err == 0 || rc == -EPERM ? rc : err;
}

/* Whether pidfd_open works at all here (false after ENOSYS, EPERM or EACCES). */
bool pidwatch_uses_pidfd(void);

#endif
