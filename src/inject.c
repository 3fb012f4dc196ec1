#include "config.h"

#include "inject.h"

#include "argv.h"
#include "log.h"
#include "presets.h"
#include "util.h"
#include "yamldoc.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_SIDECARS 16
#define MAX_ARGV 64
#define AGENT_NAME "rearguard"
#define AGENT_UID "65532"
#define GATE_TIMEOUT "5m"

/* One run over a stream: the options in force and where the notes go. */
struct run {
	struct ystream *s;
	struct inject_options o;
	char *err;
	size_t errlen;
};

/* What the template shows: the sidecars, in --sidecar order, and the apps. */
struct found {
	char specs[MAX_SIDECARS][PRESET_SPEC_MAX];
	const struct spec_preset *presets[MAX_SIDECARS];
	size_t ctr[MAX_SIDECARS]; /* its container's index; NO_CTR: injected by a webhook */
	size_t n;
	size_t apps;
	bool sidecar_ctr[256]; /* per container: a sidecar */
};
#define NO_CTR ((size_t)-1)

/*
 * Names and kinds come from the input and may hold any byte a YAML escape
 * gives: a control character in a message becomes '?', so that a note or
 * an error stays one line.
 */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* One line for the user about a document: "LINE: what: message". */
static void note(struct run *r, const struct ynode *at, const char *what, const char *fmt, ...) RG_PRINTF(4, 5);

static void note(struct run *r, const struct ynode *at, const char *what, const char *fmt, ...)
{
	char msg[768], line[1024];
	va_list ap;

	if (!r->o.note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%zu: %s: %s", at ? at->line : (size_t)0, what, msg);
	one_line(line);
	r->o.note(r->o.note_data, line);
}

/* Stops the run: err gets "LINE:COL: what: message" and the caller gets -EINVAL. */
static int fail(struct run *r, const struct ynode *at, const char *what, const char *fmt, ...) RG_PRINTF(4, 5);

static int fail(struct run *r, const struct ynode *at, const char *what, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "%zu:%zu: %s: %s", at ? at->line : (size_t)1, at ? at->column : (size_t)1, what,
		 msg);
	if (r->errlen > 0)
		one_line(r->err);
	return -EINVAL;
}

/* Whether n is the scalar value (a missing node is not). */
static bool is(const struct ynode *n, const char *value)
{
	const char *v = ydoc_str(n);

	return v && strcmp(v, value) == 0;
}

/* A label or annotation of the template, annotations first (where injectors look first). */
static const char *meta_value(const struct ynode *meta, const char *key)
{
	const char *v = ydoc_str(ydoc_get(ydoc_get(meta, "annotations"), key));

	return v ? v : ydoc_str(ydoc_get(ydoc_get(meta, "labels"), key));
}

/*
 * command + args of a container as an argv; argv[0] NULL when there is no
 * command (the image's entrypoint runs). slots, when given, gets where
 * each argument lies in the tree (NULL for argv[0] then), for a fix in place.
 */
static size_t container_argv(const struct ynode *c, const char **argv, struct ynode ***slots)
{
	const struct ynode *cmd = ydoc_get(c, "command"), *args = ydoc_get(c, "args");
	size_t n = 0, i;

	if (cmd && cmd->kind == YNODE_SEQ && cmd->n > 0) {
		for (i = 0; i < cmd->n && n < MAX_ARGV; i++) {
			if (slots)
				slots[n] = &cmd->items[i];
			argv[n++] = ydoc_str(cmd->items[i]) ? ydoc_str(cmd->items[i]) : "";
		}
	} else {
		if (slots)
			slots[n] = NULL;
		argv[n++] = NULL;
	}
	if (args && args->kind == YNODE_SEQ)
		for (i = 0; i < args->n && n < MAX_ARGV; i++) {
			if (slots)
				slots[n] = &args->items[i];
			argv[n++] = ydoc_str(args->items[i]) ? ydoc_str(args->items[i]) : "";
		}
	return n == 1 && !argv[0] ? 0 : n;
}

/* An annotation of the template, for presets_spec. */
static const char *annotation(const void *meta, const char *key)
{
	return ydoc_str(ydoc_get(ydoc_get(meta, "annotations"), key));
}

/* A container that is rearguard already: by name, or by its image. */
static bool is_agent(const struct ynode *c)
{
	const char *image = ydoc_str(ydoc_get(c, "image"));

	return is(ydoc_get(c, "name"), AGENT_NAME) || (image && presets_image_is(image, AGENT_NAME));
}

/* Adds a sidecar once: a mesh both asked for and already in the template is one sidecar. */
static void add_sidecar(struct found *f, const struct spec_preset *p, size_t ctr)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->presets[i] == p && (f->ctr[i] == NO_CTR || ctr == NO_CTR))
			return;
	if (f->n < MAX_SIDECARS) {
		f->presets[f->n] = p;
		f->ctr[f->n++] = ctr;
	}
}

/*
 * The --sidecar SPEC of each sidecar, once the fixes are in: a
 * container's URLs where its flags put them, an injected one's where the
 * annotations do. Two containers of one program with the same spec are
 * one sidecar to the agent (its spec finds both).
 */
static int write_specs(struct run *r, const struct ynode *meta, const struct ynode *ctrs, struct found *f,
		       const struct ynode *at, const char *what)
{
	size_t i, k, n = 0;

	for (i = 0; i < f->n; i++) {
		const char *argv[MAX_ARGV];
		size_t argc = f->ctr[i] == NO_CTR ? 0 : container_argv(ctrs->items[f->ctr[i]], argv, NULL);
		bool dup = false;

		if (presets_spec(f->presets[i], argv, argc, annotation, meta, false, f->specs[n], sizeof(f->specs[n])) <
		    0)
			return fail(r, at, what, "the spec of %s is too long", f->presets[i]->name);
		for (k = 0; k < n; k++)
			dup |= strcmp(f->specs[k], f->specs[n]) == 0;
		if (dup)
			continue;
		f->presets[n] = f->presets[i];
		f->ctr[n++] = f->ctr[i];
	}
	f->n = n;
	return 0;
}

/*
 * The sidecars a template shows: those its annotations (or --mesh) ask an
 * injector for, in the table's order, then its own sidecar containers in
 * their order. Every other container is an app.
 */
static void find_sidecars(struct run *r, const struct ynode *meta, const struct ynode *ctrs, struct found *f,
			  const struct ynode *at, const char *what)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < spec_npresets; i++) {
		const struct spec_preset *p = &spec_presets[i];
		const char *v = p->inject_key ? meta_value(meta, p->inject_key) : NULL;
		bool on = false;
		size_t k;

		if (!p->inject_key)
			continue;
		for (k = 0; v && k < ARRAY_SIZE(p->inject_on) && p->inject_on[k]; k++)
			if (strcmp(v, p->inject_on[k]) == 0)
				on = true;
		if (!on && r->o.mesh && p->mesh && strcmp(r->o.mesh, p->mesh) == 0 &&
		    !(v && p->inject_off && strcmp(v, p->inject_off) == 0))
			on = true;
		if (on && p->none_key &&
		    strcasecmp(meta_value(meta, p->none_key) ? meta_value(meta, p->none_key) : "", "true") == 0) {
			note(r, at, what, "%s=true: %s runs as an init container only, no sidecar to stop", p->none_key,
			     p->name);
			on = false;
		}
		if (on)
			add_sidecar(f, p, NO_CTR);
	}
	for (i = 0; i < ctrs->n; i++) {
		const struct ynode *c = ctrs->items[i];
		const char *argv[MAX_ARGV];
		size_t argc = container_argv(c, argv, NULL);
		const struct spec_preset *p =
		    presets_container(ydoc_str(ydoc_get(c, "name")), ydoc_str(ydoc_get(c, "image")), argv, argc);

		if (p) {
			if (i < ARRAY_SIZE(f->sidecar_ctr))
				f->sidecar_ctr[i] = true;
			add_sidecar(f, p, i);
		} else {
			f->apps++;
		}
	}
}

/* ---- the fixes the sidecars need ------------------------------------------ */

static int fix_annotation(struct run *r, struct ynode *tmpl, struct ynode **meta, const char *key, const char *value,
			  const struct ynode *at, const char *what)
{
	struct ynode *ann;
	const char *v = ydoc_str(ydoc_get(ydoc_get(*meta, "annotations"), key));

	if (v) {
		if (strcmp(v, value) != 0)
			note(r, at, what, "%s is \"%s\", not %s: left as it is", key, v, value);
		return 0;
	}
	if (!*meta) {
		*meta = ydoc_new_map(r->s, false);
		if (!*meta || ydoc_set(r->s, tmpl, "metadata", *meta, true) < 0)
			return -ENOMEM;
	}
	ann = ydoc_want_map(r->s, *meta, "annotations");
	if (!ann)
		return fail(r, at, what, "metadata.annotations is not a mapping");
	return ydoc_set(r->s, ann, key, ydoc_scalar(r->s, value, YDOC_TEXT), false);
}

/*
 * The flags a sidecar's stop needs (its row's), each only when it is not
 * on: put first in args (cobra takes flags anywhere), or, where the
 * command line turns it off (--quitquitquit=false), turned on in place.
 */
static int fix_flags(struct run *r, struct ynode *c, const struct spec_preset *p, const struct ynode *at,
		     const char *what)
{
	struct ynode *args = ydoc_get(c, "args"), *flag;
	size_t i, added = 0;

	if (args && args->kind != YNODE_SEQ)
		return 0;
	for (i = 0; i < ARRAY_SIZE(p->flags) && p->flags[i].name; i++) {
		const char *argv[MAX_ARGV];
		struct ynode **slots[MAX_ARGV];
		size_t argc = container_argv(c, argv, slots);
		char word[64];
		struct goflag g;

		argv_goflag(argv, argc, p->flags[i].name, true, &g);
		if (g.on)
			continue;
		if (g.set && slots[g.at]) {
			/* The same dashes, without the value: the last one wins in Go, and it is this one. */
			const char *eq = strchr(argv[g.at], '=');
			struct ynode *old = *slots[g.at];

			snprintf(word, sizeof(word), "%.*s", eq ? (int)(eq - argv[g.at]) : 48, argv[g.at]);
			flag = ydoc_scalar(r->s, word, YDOC_TEXT);
			if (!flag)
				return -ENOMEM;
			flag->style = old->style;
			note(r, at, what, "%s turned off what %s's stop needs: set to %s", argv[g.at], p->name, word);
			*slots[g.at] = flag;
			continue;
		}
		if (!args) {
			args = ydoc_new_seq(r->s, false);
			if (!args || ydoc_set(r->s, c, "args", args, false) < 0)
				return -ENOMEM;
		}
		snprintf(word, sizeof(word), "--%s", p->flags[i].name);
		flag = ydoc_scalar(r->s, word, YDOC_TEXT);
		/* Quoted like the arguments around it. */
		if (flag && args->n > added && args->items[added]->kind == YNODE_SCALAR)
			flag->style = args->items[added]->style;
		if (ydoc_insert(r->s, args, added++, flag) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* What each sidecar of the template needs to be stopped cleanly. */
static int fix_sidecars(struct run *r, struct ynode *tmpl, struct ynode **meta, struct ynode *ctrs,
			const struct found *f, const struct ynode *at, const char *what)
{
	size_t i;
	int rc;

	for (i = 0; i < f->n; i++) {
		const struct spec_preset *p = f->presets[i];

		if (p->fix_key) {
			rc = fix_annotation(r, tmpl, meta, p->fix_key, p->fix_value, at, what);
			if (rc < 0)
				return rc;
		}
	}
	for (i = 0; i < f->n; i++) {
		if (f->ctr[i] == NO_CTR || !f->presets[i]->flags[0].name)
			continue;
		rc = fix_flags(r, ctrs->items[f->ctr[i]], f->presets[i], at, what);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- start gating ---------------------------------------------------------- */

/*
 * Whether start gating can work: every sidecar a webhook injects must be
 * put before the apps (and so before the agent, whose postStart hook holds
 * back the containers after it). Says why not.
 */
static bool can_gate(struct run *r, const struct ynode *meta, const struct found *f, const struct ynode *at,
		     const char *what)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct spec_preset *p = f->presets[i];
		const char *v = p->first_key ? meta_value(meta, p->first_key) : NULL;
		bool first;

		if (f->ctr[i] != NO_CTR)
			continue;
		if (!v)
			first = p->first_default;
		else if (p->first_word)
			first = presets_word_true(v, p->first_word);
		else
			first = !(p->first_off && strcmp(v, p->first_off) == 0);
		if (first)
			continue;
		if (p->first_word)
			note(r, at, what,
			     "not gated: %s's injector puts its sidecar after the containers unless %s sets "
			     "%s: true, so the agent's postStart hook would hold the sidecar back until it times out "
			     "(with %s it gates the app by itself)",
			     p->name, p->first_key, p->first_word, p->first_word);
		else if (p->first_key)
			note(r, at, what, "not gated: %s=%s puts %s's sidecar after the containers", p->first_key,
			     p->first_off, p->name);
		else
			note(r, at, what,
			     "not gated: %s's injector adds its sidecar after the containers, where the agent's "
			     "postStart hook would hold it back until it times out",
			     p->name);
		return false;
	}
	return true;
}

/* ---- the agent container ---------------------------------------------------- */

static struct ynode *pair_map(struct ystream *s, bool flow, const char *k1, struct ynode *v1, const char *k2,
			      struct ynode *v2)
{
	struct ynode *m = ydoc_new_map(s, flow);

	if (!m || ydoc_set(s, m, k1, v1, false) < 0 || (k2 && ydoc_set(s, m, k2, v2, false) < 0))
		return NULL;
	return m;
}

/* A string scalar, quoted where YAML would read it as something else. */
static struct ynode *text(struct ystream *s, const char *v)
{
	return ydoc_scalar(s, v, YDOC_TEXT);
}

/* A scalar written as is: a number or a boolean. */
static struct ynode *raw(struct ystream *s, const char *v)
{
	return ydoc_scalar(s, v, YDOC_RAW);
}

/* One {name, value} item of a container's env. */
static struct ynode *env_var(struct ystream *s, const char *name, const char *value)
{
	return pair_map(s, true, "name", text(s, name), "value", text(s, value));
}

/* The agent as manifests/ write it: non-root, read-only, no capabilities, small requests. */
static struct ynode *agent_container(struct run *r, const struct found *f, const char *policy, bool gate)
{
	struct ystream *s = r->s;
	struct ynode *c = ydoc_new_map(s, false), *env = ydoc_new_seq(s, false), *mounts = ydoc_new_seq(s, false);
	struct ynode *sc = ydoc_new_map(s, false), *drop = ydoc_new_seq(s, true), *res = ydoc_new_map(s, false);
	char apps[32], sidecars[1024] = "";
	size_t i;

	if (!c || !env || !mounts || !sc || !drop || !res)
		return NULL;
	snprintf(apps, sizeof(apps), "%zu", f->apps);
	for (i = 0; i < f->n; i++)
		snprintf(sidecars + strlen(sidecars), sizeof(sidecars) - strlen(sidecars), "%s%s", i ? ";" : "",
			 f->specs[i]);
	if (ydoc_set(s, c, "name", text(s, AGENT_NAME), false) < 0 ||
	    ydoc_set(s, c, "image", text(s, r->o.image ? r->o.image : INJECT_DEFAULT_IMAGE), false) < 0 ||
	    ydoc_append(s, env, env_var(s, "REARGUARD_APPS", apps)) < 0 ||
	    ydoc_append(s, env, env_var(s, "REARGUARD_RESTART_POLICY", policy)) < 0 ||
	    ydoc_append(s, env, env_var(s, "REARGUARD_SIDECARS", sidecars)) < 0 ||
	    ydoc_set(s, c, "env", env, false) < 0)
		return NULL;
	if (gate) {
		struct ynode *cmd = ydoc_new_seq(s, true);
		static const char *const words[] = {"/rearguard", "wait", "ready", "--timeout", GATE_TIMEOUT};

		for (i = 0; cmd && i < ARRAY_SIZE(words); i++)
			if (ydoc_append(s, cmd, text(s, words[i])) < 0)
				return NULL;
		if (!cmd || ydoc_set(s, c, "lifecycle",
				     pair_map(s, false, "postStart",
					      pair_map(s, false, "exec", pair_map(s, false, "command", cmd, NULL, NULL),
						       NULL, NULL),
					      NULL, NULL),
				     false) < 0)
			return NULL;
	}
	if (ydoc_append(s, mounts,
			pair_map(s, true, "name", text(s, AGENT_NAME), "mountPath", text(s, "/var/run/rearguard"))) <
		0 ||
	    ydoc_set(s, c, "volumeMounts", mounts, false) < 0 || ydoc_append(s, drop, text(s, "ALL")) < 0 ||
	    ydoc_set(s, sc, "runAsUser", raw(s, AGENT_UID), false) < 0 ||
	    ydoc_set(s, sc, "runAsGroup", raw(s, AGENT_UID), false) < 0 ||
	    ydoc_set(s, sc, "runAsNonRoot", raw(s, "true"), false) < 0 ||
	    ydoc_set(s, sc, "readOnlyRootFilesystem", raw(s, "true"), false) < 0 ||
	    ydoc_set(s, sc, "allowPrivilegeEscalation", raw(s, "false"), false) < 0 ||
	    ydoc_set(s, sc, "capabilities", pair_map(s, true, "drop", drop, NULL, NULL), false) < 0 ||
	    ydoc_set(s, c, "securityContext", sc, false) < 0 ||
	    ydoc_set(s, res, "requests", pair_map(s, true, "cpu", text(s, "5m"), "memory", text(s, "8Mi")), false) <
		0 ||
	    ydoc_set(s, res, "limits", pair_map(s, true, "memory", text(s, "32Mi"), NULL, NULL), false) < 0 ||
	    ydoc_set(s, c, "resources", res, false) < 0)
		return NULL;
	return c;
}

/* The file protocol's emptyDir, unless the pod has a volume of that name. */
static int add_volume(struct run *r, struct ynode *spec, const struct ynode *at, const char *what)
{
	struct ystream *s = r->s;
	struct ynode *vols = ydoc_get(spec, "volumes"), *v;
	size_t i;

	if (vols && vols->kind != YNODE_SEQ)
		return fail(r, at, what, "spec.volumes is not a list");
	for (i = 0; vols && i < vols->n; i++)
		if (is(ydoc_get(vols->items[i], "name"), AGENT_NAME))
			return 0;
	v = pair_map(s, false, "name", text(s, AGENT_NAME), "emptyDir",
		     pair_map(s, true, "medium", text(s, "Memory"), "sizeLimit", text(s, "1Mi")));
	if (!vols) {
		vols = ydoc_new_seq(s, false);
		if (!vols || ydoc_set(s, spec, "volumes", vols, false) < 0)
			return -ENOMEM;
	}
	return ydoc_append(s, vols, v);
}

/* ---- one pod template ---------------------------------------------------------- */

/*
 * Adds rearguard to one pod template (tmpl holds metadata and spec; for a
 * Pod it is the object). Returns 1 when it changed, 0 when it is left as it
 * is (with a note saying why), or an error.
 */
static int inject_template(struct run *r, struct ynode *tmpl, const char *field, bool job, const struct ynode *at,
			   const char *what)
{
	struct ynode *meta = ydoc_get(tmpl, "metadata"), *spec = ydoc_get(tmpl, "spec"), *ctrs, *agent, *share;
	const char *policy;
	struct found f;
	bool gate = r->o.gate;
	size_t i, at_index = 0;
	int rc;

	if (meta && meta->kind != YNODE_MAP)
		meta = NULL;
	if (!spec || spec->kind != YNODE_MAP)
		return fail(r, at, what, "%s.spec is missing: a pod template needs containers", field);
	ctrs = ydoc_get(spec, "containers");
	if (!ctrs || ctrs->kind != YNODE_SEQ || ctrs->n == 0)
		return fail(r, ctrs ? ctrs : at, what, "%s.spec.containers is %s: a pod needs at least one container",
			    field,
			    !ctrs		      ? "missing"
			    : ctrs->kind == YNODE_SEQ ? "empty"
						      : "not a list");
	for (i = 0; i < ctrs->n; i++) {
		if (ctrs->items[i]->kind != YNODE_MAP)
			return fail(r, ctrs->items[i], what, "%s.spec.containers[%zu] is not a mapping", field, i);
		if (is_agent(ctrs->items[i])) {
			note(r, at, what, "already has rearguard (container %s): left unchanged",
			     ydoc_str(ydoc_get(ctrs->items[i], "name")) ? ydoc_str(ydoc_get(ctrs->items[i], "name"))
									: "?");
			return 0;
		}
	}
	if (meta_value(meta, INJECT_LABEL) && strcmp(meta_value(meta, INJECT_LABEL), "disabled") == 0) {
		note(r, at, what, "%s=disabled: left unchanged", INJECT_LABEL);
		return 0;
	}
	policy = ydoc_str(ydoc_get(spec, "restartPolicy"));
	if (!policy && job) {
		note(r, at, what, "no restartPolicy (a Job's pod needs Never or OnFailure): left unchanged");
		return 0;
	}
	if (!policy || (strcmp(policy, "Never") != 0 && strcmp(policy, "OnFailure") != 0)) {
		note(r, at, what,
		     "restartPolicy %s restarts every container that ends, so the pod never finishes: left unchanged",
		     policy ? policy : "Always (the default)");
		return 0;
	}
	find_sidecars(r, meta, ctrs, &f, at, what);
	if (f.n == 0) {
		note(r, at, what,
		     "no known sidecar in the template: left unchanged (a mesh that injects one namespace-wide needs "
		     "--mesh istio|linkerd)");
		return 0;
	}
	if (f.apps == 0) {
		note(r, at, what, "every container is a sidecar, none is an app: left unchanged");
		return 0;
	}
	rc = fix_sidecars(r, tmpl, &meta, ctrs, &f, at, what);
	if (rc == 0)
		rc = write_specs(r, meta, ctrs, &f, at, what);
	if (rc < 0)
		return rc;
	if (gate)
		gate = can_gate(r, meta, &f, at, what);
	if (gate) {
		/* The template's sidecars first, then the agent and its hook, then the apps. */
		struct ynode *order[256];
		size_t n = 0;

		if (ctrs->n > ARRAY_SIZE(order))
			return fail(r, ctrs, what, "more than %zu containers", ARRAY_SIZE(order));
		for (i = 0; i < ctrs->n; i++)
			if (f.sidecar_ctr[i])
				order[n++] = ctrs->items[i];
		at_index = n;
		for (i = 0; i < ctrs->n; i++)
			if (!f.sidecar_ctr[i])
				order[n++] = ctrs->items[i];
		memcpy(ctrs->items, order, n * sizeof(order[0]));
	}
	agent = agent_container(r, &f, policy, gate);
	if (!agent || ydoc_insert(r->s, ctrs, at_index, agent) < 0)
		return -ENOMEM;
	share = ydoc_get(spec, "shareProcessNamespace");
	if (share && !is(share, "true"))
		note(r, at, what,
		     "shareProcessNamespace was %s: set to true (rearguard watches the other containers "
		     "through /proc)",
		     ydoc_str(share) ? ydoc_str(share) : "?");
	if (ydoc_set(r->s, spec, "shareProcessNamespace", raw(r->s, "true"), true) < 0)
		return -ENOMEM;
	rc = add_volume(r, spec, at, what);
	return rc < 0 ? rc : 1;
}

/* ---- objects, lists, streams ----------------------------------------------------- */

static const char *const long_running[] = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
					   "ReplicationController"};

/* Adds rearguard to one object: 1 changed, 0 left alone, or an error. */
static int inject_object(struct run *r, struct ynode *obj)
{
	const char *kind = ydoc_str(ydoc_get(obj, "kind")), *api = ydoc_str(ydoc_get(obj, "apiVersion"));
	const char *name = ydoc_str(ydoc_path(obj, "metadata.name"));
	char what[256];
	size_t i;
	bool batch = api && strncmp(api, "batch/", 6) == 0;

	if (obj->kind != YNODE_MAP) {
		note(r, obj, "document", "not a mapping: left unchanged");
		return 0;
	}
	if (!name)
		name = ydoc_str(ydoc_path(obj, "metadata.generateName"));
	if (name)
		snprintf(what, sizeof(what), "%s \"%.128s\"", kind ? kind : "object", name);
	else
		snprintf(what, sizeof(what), "%.128s", kind ? kind : "object");
	if (!kind) {
		note(r, obj, "document", "no kind: left unchanged");
		return 0;
	}
	if (strcmp(kind, "Pod") == 0 && api && strcmp(api, "v1") == 0)
		return inject_template(r, obj, "Pod", false, obj, what);
	if (strcmp(kind, "Job") == 0 && batch) {
		struct ynode *t = ydoc_path(obj, "spec.template");

		if (!t || t->kind != YNODE_MAP)
			return fail(r, obj, what, "spec.template is missing: a Job needs a pod template");
		return inject_template(r, t, "spec.template", true, obj, what);
	}
	if (strcmp(kind, "CronJob") == 0 && batch) {
		struct ynode *t = ydoc_path(obj, "spec.jobTemplate.spec.template");

		if (!t || t->kind != YNODE_MAP)
			return fail(r, obj, what,
				    "spec.jobTemplate.spec.template is missing: a CronJob needs a pod template");
		return inject_template(r, t, "spec.jobTemplate.spec.template", true, obj, what);
	}
	for (i = 0; i < ARRAY_SIZE(long_running); i++)
		if (strcmp(kind, long_running[i]) == 0) {
			note(r, obj, what,
			     "its pods run until they are deleted, and their sidecars with them: left unchanged");
			return 0;
		}
	if (api && strncmp(api, "argoproj.io/", 12) == 0 && strstr(kind, "Workflow")) {
		note(r, obj, what,
		     "Argo Workflows stops the sidecars of its pods itself: left unchanged (docs/inject.md)");
		return 0;
	}
	if (api && strncmp(api, "tekton.dev/", 11) == 0) {
		note(r, obj, what, "Tekton stops the sidecars of its pods itself: left unchanged (docs/inject.md)");
		return 0;
	}
	note(r, obj, what, "not a Job, CronJob or Pod: left unchanged");
	return 0;
}

/* One option of a functionConfig; a flag given on the command line keeps its value. */
static int set_option(struct run *r, const struct ynode *at, const char *key, const char *v)
{
	if (strcmp(key, "image") == 0) {
		if (r->o.image_from < INJECT_FUNCTION_CONFIG) {
			if (!v || !*v)
				return fail(r, at, "functionConfig", "image needs a value");
			r->o.image = v;
			r->o.image_from = INJECT_FUNCTION_CONFIG;
		}
		return 0;
	}
	if (strcmp(key, "mesh") == 0) {
		if (!v || (strcmp(v, "istio") != 0 && strcmp(v, "linkerd") != 0 && *v))
			return fail(r, at, "functionConfig", "mesh \"%s\" is not istio or linkerd", v ? v : "");
		if (r->o.mesh_from < INJECT_FUNCTION_CONFIG) {
			r->o.mesh = *v ? v : NULL;
			r->o.mesh_from = INJECT_FUNCTION_CONFIG;
		}
		return 0;
	}
	if (strcmp(key, "gate") == 0) {
		if (!v || (strcmp(v, "true") != 0 && strcmp(v, "false") != 0))
			return fail(r, at, "functionConfig", "gate \"%s\" is not true or false", v ? v : "");
		if (r->o.gate_from < INJECT_FUNCTION_CONFIG) {
			r->o.gate = strcmp(v, "true") == 0;
			r->o.gate_from = INJECT_FUNCTION_CONFIG;
		}
		return 0;
	}
	return fail(r, at, "functionConfig", "unknown option \"%s\" (options: image, mesh, gate)", key);
}

/* A KRM function's options: a ConfigMap's data, or a spec (a kustomize transformer's own kind). */
static int function_config(struct run *r, const struct ynode *fc)
{
	const struct ynode *opts;
	size_t i;
	int rc;

	if (!fc || fc->kind != YNODE_MAP)
		return 0;
	opts = ydoc_get(fc, "data");
	if (!opts || opts->kind != YNODE_MAP)
		opts = ydoc_get(fc, "spec");
	if (!opts || opts->kind != YNODE_MAP)
		return 0;
	for (i = 0; i + 1 < opts->n; i += 2) {
		const char *key = ydoc_str(opts->items[i]);

		rc = set_option(r, opts->items[i], key ? key : "?", ydoc_str(opts->items[i + 1]));
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One document of the stream: an object, or a List or ResourceList of them. */
static int inject_document(struct run *r, struct ydoc *d)
{
	struct ynode *root = d->root, *items;
	const char *kind, *api;
	size_t i;
	int rc, changed = 0;

	if (!root)
		return 0;
	if (root->kind != YNODE_MAP) {
		if (!(root->kind == YNODE_SCALAR && root->len == 0))
			note(r, root, "document", "not a mapping: left unchanged");
		return 0;
	}
	kind = ydoc_str(ydoc_get(root, "kind"));
	api = ydoc_str(ydoc_get(root, "apiVersion"));
	items = ydoc_get(root, "items");
	if (kind && items && items->kind == YNODE_SEQ &&
	    (strcmp(kind, "ResourceList") == 0 || (strlen(kind) > 4 && strcmp(kind + strlen(kind) - 4, "List") == 0) ||
	     strcmp(kind, "List") == 0)) {
		struct inject_options saved = r->o;

		if (strcmp(kind, "ResourceList") == 0 && api && strncmp(api, "config.kubernetes.io/", 21) == 0) {
			rc = function_config(r, ydoc_get(root, "functionConfig"));
			if (rc < 0)
				return rc;
		}
		for (i = 0; i < items->n; i++) {
			rc = inject_object(r, items->items[i]);
			if (rc < 0)
				break;
			changed |= rc;
		}
		r->o = saved;
	} else {
		rc = inject_object(r, root);
		changed = rc > 0;
	}
	if (rc < 0)
		return rc;
	d->changed = changed;
	return 0;
}

int inject_buffer(const char *in, size_t len, const struct inject_options *o, char **out, size_t *outlen, char *err,
		  size_t errlen)
{
	struct ystream s;
	struct ybuf b = {0};
	struct run r = {.s = &s, .o = *o, .err = err, .errlen = errlen};
	size_t i;
	int rc;

	rc = ydoc_parse(in, len, &s, err, errlen);
	if (rc < 0)
		return rc;
	for (i = 0; i < s.ndocs && rc == 0; i++)
		rc = inject_document(&r, &s.docs[i]);
	if (rc == 0) {
		rc = ydoc_write(&s, &b);
		if (rc == -EINVAL)
			snprintf(err, errlen, "%zu:1: libyaml cannot write this document back after the change",
				 s.failed_line);
	}
	ydoc_free(&s);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (rc < 0) {
		ybuf_free(&b);
		return rc;
	}
	if (!b.p && ybuf_add(&b, "", 0) < 0)
		return -ENOMEM;
	*out = b.p;
	*outlen = b.len;
	return 0;
}

/* ---- the subcommand ------------------------------------------------------------ */

static void print_note(const void *data, const char *line)
{
	fprintf(stderr, "rearguard: inject: %s:%s\n", (const char *)data, line);
}

/* The whole input, bounded: the output is built from all of it before anything is written. */
static int read_all(int fd, char **buf, size_t *len)
{
	struct ybuf b = {0};
	char chunk[65536];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			ybuf_free(&b);
			return -e;
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > YDOC_MAX_INPUT) {
			ybuf_free(&b);
			return -EFBIG;
		}
		if (ybuf_add(&b, chunk, (size_t)n) < 0) {
			ybuf_free(&b);
			return -ENOMEM;
		}
	}
	if (!b.p && ybuf_add(&b, "", 0) < 0)
		return -ENOMEM;
	*buf = b.p;
	*len = b.len;
	return 0;
}

/* A one-line error of the subcommand; returns the exit status 2. */
static int usage(const char *fmt, ...) RG_PRINTF(1, 2);

static int usage(const char *fmt, ...)
{
	va_list ap;

	fputs("rearguard: inject: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/* rearguard inject --help. */
static void inject_help(void)
{
	printf("Usage: rearguard inject [--image IMAGE] [--mesh istio|linkerd] [--gate] [FILE|-]\n"
	       "\n"
	       "Writes FILE's Kubernetes YAML (or standard input's) to standard output with\n"
	       "rearguard added to every Job, CronJob and Pod whose template shows a known\n"
	       "sidecar: shareProcessNamespace: true, the emptyDir, the agent container first\n"
	       "(uid 65532, read-only root, no capabilities, small requests) with\n"
	       "REARGUARD_APPS, REARGUARD_RESTART_POLICY and REARGUARD_SIDECARS from the\n"
	       "template, and the fixes its sidecars need. Everything else passes through;\n"
	       "comments in the documents it changes are not kept. Reads a YAML stream, a\n"
	       "v1 List, or a KRM ResourceList (kustomize and kpt functions).\n"
	       "\n"
	       "  --image IMAGE         the agent's image (default %s)\n"
	       "                                                       [REARGUARD_IMAGE]\n"
	       "  --mesh istio|linkerd  the namespace injects this mesh's proxy into every pod\n"
	       "                                                       [REARGUARD_MESH]\n"
	       "  --gate                start the apps only once the sidecars are ready (a\n"
	       "                        postStart hook on the agent)   [REARGUARD_GATE=true]\n"
	       "  -h, --help            this text\n"
	       "\n"
	       "Exit status: 0 written; 2 bad usage, malformed YAML or an unusable template\n"
	       "(nothing is written then); 1 a read or write error. See docs/inject.md.\n",
	       INJECT_DEFAULT_IMAGE);
}

/* A flag or environment value checked and stored; what names it in the error. */
static int set_flag_option(struct inject_options *o, int id, const char *v, const char *what, enum inject_origin from)
{
	switch (id) {
	case 'i':
		if (!*v)
			return usage("%s needs a value", what);
		o->image = v;
		o->image_from = from;
		return 0;
	case 'm':
		if (strcmp(v, "istio") != 0 && strcmp(v, "linkerd") != 0)
			return usage("%s: \"%s\" is not istio or linkerd", what, v);
		o->mesh = v;
		o->mesh_from = from;
		return 0;
	default:
		if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
			o->gate = true;
		else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
			o->gate = false;
		else
			return usage("%s: \"%s\" is not true or false", what, v);
		o->gate_from = from;
		return 0;
	}
}

int inject_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"image", required_argument, NULL, 'i'},
	    {"mesh", required_argument, NULL, 'm'},
	    {"gate", no_argument, NULL, 'g'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct inject_options o = {0};
	const char *path = "-", *shown, *v;
	char err[1024], *in = NULL, *out = NULL;
	size_t len = 0, outlen = 0;
	int c, fd, rc;

	if ((v = getenv("REARGUARD_IMAGE")) && *v && set_flag_option(&o, 'i', v, "REARGUARD_IMAGE", INJECT_ENV))
		return 2;
	if ((v = getenv("REARGUARD_MESH")) && *v && set_flag_option(&o, 'm', v, "REARGUARD_MESH", INJECT_ENV))
		return 2;
	if ((v = getenv("REARGUARD_GATE")) && *v && set_flag_option(&o, 'g', v, "REARGUARD_GATE", INJECT_ENV))
		return 2;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			inject_help();
			return 0;
		case 'g':
			o.gate = true;
			o.gate_from = INJECT_FLAG;
			break;
		case 'i':
		case 'm':
			if (set_flag_option(&o, c, optarg, c == 'i' ? "--image" : "--mesh", INJECT_FLAG))
				return 2;
			break;
		case ':':
			return usage("option %s needs a value", argv[optind - 1 < argc ? optind - 1 : argc - 1]);
		default:
			return usage("unknown option %s (see rearguard inject --help)",
				     optopt ? (char[]){'-', (char)optopt, 0} : argv[optind - 1]);
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		return usage("unexpected argument \"%s\" (one FILE, or - for standard input)", argv[optind]);
	shown = strcmp(path, "-") == 0 ? "<stdin>" : path;
	if (strcmp(path, "-") == 0) {
		rc = read_all(STDIN_FILENO, &in, &len);
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			usage("cannot open %s: %s", path, strerror(errno));
			return 1;
		}
		rc = read_all(fd, &in, &len);
		close(fd);
	}
	if (rc == -EFBIG)
		return usage("%s: larger than %zu MiB", shown, YDOC_MAX_INPUT >> 20);
	if (rc < 0) {
		usage("cannot read %s: %s", shown, strerror(-rc));
		return 1;
	}
	o.note = print_note;
	o.note_data = shown;
	rc = inject_buffer(in, len, &o, &out, &outlen, err, sizeof(err));
	free(in);
	if (rc < 0) {
		usage("%s:%s", shown, err);
		return rc == -ENOMEM ? 1 : 2;
	}
	/* The output was built whole: a bad document never leaves half a stream behind. */
	rc = write_all(STDOUT_FILENO, out, outlen);
	free(out);
	if (rc < 0) {
		usage("cannot write the output: %s", strerror(-rc));
		return 1;
	}
	return 0;
}
