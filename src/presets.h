/*
 * The sidecars rearguard knows, one row each: what `--sidecar PRESET`
 * means (match, ready, drain, stop), how the running sidecar is told from
 * a one-shot run of the same program (detection), and how it shows in a
 * pod template (rearguard inject). A new sidecar is one new row.
 *
 *	char why[PRESET_EVIDENCE_MAX];
 *	const struct spec_preset *p = presets_detect(comm, argv, argc, why, sizeof(why));
 *	if (p)
 *		log_info("sidecar detected: preset=%s evidence=%s", p->name, why);
 *	else if (*why)
 *		log_info("an app, not a sidecar: evidence=%s", why);
 *
 * Every function here is pure: it reads its arguments and the constant
 * table, writes only into the caller's buffers, and does no I/O and no
 * allocation.
 */
#ifndef RG_PRESETS_H
#define RG_PRESETS_H

#include <stdbool.h>
#include <stddef.h>

#define PRESET_EVIDENCE_MAX 160

/* One way a sidecar's process looks. */
struct preset_form {
	const char *names[3]; /* comm, or the basename of argv[0] */
	const char *serve[3]; /* argv[1] must be one of these (none listed: anything) */
	const char *arg_has;  /* and some argument must contain this, or NULL */
};

struct spec_preset {
	/* --sidecar PRESET: see the man page's PRESET list and docs/proxies.md. */
	const char *name, *match, *ready, *drain, *stop;

	/* Detection of the running sidecar (presets_detect). */
	struct preset_form forms[2];
	/*
	 * Arguments that make a run of the program a one-shot (an app):
	 * "-x" or "--flag" anywhere (also "--flag=..."), "--flag VALUE" as two
	 * arguments or as "--flag=VALUE", and a plain word as the subcommand:
	 * argv[1], or the argument after the serve word when the form has one.
	 */
	const char *oneshot[10];

	/* The pod template (rearguard inject). */
	const char *containers[3]; /* container names that are this sidecar */
	/*
	 * Image repositories: "name" is the repository's last component,
	 * "a/b" its last two. image_specs[i], when set, is the --sidecar SPEC
	 * for images[i] (an older release that stops differently).
	 */
	const char *images[3];
	const char *image_specs[3];
	const char *mesh;		 /* rearguard inject --mesh NAME, or NULL */
	const char *inject_key;		 /* label or annotation asking the injector for it */
	const char *inject_on[3];	 /* its values that inject the sidecar */
	const char *inject_off;		 /* its value that refuses injection (over --mesh) */
	const char *none_key;		 /* an annotation with value "true" that means no sidecar after all */
	const char *fix_key, *fix_value; /* an annotation the stop endpoint needs */
	const char *flags[3];		 /* flags the stop needs, added when missing... */
	const char *flags_image;	 /* ...to containers of this image (images[] form) */
	/*
	 * Where the injector puts the sidecar: before the apps when first_key
	 * is absent and first_default, or when the annotation first_key says
	 * so: holds first_word set to true (Istio's proxy config), or is not
	 * first_off (Linkerd's proxy-await). Start gating needs it there.
	 */
	const char *first_key, *first_word, *first_off;
	bool first_default;
};

extern const struct spec_preset spec_presets[];
extern const size_t spec_npresets;

/* The row named name, or NULL. */
const struct spec_preset *presets_find(const char *name);

/*
 * Which known sidecar a process is, from its comm and command line (argv
 * may be NULL when argc is 0: a command line that could not be read).
 * NULL when none; evidence then says why a process with a sidecar's name
 * is an app ("argv[0]=vault, argv[1]=kv: a one-shot run"), or is empty.
 */
const struct spec_preset *presets_detect(const char *comm, const char *const *argv, size_t argc, char *evidence,
					 size_t len);

/*
 * Which known sidecar a container of a pod template is: by its name, or by
 * its image when its command line (command + args; argv[0] may be NULL when
 * the image's entrypoint runs) is not a one-shot run. *spec is the
 * --sidecar SPEC to use (the preset's name, or its image_specs entry).
 */
const struct spec_preset *presets_container(const char *name, const char *image, const char *const *argv, size_t argc,
					    const char **spec);

/* Whether image's repository (no tag, no digest) is pattern, in images[]'s form. */
bool presets_image_is(const char *image, const char *pattern);

/*
 * Whether an annotation value (JSON or YAML, e.g. Istio's proxy config)
 * sets word to true: "word": true, word: true.
 */
bool presets_word_true(const char *value, const char *word);

#endif
