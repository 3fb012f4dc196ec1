/*
 * The sidecars rearguard knows, one row each, and everything rearguard
 * knows about each: what `--sidecar PRESET` means (match, ready, drain,
 * stop), how the running sidecar is told from a one-shot run of the same
 * program (detection), the flags its stop needs and what goes wrong
 * without them (pre-flight, inject), the advice for its own ways of
 * failing, the uid it runs as, and how it shows in a pod template (inject).
 * spec.c, preflight.c and inject.c hold no knowledge of any one sidecar:
 * they read it here.
 *
 * A new sidecar is one new row in presets.c, plus its tests: its
 * detection in test-presets, its spec in test-spec, a golden case in
 * tests/inject/cases, and an integration test against a stand-in that
 * behaves as the program's source says (tests/helpers/standin.c).
 *
 *	char why[PRESET_EVIDENCE_MAX];
 *	const struct spec_preset *p = presets_detect(comm, argv, argc, why, sizeof(why));
 *	// p: the row whose sidecar this process is, why: the evidence;
 *	// NULL with why set: the program, run once (an app)
 *
 * The table is constant; no function here does I/O or allocates.
 *
 * A row's place in the table is a priority, read in two ways:
 * - Detection: presets_detect tries a process against the rows in order
 *   (each row's forms in order) and the first row whose form it is wins:
 *   the Envoy that pilot-agent starts (an argument under istio/proxy/) is
 *   istio's because istio comes before envoy. A row that calls the process
 *   a one-shot run does not stop a later row from claiming it; the first
 *   such reason is the evidence when none does. presets_container (inject)
 *   reads the command line that way first, then the images row by row,
 *   then the container names row by row; and inject lists the sidecars
 *   that annotations ask an injector for in the table's order, before the
 *   template's own containers.
 * - Stopping: the sidecars are stopped one at a time in the reverse order
 *   of their list (decide-sidecar.c, drain_step). Detection (no --sidecar,
 *   or auto) appends every row not given by an explicit spec to that list
 *   after the explicit ones, in the table's order (options.c,
 *   add_detected): the detected sidecars are stopped from the last row to
 *   the first, before any explicit one. inject's REARGUARD_SIDECARS is
 *   stopped the same way: the template's own containers from the last,
 *   then the injected ones from the last row to the first. So a mesh's
 *   proxy, through which the others' traffic may pass, comes first in the
 *   table and is stopped last.
 * `rearguard presets` prints the rows in this order.
 */
#ifndef RG_PRESETS_H
#define RG_PRESETS_H

#include <stdbool.h>
#include <stddef.h>

#define PRESET_EVIDENCE_MAX 160
/* A spec that presets_spec writes fits in this. */
#define PRESET_SPEC_MAX 512

/* One way a sidecar's process looks. */
struct preset_form {
	const char *names[4]; /* comm, or the basename of argv[0] */
	const char *serve[3]; /* argv[1] must be one of these (none listed: anything) */
	const char *arg_has;  /* and some argument must contain this, or NULL */
};

/* A Go flag the sidecar's stop needs. */
/* The most flags a preset's stop may need. */
#define PRESET_FLAGS_MAX 3

struct preset_flag {
	const char *name;   /* without dashes */
	const char *why;    /* what goes wrong without it (a pre-flight warning), or NULL for none */
	bool stop_endpoint; /* it opens the stop endpoint: without it there is none */
	const char *since;  /* the first version with it; NULL: every version of the row's program */
};

/* Where a URL's port is set other than by default. */
#define PRESET_READY 1u
#define PRESET_STOP 2u
struct preset_port {
	const char *annotation; /* an annotation of the pod template, or */
	const char *flag;	/* a Go flag of the sidecar's command line, */
	unsigned urls;		/* moves these URLs to its port; port 0 removes them */
};

/* Advice for an answer of the stop endpoint. */
#define PRESET_ANY_4XX 1000
struct preset_advice {
	int result;	  /* an HTTP status, PRESET_ANY_4XX, or -errno when no answer came */
	const char *body; /* and the body starts with this (it tells the program by itself) */
	int port;	  /* or the stop URL's port is this (any spec, not only this preset's) */
	const char *text;
};

struct spec_preset {
	/* --sidecar PRESET: see the man page's PRESET list and docs/proxies.md. */
	const char *name;
	const char *title; /* how messages name it: "the Cloud SQL Auth Proxy" */
	const char *match, *ready, *drain;
	const char *stop;	/* a URL, or signal:NAME */
	const char *ready_flag; /* the ready URL is served only when this Go boolean flag is on */
	/*
	 * Each flag's environment twin is this prefix and the flag's name in
	 * capitals, '-' as '_' (viper's AutomaticEnv): a flag given on the
	 * command line wins over it. NULL: the program reads no such variables.
	 */
	const char *env_prefix;

	/* Detection of the running sidecar (presets_detect). */
	struct preset_form forms[2];
	/*
	 * Arguments that make a run of the program a one-shot (an app):
	 * "-x" or "--flag" anywhere (read as a Go boolean flag), "--flag VALUE"
	 * (also "--flag=VALUE"), and a plain word as the subcommand: argv[1],
	 * or the argument after the serve word when the form has one.
	 */
	const char *oneshot[16];

	/* What its program needs, and what rearguard says about it. */
	struct preset_flag flags[PRESET_FLAGS_MAX]; /* flags the stop needs: inject adds them, pre-flight warns */
	struct preset_port ports[3]; /* flags and annotations that move its URLs */
	struct preset_advice advice[2];
	const char *exit_fix; /* what to change when it exits non-zero; NULL: the stop's kind says */
	struct {
		int port;
		const char *path, *why;
	} wrong_stop;		/* a stop URL that never ends this program (a warning) */
	const char *instead_of; /* the row whose spec this program is taken for by mistake */
	const char *note;	/* what to know when it is found: the upgrade path */
	const char *note_short; /* the same in a few words, for a pod's warning */
	const char *uid;	/* the uid its injector or image runs it as, NULL when unknown */
	const char *uid_key;	/* an annotation that sets that uid */
	/*
	 * Its images tagged with a version older than this ran as root: uid
	 * is then that of the newer ones only (presets_image_uid).
	 */
	const char *root_before;

	/* The pod template (rearguard inject). */
	const char *containers[3]; /* container names that are this sidecar */
	/* Image repositories: "name" is the repository's last component, "a/b" its last two. */
	const char *images[4];
	const char *mesh;		 /* rearguard inject --mesh NAME, or NULL */
	const char *inject_key;		 /* label or annotation asking the injector for it */
	const char *inject_on[3];	 /* its values that inject the sidecar... */
	bool inject_any;		 /* ...or any value but inject_off */
	const char *inject_off;		 /* its value that refuses injection (over --mesh) */
	const char *none_key;		 /* an annotation with value "true" that means no sidecar after all */
	const char *native_keys[3];	 /* annotations that ask the injector for a native sidecar ("true") */
	const char *fix_key, *fix_value; /* an annotation the stop endpoint needs, which its injector reads */
	/*
	 * Where the injector ran already (its container is in the pod): the
	 * environment variable of that container the annotation would have
	 * set, and its value. NULL: the container cannot be fixed after the fact.
	 */
	const char *fix_env, *fix_env_value;
	/*
	 * Where the injector puts the sidecar: before the apps when first_key
	 * is absent and first_default, or when the annotation first_key says
	 * so: holds first_word set to true (Istio's proxy config), or is not
	 * first_off (Linkerd's proxy-await). Start gating needs it there.
	 */
	const char *first_key, *first_word, *first_off;
	bool first_default;
	/*
	 * A helper that stops another sidecar by itself once the other
	 * containers ended (linkerd-proxy-terminator): neither an app, which
	 * the agent would wait for while it waits for the agent, nor a sidecar
	 * to stop. Its spec is native: recognised, never waited for, never stopped.
	 */
	bool helper;
};

extern const struct spec_preset spec_presets[];
extern const size_t spec_npresets;

/* The row named name, or NULL. */
const struct spec_preset *presets_find(const char *name);

/* The row whose proxy rearguard inject --mesh name stands for, or NULL. */
const struct spec_preset *presets_mesh(const char *name);

/* The names --mesh takes, in the table's order, sep between them: "istio|linkerd". */
void presets_mesh_words(const char *sep, char *out, size_t len);

/*
 * Which known sidecar a process is, from its comm and command line (argv
 * may be NULL when argc is 0: a command line that could not be read).
 * NULL when none; evidence then says why a process with a sidecar's name
 * is an app ("argv[0]=vault, argv[1]=kv: a one-shot run"), or is empty.
 */
const struct spec_preset *presets_detect(const char *comm, const char *const *argv, size_t argc, char *evidence,
					 size_t len);

/* The most arguments presets_program gives of a program. */
#define PRESET_ARGV_MAX 64

/* A known program as a wrapper runs it (presets_program). */
struct preset_program {
	const char *argv[PRESET_ARGV_MAX]; /* from the program on (into the command line, or buf) */
	size_t argc;
	size_t at;   /* the program's index in the command line, or the script's */
	bool script; /* the program is in a shell's -c script: its flags cannot be added after the script */
	char buf[2048];
};

/*
 * The known program (a name of a row's forms) a command line runs through
 * a wrapper: dumb-init [OPTION...] PROGRAM, tini [OPTION...] -- PROGRAM,
 * /watchkiller PROGRAM, any program that execs the rest (the program
 * follows the wrapper and its options, words that begin with '-'), or a
 * simple command of a shell's -c script (sh -c 'exec PROGRAM ...',
 * 'sleep 1; exec PROGRAM ...'). argv[0] itself is not looked at: that is
 * presets_detect's. 1 with *out filled, 0 when there is none.
 */
int presets_program(const char *const *argv, size_t argc, struct preset_program *out);

/*
 * Which known sidecar a container of a pod template is: by its name, or by
 * its image when its command line (command + args; argv[0] may be NULL when
 * the image's entrypoint runs) is not a one-shot run.
 */
const struct spec_preset *presets_container(const char *name, const char *image, const char *const *argv, size_t argc);

/* What configures one sidecar of a pod template: its program's command line, the template's annotations, its env. */
struct preset_source {
	const char *const *argv; /* from the program on (argc 0: unknown) */
	size_t argc;
	const char *(*ann)(const void *meta, const char *key); /* an annotation's value, NULL when absent */
	const void *meta;
	const char *(*env)(const void *ctr, const char *name); /* an environment variable's value, NULL: absent */
	const void *ctr;
	bool no_ports; /* its admin ports are the node's (hostNetwork): no readiness URL, a stop by SIGTERM */
};

/* What a sidecar's configuration says of one of its flags: the command line's, else its environment twin's. */
struct preset_flag_state {
	bool set;	   /* given at all */
	bool on;	   /* a boolean flag: given and true */
	bool from_env;	   /* by the environment twin (env_name) */
	size_t at;	   /* the command line's argument that gave it (argc when none) */
	const char *value; /* its value, NULL for a bare boolean */
	char env_name[64]; /* the environment twin's name, "" where the row has none */
};

void presets_flag(const struct spec_preset *p, const struct preset_source *src, const char *name, bool boolean,
		  struct preset_flag_state *out);

/*
 * The --sidecar SPEC for a sidecar of row p: its name, and its URLs
 * moved where its flags (the command line's, else their environment
 * twins) or the template's annotations put them:
 * "cloudsql,stop=http://127.0.0.1:9192/quitquitquit". With signal_stop, a
 * stop by SIGTERM instead of its stop URL. Returns 0, or -ENOSPC when len
 * is too small.
 */
int presets_spec(const struct spec_preset *p, const struct preset_source *src, bool signal_stop, char *out, size_t len);

/* What an image's tag tells of the version of row p's program. */
enum preset_version {
	VERSION_UNKNOWN, /* another image, a digest, a tag without a version */
	VERSION_NEWEST,	 /* one of p's images, untagged or :latest */
	VERSION_KNOWN,	 /* one of p's images, tagged with a version (out holds it: "2.11.4") */
};

enum preset_version presets_image_version(const struct spec_preset *p, const char *image, char *out, size_t len);

/* Whether version v ("2.11.4", "v1.33.2-alpine") is at least since ("2.1.0"), part by part. */
bool presets_version_at_least(const char *v, const char *since);

/*
 * The uid a container of row p's sidecar runs as, by its image, when the
 * template sets none: p->uid for one of p's images, "0" for one whose tag
 * is a version older than p->root_before; NULL when the image cannot tell
 * (another image, even one built FROM p's, whose USER is its own; a
 * digest or a tag without a version where the version decides).
 */
const char *presets_image_uid(const struct spec_preset *p, const char *image);

/* Whether image's repository (no tag, no digest) is pattern, in images[]'s form. */
bool presets_image_is(const char *image, const char *pattern);

/*
 * Whether an annotation value (JSON or YAML, e.g. Istio's proxy config)
 * sets word to true: "word": true, word: true.
 */
bool presets_word_true(const char *value, const char *word);

#endif
