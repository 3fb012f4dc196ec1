/*
 * Every decision the agent takes, in one place and without I/O: it is told
 * what happened (a container appeared, a root exited, a signal arrived, a
 * stop signal was refused, an HTTP request finished, a sidecar's processes
 * are gone) and answers with the next action to carry out. Every timeout,
 * retry and poll is a deadline here. The unit tests drive it with synthetic
 * events and clocks; the agent drives it with the real ones.
 *
 *	decide_init(&d, &cfg, now);
 *	... decide_app_seen(&d, id, "job", now); ...
 *	while (decide_next(&d, now, &act))
 *		carry out act (and report results: decide_rescanned, decide_http_result, ...);
 *	arm one timer for decide_deadline(&d);
 *
 * Times are monotonic microseconds. It logs each decision with its reason.
 */
#ifndef RG_DECIDE_H
#define RG_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DECIDE_NAME_MAX 64
#define DECIDE_CODE_PENDING (-2) /* exited; the status may still come */
#define DECIDE_CODE_UNKNOWN (-1) /* exited; the status will never be known */

enum restart_policy { POLICY_NEVER, POLICY_ON_FAILURE };

#define DECIDE_STATUSES_MAX 8 /* drain and stop results kept per sidecar */

struct decide_sidecar_config {
	char name[DECIDE_NAME_MAX];
	int stop_signal;       /* the stop request when there is no stop_url; 0 with one */
	const char *ready_url; /* NULL: ready once a process of it is seen */
	const char *drain_url; /* NULL: no drain step */
	int64_t drain_time_us; /* waited after an accepted drain */
	const char *stop_url;  /* NULL: stop with stop_signal */
};

struct decide_config {
	enum restart_policy policy;
	unsigned apps_expected; /* 0: not given */
	int64_t startup_timeout_us, restart_grace_us, term_grace_us;
	int64_t stop_timeout_us, kill_after_us;
	bool readiness;         /* poll readiness and have the ready file written */
	int64_t ready_timeout_us;
	size_t nsidecars;
	const struct decide_sidecar_config *sidecars; /* in --sidecar order */
};

enum decide_phase { PHASE_WATCHING, PHASE_CONFIRMING, PHASE_DRAINING, PHASE_DONE };

struct decide_app {
	unsigned id;            /* the container's id; 0: known only from its apps/NAME report */
	char name[DECIDE_NAME_MAX];
	bool exited;            /* its root exited, or it reported that it finished */
	bool superseded;        /* OnFailure: a later container of the same name replaced it */
	bool gave_up;           /* OnFailure: no restart came within --restart-grace */
	int code;               /* exit code, 128 + signal, or DECIDE_CODE_* */
	bool kernel_code;       /* code came from the kernel (it wins over a report) */
	char reports_as[DECIDE_NAME_MAX]; /* the NAME its `rearguard run` reports as, "" */
	char report[DECIDE_NAME_MAX]; /* the apps/NAME matched to it, "" */
	int reported;           /* the code in that report, -1: none */
	int64_t seen_us, exited_us;
};

/* A report waiting for the rescan that comes before it is matched to an app. */
struct decide_report {
	char name[DECIDE_NAME_MAX];
	int code;
};

enum sidecar_state {
	SC_UP,          /* not being stopped yet */
	SC_WATCHING,    /* its processes are being watched; the stop request comes next */
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
	int err;                    /* -errno that made it fail (-EPERM), 0 */
	int last_signal;
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

	/* HTTP while stopping. */
	bool http_inflight;         /* a drain, stop or gone probe is in flight */
	bool stop_accepted;         /* the stop URL answered 2xx */
	bool stop_refused;          /* it answered 4xx: fall back to a signal */
	int64_t retry_us;           /* when the next stop request or gone probe is due */
	int64_t backoff_us;
	unsigned requests;          /* drain and stop requests made */
	int statuses[DECIDE_STATUSES_MAX]; /* the first ones' results: status or -errno */
};

enum decide_action_kind {
	DECIDE_RESCAN,    /* rescan /proc, report what changed, then decide_rescanned() */
	DECIDE_APPS_DONE, /* the apps are done (reason): the drain starts */
	DECIDE_WATCH,     /* watch every process of sidecar; decide_sidecar_gone() when none is left */
	DECIDE_SIGNAL,    /* send signo to every process of sidecar; decide_signal_result() */
	DECIDE_HTTP,      /* make the request (purpose, url, timeouts); decide_http_result() */
	DECIDE_WRITE_READY, /* every sidecar is ready: write the ready file */
	DECIDE_EXIT,      /* write the summary, exit with exit_code */
};

enum decide_http_purpose {
	DECIDE_HTTP_READY, /* GET the ready URL: 2xx is ready */
	DECIDE_HTTP_DRAIN, /* POST the drain URL */
	DECIDE_HTTP_STOP,  /* POST the stop URL */
	DECIDE_HTTP_GONE,  /* connect to the ready URL (else the stop URL), send nothing: refused is gone */
};

struct decide_action {
	enum decide_action_kind kind;
	size_t sidecar;
	int signo;
	int exit_code;
	const char *reason;
	enum decide_http_purpose purpose;
	const char *url;
	int64_t connect_timeout_us, timeout_us;
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
	int64_t last_rescan_us, next_rescan_us;
	unsigned pending_containers; /* containers whose runtime has not exec'd yet */
	struct decide_app *apps;
	size_t napps, capapps;
	struct decide_report *reports;
	size_t nreports, capreports;
	struct decide_sidecar *sidecars;
	size_t current;         /* the sidecar being stopped: reverse --sidecar order */
	int64_t settled_us;     /* every sidecar settled; the exit may wait for exit codes */
	int exit_code;
	bool blind;             /* the sidecars' processes cannot be seen: stops are confirmed over HTTP */
	bool ready_written;     /* DECIDE_WRITE_READY was given */
	bool ready_expired;     /* --ready-timeout passed first */
};

int decide_init(struct decide *d, const struct decide_config *cfg, int64_t now);
void decide_free(struct decide *d);

/* An app container appeared (name: its root's name, the identity across restarts). */
void decide_app_seen(struct decide *d, unsigned id, const char *name, int64_t now);
/* Its root exited; the status follows with decide_app_status(). */
void decide_app_exited(struct decide *d, unsigned id, int64_t now);
/* code: exit code, 128 + signal, or DECIDE_CODE_UNKNOWN. */
void decide_app_status(struct decide *d, unsigned id, int code, int64_t now);
/* The container turned out not to be an app (a sidecar's process appeared in it). */
void decide_app_forget(struct decide *d, unsigned id);
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

void decide_sidecar_seen(struct decide *d, size_t sidecar);
/* Every process of the sidecar is gone (after DECIDE_WATCH). */
void decide_sidecar_gone(struct decide *d, size_t sidecar, int64_t now);
/* The outcome of DECIDE_SIGNAL: 0, or -errno (-EPERM: not allowed). */
void decide_signal_result(struct decide *d, size_t sidecar, int err, int64_t now);

/*
 * The outcome of DECIDE_HTTP: an HTTP status, 0 when a DECIDE_HTTP_GONE
 * probe connected, or -errno when no answer came (-ECONNREFUSED,
 * -ETIMEDOUT, ...).
 */
void decide_http_result(struct decide *d, size_t sidecar, enum decide_http_purpose purpose, int result, int64_t now);

/*
 * The sidecars' processes cannot be seen (rearguard drain in a pod without
 * a shared PID namespace): a stop is done when the stop URL answered 2xx
 * and the sidecar's ready URL (else its stop URL) stops accepting
 * connections. A sidecar stopped by a signal cannot be stopped at all.
 */
void decide_blind(struct decide *d);

/* Containers still showing the runtime's init; while any, rescans are quick. */
void decide_pending(struct decide *d, unsigned n);
void decide_rescanned(struct decide *d, int64_t now);

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

#endif
