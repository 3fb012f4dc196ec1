/*
 * An LD_PRELOAD interposer for the tests: epoll_ctl(EPOLL_CTL_ADD) of a
 * pidfd fails with ENOMEM, as it can when the kernel is short of memory.
 * libev then stops the watcher and reports EV_ERROR to it. Every other
 * call goes through untouched. The program under test has no switch for
 * this: the fault comes from outside, as a real one would.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event)
{
	static int (*real)(int, int, int, struct epoll_event *);
	char path[64], link[128];
	ssize_t n;

	if (!real)
		real = (int (*)(int, int, int, struct epoll_event *))dlsym(RTLD_NEXT, "epoll_ctl");
	if (op == EPOLL_CTL_ADD) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = '\0';
			/* "anon_inode:[pidfd]", or "pidfd:[...]" where pidfs backs them (Linux 6.9). */
			if (strstr(link, "pidfd")) {
				errno = ENOMEM;
				return -1;
			}
		}
	}
	return real(epfd, op, fd, event);
}
