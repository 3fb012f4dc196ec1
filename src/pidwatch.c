#include "config.h"

#include "pidwatch.h"

#include "log.h"
#include "podscan.h"
#include "sys.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define POLL_INTERVAL 0.1
#define STATUS_FIRST_RETRY 0.001
#define STATUS_MAX_RETRY 0.128
#define STATUS_GIVE_UP 2.0 /* seconds of retries before the status is unknown */

static bool no_pidfd;       /* pidfd_open refused once: poll from then on */
static bool no_exit_info;   /* the kernel cannot give exit statuses */

bool pidwatch_uses_pidfd(void)
{
	return !no_pidfd;
}

static void finish_status(struct ev_loop *loop, struct pidwatch *w, bool known, int status)
{
	ev_timer_stop(loop, &w->timer);
	w->status_known = known;
	w->status = status;
	w->status_done = true;
	if (w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
	}
	w->active = false;
	if (w->on_status)
		w->on_status(loop, w);
}

static void try_status(struct ev_loop *loop, struct pidwatch *w)
{
	int status = 0, rc;

	if (w->fd < 0 || no_exit_info) {
		finish_status(loop, w, false, 0);
		return;
	}
	rc = sys_pidfd_exit_status(w->fd, &status);
	if (rc == 0) {
		finish_status(loop, w, true, status);
		return;
	}
	if (rc == -EOPNOTSUPP) {
		no_exit_info = true;
		log_info("exit codes of other containers are unknown on this kernel (needs Linux 6.15 "
			 "PIDFD_INFO_EXIT); the file protocol can report them");
		finish_status(loop, w, false, 0);
		return;
	}
	if (rc != -EAGAIN || w->retry > STATUS_GIVE_UP) {
		/* ESRCH after the reap: a kernel that knows pidfd_info but not exit statuses. */
		log_msg(LOG_DEBUG, FIELDS(LF_INT("pid", w->pid)), "exit status unavailable: %s", strerror(-rc));
		finish_status(loop, w, false, 0);
		return;
	}
	/* Not reaped yet by its parent (the runtime's shim): ask again shortly. */
	ev_timer_set(&w->timer, w->retry, 0.);
	ev_timer_start(loop, &w->timer);
	w->retry = w->retry * 2 > STATUS_MAX_RETRY ? w->retry + STATUS_MAX_RETRY : w->retry * 2;
}

static void mark_exited(struct ev_loop *loop, struct pidwatch *w)
{
	w->exited = true;
	w->exited_us = mono_us();
	ev_io_stop(loop, &w->io);
	ev_timer_stop(loop, &w->timer);
	if (w->on_exit)
		w->on_exit(loop, w);
	/* on_exit may have stopped the watch. */
	if (w->active && !w->status_done)
		try_status(loop, w);
}

static void on_pidfd(struct ev_loop *loop, ev_io *io, int revents)
{
	struct pidwatch *w = io->data;

	mark_exited(loop, w);
}

static void on_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct pidwatch *w = t->data;
	uint64_t start;
	bool zombie;
	int rc;

	if (w->exited) {
		try_status(loop, w);
		return;
	}
	/* Polling: gone, a zombie, or the pid now names another process. */
	rc = podscan_start_time(w->ps, w->pid, &start, &zombie);
	if (rc < 0 || zombie || start != w->start)
		mark_exited(loop, w);
}

int pidwatch_start(struct ev_loop *loop, struct pidwatch *w, const struct podscan *ps, pid_t pid, uint64_t start)
{
	uint64_t now_start;
	bool zombie;
	int fd = -1;

	w->ps = ps;
	w->pid = pid;
	w->start = start;
	w->fd = -1;
	w->exited = w->status_done = w->status_known = false;
	w->status = 0;
	w->retry = STATUS_FIRST_RETRY;
	ev_init(&w->io, on_pidfd);
	ev_init(&w->timer, on_timer);
	w->io.data = w;
	w->timer.data = w;

	if (!no_pidfd) {
		fd = sys_pidfd_open(pid);
		if (fd == -ESRCH)
			return -ESRCH;
		if (fd == -ENOSYS || fd == -EPERM || fd == -EACCES) {
			no_pidfd = true;
			log_warn("pidfd_open unavailable (%s): polling processes every %dms instead",
				 strerror(-fd), (int)(POLL_INTERVAL * 1000));
		} else if (fd < 0) {
			return fd;
		}
	}
	/* The pidfd names whatever has the pid now: make sure it is still ours. */
	if (podscan_start_time(ps, pid, &now_start, &zombie) < 0 || now_start != start ||
	    (zombie && fd < 0)) {
		if (fd >= 0)
			close(fd);
		return -ESRCH;
	}
	w->active = true;
	if (fd >= 0) {
		w->fd = fd;
		ev_io_set(&w->io, fd, EV_READ);
		ev_io_start(loop, &w->io);
	} else {
		ev_timer_set(&w->timer, POLL_INTERVAL, POLL_INTERVAL);
		ev_timer_start(loop, &w->timer);
	}
	return 0;
}

void pidwatch_stop(struct ev_loop *loop, struct pidwatch *w)
{
	ev_io_stop(loop, &w->io);
	ev_timer_stop(loop, &w->timer);
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	w->active = false;
}

int pidwatch_kill(struct pidwatch *w, int sig)
{
	uint64_t start;
	bool zombie;

	if (w->exited)
		return -ESRCH;
	if (w->fd >= 0)
		return sys_pidfd_send_signal(w->fd, sig);
	/* Without a pidfd, check the start time right before kill() to narrow the reuse window. */
	if (podscan_start_time(w->ps, w->pid, &start, &zombie) < 0 || start != w->start || zombie)
		return -ESRCH;
	return kill(w->pid, sig) < 0 ? -errno : 0;
}
