/*
 * The agent's configuration: command-line options and their REARGUARD_*
 * environment twins (the flag wins), checked once before anything runs.
 * Every bad value gives one line naming the option or variable.
 */
#ifndef RG_OPTIONS_H
#define RG_OPTIONS_H

#include "decide.h"
#include "log.h"
#include "spec.h"

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OPTIONS_ERR_MAX 640

struct agent_options {
	struct sidecar_spec *sidecars;
	size_t nsidecars;
	char *app_src; /* --app, or NULL */
	regex_t app_re;
	unsigned long apps; /* --apps, 0: not given */
	char *dir;
	enum restart_policy policy;
	int64_t startup_timeout_ms, ready_timeout_ms, stop_timeout_ms, kill_after_ms;
	int64_t term_grace_ms, restart_grace_ms;
	char *termination_log;
	enum log_format log_format;
	enum log_level log_level;
};

enum options_result {
	OPTIONS_OK,
	OPTIONS_EXIT_OK, /* --help or --version was printed */
	OPTIONS_ERROR,   /* err holds one line */
};

/* argv[0] is skipped (the program or the subcommand's name). */
enum options_result options_parse_agent(struct agent_options *cfg, int argc, char **argv, char *err, size_t errlen);
/*
 * rearguard drain: --sidecar, --stop-timeout, --kill-after, --log-format, -v, -q
 * and their variables; the agent's other variables are ignored (drain may be
 * exec'd in the agent's container). dir and termination_log stay NULL.
 */
enum options_result options_parse_drain(struct agent_options *cfg, int argc, char **argv, char *err, size_t errlen);
void options_free(struct agent_options *cfg);

/* Shared with the other subcommands: values of durations and log options. */
int options_duration(const char *what, const char *value, int64_t *ms, char *err, size_t errlen);

void options_print_help(void);
void options_print_version(void);

#endif
