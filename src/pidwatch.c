#include "config.h"

#include "pidwatch.h"

#include "log.h"
#include "podscan.h"
#include "sys.h"
#include "util.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static bool no_pidfd;     /* pidfd_open is missing or refused here: every watch is polled */
static bool no_exit_info; /* the kernel cannot give exit statuses */

bool pidwatch_uses_pidfd(void)
{
	return !no_pidfd;
}


static void mark_exited(struct ev_loop *loop, struct pidwatch *w)
{
	w->exited = true;
	ev_io_stop(loop, &w->io);
	if (w->on_exit)
		w->on_exit(loop, w);
}

/*
 * The pidfd turned readable: the process exited. EV_ERROR is no exit: libev
 * could not watch the fd (it was closed or replaced under it). Then the
 * watch falls back to polling, which finds out the truth.
 */
static void on_pidfd(struct ev_loop *loop, ev_io *io, int revents)
{
	struct pidwatch *w = io->data;

	if (revents & EV_ERROR) {
		ev_io_stop(loop, io);
		log_msg(LOG_WARN, FIELDS(LF_INT("pid", w->pid)), "watching the process failed: polling it instead");
		w->polled = true;
		w->why_polled = -EBADF;
		return;
	}
	mark_exited(loop, w);
}

int pidwatch_start(struct ev_loop *loop, struct pidwatch *w, const struct podscan *ps, pid_t pid, uint64_t start)
{
	uint64_t now_start;
	bool zombie;
	int fd = -ENOSYS, rc;

	w->ps = ps;
	w->pid = pid;
	w->start = start;
	w->fd = -1;
	w->why_polled = 0;
	w->polled = w->exited = w->status_done = w->active = false;
	ev_init(&w->io, on_pidfd);
	w->io.data = w;

	if (!no_pidfd) {
		fd = sys_pidfd_open(pid);
		if (fd == -ESRCH)
			return -ESRCH;
		if (fd == -ENOSYS || fd == -EPERM || fd == -EACCES) {
			no_pidfd = true;
			/* The pace is decide's (POLL_US). */
			log_warn("pidfd_open unavailable (%s): polling processes every 100ms instead", strerror(-fd));
		}
	}
	/*
	 * The pidfd names whatever has the pid now: make sure it is still ours.
	 * One opened on a process reaped since is kept: it names ours (another
	 * process under that pid would need the pid counter to go round
	 * between the scan and pidfd_open), and the kernel keeps the exit
	 * status of a process a pidfd was held for. It turns readable at once.
	 */
	rc = podscan_start_time(ps, pid, &now_start, &zombie);
	if (((rc == -ENOENT || rc == -ESRCH) && fd < 0) || (rc == 0 && (now_start != start || (zombie && fd < 0)))) {
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
		/* EMFILE, ENFILE, ENOMEM, no pidfd at all: never a reason to think it exited. */
		w->polled = true;
		w->why_polled = fd;
	}
	return 0;
}

void pidwatch_poll(struct ev_loop *loop, struct pidwatch *w)
{
	uint64_t start;
	bool zombie;
	int rc;

	if (!w->active || !w->polled || w->exited)
		return;
	rc = podscan_start_time(w->ps, w->pid, &start, &zombie);
	if (rc == -ENOENT || rc == -ESRCH || (rc == 0 && (zombie || start != w->start)))
		mark_exited(loop, w);
}

bool pidwatch_check(struct ev_loop *loop, struct pidwatch *w)
{
	struct pollfd pfd;

	if (!w->active || w->exited)
		return w->exited;
	if (w->polled) {
		pidwatch_poll(loop, w);
		return w->exited;
	}
	pfd.fd = w->fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN))
		mark_exited(loop, w);
	return w->exited;
}

bool pidwatch_polling(const struct pidwatch *w)
{
	return w->active && w->polled && !w->exited;
}

int pidwatch_status(struct pidwatch *w, int *code)
{
	int status = 0, rc;

	if (w->status_done)
		return -ENODATA;
	if (w->fd < 0 || no_exit_info) {
		w->status_done = true;
		return -EOPNOTSUPP;
	}
	rc = sys_pidfd_exit_status(w->fd, &status);
	/*
	 * ESRCH: reaped a moment ago and the kernel not done recording the
	 * status yet (or, on 6.13 and 6.14, a kernel that never records it):
	 * asked again, until decide gives up on it.
	 */
	if (rc == -EAGAIN || rc == -ESRCH)
		return -EAGAIN;
	w->status_done = true;
	/* The status is in (or never will be): the pidfd has served its purpose. */
	close(w->fd);
	w->fd = -1;
	if (rc == -EOPNOTSUPP && !no_exit_info) {
		no_exit_info = true;
		log_info("exit codes of other containers are unknown on this kernel (needs Linux 6.15 "
			 "PIDFD_INFO_EXIT); the file protocol can report them");
	}
	if (rc < 0)
		return rc;
	*code = wait_status_code(status);
	return 0;
}

void pidwatch_stop(struct ev_loop *loop, struct pidwatch *w)
{
	ev_io_stop(loop, &w->io);
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	w->active = false;
}

int pidwatch_kill(struct pidwatch *w, int sig)
{
	uint64_t start;
	bool zombie;
	int rc;

	if (w->exited || !w->active)
		return -ESRCH;
	if (w->fd >= 0)
		return sys_pidfd_send_signal(w->fd, sig);
	/* Without a pidfd, check the start time right before kill() to narrow the reuse window. */
	rc = podscan_start_time(w->ps, w->pid, &start, &zombie);
	if (rc == -ENOENT || rc == -ESRCH || (rc == 0 && (start != w->start || zombie)))
		return -ESRCH;
	/* Unreadable (EMFILE): whose the pid is now cannot be told, so no signal goes to it. */
	if (rc < 0)
		return rc;
	return kill(w->pid, sig) < 0 ? -errno : 0;
}
