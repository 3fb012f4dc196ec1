/*
 * Every decision, and every deadline, in one place and without I/O. It is
 * told what happened (a container appeared, a root exited, an exit code
 * came in, a report arrived, a rescan or a file write succeeded or failed,
 * an HTTP request finished, a sidecar's processes are gone, a signal
 * arrived) and answers with the next action to carry out. Each action's
 * result comes back as one of those events; until it does, the action is
 * not counted as done. The unit tests drive it with synthetic events and
 * clocks; the engine with the real ones.
 *
 *	decide_new(&cfg, now, &d);
 *	... decide_event(d, &ev, now), or one of its spellings below:
 *	    decide_app_seen(d, id, "job", now); ...
 *	while (decide_next(d, now, &act))
 *		carry out act, and report its result (decide_rescanned,
 *		decide_http_result, decide_written, decide_signal_result, ...);
 *	arm one timer for decide_deadline(d, now);
 *	decide_free(d);
 *
 * Times are monotonic microseconds. What decide decides it also says, as
 * notes to the sink of its configuration (a kind and its fields, no
 * words): the engine's sink writes them as log lines (notes.c), the tests
 * look at them. Everything else decide knows is read through its views
 * (decide_app_view, decide_sidecar_view, decide_view); its structures are
 * its own (decide-private.h).
 *
 * The drain stops the sidecars one by one, in reverse order. For each, the
 * stop goes out first where it can: a stop or drain request is sent before
 * the sidecar's processes are collected and watched (DECIDE_WATCH), since
 * the start time of each process keeps that safe; a signal needs the
 * watches first, for it goes through them.
 */
#ifndef RG_DECIDE_H
#define RG_DECIDE_H

#include "protocol-files.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DECIDE_NAME_MAX 64
#define DECIDE_CODE_PENDING (-2) /* exited; the status may still come */
#define DECIDE_CODE_UNKNOWN (-1) /* exited; the status will never be known */
#define DECIDE_APP_COMMAND 0xffffffffu /* the id of run --drain's command: no container of the pod */

/*
 * The pod's restartPolicy. Under Always (a long-running pod: a
 * Deployment's, a StatefulSet's, a DaemonSet's) the kubelet restarts every
 * container that ends, apps and sidecars alike: nothing is concluded from
 * an exit, and only the pod's deletion (the agent's SIGTERM) starts the
 * drain.
 */
enum restart_policy { POLICY_NEVER, POLICY_ON_FAILURE, POLICY_ALWAYS };
/* Never, OnFailure, Always; and back: 0, or -EINVAL for a word that is none of them. */
const char *decide_policy_word(enum restart_policy policy);
int decide_policy_parse(const char *word, enum restart_policy *policy);
/* --on-sidecar-exit: what a sidecar's failure while the apps run does (Never only). */
enum sidecar_exit_policy {
	SIDECAR_EXIT_WARN, /* it is noted, with what it means */
	SIDECAR_EXIT_FAIL, /* the apps are stopped, as the kubelet stops a container, so that the pod fails now */
};

#define DECIDE_STATUSES_MAX 8 /* drain and stop results kept per sidecar */

struct decide;
struct decide_note;

/* How a sidecar's stop is confirmed. */
enum decide_confirm {
	CONFIRM_PROCESSES, /* its processes are watched: stopped once none is left */
	CONFIRM_PORT,      /* none is visible (no shared PID namespace): stopped once the stop
			      URL answered 2xx and its port refuses connections; no signal can reach it */
};

struct decide_sidecar_config {
	char name[DECIDE_NAME_MAX];
	int stop_signal;       /* the stop request when there is no stop_url; 0 with one */
	const char *ready_url; /* NULL: ready once a process of it is seen */
	const char *drain_url; /* NULL: no drain step */
	int64_t drain_time_us; /* waited after an accepted drain */
	const char *stop_url;  /* NULL: stop with stop_signal */
	bool signal_all;       /* the stop signal (and the SIGTERM after it) to every process, not the roots */
	bool optional;         /* looked for by detection: it counts once a process of it was seen */
	bool native;           /* a native sidecar's spec: its containers are told as natives
				  (DECIDE_EV_NATIVE_SEEN), and it is never waited for, polled for readiness,
				  nor stopped */
	const char *exit_fix;  /* what to do when it exits non-zero (for the warning), or NULL */
	enum decide_confirm confirm;
};

/*
 * What a sidecar's stop signal does to the main process of its containers,
 * looked at just before it is sent (DECIDE_SIGNAL with first): the worst of
 * its roots', in this order from the least to the most harmful.
 */
enum decide_fate {
	DECIDE_FATE_NONE,    /* not looked at: an HTTP stop, or no signal sent yet */
	DECIDE_FATE_WRAPPED, /* it runs under rearguard sidecar: its container exits 0 of the stop */
	DECIDE_FATE_HANDLES, /* it catches (or blocks) the signal: its own code will say how it went */
	DECIDE_FATE_UNKNOWN, /* its status could not be read */
	DECIDE_FATE_IGNORES, /* it ignores the signal: only the SIGKILL after the timeouts ends it (137) */
	DECIDE_FATE_DIES,    /* no handler: it dies of the signal, and its container exits 128 + the signal */
};

/* The fate's word for the summary: "wrapped", "handles", "unknown", "ignores", "dies"; NULL for none. */
const char *decide_fate_word(enum decide_fate fate);

/* Where decide's notes go: a function and its data. No sink: they go nowhere. */
typedef void decide_sink_fn(void *data, const struct decide_note *note);

struct decide_config {
	enum restart_policy policy;
	unsigned apps_expected; /* 0: not given */
	int64_t startup_timeout_us, restart_grace_us, term_grace_us;
	int64_t sidecar_wait_us; /* apps done: how long to wait for a named sidecar not seen yet */
	int64_t stop_timeout_us, kill_after_us; /* kill_after_us is also the apps' grace after their SIGTERM */
	enum sidecar_exit_policy on_sidecar_exit;
	bool readiness;         /* poll readiness; DECIDE_WRITE of PROTOCOL_READY when all are ready (with
				   ready_gates_apps: DECIDE_START_COMMAND) */
	int64_t ready_timeout_us;
	bool ready_gates_apps;  /* no app can start before ready (run --drain): its expiry ends the wait */
	bool protocol;          /* the file protocol is there: apps-done and done are written */
	/*
	 * run --drain: the one app is the command (DECIDE_APP_COMMAND), which
	 * DECIDE_START_COMMAND starts; the process's exit status is its code,
	 * and command_not_ready when it never started for want of ready
	 * sidecars.
	 */
	bool command;
	int command_not_ready;
	size_t nsidecars;
	const struct decide_sidecar_config *sidecars; /* in --sidecar order */
	decide_sink_fn *sink;
	void *sink_data;
};

enum decide_phase { PHASE_WATCHING, PHASE_CONFIRMING, PHASE_DRAINING, PHASE_DONE };

/*
 * Why the drain started. Its word (decide_reason_word) is public: the
 * summary's "reason", the apps-done file's text and the log's reason=.
 */
enum decide_reason {
	REASON_NONE,            /* no drain (yet); a drain asked for without a reason is refused */
	REASON_APPS_DONE,       /* apps-done: every app finished */
	REASON_SIDECAR_EXITED,  /* sidecar-exited: the apps were stopped after a sidecar failed */
	REASON_STARTUP_TIMEOUT, /* startup-timeout: fewer apps than --apps appeared in time */
	REASON_TERM_GRACE,      /* term-grace: the apps outlived --term-grace after SIGTERM */
	REASON_SECOND_SIGNAL,   /* second-signal: a second SIGTERM or SIGINT */
	REASON_READY_TIMEOUT,   /* ready-timeout: run --drain's sidecars were not ready in time */
	REASON_RESUME,          /* resume: an earlier run wrote apps-done */
	REASON_DRAIN_FILE,      /* drain-file: the drain file appeared */
	REASON_DRAIN_COMMAND,   /* drain-command: rearguard drain */
	REASON_SIGNAL,          /* signal: run --drain's command was signalled before it started */
};

/* The reason's word; NULL for REASON_NONE. */
const char *decide_reason_word(enum decide_reason reason);

enum decide_action_kind {
	DECIDE_RESCAN,    /* rescan /proc, report what changed, then decide_rescanned(); the containers first
			     seen at or before pending_before_us have had long enough to exec (their
			     runtime's init, an empty command line): classified by what they show */
	DECIDE_STATUS,    /* ask the kernel for the missing exit codes of exited roots: decide_app_status() */
	DECIDE_POLL,      /* look at the processes watched without a pidfd (exits are reported as usual) */
	DECIDE_APPS_DONE, /* the apps are done (reason): the drain starts. With command_ended, the command
			     (run --drain) will never start: its code is exit_code, to be reported. With
			     check_exits, the roots of the sidecars' containers are asked at once whether
			     they exited (each exit told as usual), before any stop is decided */
	DECIDE_WATCH,     /* collect and watch every process of sidecar, as the last rescan saw them (with
			     rescan_first, one made now); decide_sidecar_gone() when none is left */
	DECIDE_SIGNAL,    /* send signo to the roots of sidecar's containers (all: to every process; the
			     watches come first then); decide_signal_result() */
	DECIDE_SIGNAL_APP, /* send signo to the main process of app container app (all: to every process of
			      it, as the last rescan saw them; with rescan_first, one made now);
			      decide_app_signal_result() */
	DECIDE_CATCHES,   /* whether the roots of sidecar catch signo and sleep (/proc/PID/status):
			     decide_sidecar_catches() */
	DECIDE_HTTP,      /* make the request (purpose, url, timeouts); decide_http_result() */
	DECIDE_WRITE,     /* write file: ready, apps-done or done; decide_written() */
	DECIDE_START_COMMAND, /* every sidecar is ready: start run --drain's command, which waited for that
				 (ready_gates_apps); what becomes of it comes back as DECIDE_EV_COMMAND_ENDED */
	DECIDE_EXIT,      /* the summary is out (resumed: it is the done file's): exit with status */
};

enum decide_http_purpose {
	DECIDE_HTTP_READY, /* GET the ready URL: 2xx is ready */
	DECIDE_HTTP_DRAIN, /* POST the drain URL */
	DECIDE_HTTP_STOP,  /* POST the stop URL */
	DECIDE_HTTP_GONE,  /* connect to the ready URL (else the stop URL), send nothing: refused is gone */
	DECIDE_HTTP_CHECK, /* pre-flight, once it is ready: connect to the stop URL, send nothing:
			      refused means the stop request will fail */
};

struct decide_action {
	enum decide_action_kind kind;
	size_t sidecar;
	unsigned app;           /* DECIDE_SIGNAL_APP: the app container's id */
	int signo;
	bool all;               /* DECIDE_SIGNAL(_APP) to every process, not the roots (main process) alone */
	int exit_code;          /* DECIDE_EXIT: the summary's (0, or 1 when a sidecar could not be stopped) */
	int status;             /* DECIDE_EXIT: the process's exit status (the command's code for run --drain) */
	bool resumed;           /* DECIDE_EXIT: an earlier run finished; its done file is the summary */
	unsigned containers;    /* DECIDE_EXIT: the containers the kubelet shares termination messages among */
	bool command_ended;     /* DECIDE_APPS_DONE: see there */
	enum decide_reason reason; /* DECIDE_APPS_DONE, DECIDE_WRITE */
	enum decide_http_purpose purpose;
	enum protocol_file file;
	const char *url;
	int64_t connect_timeout_us, timeout_us;
	int64_t pending_before_us; /* DECIDE_RESCAN, rescan_first: see DECIDE_RESCAN */
	/*
	 * DECIDE_WATCH, DECIDE_SIGNAL_APP: no rescan worked in this turn of
	 * the engine's loop (see decide_next): one is made first, and its
	 * outcome reported as DECIDE_RESCAN's.
	 */
	bool rescan_first;
	bool check_exits;       /* DECIDE_APPS_DONE: see there */
	bool urgent;            /* a stop on its way: let it out before anything else is done */
	/*
	 * DECIDE_SIGNAL: the stop signal itself, not an escalation: what it will
	 * do to the roots is looked at first (/proc/PID/status, or whether they
	 * run under rearguard sidecar), and told after it as DECIDE_EV_FATE.
	 */
	bool first;
};

/* How a native sidecar's container was known. */
enum decide_native_by {
	NATIVE_BY_SPEC,    /* a sidecar spec that says native matches it */
	NATIVE_BY_START,   /* --first: it ran before the agent started, and no plain sidecar's spec matches it */
	NATIVE_BY_RESTART, /* it appeared after a native one of the same name exited: the kubelet's restart */
};

/* ---- events: everything decide is told comes through decide_event ---------- */

enum decide_event_kind {
	DECIDE_EV_APP_SEEN,        /* id, name: an app container appeared (name: its root's, the identity
				      across restarts) */
	DECIDE_EV_APP_EXITED,      /* id: its root exited; the status follows */
	DECIDE_EV_APP_STATUS,      /* id, code: exit code (128 + signal), DECIDE_CODE_UNKNOWN (never known),
				      or DECIDE_CODE_PENDING (not published yet: asked again, as DECIDE_STATUS says) */
	DECIDE_EV_APP_RENAMED,     /* id, name: its root exec'd another program (sh -c 'exec job'); under
				      OnFailure it may now be the restart of a failed app of that name (one
				      seen before that app exited never is) */
	DECIDE_EV_APP_FORGET,      /* id: the container turned out not to be an app */
	DECIDE_EV_APP_REPORTS_AS,  /* id, name: it runs `rearguard run`, which will report as apps/name */
	DECIDE_EV_APP_REPORT,      /* name, code: apps/NAME (see decide_app_report) */
	DECIDE_EV_APP_SIGNAL_RESULT, /* id, result: the outcome of DECIDE_SIGNAL_APP: 0 or -errno */
	DECIDE_EV_NATIVE_SEEN,     /* id, name, by: a native sidecar's container appeared (name: its spec's,
				      else its root's) */
	DECIDE_EV_NATIVE_EXITED,   /* id: its root exited */
	DECIDE_EV_NATIVE_FORGET,   /* id: taken for a native, but a plain sidecar's spec matches it now */
	DECIDE_EV_COMMAND_ENDED,   /* code: run --drain's command is over; with a reason, it never started
				      (128 + signal) and the drain begins now for that reason */
	DECIDE_EV_SIDECAR_SEEN,    /* sidecar, age_us: a container of it appeared */
	DECIDE_EV_SIDECAR_EXITED,  /* sidecar: its root exited (its code follows, as for apps); with id
				      and pid when the exit was watched, for the note of an early exit */
	DECIDE_EV_SIDECAR_STATUS,  /* sidecar, code: the code of one of its roots */
	DECIDE_EV_SIDECAR_GONE,    /* sidecar: every process of it is gone (after DECIDE_WATCH, or a port
				      that refuses) */
	DECIDE_EV_NO_ENDPOINT,     /* sidecar: pre-flight found its stop endpoint missing, and said so */
	DECIDE_EV_CATCHES,         /* sidecar, result: the outcome of DECIDE_CATCHES */
	DECIDE_EV_SIGNAL_RESULT,   /* sidecar, result: the outcome of DECIDE_SIGNAL: 0 or -errno */
	DECIDE_EV_FATE,            /* sidecar, result: what DECIDE_SIGNAL's stop signal does to its roots
				      (enum decide_fate), looked at just before it went */
	DECIDE_EV_PROGRAM,         /* sidecar, code, name: its program under rearguard sidecar ended: the
				      container's code, and how the program ended (exited:N, signal:NAME,
				      timeout), as the wrapper's report (sidecars/NAME) says */
	DECIDE_EV_HTTP_RESULT,     /* sidecar, purpose, result: the outcome of DECIDE_HTTP */
	DECIDE_EV_WRITTEN,         /* file, result: the outcome of DECIDE_WRITE: 0 or -errno */
	DECIDE_EV_FOUND,           /* file: left by an earlier run (apps-done: drain now; done: exit now) */
	DECIDE_EV_PENDING,         /* count: containers still showing the runtime's init */
	DECIDE_EV_POLLING,         /* count: processes watched by polling */
	DECIDE_EV_CONTAINERS,      /* count: containers of the pod seen so far (not pause; restarts anew) */
	DECIDE_EV_PIDS_MOVED,      /* a pid was handed out since the last rescan began */
	DECIDE_EV_STALLED,         /* age_us: how long the agent did not run while a process was expected (its
				      look at the pid counter came that late: DECIDE_STALL_US or more) */
	DECIDE_EV_RESCANNED,       /* result: the outcome of a rescan: 0 or -errno */
	DECIDE_EV_RESCAN_WANTED,   /* a rescan now: every process of a sidecar the engine watched exited (one
				      more look shows whether one was forked meanwhile), or SIGHUP */
	DECIDE_EV_TERMINATE,       /* the agent got SIGTERM or SIGINT; a second one drains at once */
	DECIDE_EV_DRAIN_NOW,       /* reason: drain now, whatever the apps do, for that reason */
};

struct decide_event {
	enum decide_event_kind kind;
	unsigned id;            /* an app's container */
	const char *name;
	int code;
	size_t sidecar;
	enum decide_http_purpose purpose;
	enum protocol_file file;
	int result;
	unsigned count;
	int pid;                /* DECIDE_EV_SIDECAR_EXITED: its root, 0 when the exit was not watched */
	/*
	 * DECIDE_EV_SIDECAR_SEEN: how long its root's program had run when it
	 * was seen, as far as is known (its process's start time); 0 when it
	 * is not known, or was seen to begin (the runtime's init, or another
	 * program, at the last look): then it began when it was seen.
	 */
	int64_t age_us;         /* DECIDE_EV_STALLED: the stall's length */
	enum decide_native_by by; /* DECIDE_EV_NATIVE_SEEN */
	enum decide_reason reason; /* DECIDE_EV_DRAIN_NOW, DECIDE_EV_COMMAND_ENDED */
};

/*
 * Tells decide what happened. False when the event changed nothing (it
 * came too late, or twice, or names nothing decide knows): a debug note
 * says so.
 */
bool decide_event(struct decide *d, const struct decide_event *ev, int64_t now);

#define DECIDE_TELL(d, now, ...) decide_event((d), &(const struct decide_event){ __VA_ARGS__ }, (now))

static inline void decide_app_seen(struct decide *d, unsigned id, const char *name, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_APP_SEEN, .id = id, .name = name);
}

static inline void decide_app_exited(struct decide *d, unsigned id, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_APP_EXITED, .id = id);
}

static inline void decide_app_status(struct decide *d, unsigned id, int code, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_APP_STATUS, .id = id, .code = code);
}

static inline void decide_app_renamed(struct decide *d, unsigned id, const char *name)
{
	DECIDE_TELL(d, 0, .kind = DECIDE_EV_APP_RENAMED, .id = id, .name = name);
}

static inline void decide_app_forget(struct decide *d, unsigned id)
{
	DECIDE_TELL(d, 0, .kind = DECIDE_EV_APP_FORGET, .id = id);
}

/* The outcome of DECIDE_SIGNAL_APP: 0, or -errno (-EPERM: not allowed, noted with the fix; -EMFILE...: again). */
static inline void decide_app_signal_result(struct decide *d, unsigned id, int err, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_APP_SIGNAL_RESULT, .id = id, .result = err);
}

static inline void decide_app_reports_as(struct decide *d, unsigned id, const char *name)
{
	DECIDE_TELL(d, 0, .kind = DECIDE_EV_APP_REPORTS_AS, .id = id, .name = name);
}

/*
 * apps/NAME says an app finished with code: it is done even if its process
 * still runs. While watching, the report is matched after the next rescan
 * (so that a container that just started is known), to: the app container
 * named NAME (or whose rearguard run reports as NAME); else the one that
 * reported as NAME before; else the only app container without a report;
 * else an app known only from the file. A code from the kernel wins over
 * the report (the kubelet acts on it); a difference is noted.
 */
static inline void decide_app_report(struct decide *d, const char *name, int code, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_APP_REPORT, .name = name, .code = code);
}

/*
 * A native sidecar's container appeared (an init container with
 * restartPolicy: Always, which the kubelet starts before the apps,
 * restarts when it exits, and stops after them), or its root exited. It is
 * listed, and nothing else: never an app, never waited for, never
 * signalled.
 */
static inline void decide_native_seen(struct decide *d, unsigned id, const char *name, enum decide_native_by by,
				      int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_NATIVE_SEEN, .id = id, .name = name, .by = by);
}

static inline void decide_native_exited(struct decide *d, unsigned id, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_NATIVE_EXITED, .id = id);
}

static inline void decide_native_forget(struct decide *d, unsigned id)
{
	DECIDE_TELL(d, 0, .kind = DECIDE_EV_NATIVE_FORGET, .id = id);
}

static inline void decide_sidecar_seen(struct decide *d, size_t sidecar, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_SIDECAR_SEEN, .sidecar = sidecar);
}

/* The same, with how long its root's program had run by then (its process's start time says). */
static inline void decide_sidecar_seen_aged(struct decide *d, size_t sidecar, int64_t age_us, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_SIDECAR_SEEN, .sidecar = sidecar, .age_us = age_us);
}

static inline void decide_sidecar_exited(struct decide *d, size_t sidecar, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_SIDECAR_EXITED, .sidecar = sidecar);
}

static inline void decide_sidecar_status(struct decide *d, size_t sidecar, int code, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_SIDECAR_STATUS, .sidecar = sidecar, .code = code);
}

static inline void decide_sidecar_gone(struct decide *d, size_t sidecar, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_SIDECAR_GONE, .sidecar = sidecar);
}

static inline void decide_sidecar_no_endpoint(struct decide *d, size_t sidecar)
{
	DECIDE_TELL(d, 0, .kind = DECIDE_EV_NO_ENDPOINT, .sidecar = sidecar);
}

/*
 * The outcome of DECIDE_CATCHES: 1 when every live root of the sidecar
 * catches (ignores, blocks) the signal and sleeps, 0 when one does not yet,
 * -errno when that could not be read.
 */
static inline void decide_sidecar_catches(struct decide *d, size_t sidecar, int result, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_CATCHES, .sidecar = sidecar, .result = result);
}

/* The outcome of DECIDE_SIGNAL: 0, or -errno (-EPERM: not allowed; -EMFILE...: tried again). */
static inline void decide_signal_result(struct decide *d, size_t sidecar, int err, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_SIGNAL_RESULT, .sidecar = sidecar, .result = err);
}

/*
 * The outcome of DECIDE_HTTP: an HTTP status, 0 when a DECIDE_HTTP_GONE
 * probe connected, or -errno when no answer came (-ECONNREFUSED,
 * -ETIMEDOUT, ...).
 */
static inline void decide_http_result(struct decide *d, size_t sidecar, enum decide_http_purpose purpose, int result,
				      int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_HTTP_RESULT, .sidecar = sidecar, .purpose = purpose, .result = result);
}

/* The outcome of DECIDE_WRITE: 0, or -errno (tried again with a backoff). */
static inline void decide_written(struct decide *d, enum protocol_file file, int err, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_WRITTEN, .file = file, .result = err);
}

/* Containers still showing the runtime's init; while any, rescans are quick. */
static inline void decide_pending(struct decide *d, unsigned n)
{
	DECIDE_TELL(d, 0, .kind = DECIDE_EV_PENDING, .count = n);
}

/* How many processes are watched by polling (no pidfd for them); while any, DECIDE_POLL comes. */
static inline void decide_polling(struct decide *d, unsigned n)
{
	DECIDE_TELL(d, 0, .kind = DECIDE_EV_POLLING, .count = n);
}

/* A pid was handed out since the last rescan began: the next action is a rescan. */
static inline void decide_pids_moved(struct decide *d)
{
	DECIDE_TELL(d, 0, .kind = DECIDE_EV_PIDS_MOVED);
}

/* The outcome of DECIDE_RESCAN (or the engine's first scan, at its start): 0 or -errno. */
static inline void decide_rescanned(struct decide *d, int err, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_RESCANNED, .result = err);
}

/* A rescan is wanted now (a sidecar's watched processes all exited, SIGHUP): the next action is one. */
static inline void decide_rescan_wanted(struct decide *d)
{
	DECIDE_TELL(d, 0, .kind = DECIDE_EV_RESCAN_WANTED);
}

/* The agent got SIGTERM (pod deletion) or SIGINT. A second one drains at once. */
static inline void decide_terminate(struct decide *d, int64_t now)
{
	DECIDE_TELL(d, now, .kind = DECIDE_EV_TERMINATE);
}

/* Drain now, whatever the apps do (REASON_DRAIN_FILE, ...); false: already draining or asked to. */
static inline bool decide_drain_now(struct decide *d, enum decide_reason reason, int64_t now)
{
	return DECIDE_TELL(d, now, .kind = DECIDE_EV_DRAIN_NOW, .reason = reason);
}

/* ---- decisions ------------------------------------------------------------------ */

int decide_new(const struct decide_config *cfg, int64_t now, struct decide **out);
void decide_free(struct decide *d);

/*
 * The next action, or false when there is nothing to do before
 * decide_deadline(). The engine carries each action out and asks again at
 * once, in the same turn of its loop, until this says false or gives an
 * urgent action (then the loop turns first): so decide knows whether its
 * last rescan is of this turn, and asks for another (rescan_first) with an
 * action that reads the processes from it (DECIDE_WATCH, DECIDE_SIGNAL_APP
 * to all).
 */
bool decide_next(struct decide *d, int64_t now, struct decide_action *act);
/* When decide_next should be asked again at the latest; INT64_MAX: only on an event. */
int64_t decide_deadline(struct decide *d, int64_t now);
/*
 * Whether a new process is expected (an app or sidecar not seen yet, a
 * restart, a container still pending, start-up without --apps): then the
 * agent watches the pid namespace's counter and tells decide_pids_moved(),
 * so that a container living less than a rescan interval is not missed.
 */
bool decide_expects_process(const struct decide *d, int64_t now);
/*
 * A look at the pid counter that comes this much later than the one before
 * (ten of its 10 ms periods) is a stall: the agent was not given the
 * processor, and a container that lived less than that may have come and
 * gone unseen. The engine tells it (DECIDE_EV_STALLED); decide says so in
 * the log, and the longest is in the summary (stalled_ms).
 */
#define DECIDE_STALL_US (100 * 1000)

/* ---- views: what decide knows, for the summary, the engine and the tests -------- */

struct decide_view {
	enum decide_phase phase;
	int64_t started_us;
	int64_t term_us;        /* when the agent got SIGTERM (the pod's deletion): the hold began; 0: never */
	int64_t decided_us;     /* when the apps were found done: the drain started; 0: not yet */
	enum decide_reason reason; /* why the drain started, REASON_NONE before */
	int exit_code;          /* 0, 1 when a sidecar could not be stopped (known once settled) */
	int64_t settled_us;     /* every sidecar settled; 0: not yet */
	unsigned polled_most;   /* the most processes watched by polling at any time */
	int64_t stalled_most_us; /* the longest stall while a process was expected (DECIDE_EV_STALLED); 0: none */
	bool ready_written;     /* the ready file was written, or the command that waited for it started */
	bool ready_expired;     /* --ready-timeout passed first */
};

enum decide_app_state {
	DECIDE_APP_RUNNING,
	DECIDE_APP_EXITED,      /* its root exited, or it reported that it finished */
	DECIDE_APP_RESTARTED,   /* OnFailure: a later container of the same name replaced it */
};

struct decide_app_view {
	unsigned id;            /* the container's id; 0: known only from its report; DECIDE_APP_COMMAND */
	const char *name;
	enum decide_app_state state;
	int code;               /* exit code, 128 + signal, or DECIDE_CODE_* */
	bool gave_up;           /* OnFailure: no restart came within --restart-grace */
	const char *report;     /* the apps/NAME matched to it, NULL */
	int reported;           /* the code in that report, -1: none */
	int signal;             /* the last signal rearguard sent it (--on-sidecar-exit=fail), 0: none */
	int64_t seen_us, exited_us;
};

enum decide_native_state {
	DECIDE_NATIVE_RUNNING,
	DECIDE_NATIVE_EXITED,
	DECIDE_NATIVE_RESTARTED, /* a later container took its place: the kubelet restarted it */
};

struct decide_native_view {
	unsigned id;
	const char *name;       /* its spec's name, else its root's */
	enum decide_native_by by;
	enum decide_native_state state;
	int64_t seen_us, exited_us;
};

/* Where a sidecar is in its stop. */
enum decide_stage {
	DECIDE_SIDECAR_UP,      /* not being stopped (yet) */
	DECIDE_SIDECAR_STOPPING,
	DECIDE_SIDECAR_GONE,    /* its processes are gone */
	DECIDE_SIDECAR_FAILED,  /* it could not be stopped */
};

struct decide_sidecar_view {
	const char *name;
	enum decide_stage stage;
	const char *outcome;    /* for the summary: "stopped", "killed", "not-found", ... */
	bool not_permitted;     /* failed: a signal to it was not permitted (outcome "not-permitted") */
	bool seen;              /* a process of it was ever seen */
	bool counts;            /* it is the pod's: named with --sidecar, or detection saw it */
	bool ready;
	int64_t ready_us;       /* when it turned ready; 0: not yet */
	unsigned ready_polls;
	int ready_last;         /* the last poll's result: status or -errno; 0: none yet */
	int64_t stop_sent_us, gone_us; /* 0: not yet */
	int64_t deadline_us;    /* the current step's, while stopping */
	int exit_code;          /* its containers' roots': the first non-zero, else 0; or DECIDE_CODE_* */
	enum decide_fate fate;  /* what its stop signal did to its roots, as looked at before it went */
	const char *program;    /* under rearguard sidecar: how its program ended (exited:N, ...), NULL */
	unsigned requests;      /* drain and stop requests made */
	int statuses[DECIDE_STATUSES_MAX]; /* the first ones' results: status or -errno */
};

void decide_view(const struct decide *d, struct decide_view *v);
size_t decide_app_count(const struct decide *d);
/*
 * App i (0 <= i < decide_app_count), in the order they were seen. An index
 * decide does not have gives false and a view of zeroes (an event about it
 * is ignored the same way); so it does for a sidecar and a native.
 */
bool decide_app_view(const struct decide *d, size_t i, struct decide_app_view *v);
/* Sidecar k, in --sidecar order. */
bool decide_sidecar_view(const struct decide *d, size_t k, struct decide_sidecar_view *v);
size_t decide_native_count(const struct decide *d);
/* Native sidecar container i (0 <= i < decide_native_count), in the order they were seen. */
bool decide_native_view(const struct decide *d, size_t i, struct decide_native_view *v);
/*
 * Whether a container named name, first seen at since, is the kubelet's
 * restart of a native sidecar: one of that name (known by start order or
 * by an earlier restart; a spec's native comes back by its spec) exited
 * before since, and no later container took its place yet.
 */
bool decide_native_restarted(const struct decide *d, const char *name, int64_t since);
/* How a native was known, in one word for the log and the summary: spec, first, restart. */
const char *decide_native_known_by(enum decide_native_by by);

/*
 * A request's result in one word for the summary (200, "refused",
 * "timeout", "no-answer", "error"; NULL for 0, no result) and in a phrase
 * for the log ("answered 503", "connection refused", ...).
 */
const char *decide_result_word(int result, char buf[16]);
const char *decide_result_phrase(int result, char buf[64]);

/* ---- notes: what decide says, for the sink (notes.c words them) ------------------ */

enum decide_note_kind {
	/* apps */
	NOTE_APP_RESTARTED,        /* app, container, other (the one it replaces) */
	NOTE_RESTART_WAIT,         /* app, container, code (failed, or unknown), us: how long at most; always:
				      under restartPolicy Always, whatever the code, with no limit (us 0) */
	NOTE_CODES_DIFFER,         /* app, container, report, reported, code (the kernel's, which counts) */
	NOTE_REPORT_ALONE,         /* report: matches no app container, an app of its own */
	NOTE_REPORTED,             /* app, container, report, code; flag: its process still runs */
	NOTE_APP_NOT_TRACKED,      /* app: out of memory; the drain waits (it may be an app not done) */
	NOTE_REPORT_NOT_TRACKED,   /* report: out of memory */
	NOTE_RESTART_GIVEN_UP,     /* app, container, us: --restart-grace */
	NOTE_CODE_UNPUBLISHED,     /* app, container: the kernel never gave its code */
	/* the pod */
	NOTE_RESCAN_FAILED,        /* result */
	NOTE_RESCAN_WORKS,
	NOTE_STALLED,              /* us: how long the agent did not run while a container was expected */
	NOTE_TERMINATE,            /* us: --term-grace */
	NOTE_TERMINATE_DRAINING,   /* a signal while draining */
	NOTE_RESUME_APPS_DONE,     /* an earlier run decided the apps were done: drain now */
	NOTE_RESUME_DONE,          /* an earlier run finished: exit */
	NOTE_SIDECAR_WAIT,         /* text: the sidecars' names, us: --sidecar-wait */
	NOTE_SIDECAR_WAIT_OVER,    /* us: waited */
	NOTE_SIDECAR_WAIT_EXPIRED, /* text: the names, us: --sidecar-wait */
	NOTE_DRAIN,                /* reason, count: apps seen, us: the limit that ran out (startup, term);
				      sidecar: the one that failed (sidecar-exited); limit_us: how long the
				      sidecars were held for the apps since SIGTERM (0: no SIGTERM) */
	NOTE_ALWAYS_KEPT,          /* reason: a drain that restartPolicy Always refuses before the pod's
				      deletion (drain-file, resume, startup-timeout); us: --startup-timeout */
	/* readiness */
	NOTE_READY,                /* sidecar, us: after start, count: polls; flag: without a ready URL */
	NOTE_NOT_READY_YET,        /* sidecar, result, us: next poll in */
	NOTE_ALL_READY,            /* the ready file is to be written */
	NOTE_ALL_READY_COMMAND,    /* the command (run --drain) is to start */
	NOTE_ALL_READY_NO_FILE,    /* no file protocol: nothing to write */
	NOTE_NOT_READY_COMMAND,    /* sidecar, text: its ready URL, us: the timeout */
	NOTE_NONE_DETECTED,        /* us: --ready-timeout */
	NOTE_NOT_READY,            /* text: "name (why), ...", us: --ready-timeout */
	NOTE_STOP_ENDPOINT_SHUT,   /* sidecar, text: its stop URL: ready, but the endpoint refuses */
	/* files */
	NOTE_WRITTEN_AFTER_ALL,    /* file, count: attempts */
	NOTE_WRITE_FAILED,         /* file, result, count: attempts, us: the next try in */
	NOTE_DONE_GIVEN_UP,        /* result, us: how long it was tried */
	/* the stop */
	NOTE_STOP_ACCEPTED,        /* sidecar, result, us: --stop-timeout */
	NOTE_STOP_REFUSED,         /* sidecar, result (blind: no signal can follow) */
	NOTE_STOP_NO_TIME,         /* sidecar, result */
	NOTE_STOP_RETRY,           /* sidecar, result, count: attempt, us: the next in */
	NOTE_DRAIN_ACCEPTED,       /* sidecar, result, us: drain-time */
	NOTE_DRAIN_FAILED,         /* sidecar, result */
	NOTE_PORT_CLOSED,          /* sidecar: no longer accepts connections */
	NOTE_NO_SIGNAL_BLIND,      /* sidecar: no stop URL, and its processes are not visible */
	NOTE_BLIND_TIMEOUT,        /* sidecar, us: --stop-timeout; flag: the stop was accepted */
	NOTE_SIGTERM_WAS_STOP,     /* sidecar, us: --stop-timeout, limit: --kill-after */
	NOTE_SENDING_SIGTERM,      /* sidecar, us: --stop-timeout */
	NOTE_SENDING_SIGKILL,      /* sidecar */
	NOTE_KILL_FAILED,          /* sidecar: still there after SIGKILL */
	NOTE_SIGNAL_RETRY,         /* sidecar, result */
	NOTE_SIGNAL_NOT_PERMITTED, /* sidecar, signo */
	NOTE_SIGNAL_FAILED,        /* sidecar, result */
	NOTE_CATCHES,              /* sidecar, signo, us: waited */
	NOTE_CATCHES_UNKNOWN,      /* sidecar, signo, result */
	NOTE_CATCHES_NOT,          /* sidecar, signo, us: the wait */
	NOTE_CATCHES_WAIT,         /* sidecar, signo, us: the wait, limit: seen ago */
	NOTE_STOP_FATE,            /* sidecar, signo, result: the fate (enum decide_fate), code: the exit
				      code it makes, flag: under Never */
	NOTE_PROGRAM_ENDED,        /* sidecar, text: how its program ended, code: the container's */
	/* the sidecars' exits */
	NOTE_SIDECAR_EXITED_EARLY, /* sidecar, container, pid; flag: after the apps were done */
	NOTE_SIDECAR_CODE,         /* sidecar, code, text: the fix */
	NOTE_SIDECAR_DIED,         /* sidecar, code: it exited while the apps ran, no stop sent; flag: under
				      Never, always: under Always; hint: --on-sidecar-exit=fail would act on it */
	/* natives, and the apps stopped after a sidecar failed */
	NOTE_NATIVE_SEEN,          /* text: its name, container, by: how it is known (decide_native_known_by);
				      flag: the kubelet's restart of one that exited */
	NOTE_NATIVE_EXITED,        /* text: its name, container */
	NOTE_NATIVE_NOT_LISTED,    /* text: its name: out of memory */
	NOTE_APPS_STOP,            /* sidecar: it failed; the apps are stopped, us: --kill-after */
	NOTE_APPS_STOP_NOT,        /* sidecar, kept: why the apps are not stopped */
	NOTE_APP_SIGNAL_RETRY,     /* app, container, result */
	NOTE_APP_SIGNAL_NOT_PERMITTED, /* app, container */
	NOTE_APP_SIGNAL_FAILED,    /* app, container, result */
	/* the end */
	NOTE_STOP_FAILED,          /* code: the summary's exit code (run --drain: not every sidecar stopped) */
	NOTE_IGNORED,              /* event: what came and changed nothing; sidecar when it was about one */
};

/* Why --on-sidecar-exit=fail leaves the apps alone after a sidecar failed. */
enum decide_apps_kept {
	APPS_KEPT_ON_FAILURE, /* under OnFailure the kubelet restarts the sidecar (and would restart the apps) */
	APPS_KEPT_EXIT_0,     /* it exited 0: its own choice, no failure */
	APPS_KEPT_DELETED,    /* the pod is being deleted: the kubelet stops the apps */
	APPS_KEPT_ALWAYS,     /* under Always the kubelet restarts the sidecar (and would restart the apps) */
};

struct decide_note {
	enum decide_note_kind kind;
	const char *sidecar;     /* its name, or NULL */
	size_t k;                /* its index */
	const char *app;         /* an app's name */
	unsigned container, other;
	const char *report;      /* an apps/NAME */
	enum decide_reason reason; /* NOTE_DRAIN */
	enum decide_native_by by;  /* NOTE_NATIVE_SEEN */
	enum decide_apps_kept kept; /* NOTE_APPS_STOP_NOT */
	const char *text;        /* names, a URL, a fix: see the kind */
	int code, reported;      /* exit codes */
	int result;              /* an HTTP result or -errno */
	int signo;
	int pid;
	enum protocol_file file;
	enum decide_event_kind event;
	int64_t us, limit_us;    /* durations */
	unsigned count;
	bool flag;
	bool always;             /* under restartPolicy Always (NOTE_RESTART_WAIT, NOTE_SIDECAR_DIED) */
	bool blind;              /* the sidecar's processes are not visible: its port confirms its stop */
	bool hint;               /* see the kind */
};

/* An event's name, for the note that says it was ignored. */
const char *decide_event_name(enum decide_event_kind kind);

#endif
