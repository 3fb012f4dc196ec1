#include "config.h"

#include "stopper.h"

#include "argv.h"
#include "log.h"
#include "options.h"
#include "podscan.h"
#include "protocol.h"
#include "spec.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A process of the sidecar, watched. */
struct stopper_proc {
	struct pidwatch pw;
	struct stopper *st;
};

void stopper_init(struct stopper *st, const struct stopper_config *cfg)
{
	memset(st, 0, sizeof(*st));
	st->cfg = *cfg;
}

static void on_request_done(struct http_request *r);

static int init_request(struct stopper *st, struct http_request *r, enum http_method method, const char *url,
			const struct url *parts, char *err, size_t errlen)
{
	r->done = on_request_done;
	r->data = st;
	return url ? http_request_init(st->cfg.http, r, method, url, parts, err, errlen) : 0;
}

static struct http_request *request_of(struct stopper *st, enum decide_http_purpose purpose)
{
	switch (purpose) {
	case DECIDE_HTTP_READY: return &st->ready;
	case DECIDE_HTTP_DRAIN: return &st->drain;
	case DECIDE_HTTP_STOP: return &st->stop;
	case DECIDE_HTTP_GONE: return &st->gone;
	case DECIDE_HTTP_CHECK: return &st->check;
	}
	return NULL;
}

static enum decide_http_purpose purpose_of(const struct stopper *st, const struct http_request *r)
{
	return r == &st->ready ? DECIDE_HTTP_READY
	       : r == &st->drain ? DECIDE_HTTP_DRAIN
	       : r == &st->stop  ? DECIDE_HTTP_STOP
	       : r == &st->check ? DECIDE_HTTP_CHECK
				 : DECIDE_HTTP_GONE;
}

/* Builds one request, touching no other (one may be in flight); without its URL, none is built. */
static int build(struct stopper *st, enum decide_http_purpose purpose, char *err, size_t errlen)
{
	const struct sidecar_spec *spec = st->cfg.spec;
	struct http_request *r = request_of(st, purpose);

	switch (purpose) {
	case DECIDE_HTTP_READY:
		return init_request(st, r, HTTP_GET, spec->ready_url, &spec->ready_at, err, errlen);
	case DECIDE_HTTP_DRAIN:
		return init_request(st, r, HTTP_POST, spec->drain_url, &spec->drain_at, err, errlen);
	case DECIDE_HTTP_STOP:
		return init_request(st, r, HTTP_POST, spec->stop_url, &spec->stop_at, err, errlen);
	case DECIDE_HTTP_GONE:
		/* Its URL is the one decide names (stopper_request). */
		return failf(err, errlen, -EINVAL, "the gone probe has no URL of its own");
	case DECIDE_HTTP_CHECK:
		/* Whether the stop endpoint listens (pre-flight): a connect, no request. */
		return init_request(st, r, HTTP_CONNECT, spec->stop_url, &spec->stop_at, err, errlen);
	}
	return -EINVAL;
}

/*
 * The gone probe: a connect to the URL decide names, one of the sidecar's
 * own (parsed once, with its spec). decide chooses the door to watch, for
 * it is decide that reads the answer (refused: gone); the stopper only
 * connects. Built at its first use, and again if decide names another door:
 * it never goes first, for it follows an accepted stop.
 */
static int build_gone(struct stopper *st, const char *url, char *err, size_t errlen)
{
	const struct sidecar_spec *spec = st->cfg.spec;
	const struct url *parts = NULL;
	int rc;

	if (url && spec->ready_url && strcmp(url, spec->ready_url) == 0)
		parts = &spec->ready_at;
	else if (url && spec->stop_url && strcmp(url, spec->stop_url) == 0)
		parts = &spec->stop_at;
	if (!parts)
		return failf(err, errlen, -EINVAL, "the gone probe's URL is none of the sidecar's");
	if (http_request_built(&st->gone) && st->gone_url && strcmp(st->gone_url, url) == 0)
		return 0;
	st->gone_url = NULL;
	rc = init_request(st, &st->gone, HTTP_CONNECT, url, parts, err, errlen);
	if (rc == 0)
		st->gone_url = url;
	return rc;
}

int stopper_prepare(struct stopper *st, char *err, size_t errlen)
{
	static const enum decide_http_purpose ahead[] = { DECIDE_HTTP_DRAIN, DECIDE_HTTP_STOP, DECIDE_HTTP_CHECK };
	size_t i;
	int rc = 0;

	for (i = 0; i < ARRAY_SIZE(ahead) && rc == 0; i++)
		if (!http_request_built(request_of(st, ahead[i])))
			rc = build(st, ahead[i], err, errlen);
	return rc;
}

int stopper_request(struct stopper *st, enum decide_http_purpose purpose, const char *url,
		    int64_t connect_timeout_us, int64_t timeout_us, char *err, size_t errlen)
{
	struct http_request *r = request_of(st, purpose);
	int rc;

	if (!r)
		return failf(err, errlen, -EINVAL, "no such request");
	if (purpose == DECIDE_HTTP_GONE) {
		rc = build_gone(st, url, err, errlen);
		if (rc < 0)
			return rc;
	}
	/* The readiness poll is built at its first use; the others ahead of time, else now. */
	if (!http_request_built(r)) {
		rc = build(st, purpose, err, errlen);
		if (rc < 0)
			return rc;
	}
	return http_request_start(r, connect_timeout_us, timeout_us, err, errlen);
}

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

static void on_request_done(struct http_request *r)
{
	struct stopper *st = r->data;
	const struct sidecar_spec *spec = st->cfg.spec;
	enum decide_http_purpose purpose = purpose_of(st, r);
	int result = r->err ? r->err : (int)r->status;
	const char *advice;
	char line[160];

	/* Probes are routine; drain and stop answers other than 2xx are worth reading. */
	if (purpose == DECIDE_HTTP_DRAIN || purpose == DECIDE_HTTP_STOP)
		log_msg(r->err || r->status < 200 || r->status >= 300 ? LOG_WARN : LOG_DEBUG,
			FIELDS(LF_STR("sidecar", spec->name), LF_STR("url", purpose == DECIDE_HTTP_STOP ? spec->stop_url
										       : spec->drain_url),
			       LF_INT("status", r->status), LF_STR("body", r->body_len ? first_line(r->body, line) : NULL),
			       LF_STR("error", r->err ? r->error : NULL), LF_DURATION("elapsed", r->elapsed_us)),
			"%s request finished", purpose == DECIDE_HTTP_STOP ? "stop" : "drain");
	if ((purpose == DECIDE_HTTP_STOP || purpose == DECIDE_HTTP_CHECK) && !st->advised &&
	    (advice = spec_stop_advice(spec, result, r->body))) {
		st->advised = true;
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", spec->name)), "%s", advice);
	}
	st->cfg.on_event(st->cfg.data, &(const struct decide_event){ .kind = DECIDE_EV_HTTP_RESULT,
								      .sidecar = st->cfg.index,
								      .purpose = purpose,
								      .result = result });
}

/* ---- pre-flight ----------------------------------------------------------- */

static void on_finding(void *data, enum preflight_kind kind, const char *message)
{
	struct stopper *st = data;

	if (st->said[kind])
		return;
	st->said[kind] = true;
	log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", st->cfg.spec->name)), "pre-flight: %s", message);
	/* A stop endpoint known to be missing is said once: not again when it refuses, nor by the stop's answer. */
	if (kind == PREFLIGHT_NO_ENDPOINT) {
		st->advised = true;
		st->cfg.on_event(st->cfg.data, &(const struct decide_event){ .kind = DECIDE_EV_NO_ENDPOINT,
									      .sidecar = st->cfg.index });
	}
}

/* The container runs rearguard sidecar: its name is kept, so that its stop goes through the volume. */
static int note_wrapped(struct stopper *st, const struct podscan_container *c, size_t argc, char **argv,
			int *program)
{
	struct stopper_wrapped *w;
	char name[sizeof(w->name)];

	if (!st->cfg.dir || !st->cfg.sidecar_name ||
	    st->cfg.sidecar_name((int)argc, argv, name, sizeof(name), program) < 0)
		return -EINVAL;
	if (st->nwrapped == STOPPER_WRAPPED_MAX)
		return -ENOSPC;
	w = &st->wrapped[st->nwrapped++];
	w->pid = c->root;
	w->start = c->root_start;
	str_copy(w->name, name, sizeof(w->name));
	log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", st->cfg.spec->name), LF_INT("pid", c->root), LF_STR("name", name)),
		"pre-flight: the sidecar runs under rearguard sidecar: its stop goes to %s/%s/%s%s, and its container "
		"exits 0 when its program ends of it",
		st->cfg.dir, PROTOCOL_SIDECARS, name, PROTOCOL_STOP_SUFFIX);
	return 0;
}

void stopper_check(struct stopper *st, const struct podscan_container *c)
{
	struct preflight_facts f = {
		.name = c->name,
		.nprocs = c->nprocs,
		.my_ruid = getuid(),
		.my_euid = geteuid(),
		.can_kill = st->cfg.can_kill,
	};
	char cmdline[4096], *argv[64];
	size_t n = 0;
	int rc, program;

	f.argc = 0;
	rc = podscan_cmdline(st->cfg.ps, c->root, c->root_start, cmdline, sizeof(cmdline), &n);
	if (rc == 0) {
		f.argc = argv_split(cmdline, n, argv, ARRAY_SIZE(argv));
		f.argv = (const char *const *)argv;
	} else if (rc == -EPERM) {
		/*
		 * It appeared after the apps were done (an awaited sidecar): its stop
		 * is near, and must not wait on a process stuck in the kernel. The
		 * checks of its flags are left out; the stop's answer, if it refuses,
		 * gets its advice all the same.
		 */
		log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", st->cfg.spec->name), LF_INT("pid", c->root)),
			"pre-flight: the command line is not read once the drain has begun: its flags are not checked");
	}
	/* Under rearguard sidecar, the flags to check are its program's. */
	if (f.argv && note_wrapped(st, c, f.argc, argv, &program) == 0) {
		f.wrapped = true;
		f.argv += program;
		f.argc -= (size_t)program;
		f.name = base_name(f.argv[0]);
	}
	f.uids_known = podscan_uids(st->cfg.ps, c->root, c->root_start, &f.ruid, &f.suid) == 0;
	f.handles_stop = podscan_catches(st->cfg.ps, c->root, c->root_start, st->cfg.spec->stop_signal) == 1;
	preflight_sidecar(st->cfg.spec, &f, on_finding, st);
}

/* ---- processes ------------------------------------------------------------ */

static void proc_exited(struct ev_loop *loop, struct pidwatch *pw)
{
	struct stopper_proc *p = (struct stopper_proc *)pw;
	struct stopper *st = p->st;

	pidwatch_stop(loop, pw);
	log_msg(LOG_DEBUG, FIELDS(LF_STR("sidecar", st->cfg.spec->name), LF_INT("pid", pw->pid)),
		"sidecar process exited");
	if (st->live > 0 && --st->live == 0)
		st->cfg.on_empty(st->cfg.data, st->cfg.index);
}


/* The watch of pid (of that start time), if there is one. */
static struct stopper_proc *find(const struct stopper *st, pid_t pid, uint64_t start)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		if (st->procs[i]->pw.pid == pid && st->procs[i]->pw.start == start)
			return st->procs[i];
	return NULL;
}

static bool spared(const struct stopper *st, pid_t pid)
{
	size_t i;

	for (i = 0; i < st->cfg.nspare; i++)
		if (st->cfg.spare[i] == pid)
			return true;
	return false;
}

/* Watches one process; false when it could not be (it is then counted as missed). */
static bool watch(struct stopper *st, pid_t pid, uint64_t start)
{
	struct stopper_proc *p, **grown;
	int rc;

	grown = array_grow(st->procs, st->n, &st->cap, sizeof(*st->procs), 8);
	if (!grown)
		return false;
	st->procs = grown;
	p = calloc(1, sizeof(*p));
	if (!p)
		return false;
	p->st = st;
	p->pw.on_exit = proc_exited;
	rc = pidwatch_start(st->cfg.loop, &p->pw, st->cfg.ps, pid, start);
	if (rc < 0) {
		free(p);
		/* The pid names another process now: podscan must read it afresh. */
		podscan_stale(st->cfg.ps, pid);
		return true;
	}
	st->procs[st->n++] = p;
	st->live++;
	return true;
}

/* Whether c holds processes of the sidecar: its own container, or (drain) the one we run in. */
static bool holds_sidecar(const struct stopper *st, const struct podscan_container *c)
{
	if (c->sidecar != st->cfg.index)
		return false;
	return c->role == ROLE_SIDECAR || (st->cfg.in_own_container && c->role == ROLE_SELF);
}

unsigned stopper_collect(struct stopper *st)
{
	struct podscan *ps = st->cfg.ps;
	size_t i, j;

	st->collecting = true;
	st->missed = 0;
	for (i = 0; i < podscan_count(ps); i++) {
		struct podscan_container *c = podscan_container(ps, i);
		struct podscan_proc *procs;
		ssize_t n;

		if (!holds_sidecar(st, c) || c->nprocs == 0)
			continue;
		n = podscan_procs(ps, c, &procs);
		if (n < 0)
			st->missed += (unsigned)c->nprocs;
		for (j = 0; n > 0 && j < (size_t)n; j++)
			if (!spared(st, procs[j].pid) && !find(st, procs[j].pid, procs[j].start) &&
			    !watch(st, procs[j].pid, procs[j].start))
				st->missed++;
		free(procs);
	}
	if (st->missed)
		log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", st->cfg.spec->name), LF_INT("processes", st->missed)),
			"out of memory: processes of the sidecar not watched yet (looked for again at the next rescan)");
	return st->live;
}

bool stopper_collecting(const struct stopper *st)
{
	return st->collecting;
}

bool stopper_gone(const struct stopper *st)
{
	return st->collecting && st->live == 0 && st->missed == 0;
}

unsigned stopper_live(const struct stopper *st)
{
	return st->live;
}

/* Sends sig to one watched process; keeps the error that matters most. */
static void kill_one(struct stopper_proc *p, int sig, unsigned *sent, int *err)
{
	int rc;

	if (p->pw.exited || !p->pw.active)
		return;
	rc = pidwatch_kill(&p->pw, sig);
	*sent += rc == 0;
	*err = pidwatch_worse(*err, rc);
}

/* The wrapped container whose main process is pid (of that start time), or NULL. */
static const struct stopper_wrapped *wrapped_root(const struct stopper *st, pid_t pid, uint64_t start)
{
	size_t i;

	for (i = 0; i < st->nwrapped; i++)
		if (st->wrapped[i].pid == pid && st->wrapped[i].start == start)
			return &st->wrapped[i];
	return NULL;
}

/* A signal for a wrapped root, as a request on the volume; its own signal if the file cannot be written. */
static bool ask_wrapper(const struct stopper *st, const struct stopper_wrapped *w, int sig, unsigned *sent)
{
	int rc = protocol_write_stop(st->cfg.dir, w->name, sig);

	if (rc == 0) {
		(*sent)++;
		return true;
	}
	log_msg(LOG_WARN, FIELDS(LF_STR("sidecar", st->cfg.spec->name), LF_STR("name", w->name),
				 LF_STR("error", strerror(-rc))),
		"cannot write the stop request for rearguard sidecar: signalling it instead");
	return false;
}

/* Whether pid (of that start time) is a wrapped root that took its signal from the volume. */
static bool asked_root(const struct stopper *st, const bool *asked, pid_t pid, uint64_t start)
{
	const struct stopper_wrapped *w = wrapped_root(st, pid, start);

	return w && asked[w - st->wrapped];
}

int stopper_signal(struct stopper *st, int sig, bool all, unsigned *sent)
{
	struct podscan *ps = st->cfg.ps;
	bool asked[STOPPER_WRAPPED_MAX] = { false }, any = false;
	int err = 0;
	size_t i;

	*sent = 0;
	/* A wrapped container's main process takes its signals from the volume, and passes them on itself. */
	for (i = 0; i < st->nwrapped; i++) {
		struct stopper_proc *p = find(st, st->wrapped[i].pid, st->wrapped[i].start);

		if (!p || (!p->pw.exited && p->pw.active))
			any |= asked[i] = ask_wrapper(st, &st->wrapped[i], sig, sent);
	}
	if (all) {
		for (i = 0; i < st->n; i++)
			if (!asked_root(st, asked, st->procs[i]->pw.pid, st->procs[i]->pw.start))
				kill_one(st->procs[i], sig, sent, &err);
		/* The wrapper passes it on to its program where the agent may not. */
		return any && err == -EPERM ? 0 : err;
	}
	/* The roots: known from the last refresh, watched now if they are not yet. */
	for (i = 0; i < podscan_count(ps); i++) {
		const struct podscan_container *c = podscan_container(ps, i);
		struct stopper_proc *p;

		if (!holds_sidecar(st, c) || c->root <= 0 || c->root_gone || spared(st, c->root) ||
		    asked_root(st, asked, c->root, c->root_start))
			continue;
		p = find(st, c->root, c->root_start);
		if (!p && !watch(st, c->root, c->root_start)) {
			err = -ENOMEM;
			continue;
		}
		p = find(st, c->root, c->root_start);
		if (p)
			kill_one(p, sig, sent, &err);
	}
	return err;
}

int stopper_fate(struct stopper *st, int sig)
{
	struct podscan *ps = st->cfg.ps;
	int fate = DECIDE_FATE_NONE;
	size_t i;

	for (i = 0; i < podscan_count(ps); i++) {
		const struct podscan_container *c = podscan_container(ps, i);
		int f, rc;

		if (!holds_sidecar(st, c) || c->root <= 0 || c->root_gone || spared(st, c->root))
			continue;
		if (wrapped_root(st, c->root, c->root_start)) {
			f = DECIDE_FATE_WRAPPED;
		} else {
			rc = podscan_fate(ps, c->root, c->root_start, sig);
			if (rc == -ESRCH)
				continue;
			f = rc == PODSCAN_FATE_DIES      ? DECIDE_FATE_DIES
			    : rc == PODSCAN_FATE_IGNORES ? DECIDE_FATE_IGNORES
			    : rc == PODSCAN_FATE_HANDLES ? DECIDE_FATE_HANDLES
							 : DECIDE_FATE_UNKNOWN;
		}
		if (f > fate)
			fate = f;
	}
	return fate;
}

void stopper_reports(struct stopper *st)
{
	char how[PROTOCOL_HOW_MAX];
	size_t i;
	int code, rc;

	for (i = 0; i < st->nwrapped; i++) {
		rc = protocol_read_end(st->cfg.dir, st->wrapped[i].name, &code, how, sizeof(how));
		if (rc < 0) {
			log_msg(rc == -ENOENT ? LOG_DEBUG : LOG_WARN,
				FIELDS(LF_STR("sidecar", st->cfg.spec->name), LF_STR("name", st->wrapped[i].name),
				       LF_STR("error", strerror(-rc))),
				"no report of rearguard sidecar: how its program ended is not known");
			continue;
		}
		st->cfg.on_event(st->cfg.data, &(const struct decide_event){ .kind = DECIDE_EV_PROGRAM,
									      .sidecar = st->cfg.index,
									      .code = code,
									      .name = how });
	}
}

void stopper_poll(struct stopper *st)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		pidwatch_poll(st->cfg.loop, &st->procs[i]->pw);
}

unsigned stopper_polled(const struct stopper *st)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < st->n; i++)
		n += pidwatch_polling(&st->procs[i]->pw);
	return n;
}

void stopper_free(struct stopper *st)
{
	size_t i;

	http_request_free(&st->ready);
	http_request_free(&st->drain);
	http_request_free(&st->stop);
	http_request_free(&st->gone);
	http_request_free(&st->check);
	for (i = 0; i < st->n; i++) {
		pidwatch_stop(st->cfg.loop, &st->procs[i]->pw);
		free(st->procs[i]);
	}
	free(st->procs);
	st->procs = NULL;
	st->n = st->cap = 0;
}
