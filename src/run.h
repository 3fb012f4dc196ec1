/*
 * rearguard run: an app that speaks the file protocol without knowing it.
 * It waits for ready, runs CMD as its child, forwards the signals a
 * container gets, writes apps/NAME with CMD's exit code (128 + N for
 * signal N) and exits with that same code.
 *
 * With --drain (the wrapper model, when no agent runs) the agent's engine
 * does it all (agent_wrap): it polls the sidecars' ready URLs instead of
 * waiting for the ready file, runs CMD as an app like any other, and stops
 * the sidecars once CMD is over.
 *
 *	return run_main(&opts);
 *
 * The command itself is a run_child, which both use:
 *
 *	c->on_exit = ...; c->data = ...;
 *	code = run_child_start(loop, c, cmd);   0: started; else 126 or 127
 *	run_child_signal(c, SIGTERM);
 *	... on_exit(c, code) with the exit code (128 + N after signal N) ...
 */
#ifndef RG_RUN_H
#define RG_RUN_H

#define RUN_READY_TIMEOUT 124 /* ready did not appear within --timeout: CMD was not started */
#define RUN_FAILED 125        /* rearguard run itself failed (the directory, the loop) */
#define RUN_CANNOT_EXEC 126   /* CMD is there but cannot be executed */
#define RUN_NOT_FOUND 127     /* CMD is not there */

#include <ev.h>
#include <sys/types.h>

struct run_options;
struct run_child;

typedef void run_child_fn(struct run_child *c, int code);

struct run_child {
	ev_child watcher;
	pid_t pid;   /* 0: not running */
	int pidfd;   /* signals go through it: never to a reused pid */
	run_child_fn *on_exit;
	void *data;
};

/* The signals a container gets and passes on to its command. */
extern const int run_forwarded[6];

/* The exit code for a command cmd that could not be started (posix_spawnp's error err). */
int run_spawn_code(const char *cmd, int err);

/*
 * Runs cmd with the signal state of a fresh process (nothing blocked,
 * nothing ignored); libev reaps it and calls on_exit. 0 when it started,
 * else the exit code that says why not (126, 127), logged.
 */
int run_child_start(struct ev_loop *loop, struct run_child *c, char **cmd);
/* Sends sig to the running command: 0, or -errno (-ESRCH when none runs). */
int run_child_signal(struct run_child *c, int sig);
void run_child_stop(struct ev_loop *loop, struct run_child *c);

int run_main(const struct run_options *o);

#endif
