/*
 * rearguard explain's judgement: Kubernetes objects as kubectl prints them
 * in, one verdict per pod (or per Job or CronJob judged by its template)
 * out, each with its evidence and its fixes, typed (explain.h) for the
 * text and the JSON of explain-out.c.
 *
 * A pod's containers are told apart as inject tells them (the presets, the
 * annotation rearguard.io/sidecars, the webhook's --sidecar), the agent by
 * inject_is_agent; its status says which run, which ended and how; the
 * agent's termination message (explain-summary.c) says what the agent did.
 * A container of a Job's pod that runs on after the others ended is named
 * even when nothing knows it. What the webhook would do is its own decision
 * (explain_webhook_would, the one call into it).
 *
 * What depends on the whole input (a Namespace's label, a Job whose pods
 * are in it too) is settled by explain_finish, once every input is read.
 */
#include "config.h"

#include "explain.h"

#include "defaults.h"
#include "json.h"
#include "log.h"
#include "injectplan.h"
#include "injectread.h"
#include "parse.h"
#include "presets.h"
#include "review.h"
#include "util.h"
#include "yamldoc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AGENT_LABEL "rearguard.io/inject"

/* ---- small readers of the tree ---------------------------------------------- */

static const char *str_at(const struct ynode *n, const char *path)
{
	return ydoc_value(ydoc_path(n, path));
}

/* A sequence under key, or NULL (absent, null, or of another shape). */
static const struct ynode *seq_at(const struct ynode *n, const char *key)
{
	const struct ynode *s = ydoc_get(n, key);

	return s && s->kind == YNODE_SEQ ? s : NULL;
}

/* RFC 3339 as kubectl prints it ("2026-11-29T01:02:03Z", fractions and offsets too): seconds, or -1. */
static int64_t rfc3339(const char *t)
{
	struct tm tm = {0};
	const char *p;
	int64_t s;
	int off;

	if (!t || sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
			 &tm.tm_sec) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	s = (int64_t)timegm(&tm);
	p = t + 19;
	while (*p == '.' || (*p >= '0' && *p <= '9'))
		p++;
	if ((*p == '+' || *p == '-') && strlen(p) >= 6) {
		off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600 + ((p[4] - '0') * 10 + (p[5] - '0')) * 60;
		s += *p == '+' ? -off : off;
	}
	return s;
}

/* ---- the report's items ------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static struct explain_item *item_new(struct explain_report *r, enum explain_object kind, const char *ns,
				     const char *name, const char *job)
{
	struct explain_item *it;
	void *grown = array_grow(r->items, r->n, &r->cap, sizeof(*r->items), 64);

	if (!grown)
		return NULL;
	r->items = grown;
	it = &r->items[r->n];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->exit_code = -1;
	it->ns = strdup(ns ? ns : "");
	it->name = strdup(name ? name : "");
	it->job = dup_or_null(job);
	if (!it->ns || !it->name || (job && !it->job)) {
		free(it->ns);
		free(it->name);
		free(it->job);
		return NULL;
	}
	r->n++;
	return it;
}

static void item_free(struct explain_item *it)
{
	size_t i;

	free(it->ns);
	free(it->name);
	free(it->job);
	free(it->container);
	free(it->since);
	for (i = 0; i < it->nevidence; i++)
		free(it->evidence[i]);
	for (i = 0; i < it->nfixes; i++)
		free(it->fixes[i].text);
	for (i = 0; i < it->nsays; i++)
		free(it->says[i]);
}

static char *vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static char *vformat(const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	return strdup(line);
}

/* One line of evidence; dropped past EXPLAIN_MAX_EVIDENCE (the first say the most). */
static void say(struct explain_item *it, const char *fmt, ...) RG_PRINTF(2, 3);

static void say(struct explain_item *it, const char *fmt, ...)
{
	va_list ap;

	if (it->nevidence == EXPLAIN_MAX_EVIDENCE)
		return;
	va_start(ap, fmt);
	it->evidence[it->nevidence] = vformat(fmt, ap);
	va_end(ap);
	if (it->evidence[it->nevidence])
		it->nevidence++;
}

/* One fix; fmt NULL: a label fix, worded by explain_finish once the namespaces are known. */
static void fix(struct explain_item *it, enum explain_fix_kind kind, const char *fmt, ...) RG_PRINTF(3, 4);

static void fix(struct explain_item *it, enum explain_fix_kind kind, const char *fmt, ...)
{
	va_list ap;
	size_t i;

	if (it->nfixes == EXPLAIN_MAX_FIXES)
		return;
	for (i = 0; i < it->nfixes; i++)
		if (it->fixes[i].kind == kind)
			return; /* one of each kind: the first is the one for the culprit */
	it->fixes[it->nfixes].kind = kind;
	it->fixes[it->nfixes].text = NULL;
	if (fmt) {
		va_start(ap, fmt);
		it->fixes[it->nfixes].text = vformat(fmt, ap);
		va_end(ap);
		if (!it->fixes[it->nfixes].text)
			return;
	}
	it->nfixes++;
}

static void set_container(struct explain_item *it, const char *name, const struct spec_preset *p)
{
	free(it->container);
	it->container = dup_or_null(name);
	it->preset = p;
	it->unknown = name && !p;
}

static void set_since(struct explain_item *it, const char *t)
{
	free(it->since);
	it->since = dup_or_null(t);
}

/* ---- a pod's containers ------------------------------------------------------- */

enum role {
	ROLE_APP,
	ROLE_SIDECAR,	/* plain: a preset's, or named a sidecar */
	ROLE_AGENT,
	ROLE_HELPER,	/* ends by itself once the others did (linkerd-proxy-terminator) */
	ROLE_NATIVE,	/* an init container with restartPolicy: Always */
	ROLE_INIT,	/* an init container that runs to its end before the apps */
};

enum cstate { CS_NONE, CS_WAITING, CS_RUNNING, CS_TERMINATED };

struct ctr {
	const struct ynode *spec;
	const char *name, *image;
	enum role role;
	const struct spec_preset *p;
	bool named;	/* named a sidecar: rearguard.io/sidecars, --sidecar, the agent's container= */
	enum cstate state;
	const char *started, *finished, *why; /* why: the waiting or terminated reason */
	const char *message;		      /* a terminated container's message */
	int code;			      /* a terminated container's exit code, -1 */
	bool restarted;			      /* restartCount > 0 */
};

struct pod {
	const struct ynode *obj, *meta, *spec, *status;
	const char *ns, *name, *job, *policy, *phase;
	struct ctr *c;
	size_t n, ninit; /* c[0..ninit) are the init containers, then the containers */
	struct ctr *agent;
	const char *names[INJECT_MAX_NAMED + 32]; /* containers named sidecars */
	size_t nnames;
	bool job_pod; /* a Job's, or never restarted: meant to end */
};

/* Whether a word of rearguard.io/sidecars (or a spec's) is a spec's key, which goes on an entry. */
static bool spec_key(const char *w, size_t n)
{
	static const char *const keys[] = {"name", "container", "match", "ready", "drain", "drain-time", "stop"};
	size_t i;

	if (n == 6 && strncmp(w, "native", 6) == 0)
		return true;
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (strlen(keys[i]) < n && strncmp(w, keys[i], strlen(keys[i])) == 0 && w[strlen(keys[i])] == '=')
			return true;
	return false;
}

/*
 * The containers a list of CONTAINER[=SPEC] entries names, as inject reads
 * the annotation: entries apart by ';', or by ',' unless a spec's key
 * follows (docs/inject.md).
 */
static void add_names(struct pod *p, const char *list)
{
	const char *w = list;

	while (list && *w) {
		size_t n = strcspn(w, ",;"), name = strcspn(w, "=");

		if (n > 0 && !spec_key(w, n) && p->nnames < ARRAY_SIZE(p->names)) {
			/* The name is kept as a pointer into the text with its length: copied where compared. */
			p->names[p->nnames++] = w;
			(void)name;
		}
		w += n;
		if (*w)
			w++;
	}
}

/* Whether name is one of the named containers (each entry ends at '=', ',', ';' or the end). */
static bool named(const struct pod *p, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < p->nnames; i++)
		if (strncmp(p->names[i], name, n) == 0 && strchr("=,; ", p->names[i][n] ? p->names[i][n] : ' '))
			return true;
	return false;
}

/* The container= keys of the agent's REARGUARD_SIDECARS: the containers it stops whatever they run. */
static void agent_names(struct pod *p, const struct ynode *agent)
{
	const char *k;

	for (k = inject_env(agent, "REARGUARD_SIDECARS"); k && (k = strstr(k, "container=")) != NULL; k += 10)
		if (p->nnames < ARRAY_SIZE(p->names))
			p->names[p->nnames++] = k + 10;
}

/* An environment variable of the agent's container, or NULL. */
static const char *agent_env(const struct ctr *agent, const char *name)
{
	return agent ? inject_env(agent->spec, name) : NULL;
}

/* Its status, from the list of statuses by name. */
static void read_status(struct ctr *c, const struct ynode *statuses)
{
	const struct ynode *st = NULL, *state, *s;
	const char *rc;
	size_t i;

	c->code = -1;
	for (i = 0; statuses && i < statuses->n && !st; i++)
		if (inject_is(ydoc_get(statuses->items[i], "name"), c->name))
			st = statuses->items[i];
	if (!st)
		return;
	rc = ydoc_value(ydoc_get(st, "restartCount"));
	c->restarted = rc && strcmp(rc, "0") != 0;
	state = ydoc_get(st, "state");
	if ((s = ydoc_get(state, "running")) != NULL && s->kind == YNODE_MAP) {
		c->state = CS_RUNNING;
		c->started = str_at(s, "startedAt");
	} else if ((s = ydoc_get(state, "terminated")) != NULL && s->kind == YNODE_MAP) {
		const char *code = ydoc_value(ydoc_get(s, "exitCode"));
		unsigned long v;

		c->state = CS_TERMINATED;
		c->started = str_at(s, "startedAt");
		c->finished = str_at(s, "finishedAt");
		c->why = str_at(s, "reason");
		c->message = str_at(s, "message");
		c->code = code && parse_uint(code, 0, 255, &v) == 0 ? (int)v : -1;
	} else if ((s = ydoc_get(state, "waiting")) != NULL && s->kind == YNODE_MAP) {
		c->state = CS_WAITING;
		c->why = str_at(s, "reason");
	}
}

/* Tells each container's role, from its spec, and reads its status. -ENOMEM, or 0. */
static int read_containers(struct pod *p)
{
	const struct ynode *inits = seq_at(p->spec, "initContainers"), *ctrs = seq_at(p->spec, "containers");
	const struct ynode *st_init = seq_at(p->status, "initContainerStatuses"),
			   *st = seq_at(p->status, "containerStatuses");
	size_t ni = inits ? inits->n : 0, nc = ctrs ? ctrs->n : 0, i, k = 0;

	p->c = calloc(ni + nc + 1, sizeof(*p->c));
	if (!p->c)
		return -ENOMEM;
	for (i = 0; i < ni + nc; i++) {
		const struct ynode *c = i < ni ? inits->items[i] : ctrs->items[i - ni];
		struct ctr *x = &p->c[k];
		const char *argv[MAX_ARGV];
		size_t argc;

		if (c->kind != YNODE_MAP || !ydoc_str(ydoc_get(c, "name")))
			continue; /* the API server holds no such container: nothing runs of it */
		x->spec = c;
		x->name = ydoc_str(ydoc_get(c, "name"));
		x->image = ydoc_value(ydoc_get(c, "image"));
		argc = inject_argv(c, argv, NULL);
		x->p = presets_container(x->name, x->image, argv, argc);
		if (i < ni) {
			x->role = inject_is(ydoc_get(c, "restartPolicy"), "Always") ? ROLE_NATIVE : ROLE_INIT;
			read_status(x, st_init);
			p->ninit = k + 1;
		} else {
			x->role = inject_is_agent(c) ? ROLE_AGENT : x->p && x->p->helper ? ROLE_HELPER : ROLE_APP;
			if (x->role == ROLE_AGENT && !p->agent)
				p->agent = x;
			read_status(x, st);
		}
		k++;
	}
	p->n = k;
	add_names(p, inject_meta_value(p->meta, INJECT_SIDECARS));
	if (p->agent)
		agent_names(p, p->agent->spec);
	for (i = p->ninit; i < p->n; i++) {
		struct ctr *x = &p->c[i];

		x->named = named(p, x->name);
		if (x->role == ROLE_APP && (x->p || x->named))
			x->role = ROLE_SIDECAR;
	}
	return 0;
}

/* "istio-proxy (Istio's proxy)" */
static void describe(const struct ctr *c, char *out, size_t len)
{
	if (c->p)
		snprintf(out, len, "%s (%s)", c->name, c->p->title);
	else if (c->named)
		snprintf(out, len, "%s (named a sidecar: %s, --sidecar, or the agent's container=)", c->name, INJECT_SIDECARS);
	else
		snprintf(out, len, "%s (no preset knows it)", c->name);
}

/* ---- what the webhook would do -------------------------------------------------- */

/* One of the plan's notes, as the webhook's warning says it. */
static void would_say(void *data, const char *words)
{
	struct explain_item *it = data;

	if (it->nsays < EXPLAIN_MAX_SAYS && (it->says[it->nsays] = strdup(words)) != NULL)
		it->nsays++;
}

int explain_webhook_would(struct ystream *s, const struct ynode *meta, const struct ynode *spec, const char *ns,
			  const struct inject_options *o, struct explain_item *it)
{
	/*
	 * A pod of them, as a mapping of its own: the plan reads it, and
	 * changes nothing (so the const is kept in fact, if not in its types).
	 */
	static char metadata[] = "metadata", spec_word[] = "spec";
	struct ynode keys[2] = {
	    {.kind = YNODE_SCALAR, .value = metadata, .len = sizeof(metadata) - 1},
	    {.kind = YNODE_SCALAR, .value = spec_word, .len = sizeof(spec_word) - 1},
	};
	struct ynode *items[4] = {&keys[0], (struct ynode *)(uintptr_t)meta, &keys[1], (struct ynode *)(uintptr_t)spec};
	struct ynode pod = {.kind = YNODE_MAP, .items = items, .n = 4};
	struct inject_plan *plan;
	char err[256];
	int rc;

	(void)ns; /* the webhook's decision does not depend on the namespace, only on whether it is sent the pod */
	if (!meta || !spec) {
		pod.items = meta ? items : items + 2;
		pod.n = meta || spec ? 2 : 0;
	}
	plan = malloc(sizeof(*plan));
	if (!plan)
		return -ENOMEM;
	rc = inject_plan(s, &pod, INJECT_POD, o, plan, err, sizeof(err));
	if (rc == 0) {
		it->webhook = plan->change ? EXPLAIN_WEBHOOK_ADD : EXPLAIN_WEBHOOK_LEAVE;
		inject_plan_words(plan, would_say, it);
	}
	free(plan);
	/* A spec too long for the agent: the webhook answers without a patch. */
	return rc == -EINVAL ? 0 : rc;
}

/* ---- the fixes ---------------------------------------------------------------------- */

/*
 * The fixes for a plain sidecar that runs, or will run, without an agent:
 * the webhook (by the namespace's label, worded by explain_finish) or
 * inject where the webhook would add the agent, else naming the sidecar
 * first; then the mesh's native switch, or a native sidecar by hand.
 */
static void fixes_plain(struct explain_item *it, const struct ctr *c, const struct pod *p, const char *what)
{
	char inject[256];

	if (p->job)
		snprintf(inject, sizeof(inject),
			 "add rearguard to the manifest: kubectl get job %s -n %s -o yaml | rearguard inject - | "
			 "kubectl replace --force -f - (or rearguard inject the file or chart the %s comes from)",
			 p->job, p->ns, what);
	else
		snprintf(inject, sizeof(inject),
			 "add rearguard to the manifest: rearguard inject the file or chart the %s comes from", what);
	if (it->webhook == EXPLAIN_WEBHOOK_ADD) {
		fix(it, EXPLAIN_FIX_LABEL, NULL);
		fix(it, EXPLAIN_FIX_INJECT, "%s", inject);
	} else if (!c->p) {
		fix(it, EXPLAIN_FIX_NAME_SIDECAR,
		    "name it a sidecar on the pod template, then label the namespace or rearguard inject it: "
		    "metadata.annotations: {%s: \"%s\"} (stopped by SIGTERM; %s=signal:QUIT, or "
		    "%s=http://127.0.0.1:PORT/PATH for a stop endpoint)",
		    INJECT_SIDECARS, c->name, c->name, c->name);
	} else {
		fix(it, EXPLAIN_FIX_INJECT, "%s", inject);
	}
	if (c->p && c->p->native_keys[0])
		fix(it, EXPLAIN_FIX_MESH_NATIVE,
		    "have %s's injector make it a native sidecar, which the kubelet stops after the apps: the "
		    "annotation %s: \"true\" on the pod template (Kubernetes 1.28 and later)",
		    c->p->title, c->p->native_keys[0]);
	else if (!c->p || !c->p->inject_key)
		fix(it, EXPLAIN_FIX_NATIVE,
		    "make %s a native sidecar: move it to initContainers with restartPolicy: Always (Kubernetes "
		    "1.29 and later)",
		    c->name);
}

/* The first preset whose injector the template asks for (its label or annotation), or NULL. */
static const struct spec_preset *injected(const struct ynode *meta)
{
	size_t i, k;

	for (i = 0; i < spec_npresets; i++) {
		const struct spec_preset *p = &spec_presets[i];
		const char *v = p->inject_key ? inject_meta_value(meta, p->inject_key) : NULL;

		if (!v || (p->inject_off && strcmp(v, p->inject_off) == 0))
			continue;
		if (p->inject_any)
			return p;
		for (k = 0; k < ARRAY_SIZE(p->inject_on) && p->inject_on[k]; k++)
			if (strcmp(v, p->inject_on[k]) == 0)
				return p;
	}
	return NULL;
}

/* The fixes for a template whose sidecar an injector adds: as for a container of it, by that preset. */
static void fixes_asked(struct explain_item *it, const struct spec_preset *asked, const struct pod *p, const char *what)
{
	struct ctr c = {.name = asked ? (asked->containers[0] ? asked->containers[0] : asked->name) : "the sidecar",
			.p = asked};

	fixes_plain(it, &c, p, what);
}

/* The advice of c's preset for a stop answered with status, or NULL. */
static const char *stop_advice(const struct spec_preset *p, int status)
{
	size_t i;

	for (i = 0; p && status > 0 && i < ARRAY_SIZE(p->advice); i++)
		if (p->advice[i].text &&
		    (p->advice[i].result == status ||
		     (p->advice[i].result == PRESET_ANY_4XX && status >= 400 && status < 500)))
			return p->advice[i].text;
	return NULL;
}

static void fix_uid(struct explain_item *it, const struct ctr *c)
{
	if (c->p && c->p->uid)
		fix(it, EXPLAIN_FIX_UID,
		    "let the agent signal it: run the agent as %s's uid (securityContext.runAsUser: %s) or as root with "
		    "only the KILL capability (rearguard inject --signal-as-root; the webhook's "
		    "REARGUARD_SIGNAL_AS_ROOT=true)",
		    c->name, c->p->uid);
	else
		fix(it, EXPLAIN_FIX_UID,
		    "let the agent signal it: run the agent as %s's uid (securityContext.runAsUser) or as root with only "
		    "the KILL capability (rearguard inject --signal-as-root; the webhook's REARGUARD_SIGNAL_AS_ROOT=true)",
		    c->name);
}

/* What an exit code says: "SIGTERM", "SIGKILL", "" for a plain code. */
static const char *code_meaning(int code)
{
	switch (code) {
	case 137: return " (128+9: SIGKILL)";
	case 143: return " (128+15: SIGTERM)";
	case 130: return " (128+2: SIGINT)";
	case 139: return " (128+11: SIGSEGV)";
	case 134: return " (128+6: SIGABRT)";
	default: return "";
	}
}

/* The summary's entry for a container: by the spec's name, which is the preset's, the container's or the match. */
static const struct explain_sidecar *summary_for(const struct explain_summary *s, const struct ctr *c)
{
	size_t i;

	for (i = 0; i < s->nsidecars; i++)
		if (strcmp(s->sidecars[i].name, c->name) == 0 || (c->p && strcmp(s->sidecars[i].name, c->p->name) == 0))
			return &s->sidecars[i];
	return s->nsidecars == 1 ? &s->sidecars[0] : NULL;
}

/* ---- judging one pod ---------------------------------------------------------------- */

struct judge {
	struct explain_report *r;
	struct ystream *s; /* where the object being judged was read (the plan may copy into its arena) */
	char *err;		 /* a List's item read apart: where its error goes */
	size_t errlen;
};

/* The agent's hook that holds the apps until the sidecars are ready (rearguard inject --gate). */
static bool has_gate(const struct ctr *agent)
{
	const struct ynode *cmd = agent ? seq_at(ydoc_path(agent->spec, "lifecycle.postStart.exec"), "command") : NULL;
	bool wait = false, ready = false;
	size_t i;

	for (i = 0; cmd && i < cmd->n; i++) {
		wait |= inject_is(cmd->items[i], "wait");
		ready |= inject_is(cmd->items[i], "ready");
	}
	return wait && ready;
}

/* Seconds of a duration as the agent's options take it (a bare number is seconds), or dflt. */
static int64_t seconds(const char *v, const char *dflt)
{
	int64_t ms;

	if (!v || parse_duration_ms(v, &ms) < 0)
		parse_duration_ms(dflt, &ms);
	return ms / 1000;
}

/* A pod with the agent: what the agent did, or is doing, as its status and message show. */
static void judge_agent(struct judge *j, struct explain_item *it, struct pod *p, bool apps_done, const char *done_at,
			struct ctr *runs_on)
{
	struct ctr *a = p->agent;
	struct explain_summary sum;
	const struct explain_sidecar *sc = NULL;
	const char *rc;
	char d[160];

	if (runs_on)
		describe(runs_on, d, sizeof(d));
	if (a->state == CS_RUNNING || a->state == CS_WAITING || a->state == CS_NONE) {
		int64_t limit = seconds(agent_env(a, "REARGUARD_STOP_TIMEOUT"), DEFAULT_STOP_TIMEOUT) +
				seconds(agent_env(a, "REARGUARD_KILL_AFTER"), DEFAULT_KILL_AFTER);
		int64_t done = rfc3339(done_at), now = j->r->o.now_us / 1000000;

		if (!apps_done || !runs_on) {
			it->verdict = EXPLAIN_FINE;
			it->reason = EXPLAIN_COVERED;
			say(it, "rearguard is in the pod (container %s, %s)%s", a->name,
			    a->state == CS_RUNNING ? "running" : "not running yet",
			    apps_done ? "; the apps finished and no sidecar runs" : "; it stops the sidecars once the apps finish");
			return;
		}
		set_container(it, runs_on->name, runs_on->p);
		set_since(it, done_at);
		if (done >= 0 && now > 0 && now - done > limit + 60) {
			it->verdict = EXPLAIN_HUNG_AGENT;
			it->reason = EXPLAIN_AGENT_WAITING;
			say(it, "the apps finished at %s; %s still runs, and so does the agent, %lld s later: longer than "
				"its --stop-timeout and --kill-after (%lld s in all)",
			    done_at, d, (long long)(now - done), (long long)limit);
			if (!inject_is(ydoc_get(p->spec, "shareProcessNamespace"), "true")) {
				say(it, "shareProcessNamespace is not true: the agent cannot see the other containers' processes");
				fix(it, EXPLAIN_FIX_SHARE,
				    "shareProcessNamespace: true in the pod template (rearguard inject sets it)");
			}
			fix(it, EXPLAIN_FIX_STOP, "see what the agent is waiting for: kubectl logs %s -n %s -c %s", p->name,
			    p->ns, a->name);
		} else {
			it->verdict = EXPLAIN_FINE;
			it->reason = EXPLAIN_STOPPING;
			say(it, "the apps finished at %s; the agent is stopping %s (within --stop-timeout and --kill-after, "
				"%lld s)",
			    done_at ? done_at : "an unknown time", d, (long long)limit);
		}
		return;
	}
	/* The agent ended: its message says what it did. */
	explain_summary_read(a->message, a->message ? strlen(a->message) : 0, &sum);
	if (!runs_on) {
		it->verdict = EXPLAIN_FINE;
		it->reason = EXPLAIN_COVERED;
		say(it, "rearguard stopped the sidecars (agent exit %d%s%s)", a->code, sum.read ? ", reason " : "",
		    sum.read ? sum.reason : "");
		return;
	}
	set_container(it, runs_on->name, runs_on->p);
	set_since(it, apps_done ? done_at : NULL);
	it->verdict = apps_done ? EXPLAIN_HUNG_AGENT : EXPLAIN_AT_RISK;
	if (apps_done)
		say(it, "the apps finished at %s; %s runs on, and the agent ended (exit %d%s%s)", done_at ? done_at : "?",
		    d, a->code, a->why ? ", " : "", a->why ? a->why : "");
	else
		say(it, "the agent ended (exit %d%s%s) while the apps run: %s will run on after them", a->code,
		    a->why ? ", " : "", a->why ? a->why : "", d);
	if (!sum.read) {
		if (has_gate(a) && (a->code == 137 || a->code == 143 || a->code == 2 || a->code == 1)) {
			it->reason = EXPLAIN_GATE_TIMEOUT;
			say(it, "the agent's postStart hook (rearguard wait ready, the start gate) failed: the sidecars were "
				"not ready within its --timeout, and the kubelet killed the agent (FailedPostStartHook) "
				"before it wrote a summary");
			fix(it, EXPLAIN_FIX_READY,
			    "find why %s never answered its readiness URL (kubectl logs %s -n %s -c %s; the agent's log "
			    "names its last answer), or give the gate's hook a longer --timeout",
			    runs_on->name, p->name, p->ns, runs_on->name);
		} else {
			it->reason = EXPLAIN_AGENT_ENDED;
			say(it, "its termination message is %s", a->message && *a->message ? "no summary of rearguard's" : "empty");
			fix(it, EXPLAIN_FIX_STOP, "see why the agent ended: kubectl logs %s -n %s -c %s", p->name, p->ns,
			    a->name);
		}
		return;
	}
	if (*sum.error)
		say(it, "the agent's summary: %s", sum.error);
	sc = summary_for(&sum, runs_on);
	if (strcmp(sum.reason, "startup-timeout") == 0) {
		rc = agent_env(a, "REARGUARD_APPS");
		it->reason = EXPLAIN_APPS_NEVER_SEEN;
		say(it, "the agent gave up waiting for the apps (reason startup-timeout): it saw fewer than "
			"REARGUARD_APPS=%s within --startup-timeout",
		    rc ? rc : "?");
		if (!inject_is(ydoc_get(p->spec, "shareProcessNamespace"), "true"))
			fix(it, EXPLAIN_FIX_SHARE,
			    "shareProcessNamespace: true in the pod template: without it the agent sees no other container");
		fix(it, EXPLAIN_FIX_APPS,
		    "make REARGUARD_APPS the number of app containers, and start the agent first (rearguard inject "
		    "writes both)");
		return;
	}
	if (!sc) {
		it->reason = EXPLAIN_NOT_KNOWN;
		say(it, "the agent's summary lists no sidecar for %s: it did not know it for one", runs_on->name);
		fix(it, EXPLAIN_FIX_NAME_SIDECAR,
		    "name it a sidecar: the annotation %s: \"%s\" on the pod template, and rearguard inject it again (or "
		    "add its spec to the agent's REARGUARD_SIDECARS)",
		    INJECT_SIDECARS, runs_on->name);
		return;
	}
	if (sc->status)
		say(it, "the agent's summary: sidecar %s, stopped by %s: %s, the stop answered %d", sc->name,
		    sc->method[0] ? sc->method : "?", sc->outcome, sc->status);
	else
		say(it, "the agent's summary: sidecar %s, stopped by %s: %s", sc->name, sc->method[0] ? sc->method : "?",
		    sc->outcome);
	if (sc->status >= 400 && sc->status < 500) {
		const char *advice = stop_advice(runs_on->p, sc->status);

		it->reason = EXPLAIN_STOP_REFUSED;
		if (advice)
			say(it, "%s", advice);
		if (strcmp(sc->outcome, "not-permitted") == 0)
			say(it, "its stop endpoint said no (%d) and the SIGTERM that follows was not permitted", sc->status);
		if (runs_on->p && runs_on->p->fix_key)
			fix(it, EXPLAIN_FIX_ANNOTATION,
			    "turn its stop endpoint on: the annotation %s: \"%s\" on the pod template (rearguard inject adds "
			    "it)",
			    runs_on->p->fix_key, runs_on->p->fix_value);
		else if (advice)
			fix(it, EXPLAIN_FIX_ANNOTATION, "%s", advice);
		if (strcmp(sc->outcome, "not-permitted") == 0)
			fix_uid(it, runs_on);
		return;
	}
	if (strcmp(sc->outcome, "not-permitted") == 0) {
		it->reason = EXPLAIN_NOT_PERMITTED;
		say(it, "the agent was not permitted to signal %s: a signal needs the same uid, or root with CAP_KILL",
		    runs_on->name);
		fix_uid(it, runs_on);
		return;
	}
	if (strcmp(sc->outcome, "still-running") == 0) {
		it->reason = EXPLAIN_IGNORED_STOP;
		say(it, "%s outlived its stop, SIGTERM and SIGKILL", runs_on->name);
		fix(it, EXPLAIN_FIX_STOP,
		    "give %s a stop it honours (stop=signal:QUIT or its own endpoint, in %s or REARGUARD_SIDECARS), "
		    "and see its log: kubectl logs %s -n %s -c %s",
		    runs_on->name, INJECT_SIDECARS, p->name, p->ns, runs_on->name);
		return;
	}
	it->reason = EXPLAIN_AGENT_ENDED;
	fix(it, EXPLAIN_FIX_STOP, "see the agent's log: kubectl logs %s -n %s -c %s", p->name, p->ns, a->name);
}

/* A pod that ended Failed: who failed it. */
static void judge_failed(struct explain_item *it, struct pod *p)
{
	struct ctr *bad = NULL, *app = NULL;
	struct explain_summary sum = {0};
	size_t i;

	for (i = 0; i < p->n; i++) {
		struct ctr *c = &p->c[i];

		if (c->state != CS_TERMINATED || c->code <= 0)
			continue;
		if (c->role == ROLE_APP && !app)
			app = c;
		else if (c->role == ROLE_NATIVE && (c->code == 137 || c->code == 143))
			say(it, "native sidecar %s exited %d%s when the pod ended: Kubernetes' normal teardown, not the "
				"cause",
			    c->name, c->code, code_meaning(c->code));
		else if ((c->role == ROLE_SIDECAR || c->role == ROLE_AGENT || c->role == ROLE_NATIVE) &&
			 (!bad || bad->role == ROLE_AGENT))
			bad = c;
	}
	if (!bad) {
		it->verdict = EXPLAIN_FINE;
		it->reason = EXPLAIN_APP_FAILED;
		if (app) {
			set_container(it, app->name, NULL);
			it->unknown = false;
			it->exit_code = app->code;
			say(it, "app %s exited %d%s: the pod failed because of its app, not of a sidecar", app->name,
			    app->code, code_meaning(app->code));
		} else {
			say(it, "the pod failed%s%s, and no sidecar's exit code did it",
			    str_at(p->status, "reason") ? ": " : "", str_at(p->status, "reason") ? str_at(p->status, "reason") : "");
		}
		return;
	}
	it->verdict = EXPLAIN_SIDECAR_FAILED;
	set_container(it, bad->name, bad->p);
	it->exit_code = bad->code;
	set_since(it, bad->finished);
	if (p->agent && p->agent->state == CS_TERMINATED)
		explain_summary_read(p->agent->message, p->agent->message ? strlen(p->agent->message) : 0, &sum);
	if (bad->role == ROLE_AGENT) {
		struct ctr who = {.name = sum.failed_name};

		it->reason = EXPLAIN_AGENT_EXIT;
		say(it, "the agent (container %s) exited %d%s, which fails the pod under restartPolicy %s", bad->name,
		    bad->code, code_meaning(bad->code), p->policy ? p->policy : "Never");
		if (sum.read && *sum.error)
			say(it, "its summary: %s", sum.error);
		if (bad->code == 2)
			fix(it, EXPLAIN_FIX_STOP, "the agent's configuration was refused (exit 2): kubectl logs %s -n %s -c %s",
			    p->name, p->ns, bad->name);
		else if (sum.read && strstr(sum.error, "not permitted"))
			fix_uid(it, &who);
		else
			fix(it, EXPLAIN_FIX_STOP, "see the agent's log: kubectl logs %s -n %s -c %s", p->name, p->ns,
			    bad->name);
	} else {
		const struct explain_sidecar *sc = sum.read ? summary_for(&sum, bad) : NULL;
		char d[160];

		describe(bad, d, sizeof(d));
		it->reason = EXPLAIN_SIDECAR_EXIT;
		say(it, "sidecar %s exited %d%s, which fails the pod under restartPolicy %s%s%s", d, bad->code,
		    code_meaning(bad->code), p->policy ? p->policy : "Never", app ? "; its app exited too: " : "",
		    app ? app->name : "");
		if (sc && (strcmp(sc->outcome, "killed") == 0 || strcmp(sc->outcome, "terminated") == 0)) {
			say(it, "the agent's summary: %s was %s: it did not end on its stop (%s)%s", sc->name, sc->outcome,
			    sc->method, strcmp(sc->outcome, "killed") == 0 ? " nor on SIGTERM, and was killed after --kill-after" : "");
			fix(it, EXPLAIN_FIX_STOP,
			    "give %s a stop it honours (stop=signal:QUIT, signal:INT or its own endpoint, in %s or "
			    "REARGUARD_SIDECARS), or a longer --stop-timeout (REARGUARD_STOP_TIMEOUT) if it only drains "
			    "slowly",
			    bad->name, INJECT_SIDECARS);
		} else if (sc) {
			say(it, "the agent's summary: %s, %s", sc->name, sc->outcome);
		} else if (!p->agent) {
			say(it, "no agent stopped it: it ended by itself");
		}
		if (bad->p && bad->p->exit_fix)
			fix(it, EXPLAIN_FIX_EXIT, "%s", bad->p->exit_fix);
		else
			fix(it, EXPLAIN_FIX_EXIT, "see why it exited %d: kubectl logs %s -n %s -c %s", bad->code, p->name,
			    p->ns, bad->name);
	}
}

/* The pod's apps: whether all ended, and the last one's end. */
static bool apps_ended(const struct pod *p, const char **last, size_t *napps)
{
	bool done = true;
	size_t i;

	*last = NULL;
	*napps = 0;
	for (i = p->ninit; i < p->n; i++) {
		const struct ctr *c = &p->c[i];

		if (c->role != ROLE_APP)
			continue;
		(*napps)++;
		if (c->state != CS_TERMINATED)
			done = false;
		else if (c->finished && (!*last || strcmp(c->finished, *last) > 0))
			*last = c->finished;
	}
	return done && *napps > 0;
}

/*
 * In a Job's pod in which no preset knows a container: the apps are those
 * that ended, the ones that run on are the sidecars. Only when some ended
 * and some run; they become sidecars no preset knows.
 */
static void unknown_runs_on(struct pod *p)
{
	size_t i, ended = 0, running = 0, other = 0;

	for (i = p->ninit; i < p->n; i++)
		if (p->c[i].role == ROLE_SIDECAR)
			return; /* a sidecar is known: the apps are the others */
	for (i = p->ninit; i < p->n; i++) {
		const struct ctr *c = &p->c[i];

		if (c->role != ROLE_APP)
			continue;
		if (c->state == CS_TERMINATED)
			ended++;
		else if (c->state == CS_RUNNING)
			running++;
		else
			other++;
	}
	if (!ended || !running || other)
		return;
	for (i = p->ninit; i < p->n; i++)
		if (p->c[i].role == ROLE_APP && p->c[i].state == CS_RUNNING)
			p->c[i].role = ROLE_SIDECAR;
}

static int judge_pod(struct judge *j, const struct ynode *obj)
{
	struct pod p = {.obj = obj};
	const struct ynode *owners;
	struct explain_item *it;
	struct ctr *runs_on = NULL, *plain = NULL, *init_sidecar = NULL;
	const char *done_at, *v;
	bool apps_done, natives = false;
	size_t i, napps;
	char d[160];
	int rc;

	p.meta = ydoc_get(obj, "metadata");
	p.spec = ydoc_get(obj, "spec");
	p.status = ydoc_get(obj, "status");
	p.ns = str_at(obj, "metadata.namespace");
	p.name = str_at(obj, "metadata.name");
	if (!p.ns)
		p.ns = "default";
	owners = seq_at(p.meta, "ownerReferences");
	for (i = 0; owners && i < owners->n && !p.job; i++)
		if (inject_is(ydoc_get(owners->items[i], "kind"), "Job"))
			p.job = ydoc_value(ydoc_get(owners->items[i], "name"));
	p.policy = ydoc_value(ydoc_get(p.spec, "restartPolicy"));
	p.phase = str_at(p.status, "phase");
	p.job_pod = p.job || (p.policy && strcmp(p.policy, "Always") != 0);
	it = item_new(j->r, EXPLAIN_POD, p.ns, p.name, p.job);
	if (!it)
		return -ENOMEM;
	rc = read_containers(&p);
	if (rc < 0)
		return rc;
	for (i = 0; i < p.n; i++)
		if (p.c[i].role == ROLE_NATIVE)
			natives = true;
	it->native = natives;
	it->agent = p.agent != NULL;
	v = inject_meta_value(p.meta, AGENT_LABEL);
	it->ns_labelled = v && strcmp(v, "enabled") == 0;
	if (!p.job_pod) {
		it->reason = EXPLAIN_NOT_A_JOB;
		say(it, "restartPolicy %s: not a pod that is meant to end", p.policy ? p.policy : "Always (the default)");
		goto out;
	}
	if (p.phase && strcmp(p.phase, "Failed") == 0) {
		judge_failed(it, &p);
		goto out;
	}
	if (p.phase && strcmp(p.phase, "Succeeded") == 0) {
		it->reason = EXPLAIN_COMPLETED;
		for (i = 0; i < p.n; i++)
			if (p.c[i].role == ROLE_NATIVE && (p.c[i].code == 137 || p.c[i].code == 143)) {
				it->reason = EXPLAIN_NATIVE_TEARDOWN;
				set_container(it, p.c[i].name, p.c[i].p);
				say(it, "native sidecar %s exited %d%s when the apps were done: Kubernetes stops native "
					"sidecars that way at a pod's normal end, and it does not fail the pod",
				    p.c[i].name, p.c[i].code, code_meaning(p.c[i].code));
			}
		say(it, "the pod succeeded");
		goto out;
	}
	/* Running or Pending: an init container that holds the pod, the apps, what runs on. */
	for (i = 0; i < p.ninit && !init_sidecar; i++)
		if (p.c[i].role == ROLE_INIT && p.c[i].p && !p.c[i].p->helper && p.c[i].state != CS_TERMINATED)
			init_sidecar = &p.c[i];
	if (init_sidecar) {
		it->verdict = EXPLAIN_AT_RISK;
		it->reason = EXPLAIN_INIT_SIDECAR;
		it->plain = true;
		set_container(it, init_sidecar->name, init_sidecar->p);
		set_since(it, init_sidecar->started);
		say(it, "%s is %s in initContainers without restartPolicy: Always: an init container must end before "
			"the next one and the apps start, and a sidecar never ends",
		    init_sidecar->name, init_sidecar->p->title);
		if (init_sidecar->state == CS_RUNNING)
			say(it, "it runs%s%s, and the apps wait for it (PodInitializing)",
			    init_sidecar->started ? " since " : "", init_sidecar->started ? init_sidecar->started : "");
		fix(it, EXPLAIN_FIX_INIT_RESTART,
		    "make it a native sidecar: restartPolicy: Always on init container %s (Kubernetes 1.28 and later)",
		    init_sidecar->name);
		fix(it, EXPLAIN_FIX_INJECT,
		    "on an older cluster, move it to containers and add rearguard (rearguard inject, or the "
		    "namespace's label for the webhook)");
		goto out;
	}
	if (!p.agent)
		unknown_runs_on(&p);
	apps_done = apps_ended(&p, &done_at, &napps);
	for (i = p.ninit; i < p.n; i++) {
		struct ctr *c = &p.c[i];

		if (c->role != ROLE_SIDECAR)
			continue;
		if (!plain)
			plain = c;
		if (c->state == CS_RUNNING && !runs_on)
			runs_on = c;
	}
	it->plain = plain != NULL;
	if (p.agent) {
		judge_agent(j, it, &p, apps_done, done_at, runs_on);
		goto out;
	}
	if (!plain && !p.phase) {
		/* A pod not yet created (a manifest): its injectors have not run, the webhook knows what they add. */
		const struct spec_preset *asked = injected(p.meta);

		rc = explain_webhook_would(j->s, p.meta, p.spec, p.ns, &j->r->o.inject, it);
		if (rc < 0)
			return rc;
		if (it->webhook == EXPLAIN_WEBHOOK_ADD) {
			it->verdict = EXPLAIN_AT_RISK;
			it->reason = EXPLAIN_NO_AGENT;
			it->plain = true;
			set_container(it, asked && asked->containers[0] ? asked->containers[0] : asked ? asked->name : NULL,
				      asked);
			say(it, "a pod not created yet, whose %s will be added by its injector, and no rearguard: it will "
				"run on after the apps",
			    asked ? asked->title : "sidecar");
			fixes_asked(it, asked, &p, "pod");
			goto out;
		}
	}
	if (!plain) {
		it->reason = natives ? EXPLAIN_NATIVE : EXPLAIN_NO_SIDECAR;
		say(it, natives ? "its sidecars are native: the kubelet stops them after the apps"
				: "no container in it is a sidecar: nothing runs on after the apps");
		goto out;
	}
	rc = explain_webhook_would(j->s, p.meta, p.spec, p.ns, &j->r->o.inject, it);
	if (rc < 0)
		return rc;
	if (apps_done && runs_on) {
		describe(runs_on, d, sizeof(d));
		it->verdict = EXPLAIN_HUNG;
		it->reason = EXPLAIN_RUNS_ON;
		set_container(it, runs_on->name, runs_on->p);
		set_since(it, done_at);
		say(it, "the apps finished at %s; %s runs on%s%s", done_at ? done_at : "?", d,
		    runs_on->started ? ", started " : "", runs_on->started ? runs_on->started : "");
		say(it, "it is a plain container that never exits by itself, and a pod ends only when every container "
			"has exited: the %s never completes",
		    p.job ? "Job" : "pod");
	} else {
		const struct ctr *c = runs_on ? runs_on : plain;

		describe(c, d, sizeof(d));
		it->verdict = EXPLAIN_AT_RISK;
		it->reason = EXPLAIN_NO_AGENT;
		set_container(it, c->name, c->p);
		say(it, "the apps still run, beside %s and no rearguard: when they exit, it will run on and the %s "
			"will never complete",
		    d, p.job ? "Job" : "pod");
	}
	if (it->ns_labelled && it->webhook == EXPLAIN_WEBHOOK_ADD && !inject_meta_value(p.meta, REVIEW_INJECTED))
		say(it, "it is labelled %s=enabled but has no %s annotation: the webhook did not see it", AGENT_LABEL,
		    REVIEW_INJECTED);
	fixes_plain(it, runs_on ? runs_on : plain, &p, p.job ? "Job" : "pod");
out:
	free(p.c);
	return 0;
}

/* ---- Jobs and CronJobs, by their templates ------------------------------------------------ */

static int judge_template(struct judge *j, const struct ynode *obj, bool cron)
{
	const struct ynode *tmpl = ydoc_path(obj, cron ? "spec.jobTemplate.spec.template" : "spec.template");
	const struct ynode *conds = seq_at(ydoc_get(obj, "status"), "conditions");
	struct pod p = {.obj = obj};
	struct explain_item *it;
	struct ctr *plain = NULL;
	const char *ns = str_at(obj, "metadata.namespace"), *owner = NULL, *v;
	const struct ynode *owners = seq_at(ydoc_get(obj, "metadata"), "ownerReferences");
	size_t i;
	int rc;

	if (!ns)
		ns = "default";
	for (i = 0; owners && i < owners->n && !owner; i++)
		if (inject_is(ydoc_get(owners->items[i], "kind"), "CronJob"))
			owner = ydoc_value(ydoc_get(owners->items[i], "name"));
	it = item_new(j->r, cron ? EXPLAIN_CRONJOB : EXPLAIN_JOB, ns, str_at(obj, "metadata.name"), owner);
	if (!it)
		return -ENOMEM;
	for (i = 0; conds && i < conds->n; i++)
		if ((inject_is(ydoc_get(conds->items[i], "type"), "Complete") ||
		     inject_is(ydoc_get(conds->items[i], "type"), "Failed")) &&
		    inject_is(ydoc_get(conds->items[i], "status"), "True")) {
			it->reason = EXPLAIN_COMPLETED;
			say(it, "the Job ended (%s)", ydoc_str(ydoc_get(conds->items[i], "type")));
			return 0;
		}
	p.meta = ydoc_get(tmpl, "metadata");
	p.spec = ydoc_get(tmpl, "spec");
	p.ns = ns;
	p.name = it->name;
	rc = read_containers(&p);
	if (rc < 0)
		return rc;
	it->agent = p.agent != NULL;
	v = inject_meta_value(p.meta, AGENT_LABEL);
	it->ns_labelled = v && strcmp(v, "enabled") == 0;
	for (i = 0; i < p.n; i++) {
		if (p.c[i].role == ROLE_NATIVE)
			it->native = true;
		if (!plain && (p.c[i].role == ROLE_SIDECAR || (p.c[i].role == ROLE_INIT && p.c[i].p && !p.c[i].p->helper)))
			plain = &p.c[i];
	}
	it->plain = plain != NULL;
	if (p.agent) {
		it->reason = EXPLAIN_COVERED;
		say(it, "its pod template has rearguard (container %s)", p.agent->name);
	} else if (plain && plain->role == ROLE_INIT) {
		it->verdict = EXPLAIN_AT_RISK;
		it->reason = EXPLAIN_INIT_SIDECAR;
		set_container(it, plain->name, plain->p);
		say(it, "its pod template puts %s (%s) in initContainers without restartPolicy: Always: its pods will "
			"never start their apps",
		    plain->name, plain->p->title);
		fix(it, EXPLAIN_FIX_INIT_RESTART,
		    "make it a native sidecar: restartPolicy: Always on init container %s (Kubernetes 1.28 and later)",
		    plain->name);
	} else {
		/* What the webhook would do: it also sees the sidecars an injector is asked for, which no container shows yet. */
		rc = explain_webhook_would(j->s, p.meta, p.spec, ns, &j->r->o.inject, it);
		if (rc < 0) {
			free(p.c);
			return rc;
		}
		if (it->webhook == EXPLAIN_WEBHOOK_ADD || (plain && !plain->p)) {
			const struct spec_preset *asked = injected(p.meta);
			char d[160];

			it->verdict = EXPLAIN_AT_RISK;
			it->reason = EXPLAIN_NO_AGENT;
			it->plain = true;
			if (plain) {
				describe(plain, d, sizeof(d));
				set_container(it, plain->name, plain->p);
			} else if (asked) {
				snprintf(d, sizeof(d), "%s (%s, which %s asks its injector for)",
					 asked->containers[0] ? asked->containers[0] : asked->name, asked->title,
					 asked->inject_key);
				set_container(it, asked->containers[0] ? asked->containers[0] : asked->name, asked);
			} else {
				snprintf(d, sizeof(d), "a sidecar the webhook knows");
			}
			say(it, "its pod template has %s and no rearguard: each pod will run on after its apps exit, and "
				"the Job never completes",
			    d);
			if (cron && inject_is(ydoc_path(obj, "spec.concurrencyPolicy"), "Forbid"))
				say(it, "concurrencyPolicy: Forbid: once one Job hangs, no later one starts");
			p.job = cron ? NULL : it->name;
			if (plain)
				fixes_plain(it, plain, &p, cron ? "CronJob" : "Job");
			else
				fixes_asked(it, asked, &p, cron ? "CronJob" : "Job");
		} else {
			it->reason = it->native ? EXPLAIN_NATIVE : EXPLAIN_NO_SIDECAR;
			say(it, it->native ? "its sidecars are native: the kubelet stops them after the apps"
					   : "its pod template shows no sidecar the webhook would stop");
		}
	}
	free(p.c);
	return 0;
}

/* ---- namespaces ------------------------------------------------------------------------------ */

/* A new row of the namespaces' table, at its end; NULL when out of memory. */
static struct explain_ns *ns_append(struct explain_report *r, const char *name)
{
	struct explain_ns *n;
	void *grown;

	if (!(grown = array_grow(r->nss, r->nns, &r->nscap, sizeof(*r->nss), 16)))
		return NULL;
	r->nss = grown;
	n = &r->nss[r->nns];
	memset(n, 0, sizeof(*n));
	n->name = strdup(name);
	if (!n->name)
		return NULL;
	r->nns++;
	return n;
}

/* The row of a namespace, made when make and missing (a Namespace object read: once each). */
static struct explain_ns *ns_find(struct explain_report *r, const char *name, bool make)
{
	size_t i;

	for (i = 0; i < r->nns; i++)
		if (strcmp(r->nss[i].name, name) == 0)
			return &r->nss[i];
	return make ? ns_append(r, name) : NULL;
}

static int read_namespace(struct explain_report *r, const struct ynode *obj)
{
	const char *name = str_at(obj, "metadata.name"), *v;
	struct explain_ns *n;

	/* Not ydoc_path: it splits at dots, and the label's key has them. */
	v = ydoc_value(ydoc_get(ydoc_path(obj, "metadata.labels"), AGENT_LABEL));
	if (!name)
		return 0;
	n = ns_find(r, name, true);
	if (!n)
		return -ENOMEM;
	n->seen = true;
	n->labelled = v && strcmp(v, "enabled") == 0;
	n->disabled = v && strcmp(v, "disabled") == 0;
	return 0;
}

/* ---- the input --------------------------------------------------------------------------------- */

static int fail_at(const struct ynode *at, char *err, size_t errlen, const char *fmt, ...) RG_PRINTF(4, 5);

static int fail_at(const struct ynode *at, char *err, size_t errlen, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%zu:%zu: %s", at && at->line ? at->line : (size_t)1,
		 at && at->column ? at->column : (size_t)1, msg);
	return -EINVAL;
}

/* What a node is, for an error: "a list", "a string". */
static const char *shape(const struct ynode *n)
{
	return n->kind == YNODE_SEQ ? "a list" : n->kind == YNODE_SCALAR ? "a scalar" : "an alias";
}

/* One Kubernetes object: judged when it is a Pod, a Job or a CronJob; a Namespace is read. */
static int object(struct judge *j, const struct ynode *obj, char *err, size_t errlen)
{
	const char *kind, *api;

	if (obj->kind != YNODE_MAP)
		return fail_at(obj, err, errlen, "%s where a Kubernetes object (with apiVersion and kind) should be",
			       shape(obj));
	kind = ydoc_value(ydoc_get(obj, "kind"));
	api = ydoc_value(ydoc_get(obj, "apiVersion"));
	if (!kind || !api)
		return fail_at(obj, err, errlen, "an object without %s: not a Kubernetes object as kubectl get prints it",
			       !kind ? "kind" : "apiVersion");
	j->r->objects++;
	if (strcmp(kind, "Pod") == 0 && strcmp(api, "v1") == 0)
		return judge_pod(j, obj);
	if (strcmp(kind, "Namespace") == 0 && strcmp(api, "v1") == 0)
		return read_namespace(j->r, obj);
	if (strncmp(api, "batch/", 6) == 0 && (strcmp(kind, "Job") == 0 || strcmp(kind, "CronJob") == 0))
		return judge_template(j, obj, strcmp(kind, "CronJob") == 0);
	return 0; /* a Deployment, a Service, ...: nothing of explain's */
}

static int document(struct judge *j, const struct ynode *root, char *err, size_t errlen)
{
	const struct ynode *items;
	const char *kind;
	size_t i;
	int rc;

	if (!root || ydoc_is_null(root))
		return 0;
	if (root->kind != YNODE_MAP)
		return fail_at(root, err, errlen,
			       "%s, not a Kubernetes object (kubectl get -o json or -o yaml prints one, or a List)",
			       shape(root));
	kind = ydoc_value(ydoc_get(root, "kind"));
	items = ydoc_get(root, "items");
	if (items && (!kind || (strlen(kind) >= 4 && strcmp(kind + strlen(kind) - 4, "List") == 0))) {
		if (!kind)
			return fail_at(root, err, errlen,
				       "items without a kind: not a whole List (a truncated dump? kubectl prints the "
				       "List's kind after its items)");
		if (!ydoc_is_null(items) && items->kind != YNODE_SEQ)
			return fail_at(items, err, errlen, "a List's items are %s, not a list", shape(items));
		for (i = 0; items->kind == YNODE_SEQ && i < items->n; i++) {
			rc = object(j, items->items[i], err, errlen);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	return object(j, root, err, errlen);
}

/*
 * A parse error at the input's very end is a cut input more likely than a
 * wrong one (a dump that was truncated, a copy that stopped): said so.
 */
static void at_the_end(const char *in, size_t len, char *err, size_t errlen)
{
	const char *nl = memrchr(in, '\n', len);
	size_t lines = 1, line, col, i, n = strlen(err);

	for (i = 0; i < len; i++)
		lines += in[i] == '\n';
	if (sscanf(err, "%zu:%zu:", &line, &col) != 2)
		return;
	if (line >= lines && col >= len - (nl ? (size_t)(nl - in) + 1 : 0) && n + 1 < errlen)
		snprintf(err + n, errlen - n, " (the input ends there: a truncated dump?)");
}

/* One item of a JSON List, read apart in its own stream (ydoc_parse_json_items): judged now. */
static int list_item(void *data, struct ystream *is, struct ynode *n)
{
	struct judge *j = data;
	struct ystream *keep = j->s;
	int rc;

	j->s = is;
	rc = object(j, n, j->err, j->errlen);
	j->s = keep;
	return rc;
}

/* Forgets what was judged of an input that turned out bad. */
static void roll_back(struct explain_report *r, size_t n, size_t nns)
{
	while (r->n > n)
		item_free(&r->items[--r->n]);
	while (r->nns > nns)
		free(r->nss[--r->nns].name);
}

void explain_report_init(struct explain_report *r, const struct explain_options *o)
{
	memset(r, 0, sizeof(*r));
	r->o = *o;
}

int explain_buffer(struct explain_report *r, const char *in, size_t len, char *err, size_t errlen)
{
	struct judge j = {.r = r, .err = err, .errlen = errlen};
	struct ystream s;
	size_t i = 0, before = r->n, nsbefore = r->nns;
	int rc;

	while (i < len && (in[i] == ' ' || in[i] == '\t' || in[i] == '\r' || in[i] == '\n'))
		i++;
	if (i == len) {
		snprintf(err, errlen, "1:1: empty: no Kubernetes object");
		return -EINVAL;
	}
	/*
	 * kubectl's JSON is JSON, read as the webhook reads it; anything else
	 * is YAML, and so is what starts as JSON and is none (YAML in flow
	 * style): a bad input's error is then the JSON reader's.
	 */
	rc = -EINVAL;
	if (in[i] == '{' || in[i] == '[') {
		/* A List's items are judged as they are read, each in a stream of its own: memory for one item. */
		rc = ydoc_parse_json_items(in, len, &s, list_item, &j, err, errlen);
		if (rc == -EINVAL) {
			char yerr[256];

			roll_back(r, before, nsbefore);
			rc = ydoc_parse(in, len, &s, yerr, sizeof(yerr));
			if (rc == -EINVAL)
				at_the_end(in, len, err, errlen);
		}
	} else {
		rc = ydoc_parse(in, len, &s, err, errlen);
		if (rc == -EINVAL)
			at_the_end(in, len, err, errlen);
	}
	if (rc < 0)
		return rc;
	j.s = &s;
	for (i = 0; i < s.ndocs && rc == 0; i++)
		rc = document(&j, s.docs[i].root, err, errlen);
	ydoc_free(&s);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (rc < 0)
		roll_back(r, before, nsbefore); /* nothing of a bad input is judged */
	return rc;
}

/* ---- once every input is read -------------------------------------------------------------------- */

/* Items ordered by namespace, then by name: a Job's, and its pods' by their Job. */
static int by_ns_job(const void *a, const void *b)
{
	const struct explain_item *x = *(const struct explain_item *const *)a, *y = *(const struct explain_item *const *)b;
	int c = strcmp(x->ns, y->ns);

	return c ? c : strcmp(x->kind == EXPLAIN_POD ? x->job : x->name, y->kind == EXPLAIN_POD ? y->job : y->name);
}

/*
 * Drops each Job some of whose pods were read: they are judged, not its
 * template. The pods are sorted by their Job once and each Job looked up
 * (n log n: a whole cluster's dump holds tens of thousands of both).
 */
static int drop_jobs_with_pods(struct explain_report *r)
{
	const struct explain_item **pods = malloc((r->n ? r->n : 1) * sizeof(*pods));
	size_t i, k = 0, npods = 0;

	if (!pods)
		return -ENOMEM;
	for (i = 0; i < r->n; i++)
		if (r->items[i].kind == EXPLAIN_POD && r->items[i].job)
			pods[npods++] = &r->items[i];
	qsort(pods, npods, sizeof(*pods), by_ns_job);
	for (i = 0; i < r->n; i++) {
		const struct explain_item *job = &r->items[i];

		if (job->kind == EXPLAIN_JOB && bsearch(&job, pods, npods, sizeof(*pods), by_ns_job)) {
			item_free(&r->items[i]);
			continue;
		}
		r->items[k++] = r->items[i];
	}
	r->n = k;
	free(pods);
	return 0;
}

static int ns_by_name(const void *a, const void *b)
{
	return strcmp(((const struct explain_ns *)a)->name, ((const struct explain_ns *)b)->name);
}

static struct explain_ns *ns_lookup(struct explain_report *r, const char *name)
{
	struct explain_ns key = {.name = (char *)(uintptr_t)name};

	return r->nns ? bsearch(&key, r->nss, r->nns, sizeof(*r->nss), ns_by_name) : NULL;
}

/*
 * Every item's namespace in the table, and the table sorted by name for
 * the lookups that follow (its rows made now for the namespaces no
 * Namespace object of the input gave).
 */
static int ns_complete(struct explain_report *r)
{
	size_t i, had;

	/* (qsort and bsearch take no NULL array, even of none: the table may have no row yet.) */
	if (r->nns > 1)
		qsort(r->nss, r->nns, sizeof(*r->nss), ns_by_name);
	had = r->nns;
	for (i = 0; i < r->n; i++) {
		struct explain_ns key = {.name = r->items[i].ns};

		if (r->items[i].reason == EXPLAIN_NOT_A_JOB ||
		    (had && bsearch(&key, r->nss, had, sizeof(*r->nss), ns_by_name)))
			continue;
		/* New rows go after the sorted ones, and are sorted in at the end; the same one made twice is no harm. */
		if (!ns_append(r, r->items[i].ns))
			return -ENOMEM;
	}
	if (r->nns > 1)
		qsort(r->nss, r->nns, sizeof(*r->nss), ns_by_name);
	/* The rows made twice: kept once. */
	for (i = had = 0; i < r->nns; i++) {
		if (had > 0 && strcmp(r->nss[had - 1].name, r->nss[i].name) == 0) {
			free(r->nss[i].name);
			continue;
		}
		r->nss[had++] = r->nss[i];
	}
	r->nns = had;
	return 0;
}

/* The label fix, worded now that the namespace's label is known. */
static void word_label(struct explain_item *it, const struct explain_ns *n)
{
	size_t i;

	for (i = 0; i < it->nfixes; i++) {
		struct explain_fix *f = &it->fixes[i];
		char text[512];

		if (f->kind != EXPLAIN_FIX_LABEL || f->text)
			continue;
		if (it->ns_labelled) {
			f->kind = EXPLAIN_FIX_WEBHOOK_DOWN;
			snprintf(text, sizeof(text),
				 "%s opted in (%s=enabled), yet the pod has no rearguard: the webhook did not see it "
				 "(no replica ready and failurePolicy Ignore, or not installed): kubectl -n "
				 "rearguard-system get deployment,pods; the Job's next pods get rearguard once it runs",
				 n && n->labelled ? "the namespace" : "the pod", AGENT_LABEL);
		} else {
			snprintf(text, sizeof(text),
				 "kubectl label namespace %s %s=enabled: the webhook adds rearguard to the pods created "
				 "there from then on (docs/webhook.md)",
				 it->ns, AGENT_LABEL);
		}
		f->text = strdup(text);
	}
}

int explain_finish(struct explain_report *r)
{
	size_t i;

	if (drop_jobs_with_pods(r) < 0 || ns_complete(r) < 0)
		return -ENOMEM;
	for (i = 0; i < r->n; i++) {
		struct explain_item *it = &r->items[i];
		struct explain_ns *n;

		if (it->reason == EXPLAIN_NOT_A_JOB || !(n = ns_lookup(r, it->ns)))
			continue;
		if (n->labelled && !it->ns_labelled) {
			it->ns_labelled = true;
			if (it->webhook == EXPLAIN_WEBHOOK_ADD && it->kind != EXPLAIN_POD && it->verdict == EXPLAIN_AT_RISK) {
				/* The webhook adds rearguard to the template's pods. */
				it->verdict = EXPLAIN_FINE;
				it->reason = EXPLAIN_COVERED;
				say(it, "its namespace is labelled %s=enabled: the webhook adds rearguard to its pods",
				    AGENT_LABEL);
				continue;
			}
			if (it->webhook == EXPLAIN_WEBHOOK_ADD && it->kind == EXPLAIN_POD)
				say(it, "its namespace is labelled %s=enabled, yet it has no rearguard: the webhook did not see it",
				    AGENT_LABEL);
		}
		if (it->ns_labelled && it->webhook == EXPLAIN_WEBHOOK_ADD && it->reason == EXPLAIN_NO_AGENT &&
		    it->kind == EXPLAIN_POD)
			it->reason = EXPLAIN_WEBHOOK_MISSED;
		word_label(it, n);
	}
	/* The table: what each namespace holds, and which label covers most. */
	r->best = NULL;
	for (i = 0; i < r->n; i++) {
		const struct explain_item *it = &r->items[i];
		struct explain_ns *n;

		if (it->reason == EXPLAIN_NOT_A_JOB || !(n = ns_lookup(r, it->ns)))
			continue;
		n->judged++;
		n->verdicts[it->verdict]++;
		n->covered += it->agent || (it->reason == EXPLAIN_COVERED);
		n->native += it->native;
		n->by_label += it->verdict != EXPLAIN_FINE && it->webhook == EXPLAIN_WEBHOOK_ADD && !it->ns_labelled &&
			       !n->disabled;
	}
	for (i = 0; i < r->nns; i++)
		if (r->nss[i].by_label > 0 && (!r->best || r->nss[i].by_label > r->best->by_label))
			r->best = &r->nss[i];
	return 0;
}

int explain_status(const struct explain_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->items[i].verdict != EXPLAIN_FINE)
			return 1;
	return 0;
}

void explain_report_free(struct explain_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		item_free(&r->items[i]);
	for (i = 0; i < r->nns; i++)
		free(r->nss[i].name);
	free(r->items);
	free(r->nss);
	memset(r, 0, sizeof(*r));
}
