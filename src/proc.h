/*
 * Parsers for the /proc files the pod scanner reads. They work on buffers
 * so the unit tests can feed them anything; the readers in podscan.c do the
 * I/O. Every parser tolerates hostile content (a comm may hold spaces and
 * parentheses: "(a) b)") and returns -EINVAL rather than guess.
 */
#ifndef RG_PROC_H
#define RG_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROC_COMM_MAX 16  /* TASK_COMM_LEN: 15 characters and a NUL */
#define PF_KTHREAD_FLAG 0x00200000u

struct proc_stat {
	pid_t pid;
	char comm[PROC_COMM_MAX + 1];
	char state;          /* R, S, D, Z, ... */
	pid_t ppid;
	unsigned flags;      /* PF_* */
	uint64_t starttime;  /* clock ticks after boot: with pid, a process's identity */
};

/* /proc/PID/stat. The comm runs from the first '(' to the last ')'. */
int proc_parse_stat(const char *buf, size_t len, struct proc_stat *out);

/*
 * The basename of argv[0] from /proc/PID/cmdline (NUL-separated), copied
 * into out; up to a colon and a space, for programs that rewrite their
 * command line as "name: what" ("nginx: master process ..."). An empty
 * cmdline (kernel thread, zombie) gives "".
 */
void proc_parse_argv0(const char *buf, size_t len, char *out, size_t outlen);

/*
 * Normalises /proc/PID/cgroup into the key that identifies a container:
 * every hierarchy's line, so that two containers that differ in any
 * hierarchy (cgroup v1, v2, or hybrid hosts where the unified line is the
 * same for everybody) get different keys. Trailing newlines are dropped.
 * Returns the key length, or -EINVAL for content that is not a cgroup file.
 */
int proc_cgroup_key(const char *buf, size_t len, char *out, size_t outlen);

/*
 * The part of a cgroup key worth showing in logs: the cgroup v2 path when
 * it tells containers apart from the root, else the first v1 path, cut to
 * fit outlen (0: nothing is written).
 */
void proc_cgroup_display(const char *key, char *out, size_t outlen);

/*
 * The pod's cgroup, as one line "ID:CONTROLLERS:PATH" of the hierarchy
 * proc_cgroup_display shows: the parent of the agent's own container's
 * cgroup (self_key), which must hold pid 1's (one_key, the pause
 * container's) too. Returns its length; -ENOENT when pid 1 is not below it
 * (no pod layout to rely on), other -errno for keys that are not cgroups.
 */
int proc_cgroup_pod(const char *self_key, const char *one_key, char *out, size_t outlen);

/*
 * Whether key's cgroup is strictly below the pod's (proc_cgroup_pod): one
 * of the pod's containers, not the pod's own cgroup, nor one outside it (a
 * runtime's, where its inits may be seen before they join a container).
 */
bool proc_cgroup_within(const char *key, const char *pod);

/*
 * The name Kubernetes gives the container whose mount table buf (len bytes
 * of /proc/PID/mountinfo) is: the kubelet bind-mounts each container's
 * termination-message file from .../pods/POD_UID/containers/NAME/ID, so a
 * mount whose root is such a path names it. NAME must be a DNS label (a
 * container's name), at most outlen - 1 bytes. Returns its length; -ENOENT
 * when no mount names one (not a kubelet's container, or a zombie).
 */
int proc_mountinfo_container(const char *buf, size_t len, char *out, size_t outlen);

/*
 * A signal mask line of /proc/PID/status ("SigCgt", "SigIgn": up to 16 hex
 * digits, bit N-1 for signal N) into out. -EINVAL when the line is missing
 * or is not such a mask.
 */
int proc_status_sigmask(const char *buf, size_t len, const char *key, uint64_t *out);

/* The state letter of the State line of /proc/PID/status (R, S, D, ...), or 0 when there is none. */
char proc_status_state(const char *buf, size_t len);

#endif
