/*
 * The agent: the companion container. It scans the pod, watches the app
 * and sidecar containers, lets decide.c judge, carries out its actions, and
 * writes the summary. agent_run() returns the process's exit code.
 */
#ifndef RG_AGENT_H
#define RG_AGENT_H

struct agent_options;

int agent_run(const struct agent_options *opt);

#endif
