/*
 * rearguard drain: the agent's stop sequence at once, with no apps and no
 * readiness, from any container of the pod, also the sidecar's own (a
 * preStop hook: this process and its ancestors are never waited for or
 * signalled). Where the pod's other containers cannot be seen, a stop
 * counts as done once the stop URL answered 2xx and the sidecar refuses
 * connections.
 *
 *	return drain_main(&opt);      0: every sidecar gone; 1: one was not; 2: cannot start
 */
#ifndef RG_DRAIN_H
#define RG_DRAIN_H

struct agent_options;

int drain_main(const struct agent_options *opt);

#endif
