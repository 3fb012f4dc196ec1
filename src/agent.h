/*
 * The engine: one libev loop that watches the pod and carries out what
 * decide.c decides, in three modes.
 *
 *	agent_run(&opt)     the companion container: scans the pod, watches the
 *	                    app and sidecar containers, polls readiness and
 *	                    writes the ready file, and when the apps are done
 *	                    stops the sidecars and writes the summary.
 *	agent_drain(&opt)   rearguard drain: the same stop sequence at once,
 *	                    with no apps and no readiness, from any container of
 *	                    the pod (also the sidecar's own: this process and
 *	                    its ancestors are never waited for or signalled).
 *	agent_wrap(&run)    rearguard run --drain: the command is an app like
 *	                    any other (its exit, and its exact code, come from
 *	                    ev_child); it starts once the sidecars' ready URLs
 *	                    answer, and the sidecars are stopped once it ends.
 *
 * Each returns the process's exit status: the agent and drain 0 when every
 * sidecar is gone, 1 when one could not be stopped, 2 when they could not
 * start; the wrapper the command's code (124 when the sidecars never got
 * ready, 128 + N when signal N came first). Where the pod's other
 * containers cannot be seen (no shared PID namespace), drain and the
 * wrapper confirm a stop by the sidecar's port (docs/protocol.md); the agent
 * refuses to run. Each runs libev's default loop and destroys it before it
 * returns.
 */
#ifndef RG_AGENT_H
#define RG_AGENT_H

struct agent_options;
struct run_options;

int agent_run(const struct agent_options *opt);
int agent_drain(const struct agent_options *opt);
int agent_wrap(const struct run_options *run);

#endif
