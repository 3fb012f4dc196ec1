/*
 * decide's notes in words: the log line each note is, with its fields, the
 * way users and the integration tests read them. decide says what it
 * decided as a kind and fields (decide.h); this is the engine's sink that
 * writes them.
 *
 *	struct notes ctx = { .dir = opt->dir };
 *	cfg.sink = notes_log; cfg.sink_data = &ctx;
 */
#ifndef RG_NOTES_H
#define RG_NOTES_H


/* What the notes' lines name besides what decide knows. */
struct notes {
	const char *dir; /* the file protocol's directory, or NULL */
};

#include "decide.h"

/*
 * The fix for a stop signal that fails the pod (DECIDE_FATE_DIES or
 * _IGNORES), for the log and the summary alike; NULL for the others.
 */
const char *notes_fate_fix(enum decide_fate fate);

/* decide's sink: logs the note (data: a struct notes). */
void notes_log(void *data, const struct decide_note *note);

#endif
