#include "config.h"

#include "options.h"
#include "tap.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[OPTIONS_ERR_MAX];
static char agent_name[] = "agent";

/* Parses a NULL-terminated list of arguments (the subcommand name is added). */
static enum options_result parse(struct agent_options *o, ...)
{
	char *argv[32] = { agent_name };
	int argc = 1, out, devnull;
	enum options_result r;
	va_list ap;

	va_start(ap, o);
	while ((argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	/* --help and --version print to stdout, which carries TAP here. */
	fflush(stdout);
	out = dup(1);
	devnull = open("/dev/null", O_WRONLY);
	dup2(devnull, 1);
	err[0] = '\0';
	r = options_parse_agent(o, argc, argv, err, sizeof(err));
	fflush(stdout);
	dup2(out, 1);
	close(out);
	close(devnull);
	return r;
}

static void refused(const char *needle, ...)
{
	char *argv[32] = { agent_name };
	struct agent_options o;
	int argc = 1;
	va_list ap;

	va_start(ap, needle);
	while ((argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	err[0] = '\0';
	is_int(options_parse_agent(&o, argc, argv, err, sizeof(err)), OPTIONS_ERROR, "refused: %s %s", argv[1],
	       argc > 2 ? argv[2] : "");
	ok(strstr(err, needle) != NULL, "error mentions \"%s\" (%s)", needle, err);
	ok(strchr(err, '\n') == NULL && err[0], "error is one non-empty line");
}

static void env_refused(const char *var, const char *value, const char *needle)
{
	struct agent_options o;

	setenv(var, value, 1);
	is_int(parse(&o, "-s", "istio", NULL), OPTIONS_ERROR, "%s=%s refused", var, value);
	ok(strstr(err, var) && strstr(err, needle), "error names %s and says \"%s\" (%s)", var, needle, err);
	unsetenv(var);
}

static char drain_name[] = "drain";

static enum options_result parse_drain(struct agent_options *o, ...)
{
	char *argv[32] = { drain_name };
	int argc = 1;
	va_list ap;

	va_start(ap, o);
	while ((argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	err[0] = '\0';
	return options_parse_drain(o, argc, argv, err, sizeof(err));
}

static void drain_options(void)
{
	struct agent_options o;

	is_int(parse_drain(&o, "-s", "istio", "--stop-timeout", "3s", "--kill-after", "1s", "--log-format", "json",
			   "-v", NULL),
	       OPTIONS_OK, "drain with its options");
	is_int(o.nsidecars, 1, "one sidecar");
	is_int(o.stop_timeout_ms, 3000, "--stop-timeout");
	is_int(o.kill_after_ms, 1000, "--kill-after");
	is_int(o.log_format, LOG_JSON, "--log-format");
	ok(o.dir == NULL && o.termination_log == NULL, "no files for a drain");
	options_free(&o);

	/* Exec'd in the agent's container, it sees the agent's variables: it takes its own only. */
	setenv("REARGUARD_SIDECARS", "linkerd;match=fluent-bit", 1);
	setenv("REARGUARD_STOP_TIMEOUT", "7s", 1);
	setenv("REARGUARD_APPS", "not a number", 1);
	setenv("REARGUARD_RESTART_POLICY", "Sometimes", 1);
	is_int(parse_drain(&o, NULL), OPTIONS_OK, "drain configured from the environment (%s)", err);
	is_int(o.nsidecars, 2, "REARGUARD_SIDECARS");
	is_int(o.stop_timeout_ms, 7000, "REARGUARD_STOP_TIMEOUT");
	options_free(&o);
	is_int(parse_drain(&o, "--stop-timeout", "1s", NULL), OPTIONS_OK, "flag over variable");
	is_int(o.stop_timeout_ms, 1000, "the flag wins");
	options_free(&o);
	unsetenv("REARGUARD_SIDECARS");
	unsetenv("REARGUARD_STOP_TIMEOUT");
	unsetenv("REARGUARD_APPS");
	unsetenv("REARGUARD_RESTART_POLICY");

	is_int(parse_drain(&o, NULL), OPTIONS_ERROR, "drain without a sidecar");
	ok(strstr(err, "no sidecar given") != NULL, "says so (%s)", err);
	is_int(parse_drain(&o, "-s", "istio", "--apps", "1", NULL), OPTIONS_ERROR, "an agent option");
	ok(strstr(err, "unknown option --apps") && strstr(err, "rearguard drain takes --sidecar"),
	   "is unknown to drain, which lists its own (%s)", err);
	is_int(parse_drain(&o, "-s", "istio", "-d", "/x", NULL), OPTIONS_ERROR, "-d");
	ok(strstr(err, "unknown option -d") != NULL, "is unknown to drain (%s)", err);
	is_int(parse_drain(&o, "-s", "istio", "now", NULL), OPTIONS_ERROR, "an argument");
	ok(strstr(err, "rearguard drain takes options only") != NULL, "is refused (%s)", err);
	is_int(parse_drain(&o, "-s", "istio", "--stop-timeout", "soon", NULL), OPTIONS_ERROR, "a bad duration");
	ok(strstr(err, "--stop-timeout: invalid duration") != NULL, "names the option (%s)", err);
}

int main(void)
{
	static const char *durations[] = { "--startup-timeout", "--ready-timeout", "--stop-timeout",
					   "--kill-after", "--term-grace", "--restart-grace" };
	struct agent_options o;
	size_t i;

	is_int(parse(&o, "--sidecar", "istio", NULL), OPTIONS_OK, "minimal command line");
	is_int(o.nsidecars, 1, "one sidecar");
	is_str(o.dir, "/var/run/rearguard", "default dir");
	is_str(o.termination_log, "/dev/termination-log", "default termination log");
	is_int(o.policy, POLICY_NEVER, "default policy Never");
	is_int(o.startup_timeout_ms, 600000, "default startup timeout 10m");
	is_int(o.ready_timeout_ms, 300000, "default ready timeout 5m");
	is_int(o.stop_timeout_ms, 20000, "default stop timeout 20s");
	is_int(o.kill_after_ms, 5000, "default kill-after 5s");
	is_int(o.term_grace_ms, 25000, "default term grace 25s");
	is_int(o.restart_grace_ms, 300000, "default restart grace 5m");
	is_int(o.apps, 0, "apps unknown by default");
	ok(o.app_src == NULL, "no --app by default");
	is_int(o.log_format, LOG_TEXT, "text logs by default");
	is_int(o.log_level, LOG_INFO, "info level by default");
	options_free(&o);

	is_int(parse(&o, "-s", "istio", "-s", "match=fluent-bit", "--app", "job|worker", "--apps", "2", "-d", "/x",
		     "--restart-policy", "OnFailure", "--startup-timeout", "1m", "--ready-timeout", "2m",
		     "--stop-timeout", "3s", "--kill-after", "4s", "--term-grace", "5s", "--restart-grace", "6s",
		     "--termination-log", "/t", "--log-format", "json", "-v", NULL),
	       OPTIONS_OK, "every option");
	is_int(o.nsidecars, 2, "two sidecars, in order");
	is_str(o.sidecars[1].name, "fluent-bit", "second sidecar");
	is_str(o.app_src, "job|worker", "--app");
	ok(regexec(&o.app_re, "worker", 0, NULL, 0) == 0 && regexec(&o.app_re, "workers", 0, NULL, 0) != 0,
	   "--app matches whole names");
	is_int(o.apps, 2, "--apps");
	is_str(o.dir, "/x", "--dir");
	is_int(o.policy, POLICY_ON_FAILURE, "--restart-policy");
	is_int(o.startup_timeout_ms, 60000, "--startup-timeout");
	is_int(o.ready_timeout_ms, 120000, "--ready-timeout");
	is_int(o.stop_timeout_ms, 3000, "--stop-timeout");
	is_int(o.kill_after_ms, 4000, "--kill-after");
	is_int(o.term_grace_ms, 5000, "--term-grace");
	is_int(o.restart_grace_ms, 6000, "--restart-grace");
	is_str(o.termination_log, "/t", "--termination-log");
	is_int(o.log_format, LOG_JSON, "--log-format");
	is_int(o.log_level, LOG_DEBUG, "--verbose");
	options_free(&o);

	setenv("REARGUARD_SIDECARS", "istio; match=fluent-bit,stop=signal:INT ;", 1);
	setenv("REARGUARD_STOP_TIMEOUT", "7s", 1);
	setenv("REARGUARD_QUIET", "true", 1);
	setenv("REARGUARD_APPS", "3", 1);
	setenv("REARGUARD_DIR", "", 1);
	is_int(parse(&o, NULL), OPTIONS_OK, "configuration from the environment");
	is_int(o.nsidecars, 2, "two sidecars from REARGUARD_SIDECARS");
	is_int(o.stop_timeout_ms, 7000, "REARGUARD_STOP_TIMEOUT");
	is_int(o.log_level, LOG_WARN, "REARGUARD_QUIET");
	is_int(o.apps, 3, "REARGUARD_APPS");
	is_str(o.dir, "/var/run/rearguard", "an empty variable counts as unset");
	options_free(&o);

	is_int(parse(&o, "--stop-timeout", "1s", "-s", "linkerd", NULL), OPTIONS_OK, "flags over the environment");
	is_int(o.stop_timeout_ms, 1000, "the flag wins over REARGUARD_STOP_TIMEOUT");
	is_int(o.nsidecars, 1, "--sidecar replaces REARGUARD_SIDECARS");
	is_str(o.sidecars[0].name, "linkerd", "the flag's sidecar");
	options_free(&o);
	unsetenv("REARGUARD_SIDECARS");
	unsetenv("REARGUARD_STOP_TIMEOUT");
	unsetenv("REARGUARD_QUIET");
	unsetenv("REARGUARD_APPS");
	unsetenv("REARGUARD_DIR");

	is_int(parse(&o, "--help", NULL), OPTIONS_EXIT_OK, "--help exits 0");
	is_int(parse(&o, "-h", NULL), OPTIONS_EXIT_OK, "-h exits 0");
	is_int(parse(&o, "--version", NULL), OPTIONS_EXIT_OK, "--version exits 0");

	refused("no sidecar given", NULL);
	refused("no sidecar given", "-v", NULL);
	refused("unknown option --nope", "-s", "istio", "--nope", NULL);
	refused("unknown option -x", "-s", "istio", "-x", NULL);
	refused("option --stop-timeout needs a value", "-s", "istio", "--stop-timeout", NULL);
	refused("option -s needs a value", "-s", NULL);
	refused("unexpected argument \"extra\"", "-s", "istio", "extra", NULL);
	refused("unknown preset", "-s", "istoi", NULL);
	refused("used twice", "-s", "istio", "-s", "istio", NULL);
	refused("--apps", "-s", "istio", "--apps", "0", NULL);
	refused("--apps", "-s", "istio", "--apps", "1001", NULL);
	refused("--apps", "-s", "istio", "--apps", "two", NULL);
	refused("--app: invalid regex", "-s", "istio", "--app", "(", NULL);
	refused("--app: needs", "-s", "istio", "--app", "", NULL);
	refused("--restart-policy", "-s", "istio", "--restart-policy", "Always", NULL);
	refused("--log-format", "-s", "istio", "--log-format", "xml", NULL);
	refused("--dir: needs a value", "-s", "istio", "--dir", "", NULL);
	refused("--termination-log: needs a value", "-s", "istio", "--termination-log", "", NULL);
	for (i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		refused("invalid duration", "-s", "istio", durations[i], "abc", NULL);
		refused("too long", "-s", "istio", durations[i], "9999h", NULL);
	}

	env_refused("REARGUARD_STOP_TIMEOUT", "forever", "invalid duration");
	env_refused("REARGUARD_APPS", "-1", "not a number");
	env_refused("REARGUARD_VERBOSE", "sometimes", "not a boolean");
	env_refused("REARGUARD_RESTART_POLICY", "never", "not Never or OnFailure");
	env_refused("REARGUARD_LOG_FORMAT", "yaml", "not text or json");
	env_refused("REARGUARD_SIDECARS", "istio;bogus", "unknown preset");
	env_refused("REARGUARD_APP", "[", "invalid regex");
	drain_options();
	return done_testing();
}
