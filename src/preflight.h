/*
 * Pre-flight: the traps a sidecar shows before anything goes wrong, judged
 * from what the agent can see of it when it appears (its main process's
 * command line and uid, its other processes) and from the agent's own
 * rights. Each finding is one warning that names the fix; the caller logs
 * it, once per sidecar and kind. No I/O here: the facts are handed in.
 *
 *	struct preflight_facts f = { .argv = ..., .argc = ..., ... };
 *	preflight_sidecar(spec, &f, on_finding, data);
 *	... on_finding(data, PREFLIGHT_KILL, "rearguard may not signal ...") ...
 *
 * What each sidecar needs is its preset row's (presets.h): the flags its
 * stop needs and what goes wrong without them, the program it may be
 * mistaken for. The check that needs the network (a stop endpoint that refuses
 * connections, as Istio's with status.sidecar.istio.io/port "0") is
 * decide's: it probes once the sidecar is ready.
 */
#ifndef RG_PREFLIGHT_H
#define RG_PREFLIGHT_H

#include "presets.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sidecar_spec;

/* What was found; the caller says each once per sidecar and kind. */
enum preflight_kind {
	PREFLIGHT_NO_ENDPOINT, /* no stop endpoint: the flag that opens it is missing, or the program has none */
	PREFLIGHT_FLAG,        /* another flag the stop needs: PREFLIGHT_FLAG + its index in the row's flags */
	PREFLIGHT_KILL = PREFLIGHT_FLAG + PRESET_FLAGS_MAX, /* a signal the agent may not send */
	PREFLIGHT_SHELL,       /* a signal stop that reaches a shell, not the program it runs */
	PREFLIGHT_NKINDS,
};

struct preflight_facts {
	const char *name;           /* the main process's name (argv[0]'s basename, else its comm) */
	const char *const *argv;    /* its command line, NULL when it could not be read */
	size_t argc;
	unsigned nprocs;            /* processes in its container */
	bool uids_known;
	uid_t ruid, suid;           /* its real and saved uids */
	uid_t my_ruid, my_euid;     /* the agent's */
	bool can_kill;              /* the agent has CAP_KILL */
	bool handles_stop;          /* the main process catches or blocks the stop signal (a shell's trap) */
	bool wrapped;               /* the main process is rearguard sidecar: its stop comes through the volume */
};

typedef void preflight_fn(void *data, enum preflight_kind kind, const char *message);

/* Calls found for each trap the sidecar shows, with one line that names the fix. */
void preflight_sidecar(const struct sidecar_spec *spec, const struct preflight_facts *f, preflight_fn *found,
		       void *data);

#endif
