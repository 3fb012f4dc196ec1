#include "config.h"

#include "preflight.h"

#include "argv.h"
#include "parse.h"
#include "presets.h"
#include "spec.h"
#include "util.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The shells a container's command is commonly wrapped in. */
static bool is_shell(const char *name)
{
	static const char *const shells[] = { "sh", "bash", "dash", "ash", "zsh", "busybox" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(shells); i++)
		if (strcmp(name, shells[i]) == 0)
			return true;
	return false;
}

/*
 * kill(2): permitted with CAP_KILL, or when the sender's real or effective
 * uid is the target's real or saved uid.
 */
static bool may_signal(const struct preflight_facts *f)
{
	return f->can_kill || f->my_ruid == f->ruid || f->my_ruid == f->suid || f->my_euid == f->ruid ||
	       f->my_euid == f->suid;
}

/*
 * What the row of spec's preset says of the program seen: the flags its
 * stop needs, and whether it is another program that the preset's spec
 * cannot stop (the Cloud SQL proxy v1 under --sidecar cloudsql).
 */
static void row_rules(const struct sidecar_spec *spec, const struct preflight_facts *f, preflight_fn *found,
		      void *data)
{
	const struct spec_preset *p = spec->preset ? presets_find(spec->preset) : NULL, *is;
	char msg[512], ev[PRESET_EVIDENCE_MAX];
	size_t i;

	if (!p || !f->argv || !spec->stop_url)
		return;
	is = presets_detect(f->name, f->argv, f->argc, ev, sizeof(ev));
	if (is && is != p && is->instead_of && strcmp(is->instead_of, p->name) == 0) {
		snprintf(msg, sizeof(msg), "%s %s", is->title, is->note);
		found(data, PREFLIGHT_NO_ENDPOINT, msg);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(p->flags) && p->flags[i].name; i++) {
		struct goflag g;

		if (!p->flags[i].why)
			continue;
		argv_goflag(f->argv, f->argc, p->flags[i].name, true, &g);
		if (g.on)
			continue;
		snprintf(msg, sizeof(msg), "%s runs without --%s: %s; add --%s to its args", p->title, p->flags[i].name,
			 p->flags[i].why, p->flags[i].name);
		found(data, p->flags[i].stop_endpoint ? PREFLIGHT_NO_ENDPOINT : (enum preflight_kind)(PREFLIGHT_FLAG + i), msg);
	}
}

void preflight_sidecar(const struct sidecar_spec *spec, const struct preflight_facts *f, preflight_fn *found,
		       void *data)
{
	char msg[512];

	row_rules(spec, f, found, data);
	/* rearguard sidecar takes its stop from the volume, and passes it on as its program's parent. */
	if (f->wrapped)
		return;
	if (f->uids_known && !may_signal(f)) {
		/* A signal stop cannot work; an HTTP stop still can, but its escalation cannot. */
		snprintf(msg, sizeof(msg),
			 "not permitted to signal the sidecar (it runs as uid %u, rearguard as uid %u, without the "
			 "KILL capability): %s; run rearguard with the sidecar's uid (securityContext.runAsUser), or as "
			 "root with the KILL capability (which a non-root process cannot use)",
			 (unsigned)f->ruid, (unsigned)f->my_euid,
			 spec->stop_url ? "if its stop request fails, SIGTERM and SIGKILL cannot follow"
					: "its stop signal will fail");
		found(data, PREFLIGHT_KILL, msg);
	}
	/* A shell that traps the signal does with it what its script says: forward it, or exit. */
	if (!spec->stop_url && !spec->signal_all && is_shell(f->name) && f->nprocs > 1 && !f->handles_stop) {
		snprintf(msg, sizeof(msg),
			 "the sidecar's main process is a shell (%s): SIG%s reaches the shell, not the program it runs, "
			 "which is killed only when --kill-after ends; start the program with exec (sh -c 'exec prog') "
			 "or stop it with stop=signal-all:%s",
			 f->name, signal_name(spec->stop_signal), signal_name(spec->stop_signal));
		found(data, PREFLIGHT_SHELL, msg);
	}
}
