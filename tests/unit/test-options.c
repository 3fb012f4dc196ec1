#include "config.h"

#include "options.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[OPTIONS_ERR_MAX];
static char agent_name[] = "agent";

/* Parses a NULL-terminated list of arguments (the subcommand name is added). */
static enum options_result parse(struct agent_options *o, ...)
{
	char *argv[48] = { agent_name };
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
	char *argv[48] = { agent_name };
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

/* Fills argv (at most 15 words) from a NULL-terminated list; returns argc. */
static int words(char **argv, va_list ap)
{
	int argc = 0;

	while (argc < 15 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	argv[argc] = NULL;
	return argc;
}

static enum options_result parse_run(struct run_options *o, ...)
{
	static char *argv[16];
	int argc;
	va_list ap;

	va_start(ap, o);
	argc = words(argv, ap);
	va_end(ap);
	err[0] = '\0';
	return options_parse_run(o, argc, argv, err, sizeof(err));
}

static enum options_result parse_wait(struct wait_options *o, ...)
{
	char *argv[16];
	int argc;
	va_list ap;

	va_start(ap, o);
	argc = words(argv, ap);
	va_end(ap);
	err[0] = '\0';
	return options_parse_wait(o, argc, argv, err, sizeof(err));
}

static enum options_result parse_install(const char **dir, ...)
{
	char *argv[16];
	int argc;
	va_list ap;

	va_start(ap, dir);
	argc = words(argv, ap);
	va_end(ap);
	err[0] = '\0';
	return options_parse_install(dir, argc, argv, err, sizeof(err));
}

static int run_name(char *name, ...)
{
	char *argv[16];
	int argc;
	va_list ap;

	va_start(ap, name);
	argc = words(argv, ap);
	va_end(ap);
	name[0] = '\0';
	return options_run_name(argc, argv, name, DECIDE_NAME_MAX);
}

static void run_names(void)
{
	char name[DECIDE_NAME_MAX];

	is_int(run_name(name, "rearguard", "run", "--name", "x", "--", "job", NULL), 0, "rearguard run --name x");
	is_str(name, "x", "reports as x");
	is_int(run_name(name, "/r/rearguard", "run", "-d", "/v", "--timeout=5s", "--no-wait", "--", "/app/job", "--name",
			"y", NULL),
	       0, "options, then CMD with its own --name");
	is_str(name, "job", "reports as CMD's basename");
	is_int(run_name(name, "rearguard", "run", "--name=z", "job", NULL), 0, "--name=z");
	is_str(name, "z", "reports as z");
	setenv("REARGUARD_NAME", "mine", 1);
	is_int(run_name(name, "rearguard", "run", "job", NULL), 0, "our own REARGUARD_NAME");
	is_str(name, "job", "is not theirs");
	unsetenv("REARGUARD_NAME");
	/* Its REARGUARD_DRAIN may be set where we cannot see it: the name is all we want. */
	is_int(run_name(name, "rearguard", "run", "--sidecar", "istio", "--", "/bin/mig", NULL), 0,
	       "--sidecar without a visible --drain");
	is_str(name, "mig", "still named");
	is_int(run_name(name, "rearguard", "wait", "ready", NULL), -EINVAL, "not run");
	is_int(run_name(name, "rearguard", NULL), -EINVAL, "no subcommand");
	is_int(run_name(name, "rearguard", "run", "--help", NULL), -EINVAL, "--help is not a name (and prints nothing)");
	is_int(run_name(name, "rearguard", "run", "--bogus", "--", "job", NULL), -EINVAL, "a command line run refuses");
	is_str(name, "", "name untouched");
}

static int sidecar_name(char *name, int *program, ...)
{
	char *argv[16];
	int argc;
	va_list ap;

	va_start(ap, program);
	argc = words(argv, ap);
	va_end(ap);
	name[0] = '\0';
	return options_sidecar_name(argc, argv, name, DECIDE_NAME_MAX, program);
}

static int sidecar_parse(struct sidecar_options *o, ...)
{
	static char *argv[16]; /* o->cmd points into it */
	int argc;
	va_list ap;

	va_start(ap, o);
	argc = words(argv, ap);
	va_end(ap);
	err[0] = '\0';
	return options_parse_sidecar(o, argc, argv, err, sizeof(err));
}

/* rearguard sidecar: its options, and its name as the agent reads it from its command line. */
static void sidecars(void)
{
	char name[DECIDE_NAME_MAX];
	struct sidecar_options o;
	int program = -1;

	is_int(sidecar_parse(&o, "sidecar", "--", "/bin/busybox", "httpd", "-f", NULL), OPTIONS_OK, "a program");
	is_str(o.name, "busybox", "named by its basename");
	is_int(o.stop_signal, SIGTERM, "stopped by SIGTERM by default");
	is_int(o.stop_timeout_ms, 20000, "the agent's --stop-timeout by default");
	is_str(o.dir, "/var/run/rearguard", "the default dir");
	is_str(o.cmd[0], "/bin/busybox", "the program");
	is_str(o.cmd[2], "-f", "with its own options");
	options_free_sidecar(&o);
	is_int(sidecar_parse(&o, "sidecar", "--name", "web", "--stop-signal", "QUIT", "--stop-timeout", "3s", "-d",
			     "/v", "nginx", "-g", "daemon off;", NULL),
	       OPTIONS_OK, "every option, and a program without --");
	is_str(o.name, "web", "--name");
	is_int(o.stop_signal, SIGQUIT, "--stop-signal QUIT");
	is_int(o.stop_timeout_ms, 3000, "--stop-timeout 3s");
	is_str(o.cmd[1], "-g", "the program's options are its own");
	options_free_sidecar(&o);
	is_int(sidecar_parse(&o, "sidecar", "--stop-signal", "KILL", "--", "x", NULL), OPTIONS_ERROR, "KILL stops nothing gracefully");
	ok(strstr(err, "--stop-signal") != NULL, "the error names the option: %s", err);
	is_int(sidecar_parse(&o, "sidecar", NULL), OPTIONS_ERROR, "no program");
	is_str(err, "sidecar: no program given (rearguard sidecar [OPTIONS] -- PROGRAM [ARG...])", "said so");
	setenv("REARGUARD_STOP_SIGNAL", "INT", 1);
	is_int(sidecar_parse(&o, "sidecar", "x", NULL), OPTIONS_OK, "its environment twin");
	is_int(o.stop_signal, SIGINT, "REARGUARD_STOP_SIGNAL");
	options_free_sidecar(&o);
	unsetenv("REARGUARD_STOP_SIGNAL");

	is_int(sidecar_name(name, &program, "/opt/rearguard/rearguard", "sidecar", "--name", "web", "--", "httpd", "-f",
			    NULL),
	       0, "the agent reads a wrapper's command line");
	is_str(name, "web", "its --name");
	is_int(program, 5, "and where its program is");
	is_int(sidecar_name(name, &program, "rearguard", "sidecar", "/usr/bin/tail", "-F", "x", NULL), 0, "no --name");
	is_str(name, "tail", "named after its program");
	is_int(program, 2, "the program right after sidecar");
	is_int(sidecar_name(name, &program, "sh", "sidecar", "x", NULL), -EINVAL, "not rearguard");
	is_int(sidecar_name(name, &program, "rearguard", "run", "x", NULL), -EINVAL, "rearguard run is no wrapper");
	is_int(sidecar_name(name, &program, "rearguard", "sidecar", "--help", NULL), -EINVAL, "--help names nothing");
}

static void subcommands(void)
{
	struct run_options r;
	struct wait_options w;
	const char *dir = NULL;

	is_int(parse_run(&r, "run", "--", "/usr/bin/job", "--exit", "3", NULL), OPTIONS_OK, "run -- CMD ARGS");
	is_str(r.name, "job", "run: the report is named after CMD");
	is_str(r.dir, "/var/run/rearguard", "run: default dir");
	is_int(r.timeout_ms, 600000, "run: waits 10m for ready by default");
	ok(!r.no_wait, "run: waits by default");
	is_int(r.log_level, LOG_INFO, "run: info by default");
	ok(r.cmd && strcmp(r.cmd[0], "/usr/bin/job") == 0 && strcmp(r.cmd[2], "3") == 0 && !r.cmd[3],
	   "run: CMD and its arguments untouched");
	options_free_run(&r);
	is_int(parse_run(&r, "run", "job", "--name", "x", NULL), OPTIONS_OK, "run CMD without --");
	ok(strcmp(r.cmd[1], "--name") == 0 && strcmp(r.name, "job") == 0, "options after CMD are CMD's");
	options_free_run(&r);
	is_int(parse_run(&r, "run", "--name", "train", "-d", "/d", "--timeout", "5s", "--no-wait", "--log-format",
			 "json", "-q", "--", "python3", NULL),
	       OPTIONS_OK, "run: every option");
	is_str(r.name, "train", "--name");
	is_str(r.dir, "/d", "--dir");
	is_int(r.timeout_ms, 5000, "--timeout");
	ok(r.no_wait, "--no-wait");
	is_int(r.log_format, LOG_JSON, "--log-format");
	is_int(r.log_level, LOG_WARN, "-q");
	options_free_run(&r);

	setenv("REARGUARD_NAME", "envname", 1);
	setenv("REARGUARD_TIMEOUT", "3s", 1);
	setenv("REARGUARD_NO_WAIT", "true", 1);
	setenv("REARGUARD_DIR", "/e", 1);
	is_int(parse_run(&r, "run", "--timeout", "1s", "--", "job", NULL), OPTIONS_OK, "run: the environment");
	is_str(r.name, "envname", "REARGUARD_NAME");
	is_str(r.dir, "/e", "REARGUARD_DIR");
	ok(r.no_wait, "REARGUARD_NO_WAIT");
	is_int(r.timeout_ms, 1000, "--timeout wins over REARGUARD_TIMEOUT");
	options_free_run(&r);
	is_int(parse_wait(&w, "wait", "done", NULL), OPTIONS_OK, "wait: the environment");
	is_int(w.timeout_ms, 3000, "wait: REARGUARD_TIMEOUT");
	is_str(w.dir, "/e", "wait: REARGUARD_DIR");
	options_free_wait(&w);
	unsetenv("REARGUARD_NAME");
	unsetenv("REARGUARD_TIMEOUT");
	unsetenv("REARGUARD_NO_WAIT");
	unsetenv("REARGUARD_DIR");

	is_int(parse_run(&r, "run", NULL), OPTIONS_ERROR, "run without a command");
	ok(strstr(err, "no command given") != NULL, "says so (%s)", err);
	is_int(parse_run(&r, "run", "--name", "a/b", "--", "job", NULL), OPTIONS_ERROR, "run: a name with a slash");
	ok(strstr(err, "--name") && strstr(err, "cannot name a report"), "says so (%s)", err);
	is_int(parse_run(&r, "run", "--", "dir/", NULL), OPTIONS_ERROR, "run: a command without a basename");
	ok(strstr(err, "give --name NAME") != NULL, "asks for --name (%s)", err);
	is_int(parse_run(&r, "run", "--timeout", "later", "--", "job", NULL), OPTIONS_ERROR, "run: a bad duration");
	ok(strstr(err, "--timeout: invalid duration") != NULL, "says so (%s)", err);
	is_int(parse_run(&r, "run", "--sidecar", "istio", "--", "job", NULL), OPTIONS_ERROR, "run: --sidecar without --drain");
	ok(strstr(err, "--sidecar is for --drain") != NULL, "says so (%s)", err);
	is_int(parse_run(&r, "run", "--drain", "--", "job", NULL), OPTIONS_ERROR, "run: --drain without sidecars");
	ok(strstr(err, "--drain needs the sidecars") != NULL, "says so (%s)", err);
	is_int(parse_run(&r, "run", "--apps", "1", "--", "job", NULL), OPTIONS_ERROR, "run: an agent-only option");
	ok(strstr(err, "run: unknown option --apps") != NULL, "says so (%s)", err);
	is_int(parse_run(&r, "run", "--drain", "-s", "istio", "-s", "cloudsql", "--stop-timeout", "4s", "--kill-after",
			 "2s", "--", "job", NULL),
	       OPTIONS_OK, "run --drain with its sidecars");
	ok(r.drain && r.drain_opts.nsidecars == 2 && r.drain_opts.stop_timeout_ms == 4000 &&
		   r.drain_opts.kill_after_ms == 2000,
	   "the drain options are taken");
	is_str(r.drain_opts.sidecars[1].name, "cloudsql", "in order");
	options_free_run(&r);
	setenv("REARGUARD_SIDECARS", "istio", 1);
	is_int(parse_run(&r, "run", "--", "job", NULL), OPTIONS_OK, "REARGUARD_SIDECARS without --drain is fine");
	ok(!r.drain, "and does not drain");
	options_free_run(&r);
	setenv("REARGUARD_DRAIN", "true", 1);
	is_int(parse_run(&r, "run", "-s", "linkerd", "--", "job", NULL), OPTIONS_OK, "REARGUARD_DRAIN, a flag's sidecar");
	ok(r.drain && r.drain_opts.nsidecars == 1, "the flag replaces the environment's list");
	is_str(r.drain_opts.sidecars[0].name, "linkerd", "the flag's sidecar");
	options_free_run(&r);
	setenv("REARGUARD_DRAIN", "maybe", 1);
	is_int(parse_run(&r, "run", "--", "job", NULL), OPTIONS_ERROR, "REARGUARD_DRAIN not a boolean");
	ok(strstr(err, "REARGUARD_DRAIN") && strstr(err, "not a boolean"), "says so (%s)", err);
	unsetenv("REARGUARD_DRAIN");
	unsetenv("REARGUARD_SIDECARS");

	is_int(parse_wait(&w, "wait", "ready", NULL), OPTIONS_OK, "wait ready");
	is_str(w.condition, "ready", "the condition");
	is_int(w.timeout_ms, 600000, "10m by default");
	options_free_wait(&w);
	is_int(parse_wait(&w, "wait", "--timeout", "0", "apps-done", "-d", "/x", NULL), OPTIONS_OK,
	       "options before and after the condition");
	ok(strcmp(w.condition, "apps-done") == 0 && strcmp(w.dir, "/x") == 0 && w.timeout_ms == 0, "all taken");
	options_free_wait(&w);
	is_int(parse_wait(&w, "wait", NULL), OPTIONS_ERROR, "wait without a condition");
	ok(strstr(err, "which condition?") != NULL, "says so (%s)", err);
	is_int(parse_wait(&w, "wait", "drain", NULL), OPTIONS_ERROR, "wait for something else");
	ok(strstr(err, "unknown condition \"drain\"") != NULL, "says so (%s)", err);
	is_int(parse_wait(&w, "wait", "ready", "done", NULL), OPTIONS_ERROR, "two conditions");
	ok(strstr(err, "unexpected argument \"done\"") != NULL, "says so (%s)", err);

	is_int(parse_install(&dir, "install", "/x", NULL), OPTIONS_OK, "install DIR");
	is_str(dir, "/x", "the directory");
	is_int(parse_install(&dir, "install", NULL), OPTIONS_ERROR, "install without a directory");
	ok(strstr(err, "which directory?") != NULL, "says so (%s)", err);
	is_int(parse_install(&dir, "install", "/x", "/y", NULL), OPTIONS_ERROR, "two directories");
	is_int(parse_install(&dir, "install", "--force", "/x", NULL), OPTIONS_ERROR, "an unknown option");
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

/*
 * A scan that stopped inside "-Zq" (Z is refused) must leave nothing for
 * the next one: getopt keeps its place in the old arguments unless it is
 * made to start afresh.
 */
static void rescans(void)
{
	char a0[] = "agent", z[] = "-Zq", s[] = "-s", istio[] = "istio";
	char *first[] = { a0, z, NULL }, *second[] = { a0, s, istio, NULL };
	struct agent_options o;

	is_int(options_parse_agent(&o, 2, first, err, sizeof(err)), OPTIONS_ERROR, "-Zq is refused");
	is_int(options_parse_agent(&o, 3, second, err, sizeof(err)), OPTIONS_OK, "the next command line parses");
	is_int(o.log_level, LOG_INFO, "no -q carried over from the refused command line");
	options_free(&o);
	is_int(options_parse_drain(&o, 2, first, err, sizeof(err)), OPTIONS_ERROR, "drain: -Zq is refused");
	is_int(options_parse_drain(&o, 3, second, err, sizeof(err)), OPTIONS_OK, "drain: the next command line parses");
	is_int(o.log_level, LOG_INFO, "drain: no -q carried over");
	options_free(&o);
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

	is_int(parse_drain(&o, NULL), OPTIONS_OK, "drain without a sidecar: the known ones are detected");
	ok(o.detect && o.nsidecars == spec_npresets, "every preset looked for");
	options_free(&o);
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
	static const char *durations[] = { "--startup-timeout", "--sidecar-wait", "--ready-timeout", "--stop-timeout",
					   "--kill-after", "--term-grace", "--restart-grace" };
	struct agent_options o;
	size_t i;

	is_int(parse(&o, "--sidecar", "istio", NULL), OPTIONS_OK, "minimal command line");
	is_int(o.nsidecars, 1, "one sidecar");
	is_str(o.dir, "/var/run/rearguard", "default dir");
	is_str(o.termination_log, "/dev/termination-log", "default termination log");
	is_int(o.policy, POLICY_NEVER, "default policy Never");
	is_int(o.startup_timeout_ms, 600000, "default startup timeout 10m");
	is_int(o.sidecar_wait_ms, 120000, "default sidecar wait 2m");
	is_int(o.ready_timeout_ms, 300000, "default ready timeout 5m");
	is_int(o.stop_timeout_ms, 20000, "default stop timeout 20s");
	is_int(o.kill_after_ms, 5000, "default kill-after 5s");
	is_int(o.term_grace_ms, 25000, "default term grace 25s");
	is_int(o.restart_grace_ms, 300000, "default restart grace 5m");
	is_int(o.on_sidecar_exit, SIDECAR_EXIT_WARN, "a sidecar's failure is a warning by default");
	ok(!o.first, "not --first by default");
	is_int(o.apps, 0, "apps unknown by default");
	ok(o.app_src == NULL, "no --app by default");
	is_int(o.log_format, LOG_TEXT, "text logs by default");
	is_int(o.log_level, LOG_INFO, "info level by default");
	options_free(&o);

	is_int(parse(&o, "-s", "istio", "-s", "match=fluent-bit", "--app", "job|worker", "--apps", "2", "-d", "/x",
		     "--restart-policy", "OnFailure", "--startup-timeout", "1m", "--sidecar-wait", "7s",
		     "--ready-timeout", "2m",
		     "--stop-timeout", "3s", "--kill-after", "4s", "--term-grace", "5s", "--restart-grace", "6s",
		     "--termination-log", "/t", "--log-format", "json", "-v", "--on-sidecar-exit", "fail", "--first",
		     NULL),
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
	is_int(o.sidecar_wait_ms, 7000, "--sidecar-wait");
	is_int(o.ready_timeout_ms, 120000, "--ready-timeout");
	is_int(o.stop_timeout_ms, 3000, "--stop-timeout");
	is_int(o.kill_after_ms, 4000, "--kill-after");
	is_int(o.term_grace_ms, 5000, "--term-grace");
	is_int(o.restart_grace_ms, 6000, "--restart-grace");
	is_int(o.on_sidecar_exit, SIDECAR_EXIT_FAIL, "--on-sidecar-exit fail");
	ok(o.first, "--first");
	is_str(o.termination_log, "/t", "--termination-log");
	is_int(o.log_format, LOG_JSON, "--log-format");
	is_int(o.log_level, LOG_DEBUG, "--verbose");
	options_free(&o);
	is_int(parse(&o, "-s", "istio", "--restart-policy", "Always", NULL), OPTIONS_OK, "--restart-policy Always");
	is_int(o.policy, POLICY_ALWAYS, "a long-running pod's");
	options_free(&o);

	setenv("REARGUARD_SIDECARS", "istio; match=fluent-bit,stop=signal:INT ;", 1);
	setenv("REARGUARD_STOP_TIMEOUT", "7s", 1);
	setenv("REARGUARD_QUIET", "true", 1);
	setenv("REARGUARD_APPS", "3", 1);
	setenv("REARGUARD_DIR", "", 1);
	setenv("REARGUARD_ON_SIDECAR_EXIT", "fail", 1);
	setenv("REARGUARD_FIRST", "true", 1);
	is_int(parse(&o, NULL), OPTIONS_OK, "configuration from the environment");
	ok(o.first, "REARGUARD_FIRST");
	is_int(o.on_sidecar_exit, SIDECAR_EXIT_FAIL, "REARGUARD_ON_SIDECAR_EXIT");
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
	unsetenv("REARGUARD_ON_SIDECAR_EXIT");
	unsetenv("REARGUARD_FIRST");

	is_int(parse(&o, "--help", NULL), OPTIONS_EXIT_OK, "--help exits 0");
	is_int(parse(&o, "-h", NULL), OPTIONS_EXIT_OK, "-h exits 0");
	is_int(parse(&o, "--version", NULL), OPTIONS_EXIT_OK, "--version exits 0");

	/* Zero-config: no spec, the known sidecars are detected; auto adds detection to the specs given. */
	is_int(parse(&o, NULL), OPTIONS_OK, "no sidecar given: detection");
	ok(o.detect, "detect");
	is_int(o.nsidecars, spec_npresets, "every preset is looked for");
	ok(o.sidecars[0].detected && strcmp(o.sidecars[0].name, "istio") == 0, "as detected sidecars, named after the presets");
	options_free(&o);
	is_int(parse(&o, "-s", "name=mesh,istio", NULL), OPTIONS_ERROR, "a preset after a key is no preset");
	is_int(parse(&o, "-s", "istio,name=mesh", "-s", "auto", "-s", "match=fluentd", NULL), OPTIONS_OK,
	       "auto beside explicit specs");
	ok(o.detect, "detect");
	is_int(o.nsidecars, 2 + spec_npresets - 1, "the explicit two, and every preset but istio");
	ok(!o.sidecars[0].detected && !o.sidecars[1].detected && o.sidecars[2].detected, "explicit first, then detection");
	options_free(&o);
	is_int(parse(&o, "-s", "linkerd", NULL), OPTIONS_OK, "an explicit spec alone");
	ok(!o.detect && o.nsidecars == 1, "replaces detection");
	options_free(&o);
	setenv("REARGUARD_SIDECARS", "auto", 1);
	is_int(parse(&o, NULL), OPTIONS_OK, "REARGUARD_SIDECARS=auto");
	ok(o.detect && o.nsidecars == spec_npresets, "detection");
	options_free(&o);
	is_int(parse(&o, "-s", "vault", NULL), OPTIONS_OK, "a flag replaces the variable's auto");
	ok(!o.detect && o.nsidecars == 1, "no detection then");
	options_free(&o);
	unsetenv("REARGUARD_SIDECARS");
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
	refused("repetitions multiply", "-s", "istio", "--app", "(a{1000}){100}", NULL);
	refused("--app: needs", "-s", "istio", "--app", "", NULL);
	refused("--restart-policy", "-s", "istio", "--restart-policy", "always", NULL);
	refused("--log-format", "-s", "istio", "--log-format", "xml", NULL);
	refused("--on-sidecar-exit: \"kill\" is not warn or fail", "-s", "istio", "--on-sidecar-exit", "kill", NULL);
	refused("--dir: needs a value", "-s", "istio", "--dir", "", NULL);
	refused("--termination-log: needs a value", "-s", "istio", "--termination-log", "", NULL);
	for (i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		refused("invalid duration", "-s", "istio", durations[i], "abc", NULL);
		refused("too long", "-s", "istio", durations[i], "9999h", NULL);
	}

	env_refused("REARGUARD_STOP_TIMEOUT", "forever", "invalid duration");
	env_refused("REARGUARD_APPS", "-1", "not a number");
	env_refused("REARGUARD_VERBOSE", "sometimes", "not a boolean");
	env_refused("REARGUARD_RESTART_POLICY", "never", "not Never, OnFailure or Always");
	env_refused("REARGUARD_LOG_FORMAT", "yaml", "not text or json");
	env_refused("REARGUARD_ON_SIDECAR_EXIT", "Fail", "not warn or fail");
	env_refused("REARGUARD_FIRST", "first", "not a boolean");
	env_refused("REARGUARD_SIDECARS", "istio;bogus", "unknown preset");
	env_refused("REARGUARD_APP", "[", "invalid regex");
	subcommands();
	run_names();
	sidecars();
	drain_options();
	rescans();
	return done_testing();
}
