/*
 * The agent: the companion container. It scans the pod, watches the app
 * and sidecar containers, polls the sidecars' readiness, lets decide.c
 * judge, carries out its actions (signals, HTTP requests, the ready file),
 * and writes the summary. agent_run() returns the process's exit code.
 *
 * agent_drain() is the same machinery told to drain at once and to track
 * no apps: it stops opt->sidecars in reverse order, each confirmed gone
 * before the next (stop request, --stop-timeout, SIGTERM, --kill-after,
 * SIGKILL), logs the summary, and returns 0 when every sidecar is gone, 1
 * when one could not be stopped, 2 when it could not start. It uses
 * opt->sidecars, stop_timeout_ms, kill_after_ms and nothing of the app
 * options; opt->termination_log may be NULL (nothing written). It works
 * from any container of the pod, also the sidecar's own (a preStop hook:
 * this process and its ancestors are never waited for or signalled). In a
 * pod without a shared PID namespace, where no sidecar process is visible,
 * a stop counts as done once the stop URL answered 2xx and the sidecar's
 * ready URL (else its stop URL) refuses connections; a sidecar stopped by
 * a signal then fails. This is the entry point for rearguard drain and for
 * rearguard run --drain after its command exited: call it with no libev
 * loop running (it runs libev's default loop, and destroys it before it
 * returns). It installs no signal handlers.
 */
#ifndef RG_AGENT_H
#define RG_AGENT_H

struct agent_options;

int agent_run(const struct agent_options *opt);
int agent_drain(const struct agent_options *opt);

#endif
