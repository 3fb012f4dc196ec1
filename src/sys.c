#include "config.h"

#include "sys.h"

#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/*
 * struct pidfd_info as of Linux 6.15 (include/uapi/linux/pidfd.h), defined
 * here because distribution headers are older. The kernel accepts any size
 * from 64 bytes (PIDFD_INFO_SIZE_VER0) and fills what it knows.
 */
struct rg_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};

#define RG_PIDFS_IOCTL_MAGIC 0xFF
#define RG_PIDFD_GET_INFO _IOWR(RG_PIDFS_IOCTL_MAGIC, 11, struct rg_pidfd_info)
#define RG_PIDFD_INFO_EXIT (1ULL << 3)

_Static_assert(sizeof(struct rg_pidfd_info) == 64, "pidfd_info VER0 is 64 bytes");

int sys_pidfd_open(pid_t pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : (int)fd;
}

int sys_pidfd_send_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 ? -errno : 0;
}

int sys_pidfd_exit_status(int pidfd, int *status)
{
	struct rg_pidfd_info info;

	memset(&info, 0, sizeof(info));
	info.mask = RG_PIDFD_INFO_EXIT;
	if (ioctl(pidfd, RG_PIDFD_GET_INFO, &info) < 0) {
		/* ENOTTY/EINVAL: no PIDFD_GET_INFO (< 6.13); EPERM/ENOSYS: filtered. */
		if (errno == ENOTTY || errno == EINVAL || errno == ENOSYS || errno == EPERM)
			return -EOPNOTSUPP;
		return -errno;
	}
	if (!(info.mask & RG_PIDFD_INFO_EXIT))
		return -EAGAIN;
	*status = info.exit_code;
	return 0;
}

int wait_status_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

bool sys_can_kill(void)
{
	struct __user_cap_header_struct head = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &head, data) < 0)
		return false;
	return data[CAP_KILL / 32].effective & (1u << (CAP_KILL % 32));
}

void sys_hold_signals(const int *sigs, size_t n)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < n; i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
}
