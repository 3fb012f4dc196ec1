/*
 * The agent, the companion container: the engine (engine.c) with the file
 * protocol on the shared volume (reports, the drain file, the ready,
 * apps-done and done files), a restarted agent's resume, the termination
 * log, and the signals a container gets.
 */
#include "config.h"

#include "agent.h"

#include "engine.h"
#include "json.h"
#include "log.h"
#include "options.h"
#include "parse.h"
#include "protocol.h"
#include "summary.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct agent {
	struct engine *e;
	struct protocol protocol;
	bool has_protocol;             /* --dir is watched: the protocol above is open */
	bool started;                  /* decide has heard the start: file events go to it */
	bool found_apps_done, found_done;
	char *done_text;               /* the done file an earlier run left, as found */
	size_t done_len;
	/*
	 * A descriptor in reserve, taken before the first pidfd (see
	 * open_protocol): behind every file the agent must write (ready,
	 * apps-done, done, the termination log) and the reports it reads.
	 */
	struct fd_reserve spare;
};

static void hello(struct engine *e)
{
	const struct agent_options *opt = engine_options(e);

	log_msg(LOG_INFO,
		FIELDS(LF_INT("sidecars", opt->nsidecars),
		       LF_STR("restart_policy", decide_policy_word(opt->policy)),
		       LF_INT("apps", opt->apps)),
		"rearguard %s starting", PACKAGE_VERSION);
}

/*
 * --first judges by what ran before the agent, which holds on its first run
 * in the pod only: restarted (after a crash, under OnFailure) it starts
 * after the apps, and would take them for native sidecars. Its first run
 * made apps/ in --dir, the shared volume, which outlives the restart; found
 * there, it says this run is not the first. Without the volume nothing can
 * tell: natives are then known by their specs alone. Asked before the file
 * protocol is opened, which makes apps/.
 */
static bool first_run(struct engine *e)
{
	const struct agent_options *opt = engine_options(e);
	char apps[4096];
	struct stat st;

	if (!opt->first)
		return false;
	if (stat(opt->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", opt->dir)),
			"--first: no shared volume at --dir, so a restart of rearguard cannot be told from its first "
			"run: native sidecars are known by their specs only (native)");
		return false;
	}
	snprintf(apps, sizeof(apps), "%s/apps", opt->dir);
	if (lstat(apps, &st) == 0) {
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", opt->dir)),
			"--first: an earlier run of rearguard in this pod made apps/ in --dir, and this run started "
			"after the apps: native sidecars are known by their specs only (native)");
		return false;
	}
	return true;
}

/* ---- the file protocol ------------------------------------------------- */

static void on_file(struct protocol *p, enum protocol_file file, const char *name, int code)
{
	struct agent *a = p->data;

	switch (file) {
	case PROTOCOL_REPORT:
		/* Read again once decide has heard the start (see start()). */
		if (a->started)
			engine_tell(a->e, &(const struct decide_event){ .kind = DECIDE_EV_APP_REPORT, .name = name,
									.code = code });
		return;
	case PROTOCOL_DRAIN:
		if (!a->started)
			return;
		/* Said first: decide's drain, and the stops it starts, follow in the log. */
		log_msg(LOG_INFO, FIELDS(LF_STR("dir", engine_options(a->e)->dir)), "drain file found");
		engine_tell(a->e, &(const struct decide_event){ .kind = DECIDE_EV_DRAIN_NOW,
								.reason = REASON_DRAIN_FILE });
		return;
	case PROTOCOL_APPS_DONE:
	case PROTOCOL_DONE:
		/* Left by an earlier run of the agent; later ones are our own. */
		if (!a->started) {
			a->found_apps_done |= file == PROTOCOL_APPS_DONE;
			a->found_done |= file == PROTOCOL_DONE;
		}
		return;
	default:
		return;
	}
}

/*
 * Watches --dir before anything else happens, so that nothing written
 * meanwhile is missed. Without it (no volume mounted, a read-only root file
 * system) the agent still works from /proc alone.
 *
 * First the reserve. The agent takes one pidfd per container root it
 * watches, and under a low RLIMIT_NOFILE they take every descriptor left:
 * the ready file then could not be written, ever, while the apps it gates
 * waited for it and so never exited to give one back. Taken now, after
 * the first scan and before the first pidfd, the reserve makes the
 * agent's files need nothing but what it holds from the start; the
 * processes it cannot have a pidfd for are polled. EMFILE here, for the
 * reserve or the protocol's own descriptors, means a limit below that
 * fixed part: the agent does not start (exit 2, the limit named), rather
 * than run without the protocol and leave the apps waiting for ready.
 */
static int open_protocol(struct engine *e)
{
	struct agent *a = engine_data(e);
	const char *dir = engine_options(e)->dir;
	int rc;

	a->e = e;
	rc = fd_reserve_take(&a->spare);
	if (rc < 0) {
		log_msg(LOG_ERROR, FIELDS(LF_STR("error", strerror(-rc))),
			"cannot hold a descriptor in reserve for the files to write: RLIMIT_NOFILE is too low "
			"(see docs/troubleshooting.md)");
		return rc;
	}
	rc = protocol_open(&a->protocol, engine_loop(e), dir, PROTOCOL_OPEN_AGENT, on_file, a, &a->spare);
	/* No pidfd is held yet: the limit is below what the agent holds from the start. */
	if (rc == -EMFILE) {
		log_msg(LOG_ERROR, FIELDS(LF_STR("dir", dir), LF_STR("error", strerror(-rc))),
			"cannot open the file protocol: RLIMIT_NOFILE is too low (see docs/troubleshooting.md)");
		return rc;
	}
	if (rc < 0) {
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", dir), LF_STR("error", strerror(-rc))),
			"file protocol unavailable (mount an emptyDir at --dir to use it): "
			"no ready file, exit-code reports, drain file or resume after a restart");
		return 0;
	}
	a->has_protocol = true;
	log_msg(LOG_DEBUG, FIELDS(LF_STR("dir", dir)), "watching the file protocol directory");
	return 0;
}

static void configure(struct engine *e, struct decide_config *dc)
{
	const struct agent_options *opt = engine_options(e);
	const struct agent *a = engine_data(e);

	/* The kubelet may still start a sidecar listed after the apps. */
	dc->sidecar_wait_us = opt->sidecar_wait_ms * US_PER_MS;
	dc->readiness = true;
	dc->protocol = a->has_protocol;
	/* Only the agent watches apps it could stop. */
	dc->on_sidecar_exit = opt->on_sidecar_exit;
}

/*
 * A previous run of the agent in this pod finished (it was restarted after
 * that, as under restartPolicy OnFailure): its summary goes to this run's
 * termination log too, where the kubelet looks for it. Read as it is found.
 */
static void read_done(struct agent *a, const char *dir)
{
	/* done is ours, whatever its size (a summary of many apps is long), but not without bound. */
	const size_t max = 1 << 20;
	char *buf = malloc(max);
	size_t len = 0;

	if (buf && read_small_at(a->protocol.dirfd, "done", O_NOFOLLOW | O_NONBLOCK, buf, max, &len) == 0 &&
	    len < max - 1) {
		a->done_text = buf;
		a->done_len = len > 0 && buf[len - 1] == '\n' ? len - 1 : len;
		return;
	}
	log_msg(LOG_WARN, FIELDS(LF_STR("dir", dir)), "cannot read done: the termination log stays empty");
	free(buf);
}

/*
 * A file of an earlier run that decide refused (under restartPolicy Always
 * a restarted agent is no deletion's, and the files are stale): removed,
 * so that the sidecars' preStop hooks, which return once done exists, hold
 * them again at the pod's deletion. Its failure is said, not fatal.
 */
static void remove_stale(struct agent *a, enum protocol_file file, const char *dir)
{
	const char *name = protocol_file_name(file);

	if (unlinkat(a->protocol.dirfd, name, 0) < 0 && errno != ENOENT)
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", dir), LF_STR("file", name), LF_STR("error", strerror(errno))),
			"cannot remove the earlier run's file");
}

/* An earlier run finished: its summary is all there is to pass on (unless decide refuses it). */
static bool resume(struct engine *e)
{
	struct agent *a = engine_data(e);
	const char *dir = engine_options(e)->dir;

	if (!a->found_done)
		return false;
	read_done(a, dir);
	if (engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_FOUND, .file = PROTOCOL_DONE }))
		return true;
	remove_stale(a, PROTOCOL_DONE, dir);
	free(a->done_text);
	a->done_text = NULL;
	return false;
}

static void start(struct engine *e)
{
	struct agent *a = engine_data(e);

	if (a->found_apps_done &&
	    !engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_FOUND, .file = PROTOCOL_APPS_DONE }))
		remove_stale(a, PROTOCOL_APPS_DONE, engine_options(e)->dir);
	/* What the directory held at start (a drain file, reports) was read before decide existed. */
	a->started = true;
	if (a->has_protocol)
		protocol_reread(&a->protocol);
}

/* ---- files we write ---------------------------------------------------- */

/* Writes a file of the protocol: name's content is text and a newline. */
static int write_file(struct agent *a, const char *name, const char *text, size_t len)
{
	char *data = malloc(len + 1);
	int rc;

	if (!data)
		return -ENOMEM;
	memcpy(data, text, len);
	data[len] = '\n';
	rc = protocol_write(&a->protocol, name, data, len + 1);
	free(data);
	return rc;
}

/* The ready file names the sidecars, one a line. */
static int write_ready(struct agent *a, const struct agent_options *opt)
{
	char text[1024] = "";
	size_t i, n = 0;
	int rc;

	for (i = 0; i < opt->nsidecars && n < sizeof(text); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", i ? "\n" : "", opt->sidecars[i].name);
	rc = write_file(a, protocol_file_name(PROTOCOL_READY), text, strlen(text));
	if (rc == 0)
		log_msg(LOG_INFO, FIELDS(LF_STR("dir", opt->dir)), "wrote the ready file");
	return rc;
}

static int write_protocol_file(struct engine *e, enum protocol_file file, enum decide_reason reason)
{
	struct agent *a = engine_data(e);
	const char *word = decide_reason_word(reason);
	const struct jbuf *j;

	switch (file) {
	case PROTOCOL_READY:
		return write_ready(a, engine_options(e));
	case PROTOCOL_APPS_DONE:
		return word ? write_file(a, protocol_file_name(file), word, strlen(word)) : -EINVAL;
	case PROTOCOL_DONE:
		j = engine_summary(e);
		return j->failed ? -ENOMEM : write_file(a, protocol_file_name(file), j->buf, j->len);
	case PROTOCOL_DRAIN:  /* not the agent's to write */
	case PROTOCOL_REPORT: /* the apps' */
	case PROTOCOL_NFILES:
		break;
	}
	return -EINVAL;
}

/* ---- the end ------------------------------------------------------------ */

static void write_termination_log(struct agent *a, const char *path, const char *text, size_t len)
{
	int fd = fd_reserve_openat(&a->spare, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY,
				   0644);

	if (fd < 0) {
		log_msg(LOG_DEBUG, FIELDS(LF_STR("path", path), LF_STR("error", strerror(-fd))),
			"termination log not writable: skipped");
		return;
	}
	(void)write_all(fd, text, len);
	fd_reserve_close(&a->spare, fd);
}

/*
 * The termination log: the summary (this run's, or the earlier one's), or
 * its short form when the kubelet would cut it.
 */
static void finish(struct engine *e, const struct decide_action *act, const struct jbuf *summary)
{
	struct agent *a = engine_data(e);
	const char *path = engine_options(e)->termination_log;
	const char *text = act->resumed ? a->done_text : summary ? summary->buf : NULL;
	size_t len = act->resumed ? a->done_len : summary ? summary->len : 0;
	struct jbuf t;

	if (!text || !path)
		return;
	jbuf_init(&t);
	summary_termination(&t, text, len, summary_budget(act->containers));
	if (!t.failed)
		write_termination_log(a, path, t.buf, t.len);
	jbuf_free(&t);
}

/* ---- signals -------------------------------------------------------------- */

static void on_signal(struct engine *e, int signo)
{
	if (signo == SIGHUP) {
		/* A look at what the agent sees, for whoever debugs a pod: decide has it made at once. */
		log_info("SIGHUP: rescanning the pod");
		engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_RESCAN_WANTED });
		engine_list(e);
		return;
	}
	log_msg(LOG_INFO, FIELDS(LF_STR("signal", signal_name(signo))), "signal received");
	engine_tell(e, &(const struct decide_event){ .kind = DECIDE_EV_TERMINATE });
}

static void close_protocol(struct engine *e)
{
	struct agent *a = engine_data(e);

	if (a->has_protocol)
		protocol_close(&a->protocol);
	a->has_protocol = false;
	fd_reserve_drop(&a->spare);
	free(a->done_text);
	a->done_text = NULL;
}

static const int agent_signals[] = { SIGTERM, SIGINT, SIGHUP };

static const struct engine_mode agent_mode = {
	.apps = true,
	.failed_status = 2,
	.signals = agent_signals,
	.nsignals = ARRAY_SIZE(agent_signals),
	.hello = hello,
	.first = first_run,
	.open = open_protocol,
	.configure = configure,
	.resume = resume,
	.start = start,
	.signal = on_signal,
	.write = write_protocol_file,
	.finish = finish,
	.close = close_protocol,
};

int agent_main(const struct agent_options *opt)
{
	struct agent a;

	memset(&a, 0, sizeof(a));
	a.spare.fd = -1;
	return engine_run(&agent_mode, opt, &a, NULL);
}
