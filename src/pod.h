/*
 * The pod as the engine follows it: podscan's model of /proc, kept warm,
 * and a watch on the root of every app and sidecar container, all of it
 * told to decide: containers that appear (or turn out to be something
 * else), roots that exit, the exit codes the kernel gives, containers not
 * exec'd yet, processes that can only be polled.
 *
 *	pod_open(&pod, &cfg);            the first scan; -ENXIO: no other container visible
 *	... decide_init(&d, ...) ...
 *	pod_follow(&pod, &d);            decide hears what the first scan found
 *	pod_refresh(&pod);               a rescan, told to decide (but decide_rescanned)
 *	pod_statuses(&pod);              DECIDE_STATUS
 *	pod_poll(&pod);                  DECIDE_POLL
 *	pod_catches(&pod, k, sig, now);  DECIDE_CATCHES
 *	pod_close(&pod);
 *
 * cfg.on_exit runs after a root's exit was told to decide, for the engine
 * to act on it.
 *
 * Native sidecars (init containers with restartPolicy: Always) are told to
 * decide as such, never as apps or sidecars to stop: a container a native
 * spec matches; with cfg.first, one that ran before the agent's container
 * was created (an earlier pid and start time) and that no plain spec
 * matches; and one that appears, under the name of a native one that
 * exited, after that exit (the kubelet's restart).
 */
#ifndef RG_POD_H
#define RG_POD_H

#include "podscan.h"

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>

struct agent_options;
struct decide;
struct pod_root;

struct pod_config {
	struct ev_loop *loop;
	const struct agent_options *opt; /* the sidecars, --app */
	bool apps;                       /* containers may be apps (the agent); not for drain and the wrapper */
	bool first;                      /* --first, on the agent's first run in the pod: containers running
					    before it started are native sidecars, unless a plain spec matches */
	void (*on_exit)(void *data);
	/* A container of sidecar k appeared (or turned out to be one): for the pre-flight checks. */
	void (*on_sidecar)(void *data, size_t k, const struct podscan_container *c);
	void *data;
};

struct pod {
	struct pod_config cfg;
	struct podscan *ps;
	struct decide *d;
	struct pod_root **roots;
	size_t nroots, caproots;
	bool checking;          /* pod_check_sidecar is on the stack: exits are told to decide only */
	pid_t self_root;        /* the agent's container's root, and its start time: what --first compares with */
	uint64_t self_start;
};

/* Scans /proc once. -ENXIO when the agent's own container is all it sees. */
int pod_open(struct pod *p, const struct pod_config *cfg);
/* From now on decide is told; first, what the first scan found. */
void pod_follow(struct pod *p, struct decide *d);
/* Rescans /proc and tells decide what changed. 0, or -errno when /proc cannot be read. */
int pod_refresh(struct pod *p);
/* Asks the kernel for the exit codes of exited app roots that lack one. */
void pod_statuses(struct pod *p);
/*
 * A sidecar's processes are all gone: its containers' roots are asked at
 * once whether they exited, so that decide hears of each exit (and waits for
 * its code) before it concludes. Exits found here call no on_exit.
 */
void pod_check_sidecar(struct pod *p, size_t sidecar);
/*
 * Whether the roots of sidecar's live containers are ready for signo
 * (podscan_catches), told to decide (DECIDE_CATCHES): decide_sidecar_catches().
 */
void pod_catches(struct pod *p, size_t sidecar, int signo, int64_t now);
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
