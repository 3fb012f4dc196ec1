/*
 * The JSON summary the agent leaves behind: which apps ran and how they
 * ended, how each sidecar was stopped and how long that took. It goes to
 * the termination log (kubectl describe pod shows it), to the done file,
 * and to the last log line.
 */
#ifndef RG_SUMMARY_H
#define RG_SUMMARY_H

#include "json.h"

struct decide;
struct agent_options;

/* Builds the summary into j (initialised by the caller). */
void summary_build(struct jbuf *j, const struct decide *d, const struct agent_options *opt, int64_t now_us);

#endif
