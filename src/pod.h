/*
 * The pod as the engine follows it: podscan's model of /proc, kept warm,
 * and a watch on the root of every app and sidecar container, all of it
 * told as events for decide: containers that appear (or turn out to be
 * something else), roots that exit, the exit codes the kernel gives,
 * containers not exec'd yet, processes that can only be polled.
 *
 *	pod_open(&pod, &cfg);            the first scan; -ENXIO: no other container visible
 *	pod_follow(&pod);                from now on events are told; first, what the first scan found
 *	pod_pending_over(&pod, since);   DECIDE_RESCAN's pending_before_us, before the rescan
 *	pod_refresh(&pod);               a rescan, told (but the rescan's own outcome)
 *	pod_statuses(&pod);              DECIDE_STATUS
 *	pod_poll(&pod);                  DECIDE_POLL
 *	pod_catches(&pod, k, sig);       DECIDE_CATCHES
 *	pod_signal_app(&pod, id, sig, all, &sent);  DECIDE_SIGNAL_APP
 *	pod_close(&pod);
 *
 * Native sidecars (init containers with restartPolicy: Always) are told as
 * such (DECIDE_EV_NATIVE_SEEN), never as apps or sidecars to stop: a
 * container a native spec matches; with cfg.first, one that ran before the
 * agent's container was created (an earlier pid and start time) and that
 * no plain spec matches; and one that appears, under the name of a native
 * one that exited, after that exit (the kubelet's restart; decide knows
 * which exited, cfg.native_restarted asks it).
 */
#ifndef RG_POD_H
#define RG_POD_H

#include "podscan.h"

#include <ev.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct decide_event;
struct pod_root;
struct sidecar_spec;

struct pod_config {
	struct ev_loop *loop;
	const char *proc;                 /* NULL: /proc */
	pid_t self;                       /* 0: getpid(), as proc numbers it */
	int64_t (*clock)(void);           /* NULL: mono_us */
	const struct sidecar_spec *sidecars; /* the explicit ones first, then those detection looks for */
	size_t nsidecars;
	bool detect;                      /* the known sidecars are detected by their command lines */
	const regex_t *app_re;            /* --app, or NULL */
	bool apps;                        /* containers may be apps (the agent); not for drain and the wrapper */
	bool first;                       /* --first, on the agent's first run in the pod: containers running
					     before it started are native sidecars, unless a plain spec matches */
	/* Whether a container named name, first seen at since, is the kubelet's restart of a native one. */
	bool (*native_restarted)(void *data, const char *name, int64_t since);
	/* The apps/NAME a `rearguard run` command line reports as (argv NULL-terminated); < 0: not one. */
	int (*run_name)(int argc, char **argv, char *name, size_t len);
	/* An event for decide, and when it happened. */
	void (*on_event)(void *data, const struct decide_event *ev, int64_t when);
	/* A container of sidecar k appeared (or turned out to be one): for the pre-flight checks. */
	void (*on_sidecar)(void *data, size_t k, const struct podscan_container *c);
	void *data;
};

struct pod {
	struct pod_config cfg;
	struct podscan *ps;
	bool following;         /* pod_follow was called: events are told */
	struct pod_root **roots;
	size_t nroots, caproots;
	pid_t self_root;        /* the agent's container's root, and its start time: what --first compares with */
	uint64_t self_start;
};

/* Scans /proc once. -ENXIO when the agent's own container is all it sees. */
int pod_open(struct pod *p, const struct pod_config *cfg);
/* From now on events are told; first, what the first scan found. */
void pod_follow(struct pod *p);
/*
 * The containers first seen at or before since (by the pod's clock) have
 * had long enough to exec their programs, as decide says (DECIDE_RESCAN's
 * pending_before_us): from the next refresh on, none of them is pending;
 * each is classified by what it shows (podscan_pending_over).
 */
void pod_pending_over(struct pod *p, int64_t since);
/* Rescans /proc and tells what changed. 0, or -errno when /proc cannot be read. */
int pod_refresh(struct pod *p);
/* Asks the kernel for the exit codes of exited app roots that lack one. */
void pod_statuses(struct pod *p);
/*
 * A sidecar's processes are all gone: its containers' roots are asked at
 * once whether they exited, so that decide hears of each exit (and waits for
 * its code) before it concludes.
 */
void pod_check_sidecar(struct pod *p, size_t sidecar);
/* Whether the roots of sidecar's live containers are ready for signo (podscan_catches), told (DECIDE_CATCHES). */
void pod_catches(struct pod *p, size_t sidecar, int signo);
/*
 * Sends signo to the main process of app container id (DECIDE_SIGNAL_APP),
 * or with all to every process of it as the last refresh saw them, each
 * through a pidfd that is checked against its start time (never a reused
 * pid). 0, or the -errno that matters most (-EPERM first); *sent: how many
 * got it.
 */
int pod_signal_app(struct pod *p, unsigned id, int signo, bool all, unsigned *sent);
/* Looks at the roots watched by polling (DECIDE_POLL); how many roots are polled. */
void pod_poll(struct pod *p);
unsigned pod_polled(const struct pod *p);
/* Whether a pid was handed out in the pod since the last rescan (podscan_pids_moved). */
int pod_pids_moved(struct pod *p);
/* How many of the pod's containers it has seen (not pause; a restart counts anew). */
unsigned pod_containers(const struct pod *p);
/* Logs every container (SIGHUP). */
void pod_list(const struct pod *p);
void pod_close(struct pod *p);

#endif
