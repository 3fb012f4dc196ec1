/*
 * One sidecar's I/O, in one place: its readiness poll, its drain, stop and
 * gone-probe requests (the drain and stop built ahead of time, so that the
 * stop goes out at once when it is due), the pre-flight look at it and what that said, and
 * the watches of its processes, collected from the pod as podscan last saw
 * it, which it signals. What comes of it goes to its owner as events for
 * decide (on_event), and when the last process it watches is gone it says
 * so (on_empty), so that one more look at /proc can confirm that nothing
 * new was forked meanwhile.
 *
 *	stopper_init(&st, &cfg);       once per sidecar
 *	stopper_prepare(&st, err, len);  libcurl is set up: build the requests
 *	stopper_check(&st, c);         a container of it appeared: pre-flight
 *	stopper_request(&st, DECIDE_HTTP_STOP, url, connect_us, timeout_us, err, len);
 *	stopper_collect(&st);          after each refresh of podscan, once collecting
 *	if (stopper_gone(&st)) ... every process it found is gone ...
 *	stopper_signal(&st, SIGTERM, false, &sent);
 *	stopper_free(&st);
 *
 * A process that cannot be watched with a pidfd is polled (stopper_poll),
 * and one that could not be watched at all (no memory) is never counted as
 * gone: stopper_gone() stays false until a later collect watches it.
 */
#ifndef RG_STOPPER_H
#define RG_STOPPER_H

#include "decide.h"
#include "http.h"
#include "pidwatch.h"
#include "preflight.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct podscan_container;
struct podscan;
struct sidecar_spec;

struct stopper_config {
	struct ev_loop *loop;
	struct http *http;
	struct podscan *ps;
	const struct sidecar_spec *spec;
	size_t index;          /* the sidecar's index, for podscan's containers and decide's events */
	bool in_own_container; /* rearguard drain in the sidecar's own container (a preStop hook) */
	const pid_t *spare;    /* never watched nor signalled: this process and its ancestors */
	size_t nspare;
	bool can_kill;         /* the agent has CAP_KILL (for pre-flight) */
	const char *dir;       /* the file protocol's directory (sidecars/NAME.stop), NULL: none */
	/* Reads a rearguard sidecar command line (the agent's options' sidecar_name); NULL: none is. */
	int (*sidecar_name)(int argc, char **argv, char *name, size_t len, int *program);
	/* What its I/O brought: a request's result, a pre-flight finding decide needs. */
	void (*on_event)(void *data, const struct decide_event *ev);
	/* Every process it watches has exited: time to look again. */
	void (*on_empty)(void *data, size_t index);
	void *data;
};

struct stopper_proc;

/*
 * A container of the sidecar whose main process is rearguard sidecar: its
 * signals go to sidecars/NAME.stop (no uid or capability needed), and its
 * report, sidecars/NAME, says how its program ended.
 */
struct stopper_wrapped {
	pid_t pid;
	uint64_t start;
	char name[64];
};
#define STOPPER_WRAPPED_MAX 4

/* Its fields are its own: the others go through the functions below. */
struct stopper {
	struct stopper_config cfg;
	struct stopper_proc **procs;
	size_t n, cap;
	unsigned live;       /* watched and not exited */
	unsigned missed;     /* found by the last collect but not watched (no memory) */
	bool collecting;     /* stopper_collect was called: its processes are being watched */
	bool advised;        /* advice about its stop endpoint was logged (by pre-flight or an answer) */
	bool said[PREFLIGHT_NKINDS]; /* pre-flight warnings logged */
	struct http_request ready, drain, stop, gone, check;
	const char *gone_url; /* the URL gone was built for (decide's choice), NULL */
	struct stopper_wrapped wrapped[STOPPER_WRAPPED_MAX];
	size_t nwrapped;
};

void stopper_init(struct stopper *st, const struct stopper_config *cfg);
/* Builds ahead the requests the sidecar's spec has, those not built yet. -errno when libcurl cannot. */
int stopper_prepare(struct stopper *st, char *err, size_t errlen);
/*
 * Starts the request for purpose now (its result comes as an event).
 * -errno when it cannot be started, err says why. url is the action's: the
 * gone probe connects to it (decide chooses which of the sidecar's URLs,
 * -EINVAL for another); the others have their spec's URL, whatever url says.
 */
int stopper_request(struct stopper *st, enum decide_http_purpose purpose, const char *url,
		    int64_t connect_timeout_us, int64_t timeout_us, char *err, size_t errlen);
/* A container of the sidecar appeared: what it shows of the known traps, said once each. */
void stopper_check(struct stopper *st, const struct podscan_container *c);
/* Watches every live process of the sidecar's containers not watched yet. Returns the live count. */
unsigned stopper_collect(struct stopper *st);
/* Whether stopper_collect was called: its processes are being watched. */
bool stopper_collecting(const struct stopper *st);
/* Whether the processes it collected are gone, every one (after a collect on a fresh scan). */
bool stopper_gone(const struct stopper *st);
/* How many of its processes it watches that have not exited. */
unsigned stopper_live(const struct stopper *st);
/*
 * Sends sig to the root of each of the sidecar's containers (watching it
 * first if need be), or with all to each watched live process. 0, or the
 * -errno that matters most (-EPERM first); *sent: how many got it.
 */
int stopper_signal(struct stopper *st, int sig, bool all, unsigned *sent);
/*
 * What sig will do to the roots of the sidecar's containers (enum
 * decide_fate): the worst of theirs, read from /proc just before it is sent.
 */
int stopper_fate(struct stopper *st, int sig);
/*
 * Reads the report of each wrapped container (sidecars/NAME) and tells
 * decide how its program ended (DECIDE_EV_PROGRAM).
 */
void stopper_reports(struct stopper *st);
/* Looks at the processes watched by polling (DECIDE_POLL); how many are polled. */
void stopper_poll(struct stopper *st);
unsigned stopper_polled(const struct stopper *st);
void stopper_free(struct stopper *st);

#endif
