/*
 * Every decision, and every deadline, in one place and without I/O. It is
 * told what happened (a container appeared, a root exited, an exit code
 * came in, a report arrived, a rescan or a file write succeeded or failed,
 * an HTTP request finished, a sidecar's processes are gone, a signal
 * arrived) and answers with the next action to carry out. Each action's
 * result comes back as one of those events; until it does, the action is
 * not counted as done. The unit tests drive it with synthetic events and
 * clocks; the agent with the real ones.
 *
 *	decide_init(&d, &cfg, now);
 *	... decide_app_seen(&d, id, "job", now); ...
 *	while (decide_next(&d, now, &act))
 *		carry out act, and report its result (decide_rescanned,
 *		decide_http_result, decide_written, decide_signal_result, ...);
 *	arm one timer for decide_deadline(&d, now);
 *
 * Times are monotonic microseconds. decide logs each decision with its
 * reason (see docs/decisions.md for why it logs rather than describes).
 *
 * The drain stops the sidecars one by one, in reverse order. For each, the
 * stop goes out first where it can: a stop or drain request is sent before
 * the sidecar's processes are collected and watched (DECIDE_WATCH), since
 * the start time of each process keeps that safe; a signal needs the
 * watches first, for it goes through them.
 */
#ifndef RG_DECIDE_H
#define RG_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DECIDE_NAME_MAX 64
#define DECIDE_CODE_PENDING (-2) /* exited; the status may still come */
#define DECIDE_CODE_UNKNOWN (-1) /* exited; the status will never be known */
#define DECIDE_APP_COMMAND 0xffffffffu /* the id of run --drain's command: no container of the pod */

enum restart_policy { POLICY_NEVER, POLICY_ON_FAILURE };
/* --on-sidecar-exit: what a sidecar's failure while the apps run does (Never only). */
enum sidecar_exit_policy {
	SIDECAR_EXIT_WARN, /* it is logged, with what it means */
	SIDECAR_EXIT_FAIL, /* the apps are stopped, as the kubelet stops a container, so that the pod fails now */
};

#define DECIDE_STATUSES_MAX 8 /* drain and stop results kept per sidecar */

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
	bool native;           /* a native sidecar's spec: its containers are told by decide_native_seen(), and it
				  is never waited for, polled for readiness, nor stopped */
	const char *exit_fix;  /* what to do when it exits non-zero (for the warning), or NULL */
	enum decide_confirm confirm;
};

struct decide_config {
	enum restart_policy policy;
	unsigned apps_expected; /* 0: not given */
	int64_t startup_timeout_us, restart_grace_us, term_grace_us;
	int64_t sidecar_wait_us; /* apps done: how long to wait for a named sidecar not seen yet */
	int64_t stop_timeout_us, kill_after_us; /* kill_after_us is also the apps' grace after their SIGTERM */
	enum sidecar_exit_policy on_sidecar_exit;
	bool readiness;         /* poll readiness; DECIDE_WRITE of DECIDE_FILE_READY when all are ready */
	int64_t ready_timeout_us;
	bool ready_gates_apps;  /* no app can start before ready (run --drain): its expiry ends the wait */
	bool files;             /* the file protocol is there: apps-done and done are written */
	size_t nsidecars;
	const struct decide_sidecar_config *sidecars; /* in --sidecar order */
};

enum decide_phase { PHASE_WATCHING, PHASE_CONFIRMING, PHASE_DRAINING, PHASE_DONE };

struct decide_app {
	unsigned id;            /* the container's id; 0: known only from its apps/NAME report */
	char name[DECIDE_NAME_MAX];
	bool exited;            /* its root exited, or it reported that it finished */
	bool superseded;        /* OnFailure: a later container of the same name replaced it */
	bool restart;           /* OnFailure: it replaced a failed container of the same name */
	bool gave_up;           /* OnFailure: no restart came within --restart-grace */
	int code;               /* exit code, 128 + signal, or DECIDE_CODE_* */
	bool kernel_code;       /* code came from the kernel (it wins over a report) */
	bool root_exited;       /* its root was seen to exit: the kernel may give the code */
	char reports_as[DECIDE_NAME_MAX]; /* the NAME its `rearguard run` reports as, "" */
	char report[DECIDE_NAME_MAX]; /* the apps/NAME matched to it, "" */
	int reported;           /* the code in that report, -1: none */
	int64_t seen_us, exited_us;
	int64_t status_next_us, status_backoff_us; /* when to ask the kernel for the code again */
	/* --on-sidecar-exit=fail: SIGTERM to its main process, then SIGKILL to every process. */
	int signal;             /* the last signal sent to it, 0 */
	int64_t signal_next_us; /* when the next one is due */
	int signal_err;         /* -errno that keeps signals from it (-EPERM), 0 */
};

/* How a native sidecar's container was known. */
enum decide_native_by {
	NATIVE_BY_SPEC,    /* a sidecar spec that says native matches it */
	NATIVE_BY_START,   /* --first: it ran before the agent started, and no plain sidecar's spec matches it */
	NATIVE_BY_RESTART, /* it appeared after a native one of the same name exited: the kubelet's restart */
};

/*
 * A native sidecar's container: an init container with restartPolicy:
 * Always, which the kubelet starts before the regular containers, restarts
 * when it exits, and stops after them. Neither an app nor to be stopped:
 * it is only listed.
 */
struct decide_native {
	unsigned id;
	char name[DECIDE_NAME_MAX]; /* its spec's name, else its root's */
	enum decide_native_by by;
	bool exited;
	bool replaced;          /* a later container took its place (NATIVE_BY_RESTART) */
	int64_t seen_us, exited_us;
};

/* A report waiting for the rescan that comes before it is matched to an app. */
struct decide_report {
	char name[DECIDE_NAME_MAX];
	int code;
};

enum sidecar_state {
	SC_UP,          /* not being stopped yet */
	SC_WATCHING,    /* no live container of it was known: its processes are looked for first */
	SC_DRAINING,    /* drain request sent, or drain-time running; the stop request comes next */
	SC_STOPPING,    /* stop request sent (and retried), waiting up to --stop-timeout */
	SC_TERMINATING, /* SIGTERM sent, waiting up to --kill-after */
	SC_KILLING,     /* SIGKILL sent */
	SC_GONE,
	SC_FAILED,
};

struct decide_sidecar {
	enum sidecar_state state;
	enum sidecar_state gone_from; /* the state it was in when its processes were gone */
	bool seen;                  /* a process of it was ever seen */
	int64_t seen_us;            /* when a container of it was last seen */
	unsigned containers;        /* its containers seen and not exited */
	bool watched;               /* DECIDE_WATCH was given: its processes are collected */
	int err;                    /* -errno that made it fail (-EPERM), 0 */
	int last_signal;
	bool signal_due;            /* last_signal is to be sent (again, after a transient failure) */
	int64_t deadline_us;
	int64_t stop_sent_us, gone_us; /* 0: not yet */

	/* Readiness, before the drain. */
	bool ready;
	bool ready_inflight;
	int64_t ready_us;           /* when it turned ready; 0: not yet */
	int64_t ready_next_us;      /* when the next poll is due */
	int64_t ready_backoff_us;
	unsigned ready_polls;
	int ready_last;             /* the last poll's result: status or -errno; 0: none yet */
	bool check_due, check_inflight; /* DECIDE_HTTP_CHECK, once it is ready and was seen */
	bool checked;               /* that check was made due once */
	bool no_check;              /* pre-flight said it all */

	/* Just seen: its roots may not handle the stop signal yet (no handler installed). */
	int64_t catch_from_us;      /* the wait for a handler began; 0: none */
	int64_t catch_next_us;      /* when to look again */
	bool catch_inflight;        /* DECIDE_CATCHES given, decide_sidecar_catches() not yet */
	unsigned catch_looks;       /* DECIDE_CATCHES given so far */
	bool catch_over;            /* looked at (or no need): the stop signal may go */
	int catch_result;           /* the last look: 1 catches, 0 not yet, -errno */

	/* HTTP while stopping. */
	bool http_inflight;         /* a drain, stop or gone probe is in flight */
	bool stop_accepted;         /* the stop URL answered 2xx */
	bool stop_refused;          /* it answered 4xx: fall back to a signal */
	int64_t retry_us;           /* when the next stop request or gone probe is due */
	int64_t backoff_us;
	unsigned requests;          /* drain and stop requests made */
	int statuses[DECIDE_STATUSES_MAX]; /* the first ones' results: status or -errno */

	/* Its own exit code: its containers' roots', the first non-zero one, else 0. */
	int exit_code;              /* DECIDE_CODE_PENDING: none exited yet, or on its way */
	unsigned codes_pending;     /* roots exited whose code has not come in */
	unsigned died;              /* of those, roots that exited while the apps ran, with no stop sent */
	int64_t exited_us;          /* the last root's exit */
	int64_t status_next_us, status_backoff_us;
};

/* The files of the protocol the agent writes. */
enum decide_file { DECIDE_FILE_READY, DECIDE_FILE_APPS_DONE, DECIDE_FILE_DONE, DECIDE_NFILES };

struct decide_file_state {
	bool wanted;     /* to be written */
	bool inflight;   /* DECIDE_WRITE given, decide_written() not yet */
	bool written;
	int err;         /* the last failure, 0 */
	unsigned failures;
	int64_t next_us, backoff_us, first_failure_us;
};

enum decide_action_kind {
	DECIDE_RESCAN,    /* rescan /proc, report what changed, then decide_rescanned() */
	DECIDE_STATUS,    /* ask the kernel for the missing exit codes of exited roots: decide_app_status() */
	DECIDE_POLL,      /* look at the processes watched without a pidfd (exits are reported as usual) */
	DECIDE_APPS_DONE, /* the apps are done (reason): the drain starts; nothing to carry out */
	DECIDE_WATCH,     /* collect and watch every process of sidecar; decide_sidecar_gone() when none is left */
	DECIDE_SIGNAL,    /* send signo to the roots of sidecar's containers (all: to every process; the
			     watches come first then); decide_signal_result() */
	DECIDE_SIGNAL_APP, /* send signo to the main process of app container app (all: to every process of it,
			      from a fresh look at /proc); decide_app_signal_result() */
	DECIDE_CATCHES,   /* whether the roots of sidecar catch signo and sleep (/proc/PID/status):
			     decide_sidecar_catches() */
	DECIDE_HTTP,      /* make the request (purpose, url, timeouts); decide_http_result() */
	DECIDE_WRITE,     /* write file (ready: or start the command that waits for it); decide_written() */
	DECIDE_EXIT,      /* the summary is out: exit with exit_code */
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
	bool all;               /* DECIDE_SIGNAL to every process, not the roots alone */
	int exit_code;
	const char *reason;
	enum decide_http_purpose purpose;
	enum decide_file file;
	const char *url;
	int64_t connect_timeout_us, timeout_us;
	bool urgent;            /* a stop on its way: let it out before anything else is done */
};

struct decide {
	struct decide_config cfg;
	enum decide_phase phase;
	int64_t started_us;
	int64_t decided_us;     /* when the apps were found done: the drain started */
	const char *reason;     /* why the drain started */
	bool confirmed;         /* the rescan before concluding has been done */
	bool drain_requested;
	const char *drain_reason;
	int64_t term_us;        /* when SIGTERM arrived, 0: not yet */
	int64_t last_rescan_us; /* the last successful rescan */
	int64_t last_container_us; /* when the last new app container was seen (start-up lasts a while after) */
	bool rescan_inflight;
	bool pids_moved;        /* decide_pids_moved since the last rescan began */
	int rescan_err;         /* the last rescan failed with this; 0 */
	int64_t rescan_retry_us; /* after a failure: when to try again */
	unsigned pending_containers; /* containers whose runtime has not exec'd yet */
	unsigned polled;        /* processes watched without a pidfd */
	unsigned polled_most;   /* the most at any time, for the summary */
	int64_t next_poll_us;
	struct decide_app *apps;
	size_t napps, capapps;
	struct decide_report *reports;
	size_t nreports, capreports;
	struct decide_native *natives;
	size_t nnatives, capnatives;
	struct decide_sidecar *sidecars;
	size_t current;         /* the sidecar being stopped: reverse --sidecar order */
	int64_t settled_us;     /* every sidecar settled; the exit may wait for exit codes */
	int exit_code;
	struct decide_file_state files[DECIDE_NFILES];
	bool sidecars_ready;    /* every sidecar turned ready (before the drain) */
	bool ready_expired;     /* --ready-timeout passed first */
	int64_t sidecar_wait_from_us; /* apps done, a named sidecar not seen: the wait began; 0: none */
	bool sidecar_wait_over; /* it ended (each missing one was named in a warning) */
	int64_t apps_stop_us;   /* --on-sidecar-exit=fail: a sidecar failed and the apps are being stopped; 0: not */
	size_t apps_stop_for;   /* that sidecar */
};

int decide_init(struct decide *d, const struct decide_config *cfg, int64_t now);
void decide_free(struct decide *d);

/* An app container appeared (name: its root's name, the identity across restarts). */
void decide_app_seen(struct decide *d, unsigned id, const char *name, int64_t now);
/* Its root exited; the status follows with decide_app_status(). */
void decide_app_exited(struct decide *d, unsigned id, int64_t now);
/*
 * code: exit code (128 + signal), DECIDE_CODE_UNKNOWN (never known), or
 * DECIDE_CODE_PENDING (the kernel has not published it yet: asked again
 * later, as DECIDE_STATUS says).
 */
void decide_app_status(struct decide *d, unsigned id, int code, int64_t now);
/*
 * Its root exec'd another program (sh -c 'exec job'): the app's name is the
 * new one's, and under OnFailure it may now be the restart of a failed app
 * of that name (one seen before that app exited never is).
 */
void decide_app_renamed(struct decide *d, unsigned id, const char *name);
/* The container turned out not to be an app (a sidecar's process appeared in it). */
void decide_app_forget(struct decide *d, unsigned id);
/* The outcome of DECIDE_SIGNAL_APP: 0, or -errno (-EPERM: not allowed, logged with the fix; -EMFILE...: again). */
void decide_app_signal_result(struct decide *d, unsigned id, int err, int64_t now);
/* The app container runs `rearguard run`, which will report as apps/name. */
void decide_app_reports_as(struct decide *d, unsigned id, const char *name);
/*
 * apps/NAME says an app finished with code: it is done even if its process
 * still runs. While watching, the report is matched after the next rescan
 * (so that a container that just started is known), to: the app container
 * named NAME (or whose rearguard run reports as NAME); else the one that
 * reported as NAME before; else the only app container without a report;
 * else an app known only from the file. A code from the kernel wins over
 * the report (the kubelet acts on it); a difference is logged.
 */
void decide_app_report(struct decide *d, const char *name, int code, int64_t now);

/*
 * A native sidecar's container appeared (name: its spec's, else its root's;
 * by: how that is known), or its root exited. It is listed, and nothing
 * else: never an app, never waited for, never signalled.
 */
void decide_native_seen(struct decide *d, unsigned id, const char *name, enum decide_native_by by, int64_t now);
void decide_native_exited(struct decide *d, unsigned id, int64_t now);
/* It was taken for a native sidecar, but a plain sidecar's spec matches it now (its root exec'd). */
void decide_native_forget(struct decide *d, unsigned id);
/*
 * Whether a container named name, first seen at since, is the kubelet's
 * restart of a native sidecar: one of that name exited before since, and no
 * later container took its place yet.
 */
bool decide_native_restarted(const struct decide *d, const char *name, int64_t since);
/* How a native was known, in one word for the log and the summary: spec, first, restart. */
const char *decide_native_known_by(enum decide_native_by by);

/* A container of the sidecar appeared; its root exited (its code follows, as for apps). */
void decide_sidecar_seen(struct decide *d, size_t sidecar, int64_t now);
void decide_sidecar_exited(struct decide *d, size_t sidecar, int64_t now);
/* The code of one of its roots (DECIDE_CODE_PENDING: not yet; DECIDE_CODE_UNKNOWN: never). */
void decide_sidecar_status(struct decide *d, size_t sidecar, int code, int64_t now);
/* Every process of the sidecar is gone (after DECIDE_WATCH, or a port that refuses). */
void decide_sidecar_gone(struct decide *d, size_t sidecar, int64_t now);
/* Pre-flight already found that the sidecar's stop endpoint is missing: no DECIDE_HTTP_CHECK to say it again. */
void decide_sidecar_no_endpoint(struct decide *d, size_t sidecar);
/*
 * The outcome of DECIDE_CATCHES: 1 when every live root of the sidecar
 * catches (ignores, blocks) the signal and sleeps, 0 when one does not yet,
 * -errno when that could not be read.
 */
void decide_sidecar_catches(struct decide *d, size_t sidecar, int result, int64_t now);
/* The outcome of DECIDE_SIGNAL: 0, or -errno (-EPERM: not allowed; -EMFILE...: tried again). */
void decide_signal_result(struct decide *d, size_t sidecar, int err, int64_t now);

/*
 * The outcome of DECIDE_HTTP: an HTTP status, 0 when a DECIDE_HTTP_GONE
 * probe connected, or -errno when no answer came (-ECONNREFUSED,
 * -ETIMEDOUT, ...).
 */
void decide_http_result(struct decide *d, size_t sidecar, enum decide_http_purpose purpose, int result, int64_t now);

/* The outcome of DECIDE_WRITE: 0, or -errno (tried again with a backoff). */
void decide_written(struct decide *d, enum decide_file file, int err, int64_t now);

/* Containers still showing the runtime's init; while any, rescans are quick. */
void decide_pending(struct decide *d, unsigned n);
/* How many processes are watched by polling (no pidfd for them); while any, DECIDE_POLL comes. */
void decide_polling(struct decide *d, unsigned n);
/*
 * Whether a new process is expected (an app or sidecar not seen yet, a
 * restart, a container still pending, start-up without --apps): then the
 * agent watches the pid namespace's counter and tells decide_pids_moved(),
 * so that a container living less than a rescan interval is not missed.
 */
bool decide_expects_process(const struct decide *d, int64_t now);
/* A pid was handed out since the last rescan began: the next action is a rescan. */
void decide_pids_moved(struct decide *d);
/* The outcome of a rescan (DECIDE_RESCAN, or one the agent made itself): 0 or -errno. */
void decide_rescanned(struct decide *d, int err, int64_t now);

/* The agent got SIGTERM (pod deletion) or SIGINT. A second one drains at once. */
void decide_terminate(struct decide *d, int64_t now);
/* Drain now, whatever the apps do (reason: "drain-file", ...); false: already draining or asked to. */
bool decide_drain_now(struct decide *d, const char *reason, int64_t now);

/* The next action, or false when there is nothing to do before decide_deadline(). */
bool decide_next(struct decide *d, int64_t now, struct decide_action *act);
/* When decide_next should be asked again at the latest; INT64_MAX: only on an event. */
int64_t decide_deadline(const struct decide *d, int64_t now);

const char *decide_outcome(const struct decide_sidecar *sc);
size_t decide_app_count(const struct decide *d);
/* Whether the ready file (or the start it gates) was carried out. */
bool decide_ready_written(const struct decide *d);

/*
 * A request's result in one word for the summary (200, "refused",
 * "timeout", "no-answer", "error"; NULL for 0, no result) and in a phrase
 * for the log ("answered 503", "connection refused", ...).
 */
const char *decide_result_word(int result, char buf[16]);
const char *decide_result_phrase(int result, char buf[64]);

#endif
