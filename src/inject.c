#include "config.h"

#include "inject.h"

#include "argv.h"
#include "log.h"
#include "presets.h"
#include "spec.h"
#include "util.h"
#include "yamldoc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_SIDECARS 16
#define MAX_CONTAINERS 256
#define MAX_ARGV 64
#define AGENT_NAME "rearguard"
#define AGENT_UID "65532"
#define GATE_TIMEOUT "5m"
#define INFO false
#define WARN true

/* One run over a stream: the options in force and where the notes go. */
struct run {
	struct ystream *s;
	struct inject_options o;
	char *err;
	size_t errlen;
	struct inject_counts c;
};

/* One sidecar of a template, in --sidecar order. */
struct sidecar {
	const struct spec_preset *p; /* its row; NULL for one named by the user, or an unknown native one */
	size_t ctr;		     /* its index among the containers; NO_CTR: injected, or an init container */
	struct ynode *node;	     /* its container (or init container); NULL: injected by a webhook */
	bool native;		     /* a native sidecar, or a helper: the agent recognises it, never stops it */
	const char *named;	     /* a named one's SPEC (what follows CONTAINER=), "" for none */
	bool signal_stop;	     /* a fix its endpoint needs was refused: stopped by SIGTERM */
	char spec[PRESET_SPEC_MAX];
};

/* What the template shows: the sidecars and the apps. */
struct found {
	size_t plain; /* sidecars the agent stops: neither native nor helpers */
	struct sidecar sc[MAX_SIDECARS];
	size_t n;
	size_t apps;
	size_t first_app;			/* the first app container's index */
	const char *named[MAX_CONTAINERS];	/* per container: the user's SPEC when named a sidecar, else NULL */
	const char *named_init[MAX_CONTAINERS]; /* the same per init container */
	bool sidecar_ctr[MAX_CONTAINERS];	/* per container: a sidecar */
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

/* One line for the user about a node of a document: "LINE:COL: what: message". */
static void say(struct run *r, bool warning, const struct ynode *at, const char *what, const char *fmt, ...)
    RG_PRINTF(5, 6);

static void say(struct run *r, bool warning, const struct ynode *at, const char *what, const char *fmt, ...)
{
	char msg[768], line[1024];
	va_list ap;

	if (warning)
		r->c.warnings++;
	if (!r->o.note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%zu:%zu: %s%s: %s", at ? at->line : (size_t)0, at ? at->column : (size_t)0,
		 warning ? "warning: " : "", what, msg);
	one_line(line);
	r->o.note(r->o.note_data, warning, line);
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

/* What a node that should have been a list or a mapping is instead. */
static const char *shape(const struct ynode *n)
{
	switch (n->kind) {
	case YNODE_SCALAR:
		return "a scalar";
	case YNODE_SEQ:
		return "a list";
	case YNODE_MAP:
		return "a mapping";
	default:
		return "an alias";
	}
}

/*
 * The collection of kind under key: NULL when it is absent or null (Helm
 * renders an empty list as null), else the node; *bad when it is something
 * else.
 */
static struct ynode *want(const struct ynode *parent, const char *key, enum ynode_kind kind, struct ynode **bad)
{
	struct ynode *n = ydoc_get(parent, key);

	*bad = NULL;
	if (!n || ydoc_is_null(n))
		return NULL;
	if (n->kind != kind) {
		*bad = n;
		return NULL;
	}
	return n;
}

/* A template whose field has the wrong shape is left alone: the API server would refuse it anyway. */
static int misshapen(struct run *r, const struct ynode *n, const char *what, const char *field, const char *key,
		     const char *want_word)
{
	say(r, WARN, n, what, "%s%s%s is %s, not %s: left unchanged (the API server refuses it as well)", field,
	    *field ? "." : "", key, shape(n), want_word);
	r->c.left++;
	return 0;
}

/* A label or annotation of the template, annotations first (where injectors look first). */
static const char *meta_value(const struct ynode *meta, const char *key)
{
	const char *v = ydoc_str(ydoc_get(ydoc_get(meta, "annotations"), key));

	return v ? v : ydoc_str(ydoc_get(ydoc_get(meta, "labels"), key));
}

/* An annotation of the template, for presets_spec. */
static const char *annotation(const void *meta, const char *key)
{
	return ydoc_str(ydoc_get(ydoc_get(meta, "annotations"), key));
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

/* A container that is rearguard already: by name, or by its image. */
static bool is_agent(const struct ynode *c)
{
	const char *image = ydoc_str(ydoc_get(c, "image"));

	return is(ydoc_get(c, "name"), AGENT_NAME) || (image && presets_image_is(image, AGENT_NAME));
}

/* The uid a value of runAsUser names, or NULL when it names none. */
static const char *uid_of(const char *v)
{
	const char *p = v;

	if (!v || !*v || strlen(v) > 10)
		return NULL;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return NULL;
	return v;
}

/* ---- the sidecars a template shows -------------------------------------------- */

static int named_spec(const char *ctr, const char *const *argv, size_t argc, const char *spec, char *out, size_t len);

/* Adds a sidecar once: a mesh both asked for and already in the template is one sidecar. */
static struct sidecar *add_sidecar(struct found *f, const struct spec_preset *p, size_t ctr, struct ynode *node,
				   bool native)
{
	size_t i;

	for (i = 0; p && i < f->n; i++)
		if (f->sc[i].p == p && (!f->sc[i].node || !node))
			return NULL;
	if (f->n == MAX_SIDECARS)
		return NULL;
	memset(&f->sc[f->n], 0, sizeof(f->sc[0]));
	f->sc[f->n].p = p;
	f->sc[f->n].ctr = ctr;
	f->sc[f->n].node = node;
	f->sc[f->n].native = native || (p && p->helper);
	f->sc[f->n].named = "";
	f->plain += !f->sc[f->n].native;
	return &f->sc[f->n++];
}

/*
 * Whether the template asks a row's injector for a native sidecar: the
 * first of its native annotations that is there decides, read as Go's
 * ParseBool reads it (Linkerd's current, beta and alpha names in that order).
 */
static bool native_asked(const struct spec_preset *p, const struct ynode *meta)
{
	size_t k;
	bool on;

	for (k = 0; k < ARRAY_SIZE(p->native_keys) && p->native_keys[k]; k++) {
		const char *v = annotation(meta, p->native_keys[k]);

		if (v)
			return argv_gobool(v, &on) == 0 && on;
	}
	return false;
}

/* Whether a template's annotation asks for its row's injector: one of its values, or --mesh. */
static bool asked_for(const struct run *r, const struct spec_preset *p, const struct ynode *meta)
{
	const char *v = meta_value(meta, p->inject_key);
	size_t k;

	if (v && p->inject_off && strcmp(v, p->inject_off) == 0)
		return false;
	if (v && p->inject_any && *v)
		return true;
	for (k = 0; v && k < ARRAY_SIZE(p->inject_on) && p->inject_on[k]; k++)
		if (strcmp(v, p->inject_on[k]) == 0)
			return true;
	return r->o.mesh && p->mesh && strcmp(r->o.mesh, p->mesh) == 0;
}

/* Whether CONTAINER[=SPEC] names the container called name; *spec gets the SPEC ("" when none). */
static bool names(const char *entry, size_t len, const char *name, const char **spec)
{
	const char *eq = memchr(entry, '=', len);
	size_t n = eq ? (size_t)(eq - entry) : len;

	if (!name || strlen(name) != n || strncmp(entry, name, n) != 0)
		return false;
	*spec = eq ? eq + 1 : "";
	return true;
}

/* The user's SPEC for the container called name (CLI first, then the annotation's entries), or NULL. */
static const char *named_for(const struct run *r, char *const *entries, size_t n, const char *name)
{
	const char *spec = NULL;
	size_t k;

	for (k = 0; k < r->o.nnamed; k++)
		if (names(r->o.named[k], strlen(r->o.named[k]), name, &spec))
			return spec;
	for (k = 0; k < n; k++)
		if (names(entries[k], strlen(entries[k]), name, &spec))
			return spec;
	return NULL;
}

/*
 * The sidecars the user named: --sidecar CONTAINER[=SPEC] and the
 * template's annotation (entries separated by ';', or by ',' when no entry
 * has a whole spec with commas in it). Each named container, or init
 * container, is a sidecar whatever it runs; f->named[i] gets its SPEC (""
 * for none). An entry of the annotation that names no container is said.
 */
static int find_named(struct run *r, const struct ynode *meta, const struct ynode *ctrs, const struct ynode *inits,
		      struct found *f, const char *what)
{
	const char *v = annotation(meta, INJECT_SIDECARS), *sep = v && strchr(v, ';') ? ";" : ",", *spec;
	char *copy = NULL, *save = NULL, *e, *entries[64];
	size_t i, k, n = 0;

	if (v) {
		copy = ydoc_strndup(r->s, v, strlen(v)); /* the entries live as long as the stream */
		if (!copy)
			return -ENOMEM;
		for (e = strtok_r(copy, sep, &save); e && n < ARRAY_SIZE(entries); e = strtok_r(NULL, sep, &save)) {
			while (*e == ' ')
				e++;
			if (*e)
				entries[n++] = e;
		}
	}
	for (i = 0; i < ctrs->n && i < MAX_CONTAINERS; i++)
		f->named[i] = named_for(r, entries, n, ydoc_str(ydoc_get(ctrs->items[i], "name")));
	for (i = 0; inits && i < inits->n && i < MAX_CONTAINERS; i++)
		f->named_init[i] = named_for(r, entries, n, ydoc_str(ydoc_get(inits->items[i], "name")));
	for (k = 0; k < n; k++) {
		bool hit = false;

		for (i = 0; i < ctrs->n; i++)
			hit |= names(entries[k], strlen(entries[k]), ydoc_str(ydoc_get(ctrs->items[i], "name")), &spec);
		for (i = 0; inits && i < inits->n; i++)
			hit |=
			    names(entries[k], strlen(entries[k]), ydoc_str(ydoc_get(inits->items[i], "name")), &spec);
		if (!hit)
			say(r, WARN, ydoc_get(ydoc_get(meta, "annotations"), INJECT_SIDECARS), what,
			    "%s names \"%.*s\", which is no container of the template", INJECT_SIDECARS,
			    (int)(strchr(entries[k], '=') ? (size_t)(strchr(entries[k], '=') - entries[k])
							  : strlen(entries[k])),
			    entries[k]);
	}
	return 0;
}

/*
 * Checks a named container's SPEC before anything changes: one that does
 * not parse leaves the template alone (-1, with a warning).
 */
static int check_named(struct run *r, const struct ynode *c, const char *spec, const char *what)
{
	const char *argv[MAX_ARGV], *name = ydoc_str(ydoc_get(c, "name"));
	size_t argc = container_argv(c, argv, NULL);
	char text[PRESET_SPEC_MAX], why[512];
	struct sidecar_spec s;

	if (named_spec(name, argv, argc, spec, text, sizeof(text)) < 0) {
		say(r, WARN, c, what,
		    "container %s: \"%s\" is no preset, stop (signal:TERM, http://...) or spec (keys): left unchanged",
		    name, spec);
		return -1;
	}
	if (spec_parse(text, &s, why, sizeof(why)) < 0) {
		say(r, WARN, c, what, "container %s: %s: left unchanged", name, why);
		return -1;
	}
	spec_free(&s);
	return 0;
}

/*
 * The native sidecars: init containers with restartPolicy Always, which
 * the kubelet starts before the apps, restarts when they end, and stops
 * after them. Neither apps nor the agent's to stop: each goes to the agent
 * as native, so that it knows their processes. A known one's spec is its
 * preset's; another's names its program, which is a guess when the
 * template gives no command (said).
 */
static int find_native(struct run *r, const struct ynode *inits, struct found *f, const char *what)
{
	size_t i;

	for (i = 0; inits && i < inits->n && i < MAX_CONTAINERS; i++) {
		struct ynode *c = inits->items[i];
		const char *argv[MAX_ARGV], *name = ydoc_str(ydoc_get(c, "name"));
		size_t argc = container_argv(c, argv, NULL);
		const struct spec_preset *p = NULL;
		struct sidecar *sc;

		if (!is(ydoc_get(c, "restartPolicy"), "Always"))
			continue;
		if (f->named_init[i] && presets_find(f->named_init[i]))
			p = presets_find(f->named_init[i]);
		else if (f->named_init[i] && check_named(r, c, f->named_init[i], what) < 0)
			return -1;
		else if (!f->named_init[i])
			p = presets_container(name, ydoc_str(ydoc_get(c, "image")), argv, argc);
		sc = add_sidecar(f, p, NO_CTR, c, true);
		if (sc && f->named_init[i] && !p)
			sc->named = f->named_init[i];
		if (sc && !p && !f->named_init[i] && (argc == 0 || !argv[0]))
			say(r, WARN, c, what,
			    "init container %s runs as a native sidecar: rearguard is told its program is called %s, "
			    "the "
			    "container's name, for want of a command; if it is not, name it with " INJECT_SIDECARS
			    ": \"%s=match=PROGRAM,native\"",
			    name ? name : "?", name ? name : "?", name ? name : "?");
	}
	return 0;
}

/*
 * The sidecars a template shows: those its annotations (or --mesh) ask an
 * injector for, in the table's order (native when the template asks the
 * injector for that), then its own sidecar containers in their order (by
 * what they run, their image or name, or because the user named them),
 * then its native sidecars. Every other container is an app.
 */
static int find_sidecars(struct run *r, const struct ynode *meta, const struct ynode *ctrs, const struct ynode *inits,
			 struct found *f, const struct ynode *at, const char *what)
{
	size_t i;
	int rc;

	memset(f, 0, sizeof(*f));
	f->first_app = NO_CTR;
	for (i = 0; i < spec_npresets; i++) {
		const struct spec_preset *p = &spec_presets[i];

		if (!p->inject_key || !asked_for(r, p, meta))
			continue;
		if (p->none_key && meta_value(meta, p->none_key) &&
		    strcasecmp(meta_value(meta, p->none_key), "true") == 0) {
			say(r, INFO, at, what, "%s=true: %s runs as an init container only, no sidecar to stop",
			    p->none_key, p->name);
			continue;
		}
		add_sidecar(f, p, NO_CTR, NULL, native_asked(p, meta));
	}
	rc = find_named(r, meta, ctrs, inits, f, what);
	if (rc < 0)
		return rc;
	for (i = 0; i < ctrs->n; i++) {
		struct ynode *c = ctrs->items[i];
		const char *argv[MAX_ARGV];
		size_t argc = container_argv(c, argv, NULL);
		const struct spec_preset *p = NULL;
		struct sidecar *sc;

		if (f->named[i] && presets_find(f->named[i])) {
			p = presets_find(f->named[i]);
		} else if (f->named[i]) {
			if (check_named(r, c, f->named[i], what) < 0)
				return -1;
			sc = add_sidecar(f, NULL, i, c, false);
			if (sc)
				sc->named = f->named[i];
			f->sidecar_ctr[i] = true;
			continue;
		} else {
			p = presets_container(ydoc_str(ydoc_get(c, "name")), ydoc_str(ydoc_get(c, "image")), argv,
					      argc);
		}
		if (p) {
			f->sidecar_ctr[i] = true;
			add_sidecar(f, p, i, c, false);
			if (p->note)
				say(r, INFO, c, what, "container %s: %s %s", ydoc_str(ydoc_get(c, "name")), p->title,
				    p->note);
		} else {
			if (f->first_app == NO_CTR)
				f->first_app = i;
			f->apps++;
		}
	}
	return find_native(r, inits, f, what);
}

/* ---- the specs ------------------------------------------------------------------ */

/* Appends s to a regex, each character that means something there escaped. */
static void regex_quote(char *out, size_t len, const char *s)
{
	size_t n = strlen(out);

	for (; *s && n + 2 < len; s++) {
		if (strchr(".[]{}()\\*+?|^$", *s))
			out[n++] = '\\';
		out[n++] = *s;
	}
	out[n] = '\0';
}

/*
 * The spec of a container the user named: its SPEC as written when it is a
 * whole spec (keys), else name= the container, match= its program (the
 * command's, else the container's name), and the SPEC as its stop.
 */
static int named_spec(const char *ctr, const char *const *argv, size_t argc, const char *spec, char *out, size_t len)
{
	const char *prog = argc > 0 && argv[0] ? base_name(argv[0]) : ctr;
	char match[128] = "";
	bool keys = strchr(spec, '=') != NULL;
	int n;

	regex_quote(match, sizeof(match), prog);
	if (!keys && *spec && strncmp(spec, "signal:", 7) != 0 && strncmp(spec, "signal-all:", 11) != 0 &&
	    strncasecmp(spec, "http", 4) != 0)
		return -EINVAL;
	if (keys)
		n = snprintf(out, len, "%s%s%s%s%s%s",
			     strstr(spec, "name=") == spec || strstr(spec, ",name=") ? "" : "name=",
			     strstr(spec, "name=") == spec || strstr(spec, ",name=") ? "" : ctr,
			     strstr(spec, "name=") == spec || strstr(spec, ",name=") ? "" : ",", spec,
			     strstr(spec, "match=") == spec || strstr(spec, ",match=") ? "" : ",match=",
			     strstr(spec, "match=") == spec || strstr(spec, ",match=") ? "" : match);
	else
		n = snprintf(out, len, "name=%s,match=%s%s%s", ctr, match, *spec ? ",stop=" : "", spec);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

int inject_check_named(const char *named, char *err, size_t errlen)
{
	const char *eq = strchr(named, '='), *spec = eq ? eq + 1 : "";
	char text[PRESET_SPEC_MAX];
	struct sidecar_spec s;
	char why[512];

	if (eq == named || !*named) {
		snprintf(err, errlen, "--sidecar \"%s\": CONTAINER[=SPEC] needs a container's name", named);
		return -EINVAL;
	}
	if (presets_find(spec))
		return 0;
	if (named_spec("x", NULL, 0, spec, text, sizeof(text)) < 0) {
		snprintf(err, errlen,
			 "--sidecar \"%s\": \"%s\" is no preset, stop (signal:TERM, http://...) or spec (keys)", named,
			 spec);
		return -EINVAL;
	}
	if (spec_parse(text, &s, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "--sidecar \"%s\": %s", named, why);
		return -EINVAL;
	}
	spec_free(&s);
	return 0;
}

/*
 * The --sidecar SPEC of each sidecar, once the fixes are in: a
 * container's URLs where its flags put them, an injected one's where the
 * annotations do; native ones last, marked so. Two containers of one
 * program with the same spec are one sidecar to the agent (its spec finds both).
 */
static int write_specs(struct run *r, const struct ynode *meta, struct found *f, const struct ynode *at,
		       const char *what)
{
	struct sidecar sorted[MAX_SIDECARS];
	size_t i, k, n = 0, pass;

	/* The sidecars it stops first, in their order, then the native ones. */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < f->n; i++)
			if (f->sc[i].native == (pass == 1))
				sorted[n++] = f->sc[i];
	memcpy(f->sc, sorted, n * sizeof(sorted[0]));
	n = 0;
	for (i = 0; i < f->n; i++) {
		struct sidecar *sc = &f->sc[i];
		const struct ynode *c = sc->node;
		const char *argv[MAX_ARGV];
		size_t argc = c ? container_argv(c, argv, NULL) : 0;
		bool dup = false;
		int rc;

		if (sc->p && sc->native && !sc->p->helper)
			/* Never stopped nor polled: its URLs do not matter, its processes do. */
			rc = snprintf(sc->spec, sizeof(sc->spec), "%s", sc->p->name) < (int)sizeof(sc->spec) ? 0
													     : -ENOSPC;
		else if (sc->p)
			rc = presets_spec(sc->p, argv, argc, annotation, meta, sc->signal_stop, sc->spec,
					  sizeof(sc->spec));
		else
			rc = named_spec(ydoc_str(ydoc_get(c, "name")), argv, argc, sc->named, sc->spec,
					sizeof(sc->spec));
		if (rc == 0 && sc->native && !(sc->p && sc->p->helper) && !strstr(sc->spec, ",native") &&
		    strlen(sc->spec) + 8 < sizeof(sc->spec))
			strcat(sc->spec, ",native");
		if (rc < 0)
			return fail(r, c ? c : at, what, "the spec of %s is too long",
				    sc->p ? sc->p->name : "a sidecar");
		for (k = 0; k < n; k++)
			dup |= strcmp(f->sc[k].spec, sc->spec) == 0;
		if (dup)
			continue;
		if (n != i)
			f->sc[n] = *sc;
		n++;
	}
	f->n = n;
	return 0;
}

/* ---- the fixes the sidecars need ------------------------------------------ */

/* An annotation the sidecar's stop endpoint needs; false when the template refuses it. */
static int fix_annotation(struct run *r, struct ynode *tmpl, struct ynode **meta, const char *key, const char *value,
			  const struct ynode *at, const char *what)
{
	struct ynode *ann;
	const char *v = ydoc_str(ydoc_get(ydoc_get(*meta, "annotations"), key));

	if (v) {
		if (strcmp(v, value) == 0)
			return 1;
		say(r, WARN, ydoc_get(ydoc_get(*meta, "annotations"), key), what,
		    "%s is \"%s\", not %s: left as it is, so the sidecar is stopped by SIGTERM", key, v, value);
		return 0;
	}
	if (!*meta) {
		*meta = ydoc_new_map(r->s, false);
		if (!*meta || ydoc_set(r->s, tmpl, "metadata", *meta, true) < 0)
			return -ENOMEM;
	}
	ann = ydoc_want_map(r->s, *meta, "annotations");
	if (!ann)
		return -EINVAL;
	return ydoc_set(r->s, ann, key, ydoc_scalar(r->s, value, YDOC_TEXT), false) < 0 ? -ENOMEM : 1;
}

/*
 * The flags a sidecar's stop needs (its row's), each only when it is not
 * on: put first in args (cobra takes flags anywhere), or, where the
 * command line turns it off (--quitquitquit=false), turned on in place.
 */
static int fix_flags(struct run *r, struct ynode *c, const struct spec_preset *p, const char *what)
{
	struct ynode *args, *flag;
	size_t i, added = 0;

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
			say(r, INFO, old, what, "%s turned off what %s's stop needs: set to %s", argv[g.at], p->name,
			    word);
			*slots[g.at] = flag;
			continue;
		}
		/* Absent or null (Helm's empty list): a list of the flags. */
		args = ydoc_want_seq(r->s, c, "args");
		if (!args)
			return -ENOMEM;
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
static int fix_sidecars(struct run *r, struct ynode *tmpl, struct ynode **meta, struct found *f, const struct ynode *at,
			const char *what)
{
	size_t i;
	int rc;

	for (i = 0; i < f->n; i++) {
		const struct spec_preset *p = f->sc[i].native ? NULL : f->sc[i].p;

		if (p && p->fix_key) {
			rc = fix_annotation(r, tmpl, meta, p->fix_key, p->fix_value, at, what);
			if (rc < 0)
				return rc;
			f->sc[i].signal_stop = rc == 0;
		}
	}
	for (i = 0; i < f->n; i++) {
		if (!f->sc[i].node || f->sc[i].native || !f->sc[i].p || !f->sc[i].p->flags[0].name)
			continue;
		rc = fix_flags(r, f->sc[i].node, f->sc[i].p, what);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * Pre-flight of the signal stops: the agent (uid 65532, no capabilities)
 * may signal only a sidecar of its own uid. The sidecar's uid is its
 * container's runAsUser, else the pod's, else what its injector or image
 * runs it as (its row).
 */
static void check_signals(struct run *r, const struct ynode *meta, const struct ynode *podspec, const struct found *f,
			  const struct ynode *at, const char *what)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct sidecar *sc = &f->sc[i];
		const struct ynode *c = sc->node;
		const char *uid = NULL, *name = c ? ydoc_str(ydoc_get(c, "name")) : NULL;
		struct sidecar_spec s;
		char why[512], label[160];
		bool signal;

		if (sc->native || spec_parse(sc->spec, &s, why, sizeof(why)) < 0)
			continue;
		signal = !s.stop_url;
		spec_free(&s);
		if (!signal)
			continue;
		if (c)
			uid = uid_of(ydoc_str(ydoc_path(c, "securityContext.runAsUser")));
		if (!uid && sc->p && sc->p->uid_key)
			uid = uid_of(annotation(meta, sc->p->uid_key));
		if (!uid && c)
			uid = uid_of(ydoc_str(ydoc_path(podspec, "securityContext.runAsUser")));
		if (!uid && sc->p)
			uid = sc->p->uid;
		snprintf(label, sizeof(label), "%s%s%s", name ? "container " : "", name ? name : "",
			 name ? "" : (sc->p ? sc->p->title : "a sidecar"));
		if (!uid)
			say(r, WARN, c ? c : at, what,
			    "%s is stopped by a signal, and runs as its image's user, which the template does not "
			    "show: rearguard (uid " AGENT_UID ") may signal it only as the same uid; set its "
			    "securityContext.runAsUser and rearguard's to one uid, or give it an HTTP stop (stop=URL)",
			    label);
		else if (strcmp(uid, AGENT_UID) != 0)
			say(r, WARN, c ? c : at, what,
			    "%s is stopped by a signal and runs as uid %s, rearguard as uid " AGENT_UID
			    ", which may not signal it: run rearguard as uid %s (its securityContext.runAsUser%s), or "
			    "give the sidecar an HTTP stop (stop=URL)",
			    label, uid, uid, strcmp(uid, "0") == 0 ? ", without runAsNonRoot" : "");
	}
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
		const struct spec_preset *p = f->sc[i].p;
		const char *v = p && p->first_key ? meta_value(meta, p->first_key) : NULL;
		bool first;

		if (f->sc[i].node || f->sc[i].native)
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
			say(r, WARN, at, what,
			    "not gated: %s's injector puts its sidecar after the containers unless %s sets "
			    "%s: true, so the agent's postStart hook would hold the sidecar back until it times out "
			    "(with %s it gates the app by itself)",
			    p->name, p->first_key, p->first_word, p->first_word);
		else if (p->first_key)
			say(r, WARN, at, what, "not gated: %s=%s puts %s's sidecar after the containers", p->first_key,
			    p->first_off, p->name);
		else
			say(r, WARN, at, what,
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

/*
 * The agent as manifests/ write it: non-root, read-only, no capabilities,
 * the runtime's default seccomp profile (what Pod Security's restricted
 * level asks for), small requests.
 */
static struct ynode *agent_container(struct run *r, const struct found *f, const char *policy, bool gate)
{
	struct ystream *s = r->s;
	struct ynode *c = ydoc_new_map(s, false), *env = ydoc_new_seq(s, false), *mounts = ydoc_new_seq(s, false);
	struct ynode *sc = ydoc_new_map(s, false), *drop = ydoc_new_seq(s, true), *res = ydoc_new_map(s, false);
	char apps[32], sidecars[MAX_SIDECARS * PRESET_SPEC_MAX] = "";
	size_t i;

	if (!c || !env || !mounts || !sc || !drop || !res)
		return NULL;
	snprintf(apps, sizeof(apps), "%zu", f->apps);
	for (i = 0; i < f->n; i++)
		snprintf(sidecars + strlen(sidecars), sizeof(sidecars) - strlen(sidecars), "%s%s", i ? ";" : "",
			 f->sc[i].spec);
	if (!r->o.image)
		r->c.placeholder = true;
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
	    ydoc_set(s, sc, "seccompProfile", pair_map(s, true, "type", text(s, "RuntimeDefault"), NULL, NULL), false) <
		0 ||
	    ydoc_set(s, c, "securityContext", sc, false) < 0 ||
	    ydoc_set(s, res, "requests", pair_map(s, true, "cpu", text(s, "5m"), "memory", text(s, "8Mi")), false) <
		0 ||
	    ydoc_set(s, res, "limits", pair_map(s, true, "memory", text(s, "32Mi"), NULL, NULL), false) < 0 ||
	    ydoc_set(s, c, "resources", res, false) < 0)
		return NULL;
	return c;
}

/* The file protocol's emptyDir, unless the pod has a volume of that name. */
static int add_volume(struct run *r, struct ynode *spec)
{
	struct ystream *s = r->s;
	struct ynode *vols = ydoc_want_seq(s, spec, "volumes"), *v;
	size_t i;

	if (!vols)
		return -ENOMEM;
	for (i = 0; i < vols->n; i++)
		if (is(ydoc_get(vols->items[i], "name"), AGENT_NAME))
			return 0;
	v = pair_map(s, false, "name", text(s, AGENT_NAME), "emptyDir",
		     pair_map(s, true, "medium", text(s, "Memory"), "sizeLimit", text(s, "1Mi")));
	return ydoc_append(s, vols, v);
}

/*
 * kubectl logs and kubectl exec go to the pod's first container unless an
 * annotation names another: the agent, now first, would take their place.
 * The first app is named for both, unless the template names one already.
 */
static int default_container(struct run *r, struct ynode *tmpl, struct ynode **meta, const char *app)
{
	static const char *const keys[] = {"kubectl.kubernetes.io/default-container",
					   "kubectl.kubernetes.io/default-logs-container"};
	struct ynode *ann;
	size_t i;

	if (!app)
		return 0;
	if (!*meta) {
		*meta = ydoc_new_map(r->s, false);
		if (!*meta || ydoc_set(r->s, tmpl, "metadata", *meta, true) < 0)
			return -ENOMEM;
	}
	ann = ydoc_want_map(r->s, *meta, "annotations");
	if (!ann)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (!ydoc_get(ann, keys[i]) && ydoc_set(r->s, ann, keys[i], text(r->s, app), false) < 0)
			return -ENOMEM;
	return 0;
}

/* ---- one pod template ---------------------------------------------------------- */

/* How notes name a sidecar: its preset, else its container. */
static const char *sidecar_name(const struct sidecar *sc)
{
	const char *name = sc->node ? ydoc_str(ydoc_get(sc->node, "name")) : NULL;

	return sc->p ? sc->p->name : name ? name : "?";
}

/*
 * Adds rearguard to one pod template (tmpl holds metadata and spec; for a
 * Pod it is the object). Returns 1 when it changed, 0 when it is left as it
 * is (with a note saying why), or an error.
 */
static int inject_template(struct run *r, struct ynode *tmpl, const char *field, bool job, const struct ynode *at,
			   const char *what)
{
	struct ynode *meta, *spec, *ctrs, *inits, *agent, *share, *bad;
	const char *policy, *v, *app;
	char list[256] = "";
	struct found f;
	bool gate = r->o.gate;
	size_t i, at_index = 0;
	int rc;

	meta = want(tmpl, "metadata", YNODE_MAP, &bad);
	if (bad)
		return misshapen(r, bad, what, field, "metadata", "a mapping");
	spec = want(tmpl, "spec", YNODE_MAP, &bad);
	if (bad)
		return misshapen(r, bad, what, field, "spec", "a mapping");
	if (meta) {
		want(meta, "annotations", YNODE_MAP, &bad);
		if (bad)
			return misshapen(r, bad, what, field, "metadata.annotations", "a mapping");
		want(meta, "labels", YNODE_MAP, &bad);
		if (bad)
			return misshapen(r, bad, what, field, "metadata.labels", "a mapping");
	}
	ctrs = spec ? want(spec, "containers", YNODE_SEQ, &bad) : NULL;
	if (bad)
		return misshapen(r, bad, what, field, "spec.containers", "a list");
	if (!ctrs || ctrs->n == 0) {
		say(r, WARN,
		    ctrs   ? ctrs
		    : spec ? spec
			   : tmpl,
		    what, "%s.spec.containers is %s: a pod needs at least one container: left unchanged", field,
		    ctrs ? "empty" : "missing");
		r->c.left++;
		return 0;
	}
	if (ctrs->n > MAX_CONTAINERS) {
		say(r, WARN, ctrs, what, "more than %d containers: left unchanged", MAX_CONTAINERS);
		r->c.left++;
		return 0;
	}
	want(spec, "volumes", YNODE_SEQ, &bad);
	if (bad)
		return misshapen(r, bad, what, field, "spec.volumes", "a list");
	inits = want(spec, "initContainers", YNODE_SEQ, &bad);
	if (bad)
		return misshapen(r, bad, what, field, "spec.initContainers", "a list");
	for (i = 0; inits && i < inits->n; i++)
		if (inits->items[i]->kind != YNODE_MAP) {
			say(r, WARN, inits->items[i], what,
			    "%s.spec.initContainers[%zu] is %s, not a mapping: left unchanged", field, i,
			    shape(inits->items[i]));
			r->c.left++;
			return 0;
		}
	for (i = 0; i < ctrs->n; i++) {
		struct ynode *c = ctrs->items[i];

		if (c->kind != YNODE_MAP) {
			say(r, WARN, c, what, "%s.spec.containers[%zu] is %s, not a mapping: left unchanged", field, i,
			    shape(c));
			r->c.left++;
			return 0;
		}
		if (is_agent(c)) {
			say(r, INFO, at, what, "already has rearguard (container %s): left unchanged",
			    ydoc_str(ydoc_get(c, "name")) ? ydoc_str(ydoc_get(c, "name")) : "?");
			r->c.left++;
			return 0;
		}
		want(c, "args", YNODE_SEQ, &bad);
		if (!bad)
			want(c, "command", YNODE_SEQ, &bad);
		if (bad) {
			say(r, WARN, bad, what, "%s.spec.containers[%zu]: %s is %s, not a list: left unchanged", field,
			    i, bad == ydoc_get(c, "args") ? "args" : "command", shape(bad));
			r->c.left++;
			return 0;
		}
	}
	v = meta_value(meta, INJECT_LABEL);
	if (v && strcmp(v, "disabled") == 0) {
		say(r, INFO, at, what, "%s=disabled: left unchanged", INJECT_LABEL);
		r->c.left++;
		return 0;
	}
	policy = ydoc_str(ydoc_get(spec, "restartPolicy"));
	if (!policy && job) {
		say(r, INFO, at, what, "no restartPolicy (a Job's pod needs Never or OnFailure): left unchanged");
		r->c.left++;
		return 0;
	}
	if (!policy || (strcmp(policy, "Never") != 0 && strcmp(policy, "OnFailure") != 0)) {
		say(r, INFO, at, what,
		    "restartPolicy %s restarts every container that ends, so the pod never finishes: left unchanged",
		    policy ? policy : "Always (the default)");
		r->c.left++;
		return 0;
	}
	rc = find_sidecars(r, meta, ctrs, inits, &f, at, what);
	if (rc == -1) {
		r->c.left++;
		return 0;
	}
	if (rc < 0)
		return rc;
	if (f.n == 0) {
		say(r, INFO, at, what,
		    "no known sidecar in the template: left unchanged (a mesh that injects one namespace-wide needs "
		    "--mesh istio|linkerd; a sidecar inject does not know needs --sidecar CONTAINER or the "
		    "annotation " INJECT_SIDECARS ")");
		r->c.left++;
		return 0;
	}
	if (f.plain == 0) {
		/* Nothing for the agent to stop: the kubelet stops native sidecars, and helpers end by themselves. */
		for (i = 0; i < f.n; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
				 sidecar_name(&f.sc[i]));
		say(r, INFO, at, what,
		    "its known sidecars (%s) are native sidecars, which the kubelet stops after the apps, or helpers "
		    "that "
		    "end by themselves: left unchanged",
		    list);
		r->c.left++;
		return 0;
	}
	if (f.apps == 0) {
		say(r, INFO, at, what, "every container is a sidecar, none is an app: left unchanged");
		r->c.left++;
		return 0;
	}
	rc = fix_sidecars(r, tmpl, &meta, &f, at, what);
	if (rc == 0)
		rc = write_specs(r, meta, &f, at, what);
	if (rc < 0)
		return rc;
	check_signals(r, meta, spec, &f, at, what);
	app = ydoc_str(ydoc_get(ctrs->items[f.first_app], "name"));
	for (i = 0; i < f.n; i++)
		if (!f.sc[i].native)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", *list ? ", " : "",
				 sidecar_name(&f.sc[i]));
	for (i = 0, v = "; native: "; i < f.n; i++)
		if (f.sc[i].native) {
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", v, sidecar_name(&f.sc[i]));
			v = ", ";
		}
	if (gate)
		gate = can_gate(r, meta, &f, at, what);
	if (gate) {
		/* The template's sidecars first, then the agent and its hook, then the apps. */
		struct ynode *order[MAX_CONTAINERS];
		size_t n = 0;

		for (i = 0; i < ctrs->n; i++)
			if (f.sidecar_ctr[i])
				order[n++] = ctrs->items[i];
		at_index = n;
		for (i = 0; i < ctrs->n; i++)
			if (!f.sidecar_ctr[i])
				order[n++] = ctrs->items[i];
		memcpy(ctrs->items, order, n * sizeof(order[0]));
	}
	rc = default_container(r, tmpl, &meta, app);
	if (rc < 0)
		return rc;
	agent = agent_container(r, &f, policy, gate);
	if (!agent || ydoc_insert(r->s, ctrs, at_index, agent) < 0)
		return -ENOMEM;
	share = ydoc_get(spec, "shareProcessNamespace");
	if (share && !is(share, "true"))
		say(r, WARN, share, what,
		    "shareProcessNamespace was %s: set to true (rearguard watches the other containers through /proc)",
		    ydoc_str(share) ? ydoc_str(share) : "?");
	if (ydoc_set(r->s, spec, "shareProcessNamespace", raw(r->s, "true"), true) < 0)
		return -ENOMEM;
	rc = add_volume(r, spec);
	if (rc < 0)
		return rc;
	say(r, INFO, at, what, "rearguard added: %zu app%s, sidecars %s", f.apps, f.apps == 1 ? "" : "s", list);
	r->c.changed++;
	return 1;
}

/* ---- objects, lists, streams ----------------------------------------------------- */

/*
 * The first place a document shows an unrendered Helm template: a key that
 * is a mapping ({{ .Values.x }} read as YAML), or a value that starts with
 * "{{" outside the annotations (where Vault's templates live). NULL if none.
 */
static const struct ynode *helm_mark(const struct ynode *n, int depth)
{
	const struct ynode *hit;
	size_t i;

	if (!n || depth > YDOC_MAX_DEPTH)
		return NULL;
	if (n->kind == YNODE_SCALAR)
		return n->len >= 2 && strncmp(n->value, "{{", 2) == 0 ? n : NULL;
	for (i = 0; i < n->n; i++) {
		if (n->kind == YNODE_MAP && i % 2 == 0) {
			if (n->items[i]->kind == YNODE_MAP || n->items[i]->kind == YNODE_SEQ)
				return n->items[i];
			if (is(n->items[i], "annotations"))
				i++; /* its values are other programs' templates */
			continue;
		}
		hit = helm_mark(n->items[i], depth + 1);
		if (hit)
			return hit;
	}
	return NULL;
}

/* How notes name an object: Job "x" for the kinds inject handles, else its apiVersion and kind too. */
static void name_object(const struct ynode *obj, bool ours, char *what, size_t len)
{
	const char *kind = ydoc_str(ydoc_get(obj, "kind")), *api = ydoc_str(ydoc_get(obj, "apiVersion"));
	const char *name = ydoc_str(ydoc_path(obj, "metadata.name"));

	if (!name)
		name = ydoc_str(ydoc_path(obj, "metadata.generateName"));
	snprintf(what, len, "%.64s%s%.64s%s%.128s%s", ours || !api ? "" : api, ours || !api ? "" : " ",
		 kind ? kind : "object", name ? " \"" : "", name ? name : "", name ? "\"" : "");
}

/* Adds rearguard to one object: 1 changed, 0 left alone, or an error. */
static int inject_object(struct run *r, struct ynode *obj)
{
	const char *kind = ydoc_str(ydoc_get(obj, "kind")), *api = ydoc_str(ydoc_get(obj, "apiVersion"));
	bool batch = api && strncmp(api, "batch/", 6) == 0,
	     pod = kind && strcmp(kind, "Pod") == 0 && is(ydoc_get(obj, "apiVersion"), "v1");
	bool job = batch && kind && strcmp(kind, "Job") == 0, cron = batch && kind && strcmp(kind, "CronJob") == 0;
	const struct ynode *mark;
	struct ynode *t, *bad = NULL;
	const char *field, *p;
	char what[320];
	size_t n;

	if (obj->kind != YNODE_MAP) {
		if (!ydoc_is_null(obj))
			say(r, WARN, obj, "document", "%s, not a mapping: left unchanged", shape(obj));
		return 0;
	}
	name_object(obj, pod || job || cron, what, sizeof(what));
	if (!kind)
		return 0;
	if (!pod && !job && !cron) {
		/* A workload of another API that shares a name with one of ours (a Volcano Job) is said. */
		if (strcmp(kind, "Job") == 0 || strcmp(kind, "CronJob") == 0 || strcmp(kind, "Pod") == 0)
			say(r, INFO, obj, what, "not Kubernetes' %s (%s): left unchanged", kind,
			    strcmp(kind, "Pod") == 0 ? "v1" : "batch/v1");
		else if (api && strncmp(api, "argoproj.io/", 12) == 0 && strstr(kind, "Workflow"))
			say(r, INFO, obj, what,
			    "Argo Workflows stops the sidecars of its pods itself: left unchanged (docs/inject.md)");
		else if (api && strncmp(api, "tekton.dev/", 11) == 0 && (strstr(kind, "Run") || strstr(kind, "Task")))
			say(r, INFO, obj, what,
			    "Tekton stops the sidecars of its pods itself: left unchanged (docs/inject.md)");
		return 0;
	}
	mark = helm_mark(obj, 0);
	if (mark) {
		say(r, WARN, mark, what,
		    "an unrendered Helm template ({{ ... }}): left unchanged; run helm template and inject its output");
		r->c.left++;
		return 0;
	}
	if (pod)
		return inject_template(r, obj, "", false, obj, what);
	field = cron ? "spec.jobTemplate.spec.template" : "spec.template";
	/* Each step of the path a mapping: its first step that is not says where. */
	for (t = obj, p = field; t && *p; p += n + (p[n] == '.')) {
		char key[32];

		n = strcspn(p, ".");
		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		t = want(t, key, YNODE_MAP, &bad);
		if (bad) {
			snprintf(key, sizeof(key), "%.*s", (int)(p - field + n), field);
			return misshapen(r, bad, what, "", key, "a mapping");
		}
	}
	if (!t) {
		say(r, WARN, obj, what, "%s is missing: a %s needs a pod template: left unchanged", field, kind);
		r->c.left++;
		return 0;
	}
	return inject_template(r, t, field, true, obj, what);
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
		if (!ydoc_is_null(root))
			say(r, WARN, root, "document", "%s, not a mapping: left unchanged", shape(root));
		return 0;
	}
	kind = ydoc_str(ydoc_get(root, "kind"));
	api = ydoc_str(ydoc_get(root, "apiVersion"));
	items = ydoc_get(root, "items");
	if (kind && items && (items->kind == YNODE_SEQ || ydoc_is_null(items)) &&
	    (strcmp(kind, "ResourceList") == 0 || (strlen(kind) > 4 && strcmp(kind + strlen(kind) - 4, "List") == 0) ||
	     strcmp(kind, "List") == 0)) {
		struct inject_options saved = r->o;

		rc = 0;
		if (strcmp(kind, "ResourceList") == 0 && api && strncmp(api, "config.kubernetes.io/", 21) == 0) {
			rc = function_config(r, ydoc_get(root, "functionConfig"));
			if (rc < 0)
				return rc;
		}
		for (i = 0; items->kind == YNODE_SEQ && i < items->n; i++) {
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
	if (rc == -EINVAL && memmem(in, len, "{{", 2) && strlen(err) + 1 < errlen)
		snprintf(err + strlen(err), errlen - strlen(err),
			 " (the input holds {{: an unrendered Helm template? run helm template and inject its output)");
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
	if (o->counts) {
		o->counts->changed += r.c.changed;
		o->counts->left += r.c.left;
		o->counts->warnings += r.c.warnings;
		o->counts->placeholder |= r.c.placeholder;
	}
	*out = b.p;
	*outlen = b.len;
	return 0;
}
