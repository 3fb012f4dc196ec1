/*
 * rearguard: native-sidecar behaviour for pods that cannot have it.
 *
 * main() picks the subcommand, parses its options (every error is one line
 * and exit 2), sets up logging and hands over. The agent is the default.
 */
#include "config.h"

#include "agent.h"
#include "log.h"
#include "options.h"

#include <stdio.h>
#include <string.h>

static const char *const later[] = { "run", "wait", "install" };

static int usage_error(const char *msg)
{
	fprintf(stderr, "rearguard: %s\n", msg);
	return 2;
}

static int agent_main(int argc, char **argv)
{
	struct agent_options opt;
	char err[OPTIONS_ERR_MAX];
	int rc;

	switch (options_parse_agent(&opt, argc, argv, err, sizeof(err))) {
	case OPTIONS_EXIT_OK:
		return 0;
	case OPTIONS_ERROR:
		return usage_error(err);
	case OPTIONS_OK:
		break;
	}
	log_setup(opt.log_level, opt.log_format, 2);
	rc = agent_run(&opt);
	options_free(&opt);
	return rc;
}

static int drain_main(int argc, char **argv)
{
	struct agent_options opt;
	char err[OPTIONS_ERR_MAX];
	int rc;

	switch (options_parse_drain(&opt, argc, argv, err, sizeof(err))) {
	case OPTIONS_EXIT_OK:
		return 0;
	case OPTIONS_ERROR:
		return usage_error(err);
	case OPTIONS_OK:
		break;
	}
	log_setup(opt.log_level, opt.log_format, 2);
	rc = agent_drain(&opt);
	options_free(&opt);
	return rc;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	char msg[256];
	size_t i;

	if (!cmd || cmd[0] == '-')
		return agent_main(argc, argv);
	if (strcmp(cmd, "agent") == 0)
		return agent_main(argc - 1, argv + 1);
	if (strcmp(cmd, "drain") == 0)
		return drain_main(argc - 1, argv + 1);
	if (strcmp(cmd, "version") == 0) {
		options_print_version();
		return 0;
	}
	if (strcmp(cmd, "help") == 0) {
		options_print_help();
		return 0;
	}
	for (i = 0; i < sizeof(later) / sizeof(later[0]); i++) {
		if (strcmp(cmd, later[i]) == 0) {
			snprintf(msg, sizeof(msg), "'%s' is not implemented in this version (see rearguard --help)", cmd);
			return usage_error(msg);
		}
	}
	snprintf(msg, sizeof(msg), "unknown command '%.64s' (commands: agent, run, wait, drain, install, version)", cmd);
	return usage_error(msg);
}
