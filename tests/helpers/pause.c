/*
 * PID 1 of a test pod, like the pause container: reaps every orphan and
 * exits on SIGTERM or SIGINT. Nothing else.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

int main(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGTERM || sig == SIGINT)
			return 0;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}
