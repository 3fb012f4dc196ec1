/*
 * The agent, the companion container: scans the pod, watches the app and
 * sidecar containers, polls readiness and writes the ready file, and when
 * the apps are done stops the sidecars and writes the summary (the done
 * file, the termination log, the last log line).
 *
 *	return agent_main(&opt);
 *
 * The exit status: 0 when every sidecar is gone, 1 when one could not be
 * stopped, 2 when the agent could not start (it needs the pod's other
 * containers visible: shareProcessNamespace). A restarted agent resumes
 * from the file protocol (docs/protocol.md).
 */
#ifndef RG_AGENT_H
#define RG_AGENT_H

struct agent_options;

int agent_main(const struct agent_options *opt);

#endif
