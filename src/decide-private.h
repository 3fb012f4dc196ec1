/*
 * decide's own structures: nothing outside decide's files reads them (the
 * others read views, decide.h). Included by decide.c only.
 */
#ifndef RG_DECIDE_PRIVATE_H
#define RG_DECIDE_PRIVATE_H

#include "decide.h"

struct decide_app {
	unsigned id;            /* the container's id; 0: known only from its apps/NAME report */
	char name[DECIDE_NAME_MAX];
	bool exited;            /* its root exited, or it reported that it finished */
	bool superseded;        /* OnFailure: a later container of the same name replaced it */
	bool gave_up;           /* OnFailure: no restart came within --restart-grace */
	int code;               /* exit code, 128 + signal, or DECIDE_CODE_* */
	bool kernel_code;       /* code came from the kernel (it wins over a report) */
	bool root_exited;       /* its root was seen to exit: the kernel may give the code */
	char reports_as[DECIDE_NAME_MAX]; /* the NAME its `rearguard run` reports as, "" */
	char report[DECIDE_NAME_MAX]; /* the apps/NAME matched to it, "" */
	int reported;           /* the code in that report, -1: none */
	int64_t seen_us, exited_us;
	int64_t status_next_us, status_backoff_us; /* when to ask the kernel for the code again */
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
	int64_t exited_us;          /* the last root's exit */
	int64_t status_next_us, status_backoff_us;
};

struct decide_file_state {
	bool wanted;     /* to be written */
	bool inflight;   /* DECIDE_WRITE given, decide_written() not yet */
	bool written;
	int err;         /* the last failure, 0 */
	unsigned failures;
	int64_t next_us, backoff_us, first_failure_us;
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
	bool resumed_done;      /* an earlier run wrote done: exit at once */
	int64_t term_us;        /* when SIGTERM arrived, 0: not yet */
	int64_t last_rescan_us; /* the last successful rescan */
	int64_t last_container_us; /* when the last new app container was seen (start-up lasts a while after) */
	bool rescan_inflight;
	bool pids_moved;        /* decide_pids_moved since the last rescan began */
	int rescan_err;         /* the last rescan failed with this; 0 */
	int64_t rescan_retry_us; /* after a failure: when to try again */
	unsigned pending_containers; /* containers whose runtime has not exec'd yet */
	unsigned pod_containers; /* the pod's containers seen (for the termination log's share) */
	unsigned polled;        /* processes watched without a pidfd */
	unsigned polled_most;   /* the most at any time, for the summary */
	int64_t next_poll_us;
	struct decide_app *apps;
	size_t napps, capapps;
	/*
	 * Apps that could not be tracked (no memory): they may still run, so
	 * the apps are never done by themselves while there is one.
	 */
	unsigned lost_apps;
	struct decide_report *reports;
	size_t nreports, capreports;
	struct decide_sidecar *sidecars;
	size_t current;         /* the sidecar being stopped: reverse --sidecar order */
	int64_t settled_us;     /* every sidecar settled; the exit may wait for exit codes */
	int exit_code;
	bool command_over;      /* run --drain's command ended (or will never start) */
	int command_code;
	struct decide_file_state files[DECIDE_NFILES];
	bool sidecars_ready;    /* every sidecar turned ready (before the drain) */
	bool ready_expired;     /* --ready-timeout passed first */
	int64_t sidecar_wait_from_us; /* apps done, a named sidecar not seen: the wait began; 0: none */
	bool sidecar_wait_over; /* it ended (each missing one was named in a warning) */
};

#endif
