#include "config.h"

#include "agent.h"

#include "decide.h"
#include "http.h"
#include "install.h"
#include "json.h"
#include "log.h"
#include "options.h"
#include "parse.h"
#include "pidwatch.h"
#include "podscan.h"
#include "proc.h"
#include "sentinel.h"
#include "summary.h"
#include "sys.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct agent;

enum agent_mode {
	MODE_AGENT, /* the companion container */
	MODE_DRAIN, /* rearguard drain: stop the sidecars now, once; no apps, no readiness */
};

struct sidecar_http;

/* One request slot of a sidecar. */
struct call {
	struct http_request r;
	struct sidecar_http *sh;
	enum decide_http_purpose purpose;
	const char *url;
};

/* The HTTP requests of one sidecar: readiness polls in one slot; drain, stop and probes in the other. */
struct sidecar_http {
	struct agent *a;
	size_t k;
	struct call ready, stop;
	bool advised; /* advice about its stop endpoint was logged */
};

/* The root of an app or sidecar container. */
struct root_watch {
	struct pidwatch pw;
	struct agent *a;
	unsigned id;
};

/* One process of a sidecar that is being stopped. */
struct proc_watch {
	struct pidwatch pw;
	struct agent *a;
	size_t sidecar;
};

/* What the agent has acted upon for one container (indexed by id - 1). */
struct tracked {
	bool known;
	enum pod_role role;
	struct root_watch *root;
};

/* The processes of one sidecar being stopped. */
struct stopping {
	struct proc_watch **w;
	size_t n, cap;
	size_t live;
};

#define OWN_PIDS_MAX 16

struct agent {
	struct ev_loop *loop;
	const struct agent_options *opt;
	enum agent_mode mode;
	struct podscan *ps;
	struct decide d;
	struct decide_sidecar_config *sc_cfg;
	struct http *http;
	struct sidecar_http *sc_http;
	ev_timer timer;
	ev_idle later;          /* active: apps-done is to be written, once the stops are out */
	unsigned scan_iter;     /* loop iteration of the last /proc scan, plus one */
	ev_signal sig_term, sig_int, sig_hup;
	struct tracked *tracked;
	size_t ntracked;
	struct stopping *stopping;
	/* Drain mode: this process and its ancestors, never to be waited for or signalled. */
	pid_t own[OWN_PIDS_MAX];
	size_t nown;
	struct sentinel files;  /* the file protocol in --dir (not in drain mode) */
	bool files_open;
	bool starting;          /* before the loop: what the directory held at start */
	bool found_apps_done, found_done;
	bool finished;
	int exit_code;
};

static void run_decisions(struct agent *a);

/* ---- the pod ----------------------------------------------------------- */

static enum podscan_match classify(void *arg, const char *name, int *sidecar)
{
	const struct agent *a = arg;
	const struct agent_options *opt = a->opt;
	size_t i;

	for (i = 0; i < opt->nsidecars; i++) {
		if (spec_matches(&opt->sidecars[i], name)) {
			*sidecar = (int)i;
			return MATCH_SIDECAR;
		}
	}
	/* A drain tracks no apps. */
	if (a->mode == MODE_DRAIN)
		return MATCH_NONE;
	if (!opt->app_src)
		return MATCH_APP;
	return regexec(&opt->app_re, name, 0, NULL, 0) == 0 ? MATCH_APP : MATCH_NONE;
}

static struct tracked *tracked_of(struct agent *a, unsigned id)
{
	if (id > a->ntracked) {
		size_t n = id + 16;
		struct tracked *t = realloc(a->tracked, n * sizeof(*t));

		if (!t)
			return NULL;
		memset(t + a->ntracked, 0, (n - a->ntracked) * sizeof(*t));
		a->tracked = t;
		a->ntracked = n;
	}
	return &a->tracked[id - 1];
}

static void log_container(const struct pod_container *c, const char *what, const struct agent_options *opt)
{
	const char *sidecar = c->role == ROLE_SIDECAR ? opt->sidecars[c->sidecar].name : NULL;

	log_msg(LOG_INFO,
		FIELDS(LF_INT("container", c->id), LF_STR("role", pod_role_name(c->role)), LF_STR("sidecar", sidecar),
		       LF_STR("name", c->name), LF_INT("pid", c->root), LF_INT("processes", c->nprocs),
		       LF_STR("cgroup", c->display)),
		"%s", what);
}

static void root_exited(struct ev_loop *loop, struct pidwatch *pw)
{
	struct root_watch *rw = (struct root_watch *)pw;
	struct agent *a = rw->a;
	struct pod_container *c = podscan_find(a->ps, rw->id);

	podscan_root_exited(a->ps, c);
	if (c->role == ROLE_APP) {
		log_msg(LOG_INFO, FIELDS(LF_INT("container", c->id), LF_STR("name", c->name), LF_INT("pid", c->root)),
			"app container exited");
		decide_app_exited(&a->d, c->id, pw->exited_us);
	} else if (c->role == ROLE_SIDECAR && a->d.phase < PHASE_DRAINING) {
		log_msg(LOG_WARN,
			FIELDS(LF_INT("container", c->id), LF_STR("sidecar", a->opt->sidecars[c->sidecar].name),
			       LF_INT("pid", c->root)),
			"sidecar container exited before the apps were done");
	}
	run_decisions(a);
}

static void root_status(struct ev_loop *loop, struct pidwatch *pw)
{
	struct root_watch *rw = (struct root_watch *)pw;
	struct agent *a = rw->a;
	struct pod_container *c = podscan_find(a->ps, rw->id);
	int code = pw->status_known ? wait_status_code(pw->status) : DECIDE_CODE_UNKNOWN;

	if (c->role != ROLE_APP)
		return;
	if (code >= 0)
		log_msg(LOG_INFO, FIELDS(LF_INT("container", c->id), LF_STR("name", c->name), LF_INT("exit_code", code)),
			"app exit code");
	decide_app_status(&a->d, c->id, code, mono_us());
	run_decisions(a);
}

static void watch_root(struct agent *a, struct tracked *t, struct pod_container *c)
{
	struct root_watch *rw;
	int rc;

	if (t->root || c->root_gone)
		return;
	rw = calloc(1, sizeof(*rw));
	if (!rw) {
		log_error("out of memory: container %u not watched", c->id);
		return;
	}
	rw->a = a;
	rw->id = c->id;
	rw->pw.on_exit = root_exited;
	rw->pw.on_status = root_status;
	rc = pidwatch_start(a->loop, &rw->pw, a->ps, c->root, c->root_start);
	if (rc < 0) {
		free(rw);
		/* It exited between the scan and now. */
		podscan_root_exited(a->ps, c);
		if (rc != -ESRCH)
			log_msg(LOG_WARN, FIELDS(LF_INT("pid", c->root)), "cannot watch container root: %s", strerror(-rc));
		return;
	}
	t->root = rw;
}

/*
 * The main process of every app container run by `rearguard run` has the
 * same name; the name it will report as (apps/NAME) tells them apart when
 * its report comes. Its command line may be gone already (it exited): then
 * the report is matched by the other rules.
 */
static void note_run_name(struct agent *a, const struct pod_container *c)
{
	char cmdline[4096], path[64], *argv[64], name[DECIDE_NAME_MAX];
	size_t n = 0, i;
	int argc = 0;

	/* The name it has in the image and where rearguard install puts it. */
	if (strcmp(c->name, INSTALL_NAME) != 0 || c->root <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)c->root);
	if (read_small_at(AT_FDCWD, path, 0, cmdline, sizeof(cmdline), &n) < 0)
		return;
	for (i = 0; i < n && argc < (int)ARRAY_SIZE(argv) - 1; i += strlen(cmdline + i) + 1)
		argv[argc++] = cmdline + i;
	argv[argc] = NULL;
	if (options_run_name(argc, argv, name, sizeof(name)) < 0)
		return;
	decide_app_reports_as(&a->d, c->id, name);
	log_msg(LOG_INFO, FIELDS(LF_INT("container", c->id), LF_STR("report", name)),
		"app container runs rearguard run: its report will be apps/NAME");
}

/* Tells decide what the last refresh found. */
static void sync_containers(struct agent *a, bool first)
{
	int64_t now = mono_us();
	unsigned pending = 0;
	size_t i;

	for (i = 0; i < podscan_count(a->ps); i++) {
		struct pod_container *c = podscan_container(a->ps, i);
		struct tracked *t;

		if (c->role == ROLE_PENDING)
			pending++;
		if (!c->is_new && !c->role_changed)
			continue;
		t = tracked_of(a, c->id);
		if (!t)
			continue;
		log_container(c, first ? "container" : c->is_new ? "container appeared" : "container role changed", a->opt);
		if (t->known && t->role == ROLE_APP && c->role != ROLE_APP)
			decide_app_forget(&a->d, c->id);
		t->known = true;
		t->role = c->role;
		if (c->role == ROLE_APP) {
			decide_app_seen(&a->d, c->id, c->name, now);
			note_run_name(a, c);
			watch_root(a, t, c);
			if (c->root_gone) {
				decide_app_exited(&a->d, c->id, now);
				decide_app_status(&a->d, c->id, DECIDE_CODE_UNKNOWN, now);
			}
		} else if (c->role == ROLE_SIDECAR) {
			decide_sidecar_seen(&a->d, (size_t)c->sidecar);
			watch_root(a, t, c);
		}
	}
	decide_pending(&a->d, pending);
}

static int rescan(struct agent *a)
{
	struct podscan_stats st;
	int rc = podscan_refresh(a->ps, &st);

	if (rc < 0) {
		log_error("cannot read /proc: %s", strerror(-rc));
		return rc;
	}
	a->scan_iter = ev_iteration(a->loop) + 1;
	log_msg(LOG_DEBUG,
		FIELDS(LF_INT("listed", st.listed), LF_INT("classified", st.classified),
		       LF_INT("cgroup_reads", st.cgroup_reads), LF_MS("elapsed", st.elapsed_us)),
		"rescanned /proc");
	sync_containers(a, false);
	return 0;
}

/* ---- stopping sidecars -------------------------------------------------- */

static void collect_sidecar(struct agent *a, size_t k);

static void sidecar_proc_exited(struct ev_loop *loop, struct pidwatch *pw)
{
	struct proc_watch *w = (struct proc_watch *)pw;
	struct agent *a = w->a;
	struct stopping *st = &a->stopping[w->sidecar];

	pidwatch_stop(loop, pw);
	log_msg(LOG_DEBUG, FIELDS(LF_STR("sidecar", a->opt->sidecars[w->sidecar].name), LF_INT("pid", pw->pid)),
		"sidecar process exited");
	if (--st->live > 0)
		return;
	/* Each watched process is gone; make sure nothing new was forked meanwhile. */
	rescan(a);
	collect_sidecar(a, w->sidecar);
	if (st->live == 0) {
		decide_sidecar_gone(&a->d, w->sidecar, pw->exited_us);
		run_decisions(a);
	}
}

static bool already_watched(const struct stopping *st, pid_t pid, uint64_t start)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		if (st->w[i]->pw.pid == pid && st->w[i]->pw.start == start)
			return true;
	return false;
}

static void watch_proc(struct agent *a, size_t k, pid_t pid, uint64_t start)
{
	struct stopping *st = &a->stopping[k];
	struct proc_watch *w;

	if (already_watched(st, pid, start))
		return;
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 8;
		struct proc_watch **grown = realloc(st->w, cap * sizeof(*grown));

		if (!grown)
			return;
		st->w = grown;
		st->cap = cap;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return;
	w->a = a;
	w->sidecar = k;
	w->pw.on_exit = sidecar_proc_exited;
	if (pidwatch_start(a->loop, &w->pw, a->ps, pid, start) < 0) {
		free(w);
		return;
	}
	st->w[st->n++] = w;
	st->live++;
}

static bool own_pid(const struct agent *a, pid_t pid)
{
	size_t i;

	for (i = 0; i < a->nown; i++)
		if (a->own[i] == pid)
			return true;
	return false;
}

/* Whether c holds processes of sidecar k: its own container, or (drain) the one we run in. */
static bool holds_sidecar(const struct agent *a, const struct pod_container *c, size_t k)
{
	if (c->sidecar < 0 || (size_t)c->sidecar != k)
		return false;
	/* A preStop hook runs rearguard drain inside the sidecar's own container. */
	return c->role == ROLE_SIDECAR || (a->mode == MODE_DRAIN && c->role == ROLE_SELF);
}

/* Watches every live process of sidecar k's containers not watched yet. */
static void collect_sidecar(struct agent *a, size_t k)
{
	size_t i, j;

	for (i = 0; i < podscan_count(a->ps); i++) {
		struct pod_container *c = podscan_container(a->ps, i);
		size_t n = holds_sidecar(a, c, k) ? c->nprocs : 0;
		pid_t *pids;
		uint64_t *starts;

		if (n == 0)
			continue;
		pids = calloc(n, sizeof(*pids));
		starts = calloc(n, sizeof(*starts));
		if (pids && starts) {
			n = podscan_procs(a->ps, c, pids, starts, n);
			for (j = 0; j < n && j < c->nprocs; j++)
				if (!own_pid(a, pids[j]))
					watch_proc(a, k, pids[j], starts[j]);
		}
		free(pids);
		free(starts);
	}
}

static void stop_watch(struct agent *a, size_t k)
{
	/*
	 * A scan in this same loop iteration (the confirming rescan, a drain's
	 * first scan, the previous sidecar's) is current: no second read of /proc.
	 */
	if (a->scan_iter != ev_iteration(a->loop) + 1)
		rescan(a);
	collect_sidecar(a, k);
	log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", a->opt->sidecars[k].name), LF_INT("processes", a->stopping[k].live)),
		"stopping sidecar");
	if (a->stopping[k].live == 0)
		decide_sidecar_gone(&a->d, k, mono_us());
}

static int signal_sidecar(struct agent *a, size_t k, int sig)
{
	struct stopping *st = &a->stopping[k];
	unsigned sent = 0;
	size_t i;
	int err = 0;

	for (i = 0; i < st->n; i++) {
		int rc;

		if (st->w[i]->pw.exited)
			continue;
		rc = pidwatch_kill(&st->w[i]->pw, sig);
		if (rc == 0)
			sent++;
		else if (rc != -ESRCH && (err == 0 || rc == -EPERM))
			err = rc;
	}
	log_msg(err ? LOG_WARN : LOG_INFO,
		FIELDS(LF_STR("sidecar", a->opt->sidecars[k].name), LF_INT("processes", sent),
		       LF_STR("error", err ? strerror(-err) : NULL)),
		"sent SIG%s", signal_name(sig));
	return err;
}

/* ---- talking to the sidecars --------------------------------------------- */

/* What each purpose is on the wire, and in the log. */
static const struct {
	const char *method;
	enum http_method m;
} purposes[] = {
	[DECIDE_HTTP_READY] = { "GET", HTTP_GET },
	[DECIDE_HTTP_DRAIN] = { "POST", HTTP_POST },
	[DECIDE_HTTP_STOP] = { "POST", HTTP_POST },
	[DECIDE_HTTP_GONE] = { "connect to", HTTP_CONNECT },
};

/* The first line of a body, cut short, for a log field. */
static const char *first_line(const char *body, char out[160])
{
	size_t n = strcspn(body, "\r\n");

	if (n >= 160)
		n = 159;
	memcpy(out, body, n);
	out[n] = '\0';
	return out;
}

/* Polls and probes are routine; drain and stop answers other than 2xx are worth reading. */
static void log_answer(const struct sidecar_spec *spec, const struct call *c)
{
	const struct http_request *r = &c->r;
	bool routine = c->purpose == DECIDE_HTTP_READY || c->purpose == DECIDE_HTTP_GONE ||
		       (r->err == 0 && r->status < 300);
	char line[160];

	log_msg(routine ? LOG_DEBUG : LOG_INFO,
		FIELDS(LF_STR("sidecar", spec->name), LF_INT("status", r->status),
		       LF_STR("error", r->err ? r->error : NULL),
		       LF_STR("body", r->body_len ? first_line(r->body, line) : NULL), LF_MS("elapsed", r->elapsed_us)),
		"%s %s: %s", purposes[c->purpose].method, c->url, r->err ? "no answer" : "answered");
}

static void http_done(struct http_request *r)
{
	struct call *c = r->data;
	struct sidecar_http *sh = c->sh;
	struct agent *a = sh->a;
	const struct sidecar_spec *spec = &a->opt->sidecars[sh->k];
	int result = r->err ? r->err : (int)r->status;
	const char *advice;

	log_answer(spec, c);
	if (c->purpose == DECIDE_HTTP_STOP && !sh->advised && (advice = spec_stop_advice(spec, result, r->body))) {
		sh->advised = true;
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", spec->name)), "%s", advice);
	}
	decide_http_result(&a->d, sh->k, c->purpose, result, mono_us());
	run_decisions(a);
}

static void start_request(struct agent *a, const struct decide_action *act)
{
	struct sidecar_http *sh = &a->sc_http[act->sidecar];
	struct call *c = act->purpose == DECIDE_HTTP_READY ? &sh->ready : &sh->stop;
	int rc;

	c->sh = sh;
	c->purpose = act->purpose;
	c->url = act->url;
	c->r.done = http_done;
	c->r.data = c;
	log_msg(LOG_DEBUG, FIELDS(LF_STR("sidecar", a->opt->sidecars[act->sidecar].name)), "%s %s",
		purposes[act->purpose].method, act->url);
	rc = http_start(a->http, &c->r, purposes[act->purpose].m, act->url, act->connect_timeout_us, act->timeout_us);
	if (rc < 0) {
		log_msg(LOG_ERROR, FIELDS(LF_STR("url", act->url), LF_STR("error", strerror(-rc))),
			"cannot start an HTTP request");
		decide_http_result(&a->d, act->sidecar, act->purpose, rc, mono_us());
	}
}

/* ---- files we write ---------------------------------------------------- */

static void write_termination_log(struct agent *a, const char *text, size_t len)
{
	/* A drain has none: the termination message belongs to the container it runs in. */
	int fd = a->opt->termination_log
			 ? open(a->opt->termination_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644)
			 : -1;

	if (fd >= 0) {
		(void)write_all(fd, text, len);
		close(fd);
	} else if (a->opt->termination_log) {
		log_msg(LOG_DEBUG, FIELDS(LF_STR("path", a->opt->termination_log), LF_STR("error", strerror(errno))),
			"termination log not writable: skipped");
	}
}

/*
 * Writes a file of the protocol (ready, apps-done, done): name's content is
 * text and a newline. Without the file protocol (already logged) there is
 * nothing to write to.
 */
static int write_file(struct agent *a, const char *name, const char *text, size_t len)
{
	char *data;
	int rc;

	if (!a->files_open)
		return -ENOENT;
	data = malloc(len + 1);
	if (!data) {
		log_msg(LOG_WARN, FIELDS(LF_STR("file", name)), "out of memory: file not written");
		return -ENOMEM;
	}
	memcpy(data, text, len);
	data[len] = '\n';
	rc = sentinel_write(&a->files, name, data, len + 1);
	free(data);
	if (rc < 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("file", name), LF_STR("dir", a->opt->dir), LF_STR("error", strerror(-rc))),
			"cannot write the file");
	return rc;
}

/* The ready file: every sidecar is ready. It names them, one a line. */
static void write_ready(struct agent *a)
{
	const struct agent_options *opt = a->opt;
	char text[1024] = "";
	size_t i, n = 0;

	for (i = 0; i < opt->nsidecars && n < sizeof(text); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", i ? "\n" : "", opt->sidecars[i].name);
	if (write_file(a, "ready", text, strlen(text)) == 0)
		log_msg(LOG_INFO, FIELDS(LF_STR("dir", opt->dir)), "wrote the ready file");
}

/* ---- the end ------------------------------------------------------------ */

static void write_apps_done(struct agent *a)
{
	if (!ev_is_active(&a->later))
		return;
	ev_idle_stop(a->loop, &a->later);
	write_file(a, "apps-done", a->d.reason, strlen(a->d.reason));
}

static void on_later(struct ev_loop *loop, ev_idle *w, int revents)
{
	write_apps_done(w->data);
}

static void finish(struct agent *a, int code)
{
	struct jbuf j;

	write_apps_done(a);
	jbuf_init(&j);
	summary_build(&j, &a->d, a->opt, mono_us());
	write_termination_log(a, j.buf, j.len);
	if (!j.failed)
		write_file(a, "done", j.buf, j.len);
	log_msg(LOG_INFO, FIELDS(LF_INT("exit_code", code), LF_JSON("summary", j.failed ? "null" : j.buf)), "finished");
	jbuf_free(&j);
	a->finished = true;
	a->exit_code = code;
	ev_break(a->loop, EVBREAK_ALL);
}

static void carry_out(struct agent *a, const struct decide_action *act)
{
	switch (act->kind) {
	case DECIDE_RESCAN:
		rescan(a);
		decide_rescanned(&a->d, mono_us());
		break;
	case DECIDE_APPS_DONE:
		/*
		 * For sidecars' preStop hooks (rearguard wait apps-done), and for an
		 * agent restarted later. Written when the loop is idle next: the
		 * stop signals and requests that follow go out first.
		 */
		if (a->files_open)
			ev_idle_start(a->loop, &a->later);
		break;
	case DECIDE_WATCH:
		stop_watch(a, act->sidecar);
		break;
	case DECIDE_SIGNAL:
		decide_signal_result(&a->d, act->sidecar, signal_sidecar(a, act->sidecar, act->signo), mono_us());
		break;
	case DECIDE_HTTP:
		start_request(a, act);
		break;
	case DECIDE_WRITE_READY:
		write_ready(a);
		break;
	case DECIDE_EXIT:
		finish(a, act->exit_code);
		break;
	}
}

static void arm_timer(struct agent *a)
{
	int64_t deadline = decide_deadline(&a->d, mono_us()), delay;

	ev_timer_stop(a->loop, &a->timer);
	if (a->finished || deadline == INT64_MAX)
		return;
	/* libev measures from its cached loop time: bring it up to date first. */
	ev_now_update(a->loop);
	delay = deadline - mono_us();
	ev_timer_set(&a->timer, delay > 0 ? (double)delay / US_PER_S : 0., 0.);
	ev_timer_start(a->loop, &a->timer);
}

static void run_decisions(struct agent *a)
{
	struct decide_action act;

	while (!a->finished && decide_next(&a->d, mono_us(), &act))
		carry_out(a, &act);
	arm_timer(a);
}

static void on_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
	run_decisions(t->data);
}

static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
	struct agent *a = s->data;
	size_t i;

	if (s->signum == SIGHUP) {
		/* A look at what the agent sees, for whoever debugs a pod. */
		rescan(a);
		for (i = 0; i < podscan_count(a->ps); i++)
			log_container(podscan_container(a->ps, i), "container", a->opt);
		return;
	}
	log_msg(LOG_INFO, FIELDS(LF_STR("signal", signal_name(s->signum))), "signal received");
	decide_terminate(&a->d, mono_us());
	run_decisions(a);
}

/* ---- the file protocol ------------------------------------------------- */

static void on_file(struct sentinel *s, enum sentinel_what what, const char *name, int code)
{
	struct agent *a = s->data;
	int64_t now = mono_us();

	switch (what) {
	case SENTINEL_REPORT:
		decide_app_report(&a->d, name, code, now);
		break;
	case SENTINEL_DRAIN:
		if (decide_drain_now(&a->d, "drain-file", now))
			log_msg(LOG_INFO, FIELDS(LF_STR("dir", a->opt->dir)), "drain file found: draining now");
		break;
	case SENTINEL_APPS_DONE:
	case SENTINEL_DONE:
		/* Left by an earlier run of the agent; later ones are our own. */
		if (a->starting) {
			a->found_apps_done |= what == SENTINEL_APPS_DONE;
			a->found_done |= what == SENTINEL_DONE;
		}
		return;
	default:
		return;
	}
	if (!a->starting)
		run_decisions(a);
}

/*
 * Watches --dir before anything else happens, so that nothing written
 * meanwhile is missed. Without it (no volume mounted, a read-only root file
 * system) the agent still works from /proc alone.
 */
static void open_files(struct agent *a)
{
	int rc = sentinel_open(&a->files, a->loop, a->opt->dir, SENTINEL_AGENT, on_file, a);

	if (rc < 0) {
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", a->opt->dir), LF_STR("error", strerror(-rc))),
			"file protocol unavailable (mount an emptyDir at --dir to use it): "
			"no ready file, exit-code reports, drain file or resume after a restart");
		return;
	}
	a->files_open = true;
	log_msg(LOG_DEBUG, FIELDS(LF_STR("dir", a->opt->dir)), "watching the file protocol directory");
}

/*
 * A previous run of the agent in this pod finished (it was restarted after
 * that, as under restartPolicy OnFailure): its summary goes to this run's
 * termination log too, where the kubelet looks for it.
 */
static void resume_done(struct agent *a)
{
	char buf[SENTINEL_READ_MAX + 1];
	size_t len = 0;

	if (read_small_at(a->files.dirfd, "done", O_NOFOLLOW | O_NONBLOCK, buf, sizeof(buf), &len) == 0 &&
	    len < SENTINEL_READ_MAX)
		write_termination_log(a, buf, len > 0 && buf[len - 1] == '\n' ? len - 1 : len);
	log_msg(LOG_INFO, FIELDS(LF_STR("dir", a->opt->dir)),
		"done found: an earlier run of rearguard finished the drain; exiting");
}

/* ---- start-up ----------------------------------------------------------- */

/* -ENXIO: the pod's other containers are not visible (no shared PID namespace). */
static int first_scan(struct agent *a)
{
	struct podscan_config pc = {
		.proc_path = "/proc", .self_pid = getpid(), .classify = classify, .arg = a,
	};
	struct podscan_stats st;
	bool self_seen = false;
	size_t i;
	int rc;

	rc = podscan_new(&pc, &a->ps);
	if (rc == 0)
		rc = podscan_refresh(a->ps, &st);
	if (rc < 0) {
		log_error("cannot read /proc: %s", strerror(-rc));
		return rc;
	}
	a->scan_iter = ev_iteration(a->loop) + 1;
	for (i = 0; i < podscan_count(a->ps); i++)
		self_seen |= podscan_container(a->ps, i)->role == ROLE_SELF;
	if (!self_seen)
		return -ENXIO;
	if (podscan_flat(a->ps))
		log_warn("every process shows the same cgroup: telling containers apart by process tree "
			 "(exec sessions will look like containers)");
	log_msg(LOG_INFO,
		FIELDS(LF_INT("containers", podscan_count(a->ps)), LF_INT("processes", st.listed),
		       LF_MS("scan", st.elapsed_us), LF_STR("pidfd", pidwatch_uses_pidfd() ? "yes" : "no")),
		"pod scanned");
	return 0;
}

/* This process and its ancestors up to its container's root (a preStop hook may be sh -c ...). */
static void find_own_pids(struct agent *a)
{
	pid_t pid = getpid();

	while (pid > 1 && a->nown < OWN_PIDS_MAX) {
		char path[64], buf[1024];
		struct proc_stat st;
		size_t len;

		a->own[a->nown++] = pid;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if (read_small_at(AT_FDCWD, path, 0, buf, sizeof(buf), &len) < 0 || proc_parse_stat(buf, len, &st) < 0)
			break;
		pid = st.ppid;
	}
}

/* The HTTP side of sidecar k's configuration; whether it has any URL. */
static bool configure_http(struct agent *a, size_t k)
{
	const struct sidecar_spec *spec = &a->opt->sidecars[k];
	struct decide_sidecar_config *c = &a->sc_cfg[k];
	const char *warning = spec_warning(spec);

	/* An HTTP stop has no stop signal: SIGTERM is then the escalation, not a repeat. */
	if (spec->stop_url)
		c->stop_signal = 0;
	c->stop_url = spec->stop_url;
	c->ready_url = spec->ready_url;
	c->drain_url = spec->drain_url;
	c->drain_time_us = spec->drain_time_ms * US_PER_MS;
	a->sc_http[k].a = a;
	a->sc_http[k].k = k;
	if (warning)
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", spec->name)), "%s", warning);
	return spec->stop_url || spec->ready_url || spec->drain_url;
}

/*
 * The agent, or (drain) the same machinery told to drain at once: no apps,
 * no readiness, no signal handlers, and a pod it may not be able to see.
 */
static int run(const struct agent_options *opt, enum agent_mode mode)
{
	struct agent a;
	bool any_url = false;
	size_t i;
	int rc;

	memset(&a, 0, sizeof(a));
	a.opt = opt;
	a.mode = mode;
	a.exit_code = 2;
	signal(SIGPIPE, SIG_IGN);
	if (mode == MODE_DRAIN)
		log_msg(LOG_INFO, FIELDS(LF_INT("sidecars", opt->nsidecars)), "rearguard %s draining", PACKAGE_VERSION);
	else
		log_msg(LOG_INFO,
			FIELDS(LF_INT("sidecars", opt->nsidecars), LF_STR("restart_policy",
			       opt->policy == POLICY_NEVER ? "Never" : "OnFailure"), LF_INT("apps", opt->apps)),
			"rearguard %s starting", PACKAGE_VERSION);

	a.loop = ev_default_loop(EVFLAG_AUTO);
	a.sc_cfg = calloc(opt->nsidecars, sizeof(*a.sc_cfg));
	a.stopping = calloc(opt->nsidecars, sizeof(*a.stopping));
	a.sc_http = calloc(opt->nsidecars, sizeof(*a.sc_http));
	if (!a.loop || !a.sc_cfg || !a.stopping || !a.sc_http || http_new(a.loop, &a.http) < 0) {
		log_error("cannot start the event loop");
		goto out;
	}
	for (i = 0; i < opt->nsidecars; i++) {
		str_copy(a.sc_cfg[i].name, opt->sidecars[i].name, sizeof(a.sc_cfg[i].name));
		a.sc_cfg[i].stop_signal = opt->sidecars[i].stop_signal;
		any_url |= configure_http(&a, i);
	}
	{
		struct decide_config dc = {
			.policy = opt->policy,
			.apps_expected = (unsigned)opt->apps,
			.startup_timeout_us = opt->startup_timeout_ms * US_PER_MS,
			.restart_grace_us = opt->restart_grace_ms * US_PER_MS,
			.term_grace_us = opt->term_grace_ms * US_PER_MS,
			.stop_timeout_us = opt->stop_timeout_ms * US_PER_MS,
			.kill_after_us = opt->kill_after_ms * US_PER_MS,
			.readiness = mode == MODE_AGENT,
			.ready_timeout_us = opt->ready_timeout_ms * US_PER_MS,
			.nsidecars = opt->nsidecars,
			.sidecars = a.sc_cfg,
		};

		if (decide_init(&a.d, &dc, mono_us()) < 0) {
			log_error("out of memory");
			goto out;
		}
	}
	if (mode == MODE_DRAIN)
		find_own_pids(&a);
	rc = first_scan(&a);
	if (rc == -ENXIO && mode == MODE_DRAIN) {
		log_warn("cannot see the pod's other containers (no shared PID namespace): a sidecar counts as "
			 "stopped once its stop URL answered 2xx and it no longer accepts connections");
		decide_blind(&a.d);
	} else if (rc == -ENXIO) {
		log_error("cannot see the pod's other containers: PID 1 is in rearguard's own container "
			  "(set shareProcessNamespace: true in the pod spec)");
		goto out;
	} else if (rc < 0) {
		goto out;
	}
	/* After the pod check: a pod the agent cannot work in leaves nothing in --dir. */
	a.starting = true;
	if (mode == MODE_AGENT)
		open_files(&a);
	if (a.found_done) {
		resume_done(&a);
		a.exit_code = 0;
		goto out;
	}
	if (a.found_apps_done) {
		log_msg(LOG_INFO, FIELDS(LF_STR("dir", opt->dir)),
			"apps-done found: an earlier run of rearguard had decided the apps are done; draining now");
		decide_drain_now(&a.d, "resume", mono_us());
	}
	sync_containers(&a, true);
	/* Reports found in the directory can be matched now that the pod is known. */
	decide_rescanned(&a.d, mono_us());
	a.starting = false;
	/* libcurl's set-up takes milliseconds: after the first scan, not before a stop request. */
	if (any_url && http_prepare(a.http) < 0)
		log_warn("cannot set up libcurl yet: trying again at the first request");

	ev_init(&a.timer, on_timer);
	a.timer.data = &a;
	ev_idle_init(&a.later, on_later);
	a.later.data = &a;
	if (mode == MODE_AGENT) {
		ev_signal_init(&a.sig_term, on_signal, SIGTERM);
		ev_signal_init(&a.sig_int, on_signal, SIGINT);
		ev_signal_init(&a.sig_hup, on_signal, SIGHUP);
		a.sig_term.data = a.sig_int.data = a.sig_hup.data = &a;
		ev_signal_start(a.loop, &a.sig_term);
		ev_signal_start(a.loop, &a.sig_int);
		ev_signal_start(a.loop, &a.sig_hup);
	} else {
		/* No signal watchers: interrupting a drain by hand ends it. */
		decide_drain_now(&a.d, "drain-command", mono_us());
	}

	run_decisions(&a);
	if (!a.finished)
		ev_run(a.loop, 0);
	rc = a.finished ? a.exit_code : 1;
	a.exit_code = rc;
out:
	if (a.loop)
		ev_idle_stop(a.loop, &a.later);
	http_free(a.http);
	for (i = 0; i < a.ntracked; i++) {
		if (a.tracked[i].root) {
			pidwatch_stop(a.loop, &a.tracked[i].root->pw);
			free(a.tracked[i].root);
		}
	}
	free(a.tracked);
	for (i = 0; a.stopping && i < opt->nsidecars; i++) {
		size_t j;

		for (j = 0; j < a.stopping[i].n; j++) {
			pidwatch_stop(a.loop, &a.stopping[i].w[j]->pw);
			free(a.stopping[i].w[j]);
		}
		free(a.stopping[i].w);
	}
	free(a.stopping);
	free(a.sc_http);
	if (a.files_open)
		sentinel_close(&a.files);
	free(a.sc_cfg);
	decide_free(&a.d);
	podscan_free(a.ps);
	if (a.loop)
		ev_loop_destroy(a.loop);
	return a.exit_code;
}

int agent_run(const struct agent_options *opt)
{
	return run(opt, MODE_AGENT);
}

int agent_drain(const struct agent_options *opt)
{
	return run(opt, MODE_DRAIN);
}
