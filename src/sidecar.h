/*
 * rearguard sidecar: the wrapper of a sidecar's program, so that the stop
 * rearguard asks for ends the container with 0, as a native sidecar's stop
 * does not count against the pod. It runs PROGRAM as its child and:
 *
 * - forwards every signal it gets to the program (the kubelet's SIGTERM
 *   at pod deletion, a reload's SIGHUP, the agent's stop signal);
 * - takes a stop request from the shared volume too (sidecars/NAME.stop,
 *   written by the agent, which then needs neither the sidecar's uid nor
 *   CAP_KILL) and sends the signal named there;
 * - kills the program when --stop-timeout has passed since the stop began,
 *   before the agent's own SIGKILL would reach the wrapper;
 * - exits 0 when the program ended of the stop (a signal it was sent since
 *   the stop began, 128 + that signal, or SIGKILL), and otherwise with the
 *   program's own status, untouched (128 + N for signal N), so that a
 *   crash or a failure before the stop still fails the pod;
 * - writes how the program really ended to sidecars/NAME and to its log,
 *   for the agent's summary.
 *
 *	return sidecar_main(&opts);
 */
#ifndef RG_SIDECAR_H
#define RG_SIDECAR_H

#include <stdbool.h>

struct sidecar_options;

/* The wrapper's own failure (the loop), before the program ran. */
#define SIDECAR_FAILED 125

/* How the program's end becomes the container's exit code: see above. */
int sidecar_code(int status, bool stopping, unsigned long long sent);

int sidecar_main(const struct sidecar_options *o);

#endif
