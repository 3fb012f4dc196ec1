/*
 * What inject decided about an object, and why, as values: a kind and its
 * facts. inject_plan (injectplan.h) makes them, and they are worded here
 * only, for two readers:
 *
 *	char line[NOTE_WORDS_MAX];
 *	inject_note_words(&n, NOTE_FOR_TEMPLATE, line, sizeof(line)); // rearguard inject
 *	inject_note_words(&n, NOTE_FOR_POD, line, sizeof(line));      // the webhook's warnings
 *
 * The template's words are inject's notes on standard error, the golden
 * cases' .err files: they name fields by their path in the workload and
 * say what to pass to rearguard inject. The pod's are what kubectl prints
 * under "Warning: rearguard:" for a pod the webhook reviewed: about the
 * pod, the essential first (what was done, or why not), short enough that
 * the API server keeps them whole.
 *
 * Each kind says which fields it fills; the others are NULL or 0. Strings
 * point into the tree the note was made from, or are constants: a note
 * lives as long as its stream.
 */
#ifndef RG_INJECTNOTE_H
#define RG_INJECTNOTE_H

#include <stdbool.h>
#include <stddef.h>

struct spec_preset;

#define NOTE_WORDS_MAX 1024
#define NOTE_LIST_MAX 256

enum inject_note_kind {
	/* ---- an object inject does not change (inject.c) ---- */
	NOTE_NOT_MAPPING,     /* a: its shape ("a scalar") */
	NOTE_API_NOT_STRING,  /* a: the apiVersion's shape, b: the kind, c: its apiVersion */
	NOTE_NO_API_VERSION,  /* b: the kind, c: its apiVersion */
	NOTE_OTHER_API,	      /* b: the kind, c: Kubernetes' apiVersion of it */
	NOTE_ARGO_OBJECT,     /* an Argo Workflows object */
	NOTE_TEKTON_OBJECT,   /* a Tekton object */
	NOTE_HELM_UNRENDERED, /* a value that begins with {{ */
	NOTE_NO_TEMPLATE,     /* a: the template's path, b: the kind */
	NOTE_NOT_A_POD,	      /* the webhook's object is no Pod */
	NOTE_REWRITTEN,	      /* a changed document written whole from its tree */

	/* ---- a template of a shape the API server refuses ---- */
	NOTE_MISSHAPEN,		  /* words: the field's path, b: its shape, c: the shape it needs */
	NOTE_NO_CONTAINERS,	  /* a: the template's path, flag: empty (else missing) */
	NOTE_TOO_MANY_CONTAINERS, /* n: the most inject takes */
	NOTE_ITEM_NOT_MAPPING,	  /* a: the template's path, b: the list, n: the index, c: the item's shape */
	NOTE_NAME_NOT_STRING,	  /* a: the template's path, b: the list, n: the index, c: the name's shape */
	NOTE_NAME_MISSING,	  /* a: the template's path, b: the list, n: the index, flag: empty (else missing) */
	NOTE_COMMAND_NOT_LIST,	  /* a: the template's path, n: the index, b: args or command, c: its shape */

	/* ---- a pod or template left as it is ---- */
	NOTE_HAS_AGENT,	     /* ctr: the agent's container */
	NOTE_DISABLED,	     /* rearguard.io/inject: disabled */
	NOTE_MIRROR,	     /* a mirror pod: the kubelet's copy of a static pod */
	NOTE_CONTROLLER,     /* p: NULL; a: the controller ("Argo Workflows", "Tekton"), b: what showed it */
	NOTE_HOST_PID,	     /* hostPID: true */
	NOTE_HOST_NETWORK,   /* hostNetwork: true: the agent uses no sidecar's port (it does not leave the pod) */
	NOTE_NO_POLICY,	     /* a Job's template without a restartPolicy */
	NOTE_RESTARTS,	     /* a: the restartPolicy, NULL for none (Always); flag: a workload's template */
	NOTE_NO_SIDECAR,     /* p: a row whose injector the template refuses, a: its value, flag: --mesh names it;
				b: --mesh, words: the meshes --mesh takes, where it was not given and p is none */
	NOTE_ONLY_NATIVES,   /* words: the native sidecars, words2: the helpers */
	NOTE_ALL_SIDECARS,   /* every container a sidecar */
	NOTE_NAMED_NO_SPEC,  /* ctr, a: the SPEC named for it, which is nothing inject knows */
	NOTE_NAMED_BAD_SPEC, /* ctr, words: why the spec does not parse */

	/* ---- what inject found, and what it changed ---- */
	NOTE_ADDED,		/* n: the apps, words: the sidecars it stops, words2: the native ones; flag: a
				   long-running pod (services): started after its sidecars, which are held */
	NOTE_SHARE_SET,		/* a: what shareProcessNamespace was */
	NOTE_OTEL_NAMES,	/* a: the instrumentation annotation, ctr: the first app */
	NOTE_FLAG_ON,		/* p, ctr, a: the argument that turned it off, b: the flag set on */
	NOTE_FLAG_ADDED,	/* p, ctr, a: the flag added */
	NOTE_ENV_SET,		/* p, ctr, a: the variable, b: its value, c: what it was (NULL: absent) */
	NOTE_MESH_SHOWN,	/* p: the mesh's row, ctr, flag: a native sidecar, a: --mesh */
	NOTE_NONE_KEY,		/* p: the row, a: its annotation that means no sidecar */
	NOTE_PRESET_NOTE,	/* p, ctr: p->note said of the container */
	NOTE_NAMED_UNKNOWN,	/* words: the name rearguard.io/sidecars gives, which no container has */
	NOTE_NATIVE_GUESS,	/* ctr: a native sidecar without a command, known by its name */

	/* ---- warnings about how the sidecars will stop ---- */
	NOTE_FIX_REFUSED,      /* p, a: the annotation, b: its value, c: the value the stop needs */
	NOTE_FIX_TOO_LATE,     /* p, ctr, a: the annotation its injector read before rearguard saw the pod */
	NOTE_VERSION_UNKNOWN,  /* p, ctr, a: the image, words: the flags not added, which older versions lack */
	NOTE_FLAG_TOO_NEW,     /* p, ctr, a: the flag, b: the first version with it, c: the image's version */
	NOTE_SHELL,	       /* p (may be NULL), ctr, a: the shell, sig: the stop signal */
	NOTE_WRAPPED,	       /* ctr, sig: its stop signal: its command now runs under rearguard sidecar */
	NOTE_WRAP_NO_COMMAND,  /* ctr, sig: a sidecar whose stop may fail the pod, without a command to wrap */
	NOTE_WRAP_MOUNT,       /* ctr, sig, a: the path another volume holds in it, where the wrapper goes */
	NOTE_SIGNAL_UID,       /* p, ctr (NULL: an injected one), a: its uid; flag: a long-running pod's */
	NOTE_SIGNAL_ROOT,      /* p, ctr, a: why it is or may be root (words), b: its image; flag: a long-running pod's */
	NOTE_REQUEST_ROOT,     /* p, ctr, a: why it is or may be root: a request is its stop, a signal the fallback */
	NOTE_ROOT_AGENT,       /* words: the sidecars that need the agent as root with CAP_KILL */
	NOTE_NOT_GATED_WORD,   /* p: its injector puts it after the apps unless first_key sets first_word */
	NOTE_NOT_GATED_OFF,    /* p: first_key is first_off */
	NOTE_NOT_GATED_AFTER,  /* p: its injector always adds it after the apps */

	/* ---- a long-running pod's holds and time (rearguard.io/inject: services) ---- */
	NOTE_HOLD_LATER,     /* p: its injector adds its container after rearguard: no hold from inject */
	NOTE_HOLD_OWN,	     /* p, ctr: its container has a preStop hook of its own: not held */
	NOTE_HOLD_MOUNT,     /* p, ctr, a: the path another volume holds there: not held */
	NOTE_GRACE_SHORT,    /* words: terminationGracePeriodSeconds, a: the apps' stop, b: the sidecars', n: the
				seconds it is short by; flag: the apps' stop is rearguard.io/term-grace's */
	NOTE_TERM_GRACE_BAD, /* a: rearguard.io/term-grace's value, no duration; b: the default used */

	NOTE_KINDS
};

/* Why a sidecar is or may be root, for NOTE_SIGNAL_ROOT and NOTE_REQUEST_ROOT (n). */
enum note_root { ROOT_UNKNOWN, ROOT_BY_IMAGE, ROOT_BY_FIELD };

struct inject_note {
	enum inject_note_kind kind;
	bool warning;
	size_t line, column; /* where it stands in the input; 0 when nowhere */
	const struct spec_preset *p;
	const char *ctr;
	const char *a, *b, *c;
	size_t n;
	int sig;
	bool flag;
	char words[NOTE_LIST_MAX], words2[NOTE_LIST_MAX];
};

enum note_reader { NOTE_FOR_TEMPLATE, NOTE_FOR_POD };

/*
 * The note's words for reader, into out (NUL-terminated, cut to len); the
 * template's without "LINE:COL: Job "x": " before them, which inject.c
 * adds. Returns the length the whole words have.
 */
size_t inject_note_words(const struct inject_note *n, enum note_reader reader, char *out, size_t len);

/* Whether the note says the object is left as it is (a pod the webhook leaves alone). */
bool inject_note_leaves(enum inject_note_kind kind);

/*
 * The notes of a plan in a pod's words, what was done or why not first,
 * then the rest in their order: each to fn (the webhook's warnings,
 * explain's "the webhook would").
 */
struct inject_plan;
void inject_plan_words(const struct inject_plan *plan, void (*fn)(void *data, const char *words), void *data);

#endif
