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

/* What the kubelet keeps of a termination message. */
#define SUMMARY_TERMINATION_MAX 4096

/* Builds the summary into j (initialised by the caller). */
void summary_build(struct jbuf *j, const struct decide *d, const struct agent_options *opt, int64_t now_us);

/*
 * The termination log's form of a summary: the summary itself when it
 * fits in SUMMARY_TERMINATION_MAX bytes, else a short form that does: the
 * containers that fail the pod first, then counts, with "truncated": true
 * and "full": "done" (where the whole one is). full is the summary's text,
 * as summary_build wrote it now or into the done file earlier.
 */
void summary_termination(struct jbuf *out, const char *full, size_t len);

#endif
