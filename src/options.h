/*
 * The agent's configuration: command-line options and their REARGUARD_*
 * environment twins (the flag wins), checked once before anything runs.
 * Every bad value gives one line naming the option or variable.
 */
#ifndef RG_OPTIONS_H
#define RG_OPTIONS_H

#include "defaults.h"

#include "decide.h"
#include "explain.h"
#include "inject.h"
#include "log.h"
#include "spec.h"

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define OPTIONS_ERR_MAX 640

struct agent_options {
	struct sidecar_spec *sidecars; /* the explicit ones first, then the presets detection looks for */
	size_t nsidecars;
	bool detect;   /* --sidecar auto, or no --sidecar at all: the known sidecars are detected */
	char *app_src; /* --app, or NULL */
	regex_t app_re;
	unsigned long apps; /* --apps, 0: not given */
	char *dir;
	enum restart_policy policy;
	int64_t startup_timeout_ms, sidecar_wait_ms, ready_timeout_ms, stop_timeout_ms, kill_after_ms;
	int64_t term_grace_ms, restart_grace_ms;
	enum sidecar_exit_policy on_sidecar_exit; /* --on-sidecar-exit */
	bool first;    /* --first: the agent is the pod's first regular container (what ran before it is native) */
	char *termination_log;
	enum log_format log_format;
	enum log_level log_level;
	/*
	 * How the command lines of rearguard run and rearguard sidecar in the
	 * other containers are read (options_run_name, options_sidecar_name, set
	 * by the parsers): the agent's library holds no parser of its own.
	 * NULL: such containers are not told apart.
	 */
	int (*run_name)(int argc, char **argv, char *name, size_t len);
	int (*sidecar_name)(int argc, char **argv, char *name, size_t len, int *program);
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

/* rearguard run [OPTIONS] -- CMD [ARG...] */
struct run_options {
	char *name;           /* --name, else the basename of CMD: the report is apps/NAME */
	char *dir;
	int64_t timeout_ms;   /* how long to wait for ready */
	bool no_wait;
	bool drain;           /* the wrapper model: stop the sidecars after CMD */
	struct agent_options drain_opts; /* --drain: sidecars, --stop-timeout, --kill-after */
	bool sidecar_flag_seen;
	enum log_format log_format;
	enum log_level log_level;
	char **cmd;           /* CMD [ARG...], NULL-terminated: points into argv */
};

/* rearguard sidecar [OPTIONS] -- PROGRAM [ARG...] */
struct sidecar_options {
	char *name;              /* --name, else the basename of PROGRAM: sidecars/NAME, sidecars/NAME.stop */
	char *dir;
	int stop_signal;         /* the signal that stops the program (besides SIGTERM) */
	int64_t stop_timeout_ms; /* after the stop, the program gets this long; then SIGKILL */
	enum log_format log_format;
	enum log_level log_level;
	char **cmd;              /* PROGRAM [ARG...], NULL-terminated: points into argv */
};

/* rearguard wait CONDITION [--timeout DUR] [--dir DIR] */
/* rearguard wait's condition for a sidecar's preStop hook: this container's main process ends, or done. */
#define WAIT_STOPPED "stopped"

struct wait_options {
	const char *condition; /* ready, apps-done, done or WAIT_STOPPED (static) */
	char *dir;
	int64_t timeout_ms;    /* 0: look once */
};


enum options_result options_parse_run(struct run_options *o, int argc, char **argv, char *err, size_t errlen);
void options_free_run(struct run_options *o);
/*
 * The report name another process's command line (rearguard run ...) will
 * write: --name, else CMD's basename. Its environment (REARGUARD_NAME) is
 * not ours to read. -EINVAL when it is not such a command line.
 */
int options_run_name(int argc, char **argv, char *name, size_t len);
enum options_result options_parse_sidecar(struct sidecar_options *o, int argc, char **argv, char *err, size_t errlen);
void options_free_sidecar(struct sidecar_options *o);
/*
 * The sidecar name another process's command line (rearguard sidecar ...)
 * has: --name, else PROGRAM's basename, and where PROGRAM is in argv.
 * -EINVAL when it is not the command line of rearguard sidecar.
 */
int options_sidecar_name(int argc, char **argv, char *name, size_t len, int *program);
enum options_result options_parse_wait(struct wait_options *o, int argc, char **argv, char *err, size_t errlen);
void options_free_wait(struct wait_options *o);
/* rearguard install DIR: *dir points into argv. */
enum options_result options_parse_install(const char **dir, int argc, char **argv, char *err, size_t errlen);

/* rearguard inject [OPTIONS] [FILE|DIR|-]... */
struct inject_cli {
	struct inject_options inject; /* its strings point into argv or the environment */
	bool quiet;                   /* -q: warnings only, no summary */
	char **inputs;                /* the operands, in argv; none: standard input */
	int ninputs;
};

enum options_result options_parse_inject(struct inject_cli *o, int argc, char **argv, char *err, size_t errlen);

/* rearguard explain [OPTIONS] [FILE|-]... */
struct explain_cli {
	struct explain_options explain; /* its strings point into argv or the environment */
	char **inputs;			/* the operands, in argv; none: standard input */
	int ninputs;
};

enum options_result options_parse_explain(struct explain_cli *o, int argc, char **argv, char *err, size_t errlen);

/* rearguard webhook: the defaults are a Secret volume's keys at its conventional place. */
#define WEBHOOK_LISTEN ":8443"
/* The probes' port: plain HTTP, as controller-runtime's health probes have it (:8081). */
#define WEBHOOK_PROBE_LISTEN ":8081"
#define WEBHOOK_TLS_CERT "/etc/rearguard/tls/tls.crt"
#define WEBHOOK_TLS_KEY "/etc/rearguard/tls/tls.key"
/*
 * After SIGTERM, new connections are answered this long (/readyz says 503)
 * before the drain: the time the pod's removal from the Service takes to
 * reach the API server (docs/webhook.md).
 */
#define WEBHOOK_SHUTDOWN_DELAY "10s"
#define WEBHOOK_DRAIN_S 10 /* then the requests in flight get this long */
/*
 * An AdmissionReview's body, at most: a pod of the API server's largest
 * request (3 MiB) with the review around it.
 */
#define WEBHOOK_BODY_MAX (4u << 20)
/*
 * The bodies and answers held at once, all connections together: three
 * reviews of the largest size, or a thousand of a real pod's
 * (docs/decisions.md has the memory this fits in).
 */
#define WEBHOOK_HELD_MAX ((size_t)12 << 20)
/*
 * The webhook's port serves this many connections at once, at most
 * WEBHOOK_PER_CLIENT from one address; more from an address wait for one
 * of its own to end, up to WEBHOOK_OPEN_PER_CLIENT open from it and
 * WEBHOOK_WAITING waiting in all. An API server opens one connection per
 * review it sends at once, and keeps 25 idle: at most 625 with its default
 * limits of requests in flight (docs/webhook.md).
 */
#define WEBHOOK_CONNECTIONS 128
#define WEBHOOK_PER_CLIENT 32
#define WEBHOOK_OPEN_PER_CLIENT 640
#define WEBHOOK_WAITING 1280
/* A connection's request headers within this of its start or its last answer; that request answered within: */
#define WEBHOOK_HEADERS_S 10
#define WEBHOOK_REQUEST_S 30 /* the longest timeoutSeconds the API server takes */
/* The probes' port: the kubelet opens one connection per probe. */
#define WEBHOOK_PROBE_CONNECTIONS 16
#define WEBHOOK_PROBE_PER_CLIENT 4
#define WEBHOOK_PROBE_S 5 /* headers, and request: a probe's default timeout is 1 s */

/* Where a port listens. */
struct listen_addr {
	const char *text;	      /* as given, for the log */
	struct sockaddr_storage addr; /* ... as an address */
	socklen_t len;
	bool any; /* ":PORT": every address, IPv6 and IPv4 (addr is [::]) */
};

struct webhook_options {
	struct inject_options inject; /* its strings point into argv or the environment */
	struct listen_addr listen, probe_listen;
	const char *tls_cert, *tls_key;
	int64_t shutdown_delay_ms;
	enum log_format log_format;
	enum log_level log_level;
};

/* Nothing to free: every string points into argv or the environment. */
enum options_result options_parse_webhook(struct webhook_options *o, int argc, char **argv, char *err,
					  size_t errlen);

/* Shared with the other subcommands: values of durations and log options. */
int options_duration(const char *what, const char *value, int64_t *ms, char *err, size_t errlen);

void options_print_help(void);
void options_print_inject_help(void);
void options_print_webhook_help(void);
void options_print_explain_help(void);
void options_print_version(void);
/* The preset table, one JSON object a row, on standard output: 0, or -ENOMEM. */
int options_print_presets(void);

#endif
