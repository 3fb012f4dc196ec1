/*
 * rearguard: native-sidecar behaviour for pods that cannot have it.
 *
 * main() picks the subcommand from one table, parses its options (every
 * error is one line and exit 2: parsed(), the one place an options result
 * becomes an exit status), sets up logging and hands over to the module's
 * *_main: the agent (the default), drain, run or run --drain (the wrapper),
 * sidecar, wait, install, inject, webhook, explain; presets prints the
 * preset table. Each subcommand here is a *_cmd. Called kubectl-rearguard (the kubectl
 * plugin), it runs the same commands but never the agent.
 */
#include "config.h"

#include "agent.h"
#include "await.h"
#include "commands.h"
#include "drain.h"
#include "install.h"
#include "log.h"
#include "options.h"
#include "run.h"
#include "sidecar.h"
#include "util.h"
#include "webhook.h"
#include "wrap.h"

#include <stdio.h>
#include <string.h>

static int usage_error(const char *msg)
{
	fprintf(stderr, "rearguard: %s\n", msg);
	return 2;
}

/* A subcommand's parse result: its exit status (--help, a usage error), or -1 to go on. */
static int parsed(enum options_result r, const char *err)
{
	switch (r) {
	case OPTIONS_EXIT_OK:
		return 0;
	case OPTIONS_ERROR:
		return usage_error(err);
	case OPTIONS_OK:
		break;
	}
	return -1;
}

static int agent_cmd(int argc, char **argv)
{
	struct agent_options opt;
	char err[OPTIONS_ERR_MAX];
	int rc = parsed(options_parse_agent(&opt, argc, argv, err, sizeof(err)), err);

	if (rc >= 0)
		return rc;
	log_setup(opt.log_level, opt.log_format, 2);
	rc = agent_main(&opt);
	options_free(&opt);
	return rc;
}

static int drain_cmd(int argc, char **argv)
{
	struct agent_options opt;
	char err[OPTIONS_ERR_MAX];
	int rc = parsed(options_parse_drain(&opt, argc, argv, err, sizeof(err)), err);

	if (rc >= 0)
		return rc;
	log_setup(opt.log_level, opt.log_format, 2);
	rc = drain_main(&opt);
	options_free(&opt);
	return rc;
}

static int run_cmd(int argc, char **argv)
{
	struct run_options opt;
	char err[OPTIONS_ERR_MAX];
	int rc = parsed(options_parse_run(&opt, argc, argv, err, sizeof(err)), err);

	if (rc >= 0)
		return rc;
	log_setup(opt.log_level, opt.log_format, 2);
	rc = opt.drain ? wrap_main(&opt) : run_main(&opt);
	options_free_run(&opt);
	return rc;
}

static int sidecar_cmd(int argc, char **argv)
{
	struct sidecar_options opt;
	char err[OPTIONS_ERR_MAX];
	int rc = parsed(options_parse_sidecar(&opt, argc, argv, err, sizeof(err)), err);

	if (rc >= 0)
		return rc;
	log_setup(opt.log_level, opt.log_format, 2);
	rc = sidecar_main(&opt);
	options_free_sidecar(&opt);
	return rc;
}

static int wait_cmd(int argc, char **argv)
{
	struct wait_options opt;
	char err[OPTIONS_ERR_MAX];
	int rc = parsed(options_parse_wait(&opt, argc, argv, err, sizeof(err)), err);

	if (rc >= 0)
		return rc;
	log_setup(LOG_INFO, LOG_TEXT, 2);
	rc = await_main(&opt);
	options_free_wait(&opt);
	return rc;
}

static int install_cmd(int argc, char **argv)
{
	char err[OPTIONS_ERR_MAX];
	const char *dir = NULL;
	size_t size = 0;
	int rc;

	rc = parsed(options_parse_install(&dir, argc, argv, err, sizeof(err)), err);
	if (rc >= 0)
		return rc;
	rc = install_binary(dir, &size);
	if (rc < 0) {
		snprintf(err, sizeof(err), "install: cannot install into %.256s: %s", dir, strerror(-rc));
		return usage_error(err);
	}
	printf("installed %s/%s (%zu bytes)\n", dir, INSTALL_NAME, size);
	return 0;
}

static int inject_cmd(int argc, char **argv)
{
	struct inject_cli opt;
	char err[OPTIONS_ERR_MAX];
	int rc = parsed(options_parse_inject(&opt, argc, argv, err, sizeof(err)), err);

	return rc >= 0 ? rc : inject_main(&opt);
}

static int explain_cmd(int argc, char **argv)
{
	struct explain_cli opt;
	char err[OPTIONS_ERR_MAX];
	int rc = parsed(options_parse_explain(&opt, argc, argv, err, sizeof(err)), err);

	return rc >= 0 ? rc : explain_main(&opt);
}

/* rearguard webhook: only where the build has libmicrohttpd and GnuTLS (not the static agent's). */
static int webhook_cmd(int argc, char **argv)
{
#if HAVE_WEBHOOK
	struct webhook_options opt;
	char err[OPTIONS_ERR_MAX];
	int rc = parsed(options_parse_webhook(&opt, argc, argv, err, sizeof(err)), err);

	if (rc >= 0)
		return rc;
	log_setup(opt.log_level, opt.log_format, 2);
	return webhook_serve(&opt);
#else
	(void)argc;
	(void)argv;
	return usage_error("webhook: this build has no webhook (it was built without libmicrohttpd and GnuTLS)");
#endif
}

static int version_cmd(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	options_print_version();
	return 0;
}

static int help_cmd(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	options_print_help();
	return 0;
}

/* rearguard presets: the table of known sidecars, for tools/presets and for a user's eyes. */
static int presets_cmd(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("Usage: rearguard presets\n"
		       "Prints the table of known sidecars, one JSON object a line, in its order.\n");
		return 0;
	}
	if (argc > 1)
		return usage_error("presets: takes no arguments");
	if (options_print_presets() < 0 || fflush(stdout) != 0) {
		fprintf(stderr, "rearguard: presets: cannot write the table\n");
		return 1;
	}
	return 0;
}

/*
 * Run as kubectl-rearguard (kubectl's plugin: `kubectl rearguard explain`),
 * it is the same program, but the agent is no default there: a user's
 * kubectl never starts it.
 */
static int plugin_cmd(const char *cmd)
{
	if (!cmd || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		fprintf(cmd ? stdout : stderr, "Usage: kubectl rearguard explain [OPTIONS] [FILE|-]...\n"
		       "       kubectl rearguard inject [OPTIONS] [FILE|DIR|-]...\n"
		       "       kubectl rearguard presets | version\n"
		       "\n"
		       "rearguard's commands for a person at kubectl; kubectl rearguard explain --help\n"
		       "says what explain reads and prints.\n");
		return cmd ? 0 : 2;
	}
	return usage_error("the kubectl plugin runs commands, not the agent (kubectl rearguard explain --help)");
}

/* The subcommands, each given its own name as argv[0]. */
static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "agent", agent_cmd },
	{ "drain", drain_cmd },
	{ "run", run_cmd },
	{ "sidecar", sidecar_cmd },
	{ "wait", wait_cmd },
	{ "install", install_cmd },
	{ "inject", inject_cmd },
	{ "webhook", webhook_cmd },
	{ "explain", explain_cmd },
	{ "presets", presets_cmd },
	{ "version", version_cmd },
	{ "help", help_cmd },
};

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	char msg[256];
	size_t i;

	if (argc > 0 && strcmp(base_name(argv[0]), "kubectl-rearguard") == 0 &&
	    (!cmd || cmd[0] == '-' || strcmp(cmd, "agent") == 0))
		return plugin_cmd(cmd);
	if (!cmd || cmd[0] == '-')
		return agent_cmd(argc, argv);
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(cmd, commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	snprintf(msg, sizeof(msg),
		 "unknown command '%.64s' (commands: agent, run, sidecar, wait, drain, install, inject, webhook, "
		 "explain, presets, version)", cmd);
	return usage_error(msg);
}
