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

/*
 * What the kubelet keeps of a termination message: 4096 bytes, and of all
 * the pod's messages together 12 KiB, which its status manager shares out
 * evenly (each container's cut to 12 KiB divided by the number of
 * containers and init containers).
 */
#define SUMMARY_TERMINATION_MAX 4096
#define SUMMARY_POD_TERMINATION_MAX (12 * 1024)

/* The most a termination message keeps in a pod of that many containers. */
size_t summary_budget(unsigned containers);

/* Builds the summary into j (initialised by the caller). */
void summary_build(struct jbuf *j, const struct decide *d, const struct agent_options *opt, int64_t now_us);

/*
 * The termination log's form of a summary: the summary itself when it
 * fits in budget bytes (summary_budget), else a short form that does: the
 * containers that fail the pod first, then counts, with "truncated": true
 * and "full": "done" (where the whole one is). full is the summary's text,
 * as summary_build wrote it now or into the done file earlier. Below about
 * 120 bytes only the essentials are left, and may still be cut.
 */
void summary_termination(struct jbuf *out, const char *full, size_t len, size_t budget);

#endif
