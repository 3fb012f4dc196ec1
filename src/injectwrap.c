/*
 * A sidecar's command under rearguard sidecar, where its stop would fail
 * the pod: a signal-stopped sidecar that no preset knows (a preset's
 * program handles SIGTERM, or stops by a request) and that the user has
 * not marked handles-stop. Its program may die of the signal (143), which
 * a plain container's exit code counts and a native sidecar's does not;
 * under the wrapper the stop ends the container with 0 (docs/protocol.md).
 *
 * The plan marks each such sidecar; one whose pod spec gives no command
 * (the image's entrypoint, which cannot be known here) is said, with the
 * fixes. Applying it puts the wrapper's words before the command, mounts
 * the binary's volume and the file protocol's in the container, and adds
 * the init container that copies the binary there (rearguard install),
 * as manifests/job-pod-deletion.yaml does: no image changes, no shell.
 */
#include "config.h"

#include "injectint.h"

#include "defaults.h"
#include "parse.h"
#include "spec.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/*
 * Programs no preset knows that end with 0 on these signals, as their
 * source says: nginx's master, on TERM and INT (fast) or QUIT (graceful),
 * stops its workers and exits 0 (src/os/unix/ngx_process_cycle.c,
 * ngx_master_process_exit; tests/integration/nginx.sh shows it).
 */
static const struct {
	const char *program;
	int signals[3];
} exits_zero[] = {
	{"nginx", {SIGTERM, SIGINT, SIGQUIT}},
};

/* Whether the sidecar's program is one that ends with 0 on sig: by its command, else its image, else its match. */
static bool ends_with_zero(const struct sidecar *sc, const struct sidecar_spec *s, int sig)
{
	const char *argv[MAX_ARGV], *image = ydoc_str(ydoc_get(sc->node, "image"));
	size_t argc = inject_argv(sc->node, argv, NULL), i, k;

	for (i = 0; i < ARRAY_SIZE(exits_zero); i++) {
		const char *prog = exits_zero[i].program;
		char unprivileged[64];
		bool is;

		/* Its maintainers' image for non-root pods: nginxinc/nginx-unprivileged. */
		snprintf(unprivileged, sizeof(unprivileged), "%s-unprivileged", prog);
		if (argc > 0 && argv[0])
			is = strcmp(base_name(argv[0]), prog) == 0;
		else
			is = (image && (presets_image_is(image, prog) || presets_image_is(image, unprivileged))) ||
			     (s->match_src && strcmp(s->match_src, prog) == 0);

		for (k = 0; is && k < ARRAY_SIZE(exits_zero[i].signals); k++)
			if (exits_zero[i].signals[k] == sig)
				return true;
	}
	return false;
}

/* Whether sidecar sc's stop may fail the pod, for its program may die of the signal. */
static bool may_die(const struct sidecar *sc, int *sig)
{
	struct sidecar_spec s;
	char why[256], first[SPEC_NAME_MAX];
	bool signal;

	/* Native, injected by a webhook, a preset's, or stopped by a wrapper of its own (watchkiller, kubexit). */
	if (sc->native || !sc->node || sc->p || sc->self_stops)
		return false;
	/* A container named PRESET,KEY=VALUE... runs its preset's program. */
	if (sc->named && snprintf(first, sizeof(first), "%.*s", (int)strcspn(sc->named, ","), sc->named) > 0 &&
	    presets_find(first))
		return false;
	if (spec_read(sc->spec, &s, why, sizeof(why)) < 0)
		return false;
	signal = !s.stop_url && !s.handles_stop && !ends_with_zero(sc, &s, s.stop_signal);
	*sig = s.stop_signal;
	spec_free(&s);
	return signal;
}

/* The mount of c at path, if any; *ours: of the volume name. */
static const struct ynode *mount_at(const struct ynode *c, const char *path, const char *name, bool *ours)
{
	const struct ynode *mounts = ydoc_get(c, "volumeMounts");
	size_t i;

	for (i = 0; mounts && mounts->kind == YNODE_SEQ && i < mounts->n; i++)
		if (inject_is(ydoc_get(mounts->items[i], "mountPath"), path)) {
			*ours = inject_is(ydoc_get(mounts->items[i], "name"), name);
			return mounts->items[i];
		}
	return NULL;
}

/* A path of the container another volume holds: the wrapper (or a hold) cannot go there. NULL: both are free or ours. */
const char *inject_bin_path_taken(const struct ynode *c)
{
	bool ours = false;

	if (mount_at(c, WRAP_DIR, WRAP_VOLUME, &ours) && !ours)
		return WRAP_DIR;
	if (mount_at(c, DEFAULT_DIR, AGENT_NAME, &ours) && !ours)
		return DEFAULT_DIR;
	return NULL;
}

void inject_plan_wraps(struct planning *pl, struct found *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		struct sidecar *sc = &f->sc[i];
		const struct ynode *cmd = ydoc_get(sc->node, "command");
		const char *argv[MAX_ARGV], *taken;
		struct inject_note *nt;
		size_t argc = 0;
		int sig = 0;

		if (!may_die(sc, &sig))
			continue;
		for (; cmd && cmd->kind == YNODE_SEQ && argc < cmd->n && argc < MAX_ARGV; argc++)
			argv[argc] = ydoc_str(cmd->items[argc]) ? ydoc_str(cmd->items[argc]) : "";
		if (argc == 0) {
			nt = plan_note(pl, NOTE_WRAP_NO_COMMAND, WARN, sc->node);
			nt->ctr = inject_name(sc->node);
			nt->sig = sig;
			continue;
		}
		if ((taken = inject_bin_path_taken(sc->node))) {
			nt = plan_note(pl, NOTE_WRAP_MOUNT, WARN, sc->node);
			nt->ctr = inject_name(sc->node);
			nt->a = taken;
			nt->sig = sig;
			continue;
		}
		sc->wrapped = true;
		/* Injected before (the webhook reinvoked): its words are there. */
		sc->wrap_words = !inject_wrapped_at(argv, argc);
		if (!sc->wrap_words)
			continue;
		nt = plan_note(pl, NOTE_WRAPPED, INFO, sc->node);
		nt->ctr = inject_name(sc->node);
		nt->sig = sig;
	}
}

/* ---- applying ------------------------------------------------------------- */

static struct ynode *text(struct ystream *s, const char *v)
{
	return ydoc_scalar(s, v, YDOC_TEXT);
}

static struct ynode *mount(struct ystream *s, const char *name, const char *path, bool read_only)
{
	struct ynode *m = ydoc_new_map(s, true);

	if (!m || ydoc_set(s, m, "name", text(s, name), false) < 0 ||
	    ydoc_set(s, m, "mountPath", text(s, path), false) < 0 ||
	    (read_only && ydoc_set(s, m, "readOnly", ydoc_scalar(s, "true", YDOC_RAW), false) < 0))
		return NULL;
	return m;
}

int inject_mount_bin(struct ystream *s, struct ynode *c, bool protocol_rw)
{
	struct ynode *mounts = ydoc_want_seq(s, c, "volumeMounts");
	bool ours;

	if (!mounts)
		return -ENOMEM;
	if (!mount_at(c, WRAP_DIR, WRAP_VOLUME, &ours) && ydoc_append(s, mounts, mount(s, WRAP_VOLUME, WRAP_DIR, true)) < 0)
		return -ENOMEM;
	if (!mount_at(c, DEFAULT_DIR, AGENT_NAME, &ours) &&
	    ydoc_append(s, mounts, mount(s, AGENT_NAME, DEFAULT_DIR, !protocol_rw)) < 0)
		return -ENOMEM;
	return 0;
}

/* The wrapper's words before the command, and the two volumes mounted. */
static int wrap(struct ystream *s, struct ynode *c, int sig)
{
	const char *words[] = {WRAP_BIN, "sidecar", "--name", inject_name(c), "--stop-signal", signal_name(sig), "--"};
	struct ynode *cmd = ydoc_get(c, "command");
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(words); i++) {
		/* The default stop signal goes without saying. */
		if (sig == SIGTERM && strcmp(words[i], "--stop-signal") == 0) {
			i++;
			continue;
		}
		if (ydoc_insert(s, cmd, n++, text(s, words[i])) < 0)
			return -ENOMEM;
	}
	/* Read-write: the wrapper writes how its program ended (sidecars/NAME). */
	return inject_mount_bin(s, c, true);
}

/* The init container that copies the binary into the volume, as the agent's image runs it. */
static struct ynode *installer(struct ystream *s, const struct inject_options *o)
{
	struct ynode *c = ydoc_new_map(s, false), *args = ydoc_new_seq(s, true), *mounts = ydoc_new_seq(s, false);
	struct ynode *sc = ydoc_new_map(s, false), *drop = ydoc_new_seq(s, true), *caps = ydoc_new_map(s, true);
	struct ynode *res = ydoc_new_map(s, false), *req = ydoc_new_map(s, true), *lim = ydoc_new_map(s, true);
	struct ynode *seccomp = ydoc_new_map(s, true);

	/* The agent's securityContext: what Pod Security's restricted level asks of every container. */
	if (!c || !args || !mounts || !sc || !drop || !caps || !res || !req || !lim || !seccomp ||
	    ydoc_set(s, c, "name", text(s, WRAP_INSTALL), false) < 0 ||
	    ydoc_set(s, c, "image", text(s, o->image ? o->image : INJECT_DEFAULT_IMAGE), false) < 0 ||
	    ydoc_append(s, args, text(s, "install")) < 0 || ydoc_append(s, args, text(s, WRAP_DIR)) < 0 ||
	    ydoc_set(s, c, "args", args, false) < 0 || ydoc_append(s, mounts, mount(s, WRAP_VOLUME, WRAP_DIR, false)) < 0 ||
	    ydoc_set(s, c, "volumeMounts", mounts, false) < 0 ||
	    ydoc_set(s, sc, "runAsUser", ydoc_scalar(s, AGENT_UID, YDOC_RAW), false) < 0 ||
	    ydoc_set(s, sc, "runAsGroup", ydoc_scalar(s, AGENT_UID, YDOC_RAW), false) < 0 ||
	    ydoc_set(s, sc, "runAsNonRoot", ydoc_scalar(s, "true", YDOC_RAW), false) < 0 ||
	    ydoc_set(s, sc, "readOnlyRootFilesystem", ydoc_scalar(s, "true", YDOC_RAW), false) < 0 ||
	    ydoc_set(s, sc, "allowPrivilegeEscalation", ydoc_scalar(s, "false", YDOC_RAW), false) < 0 ||
	    ydoc_append(s, drop, text(s, "ALL")) < 0 || ydoc_set(s, caps, "drop", drop, false) < 0 ||
	    ydoc_set(s, sc, "capabilities", caps, false) < 0 || ydoc_set(s, seccomp, "type", text(s, "RuntimeDefault"), false) < 0 ||
	    ydoc_set(s, sc, "seccompProfile", seccomp, false) < 0 ||
	    ydoc_set(s, c, "securityContext", sc, false) < 0 || ydoc_set(s, req, "cpu", text(s, "5m"), false) < 0 ||
	    ydoc_set(s, req, "memory", text(s, "8Mi"), false) < 0 || ydoc_set(s, res, "requests", req, false) < 0 ||
	    ydoc_set(s, lim, "memory", text(s, "32Mi"), false) < 0 || ydoc_set(s, res, "limits", lim, false) < 0 ||
	    ydoc_set(s, c, "resources", res, false) < 0)
		return NULL;
	return c;
}

/* The volume the binary is copied to: on disk, as small as the binary allows. */
static struct ynode *bin_volume(struct ystream *s)
{
	struct ynode *v = ydoc_new_map(s, false), *ed = ydoc_new_map(s, true);

	if (!v || !ed || ydoc_set(s, ed, "sizeLimit", text(s, "8Mi"), false) < 0 ||
	    ydoc_set(s, v, "name", text(s, WRAP_VOLUME), false) < 0 || ydoc_set(s, v, "emptyDir", ed, false) < 0)
		return NULL;
	return v;
}

/* A named item of a list under key (made when missing): appended unless one of that name is there. */
static int add_named(struct ystream *s, struct ynode *spec, const char *key, const char *name, struct ynode *item)
{
	struct ynode *list = ydoc_want_seq(s, spec, key);
	size_t i;

	if (!list)
		return -ENOMEM;
	for (i = 0; i < list->n; i++)
		if (inject_is(ydoc_get(list->items[i], "name"), name))
			return 0;
	return item ? ydoc_append(s, list, item) : -ENOMEM;
}

int inject_apply_wraps(struct ystream *s, struct ynode *spec, const struct inject_options *o,
		       const struct inject_plan *plan)
{
	const struct found *f = &plan->f;
	bool any = false;
	size_t i;
	int rc;

	for (i = 0; i < f->n; i++) {
		struct sidecar_spec sp;
		char why[256];
		int sig = SIGTERM;

		if (!f->sc[i].wrapped)
			continue;
		any = true;
		if (!f->sc[i].wrap_words)
			continue;
		if (spec_read(f->sc[i].spec, &sp, why, sizeof(why)) == 0) {
			sig = sp.stop_signal;
			spec_free(&sp);
		}
		rc = wrap(s, f->sc[i].node, sig);
		if (rc < 0)
			return rc;
	}
	return any ? inject_add_installer(s, spec, o) : 0;
}

/* The binary's volume, and the init container that fills it: once, whatever else the pod has. */
int inject_add_installer(struct ystream *s, struct ynode *spec, const struct inject_options *o)
{
	int rc = add_named(s, spec, "volumes", WRAP_VOLUME, bin_volume(s));

	return rc < 0 ? rc : add_named(s, spec, "initContainers", WRAP_INSTALL, installer(s, o));
}
