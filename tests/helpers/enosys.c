/*
 * Runs a command under a seccomp filter that takes kernel features away, to
 * test rearguard's fallbacks the way a restrictive runtime profile would:
 *
 *   enosys [--pidfd-open] [--pidfd-info] -- CMD [ARG...]
 *
 *   --pidfd-open  pidfd_open(2) fails with ENOSYS (kernel before 5.3)
 *   --pidfd-info  ioctl(PIDFD_GET_INFO) fails with ENOTTY (kernel before 6.13)
 */
#include "config.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "enosys: add this architecture"
#endif

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
/* _IOWR(0xFF, 11, struct pidfd_info) with the 64-byte struct. */
#define PIDFD_GET_INFO_NR 0xC040FF0Bu

int main(int argc, char **argv)
{
	int open_off = 0, info_off = 0, i;
	struct sock_filter f[16];
	struct sock_fprog prog;
	unsigned n = 0;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--pidfd-open") == 0)
			open_off = 1;
		else if (strcmp(argv[i], "--pidfd-info") == 0)
			info_off = 1;
		else {
			fprintf(stderr, "enosys: unknown option %s\n", argv[i]);
			return 64;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: enosys [--pidfd-open] [--pidfd-info] -- CMD [ARG...]\n");
		return 64;
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	if (open_off) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_open, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	}
	if (info_off) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]));
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PIDFD_GET_INFO_NR, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOTTY);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)n;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		perror("enosys: seccomp");
		return 70;
	}
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "enosys: %s: %s\n", argv[i + 1], strerror(errno));
	return 127;
}
