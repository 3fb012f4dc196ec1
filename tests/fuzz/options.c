/*
 * Every subcommand's options and their REARGUARD_* twins, as a pod spec or
 * a ConfigMap may give them. The input picks the subcommand, which
 * variables are set (and to what) and the arguments, separated by NUL
 * bytes as in /proc/PID/cmdline. A parse succeeds with a configuration the
 * rest of the program can trust, prints help, or fails with one line.
 */
#include "config.h"

#include "fuzz.h"
#include "options.h"
#include "parse.h"
#include "protocol.h"


static const char *const vars[] = {
    "REARGUARD_SIDECARS",	"REARGUARD_APP",
    "REARGUARD_APPS",		"REARGUARD_DIR",
    "REARGUARD_RESTART_POLICY", "REARGUARD_STARTUP_TIMEOUT",
    "REARGUARD_READY_TIMEOUT",	"REARGUARD_STOP_TIMEOUT",
    "REARGUARD_KILL_AFTER",	"REARGUARD_TERM_GRACE",
    "REARGUARD_RESTART_GRACE",	"REARGUARD_TERMINATION_LOG",
    "REARGUARD_LOG_FORMAT",	"REARGUARD_VERBOSE",
    "REARGUARD_QUIET",		"REARGUARD_NAME",
    "REARGUARD_TIMEOUT",	"REARGUARD_NO_WAIT",
    "REARGUARD_DRAIN",
};
#define NVARS (sizeof(vars) / sizeof(vars[0]))
#define MAX_ARGS 64

/* putenv with buffers of our own: setenv would keep every value it was ever given. */
static char envbuf[NVARS][1024];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* --help and --version print to stdout, many times a second. */
	fuzz_quiet_stdout();
	return 0;
}

static int valid_ms(int64_t ms)
{
	return ms >= 0 && ms <= DURATION_MAX_MS;
}

static void check_agent(const struct agent_options *cfg, int drain)
{
	size_t i, k;

	FUZZ_CHECK(cfg->nsidecars >= 1 && cfg->sidecars);
	for (i = 0; i < cfg->nsidecars; i++) {
		FUZZ_CHECK(cfg->sidecars[i].name[0] && cfg->sidecars[i].match_compiled);
		for (k = 0; k < i; k++)
			FUZZ_CHECK(strcmp(cfg->sidecars[i].name, cfg->sidecars[k].name) != 0);
	}
	FUZZ_CHECK(valid_ms(cfg->stop_timeout_ms) && valid_ms(cfg->kill_after_ms));
	FUZZ_CHECK(cfg->log_format == LOG_TEXT || cfg->log_format == LOG_JSON);
	FUZZ_CHECK(cfg->log_level >= LOG_ERROR && cfg->log_level <= LOG_DEBUG);
	if (drain) {
		FUZZ_CHECK(!cfg->dir && !cfg->termination_log);
		return;
	}
	FUZZ_CHECK(cfg->dir && *cfg->dir && cfg->termination_log && *cfg->termination_log);
	FUZZ_CHECK(cfg->apps <= 1000);
	FUZZ_CHECK(!cfg->app_src || *cfg->app_src);
	FUZZ_CHECK(cfg->policy == POLICY_NEVER || cfg->policy == POLICY_ON_FAILURE);
	FUZZ_CHECK(valid_ms(cfg->startup_timeout_ms) && valid_ms(cfg->ready_timeout_ms));
	FUZZ_CHECK(valid_ms(cfg->term_grace_ms) && valid_ms(cfg->restart_grace_ms));
}

/* Whether p is one of the argument strings. */
static int is_arg(const char *p, char *const *args, int nargs)
{
	int i;

	for (i = 0; i < nargs; i++)
		if (p == args[i])
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"rearguard", "drain", "run", "wait", "install", "rearguard"};
	struct fuzz_in in = {data, size};
	unsigned mode = fuzz_byte(&in) % 6;
	uint32_t mask = fuzz_u32(&in);
	char *args[MAX_ARGS], *argv[MAX_ARGS + 3], err[OPTIONS_ERR_MAX];
	int argc = 1, nargs = 0, newline = 0, i;
	enum options_result r = OPTIONS_ERROR;
	struct agent_options cfg;
	struct run_options run;
	struct wait_options wait;
	const char *dir = NULL;
	size_t v;

	for (v = 0; v < NVARS; v++) {
		unsetenv(vars[v]);
		if (mask & (1u << v)) {
			char *value = fuzz_str(&in);

			newline |= strchr(value, '\n') != NULL;
			snprintf(envbuf[v], sizeof(envbuf[v]), "%s=%s", vars[v], value);
			putenv(envbuf[v]);
			free(value);
		}
	}
	/* run_name reads another process's command line: argv[0] is the program, argv[1] "run". */
	argv[0] = (char *)names[mode];
	if (mode == 5)
		argv[argc++] = (char *)"run";
	while (in.n > 0 && nargs < MAX_ARGS) {
		args[nargs] = fuzz_str(&in);
		newline |= strchr(args[nargs], '\n') != NULL;
		argv[argc++] = args[nargs++];
	}
	argv[argc] = NULL;

	memset(err, 0, sizeof(err));
	switch (mode) {
	case 0:
	case 1:
		r = mode == 0 ? options_parse_agent(&cfg, argc, argv, err, sizeof(err))
			      : options_parse_drain(&cfg, argc, argv, err, sizeof(err));
		if (r == OPTIONS_OK) {
			check_agent(&cfg, mode == 1);
			options_free(&cfg);
		}
		break;
	case 2:
		r = options_parse_run(&run, argc, argv, err, sizeof(err));
		if (r == OPTIONS_OK) {
			FUZZ_CHECK(run.cmd && run.cmd[0] && is_arg(run.cmd[0], args, nargs));
			FUZZ_CHECK(run.name && protocol_name_ok(run.name));
			FUZZ_CHECK(run.dir && *run.dir && valid_ms(run.timeout_ms));
			if (run.drain)
				check_agent(&run.drain_opts, 1);
			else
				FUZZ_CHECK(!run.sidecar_flag_seen);
			options_free_run(&run);
		}
		break;
	case 3:
		r = options_parse_wait(&wait, argc, argv, err, sizeof(err));
		if (r == OPTIONS_OK) {
			FUZZ_CHECK(wait.condition &&
				   (strcmp(wait.condition, "ready") == 0 || strcmp(wait.condition, "apps-done") == 0 ||
				    strcmp(wait.condition, "done") == 0));
			FUZZ_CHECK(wait.dir && *wait.dir && valid_ms(wait.timeout_ms));
			options_free_wait(&wait);
		}
		break;
	case 4:
		r = options_parse_install(&dir, argc, argv, err, sizeof(err));
		if (r == OPTIONS_OK)
			FUZZ_CHECK(dir && is_arg(dir, args, nargs));
		break;
	case 5: {
		char name[64];

		r = options_run_name(argc, argv, name, sizeof(name)) == 0 ? OPTIONS_OK : OPTIONS_ERROR;
		if (r == OPTIONS_OK)
			FUZZ_CHECK(protocol_name_ok(name));
		/* No message: the agent reads command lines silently. */
		err[0] = 'x';
		break;
	}
	}
	FUZZ_CHECK(r == OPTIONS_OK || r == OPTIONS_EXIT_OK || r == OPTIONS_ERROR);
	if (r == OPTIONS_ERROR) {
		FUZZ_CHECK(err[0] != '\0' && memchr(err, '\0', sizeof(err)));
		FUZZ_CHECK(newline || !strchr(err, '\n'));
	}
	for (i = 0; i < nargs; i++)
		free(args[i]);
	for (v = 0; v < NVARS; v++)
		unsetenv(vars[v]);
	return 0;
}
