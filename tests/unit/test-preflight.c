/*
 * Pre-flight: the traps a sidecar shows when it appears, each found once
 * with the fix, and nothing said where there is nothing to say.
 */
#include "config.h"

#include "preflight.h"
#include "spec.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static char said[PREFLIGHT_NKINDS][512];
static unsigned count;

static void found(void *data, enum preflight_kind kind, const char *message)
{
	snprintf(said[kind], sizeof(said[kind]), "%s", message);
	count++;
}

/* Runs the checks for spec text with facts f; returns how many findings. */
static unsigned check(const char *text, const struct preflight_facts *f)
{
	struct sidecar_spec spec;
	char err[512];

	memset(said, 0, sizeof(said));
	count = 0;
	if (spec_parse(text, &spec, err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		return 99;
	}
	preflight_sidecar(&spec, f, found, NULL);
	spec_free(&spec);
	return count;
}

int main(void)
{
	const char *v2_bare[] = { "cloud-sql-proxy", "--port=5432", "p:r:i" };
	const char *v2_good[] = { "cloud-sql-proxy", "--quitquitquit", "-exit-zero-on-sigterm=true", "--health-check",
				  "p:r:i" };
	const char *v2_off[] = { "cloud-sql-proxy", "--quitquitquit=false", "--exit-zero-on-sigterm", "p:r:i" };
	const char *v1[] = { "/cloud_sql_proxy", "-instances=p:r:i=tcp:5432" };
	const char *shell[] = { "sh", "-c", "fluent-bit -c /etc/fb.conf" };
	struct preflight_facts f = { .uids_known = true, .ruid = 1000, .suid = 1000, .my_ruid = 1000, .my_euid = 1000 };

	f.name = "cloud-sql-proxy";
	f.argv = v2_bare;
	f.argc = 3;
	is_int(check("cloudsql", &f), 2, "a bare Cloud SQL proxy: two findings");
	ok(strstr(said[PREFLIGHT_NO_ENDPOINT], "add --quitquitquit") != NULL,
	   "--quitquitquit missing: no stop endpoint, with the fix");
	ok(strstr(said[PREFLIGHT_FLAG + 2], "143") && strstr(said[PREFLIGHT_FLAG + 2], "add --exit-zero-on-sigterm"),
	   "--exit-zero-on-sigterm missing: 143 fails the pod, with the fix");
	f.argv = v2_good;
	f.argc = 5;
	is_int(check("cloudsql", &f), 0, "both flags, in Go's other spellings: nothing to say");
	f.argv = v2_off;
	f.argc = 4;
	is_int(check("cloudsql", &f), 1, "--quitquitquit=false is no --quitquitquit");
	ok(said[PREFLIGHT_NO_ENDPOINT][0] != '\0', "said");
	f.name = "cloud_sql_proxy";
	f.argv = v1;
	f.argc = 2;
	is_int(check("cloudsql", &f), 1, "the v1 proxy under the v2 preset");
	ok(strstr(said[PREFLIGHT_NO_ENDPOINT], "no stop endpoint") && strstr(said[PREFLIGHT_NO_ENDPOINT], "cloudsql-v1"),
	   "has no stop endpoint: its own preset, said so");
	ok(strstr(said[PREFLIGHT_NO_ENDPOINT], "v2") != NULL, "with the upgrade path");
	is_int(check("cloudsql,stop=signal:TERM", &f), 0, "stopped by a signal already: nothing to say");
	is_int(check("cloudsql-v1", &f), 0, "its own preset: nothing to say");
	f.argv = NULL;
	f.name = "cloud-sql-proxy";
	is_int(check("cloudsql", &f), 0, "an unreadable command line: no guess");

	/* Signals the agent may not send. */
	f.name = "fluent-bit";
	f.ruid = f.suid = 0;
	f.my_ruid = f.my_euid = 65532;
	is_int(check("match=fluent-bit", &f), 1, "root's sidecar, a non-root agent without CAP_KILL");
	ok(strstr(said[PREFLIGHT_KILL], "not permitted") && strstr(said[PREFLIGHT_KILL], "KILL capability") &&
		   strstr(said[PREFLIGHT_KILL], "its stop signal will fail"),
	   "not permitted, with the fix");
	is_int(check("istio", &f), 1, "an HTTP stop: its escalation could not follow");
	ok(strstr(said[PREFLIGHT_KILL], "SIGTERM and SIGKILL cannot follow") != NULL, "which is said");
	f.can_kill = true;
	is_int(check("match=fluent-bit", &f), 0, "with CAP_KILL: nothing to say");
	f.can_kill = false;
	f.suid = 65532;
	is_int(check("match=fluent-bit", &f), 0, "the sidecar's saved uid is ours: permitted");
	f.uids_known = false;
	is_int(check("match=fluent-bit", &f), 0, "its uids unknown: no guess");
	f.uids_known = true;
	f.ruid = f.suid = 65532;

	/* A shell in front of the program. */
	f.name = "sh";
	f.argv = shell;
	f.argc = 3;
	f.nprocs = 2;
	is_int(check("match=sh|fluent-bit,stop=signal:TERM", &f), 1, "sh -c without exec, stopped by a signal");
	ok(strstr(said[PREFLIGHT_SHELL], "exec") && strstr(said[PREFLIGHT_SHELL], "signal-all:TERM"),
	   "the fixes: exec, or signal-all");
	is_int(check("match=sh|fluent-bit,stop=signal-all:TERM", &f), 0, "signal-all reaches the program: nothing to say");
	f.handles_stop = true;
	is_int(check("match=sh|fluent-bit,stop=signal:TERM", &f), 0, "a shell that traps the signal: nothing to say");
	f.handles_stop = false;
	f.nprocs = 1;
	is_int(check("match=sh|fluent-bit,stop=signal:TERM", &f), 0, "a shell alone is the program");

	/* Nothing known of a preset without rules, nor of a spec without a preset. */
	f.name = "daprd";
	f.argv = v2_bare;
	f.argc = 3;
	is_int(check("dapr", &f), 0, "dapr: no rules");
	is_int(check("match=cloud-sql-proxy,stop=http://127.0.0.1:9091/quitquitquit", &f), 0,
	       "a spec of no preset: the rows are not guessed");
	return done_testing();
}
