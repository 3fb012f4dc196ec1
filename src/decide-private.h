/*
 * decide's own structures and the steps its files share: decide.c (the
 * phases, rescans, the conclusion, the files, the end, the events'
 * dispatch), decide-apps.c (the apps, their reports and exit codes, their
 * restarts), decide-sidecar.c (each sidecar's readiness, stop and exit
 * code) and decide-natives.c (native sidecars, and the apps stopped after a
 * sidecar failed). Those four include this and nothing else does: the
 * others read views (decide.h), each beside the structure it views.
 *
 * A function one of them defines for the others starts with that file's
 * prefix: dapps_ (decide-apps.c), dside_ (decide-sidecar.c) and dnat_
 * (decide-natives.c); decide.c defines none, and this header's own helpers
 * start with dpriv_. So a name says where it lives, and none is taken
 * twice in the program. The structures and their constants are declared
 * here alone, and keep their names.
 *
 * The files call each other one way only: decide.c calls the three others,
 * decide-sidecar.c calls decide-natives.c (a sidecar failed: the apps may
 * be stopped), and decide-natives.c calls decide-apps.c (to find an app).
 *
 * Every step runs in a pass (struct pass). decide_next makes a pass with
 * an action to fill: the first step that is due takes it. decide_deadline
 * makes the same pass without one: then no step changes anything, and
 * each says instead when it will be due. A step's action and its deadline
 * come from the same lines, so the two cannot disagree.
 */
#ifndef RG_DECIDE_PRIVATE_H
#define RG_DECIDE_PRIVATE_H

#include "decide.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>

/* ---- apps ------------------------------------------------------------------ */

struct decide_app {
	unsigned id;            /* the container's id; 0: known only from its apps/NAME report */
	char name[DECIDE_NAME_MAX];
	bool exited;            /* its root exited, or it reported that it finished */
	bool superseded;        /* OnFailure: a later container of the same name replaced it */
	bool restart;           /* OnFailure: it replaced a failed container of the same name */
	bool gave_up;           /* OnFailure: no restart came within --restart-grace */
	int code;               /* exit code, 128 + signal, or DECIDE_CODE_* */
	bool kernel_code;       /* code came from the kernel (it wins over a report) */
	int64_t root_exited_us; /* its root was seen to exit (the kernel may give the code); 0: not yet */
	char reports_as[DECIDE_NAME_MAX]; /* the NAME its `rearguard run` reports as, "" */
	char report[DECIDE_NAME_MAX]; /* the apps/NAME matched to it, "" */
	int reported;           /* the code in that report, -1: none */
	int64_t seen_us, exited_us;
	int64_t status_next_us, status_backoff_us; /* when to ask the kernel for the code again; 0: asked enough */
	/* --on-sidecar-exit=fail: SIGTERM to its main process, then SIGKILL to every process. */
	int signal;             /* the last signal sent to it, 0 */
	int64_t signal_next_us; /* when the next one is due */
	int signal_err;         /* -errno that keeps signals from it (-EPERM), 0 */
};

/* A native sidecar's container: listed, never an app, never stopped. */
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

/* ---- a sidecar: readiness, stop, exit code ------------------------------------ */

/* Its readiness, before the drain. */
enum ready_state {
	READY_NOT,    /* not ready; with a ready URL, polled when next_us comes */
	READY_ASKING, /* a poll is in flight (one at a time) */
	READY_YES,    /* it answered 2xx, or (no ready URL) a process of it was seen */
};

/* The pre-flight look at its stop endpoint, once it is ready and was seen. */
enum check_state {
	CHECK_NOT_YET,
	CHECK_DUE,      /* DECIDE_HTTP_CHECK is to go */
	CHECK_ASKING,
	CHECK_DONE,     /* looked at, or pre-flight already said what there is to say */
};

struct sidecar_ready {
	enum ready_state state;
	int64_t at_us;          /* when it turned ready; 0: not yet */
	int64_t next_us;        /* when the next poll is due */
	int64_t backoff_us;
	unsigned polls;
	int last;               /* the last poll's result: status or -errno; 0: none yet */
	enum check_state check;
};

/* Where its stop is: the transition list in decide-sidecar.c says how it moves. */
enum stop_state {
	SC_UP,          /* not being stopped yet */
	SC_WATCHING,    /* no live container of it was known: its processes are looked for first */
	SC_DRAINING,    /* drain request sent, or drain-time running; the stop request comes next */
	SC_STOPPING,    /* stop request sent (and retried), waiting up to --stop-timeout */
	SC_TERMINATING, /* SIGTERM sent, waiting up to --kill-after */
	SC_KILLING,     /* SIGKILL sent */
	SC_GONE,        /* its processes are gone: settled */
	SC_FAILED,      /* it could not be stopped: settled */
};

/* Why a sidecar could not be stopped (SC_FAILED): its outcome in the summary. */
enum stop_failure {
	FAILURE_STILL_RUNNING, /* still-running: no stop worked in time, or a signal failed */
	FAILURE_NOT_PERMITTED, /* not-permitted: a signal was not permitted (EPERM) */
	FAILURE_NOT_VISIBLE,   /* not-visible: no stop URL, and no signal can reach its processes */
	FAILURE_STOP_REFUSED,  /* stop-refused: the stop URL said no, and no signal can reach it */
};

/* What the stop URL answered. */
enum stop_answer {
	ANSWER_NONE,     /* nothing yet, or a failure worth another try */
	ANSWER_ACCEPTED, /* 2xx: the processes (or the port) confirm the stop */
	ANSWER_REFUSED,  /* 4xx: a signal must do it */
};

/* The look at whether a sidecar that started only just now catches its stop signal yet. */
enum catch_state {
	CATCH_UNASKED,  /* not looked at: whether a look is needed is decided when the stop is due */
	CATCH_WAITING,  /* waiting for the next look (result: the last one's) */
	CATCH_LOOKING,  /* DECIDE_CATCHES given, its result not back */
	CATCH_OVER,     /* the stop signal may go */
};

struct sidecar_catch {
	enum catch_state state;
	int64_t from_us;        /* the wait for a handler began */
	int64_t next_us;        /* when to look again */
	unsigned looks;
	int result;             /* the last look: 1 catches, 0 not yet, -errno */
};

struct sidecar_stop {
	enum stop_state state;
	enum stop_state gone_from; /* the state it was in when its processes were gone */
	/*
	 * DECIDE_WATCH was given: its processes are collected. Set on the way
	 * out of SC_UP (by the watch, or after the first request or signal),
	 * never cleared.
	 */
	bool watched;
	enum stop_failure failure; /* SC_FAILED: why */
	int last_signal;
	/* last_signal failed for want of resources: sent again at retry_us (SC_STOPPING to SC_KILLING only). */
	bool signal_due;
	int64_t deadline_us;    /* of the current state: drain-time, --stop-timeout, --kill-after */
	int64_t stop_sent_us, gone_us; /* 0: not yet */
	struct sidecar_catch catch;
	enum decide_fate fate;  /* what the stop signal did to the roots (DECIDE_EV_FATE) */
	char program[32];       /* how its program ended under rearguard sidecar (DECIDE_EV_PROGRAM), "" */
	/* HTTP while stopping: one request or probe in flight at a time. */
	bool http_inflight;
	enum stop_answer answer;
	int64_t retry_us;       /* when the next stop request, gone probe or signal is due */
	int64_t backoff_us;
	unsigned requests;      /* drain and stop requests made */
	int statuses[DECIDE_STATUSES_MAX]; /* the first ones' results: status or -errno */
};

/* Its own exit code: its containers' roots', the first non-zero one, else 0. */
struct sidecar_exit {
	int code;               /* DECIDE_CODE_PENDING: none exited yet, or on its way */
	unsigned pending;       /* roots exited whose code has not come in */
	unsigned died;          /* of those, roots that exited while the apps ran, with no stop sent */
	int64_t exited_us;      /* the last root's exit */
	int64_t next_us, backoff_us; /* the next time the kernel is asked; backoff 0: not asked any more */
};

struct decide_sidecar {
	bool seen;              /* a process of it was ever seen */
	int64_t seen_us;        /* when a container of it was last seen */
	int64_t started_us;     /* when the youngest of its roots' programs began, as far as is known */
	unsigned containers;    /* its containers seen and not exited */
	struct sidecar_ready ready;
	struct sidecar_stop stop;
	struct sidecar_exit exit;
};

/* ---- files, and the whole ------------------------------------------------------ */

struct decide_write {
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
	enum decide_reason reason; /* why the drain started */
	bool confirmed;         /* the rescan before concluding has been done */
	enum decide_reason drain_reason; /* a drain was asked for, for this reason; REASON_NONE: not */
	bool resumed_done;      /* an earlier run wrote done: exit at once */
	int64_t term_us;        /* when SIGTERM arrived, 0: not yet */
	bool startup_said;      /* Always: the apps' --startup-timeout passed, and was said (no drain for it) */
	int64_t last_rescan_us; /* the last successful rescan */
	int64_t last_container_us; /* when the last new app container was seen (start-up lasts a while after) */
	bool rescan_inflight;
	bool pids_moved;        /* decide_pids_moved since the last rescan began */
	bool rescan_wanted;     /* DECIDE_EV_RESCAN_WANTED since the last rescan began */
	bool looked;            /* a rescan worked in this turn of the engine's loop (see decide_next) */
	bool turning;           /* decide_next said false or gave an urgent action: the loop turns before the next */
	int rescan_err;         /* the last rescan failed with this; 0 */
	int64_t rescan_retry_us; /* after a failure: when to try again */
	unsigned pending_containers; /* containers whose runtime has not exec'd yet */
	unsigned pod_containers; /* the pod's containers seen (for the termination log's share) */
	unsigned polled;        /* processes watched without a pidfd */
	unsigned polled_most;   /* the most at any time, for the summary */
	int64_t stalled_most_us; /* the longest stall while a process was expected, for the summary */
	int64_t stall_said_us;  /* the last stall said in the log: only one twice as long is said again */
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
	struct decide_native *natives;
	size_t nnatives, capnatives;
	struct decide_sidecar *sidecars;
	size_t current;         /* the sidecar being stopped: reverse --sidecar order */
	int64_t settled_us;     /* every sidecar settled; the exit may wait for exit codes */
	int exit_code;
	bool command_started;   /* DECIDE_START_COMMAND was given */
	bool command_over;      /* run --drain's command ended (or will never start) */
	int command_code;
	struct decide_write writes[PROTOCOL_NFILES]; /* the agent's files: ready, apps-done, done */
	bool sidecars_ready;    /* every sidecar turned ready (before the drain) */
	bool ready_expired;     /* --ready-timeout passed first */
	int64_t sidecar_wait_from_us; /* apps done, a named sidecar not seen: the wait began; 0: none */
	bool sidecar_wait_over; /* it ended (each missing one was named in a warning) */
	int64_t apps_stop_us;   /* --on-sidecar-exit=fail: a sidecar failed and the apps are being stopped; 0: not */
	size_t apps_stop_for;   /* that sidecar */
};

/* ---- passes ------------------------------------------------------------------- */

struct pass {
	int64_t now;
	struct decide_action *act; /* NULL: a plan (decide_deadline): nothing changes */
	int64_t next;              /* the earliest time a step will be due */
};

static inline int64_t dpriv_min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Whether when has come; when it has not, the pass learns when it will. */
static inline bool dpriv_reached(struct pass *p, int64_t when)
{
	if (when <= p->now)
		return true;
	p->next = dpriv_min64(p->next, when);
	return false;
}

/*
 * Whether to make a change (with or without an action) now. A real pass
 * makes it. A plan makes none: it learns that decide_next has something
 * to do now, which is all a deadline needs to know.
 */
static inline bool dpriv_go(struct pass *p)
{
	if (p->act)
		return true;
	p->next = dpriv_min64(p->next, p->now);
	return false;
}

/* ---- notes ---------------------------------------------------------------------- */

static inline void dpriv_say(const struct decide *d, const struct decide_note *n)
{
	if (d->cfg.sink)
		d->cfg.sink(d->cfg.sink_data, n);
}

#define SAY(d, ...) dpriv_say((d), &(const struct decide_note){ __VA_ARGS__ })
/* A note about sidecar idx: its name and index come with it. */
#define SAY_SC(d, idx, ...) SAY((d), .sidecar = (d)->cfg.sidecars[(idx)].name, .k = (idx), __VA_ARGS__)

/* Durations the files share: exit codes (apps and sidecars), a sidecar's connections, signals. */
#define CONNECT_TIMEOUT_US (1 * US_PER_S) /* on loopback a connect succeeds or is refused at once */
#define STATUS_FIRST_US (1 * US_PER_MS)   /* exit statuses: asked at once, then less and less often */
#define STATUS_MAX_US (128 * US_PER_MS)
#define STATUS_GIVE_UP_US (2 * US_PER_S)
/* A signal that failed for want of resources (EMFILE, ENOMEM) is sent again after this. */
#define SIGNAL_RETRY_US (100 * US_PER_MS)

/*
 * How long a container may show its runtime's init (or a command line
 * read in the middle of an exec) before it is classified by what it
 * shows: its exec is not waited for any longer. podscan keeps no clock.
 */
#define PENDING_MAX_US (30 * US_PER_S)

/* The pass's action is a rescan (the pass is a real one). */
static inline bool dpriv_rescan(struct decide *d, struct pass *p)
{
	d->rescan_inflight = true;
	d->pids_moved = false;
	d->rescan_wanted = false;
	p->act->kind = DECIDE_RESCAN;
	p->act->pending_before_us = p->now - PENDING_MAX_US;
	return true;
}

/*
 * An action that reads the processes from the last rescan (DECIDE_WATCH,
 * DECIDE_SIGNAL_APP to all) has one made first (rescan_first) when none
 * worked in this turn of the engine's loop.
 */
static inline void dpriv_look_first(const struct decide *d, struct pass *p)
{
	if (!d->looked) {
		p->act->rescan_first = true;
		p->act->pending_before_us = p->now - PENDING_MAX_US;
	}
}

/* Failures that pass: the same signal is sent again shortly. */
static inline bool dpriv_transient(int err)
{
	return err == -EMFILE || err == -ENFILE || err == -ENOMEM || err == -EAGAIN || err == -EINTR ||
	       err == -ENOBUFS;
}

/* ---- decide-apps.c, for the others ------------------------------------------------ */

struct decide_app *dapps_find(struct decide *d, unsigned id);
/* The apps not superseded by a restart. */
unsigned dapps_live(const struct decide *d);
/* Fewer apps than --apps N (or none) were seen: another may still come. */
bool dapps_fewer_than_expected(const struct decide *d);
/* Every app container the pod has was seen: --apps N, and N of them. */
bool dapps_all_expected_seen(const struct decide *d);
/* OnFailure: an app failed and its restart is awaited; Always: an app exited (whatever its code). */
bool dapps_any_awaiting_restart(const struct decide *d);
/* Every app is finished (a restart is not awaited), and none was lost for want of memory. */
bool dapps_all_finished(const struct decide *d);
/* An app's exit code is still on its way. */
bool dapps_codes_awaited(const struct decide *d);
/* The events about apps (DECIDE_EV_APP_*): whether they changed anything. */
bool dapps_seen(struct decide *d, unsigned id, const char *name, int64_t now);
bool dapps_exited(struct decide *d, unsigned id, int64_t now);
bool dapps_status(struct decide *d, unsigned id, int code, int64_t now);
bool dapps_renamed(struct decide *d, unsigned id, const char *name);
bool dapps_forget(struct decide *d, unsigned id);
bool dapps_reports_as(struct decide *d, unsigned id, const char *name);
bool dapps_report(struct decide *d, const char *name, int code, int64_t now);
/* A rescan succeeded: the reports that waited for it are matched to their apps. */
void dapps_match_reports(struct decide *d, int64_t now);
void dapps_expire_restart_grace(struct decide *d, struct pass *p);
/* The apps' exit codes the kernel did not publish in time are unknown. */
void dapps_expire_statuses(struct decide *d, struct pass *p);
/* Whether an app's exit code is due to be asked for (one DECIDE_STATUS with the sidecars'). */
bool dapps_status_step(struct decide *d, struct pass *p);

/* ---- decide-sidecar.c, for the others ----------------------------------------------- */

void dside_init(struct decide *d, int64_t now);
/* Whether sidecar k counts: named with --sidecar, or detection saw a process of it. */
bool dside_counts(const struct decide *d, size_t k);
/* A sidecar named with --sidecar whose container was never seen: the kubelet may still start it. */
bool dside_never_started(const struct decide *d, size_t k);
/* Readiness waits for a sidecar's process, which only rescans can find. */
bool dside_awaiting_process(const struct decide *d);
bool dside_readiness_step(struct decide *d, struct pass *p);
bool dside_check_step(struct decide *d, struct pass *p);
/* --ready-timeout: looked at before the conclusion, which it may make (ready_gates_apps). */
void dside_expire_readiness(struct decide *d, struct pass *p);
/* The sidecars, one by one in reverse order, each settled before the next. */
bool dside_drain_step(struct decide *d, struct pass *p);
/* The sidecars' exit codes: asked for when due (with the apps', one DECIDE_STATUS), given up after a while. */
bool dside_codes_step(struct decide *d, struct pass *p);
void dside_expire_codes(struct decide *d, struct pass *p);
/* Whether a sidecar's answer or exit code is still on its way (the exit waits a little for them). */
bool dside_awaited(const struct decide *d);
bool dside_failed(const struct decide *d);
/* The events about sidecar k (DECIDE_EV_SIDECAR_*, ...), k checked already: whether they changed anything. */
bool dside_seen(struct decide *d, size_t k, int64_t age, int64_t now);
bool dside_exited(struct decide *d, size_t k, unsigned container, int pid, int64_t now);
bool dside_status(struct decide *d, size_t k, int code, int64_t now);
bool dside_gone(struct decide *d, size_t k, int64_t now);
bool dside_no_endpoint(struct decide *d, size_t k);
bool dside_catches(struct decide *d, size_t k, int result);
bool dside_fate(struct decide *d, size_t k, int fate);
bool dside_program(struct decide *d, size_t k, int code, const char *how);
bool dside_signal_result(struct decide *d, size_t k, int err, int64_t now);
bool dside_http_result(struct decide *d, size_t k, enum decide_http_purpose purpose, int result, int64_t now);

/* ---- decide-natives.c, for the others ----------------------------------------------- */

/* The apps' stop after a failed sidecar (--on-sidecar-exit=fail): its signals when they are due. */
bool dnat_apps_stop_step(struct decide *d, struct pass *p);
/* Sidecar k exited with code while the apps ran, and no stop of ours was sent: the apps may be stopped. */
void dnat_apps_stop_begin(struct decide *d, size_t k, int code, int64_t now);
bool dnat_app_signal_result(struct decide *d, unsigned id, int err, int64_t now);
bool dnat_seen(struct decide *d, unsigned id, const char *name, enum decide_native_by by, int64_t now);
bool dnat_exited(struct decide *d, unsigned id, int64_t now);
bool dnat_forget(struct decide *d, unsigned id);

#endif
