/*
 * An LD_PRELOAD interposer for the tests: a pidfd opened on a process whose
 * name (comm) is $RG_TEST_REAPED_COMM is handed back only once that process
 * has exited and been reaped, at most 10 s later. So the race a busy node
 * gives now and then, a process seen in /proc, its pidfd opened, then gone
 * before the start time is read back, happens every time. The file
 * $RG_TEST_REAPED_MARK is created when the wait starts, so that the test
 * lets the process go on then. Every other call goes through untouched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int comm_is(long pid, const char *want)
{
	char path[64], comm[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	return strcmp(comm, want) == 0;
}

static void wait_reaped(long pid)
{
	const char *mark = getenv("RG_TEST_REAPED_MARK");
	struct timespec tick = { 0, 5 * 1000 * 1000 };
	char path[64];
	int i, fd;

	if (mark && (fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) >= 0)
		close(fd);
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	for (i = 0; i < 2000 && access(path, F_OK) == 0; i++)
		nanosleep(&tick, NULL);
}

long syscall(long number, ...)
{
	static long (*real)(long, ...);
	const char *want = getenv("RG_TEST_REAPED_COMM");
	long a[6], rc;
	va_list ap;
	int i, saved;

	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	va_start(ap, number);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_pidfd_open && want && comm_is(a[0], want)) {
		rc = real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
		saved = errno;
		if (rc >= 0)
			wait_reaped(a[0]);
		errno = saved;
		return rc;
	}
	return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
