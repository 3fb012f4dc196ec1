/*
 * rearguard run: an app that speaks the file protocol without knowing it.
 * It waits for ready, runs CMD as its child, forwards the signals a
 * container gets, writes apps/NAME with CMD's exit code (128 + N for
 * signal N) and exits with that same code.
 *
 * With --drain (the wrapper model, when no agent runs) it waits for the
 * sidecars' ready URLs itself instead of the ready file, and stops the
 * sidecars with agent_drain() once CMD is over.
 *
 *	return run_main(&opts);
 */
#ifndef RG_RUN_H
#define RG_RUN_H

#define RUN_READY_TIMEOUT 124 /* ready did not appear within --timeout: CMD was not started */
#define RUN_FAILED 125        /* rearguard run itself failed (the directory, the loop) */
#define RUN_CANNOT_EXEC 126   /* CMD is there but cannot be executed */
#define RUN_NOT_FOUND 127     /* CMD is not there */

struct run_options;

/* The exit code for a command cmd that could not be started (posix_spawnp's error err). */
int run_spawn_code(const char *cmd, int err);

int run_main(const struct run_options *o);

#endif
