#include "config.h"

#include "preflight.h"

#include "parse.h"
#include "spec.h"
#include "util.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

bool preflight_flag(const char *const *argv, size_t argc, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		/* Go's flag package: -name and --name, with an optional =value for booleans. */
		if (a[0] != '-')
			continue;
		a += a[1] == '-' ? 2 : 1;
		if (strncmp(a, name, n) != 0)
			continue;
		if (a[n] == '\0')
			return true;
		if (a[n] == '=') {
			bool v;

			return parse_bool(a + n + 1, &v) == 0 && v;
		}
	}
	return false;
}

static bool is_preset(const struct sidecar_spec *spec, const char *name)
{
	return spec->preset && strcmp(spec->preset, name) == 0;
}

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

static void cloudsql(const struct sidecar_spec *spec, const struct preflight_facts *f, preflight_fn *found,
		     void *data)
{
	if (!f->argv || !spec->stop_url)
		return;
	/* v1 (cloud_sql_proxy) has no stop endpoint; it ends with 0 on SIGTERM. */
	if (strcmp(f->name, "cloud_sql_proxy") == 0) {
		found(data, PREFLIGHT_CLOUDSQL_V1,
		      "the Cloud SQL Auth Proxy v1 (cloud_sql_proxy) has no stop endpoint: stop it with "
		      "--sidecar cloudsql,ready=,stop=signal:TERM (it exits 0 on SIGTERM)");
		return;
	}
	if (!preflight_flag(f->argv, f->argc, "quitquitquit"))
		found(data, PREFLIGHT_CLOUDSQL_QUIT,
		      "the Cloud SQL Auth Proxy runs without --quitquitquit: nothing listens on its stop endpoint, "
		      "so it will be stopped by SIGTERM; add --quitquitquit to its args");
	if (!preflight_flag(f->argv, f->argc, "exit-zero-on-sigterm"))
		found(data, PREFLIGHT_CLOUDSQL_SIGTERM,
		      "the Cloud SQL Auth Proxy runs without --exit-zero-on-sigterm: a SIGTERM ends it with 143, "
		      "which fails the pod under restartPolicy Never; add --exit-zero-on-sigterm to its args");
}

void preflight_sidecar(const struct sidecar_spec *spec, const struct preflight_facts *f, preflight_fn *found,
		       void *data)
{
	char msg[512];

	if (is_preset(spec, "cloudsql"))
		cloudsql(spec, f, found, data);
	if (f->uids_known && !may_signal(f)) {
		/* A signal stop cannot work; an HTTP stop still can, but its escalation cannot. */
		snprintf(msg, sizeof(msg),
			 "not permitted to signal the sidecar (it runs as uid %u, rearguard as uid %u, without the "
			 "KILL capability): %s; run rearguard with the sidecar's uid (securityContext.runAsUser) or add "
			 "the KILL capability",
			 (unsigned)f->ruid, (unsigned)f->my_euid,
			 spec->stop_url ? "if its stop request fails, SIGTERM and SIGKILL cannot follow"
					: "its stop signal will fail");
		found(data, PREFLIGHT_KILL, msg);
	}
	if (!spec->stop_url && !spec->signal_all && is_shell(f->name) && f->nprocs > 1) {
		snprintf(msg, sizeof(msg),
			 "the sidecar's main process is a shell (%s): SIG%s reaches the shell, not the program it runs, "
			 "which is killed only when --kill-after ends; start the program with exec (sh -c 'exec prog') "
			 "or stop it with stop=signal-all:%s",
			 f->name, signal_name(spec->stop_signal), signal_name(spec->stop_signal));
		found(data, PREFLIGHT_SHELL, msg);
	}
}
