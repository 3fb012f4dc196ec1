/*
 * What a pod template shows of its sidecars, for inject's plan: the ones
 * its annotations ask an injector for (native or not), its own sidecar
 * containers, the ones the user named, its native sidecars; then the
 * fixes their stops need and their specs (written as the fixes will leave
 * the command lines), and the pre-flight of signal stops. Nothing here
 * changes the tree: the fixes are the plan's, which injectapply.c carries
 * out. Everything a sidecar is known by comes from its preset row
 * (presets.h).
 */
#include "config.h"

#include "injectint.h"

#include "argv.h"
#include "parse.h"
#include "spec.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- the sidecars a template shows -------------------------------------------- */

static int named_spec(const char *ctr, const char *const *argv, size_t argc, const char *spec, char *out, size_t len);

/* Adds a sidecar once: a mesh both asked for and already in the template is one sidecar, its container. */
static struct sidecar *add_sidecar(struct found *f, const struct spec_preset *p, size_t ctr, struct ynode *node,
				   bool native)
{
	struct sidecar *sc;
	size_t i;

	for (i = 0; p && i < f->n; i++) {
		sc = &f->sc[i];
		if (sc->p != p || (sc->node && node))
			continue;
		if (sc->node || !node)
			return NULL;
		/*
		 * Asked for by an annotation, and its container is in the pod
		 * (its injector ran before rearguard): the container is the
		 * evidence, native or not.
		 */
		f->plain -= !sc->native;
		sc->ctr = ctr;
		sc->node = node;
		sc->native = native || p->helper;
		f->plain += !sc->native;
		return sc;
	}
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
		const char *v = inject_annotation(meta, p->native_keys[k]);

		if (v)
			return argv_gobool(v, &on) == 0 && on;
	}
	return false;
}

/*
 * Whether a template's annotation asks for its row's injector: one of its
 * values, or mesh (--mesh, unless the template shows a mesh's proxy). A
 * refusal is kept in f, for the note of a template left alone.
 */
static bool asked_for(const char *mesh, const struct spec_preset *p, const struct ynode *meta, struct found *f)
{
	const char *v = inject_meta_value(meta, p->inject_key);
	size_t k;

	if (v && p->inject_off && strcmp(v, p->inject_off) == 0) {
		if (!f->refused || (mesh && p->mesh && strcmp(mesh, p->mesh) == 0)) {
			f->refused = p;
			f->mesh_refused = mesh && p->mesh && strcmp(mesh, p->mesh) == 0;
		}
		return false;
	}
	if (v && p->inject_any && *v)
		return true;
	for (k = 0; v && k < ARRAY_SIZE(p->inject_on) && p->inject_on[k]; k++)
		if (strcmp(v, p->inject_on[k]) == 0)
			return true;
	return mesh && p->mesh && strcmp(mesh, p->mesh) == 0;
}

/*
 * A mesh's proxy the template shows already, as a container or a native
 * sidecar (kube-inject's output, a template written with its proxy), or
 * NULL. --mesh says what a namespace's injector adds to the pods: where the
 * template shows the proxy, that evidence wins, and the flag adds nothing
 * (no agent for a native proxy the kubelet stops, no second mesh).
 */
static const struct ynode *mesh_shown(const struct ynode *ctrs, const struct ynode *inits,
				      const struct spec_preset **shown)
{
	const struct ynode *list[2] = {ctrs, inits};
	size_t l, i;

	for (l = 0; l < 2; l++)
		for (i = 0; list[l] && i < list[l]->n; i++) {
			const struct ynode *c = list[l]->items[i];
			const char *argv[MAX_ARGV];
			size_t argc = inject_argv(c, argv, NULL);
			const struct spec_preset *p;

			if (l == 1 && !inject_is(ydoc_get(c, "restartPolicy"), "Always"))
				continue;
			p = presets_container(ydoc_str(ydoc_get(c, "name")), ydoc_str(ydoc_get(c, "image")), argv,
					      argc);
			if (p && p->mesh) {
				*shown = p;
				return c;
			}
		}
	return NULL;
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
static const char *named_for(const struct inject_options *o, char *const *entries, size_t n, const char *name)
{
	const char *spec = NULL;
	size_t k;

	for (k = 0; k < o->nnamed; k++)
		if (names(o->named[k], strlen(o->named[k]), name, &spec))
			return spec;
	for (k = 0; k < n; k++)
		if (names(entries[k], strlen(entries[k]), name, &spec))
			return spec;
	return NULL;
}

/*
 * Where the annotation's entry at e ends: at the next ';' when the
 * annotation has one, else at the next ',' that a spec's key does not
 * follow ("web=match=nginx,stop=signal:QUIT" is one entry,
 * "caddy=signal:TERM,fluentd" two). NULL at the last entry.
 */
static char *entry_end(char *e, bool semicolons)
{
	if (semicolons)
		return strchr(e, ';');
	for (e = strchr(e, ','); e; e = strchr(e + 1, ',')) {
		const char *next = e + 1;

		while (*next == ' ')
			next++;
		if (!spec_key_at(next))
			return e;
	}
	return NULL;
}

/*
 * The sidecars the user named: --sidecar CONTAINER[=SPEC] and the
 * template's annotation (entries separated by ';', or by ',' where no key
 * of a spec follows). Each named container, or init container, is a
 * sidecar whatever it runs; f->named[i] gets its SPEC ("" for none). An
 * entry of the annotation that names no container is said.
 */
static int find_named(struct planning *pl, const struct ynode *meta, const struct ynode *ctrs,
		      const struct ynode *inits, struct found *f)
{
	const char *v = inject_annotation(meta, INJECT_SIDECARS), *spec;
	char *copy = NULL, *e, *end, *entries[64];
	bool semicolons = v && strchr(v, ';');
	size_t i, k, n = 0;

	if (v) {
		copy = ydoc_strndup(pl->s, v, strlen(v)); /* the entries live as long as the stream */
		if (!copy)
			return -ENOMEM;
		for (e = copy; e && n < ARRAY_SIZE(entries); e = end ? end + 1 : NULL) {
			end = entry_end(e, semicolons);
			if (end)
				*end = '\0';
			while (*e == ' ')
				e++;
			if (*e)
				entries[n++] = e;
		}
	}
	for (i = 0; i < ctrs->n && i < MAX_CONTAINERS; i++)
		f->named[i] = named_for(pl->o, entries, n, inject_name(ctrs->items[i]));
	for (i = 0; inits && i < inits->n && i < MAX_CONTAINERS; i++)
		f->named_init[i] = named_for(pl->o, entries, n, inject_name(inits->items[i]));
	for (k = 0; k < n; k++) {
		bool hit = false;

		for (i = 0; i < ctrs->n; i++)
			hit |= names(entries[k], strlen(entries[k]), inject_name(ctrs->items[i]), &spec);
		for (i = 0; inits && i < inits->n; i++)
			hit |= names(entries[k], strlen(entries[k]), inject_name(inits->items[i]), &spec);
		if (!hit) {
			struct inject_note *nt = plan_note(pl, NOTE_NAMED_UNKNOWN, WARN,
							   ydoc_get(ydoc_get(meta, "annotations"), INJECT_SIDECARS));

			snprintf(nt->words, sizeof(nt->words), "%.*s", (int)strcspn(entries[k], "="), entries[k]);
		}
	}
	return 0;
}

/*
 * Checks a named container's SPEC before anything changes: one that does
 * not parse leaves the template alone (-1, with a warning).
 */
static int check_named(struct planning *pl, const struct ynode *c, const char *spec)
{
	const char *argv[MAX_ARGV], *name = inject_name(c);
	size_t argc = inject_argv(c, argv, NULL);
	char text[PRESET_SPEC_MAX], why[512];
	struct sidecar_spec s;
	struct inject_note *nt;

	if (named_spec(name, argv, argc, spec, text, sizeof(text)) < 0) {
		nt = plan_note(pl, NOTE_NAMED_NO_SPEC, WARN, c);
		nt->ctr = name;
		nt->a = spec;
		return -1;
	}
	if (spec_parse(text, &s, why, sizeof(why)) < 0) {
		nt = plan_note(pl, NOTE_NAMED_BAD_SPEC, WARN, c);
		nt->ctr = name;
		str_copy(nt->words, why, sizeof(nt->words));
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
static int find_native(struct planning *pl, const struct ynode *inits, struct found *f)
{
	size_t i;

	for (i = 0; inits && i < inits->n && i < MAX_CONTAINERS; i++) {
		struct ynode *c = inits->items[i];
		const char *argv[MAX_ARGV], *name = inject_name(c);
		size_t argc = inject_argv(c, argv, NULL);
		const struct spec_preset *p = NULL;
		struct sidecar *sc;

		if (!inject_is(ydoc_get(c, "restartPolicy"), "Always"))
			continue;
		if (f->named_init[i] && presets_find(f->named_init[i]))
			p = presets_find(f->named_init[i]);
		else if (f->named_init[i] && check_named(pl, c, f->named_init[i]) < 0)
			return -1;
		else if (!f->named_init[i])
			p = presets_container(name, ydoc_str(ydoc_get(c, "image")), argv, argc);
		sc = add_sidecar(f, p, NO_CTR, c, true);
		if (sc && f->named_init[i] && !p)
			sc->named = f->named_init[i];
		if (sc && !p && !f->named_init[i] && (argc == 0 || !argv[0]))
			plan_note(pl, NOTE_NATIVE_GUESS, WARN, c)->ctr = name ? name : "?";
	}
	return 0;
}

/*
 * A wrapper that stops the sidecar it runs by itself once the apps are
 * done, or NULL: nownabe/watchkiller SIGKILLs its child once the file
 * KILLER_WATCH_FILE exists (the app's trap makes it) and exits 0, and a
 * SIGTERM to it ends it with 143 and leaves the child; kubexit stops its
 * child when a death dependency (KUBEXIT_DEATH_DEPS) has ended. Either
 * is a helper that ends by itself, which rearguard must not signal.
 */
static const char *self_stopping(const struct ynode *c, const char *const *argv, size_t argc)
{
	static const struct {
		const char *program, *env;
	} wrappers[] = {
		{"watchkiller", "KILLER_WATCH_FILE"},
		{"kubexit", "KUBEXIT_DEATH_DEPS"},
	};
	const char *v;
	size_t i;

	for (i = 0; argc > 0 && argv[0] && i < ARRAY_SIZE(wrappers); i++)
		if (strcmp(base_name(argv[0]), wrappers[i].program) == 0 && (v = inject_env(c, wrappers[i].env)) && *v)
			return wrappers[i].program;
	return NULL;
}

/*
 * The sidecars a template shows: those its annotations (or --mesh, when it
 * shows no mesh's proxy itself) ask an injector for, in the table's order (native when the template asks the
 * injector for that), then its own sidecar containers in their order (by
 * what they run, their image or name, or because the user named them),
 * then its native sidecars. Every other container is an app.
 */
int inject_find_sidecars(struct planning *pl, const struct ynode *meta, const struct ynode *ctrs,
			 const struct ynode *inits, struct found *f)
{
	const char *mesh = pl->o->mesh;
	const struct spec_preset *shown = NULL;
	const struct ynode *proxy = mesh ? mesh_shown(ctrs, inits, &shown) : NULL;
	struct inject_note *nt;
	size_t i;
	int rc;

	/* What the containers use of the arrays, and the rest: a pod has a few containers of 256. */
	memset(f->named, 0, (ctrs->n < MAX_CONTAINERS ? ctrs->n : MAX_CONTAINERS) * sizeof(f->named[0]));
	memset(f->sidecar_ctr, 0, (ctrs->n < MAX_CONTAINERS ? ctrs->n : MAX_CONTAINERS) * sizeof(f->sidecar_ctr[0]));
	if (inits)
		memset(f->named_init, 0, (inits->n < MAX_CONTAINERS ? inits->n : MAX_CONTAINERS) * sizeof(f->named_init[0]));
	f->plain = f->n = f->apps = 0;
	f->refused = NULL;
	f->mesh_refused = f->root_agent = false;
	f->first_app = NO_CTR;
	if (proxy) {
		nt = plan_note(pl, NOTE_MESH_SHOWN, INFO, proxy);
		nt->p = shown;
		nt->ctr = inject_name(proxy);
		nt->flag = inject_is(ydoc_get(proxy, "restartPolicy"), "Always");
		nt->a = mesh;
	}
	for (i = 0; i < spec_npresets; i++) {
		const struct spec_preset *p = &spec_presets[i];

		if (!p->inject_key || !asked_for(proxy ? NULL : mesh, p, meta, f))
			continue;
		if (p->none_key && inject_meta_value(meta, p->none_key) &&
		    strcasecmp(inject_meta_value(meta, p->none_key), "true") == 0) {
			nt = plan_note(pl, NOTE_NONE_KEY, INFO, NULL);
			nt->p = p;
			nt->a = p->none_key;
			continue;
		}
		add_sidecar(f, p, NO_CTR, NULL, native_asked(p, meta));
	}
	rc = find_named(pl, meta, ctrs, inits, f);
	if (rc < 0)
		return rc;
	for (i = 0; i < ctrs->n; i++) {
		struct ynode *c = ctrs->items[i];
		const char *argv[MAX_ARGV];
		size_t argc = inject_argv(c, argv, NULL);
		const struct spec_preset *p = NULL;
		struct sidecar *sc;

		if (f->named[i] && presets_find(f->named[i])) {
			p = presets_find(f->named[i]);
		} else if (f->named[i]) {
			if (check_named(pl, c, f->named[i]) < 0)
				return -1;
			sc = add_sidecar(f, NULL, i, c, false);
			if (sc)
				sc->named = f->named[i];
			f->sidecar_ctr[i] = true;
			continue;
		} else {
			p = presets_container(inject_name(c), ydoc_str(ydoc_get(c, "image")), argv, argc);
		}
		if (p) {
			const char *wrapper = self_stopping(c, argv, argc);

			f->sidecar_ctr[i] = true;
			sc = add_sidecar(f, p, i, c, wrapper != NULL);
			if (sc)
				sc->self_stops = wrapper;
			if (p->note && !wrapper) {
				nt = plan_note(pl, NOTE_PRESET_NOTE, INFO, c);
				nt->p = p;
				nt->ctr = inject_name(c);
			}
		} else {
			if (f->first_app == NO_CTR)
				f->first_app = i;
			f->apps++;
		}
	}
	return find_native(pl, inits, f);
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
 * The spec of a container the user named: PRESET[,KEY=VALUE...] as written,
 * named after the container unless its keys name it (the preset's match
 * and URLs stay, the keys override them); a whole spec (keys) with name=
 * the container and match= its program (the command's, else the
 * container's name) unless it gives them; else those two and the SPEC as
 * its stop. Each with container= the container (unless the keys give
 * one): containers that run one program (sh, python) are told apart by it.
 */
static int named_spec(const char *ctr, const char *const *argv, size_t argc, const char *spec, char *out, size_t len)
{
	const char *prog, *comma = strchr(spec, ',');
	size_t first = comma ? (size_t)(comma - spec) : strlen(spec);
	char match[128] = "", preset[SPEC_NAME_MAX] = "";
	bool keys = strchr(spec, '=') != NULL;
	bool has_name = strncmp(spec, "name=", 5) == 0 || strstr(spec, ",name=");
	bool has_match = strncmp(spec, "match=", 6) == 0 || strstr(spec, ",match=");
	int n;

	if (!ctr)
		return -EINVAL;
	if (first < sizeof(preset))
		memcpy(preset, spec, first);
	prog = argc > 0 && argv[0] ? base_name(argv[0]) : ctr;
	regex_quote(match, sizeof(match), prog);
	/* Also a first word that is no preset nor key: spec_parse then says which presets there are. */
	if (presets_find(preset) || (keys && !spec_key_at(spec)))
		n = snprintf(out, len, "%s%s%s", spec, has_name ? "" : ",name=", has_name ? "" : ctr);
	else if (keys)
		n = snprintf(out, len, "%s%s%s%s%s%s", has_name ? "" : "name=", has_name ? "" : ctr,
			     has_name ? "" : ",", spec, has_match ? "" : ",match=", has_match ? "" : match);
	else if (!*spec || strncmp(spec, "signal:", 7) == 0 || strncmp(spec, "signal-all:", 11) == 0 ||
		 strncasecmp(spec, "http", 4) == 0)
		n = snprintf(out, len, "name=%s,match=%s%s%s", ctr, match, *spec ? ",stop=" : "", spec);
	else if (spec_key_at(spec)) /* a word without a value (handles-stop): the default stop */
		n = snprintf(out, len, "name=%s,match=%s,%s", ctr, match, spec);
	else
		return -EINVAL;
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	/* The container it is, by name: the agent then tells it from others that run the same program. */
	if (!strstr(out, "container=") && spec_container_name(ctr)) {
		size_t used = (size_t)n;

		n = snprintf(out + used, len - used, ",container=%s", ctr);
		if (n < 0 || (size_t)n >= len - used)
			return -ENOSPC;
	}
	return 0;
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

/* Adds the word native to a spec that has it not; -ENOSPC when it does not fit (never left out). */
static int mark_native(char *spec, size_t len)
{
	const char *c = spec;
	size_t n = strlen(spec);

	for (; c; c = strchr(c, ',')) {
		c += *c == ',';
		if (strncmp(c, "native", 6) == 0 && spec_key_at(c))
			return 0;
	}
	if (n + sizeof(",native") > len)
		return -ENOSPC;
	memcpy(spec + n, ",native", sizeof(",native"));
	return 0;
}

/* ---- the fixes the sidecars need ------------------------------------------ */

/*
 * An annotation the sidecar's stop endpoint needs: planned when absent;
 * false when the template refuses it (said).
 */
static int fix_annotation(struct planning *pl, const struct ynode *meta, const struct spec_preset *p)
{
	const struct ynode *ann = ydoc_get(ydoc_get(meta, "annotations"), p->fix_key);
	const char *v = ydoc_str(ann);
	struct inject_note *nt;
	size_t i;

	if (v) {
		if (strcmp(v, p->fix_value) == 0)
			return 1;
		nt = plan_note(pl, NOTE_FIX_REFUSED, WARN, ann);
		nt->p = p;
		nt->a = p->fix_key;
		nt->b = v;
		nt->c = p->fix_value;
		return 0;
	}
	/* Two sidecars of one row ask once. */
	for (i = 0; i < pl->plan->nfixes; i++)
		if (pl->plan->fixes[i].kind == FIX_ANNOTATION && strcmp(pl->plan->fixes[i].key, p->fix_key) == 0)
			return 1;
	return plan_fix(pl, FIX_ANNOTATION, NULL, NULL, p->fix_key, p->fix_value) < 0 ? -ENOMEM : 1;
}

/*
 * A sidecar whose container is there already: its injector ran before
 * rearguard saw the pod (the webhook after Linkerd's), or the template
 * was written with it. The annotation its injector reads comes too late;
 * the container itself is changed to the same effect where the row says
 * how (fix_env), and is fine where the annotation was there all along.
 * Otherwise it is stopped by SIGTERM, which is said. 1 fixed, 0 not.
 */
static int fix_injected(struct planning *pl, const struct ynode *meta, const struct sidecar *sc)
{
	const struct spec_preset *p = sc->p;
	const char *v = inject_annotation(meta, p->fix_key), *now;
	struct inject_note *nt;

	if (p->fix_env) {
		now = inject_env(sc->node, p->fix_env);
		if (now && strcmp(now, p->fix_env_value) == 0)
			return 1;
		nt = plan_note(pl, NOTE_ENV_SET, INFO, sc->node);
		nt->p = p;
		nt->ctr = inject_name(sc->node);
		nt->a = p->fix_env;
		nt->b = p->fix_env_value;
		nt->c = now;
		return plan_fix(pl, FIX_ENV, sc->node, NULL, p->fix_env, p->fix_env_value) < 0 ? -ENOMEM : 1;
	}
	if (v && strcmp(v, p->fix_value) == 0)
		return 1;
	nt = plan_note(pl, NOTE_FIX_TOO_LATE, WARN, sc->node);
	nt->p = p;
	nt->ctr = inject_name(sc->node);
	nt->a = p->fix_key;
	return 0;
}

/*
 * A sidecar's command line as the planned fixes will leave it: what its
 * spec is written from. The program may follow a wrapper (tini --
 * cloud-sql-proxy, /watchkiller /cloud_sql_proxy) or be a shell's script
 * (sh -c 'exec cloud-sql-proxy ...'): its flags are read from the program
 * on, and go right after it, where cobra takes them; a script's are not
 * rearguard's to add.
 */
struct cmdline {
	const char *argv[MAX_ARGV];
	struct ynode **slots[MAX_ARGV];
	size_t argc;
	size_t args_at; /* where args begin among argv */
	size_t prog;	/* the program's index (0 where no wrapper runs it) */
	size_t next;	/* where the next flag put in goes */
	size_t first;	/* ...and the first one, as an index of args */
	struct preset_program script;
	const struct ynode *ctr;
	struct planning *pl;
};

static void cmdline_read(struct cmdline *cl, struct planning *pl, const struct ynode *c)
{
	const struct ynode *cmd = ydoc_get(c, "command");

	memset(cl, 0, sizeof(*cl));
	cl->pl = pl;
	cl->ctr = c;
	cl->argc = inject_argv(c, cl->argv, cl->slots);
	cl->args_at = cmd && cmd->kind == YNODE_SEQ && cmd->n > 0 ? (cmd->n < MAX_ARGV ? cmd->n : MAX_ARGV) : 1;
	if (cl->argc == 0) {
		cl->argv[0] = NULL;
		cl->slots[0] = NULL;
		cl->argc = 1;
	}
	/* Read in place: a script's words point into its own buf, which a copy would leave behind. */
	if (cl->argv[0] && !presets_detect(NULL, cl->argv, cl->argc, NULL, 0) &&
	    presets_program(cl->argv, cl->argc, &cl->script) && !cl->script.script) {
		cl->prog = cl->script.at;
		memset(&cl->script, 0, sizeof(cl->script));
	}
	cl->next = cl->prog < cl->args_at ? cl->args_at : cl->prog + 1;
	cl->first = cl->next - cl->args_at;
}

/*
 * An environment variable of the container as the planned fixes leave it:
 * a variable the plan sets, else the container's own (for presets_spec
 * and presets_flag; data is the cmdline).
 */
static const char *cmdline_env(const void *data, const char *name)
{
	const struct cmdline *cl = data;
	const struct inject_plan *plan = cl->pl->plan;
	size_t i;

	for (i = plan->nfixes; i-- > 0;)
		if (plan->fixes[i].kind == FIX_ENV && plan->fixes[i].ctr == cl->ctr && strcmp(plan->fixes[i].key, name) == 0)
			return plan->fixes[i].value;
	return inject_env(cl->ctr, name);
}

/* What configures the sidecar, read from the program on. */
static void cmdline_source(const struct cmdline *cl, const struct ynode *meta, struct preset_source *src)
{
	memset(src, 0, sizeof(*src));
	src->ann = inject_annotation;
	src->meta = meta;
	src->no_ports = cl->pl->plan->no_ports;
	if (!cl->ctr)
		return;
	src->env = cmdline_env;
	src->ctr = cl;
	src->no_ports = cl->pl->plan->no_ports;
	if (cl->script.argc > 0) {
		src->argv = cl->script.argv;
		src->argc = cl->script.argc;
	} else {
		src->argv = cl->argv + cl->prog;
		src->argc = cl->argc - cl->prog;
		if (src->argc == 1 && !src->argv[0])
			src->argc = 0;
	}
}

/* word put right after the program, after those put there before, as inject_apply will. */
static void cmdline_insert(struct cmdline *cl, const char *word)
{
	size_t at = cl->next++;

	if (cl->argc == MAX_ARGV)
		cl->argc--;
	memmove(cl->argv + at + 1, cl->argv + at, (cl->argc - at) * sizeof(cl->argv[0]));
	memmove(cl->slots + at + 1, cl->slots + at, (cl->argc - at) * sizeof(cl->slots[0]));
	cl->argv[at] = word;
	cl->slots[at] = NULL;
	cl->argc++;
}

/* Whether the container sets any of the row's environment twins: then it is configured by its environment. */
static bool configured_by_env(const struct spec_preset *p, const struct ynode *c)
{
	const struct ynode *env = ydoc_get(c, "env");
	size_t i, n = p->env_prefix ? strlen(p->env_prefix) : 0;

	for (i = 0; n && env && env->kind == YNODE_SEQ && i < env->n; i++) {
		const char *name = ydoc_str(ydoc_get(env->items[i], "name"));

		if (name && strncmp(name, p->env_prefix, n) == 0)
			return true;
	}
	return false;
}

/*
 * The flags a sidecar's stop needs (its row's), each only when it is not
 * on, and only where the program's version has it: put right after the
 * program (cobra takes flags anywhere after it), or, where the command
 * line turns it off (--quitquitquit=false), turned on in place. Where the
 * sidecar is configured by its environment (the Cloud SQL Proxy
 * Operator's), or its program is a script's, the flag's environment twin
 * is set instead. A version older than a flag, or one the image does not
 * tell, gets none of the flags that came after its first release (said);
 * without its stop endpoint the sidecar is stopped by SIGTERM.
 */
static int fix_flags(struct planning *pl, const struct ynode *meta, struct sidecar *sc, struct cmdline *cl)
{
	const struct spec_preset *p = sc->p;
	const char *image = ydoc_str(ydoc_get(sc->node, "image"));
	char version[64];
	enum preset_version known = presets_image_version(p, image, version, sizeof(version));
	bool by_env = p->env_prefix && (cl->script.argc > 0 || configured_by_env(p, sc->node)), version_matters = false;
	char unknown[NOTE_LIST_MAX] = "";
	struct preset_source src;
	struct inject_note *nt;
	size_t i;

	/* An image that does not tell the version of a program whose flags came release by release: none at all. */
	for (i = 0; i < ARRAY_SIZE(p->flags) && p->flags[i].name && known == VERSION_UNKNOWN; i++)
		version_matters |= p->flags[i].since != NULL;
	for (i = 0; i < ARRAY_SIZE(p->flags) && p->flags[i].name; i++) {
		const struct preset_flag *flag = &p->flags[i];
		struct preset_flag_state f;
		char word[64];
		const char *kept;
		const char *at;

		cmdline_source(cl, meta, &src);
		presets_flag(p, &src, flag->name, true, &f);
		/* On the node's network, nothing that opens a port (its stop endpoint, its health check's). */
		if (f.on || (pl->plan->no_ports && (flag->stop_endpoint || (p->ready_flag && strcmp(flag->name, p->ready_flag) == 0))))
			continue;
		if (f.set && !f.from_env && cl->script.argc == 0 && cl->slots[cl->prog + f.at]) {
			/* The same dashes, without the value: the last one wins in Go, and it is this one. */
			at = cl->argv[cl->prog + f.at];
			snprintf(word, sizeof(word), "%.*s", strchr(at, '=') ? (int)(strchr(at, '=') - at) : 48, at);
			kept = ydoc_strndup(pl->s, word, strlen(word));
			if (!kept)
				return -ENOMEM;
			nt = plan_note(pl, NOTE_FLAG_ON, INFO, *cl->slots[cl->prog + f.at]);
			nt->p = p;
			nt->ctr = inject_name(sc->node);
			nt->a = at;
			nt->b = kept;
			if (plan_fix(pl, FIX_FLAG_ON, sc->node, cl->slots[cl->prog + f.at], kept, NULL) < 0)
				return -ENOMEM;
			cl->argv[cl->prog + f.at] = kept;
			continue;
		}
		if (version_matters) {
			snprintf(unknown + strlen(unknown), sizeof(unknown) - strlen(unknown), "%s--%s",
				 *unknown ? ", " : "", flag->name);
			continue;
		}
		if (flag->since && known == VERSION_KNOWN && !presets_version_at_least(version, flag->since)) {
			nt = plan_note(pl, NOTE_FLAG_TOO_NEW, WARN, sc->node);
			nt->p = p;
			nt->ctr = inject_name(sc->node);
			nt->a = flag->name;
			nt->b = flag->since;
			nt->c = ydoc_strndup(pl->s, version, strlen(version));
			continue;
		}
		if (by_env && *f.env_name) {
			const char *name = ydoc_strndup(pl->s, f.env_name, strlen(f.env_name));

			if (!name || plan_fix(pl, FIX_ENV, sc->node, NULL, name, "true") < 0)
				return -ENOMEM;
			nt = plan_note(pl, NOTE_ENV_SET, INFO, sc->node);
			nt->p = p;
			nt->ctr = inject_name(sc->node);
			nt->a = name;
			nt->b = "true";
			nt->c = f.from_env ? f.value : NULL;
			continue;
		}
		if (cl->script.argc > 0)
			continue; /* a script's flags are its author's; no twin to set */
		snprintf(word, sizeof(word), "--%s", flag->name);
		kept = ydoc_strndup(pl->s, word, strlen(word));
		if (!kept || plan_fix(pl, FIX_FLAG_ADD, sc->node, NULL, kept, NULL) < 0)
			return -ENOMEM;
		pl->plan->fixes[pl->plan->nfixes - 1].at = cl->first;
		cmdline_insert(cl, kept);
	}
	if (*unknown) {
		nt = plan_note(pl, NOTE_VERSION_UNKNOWN, WARN, sc->node);
		nt->p = p;
		nt->ctr = inject_name(sc->node);
		nt->a = image;
		str_copy(nt->words, unknown, sizeof(nt->words));
	}
	/* Without its stop endpoint, SIGTERM, at once rather than after a refused request. */
	for (i = 0; i < ARRAY_SIZE(p->flags) && p->flags[i].name; i++) {
		struct preset_flag_state f;

		if (!p->flags[i].stop_endpoint)
			continue;
		cmdline_source(cl, meta, &src);
		presets_flag(p, &src, p->flags[i].name, true, &f);
		sc->signal_stop |= !f.on;
	}
	return 0;
}

/*
 * The --sidecar SPEC of one sidecar, once the fixes are in: a container's
 * URLs where its flags put them, an injected one's where the annotations
 * do; native ones marked so.
 */
static int write_spec(const struct ynode *meta, struct sidecar *sc, const struct cmdline *cl)
{
	struct preset_source src;
	int rc;

	cmdline_source(cl, meta, &src);
	if (sc->p && sc->native && !sc->p->helper)
		/* Never stopped nor polled: its URLs do not matter, its processes do. */
		rc = snprintf(sc->spec, sizeof(sc->spec), "%s", sc->p->name) < (int)sizeof(sc->spec) ? 0 : -ENOSPC;
	else if (sc->p)
		rc = presets_spec(sc->p, &src, sc->signal_stop, sc->spec, sizeof(sc->spec));
	else
		rc = named_spec(inject_name(sc->node), src.argv, src.argc, sc->named, sc->spec, sizeof(sc->spec));
	if (rc == 0 && sc->native && !(sc->p && sc->p->helper))
		rc = mark_native(sc->spec, sizeof(sc->spec));
	return rc;
}

/*
 * What each sidecar of the template needs to be stopped cleanly, planned,
 * and its spec: the sidecars it stops first, in their order, then the
 * native ones. Two containers of one program with the same spec are one
 * sidecar to the agent (its spec finds both).
 */
int inject_plan_sidecars(struct planning *pl, const struct ynode *meta, struct found *f)
{
	struct sidecar sorted[MAX_SIDECARS];
	size_t i, k, n = 0, pass;
	int rc;

	for (i = 0; i < f->n; i++) {
		const struct spec_preset *p = f->sc[i].native ? NULL : f->sc[i].p;

		/* On the node's network no endpoint is opened: a stop by SIGTERM. */
		if (!p || !p->fix_key || pl->plan->no_ports)
			continue;
		rc = f->sc[i].node ? fix_injected(pl, meta, &f->sc[i]) : fix_annotation(pl, meta, p);
		if (rc < 0)
			return rc;
		f->sc[i].signal_stop = rc == 0;
	}
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < f->n; i++)
			if (f->sc[i].native == (pass == 1))
				sorted[n++] = f->sc[i];
	memcpy(f->sc, sorted, n * sizeof(sorted[0]));
	n = 0;
	for (i = 0; i < f->n; i++) {
		struct sidecar *sc = &f->sc[i];
		struct cmdline cl;
		bool dup = false;

		memset(&cl, 0, sizeof(cl));
		cl.pl = pl;
		if (sc->node)
			cmdline_read(&cl, pl, sc->node);
		if (sc->node && !sc->native && sc->p && sc->p->flags[0].name) {
			rc = fix_flags(pl, meta, sc, &cl);
			if (rc < 0)
				return rc;
		}
		if (write_spec(meta, sc, &cl) < 0)
			return plan_fail(pl, sc->node, "the spec of %s is too long", sc->p ? sc->p->name : "a sidecar");
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

/*
 * The uid a sidecar runs as, as far as the template tells: its
 * container's runAsUser, else its injector's annotation, else the pod's,
 * else what its image runs it as (presets_image_uid: another image, even
 * one built FROM the sidecar's, tells nothing), or its injector's. NULL
 * when none of them tells; *by says which did.
 */
static const char *sidecar_uid(const struct sidecar *sc, const struct ynode *meta, const struct ynode *podspec,
			       const char **by)
{
	const struct ynode *c = sc->node;
	const struct spec_preset *p = sc->p;
	const char *uid = NULL;
	char first[SPEC_NAME_MAX];

	/* A container named PRESET,KEY=VALUE... runs its preset's program. */
	if (!p && sc->named && snprintf(first, sizeof(first), "%.*s", (int)strcspn(sc->named, ","), sc->named) > 0)
		p = presets_find(first);
	*by = "runAsUser";
	if (c)
		uid = inject_uid_of(ydoc_str(ydoc_path(c, "securityContext.runAsUser")));
	if (!uid && p && p->uid_key && (uid = inject_uid_of(inject_annotation(meta, p->uid_key))))
		*by = p->uid_key;
	if (!uid && c)
		uid = inject_uid_of(ydoc_str(ydoc_path(podspec, "securityContext.runAsUser")));
	if (!uid && p) {
		*by = "image";
		uid = c ? presets_image_uid(p, ydoc_str(ydoc_get(c, "image"))) : p->uid;
	}
	return uid;
}

/*
 * The shell a container's command line wraps its program in without exec
 * (sh -c 'cloud-sql-proxy ...'): a signal to the container's main process
 * reaches the shell, not the program. NULL when the script starts with
 * exec, or is no sh -c script; a shell that traps the signal is not told
 * from one that does not.
 */
static const char *shell_without_exec(const char *const *argv, size_t argc)
{
	static const char *const shells[] = {"sh", "bash", "ash", "dash"};
	const char *script, *shell;
	size_t i;

	if (argc < 3 || !argv[0] || strcmp(argv[1], "-c") != 0)
		return NULL;
	shell = base_name(argv[0]);
	for (script = argv[2]; *script == ' ' || *script == '\t' || *script == '\n'; script++)
		;
	if (strncmp(script, "exec", 4) == 0 && (script[4] == ' ' || script[4] == '\t'))
		return NULL;
	for (i = 0; i < ARRAY_SIZE(shells); i++)
		if (strcmp(shell, shells[i]) == 0)
			return shells[i];
	return NULL;
}

/* The note about one sidecar's signals, with the sidecar it names. */
static struct inject_note *sidecar_note(struct planning *pl, enum inject_note_kind kind, bool warning,
					const struct sidecar *sc)
{
	struct inject_note *nt = plan_note(pl, kind, warning, sc->node);

	nt->p = sc->p;
	nt->ctr = sc->node ? inject_name(sc->node) : NULL;
	return nt;
}

/*
 * Pre-flight of the signal stops, and of the signals that follow a failed
 * stop request: the agent (uid 65532, no capabilities) may signal only a
 * sidecar of its own uid. A sidecar that runs as root, or may (the
 * template does not say, nor its image), is told of with the two ways out:
 * the sidecar as the agent's uid, or the agent as root with CAP_KILL,
 * which --signal-as-root asks for (f->root_agent: no warning of uids
 * then). A signal that would reach a shell around the program is said too.
 */
void inject_check_signals(struct planning *pl, const struct ynode *meta, const struct ynode *podspec, struct found *f)
{
	struct inject_note *nt;
	char roots[NOTE_LIST_MAX] = "";
	size_t i, pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < f->n; i++) {
			const struct sidecar *sc = &f->sc[i];
			const struct ynode *c = sc->node;
			const char *uid, *by, *image = c ? ydoc_str(ydoc_get(c, "image")) : NULL, *argv[MAX_ARGV], *shell;
			size_t argc = c ? inject_argv(c, argv, NULL) : 0;
			struct sidecar_spec s;
			char why[512];
			bool signal, all, told;
			int sig;

			if (sc->native || spec_read(sc->spec, &s, why, sizeof(why)) < 0)
				continue;
			/* Under rearguard sidecar the stop goes through the volume: no uid needed. */
			if (sc->wrapped) {
				if (pass == 1 && !s.signal_all && (shell = shell_without_exec(argv, argc))) {
					nt = sidecar_note(pl, NOTE_SHELL, WARN, sc);
					nt->a = shell;
					nt->sig = s.stop_signal;
				}
				spec_free(&s);
				continue;
			}
			signal = !s.stop_url;
			all = s.signal_all;
			sig = s.stop_signal;
			spec_free(&s);
			uid = sidecar_uid(sc, meta, podspec, &by);
			/* What is said of it: a signal it may not send, or may send only after a stop request failed. */
			told = uid ? strcmp(uid, AGENT_UID) != 0 && (signal || strcmp(uid, "0") == 0) : true;
			if (pass == 0) {
				if (told && pl->o->signal_as_root) {
					f->root_agent = true;
					snprintf(roots + strlen(roots), sizeof(roots) - strlen(roots), "%s%s",
						 *roots ? ", " : "", inject_sidecar_name(sc));
				}
				continue;
			}
			if (signal && !all && (shell = shell_without_exec(argv, argc))) {
				nt = sidecar_note(pl, NOTE_SHELL, WARN, sc);
				nt->a = shell;
				nt->sig = sig;
			}
			if (f->root_agent || !told)
				continue;
			if (uid && strcmp(uid, "0") != 0) {
				if (signal) {
					nt = sidecar_note(pl, NOTE_SIGNAL_UID, WARN, sc);
					nt->a = uid;
					nt->flag = pl->plan->services;
				}
				continue;
			}
			nt = sidecar_note(pl, signal ? NOTE_SIGNAL_ROOT : NOTE_REQUEST_ROOT, signal ? WARN : INFO, sc);
			nt->flag = pl->plan->services;
			nt->n = !uid ? ROOT_UNKNOWN : strcmp(by, "image") == 0 ? ROOT_BY_IMAGE : ROOT_BY_FIELD;
			nt->a = by;
			nt->b = image;
		}
	if (f->root_agent)
		str_copy(plan_note(pl, NOTE_ROOT_AGENT, INFO, NULL)->words, roots, NOTE_LIST_MAX);
}

/* ---- start gating ---------------------------------------------------------- */

/*
 * Whether start gating can work: every sidecar a webhook injects must be
 * put before the apps (and so before the agent, whose postStart hook holds
 * back the containers after it). Says why not.
 */
bool inject_can_gate(struct planning *pl, const struct ynode *meta, const struct found *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct spec_preset *p = f->sc[i].p;
		const char *v = p && p->first_key ? inject_meta_value(meta, p->first_key) : NULL;
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
		plan_note(pl,
			  p->first_word  ? NOTE_NOT_GATED_WORD
			  : p->first_key ? NOTE_NOT_GATED_OFF
					 : NOTE_NOT_GATED_AFTER,
			  WARN, NULL)
		    ->p = p;
		return false;
	}
	return true;
}

/* How notes name a sidecar: its preset, else its container. */
const char *inject_sidecar_name(const struct sidecar *sc)
{
	const char *name = sc->node ? inject_name(sc->node) : NULL;

	return sc->p ? sc->p->name : name ? name : "?";
}
