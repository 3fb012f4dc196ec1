#include "config.h"

#include "options.h"

#include "json.h"
#include "parse.h"
#include "presets.h"
#include "protocol.h"
#include "sys.h"
#include "util.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <ev.h>
#include <getopt.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum {
	OPT_SIDECAR = 's',
	OPT_DIR = 'd',
	OPT_VERBOSE = 'v',
	OPT_QUIET = 'q',
	OPT_HELP = 'h',
	OPT_APP = 256,
	OPT_APPS,
	OPT_RESTART_POLICY,
	OPT_STARTUP_TIMEOUT,
	OPT_SIDECAR_WAIT,
	OPT_READY_TIMEOUT,
	OPT_STOP_TIMEOUT,
	OPT_KILL_AFTER,
	OPT_TERM_GRACE,
	OPT_RESTART_GRACE,
	OPT_TERMINATION_LOG,
	OPT_LOG_FORMAT,
	OPT_VERSION,
	OPT_NAME,
	OPT_TIMEOUT,
	OPT_NO_WAIT,
	OPT_DRAIN,
	OPT_ON_SIDECAR_EXIT,
	OPT_FIRST,
	OPT_IMAGE,
	OPT_MESH,
	OPT_GATE,
	OPT_SERVICES,
	OPT_SIGNAL_AS_ROOT,
	OPT_NAMED, /* inject's and the webhook's --sidecar CONTAINER[=SPEC], not the agent's */
	OPT_LISTEN,
	OPT_PROBE_LISTEN,
	OPT_SHUTDOWN_DELAY,
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_OUTPUT = 'o',
	OPT_ALL = 512,
	OPT_AUDIT,
	OPT_NOW,
	OPT_STOP_SIGNAL,
};

/* Which commands take an option. */
#define FOR_AGENT 1u
#define FOR_DRAIN 2u
#define FOR_RUN 4u
#define FOR_WAIT 8u
#define FOR_INSTALL 16u
#define FOR_INJECT 32u
#define FOR_WEBHOOK 64u
#define FOR_EXPLAIN 128u
#define FOR_SIDECAR 256u
#define FOR_ALL (FOR_AGENT | FOR_DRAIN | FOR_RUN | FOR_WAIT | FOR_INSTALL | FOR_INJECT | FOR_WEBHOOK | FOR_EXPLAIN | FOR_SIDECAR)

struct opt_def {
	const char *name;
	int id;
	int has_arg;
	const char *env; /* the environment twin, NULL: none */
	unsigned cmds;   /* FOR_* */
};

/* Every option of every command, once. */
static const struct opt_def opts[] = {
	{ "sidecar", OPT_SIDECAR, required_argument, "REARGUARD_SIDECARS", FOR_AGENT | FOR_DRAIN | FOR_RUN },
	{ "app", OPT_APP, required_argument, "REARGUARD_APP", FOR_AGENT },
	{ "apps", OPT_APPS, required_argument, "REARGUARD_APPS", FOR_AGENT },
	{ "dir", OPT_DIR, required_argument, "REARGUARD_DIR", FOR_AGENT | FOR_RUN | FOR_WAIT | FOR_SIDECAR },
	{ "restart-policy", OPT_RESTART_POLICY, required_argument, "REARGUARD_RESTART_POLICY", FOR_AGENT },
	{ "startup-timeout", OPT_STARTUP_TIMEOUT, required_argument, "REARGUARD_STARTUP_TIMEOUT", FOR_AGENT },
	{ "sidecar-wait", OPT_SIDECAR_WAIT, required_argument, "REARGUARD_SIDECAR_WAIT", FOR_AGENT },
	{ "ready-timeout", OPT_READY_TIMEOUT, required_argument, "REARGUARD_READY_TIMEOUT", FOR_AGENT },
	{ "stop-timeout", OPT_STOP_TIMEOUT, required_argument, "REARGUARD_STOP_TIMEOUT",
	  FOR_AGENT | FOR_DRAIN | FOR_RUN | FOR_SIDECAR },
	{ "kill-after", OPT_KILL_AFTER, required_argument, "REARGUARD_KILL_AFTER", FOR_AGENT | FOR_DRAIN | FOR_RUN },
	{ "term-grace", OPT_TERM_GRACE, required_argument, "REARGUARD_TERM_GRACE", FOR_AGENT },
	{ "restart-grace", OPT_RESTART_GRACE, required_argument, "REARGUARD_RESTART_GRACE", FOR_AGENT },
	{ "on-sidecar-exit", OPT_ON_SIDECAR_EXIT, required_argument, "REARGUARD_ON_SIDECAR_EXIT", FOR_AGENT },
	{ "first", OPT_FIRST, no_argument, "REARGUARD_FIRST", FOR_AGENT },
	{ "termination-log", OPT_TERMINATION_LOG, required_argument, "REARGUARD_TERMINATION_LOG", FOR_AGENT },
	{ "name", OPT_NAME, required_argument, "REARGUARD_NAME", FOR_RUN | FOR_SIDECAR },
	{ "stop-signal", OPT_STOP_SIGNAL, required_argument, "REARGUARD_STOP_SIGNAL", FOR_SIDECAR },
	{ "timeout", OPT_TIMEOUT, required_argument, "REARGUARD_TIMEOUT", FOR_RUN | FOR_WAIT },
	{ "no-wait", OPT_NO_WAIT, no_argument, "REARGUARD_NO_WAIT", FOR_RUN },
	{ "drain", OPT_DRAIN, no_argument, "REARGUARD_DRAIN", FOR_RUN },
	/* inject's --sidecar has no environment twin: REARGUARD_SIDECARS is the agent's list of specs. */
	{ "sidecar", OPT_NAMED, required_argument, NULL, FOR_INJECT | FOR_WEBHOOK | FOR_EXPLAIN },
	{ "image", OPT_IMAGE, required_argument, "REARGUARD_IMAGE", FOR_INJECT | FOR_WEBHOOK },
	{ "mesh", OPT_MESH, required_argument, "REARGUARD_MESH", FOR_INJECT | FOR_WEBHOOK | FOR_EXPLAIN },
	{ "gate", OPT_GATE, no_argument, "REARGUARD_GATE", FOR_INJECT | FOR_WEBHOOK },
	{ "services", OPT_SERVICES, no_argument, "REARGUARD_SERVICES", FOR_INJECT },
	{ "signal-as-root", OPT_SIGNAL_AS_ROOT, no_argument, "REARGUARD_SIGNAL_AS_ROOT", FOR_INJECT | FOR_WEBHOOK },
	{ "listen", OPT_LISTEN, required_argument, "REARGUARD_LISTEN", FOR_WEBHOOK },
	{ "probe-listen", OPT_PROBE_LISTEN, required_argument, "REARGUARD_PROBE_LISTEN", FOR_WEBHOOK },
	{ "shutdown-delay", OPT_SHUTDOWN_DELAY, required_argument, "REARGUARD_SHUTDOWN_DELAY", FOR_WEBHOOK },
	{ "tls-cert", OPT_TLS_CERT, required_argument, "REARGUARD_TLS_CERT", FOR_WEBHOOK },
	{ "tls-key", OPT_TLS_KEY, required_argument, "REARGUARD_TLS_KEY", FOR_WEBHOOK },
	/* explain's own: what it prints, and the time it judges at. */
	{ "output", OPT_OUTPUT, required_argument, NULL, FOR_EXPLAIN },
	{ "all", OPT_ALL, no_argument, NULL, FOR_EXPLAIN },
	{ "audit", OPT_AUDIT, no_argument, NULL, FOR_EXPLAIN },
	{ "now", OPT_NOW, required_argument, NULL, FOR_EXPLAIN },
	{ "log-format", OPT_LOG_FORMAT, required_argument, "REARGUARD_LOG_FORMAT",
	  FOR_AGENT | FOR_DRAIN | FOR_RUN | FOR_WEBHOOK | FOR_SIDECAR },
	{ "verbose", OPT_VERBOSE, no_argument, "REARGUARD_VERBOSE", FOR_AGENT | FOR_DRAIN | FOR_RUN | FOR_WEBHOOK | FOR_SIDECAR },
	{ "quiet", OPT_QUIET, no_argument, "REARGUARD_QUIET",
	  FOR_AGENT | FOR_DRAIN | FOR_RUN | FOR_INJECT | FOR_WEBHOOK | FOR_SIDECAR },
	{ "help", OPT_HELP, no_argument, NULL, FOR_ALL },
	{ "version", OPT_VERSION, no_argument, NULL, FOR_AGENT },
};

/* How each command reads its options, and how its errors read. */
struct command {
	unsigned bit;
	const char *prefix; /* before each error: "run: " */
	const char *hint;   /* after an unknown option */
	bool in_order;      /* options end at the first operand (run: CMD's own options follow) */
	void (*help)(void); /* what --help prints; NULL: the agent's help, which covers the others */
};

static const struct command agent_cmd = { FOR_AGENT, "", "see rearguard --help", false, NULL };
static const struct command drain_cmd = { FOR_DRAIN, "",
					  "rearguard drain takes --sidecar, --stop-timeout, --kill-after, "
					  "--log-format, --verbose, --quiet",
					  false, NULL };
static const struct command run_cmd = { FOR_RUN, "run: ", "see rearguard --help", true, NULL };
static const struct command sidecar_cmd = { FOR_SIDECAR, "sidecar: ", "see rearguard --help", true, NULL };
static const struct command wait_cmd = { FOR_WAIT, "wait: ", "see rearguard --help", false, NULL };
static const struct command install_cmd = { FOR_INSTALL, "install: ", "see rearguard --help", false, NULL };
static const struct command inject_cmd = { FOR_INJECT, "inject: ", "see rearguard inject --help", false,
					   options_print_inject_help };
static const struct command webhook_cmd = { FOR_WEBHOOK, "webhook: ", "see rearguard webhook --help", false,
					    options_print_webhook_help };
static const struct command explain_cmd = { FOR_EXPLAIN, "explain: ", "see rearguard explain --help", false,
					    options_print_explain_help };

int options_duration(const char *what, const char *value, int64_t *ms, char *err, size_t errlen)
{
	int rc = parse_duration_ms(value, ms);

	if (rc == -ERANGE)
		return failf(err, errlen, -EINVAL, "%s: duration \"%s\" is too long (at most 720h)", what, value);
	if (rc < 0)
		return failf(err, errlen, -EINVAL, "%s: invalid duration \"%s\" (examples: 250ms, 30s, 5m, 1h)", what, value);
	return 0;
}

static int add_sidecar(struct agent_options *cfg, const char *text, char *err, size_t errlen)
{
	struct sidecar_spec *grown, spec;
	size_t i;

	/* auto: detection of the known sidecars, besides the specs given. */
	if (strcmp(text, "auto") == 0) {
		cfg->detect = true;
		return 0;
	}
	if (spec_parse(text, &spec, err, errlen) < 0)
		return -EINVAL;
	for (i = 0; i < cfg->nsidecars; i++) {
		if (strcmp(cfg->sidecars[i].name, spec.name) == 0) {
			failf(err, errlen, -EINVAL, "sidecar spec \"%s\": name \"%s\" is used twice (give each name=...)", text,
			      spec.name);
			spec_free(&spec);
			return -EINVAL;
		}
	}
	grown = realloc(cfg->sidecars, (cfg->nsidecars + 1) * sizeof(*grown));
	if (!grown) {
		spec_free(&spec);
		return failf(err, errlen, -EINVAL, "out of memory");
	}
	cfg->sidecars = grown;
	cfg->sidecars[cfg->nsidecars++] = spec;
	return 0;
}

static void clear_sidecars(struct agent_options *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nsidecars; i++)
		spec_free(&cfg->sidecars[i]);
	free(cfg->sidecars);
	cfg->sidecars = NULL;
	cfg->nsidecars = 0;
	cfg->detect = false;
}

/*
 * Detection: every preset not given explicitly is a sidecar to look for,
 * after the explicit ones (which win: their names and presets are not
 * looked for twice).
 */
static int add_detected(struct agent_options *cfg, char *err, size_t errlen)
{
	size_t i, j, given = cfg->nsidecars;

	for (i = 0; i < spec_npresets; i++) {
		const char *name = spec_presets[i].name;
		bool taken = false;

		for (j = 0; j < given; j++)
			taken |= strcmp(cfg->sidecars[j].name, name) == 0 ||
				 (cfg->sidecars[j].preset && strcmp(cfg->sidecars[j].preset, name) == 0);
		if (taken)
			continue;
		if (add_sidecar(cfg, name, err, errlen) < 0)
			return -EINVAL;
		cfg->sidecars[cfg->nsidecars - 1].detected = true;
	}
	return 0;
}

static int set_string(char **slot, const char *value, const char *what, char *err, size_t errlen)
{
	if (*value == '\0')
		return failf(err, errlen, -EINVAL, "%s: needs a value", what);
	free(*slot);
	*slot = strdup(value);
	return *slot ? 0 : failf(err, errlen, -EINVAL, "out of memory");
}

/* A flag: set on the command line; true or false from the environment. */
static int set_flag(bool *slot, const char *value, const char *what, bool from_env, char *err, size_t errlen)
{
	if (!from_env) {
		*slot = true;
		return 0;
	}
	if (parse_bool(value, slot) < 0)
		return failf(err, errlen, -EINVAL, "%s: \"%s\" is not a boolean (true or false)", what, value);
	return 0;
}

/* --log-format, --verbose and --quiet, which every long-running command takes. */
static int apply_log(enum log_format *format, enum log_level *level, int id, const char *value, const char *what,
		     bool from_env, char *err, size_t errlen)
{
	bool flag = true;

	if (id == OPT_LOG_FORMAT) {
		if (strcmp(value, "text") == 0)
			*format = LOG_TEXT;
		else if (strcmp(value, "json") == 0)
			*format = LOG_JSON;
		else
			return failf(err, errlen, -EINVAL, "%s: \"%s\" is not text or json", what, value);
		return 0;
	}
	if (set_flag(&flag, value, what, from_env, err, errlen) < 0)
		return -EINVAL;
	if (flag)
		*level = id == OPT_VERBOSE ? LOG_DEBUG : LOG_WARN;
	return 0;
}

/* Applies one option; what is "--name" or the environment variable it came from. */
static int apply(struct agent_options *cfg, int id, const char *value, const char *what, bool from_env, char *err,
		 size_t errlen)
{
	char rerr[256];

	switch (id) {
	case OPT_SIDECAR:
		if (!from_env)
			return add_sidecar(cfg, value, err, errlen);
		/* REARGUARD_SIDECARS holds several specs separated by ';'. */
		{
			char *copy = strdup(value), *save = NULL, *one;
			int rc = 0;

			if (!copy)
				return failf(err, errlen, -EINVAL, "out of memory");
			for (one = strtok_r(copy, ";", &save); one && rc == 0; one = strtok_r(NULL, ";", &save)) {
				char *end;

				while (*one == ' ' || *one == '\n' || *one == '\t')
					one++;
				for (end = one + strlen(one); end > one && (end[-1] == ' ' || end[-1] == '\n'); end--)
					end[-1] = '\0';
				if (*one)
					rc = add_sidecar(cfg, one, err, errlen);
			}
			free(copy);
			if (rc < 0) {
				char inner[OPTIONS_ERR_MAX];

				str_copy(inner, err, sizeof(inner));
				snprintf(err, errlen, "%s: %s", what, inner);
			}
			return rc;
		}
	case OPT_APP:
		if (cfg->app_src) {
			regfree(&cfg->app_re);
			free(cfg->app_src);
			cfg->app_src = NULL;
		}
		if (*value == '\0')
			return failf(err, errlen, -EINVAL, "%s: needs a regex", what);
		if (regex_compile_whole(&cfg->app_re, value, rerr, sizeof(rerr)) < 0)
			return failf(err, errlen, -EINVAL, "%s: invalid regex \"%s\": %s", what, value, rerr);
		cfg->app_src = strdup(value);
		if (!cfg->app_src) {
			regfree(&cfg->app_re);
			return failf(err, errlen, -EINVAL, "out of memory");
		}
		return 0;
	case OPT_APPS:
		if (parse_uint(value, 1, 1000, &cfg->apps) < 0)
			return failf(err, errlen, -EINVAL, "%s: \"%s\" is not a number of app containers from 1 to 1000", what, value);
		return 0;
	case OPT_DIR:
		return set_string(&cfg->dir, value, what, err, errlen);
	case OPT_RESTART_POLICY:
		if (decide_policy_parse(value, &cfg->policy) < 0)
			return failf(err, errlen, -EINVAL, "%s: \"%s\" is not Never, OnFailure or Always (the pod's restartPolicy)",
				     what, value);
		return 0;
	case OPT_STARTUP_TIMEOUT:
		return options_duration(what, value, &cfg->startup_timeout_ms, err, errlen);
	case OPT_SIDECAR_WAIT:
		return options_duration(what, value, &cfg->sidecar_wait_ms, err, errlen);
	case OPT_READY_TIMEOUT:
		return options_duration(what, value, &cfg->ready_timeout_ms, err, errlen);
	case OPT_STOP_TIMEOUT:
		return options_duration(what, value, &cfg->stop_timeout_ms, err, errlen);
	case OPT_KILL_AFTER:
		return options_duration(what, value, &cfg->kill_after_ms, err, errlen);
	case OPT_TERM_GRACE:
		return options_duration(what, value, &cfg->term_grace_ms, err, errlen);
	case OPT_RESTART_GRACE:
		return options_duration(what, value, &cfg->restart_grace_ms, err, errlen);
	case OPT_TERMINATION_LOG:
		return set_string(&cfg->termination_log, value, what, err, errlen);
	case OPT_FIRST:
		return set_flag(&cfg->first, value, what, from_env, err, errlen);
	case OPT_ON_SIDECAR_EXIT:
		if (strcmp(value, "warn") == 0)
			cfg->on_sidecar_exit = SIDECAR_EXIT_WARN;
		else if (strcmp(value, "fail") == 0)
			cfg->on_sidecar_exit = SIDECAR_EXIT_FAIL;
		else
			return failf(err, errlen, -EINVAL, "%s: \"%s\" is not warn or fail", what, value);
		return 0;
	case OPT_LOG_FORMAT:
	case OPT_VERBOSE:
	case OPT_QUIET:
		return apply_log(&cfg->log_format, &cfg->log_level, id, value, what, from_env, err, errlen);
	}
	return failf(err, errlen, -EINVAL, "internal error: option %d", id);
}

/* A default duration from defaults.h: written there as a user writes one, and checked by the tests. */
static int64_t default_ms(const char *text)
{
	int64_t ms = 0;

	if (parse_duration_ms(text, &ms) < 0)
		abort();
	return ms;
}

static void defaults(struct agent_options *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->policy = POLICY_NEVER;
	cfg->startup_timeout_ms = default_ms(DEFAULT_STARTUP_TIMEOUT);
	cfg->sidecar_wait_ms = default_ms(DEFAULT_SIDECAR_WAIT);
	cfg->ready_timeout_ms = default_ms(DEFAULT_READY_TIMEOUT);
	cfg->stop_timeout_ms = default_ms(DEFAULT_STOP_TIMEOUT);
	cfg->kill_after_ms = default_ms(DEFAULT_KILL_AFTER);
	cfg->term_grace_ms = default_ms(DEFAULT_TERM_GRACE);
	cfg->restart_grace_ms = default_ms(DEFAULT_RESTART_GRACE);
	cfg->log_format = LOG_TEXT;
	cfg->log_level = LOG_INFO;
	cfg->run_name = options_run_name;
	cfg->sidecar_name = options_sidecar_name;
}

/* The shared volume's mount point unless --dir or REARGUARD_DIR named one. */
static int default_dir(char **dir)
{
	if (!*dir && !(*dir = strdup(DEFAULT_DIR)))
		return -ENOMEM;
	return 0;
}

typedef int opt_apply(void *o, int id, const char *value, const char *what, bool from_env, char *err,
		      size_t errlen);

/*
 * The one option driver: a command's options from the environment first,
 * then from the flags, which win. foreign: another process's command line
 * (no environment, no --help). Returns the index of the first operand, -1
 * with err set, or -2 after --help or --version was printed.
 */
static int drive(const struct command *cmd, bool foreign, opt_apply *set, void *o, int argc, char **argv, char *err,
		 size_t errlen)
{
	struct option longopts[ARRAY_SIZE(opts) + 1];
	char shortopts[32], what[64];
	size_t i, n = 0, k = 0;
	int c;

	for (i = 0; i < ARRAY_SIZE(opts); i++) {
		const char *v = opts[i].env && !foreign && (opts[i].cmds & cmd->bit) ? getenv(opts[i].env) : NULL;

		/* An empty variable counts as unset (a ConfigMap key left blank). */
		if (v && *v && set(o, opts[i].id, v, opts[i].env, true, err, errlen) < 0)
			return -1;
	}
	memset(longopts, 0, sizeof(longopts));
	if (cmd->in_order)
		shortopts[k++] = '+';
	shortopts[k++] = ':';
	for (i = 0; i < ARRAY_SIZE(opts); i++) {
		if (!(opts[i].cmds & cmd->bit))
			continue;
		longopts[n].name = opts[i].name;
		longopts[n].has_arg = opts[i].has_arg;
		longopts[n].val = opts[i].id;
		n++;
		if (opts[i].id < 256 && k + 3 < sizeof(shortopts)) {
			shortopts[k++] = (char)opts[i].id;
			if (opts[i].has_arg == required_argument)
				shortopts[k++] = ':';
		}
	}
	shortopts[k] = '\0';
	/*
	 * 0, not 1: getopt starts afresh, reading the ordering ('+') again and
	 * forgetting a scan that stopped inside "-Zq" (which would go on with q).
	 */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const char *name = "?";

		for (i = 0; i < ARRAY_SIZE(opts); i++)
			if (opts[i].id == c)
				name = opts[i].name;
		switch (c) {
		case OPT_HELP:
		case OPT_VERSION:
			if (foreign) {
				failf(err, errlen, -EINVAL, "%s%s", cmd->prefix, argv[optind - 1]);
				return -1;
			}
			if (c == OPT_HELP && cmd->help)
				cmd->help();
			else if (c == OPT_HELP)
				options_print_help();
			else
				options_print_version();
			return -2;
		case '?':
			if (optopt)
				failf(err, errlen, -EINVAL, "%sunknown option -%c (%s)", cmd->prefix, optopt, cmd->hint);
			else
				failf(err, errlen, -EINVAL, "%sunknown option %s (%s)", cmd->prefix, argv[optind - 1], cmd->hint);
			return -1;
		case ':':
			/* glibc leaves optind after the option; musl one past the end when it was last. */
			failf(err, errlen, -EINVAL, "%soption %s needs a value", cmd->prefix,
			      argv[optind - 1 < argc ? optind - 1 : argc - 1]);
			return -1;
		default:
			snprintf(what, sizeof(what), "--%s", name);
			if (set(o, c, optarg ? optarg : "", what, false, err, errlen) < 0)
				return -1;
		}
	}
	return optind;
}

static enum options_result result_of(int rc)
{
	return rc == -2 ? OPTIONS_EXIT_OK : OPTIONS_ERROR;
}

/* The agent's options (and drain's, a few of them). */
struct agent_parse {
	struct agent_options *cfg;
	bool sidecar_flag_seen;
};

static int apply_agent(void *p, int id, const char *value, const char *what, bool from_env, char *err, size_t errlen)
{
	struct agent_parse *ap = p;

	/* Flags replace the environment's list of sidecars rather than adding to it. */
	if (id == OPT_SIDECAR && !from_env && !ap->sidecar_flag_seen) {
		clear_sidecars(ap->cfg);
		ap->sidecar_flag_seen = true;
	}
	return apply(ap->cfg, id, value, what, from_env, err, errlen);
}

static enum options_result parse(struct agent_options *cfg, int argc, char **argv, bool drain, char *err,
				 size_t errlen)
{
	struct agent_parse ap = { .cfg = cfg };
	int first;

	defaults(cfg);
	first = drive(drain ? &drain_cmd : &agent_cmd, false, apply_agent, &ap, argc, argv, err, errlen);
	if (first < 0) {
		options_free(cfg);
		return result_of(first);
	}
	if (first < argc) {
		failf(err, errlen, -EINVAL, "unexpected argument \"%s\" (%s takes options only; see rearguard --help)",
		      argv[first], drain ? "rearguard drain" : "the agent");
		goto fail;
	}
	/* Zero-config: without a spec, the known sidecars are detected. */
	if (cfg->nsidecars == 0)
		cfg->detect = true;
	if (cfg->detect && add_detected(cfg, err, errlen) < 0)
		goto fail;
	/* A drain writes no files: the termination message is the container's it runs in. */
	if (drain)
		return OPTIONS_OK;
	if (default_dir(&cfg->dir) < 0)
		goto oom;
	if (!cfg->termination_log && !(cfg->termination_log = strdup(DEFAULT_TERMINATION_LOG)))
		goto oom;
	return OPTIONS_OK;
oom:
	failf(err, errlen, -EINVAL, "out of memory");
fail:
	options_free(cfg);
	return OPTIONS_ERROR;
}

enum options_result options_parse_agent(struct agent_options *cfg, int argc, char **argv, char *err, size_t errlen)
{
	return parse(cfg, argc, argv, false, err, errlen);
}

enum options_result options_parse_drain(struct agent_options *cfg, int argc, char **argv, char *err, size_t errlen)
{
	return parse(cfg, argc, argv, true, err, errlen);
}

void options_free(struct agent_options *cfg)
{
	clear_sidecars(cfg);
	if (cfg->app_src)
		regfree(&cfg->app_re);
	free(cfg->app_src);
	free(cfg->dir);
	free(cfg->termination_log);
	memset(cfg, 0, sizeof(*cfg));
}

/* ---- run, wait, install --------------------------------------------------- */

static int apply_name(char **slot, const char *value, const char *what, char *err, size_t errlen)
{
	if (!protocol_name_ok(value))
		return failf(err, errlen, -EINVAL,
			     "%s: \"%s\" cannot name a report (1 to 63 printable characters, no '/', no leading '.')",
			     what, value);
	return set_string(slot, value, what, err, errlen);
}

/*
 * run's and sidecar's --name, else the basename of their command (what
 * names a report or a sidecar's files), and --dir's default. what: "run:
 * the command"; names: what the name is for.
 */
static int name_and_dir(char **name, char **dir, const char *cmd, const char *what, const char *names, char *err,
			size_t errlen)
{
	if (!*name && apply_name(name, base_name(cmd), what, err, errlen) < 0)
		return failf(err, errlen, -EINVAL, "%s \"%s\" cannot name %s: give --name NAME", what, cmd, names);
	if (default_dir(dir) < 0)
		return failf(err, errlen, -EINVAL, "out of memory");
	return 0;
}

static int apply_run(void *p, int id, const char *value, const char *what, bool from_env, char *err, size_t errlen)
{
	struct run_options *o = p;

	switch (id) {
	case OPT_NAME:
		return apply_name(&o->name, value, what, err, errlen);
	case OPT_DIR:
		return set_string(&o->dir, value, what, err, errlen);
	case OPT_TIMEOUT:
		return options_duration(what, value, &o->timeout_ms, err, errlen);
	case OPT_NO_WAIT:
		return set_flag(&o->no_wait, value, what, from_env, err, errlen);
	case OPT_DRAIN:
		return set_flag(&o->drain, value, what, from_env, err, errlen);
	case OPT_SIDECAR:
		/* As for the agent: flags replace the environment's list. */
		if (!from_env && !o->sidecar_flag_seen)
			clear_sidecars(&o->drain_opts);
		if (!from_env)
			o->sidecar_flag_seen = true;
		return apply(&o->drain_opts, id, value, what, from_env, err, errlen);
	case OPT_STOP_TIMEOUT:
	case OPT_KILL_AFTER:
		return apply(&o->drain_opts, id, value, what, from_env, err, errlen);
	default:
		return apply_log(&o->log_format, &o->log_level, id, value, what, from_env, err, errlen);
	}
}

static int apply_wait(void *p, int id, const char *value, const char *what, bool from_env, char *err, size_t errlen)
{
	struct wait_options *o = p;

	if (id == OPT_DIR)
		return set_string(&o->dir, value, what, err, errlen);
	return options_duration(what, value, &o->timeout_ms, err, errlen);
}

static int apply_none(void *p, int id, const char *value, const char *what, bool from_env, char *err, size_t errlen)
{
	return failf(err, errlen, -EINVAL, "internal error: option %d", id);
}

static enum options_result parse_run(struct run_options *o, bool foreign, int argc, char **argv, char *err,
				     size_t errlen)
{
	int first;

	memset(o, 0, sizeof(*o));
	o->timeout_ms = default_ms(DEFAULT_WAIT_TIMEOUT);
	o->log_format = LOG_TEXT;
	o->log_level = LOG_INFO;
	defaults(&o->drain_opts);
	first = drive(&run_cmd, foreign, apply_run, o, argc, argv, err, errlen);
	if (first < 0) {
		options_free_run(o);
		return result_of(first);
	}
	if (first >= argc) {
		failf(err, errlen, -EINVAL, "run: no command given (rearguard run [OPTIONS] -- CMD [ARG...])");
		goto fail;
	}
	o->cmd = argv + first;
	/*
	 * Another process's command line (foreign) is read for its name alone:
	 * its environment is not ours to see, so its option combination cannot
	 * be judged here.
	 */
	if (!foreign && o->drain && o->drain_opts.nsidecars == 0 && !o->drain_opts.detect) {
		failf(err, errlen, -EINVAL, "run: --drain needs the sidecars to stop: --sidecar SPEC (or auto) or REARGUARD_SIDECARS");
		goto fail;
	}
	if (!foreign && o->drain && o->drain_opts.detect && add_detected(&o->drain_opts, err, errlen) < 0)
		goto fail;
	/* REARGUARD_SIDECARS may be the agent's, in a shared ConfigMap: only a flag is a mistake. */
	if (!foreign && !o->drain && o->sidecar_flag_seen) {
		failf(err, errlen, -EINVAL, "run: --sidecar is for --drain (the sidecars run stops itself when no agent does)");
		goto fail;
	}
	if (name_and_dir(&o->name, &o->dir, o->cmd[0], "run: the command", "the report apps/NAME", err, errlen) < 0)
		goto fail;
	return OPTIONS_OK;
fail:
	options_free_run(o);
	return OPTIONS_ERROR;
}

enum options_result options_parse_run(struct run_options *o, int argc, char **argv, char *err, size_t errlen)
{
	return parse_run(o, false, argc, argv, err, errlen);
}

int options_run_name(int argc, char **argv, char *name, size_t len)
{
	char err[OPTIONS_ERR_MAX];
	struct run_options o;

	if (argc < 2 || strcmp(argv[1], "run") != 0 ||
	    parse_run(&o, true, argc - 1, argv + 1, err, sizeof(err)) != OPTIONS_OK)
		return -EINVAL;
	str_copy(name, o.name, len);
	options_free_run(&o);
	return 0;
}

void options_free_run(struct run_options *o)
{
	options_free(&o->drain_opts);
	free(o->name);
	free(o->dir);
	memset(o, 0, sizeof(*o));
}

static int apply_sidecar(void *p, int id, const char *value, const char *what, bool from_env, char *err,
			 size_t errlen)
{
	struct sidecar_options *o = p;
	int64_t ms;

	switch (id) {
	case OPT_NAME:
		return apply_name(&o->name, value, what, err, errlen);
	case OPT_DIR:
		return set_string(&o->dir, value, what, err, errlen);
	case OPT_STOP_SIGNAL:
		if (parse_signal(value, &o->stop_signal) < 0 || o->stop_signal == SIGKILL || o->stop_signal == SIGSTOP)
			return failf(err, errlen, -EINVAL, "%s: \"%s\" is not a signal that can stop a program (TERM, QUIT, INT, ...)",
				     what, value);
		return 0;
	case OPT_STOP_TIMEOUT:
		if (options_duration(what, value, &ms, err, errlen) < 0)
			return -EINVAL;
		o->stop_timeout_ms = ms;
		return 0;
	default:
		return apply_log(&o->log_format, &o->log_level, id, value, what, from_env, err, errlen);
	}
}

static enum options_result parse_sidecar(struct sidecar_options *o, bool foreign, int argc, char **argv, char *err,
					 size_t errlen)
{
	int first;

	memset(o, 0, sizeof(*o));
	o->stop_signal = SIGTERM;
	o->stop_timeout_ms = default_ms(DEFAULT_STOP_TIMEOUT);
	o->log_format = LOG_TEXT;
	o->log_level = LOG_INFO;
	first = drive(&sidecar_cmd, foreign, apply_sidecar, o, argc, argv, err, errlen);
	if (first < 0) {
		options_free_sidecar(o);
		return result_of(first);
	}
	if (first >= argc) {
		failf(err, errlen, -EINVAL, "sidecar: no program given (rearguard sidecar [OPTIONS] -- PROGRAM [ARG...])");
		goto fail;
	}
	o->cmd = argv + first;
	if (name_and_dir(&o->name, &o->dir, o->cmd[0], "sidecar: the program", "the sidecar", err, errlen) < 0)
		goto fail;
	return OPTIONS_OK;
fail:
	options_free_sidecar(o);
	return OPTIONS_ERROR;
}

enum options_result options_parse_sidecar(struct sidecar_options *o, int argc, char **argv, char *err, size_t errlen)
{
	return parse_sidecar(o, false, argc, argv, err, errlen);
}

int options_sidecar_name(int argc, char **argv, char *name, size_t len, int *program)
{
	char err[OPTIONS_ERR_MAX];
	struct sidecar_options o;

	if (argc < 2 || strncmp(base_name(argv[0]), "rearguard", 9) != 0 || strcmp(argv[1], "sidecar") != 0 ||
	    parse_sidecar(&o, true, argc - 1, argv + 1, err, sizeof(err)) != OPTIONS_OK)
		return -EINVAL;
	str_copy(name, o.name, len);
	*program = (int)(o.cmd - argv);
	options_free_sidecar(&o);
	return 0;
}

void options_free_sidecar(struct sidecar_options *o)
{
	free(o->name);
	free(o->dir);
	memset(o, 0, sizeof(*o));
}

enum options_result options_parse_wait(struct wait_options *o, int argc, char **argv, char *err, size_t errlen)
{
	static const char *const conditions[] = { "ready", "apps-done", "done", WAIT_STOPPED };
	size_t i;
	int first;

	memset(o, 0, sizeof(*o));
	o->timeout_ms = default_ms(DEFAULT_WAIT_TIMEOUT);
	first = drive(&wait_cmd, false, apply_wait, o, argc, argv, err, errlen);
	if (first < 0) {
		options_free_wait(o);
		return result_of(first);
	}
	if (first >= argc) {
		failf(err, errlen, -EINVAL, "wait: which condition? ready, apps-done, done or stopped");
		goto fail;
	}
	for (i = 0; i < ARRAY_SIZE(conditions); i++)
		if (strcmp(argv[first], conditions[i]) == 0)
			o->condition = conditions[i];
	if (!o->condition) {
		failf(err, errlen, -EINVAL, "wait: unknown condition \"%s\" (ready, apps-done, done or stopped)", argv[first]);
		goto fail;
	}
	if (first + 1 < argc) {
		failf(err, errlen, -EINVAL, "wait: unexpected argument \"%s\" (one condition at a time)", argv[first + 1]);
		goto fail;
	}
	if (default_dir(&o->dir) < 0) {
		failf(err, errlen, -EINVAL, "out of memory");
		goto fail;
	}
	return OPTIONS_OK;
fail:
	options_free_wait(o);
	return OPTIONS_ERROR;
}

void options_free_wait(struct wait_options *o)
{
	free(o->dir);
	memset(o, 0, sizeof(*o));
}

enum options_result options_parse_install(const char **dir, int argc, char **argv, char *err, size_t errlen)
{
	int first = drive(&install_cmd, false, apply_none, NULL, argc, argv, err, errlen);

	if (first < 0)
		return result_of(first);
	if (first >= argc) {
		failf(err, errlen, -EINVAL, "install: which directory? (rearguard install DIR)");
		return OPTIONS_ERROR;
	}
	if (first + 1 < argc) {
		failf(err, errlen, -EINVAL, "install: unexpected argument \"%s\" (one directory)", argv[first + 1]);
		return OPTIONS_ERROR;
	}
	*dir = argv[first];
	return OPTIONS_OK;
}

/* ---- inject and the webhook ------------------------------------------------ */

/*
 * The options inject and the webhook share, the ones of struct
 * inject_options: the strings stay where they were given (argv, the
 * environment), as inject_buffer takes them. prefix: "inject: ".
 */
static int apply_inject_option(struct inject_options *o, int id, const char *value, const char *what, bool from_env,
			       const char *prefix, char *err, size_t errlen)
{
	enum inject_origin from = from_env ? INJECT_ENV : INJECT_FLAG;
	char words[512];
	bool on = true;

	switch (id) {
	case OPT_IMAGE:
		if (*value == '\0')
			return failf(err, errlen, -EINVAL, "%s%s needs a value", prefix, what);
		o->image = value;
		o->image_from = from;
		return 0;
	case OPT_MESH:
		if (!presets_mesh(value)) {
			presets_mesh_words(" or ", words, sizeof(words));
			return failf(err, errlen, -EINVAL, "%s%s: \"%s\" is not %s", prefix, what, value, words);
		}
		o->mesh = value;
		o->mesh_from = from;
		return 0;
	case OPT_NAMED:
		if (o->nnamed == INJECT_MAX_NAMED)
			return failf(err, errlen, -EINVAL, "%smore than %d --sidecar options", prefix, INJECT_MAX_NAMED);
		if (inject_check_named(value, words, sizeof(words)) < 0)
			return failf(err, errlen, -EINVAL, "%s%s", prefix, words);
		o->named[o->nnamed++] = value;
		return 0;
	case OPT_GATE:
	case OPT_SERVICES:
	case OPT_SIGNAL_AS_ROOT:
		if (from_env && parse_bool(value, &on) < 0)
			return failf(err, errlen, -EINVAL, "%s%s: \"%s\" is not true or false", prefix, what, value);
		*(id == OPT_GATE ? &o->gate : id == OPT_SERVICES ? &o->services : &o->signal_as_root) = on;
		*(id == OPT_GATE ? &o->gate_from : id == OPT_SERVICES ? &o->services_from : &o->signal_as_root_from) = from;
		return 0;
	}
	return failf(err, errlen, -EINVAL, "internal error: option %d", id);
}

/* An error of a shared option, said as the command's own: "webhook: --log-format: ...". */
static int prefixed(const char *prefix, char *err, size_t errlen)
{
	char inner[OPTIONS_ERR_MAX];

	str_copy(inner, err, sizeof(inner));
	return failf(err, errlen, -EINVAL, "%s%s", prefix, inner);
}

static int apply_inject(void *p, int id, const char *value, const char *what, bool from_env, char *err,
			size_t errlen)
{
	struct inject_cli *o = p;

	if (id == OPT_QUIET)
		return set_flag(&o->quiet, value, what, from_env, err, errlen) == 0 ? 0
										 : prefixed(inject_cmd.prefix, err, errlen);
	return apply_inject_option(&o->inject, id, value, what, from_env, inject_cmd.prefix, err, errlen);
}

enum options_result options_parse_inject(struct inject_cli *o, int argc, char **argv, char *err, size_t errlen)
{
	int first;

	memset(o, 0, sizeof(*o));
	first = drive(&inject_cmd, false, apply_inject, o, argc, argv, err, errlen);
	if (first < 0)
		return result_of(first);
	o->inputs = argv + first;
	o->ninputs = argc - first;
	return OPTIONS_OK;
}

/*
 * --listen ADDR:PORT as a socket address: ":PORT" every address (IPv6 and
 * IPv4 both), "0.0.0.0:PORT" every IPv4 one, "[::]:PORT", "127.0.0.1:PORT",
 * "[::1]:PORT". Numbers only: the address is the pod's, never a name to
 * resolve. Port 0 is any free port (the log says which).
 */
static int parse_listen(struct listen_addr *o, const char *value, const char *what, char *err, size_t errlen)
{
	const char *colon = strrchr(value, ':');
	struct sockaddr_in6 *six = (struct sockaddr_in6 *)&o->addr;
	struct sockaddr_in *four = (struct sockaddr_in *)&o->addr;
	char host[INET6_ADDRSTRLEN + 2];
	unsigned long port;
	size_t hostlen;

	if (!colon || parse_uint(colon + 1, 0, 65535, &port) < 0 || (size_t)(colon - value) >= sizeof(host))
		return failf(err, errlen, -EINVAL,
			     "%s%s: \"%s\" is not ADDR:PORT (examples: :8443, 0.0.0.0:8443, [::]:8443, 127.0.0.1:8443)",
			     webhook_cmd.prefix, what, value);
	o->text = value;
	hostlen = (size_t)(colon - value);
	memcpy(host, value, hostlen);
	host[hostlen] = '\0';
	memset(&o->addr, 0, sizeof(o->addr));
	o->any = hostlen == 0;
	if (o->any || (hostlen > 2 && host[0] == '[' && host[hostlen - 1] == ']')) {
		host[hostlen ? hostlen - 1 : 0] = '\0';
		six->sin6_family = AF_INET6;
		six->sin6_port = htons((uint16_t)port);
		o->len = sizeof(*six);
		if (o->any || inet_pton(AF_INET6, host + 1, &six->sin6_addr) == 1)
			return 0;
	} else {
		four->sin_family = AF_INET;
		four->sin_port = htons((uint16_t)port);
		o->len = sizeof(*four);
		if (inet_pton(AF_INET, host, &four->sin_addr) == 1)
			return 0;
	}
	return failf(err, errlen, -EINVAL, "%s%s: \"%s\" is not an IP address (a name is not resolved; IPv6 goes in [ ])",
		     webhook_cmd.prefix, what, host[0] == '[' ? host + 1 : host);
}

static int apply_webhook(void *p, int id, const char *value, const char *what, bool from_env, char *err,
			 size_t errlen)
{
	struct webhook_options *o = p;

	switch (id) {
	case OPT_LISTEN:
	case OPT_PROBE_LISTEN:
		return parse_listen(id == OPT_LISTEN ? &o->listen : &o->probe_listen, value, what, err, errlen);
	case OPT_SHUTDOWN_DELAY:
		if (options_duration(what, value, &o->shutdown_delay_ms, err, errlen) < 0)
			return prefixed(webhook_cmd.prefix, err, errlen);
		return 0;
	case OPT_TLS_CERT:
	case OPT_TLS_KEY:
		if (*value == '\0')
			return failf(err, errlen, -EINVAL, "%s%s needs a value", webhook_cmd.prefix, what);
		*(id == OPT_TLS_CERT ? &o->tls_cert : &o->tls_key) = value;
		return 0;
	case OPT_LOG_FORMAT:
	case OPT_VERBOSE:
	case OPT_QUIET:
		if (apply_log(&o->log_format, &o->log_level, id, value, what, from_env, err, errlen) == 0)
			return 0;
		return prefixed(webhook_cmd.prefix, err, errlen);
	}
	return apply_inject_option(&o->inject, id, value, what, from_env, webhook_cmd.prefix, err, errlen);
}

enum options_result options_parse_webhook(struct webhook_options *o, int argc, char **argv, char *err,
					  size_t errlen)
{
	char unused[OPTIONS_ERR_MAX];
	int first;

	memset(o, 0, sizeof(*o));
	o->tls_cert = WEBHOOK_TLS_CERT;
	o->tls_key = WEBHOOK_TLS_KEY;
	o->log_format = LOG_TEXT;
	o->log_level = LOG_INFO;
	if (parse_listen(&o->listen, WEBHOOK_LISTEN, "--listen", unused, sizeof(unused)) < 0 ||
	    parse_listen(&o->probe_listen, WEBHOOK_PROBE_LISTEN, "--probe-listen", unused, sizeof(unused)) < 0 ||
	    options_duration("--shutdown-delay", WEBHOOK_SHUTDOWN_DELAY, &o->shutdown_delay_ms, unused, sizeof(unused)) < 0)
		abort();
	first = drive(&webhook_cmd, false, apply_webhook, o, argc, argv, err, errlen);
	if (first < 0)
		return result_of(first);
	if (first < argc) {
		failf(err, errlen, -EINVAL, "webhook: unexpected argument \"%s\" (it takes options only; see rearguard webhook --help)",
		      argv[first]);
		return OPTIONS_ERROR;
	}
	/*
	 * --mesh says that a namespace's injector will add its proxy after
	 * inject ran over the template. The webhook sees each pod after the
	 * injectors whose configurations sort before its own (Istio's,
	 * Linkerd's) and again, reinvoked, after those that sort after it: the
	 * proxy is in the pod, or was never going to be (docs/webhook.md).
	 */
	if (o->inject.mesh) {
		failf(err, errlen, -EINVAL,
		      "webhook: %s is for rearguard inject: the webhook sees the mesh's proxy in the pod, where the "
		      "mesh's injector put it (see docs/webhook.md, \"Ordering with other injectors\")",
		      o->inject.mesh_from == INJECT_ENV ? "REARGUARD_MESH" : "--mesh");
		return OPTIONS_ERROR;
	}
	return OPTIONS_OK;
}

/* ---- explain ----------------------------------------------------------------- */

/* --now: an instant as kubectl prints one (RFC 3339, UTC or with an offset), as real time in microseconds. */
static int parse_now(const char *value, int64_t *us)
{
	struct tm tm = {0};
	int64_t s;
	char tail[8] = "";
	int off = 0, n = 0;

	if (sscanf(value, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec, &n) != 6 || n != 19)
		return -EINVAL;
	str_copy(tail, value + 19, sizeof(tail));
	if (strcmp(tail, "Z") != 0) {
		int h, m;

		if (strlen(tail) != 6 || (tail[0] != '+' && tail[0] != '-') || sscanf(tail + 1, "%2d:%2d", &h, &m) != 2)
			return -EINVAL;
		off = (h * 60 + m) * 60 * (tail[0] == '+' ? 1 : -1);
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	s = (int64_t)timegm(&tm);
	if (s < 0)
		return -EINVAL;
	*us = (s - off) * 1000000;
	return 0;
}

static int apply_explain(void *p, int id, const char *value, const char *what, bool from_env, char *err,
			 size_t errlen)
{
	struct explain_cli *o = p;

	switch (id) {
	case OPT_OUTPUT:
		if (strcmp(value, "json") != 0 && strcmp(value, "text") != 0)
			return failf(err, errlen, -EINVAL, "%s%s: \"%s\" is not text or json", explain_cmd.prefix, what, value);
		o->explain.json = strcmp(value, "json") == 0;
		return 0;
	case OPT_ALL:
		o->explain.all = true;
		return 0;
	case OPT_AUDIT:
		o->explain.audit = true;
		return 0;
	case OPT_NOW:
		if (parse_now(value, &o->explain.now_us) < 0)
			return failf(err, errlen, -EINVAL, "%s%s: \"%s\" is not a time as kubectl prints one (2026-11-29T01:02:03Z)",
				     explain_cmd.prefix, what, value);
		return 0;
	}
	return apply_inject_option(&o->explain.inject, id, value, what, from_env, explain_cmd.prefix, err, errlen);
}

enum options_result options_parse_explain(struct explain_cli *o, int argc, char **argv, char *err, size_t errlen)
{
	int first;

	memset(o, 0, sizeof(*o));
	o->explain.now_us = real_us();
	first = drive(&explain_cmd, false, apply_explain, o, argc, argv, err, errlen);
	if (first < 0)
		return result_of(first);
	o->inputs = argv + first;
	o->ninputs = argc - first;
	return OPTIONS_OK;
}
