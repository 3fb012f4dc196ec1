/* rearguard sidecar: a sidecar's program, run so that its stop ends the container with 0 (sidecar.h). */
#include "config.h"

#include "sidecar.h"

#include "child.h"
#include "evlog.h"
#include "log.h"
#include "options.h"
#include "parse.h"
#include "protocol.h"
#include "sys.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Every signal another process may send, but SIGCHLD (the wrapper's own)
 * and those the kernel raises for a fault of the wrapper itself (SEGV,
 * BUS, ILL, FPE, TRAP, SYS, ABRT); SIGKILL and SIGSTOP cannot be caught.
 * SIGPIPE is the wrapper's own too (its log): ignored, not passed on.
 */
static const int forwarded[] = { SIGHUP,  SIGINT,  SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,   SIGTERM, SIGCONT,
				 SIGTSTP, SIGTTIN, SIGTTOU, SIGURG,  SIGXCPU, SIGXFSZ,   SIGVTALRM, SIGPROF,
				 SIGWINCH, SIGIO,  SIGPWR };
#define NFORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))
#define NREALTIME 33 /* SIGRTMIN..SIGRTMAX, as many as there are (libev takes signals up to 64) */

struct guard {
	struct ev_loop *loop;
	const struct sidecar_options *o;
	ev_signal sigs[NFORWARDED + NREALTIME];
	int signos[NFORWARDED + NREALTIME];
	size_t nsigs;
	ev_child child;
	ev_timer kill_timer;
	ev_io inotify;
	int ifd, wd, dir_wd; /* dir_wd: DIR itself, while sidecars/ is not there */
	int sdfd;            /* sidecars/, -1: not (yet) there */
	char stop_file[PROTOCOL_NAME_MAX + sizeof(PROTOCOL_STOP_SUFFIX)];
	pid_t pid;           /* 0: not running */
	int pidfd;
	bool stopping, timed_out, over;
	unsigned long long sent;      /* the signals passed on since the stop began */
	unsigned long long requested; /* those sidecars/NAME.stop asked for: each once */
	int code;
};

static unsigned long long bit(int sig)
{
	return sig >= 1 && sig <= 64 ? 1ull << (sig - 1) : 0;
}

int sidecar_code(int status, bool stopping, unsigned long long sent)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		/* Of the stop: a signal it was sent since, or SIGKILL (the timeout's, the agent's). */
		if (stopping && ((sent & bit(sig)) || sig == SIGKILL))
			return 0;
		return 128 + sig;
	}
	if (!WIFEXITED(status))
		return SIDECAR_FAILED;
	/* 128 + N after signal N is how shells, the JVM and Go programs say they ended of it. */
	if (stopping && WEXITSTATUS(status) > 128 && (sent & bit(WEXITSTATUS(status) - 128)))
		return 0;
	return WEXITSTATUS(status);
}

/* The signal's name for the log and the report: "TERM", or "RTMIN+3" where signal_name has none. */
static const char *sig_word(int sig, char buf[16])
{
	const char *name = signal_name(sig);

	if (strcmp(name, "?") != 0)
		return name;
	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, 16, "RTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, 16, "%d", sig);
	return buf;
}

static void on_kill_timer(struct ev_loop *loop, ev_timer *t, int revents);

/* The stop has begun (a stop signal came, or the stop file): the program has --stop-timeout from now. */
static void begin_stop(struct guard *g, const char *from)
{
	char dur[32];

	if (g->stopping)
		return;
	g->stopping = true;
	format_duration(g->o->stop_timeout_ms, dur);
	log_msg(LOG_INFO, FIELDS(LF_STR("from", from), LF_STR("stop_timeout", dur)),
		"stop: the program is killed if it still runs after the stop timeout");
	ev_timer_init(&g->kill_timer, on_kill_timer, (double)g->o->stop_timeout_ms / 1000., 0.);
	g->kill_timer.data = g;
	ev_timer_start(g->loop, &g->kill_timer);
}

static int deliver(struct guard *g, int sig)
{
	if (!g->pid)
		return -ESRCH;
	if (g->stopping)
		g->sent |= bit(sig);
	if (g->pidfd >= 0)
		return sys_pidfd_send_signal(g->pidfd, sig);
	return kill(g->pid, sig) < 0 ? -errno : 0;
}

static void on_kill_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct guard *g = t->data;
	char dur[32];
	int rc;

	if (!g->pid)
		return;
	g->timed_out = true;
	rc = deliver(g, SIGKILL);
	format_duration(g->o->stop_timeout_ms, dur);
	log_msg(rc ? LOG_WARN : LOG_INFO, FIELDS(LF_STR("stop_timeout", dur), LF_STR("error", rc ? strerror(-rc) : NULL)),
		"the program still ran when the stop timeout passed: sent SIGKILL");
}

static bool is_stop_signal(const struct guard *g, int sig)
{
	return sig == SIGTERM || sig == g->o->stop_signal;
}

static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
	struct guard *g = s->data;
	char buf[16];
	int rc;

	if (!g->pid)
		return;
	if (is_stop_signal(g, s->signum))
		begin_stop(g, "signal");
	rc = deliver(g, s->signum);
	log_msg(is_stop_signal(g, s->signum) || rc ? LOG_INFO : LOG_DEBUG,
		FIELDS(LF_STR("signal", sig_word(s->signum, buf)), LF_STR("error", rc ? strerror(-rc) : NULL)),
		"signal passed on to the program");
}

/* sidecars/NAME.stop: the agent's request, a signal's name; each signal once. */
static void read_stop_file(struct guard *g)
{
	char text[32];
	size_t len = 0;
	int rc, sig;

	if (g->sdfd < 0 || !g->pid)
		return;
	rc = read_small_at(g->sdfd, g->stop_file, O_NOFOLLOW | O_NONBLOCK, text, sizeof(text), &len);
	if (rc < 0) {
		if (rc != -ENOENT)
			log_msg(LOG_WARN, FIELDS(LF_STR("file", g->stop_file), LF_STR("error", strerror(-rc))),
				"cannot read the stop request");
		return;
	}
	if (len > 0 && text[len - 1] == '\n')
		text[--len] = '\0';
	if (parse_signal(text, &sig) < 0 || sig == SIGSTOP) {
		log_msg(LOG_WARN, FIELDS(LF_STR("file", g->stop_file)), "ignoring a stop request that names no signal");
		return;
	}
	if (g->requested & bit(sig))
		return;
	g->requested |= bit(sig);
	begin_stop(g, "file");
	rc = deliver(g, sig);
	log_msg(rc ? LOG_WARN : LOG_INFO, FIELDS(LF_STR("signal", signal_name(sig)), LF_STR("error", rc ? strerror(-rc) : NULL)),
		"stop requested through the shared volume: signal sent to the program");
}

/* sidecars/ is there: its watch, its stale report gone, and a request already there read. */
static void attach(struct guard *g)
{
	char path[PATH_MAX];

	if (g->sdfd >= 0)
		return;
	g->sdfd = protocol_sidecars_dir(g->o->dir, true);
	if (g->sdfd < 0)
		return;
	snprintf(path, sizeof(path), "%s/%s", g->o->dir, PROTOCOL_SIDECARS);
	g->wd = inotify_add_watch(g->ifd, path, IN_CLOSE_WRITE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW);
	if (g->dir_wd >= 0) {
		inotify_rm_watch(g->ifd, g->dir_wd);
		g->dir_wd = -1;
	}
	/* A report of an earlier attempt of this container (OnFailure) is stale now. */
	if (unlinkat(g->sdfd, g->o->name, 0) < 0 && errno != ENOENT)
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", g->o->dir), LF_STR("error", strerror(errno))),
			"cannot remove the report of an earlier attempt");
	read_stop_file(g);
}

static void on_inotify(struct ev_loop *loop, ev_io *w, int revents)
{
	struct guard *g = w->data;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool stop = false, dir = false;
	ssize_t n;
	size_t off;

	while ((n = read(g->ifd, buf, sizeof(buf))) > 0) {
		for (off = 0; off + sizeof(struct inotify_event) <= (size_t)n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(buf + off);

			off += sizeof(*ev) + ev->len;
			if (off > (size_t)n)
				break;
			if (ev->mask & IN_Q_OVERFLOW)
				stop = dir = true;
			else if (ev->wd == g->wd && ev->len && strcmp(ev->name, g->stop_file) == 0)
				stop = true;
			else if (ev->wd == g->dir_wd && ev->len && strcmp(ev->name, PROTOCOL_SIDECARS) == 0)
				dir = true;
		}
	}
	if (dir)
		attach(g);
	if (stop)
		read_stop_file(g);
}

/*
 * The stop may also come through the volume: sidecars/ is watched (made
 * if missing), or, where the wrapper may not make it (a read-only mount),
 * DIR until the agent does. Without DIR, signals only.
 */
static void watch_volume(struct guard *g)
{
	g->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (g->ifd < 0) {
		log_msg(LOG_WARN, FIELDS(LF_STR("error", strerror(errno))),
			"inotify unavailable: the stop comes by signal only");
		return;
	}
	ev_io_init(&g->inotify, on_inotify, g->ifd, EV_READ);
	g->inotify.data = g;
	ev_io_start(g->loop, &g->inotify);
	g->dir_wd = inotify_add_watch(g->ifd, g->o->dir, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
	attach(g);
	if (g->sdfd < 0 && g->dir_wd < 0)
		log_msg(LOG_INFO, FIELDS(LF_STR("dir", g->o->dir), LF_STR("error", strerror(errno))),
			"the shared volume is not there: the stop comes by signal only");
	else if (g->sdfd < 0)
		attach(g); /* made between the first try and the watch */
}

/* How the program ended, in the report's words. */
static void how_of(const struct guard *g, int status, char *how, size_t cap)
{
	char buf[16];

	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && g->timed_out)
		snprintf(how, cap, "timeout");
	else if (WIFSIGNALED(status))
		snprintf(how, cap, "signal:%s", sig_word(WTERMSIG(status), buf));
	else
		snprintf(how, cap, "exited:%d", WEXITSTATUS(status));
}

static void report(struct guard *g, const char *how)
{
	char text[16 + PROTOCOL_HOW_MAX];
	int rc;

	if (g->sdfd < 0)
		g->sdfd = protocol_sidecars_dir(g->o->dir, true);
	if (g->sdfd < 0)
		return;
	snprintf(text, sizeof(text), "%d %s\n", g->code, how);
	rc = write_atomic_at(g->sdfd, g->o->name, text, strlen(text), PROTOCOL_FILE_MODE, NULL);
	if (rc < 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", g->o->dir), LF_STR("error", strerror(-rc))),
			"cannot write the sidecar's report");
}

static void on_exit_status(struct ev_loop *loop, ev_child *w, int revents)
{
	struct guard *g = w->data;
	char how[PROTOCOL_HOW_MAX];

	ev_child_stop(loop, w);
	ev_timer_stop(loop, &g->kill_timer);
	g->pid = 0;
	if (g->pidfd >= 0)
		close(g->pidfd);
	g->pidfd = -1;
	g->over = true;
	g->code = sidecar_code(w->rstatus, g->stopping, g->sent);
	how_of(g, w->rstatus, how, sizeof(how));
	log_msg(g->code ? LOG_WARN : LOG_INFO,
		FIELDS(LF_STR("program", how), LF_STR("stopping", g->stopping ? "yes" : "no"), LF_INT("exit_code", g->code)),
		"%s", g->code == 0 && g->stopping ? "the program ended of its stop: the container exits 0"
		      : g->code == 0		   ? "the program exited 0"
		      : g->stopping		   ? "the program failed during its stop: its status is the container's"
						   : "the program ended before any stop: its status is the container's");
	report(g, how);
	ev_break(loop, EVBREAK_ALL);
}

static void start_signals(struct guard *g)
{
	size_t i;
	int sig;

	for (i = 0; i < NFORWARDED; i++)
		g->signos[g->nsigs++] = forwarded[i];
	for (sig = SIGRTMIN; sig <= SIGRTMAX && sig <= 64 && g->nsigs < ARRAY_SIZE(g->signos); sig++)
		g->signos[g->nsigs++] = sig;
	for (i = 0; i < g->nsigs; i++) {
		ev_signal_init(&g->sigs[i], on_signal, g->signos[i]);
		g->sigs[i].data = g;
		ev_signal_start(g->loop, &g->sigs[i]);
	}
}

static void stop_watchers(struct guard *g)
{
	size_t i;

	sys_hold_signals(g->signos, g->nsigs);
	for (i = 0; i < g->nsigs; i++)
		ev_signal_stop(g->loop, &g->sigs[i]);
	ev_timer_stop(g->loop, &g->kill_timer);
	ev_child_stop(g->loop, &g->child);
	if (g->ifd >= 0) {
		ev_io_stop(g->loop, &g->inotify);
		close(g->ifd);
	}
	if (g->sdfd >= 0)
		close(g->sdfd);
	if (g->pidfd >= 0)
		close(g->pidfd);
}

int sidecar_main(const struct sidecar_options *o)
{
	struct evlog log;
	struct guard g;
	int err;

	memset(&g, 0, sizeof(g));
	g.o = o;
	g.ifd = g.sdfd = g.pidfd = -1;
	g.wd = g.dir_wd = -1;
	g.code = SIDECAR_FAILED;
	snprintf(g.stop_file, sizeof(g.stop_file), "%s%s", o->name, PROTOCOL_STOP_SUFFIX);
	signal(SIGPIPE, SIG_IGN);
	evlog_complain(log_nonblocking());
	/* The default loop: the only one that reaps children (orphans too, where the wrapper is PID 1). */
	g.loop = ev_default_loop(EVFLAG_AUTO);
	if (!g.loop) {
		log_error("cannot start the event loop");
		return SIDECAR_FAILED;
	}
	ev_timer_init(&g.kill_timer, on_kill_timer, 0., 0.);
	start_signals(&g);
	watch_volume(&g);
	err = child_spawn(&g.pid, o->cmd);
	if (err) {
		g.code = child_spawn_code(o->cmd[0], err);
		g.pid = 0;
		log_msg(LOG_ERROR, FIELDS(LF_STR("program", o->cmd[0]), LF_STR("error", strerror(err)), LF_INT("exit_code", g.code)),
			"%s", g.code == RUN_NOT_FOUND ? "program not found" : "program cannot be executed");
	} else {
		/* Our child cannot be reaped behind our back: the pidfd is surely its. */
		g.pidfd = sys_pidfd_open(g.pid);
		ev_child_init(&g.child, on_exit_status, g.pid, 0);
		g.child.data = &g;
		ev_child_start(g.loop, &g.child);
		log_msg(LOG_INFO, FIELDS(LF_STR("name", o->name), LF_STR("program", o->cmd[0]), LF_INT("pid", g.pid)),
			"rearguard %s running the sidecar's program", PACKAGE_VERSION);
		/* A stop asked for before the program began is its now. */
		read_stop_file(&g);
		evlog_start(&log, g.loop);
		ev_run(g.loop, 0);
		evlog_stop(&log);
	}
	/* The status is decided: a late signal must not become it. */
	stop_watchers(&g);
	ev_loop_destroy(g.loop);
	log_finish(1000);
	return g.code;
}
