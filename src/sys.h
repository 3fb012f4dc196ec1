/*
 * The system calls glibc may not wrap, and the pidfd ioctl that gives the
 * exit status of a process that is not our child (Linux >= 6.15). Each
 * returns -errno on failure (-ENOSYS where the kernel or a seccomp profile
 * lacks it), so callers can fall back without looking at errno.
 */
#ifndef RG_SYS_H
#define RG_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int sys_pidfd_open(pid_t pid);
int sys_pidfd_send_signal(int pidfd, int sig);

/*
 * The wait status (as waitpid would give it) of the exited process behind
 * pidfd. -EAGAIN: it has not been reaped yet (the kernel publishes the status
 * only then); -EOPNOTSUPP: this kernel cannot tell (older than 6.15, or the
 * ioctl is filtered); other -errno as the kernel said.
 */
int sys_pidfd_exit_status(int pidfd, int *status);

/* Turns a wait status into an exit code: the code, or 128 + signal. */
int wait_status_code(int status);

/*
 * Blocks the n signals for the rest of the process's life. Once the exit
 * status is decided, a signal that comes while the process tears down
 * (libev puts the default actions back) would end it with 128 + N instead;
 * blocked, it stays pending and goes with the process.
 */
void sys_hold_signals(const int *sigs, size_t n);

/* Whether this process has CAP_KILL in its effective set (it may signal any uid). */
bool sys_can_kill(void);

#endif
