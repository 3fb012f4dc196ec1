/*
 * rearguard run --drain, the wrapper model (when no agent runs): the
 * engine with the command as its one app. The command starts once the
 * sidecars' ready URLs answer (or at once with --no-wait), its exit and
 * its exact code come from ev_child, and the sidecars are stopped once it
 * ends; its report (apps/NAME) follows the stop.
 *
 *	return wrap_main(&run);
 *
 * The exit status is the command's code, whatever the stop did (an error
 * says when a sidecar could not be stopped): 128 + N when signal N came
 * before it started, 124 when the sidecars never got ready, 125 when the
 * wrapper itself failed. Where the pod's other containers cannot be seen,
 * a stop is confirmed by the sidecar's port (docs/protocol.md).
 */
#ifndef RG_WRAP_H
#define RG_WRAP_H

struct run_options;

int wrap_main(const struct run_options *run);

#endif
