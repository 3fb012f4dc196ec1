/*
 * rearguard run: an app that speaks the file protocol without knowing it.
 * It waits for ready, runs CMD as its child (child.c), forwards the
 * signals a container gets, writes apps/NAME with CMD's exit code (128 + N
 * for signal N) and exits with that same code.
 *
 *	return run_main(&opts);
 *
 * With --drain (the wrapper model, when no agent runs) main.c hands over to
 * wrap_main instead (wrap.c): the same command, after the sidecars' ready
 * URLs rather than the ready file, and the sidecars stopped after it.
 */
#ifndef RG_RUN_H
#define RG_RUN_H

#include "child.h"

struct run_options;

int run_main(const struct run_options *o);

#endif
