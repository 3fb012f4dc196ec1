/*
 * The kernel's share of "app exit -> stop request": how long after a
 * process's last instruction its exit is visible to a pidfd (blocking poll,
 * as the agent waits). Forks a child that records the monotonic clock and
 * calls _exit, N times. On machines where tearing down an address space is
 * slow (some hypervisors), this floor dominates every reaction time.
 *
 *   exit-floor [N]     prints one line per sample: microseconds
 */
#include "config.h"

#include "sys.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, i;
	volatile long long *last = mmap(NULL, sizeof(*last), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (last == MAP_FAILED || n < 1)
		return 2;
	for (i = 0; i < n; i++) {
		struct pollfd pfd = { .events = POLLIN };
		long long woke;
		pid_t pid = fork();

		if (pid == 0) {
			usleep(10000);
			*last = now_us();
			_exit(0);
		}
		pfd.fd = sys_pidfd_open(pid);
		if (pid < 0 || pfd.fd < 0)
			return 1;
		poll(&pfd, 1, -1);
		woke = now_us();
		printf("%lld\n", woke - *last);
		close(pfd.fd);
		waitpid(pid, NULL, 0);
	}
	return 0;
}
