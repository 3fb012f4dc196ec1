#include "config.h"

#include "pod.h"

#include "argv.h"
#include "decide.h"
#include "install.h"
#include "parse.h"
#include "log.h"
#include "pidwatch.h"
#include "presets.h"
#include "spec.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The root of an app or sidecar container (podscan_container.data). */
struct pod_root {
	struct pidwatch pw;
	struct pod *pod;
	unsigned id;
	enum podscan_role role; /* as last told to decide */
	size_t sidecar;         /* spec index, or PODSCAN_NO_SIDECAR */
	bool native;            /* told to decide as a native sidecar */
	int64_t seen_us;        /* when it was first seen */
};

static const char *sidecar_name(const struct pod *p, size_t k)
{
	return k != PODSCAN_NO_SIDECAR ? p->cfg.sidecars[k].name : NULL;
}

static int64_t now_us(const struct pod *p)
{
	return p->cfg.clock ? p->cfg.clock() : mono_us();
}

/* An event for decide, once the pod is followed (before, pod_follow tells the first scan's). */
static void tell(struct pod *p, const struct decide_event *ev, int64_t when)
{
	if (p->following)
		p->cfg.on_event(p->cfg.data, ev, when);
}

/* An app whose container's name could not be read: named as its runtime's init, which pairs with any. */
#define UNNAMED_APP "runc:[2:INIT]"

#define TELL(p, when, ...) tell((p), &(const struct decide_event){ __VA_ARGS__ }, (when))

/* Whether the spec's match= takes the process (its comm, or its argv[0]'s basename). */
static bool matches(const struct sidecar_spec *spec, const char *comm, const char *argv0)
{
	return spec_matches(spec, comm) || (argv0[0] && spec_matches(spec, argv0));
}

/*
 * Each process as podscan reads it: a sidecar's, an app's, or neither. The
 * explicit specs go by their match=; the sidecars detection looks for by
 * their command line (a one-shot run of a sidecar's program is an app),
 * and each detection is logged with its evidence.
 */
static enum podscan_match classify(void *arg, const char *kname, const char *comm, const char *argv0,
				   const char *const *argv, size_t argc, size_t *sidecar)
{
	const struct pod *p = arg;
	const struct pod_config *cfg = &p->cfg;
	const struct spec_preset *found = NULL;
	char why[PRESET_EVIDENCE_MAX] = "";
	size_t i;

	/* A container the kubelet named: the spec naming it claims it, whatever it runs. */
	for (i = 0; kname[0] && i < cfg->nsidecars; i++) {
		if (strcmp(cfg->sidecars[i].container, kname) == 0) {
			*sidecar = i;
			return MATCH_SIDECAR;
		}
	}
	for (i = 0; i < cfg->nsidecars && !cfg->sidecars[i].detected; i++) {
		/*
		 * A spec for another named container: not this one's, whatever this
		 * one runs; nor for one whose name could not be read where names are
		 * seen (it exited at once: its sidecar would have been seen named).
		 */
		if (cfg->sidecars[i].container[0] && (kname[0] || (p->ps && podscan_names_seen(p->ps))))
			continue;
		if (matches(&cfg->sidecars[i], comm, argv0)) {
			*sidecar = i;
			return MATCH_SIDECAR;
		}
	}
	if (cfg->detect && (found = presets_detect(comm, argv, argc, why, sizeof(why)))) {
		for (i = 0; i < cfg->nsidecars; i++) {
			if (cfg->sidecars[i].detected && strcmp(cfg->sidecars[i].preset, found->name) == 0) {
				log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", cfg->sidecars[i].name), LF_STR("evidence", why)),
					"sidecar detected");
				*sidecar = i;
				return MATCH_SIDECAR;
			}
		}
	} else if (cfg->detect && why[0]) {
		log_msg(LOG_INFO, FIELDS(LF_STR("evidence", why)), "a sidecar's program run once: an app, not a sidecar");
	}
	if (!cfg->apps)
		return MATCH_NONE;
	if (!cfg->app_re)
		return MATCH_APP;
	return regexec(cfg->app_re, comm, 0, NULL, 0) == 0 || (argv0[0] && regexec(cfg->app_re, argv0, 0, NULL, 0) == 0)
		       ? MATCH_APP
		       : MATCH_NONE;
}

/*
 * A spec that names a sidecar now matches a second live container: one
 * container is what a spec means (or its program is shared, and an app was
 * taken for it: --apps is then one short). Said at once, not waited out.
 * Detected sidecars and natives may well come twice (two proxies, a
 * native's restart); a spec with container= claims one name only.
 */
static void second_match(const struct pod *p, const struct podscan_container *c)
{
	const struct sidecar_spec *spec = &p->cfg.sidecars[c->sidecar];
	size_t i;

	if (spec->detected || spec->native || (spec->container[0] && c->kname[0]))
		return;
	for (i = 0; i < podscan_count(p->ps); i++) {
		const struct podscan_container *o = podscan_container(p->ps, i);

		if (o == c || o->role != ROLE_SIDECAR || o->sidecar != c->sidecar || o->root_gone || o->merged)
			continue;
		log_msg(LOG_WARN,
			FIELDS(LF_STR("sidecar", spec->name), LF_INT("container", c->id), LF_INT("other", o->id),
			       LF_STR("name", c->name)),
			"a second container matches the sidecar's spec: if it is an app that runs the same program, "
			"the apps will be one short; name the sidecar's container (container=NAME, which rearguard "
			"inject writes) so that only it is taken");
		return;
	}
}

/*
 * What an app container is called: its name in the pod where the kubelet's
 * mount says it, else its program. Where names are seen, one whose name
 * could not be read (it exited first) is unnamed, as an attempt whose
 * program was never seen is: its program may be another container's too,
 * and an OnFailure attempt named after it (sh) was no restart of the app
 * known by its name (report), and was awaited in vain.
 */
static const char *app_name(const struct pod *p, const struct podscan_container *c)
{
	if (c->kname[0])
		return c->kname;
	return podscan_names_seen(p->ps) ? UNNAMED_APP : c->name;
}

static void log_container(const struct pod *p, const struct podscan_container *c, const char *what)
{
	const struct pod_root *r = c->data;

	log_msg(LOG_INFO,
		FIELDS(LF_INT("container", c->id), LF_STR("role", r && r->native ? "native" : podscan_role_name(c->role)),
		       LF_STR("sidecar", c->role == ROLE_SIDECAR ? sidecar_name(p, c->sidecar) : NULL),
		       LF_STR("name", c->name), LF_STR("container_name", c->kname[0] ? c->kname : NULL),
		       LF_INT("pid", c->root), LF_INT("processes", c->nprocs),
		       LF_STR("cgroup", c->display)),
		"%s", what);
}

/*
 * A root is gone: its container is over, and decide hears of it. unwatched:
 * it was gone before it could be watched, so its exit code is unknown.
 * pid: the root, when its watch saw it exit (decide notes a sidecar's).
 */
static void root_gone(struct pod *p, struct pod_root *r, struct podscan_container *c, int64_t when, bool unwatched,
		      int pid)
{
	podscan_root_exited(p->ps, c);
	if (r->native) {
		TELL(p, when, .kind = DECIDE_EV_NATIVE_EXITED, .id = r->id);
	} else if (r->role == ROLE_APP) {
		TELL(p, when, .kind = DECIDE_EV_APP_EXITED, .id = r->id);
		if (unwatched)
			TELL(p, when, .kind = DECIDE_EV_APP_STATUS, .id = r->id, .code = DECIDE_CODE_UNKNOWN);
	} else if (r->role == ROLE_SIDECAR) {
		TELL(p, when, .kind = DECIDE_EV_SIDECAR_EXITED, .sidecar = r->sidecar, .id = r->id, .pid = pid);
		if (unwatched)
			TELL(p, when, .kind = DECIDE_EV_SIDECAR_STATUS, .sidecar = r->sidecar,
			     .code = DECIDE_CODE_UNKNOWN);
	}
	/*
	 * Nobody asks for the exit code of a native or of a root that is
	 * neither an app's nor a sidecar's (pod_statuses): its pidfd is closed
	 * now. Kept until the pod is closed, each of the kubelet's restarts of
	 * a native held one more descriptor for the rest of the run.
	 */
	if (r->native || (r->role != ROLE_APP && r->role != ROLE_SIDECAR))
		pidwatch_stop(p->cfg.loop, &r->pw);
}

/*
 * The root of a pending container exited, or was gone before it could be
 * watched: its program exited before a rescan saw it run (an app that exits
 * in its first milliseconds). Its role is settled now, and decide hears of
 * a container that appeared and exited; the exit code is the watch's.
 */
static void pending_gone(struct pod *p, struct pod_root *r, struct podscan_container *c, int64_t when, bool unwatched)
{
	podscan_settle_pending(p->ps, c);
	if (c->merged) {
		/* Its init never joined a container of the pod: an exec session's or a probe's, done. */
		log_container(p, c, "runtime process exited without joining a container: not a container");
		r->role = ROLE_OTHER;
		pidwatch_stop(p->cfg.loop, &r->pw);
		return;
	}
	r->role = c->role;
	r->sidecar = c->sidecar;
	log_container(p, c, "container exited before a rescan saw its program run");
	if (c->role == ROLE_APP)
		TELL(p, when, .kind = DECIDE_EV_APP_SEEN, .id = c->id, .name = app_name(p, c));
	else if (c->role == ROLE_SIDECAR)
		TELL(p, when, .kind = DECIDE_EV_SIDECAR_SEEN, .sidecar = c->sidecar);
	root_gone(p, r, c, when, unwatched, 0);
}

static void root_exited(struct ev_loop *loop, struct pidwatch *pw)
{
	struct pod_root *r = (struct pod_root *)pw;
	struct pod *p = r->pod;
	struct podscan_container *c = podscan_find(p->ps, r->id);

	if (r->role == ROLE_PENDING) {
		/* Over already: it was an exec session's runtime init, merged into its container. */
		if (c->root_gone)
			return;
		pending_gone(p, r, c, now_us(p), false);
		return;
	}
	if (r->role == ROLE_APP && !r->native)
		log_msg(LOG_INFO, FIELDS(LF_INT("container", c->id), LF_STR("name", c->name), LF_INT("pid", c->root)),
			"app container exited");
	root_gone(p, r, c, now_us(p), false, c->root);
}

/*
 * Watches a container's root, once; its exit is the container's. A pending
 * root is watched too: the exec keeps the pid, so the watch follows it into
 * the program, and an exit before the next rescan is not missed.
 */
static void watch_root(struct pod *p, struct podscan_container *c, bool native)
{
	struct pod_root *r = c->data, **grown;

	if (r) {
		r->role = c->role;
		r->sidecar = c->sidecar;
		r->native = native;
		return;
	}
	grown = array_grow(p->roots, p->nroots, &p->caproots, sizeof(*p->roots), 16);
	if (!grown)
		goto oom;
	p->roots = grown;
	r = calloc(1, sizeof(*r));
	if (!r)
		goto oom;
	r->pod = p;
	/* No pidfd yet: stopping the watch before it is started closes nothing. */
	r->pw.fd = -1;
	r->id = c->id;
	r->role = c->role;
	r->sidecar = c->sidecar;
	r->native = native;
	r->seen_us = now_us(p);
	r->pw.on_exit = root_exited;
	p->roots[p->nroots++] = r;
	c->data = r;
	if (c->root_gone) {
		root_gone(p, r, c, now_us(p), true, 0);
		return;
	}
	if (pidwatch_start(p->cfg.loop, &r->pw, p->ps, c->root, c->root_start) == -ESRCH) {
		/* It exited between the scan and now. */
		if (r->role == ROLE_PENDING)
			pending_gone(p, r, c, now_us(p), true);
		else
			root_gone(p, r, c, now_us(p), true, 0);
	} else if (r->pw.polled)
		log_msg(LOG_WARN, FIELDS(LF_INT("container", c->id), LF_INT("pid", c->root),
					 LF_STR("error", strerror(-r->pw.why_polled))),
			"no pidfd for the container's root: polling it");
	return;
oom:
	/* Never taken for exited: the next refresh tries again (role_changed is not needed for that). */
	log_msg(LOG_ERROR, FIELDS(LF_INT("container", c->id)), "out of memory: container root not watched yet");
}

/*
 * The main process of every app container run by `rearguard run` has the
 * same name; the name it will report as (apps/NAME) tells them apart when
 * its report comes. Its command line may be gone already (it exited): then
 * the report is matched by the other rules.
 */
static void note_run_name(struct pod *p, const struct podscan_container *c)
{
	char cmdline[4096], *argv[64], name[DECIDE_NAME_MAX];
	size_t n = 0;
	int argc, rc;

	/* The name it has in the image and where rearguard install puts it. */
	if (!p->cfg.run_name || strcmp(c->name, INSTALL_NAME) != 0 || c->root <= 0)
		return;
	rc = podscan_cmdline(p->ps, c->root, c->root_start, cmdline, sizeof(cmdline), &n);
	/* Seen once the drain has begun: no command line is read then (podscan_names_only). */
	if (rc == -EPERM)
		log_msg(LOG_INFO, FIELDS(LF_INT("container", c->id), LF_INT("pid", c->root)),
			"app container runs rearguard run, seen after the drain began: its command line is not "
			"read, and its report is matched by the other rules");
	if (rc < 0)
		return;
	argc = (int)argv_split(cmdline, n, argv, ARRAY_SIZE(argv));
	if (p->cfg.run_name(argc, argv, name, sizeof(name)) < 0)
		return;
	TELL(p, now_us(p), .kind = DECIDE_EV_APP_REPORTS_AS, .id = c->id, .name = name);
	log_msg(LOG_INFO, FIELDS(LF_INT("container", c->id), LF_STR("report", name)),
		"app container runs rearguard run: its report will be apps/NAME");
}

/* Whether a container named name, first seen at since, is the kubelet's restart of a native one. */
static bool native_restarted(const struct pod *p, const char *name, int64_t since)
{
	return p->cfg.native_restarted && p->cfg.native_restarted(p->cfg.data, name, since);
}

/*
 * Whether container c, just seen or just given its role, is a native
 * sidecar, and how that is known; -1: it is not. A native spec says so.
 * With --first (the agent is the pod's first regular container, on its
 * first run), a container that ran when the agent started and was created
 * before the agent's own is one: the kubelet creates the native sidecars
 * before the regular containers and leaves them running, while the
 * ordinary init containers have exited by then. Created before is told by
 * the pid, which the pod's namespace hands out in order from 1 (the start
 * time, in ticks of 10 ms, only confirms it). A plain spec wins over that
 * evidence: a proxy put before the agent (Istio's
 * holdApplicationUntilProxyStarts, Linkerd's proxy-await) must be stopped.
 * Later, a container under the name of a native one that exited before it
 * appeared is the kubelet's restart of it.
 */
static int native_by(const struct pod *p, const struct podscan_container *c, bool first, int64_t since)
{
	if (c->role == ROLE_SIDECAR)
		return p->cfg.sidecars[c->sidecar].native ? NATIVE_BY_SPEC : -1;
	if (c->role != ROLE_APP)
		return -1;
	if (first && p->cfg.first && !c->root_gone && c->root > 0 && c->root < p->self_root &&
	    c->root_start <= p->self_start)
		return NATIVE_BY_START;
	if (native_restarted(p, c->name, since))
		return NATIVE_BY_RESTART;
	return -1;
}

/*
 * Container c is a native sidecar (by): decide lists it, and nothing else
 * is done with it but watching its root (whose exit is the native's).
 */
static void native_seen(struct pod *p, struct podscan_container *c, int by, int64_t now)
{
	const struct pod_root *r = c->data;

	if (r && !r->native)
		TELL(p, now, .kind = DECIDE_EV_APP_FORGET, .id = c->id);
	TELL(p, now, .kind = DECIDE_EV_NATIVE_SEEN, .id = c->id,
	     .name = c->role == ROLE_SIDECAR ? sidecar_name(p, c->sidecar) : c->name, .by = (enum decide_native_by)by);
	watch_root(p, c, true);
}

/*
 * An app container's main process exec'd another program (an entrypoint
 * script that execs the job): its name from now on, which under OnFailure
 * may make it the restart of a failed attempt of that program, or the
 * kubelet's restart of a native sidecar of that name.
 */
static void app_renamed(struct pod *p, struct podscan_container *c, int64_t now)
{
	struct pod_root *r = c->data;

	log_msg(LOG_INFO, FIELDS(LF_INT("container", c->id), LF_STR("name", c->name), LF_INT("pid", c->root)),
		"app container renamed: its main process runs another program");
	if (r && !r->native && native_restarted(p, c->name, r->seen_us)) {
		native_seen(p, c, NATIVE_BY_RESTART, now);
		log_container(p, c, "container role changed");
		return;
	}
	/* Known by its name in the pod, it is the same app whatever it runs. */
	if ((!r || !r->native) && !c->kname[0] && !podscan_names_seen(p->ps))
		TELL(p, now, .kind = DECIDE_EV_APP_RENAMED, .id = c->id, .name = c->name);
}

/*
 * How long the program of sidecar container c's root has run, for decide's
 * wait for its handler. A container new to this scan is as old as its
 * root's process (the exec that started the program came after the fork,
 * but before the look): an agent that starts after its sidecars sees them
 * all at once, and most began long before. One seen before under another
 * role (the runtime's init, a shell that exec'd the proxy) exec'd its
 * program since the last look: 0, it began now.
 */
static int64_t sidecar_age(const struct podscan_container *c)
{
	return c->is_new && c->root > 0 ? podscan_age(c->root_start, boot_us()) : 0;
}

/* Tells what the last refresh found. */
static void tell_scan(struct pod *p, bool first)
{
	int64_t now = now_us(p);
	unsigned pending = 0;
	const char *what;
	size_t i;
	int by;

	for (i = 0; i < podscan_count(p->ps); i++) {
		struct podscan_container *c = podscan_container(p->ps, i);
		struct pod_root *r = c->data;

		bool fresh = c->is_new || c->role_changed;
		bool watched_role = c->role == ROLE_APP || c->role == ROLE_SIDECAR || c->role == ROLE_PENDING;

		if (r && r->role == ROLE_PENDING && !watched_role) {
			/* No container after all (an exec session's runtime init), or not an app by --app. */
			pidwatch_stop(p->cfg.loop, &r->pw);
			r->role = c->role;
		}

		if (c->role == ROLE_PENDING)
			pending++;
		if (c->renamed && !fresh && c->role == ROLE_APP)
			app_renamed(p, c, now);
		/* A root not watched yet (no memory last time) is tried again. */
		if (!fresh && (r || !watched_role))
			continue;
		what = first ? "container" : c->is_new ? "container appeared" : "container role changed";
		if (fresh && (by = native_by(p, c, first, r ? r->seen_us : now)) >= 0) {
			if (!r || !r->native)
				native_seen(p, c, by, now);
			log_container(p, c, what);
			continue;
		}
		/* A plain spec matches it now: it is that sidecar after all. */
		if (fresh && r && r->native) {
			TELL(p, now, .kind = DECIDE_EV_NATIVE_FORGET, .id = c->id);
			r->native = false;
		}
		if (fresh) {
			log_container(p, c, what);
			if (r && r->role == ROLE_APP && c->role != ROLE_APP)
				TELL(p, now, .kind = DECIDE_EV_APP_FORGET, .id = c->id);
			if (c->role == ROLE_APP) {
				TELL(p, now, .kind = DECIDE_EV_APP_SEEN, .id = c->id, .name = app_name(p, c));
				note_run_name(p, c);
			} else if (c->role == ROLE_SIDECAR) {
				second_match(p, c);
				TELL(p, now, .kind = DECIDE_EV_SIDECAR_SEEN, .sidecar = c->sidecar,
				     .age_us = sidecar_age(c));
				if (p->cfg.on_sidecar && !c->root_gone)
					p->cfg.on_sidecar(p->cfg.data, c->sidecar, c);
			}
		}
		if (watched_role)
			watch_root(p, c, false);
	}
	TELL(p, now, .kind = DECIDE_EV_PENDING, .count = pending);
}

/* A refresh of podscan, timed by the pod's clock: its new containers are seen as of its start. */
static int scan(struct pod *p, struct podscan_stats *st, int64_t *elapsed)
{
	int64_t start = now_us(p);
	int rc = podscan_refresh(p->ps, st);
	size_t i;

	*elapsed = now_us(p) - start;
	for (i = 0; rc == 0 && i < podscan_count(p->ps); i++) {
		struct podscan_container *c = podscan_container(p->ps, i);

		if (c->is_new)
			c->seen_us = start;
	}
	return rc;
}

int pod_open(struct pod *p, const struct pod_config *cfg)
{
	struct podscan_config pc = {
		.proc_path = cfg->proc ? cfg->proc : "/proc",
		.self_pid = cfg->self ? cfg->self : getpid(),
		.classify = classify,
		.arg = p,
	};
	struct podscan_stats st;
	int64_t elapsed = 0;
	bool self_seen = false;
	size_t i;
	int rc;

	memset(p, 0, sizeof(*p));
	p->cfg = *cfg;
	rc = podscan_new(&pc, &p->ps);
	if (rc == 0)
		rc = scan(p, &st, &elapsed);
	if (rc < 0) {
		log_error("cannot read /proc: %s", strerror(-rc));
		return rc;
	}
	for (i = 0; i < podscan_count(p->ps); i++)
		self_seen |= podscan_container(p->ps, i)->role == ROLE_SELF;
	if (!self_seen)
		return -ENXIO;
	if (podscan_flat(p->ps))
		log_warn("every process shows the same cgroup: telling containers apart by process tree "
			 "(exec sessions will look like containers)");
	log_msg(LOG_INFO,
		FIELDS(LF_INT("containers", podscan_count(p->ps)), LF_INT("processes", st.listed),
		       LF_DURATION("scan", elapsed), LF_STR("pidfd", pidwatch_uses_pidfd() ? "yes" : "no")),
		"pod scanned");
	return 0;
}

void pod_follow(struct pod *p)
{
	size_t i;

	for (i = 0; i < podscan_count(p->ps); i++) {
		const struct podscan_container *c = podscan_container(p->ps, i);

		if (c->role == ROLE_SELF) {
			p->self_root = c->root;
			p->self_start = c->root_start;
		}
	}
	p->following = true;
	tell_scan(p, true);
}

void pod_pending_over(struct pod *p, int64_t since)
{
	size_t i;

	for (i = 0; i < podscan_count(p->ps); i++) {
		struct podscan_container *c = podscan_container(p->ps, i);

		if (c->seen_us <= since)
			podscan_pending_over(p->ps, c);
	}
}

int pod_refresh(struct pod *p)
{
	struct podscan_stats st;
	int64_t elapsed;
	int rc = scan(p, &st, &elapsed);

	if (rc < 0)
		return rc;
	log_msg(LOG_DEBUG,
		FIELDS(LF_INT("listed", st.listed), LF_INT("classified", st.classified),
		       LF_INT("cgroup_reads", st.cgroup_reads), LF_DURATION("elapsed", elapsed)),
		"rescanned /proc");
	tell_scan(p, false);
	/* What was read counts; but a picture with holes confirms nothing. */
	if (st.unreadable) {
		log_msg(LOG_DEBUG, FIELDS(LF_INT("unreadable", st.unreadable), LF_STR("error", strerror(-st.error))),
			"some processes could not be read");
		return st.error;
	}
	return 0;
}

void pod_statuses(struct pod *p)
{
	int64_t now = now_us(p);
	size_t i;

	for (i = 0; i < p->nroots; i++) {
		struct pod_root *r = p->roots[i];
		int code = 0, rc;

		if ((r->role != ROLE_APP && r->role != ROLE_SIDECAR) || r->native || !r->pw.exited || r->pw.status_done)
			continue;
		rc = pidwatch_status(&r->pw, &code);
		if (rc == -EAGAIN)
			continue;
		if (rc == 0)
			log_msg(LOG_INFO, FIELDS(LF_INT("container", r->id), LF_STR("sidecar", sidecar_name(p, r->sidecar)),
						 LF_INT("exit_code", code)),
				"%s exit code", r->role == ROLE_APP ? "app" : "sidecar");
		else
			log_msg(LOG_DEBUG, FIELDS(LF_INT("container", r->id), LF_STR("error", strerror(-rc))),
				"the kernel cannot give the container's exit code");
		if (r->role == ROLE_APP)
			TELL(p, now, .kind = DECIDE_EV_APP_STATUS, .id = r->id,
			     .code = rc == 0 ? code : DECIDE_CODE_UNKNOWN);
		else
			TELL(p, now, .kind = DECIDE_EV_SIDECAR_STATUS, .sidecar = r->sidecar,
			     .code = rc == 0 ? code : DECIDE_CODE_UNKNOWN);
	}
}

void pod_check_sidecar(struct pod *p, size_t sidecar)
{
	size_t i;

	for (i = 0; i < p->nroots; i++)
		if (p->roots[i]->role == ROLE_SIDECAR && p->roots[i]->sidecar == sidecar)
			pidwatch_check(p->cfg.loop, &p->roots[i]->pw);
}

void pod_catches(struct pod *p, size_t sidecar, int signo)
{
	int result = 1;
	size_t i;

	for (i = 0; i < podscan_count(p->ps); i++) {
		const struct podscan_container *c = podscan_container(p->ps, i);
		int rc;

		if (c->role != ROLE_SIDECAR || c->sidecar != sidecar || c->root_gone || !c->root)
			continue;
		rc = podscan_catches(p->ps, c->root, c->root_start, signo);
		/* A root gone meanwhile needs no handler; an error says more than a "not yet". */
		if (rc == -ESRCH)
			continue;
		if (rc == PODSCAN_IGNORES) {
			log_msg(LOG_WARN,
				FIELDS(LF_STR("sidecar", sidecar_name(p, sidecar)), LF_INT("pid", c->root),
				       LF_STR("signal", signal_name(signo))),
				"the sidecar's main process ignores its stop signal: it ends only at SIGKILL, when "
				"--stop-timeout and --kill-after have passed, and exits 137, which fails the pod; "
				"see docs/troubleshooting.md");
			rc = 1;
		}
		if (rc < 0 || (rc == 0 && result > 0))
			result = rc;
	}
	TELL(p, now_us(p), .kind = DECIDE_EV_CATCHES, .sidecar = sidecar, .result = result);
}

/* Signals one process of the pod, if pid still has that start time; a watch of a moment does the checking. */
static int signal_process(struct pod *p, pid_t pid, uint64_t start, int signo)
{
	struct pidwatch w;
	int rc;

	memset(&w, 0, sizeof(w));
	rc = pidwatch_start(p->cfg.loop, &w, p->ps, pid, start);
	if (rc < 0)
		return rc;
	rc = pidwatch_kill(&w, signo);
	pidwatch_stop(p->cfg.loop, &w);
	return rc;
}

int pod_signal_app(struct pod *p, unsigned id, int signo, bool all, unsigned *sent)
{
	struct podscan_container *c = podscan_find(p->ps, id);
	struct pod_root *r = c ? c->data : NULL;
	struct podscan_proc *procs;
	ssize_t n, i;
	int err = 0, rc;

	*sent = 0;
	if (!c || !r || r->role != ROLE_APP || r->native)
		return -ESRCH;
	if (!all) {
		rc = pidwatch_kill(&r->pw, signo);
		*sent += rc == 0;
		return rc == -ESRCH ? 0 : rc;
	}
	n = podscan_procs(p->ps, c, &procs);
	if (n < 0)
		return (int)n;
	for (i = 0; i < n; i++) {
		rc = signal_process(p, procs[i].pid, procs[i].start, signo);
		*sent += rc == 0;
		err = pidwatch_worse(err, rc);
	}
	free(procs);
	return err;
}

void pod_poll(struct pod *p)
{
	size_t i;

	for (i = 0; i < p->nroots; i++)
		pidwatch_poll(p->cfg.loop, &p->roots[i]->pw);
}

unsigned pod_polled(const struct pod *p)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < p->nroots; i++)
		n += pidwatch_polling(&p->roots[i]->pw);
	return n;
}

unsigned pod_containers(const struct pod *p)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; p->ps && i < podscan_count(p->ps); i++) {
		const struct podscan_container *c = podscan_container(p->ps, i);

		n += c->role != ROLE_PAUSE && !c->merged;
	}
	return n;
}

void pod_list(const struct pod *p)
{
	size_t i;

	for (i = 0; i < podscan_count(p->ps); i++)
		log_container(p, podscan_container(p->ps, i), "container");
}

int pod_pids_moved(struct pod *p)
{
	return podscan_pids_moved(p->ps);
}

void pod_close(struct pod *p)
{
	size_t i;

	for (i = 0; i < p->nroots; i++) {
		pidwatch_stop(p->cfg.loop, &p->roots[i]->pw);
		free(p->roots[i]);
	}
	free(p->roots);
	podscan_free(p->ps);
	memset(p, 0, sizeof(*p));
}
