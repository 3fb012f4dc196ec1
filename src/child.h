/*
 * The command of `rearguard run`, with or without --drain: started as a
 * child with the signal state of a fresh process, reaped by libev, handed
 * the signals a container gets, and reported (apps/NAME) with its exit
 * code: 128 + N when signal N killed it, or the codes below when it never
 * ran. What differs between run and run --drain is what waits before the
 * command starts (the ready file, or decide) and what follows its end.
 *
 *	child_open(&c, loop, o, on_end, data);   a report of an earlier attempt is removed
 *	child_start(&c);                         ... on_end(&c, code) when it is over ...
 *	child_end(&c, 124);                      it will never start
 *	child_report(&c);                        apps/NAME
 *	child_close(&c);
 *
 * A signal (TERM, INT, HUP, QUIT, USR1, USR2) is passed on to the running
 * command. Before it started, TERM, INT and QUIT end it, unstarted, with
 * 128 + N (a pod being deleted). After its end, a signal is only logged
 * (with after_end, when set).
 */
#ifndef RG_CHILD_H
#define RG_CHILD_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RUN_READY_TIMEOUT 124 /* ready did not appear within --timeout: CMD was not started */
#define RUN_FAILED 125        /* rearguard run itself failed (the directory, the loop) */
#define RUN_CANNOT_EXEC 126   /* CMD is there but cannot be executed */
#define RUN_NOT_FOUND 127     /* CMD is not there */

struct run_options;
struct child;

/* The command is over (or will never start): code is its exit code. */
typedef void child_end_fn(struct child *c, int code);

/* The signals a container gets and passes on to its command. */
#define CHILD_NSIGNALS 6

struct child {
	struct ev_loop *loop;
	const struct run_options *o;
	child_end_fn *on_end;
	void *data;
	const char *after_end;  /* the log line for a signal after the end, or NULL */
	ev_child watcher;
	ev_signal sigs[CHILD_NSIGNALS];
	pid_t pid;              /* 0: not running */
	int pidfd;              /* signals go through it: never to a reused pid */
	bool started, over;
	int code;
};

/* The exit code for a command cmd that could not be started (posix_spawnp's error err). */
int child_spawn_code(const char *cmd, int err);

/*
 * posix_spawnp of cmd with the signal state of a fresh process (nothing
 * blocked, every signal's default action) and the stderr rearguard was
 * given (log_inherited_fd). 0, or the error number posix_spawnp gave.
 */
int child_spawn(pid_t *pid, char **cmd);
/* Takes the signals, and removes the report of an earlier attempt of this container (OnFailure). */
void child_open(struct child *c, struct ev_loop *loop, const struct run_options *o, child_end_fn *on_end,
		void *data);
/*
 * Runs the command with the signal state of a fresh process (nothing
 * blocked, nothing ignored) and the stderr rearguard was given; libev
 * reaps it. When it cannot be started, it is over at once with 126 or 127.
 */
void child_start(struct child *c);
/* The command will never start: it is over with code. */
void child_end(struct child *c, int code);
/* Writes apps/NAME with the command's code. */
void child_report(const struct child *c);
/* The exit status is decided: a late signal must not become it. */
void child_close(struct child *c);

#endif
