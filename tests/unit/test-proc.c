#include "config.h"

#include "proc.h"
#include "tap.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define STAT_TAIL " 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 %s 1000 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"

static int parse(const char *s, struct proc_stat *st)
{
	return proc_parse_stat(s, strlen(s), st);
}

int main(void)
{
	struct proc_stat st;
	char out[256];
	int n;

	memset(&st, 0, sizeof(st));
	is_int(parse("42 (envoy) S 0 42 42 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 12 0 987654 1000 100 "
		     "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n", &st), 0, "plain stat parses");
	is_int(st.pid, 42, "pid");
	is_str(st.comm, "envoy", "comm");
	is_int(st.state, 'S', "state");
	is_int(st.ppid, 0, "ppid");
	is_int(st.flags, 4194560, "flags");
	is_int(st.starttime, 987654, "starttime");
	ok(!(st.flags & PF_KTHREAD_FLAG), "not a kernel thread");

	is_int(parse("7 (a) b) c) R 3 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 1 1 0 0 0\n", &st), 0,
	       "comm with spaces and parentheses parses");
	is_str(st.comm, "a) b) c", "comm runs to the last parenthesis");
	is_int(st.ppid, 3, "ppid after a tricky comm");
	is_int(st.starttime, 55, "starttime after a tricky comm");

	is_int(parse("8 ()) S 1 8 8 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 66 1 1\n", &st), 0, "comm \")\" parses");
	is_str(st.comm, ")", "comm is a lone parenthesis");

	is_int(parse("9 () Z 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0\n", &st), 0, "empty comm parses");
	is_str(st.comm, "", "empty comm");
	is_int(st.state, 'Z', "zombie state");

	is_int(parse("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0\n", &st), 0,
	       "kernel thread parses");
	ok(st.flags & PF_KTHREAD_FLAG, "PF_KTHREAD is seen");

	memset(&st, 0x55, sizeof(st));
	is_int(parse("10 (x) S 1 10 10 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n", &st), -EINVAL, "truncated stat refused");
	is_int(st.pid, 0x55555555, "output untouched on error");
	is_int(parse("", &st), -EINVAL, "empty stat refused");
	is_int(parse("x (y) S 1\n", &st), -EINVAL, "non-numeric pid refused");
	is_int(parse("0 (y) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5\n", &st), -EINVAL, "pid 0 refused");
	is_int(parse("11 y S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5\n", &st), -EINVAL, "no parentheses refused");
	is_int(parse("12 (y S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5\n", &st), -EINVAL, "no closing parenthesis refused");
	is_int(parse("13 (y) S x 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5\n", &st), -EINVAL, "bad ppid refused");
	is_int(parse("14 (y) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5x\n", &st), -EINVAL, "bad starttime refused");
	is_int(parse("15 (0123456789abcdefg) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5\n", &st), -EINVAL,
	       "comm longer than the kernel allows refused");
	is_int(parse("16 (y) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99999999999999999999999\n", &st), -EINVAL,
	       "overflowing starttime refused");
	is_int(parse("17 (y)  S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5\n", &st), -EINVAL, "doubled space refused");

	proc_parse_argv0("/usr/local/bin/envoy\0-c\0/etc/envoy.yaml", 38, out, sizeof(out));
	is_str(out, "envoy", "argv0 basename");
	proc_parse_argv0("pilot-agent\0proxy", 17, out, sizeof(out));
	is_str(out, "pilot-agent", "argv0 without a path");
	proc_parse_argv0("", 0, out, sizeof(out));
	is_str(out, "", "empty cmdline");
	proc_parse_argv0("nginx: master process /usr/sbin/nginx", 37, out, sizeof(out));
	is_str(out, "nginx", "a rewritten argv is named before its colon");
	proc_parse_argv0("nginx: master process /usr/sbin/nginx -e /run/x/error.log -g daemon off;", 70, out, sizeof(out));
	is_str(out, "nginx", "whatever paths follow the colon");
	proc_parse_argv0("postgres: checkpointer ", 23, out, sizeof(out));
	is_str(out, "postgres", "postgres's processes too");
	proc_parse_argv0("/opt/my app/bin/job", 19, out, sizeof(out));
	is_str(out, "job", "a space in a path is no rewritten argv");
	proc_parse_argv0("/bin/", 5, out, sizeof(out));
	is_str(out, "", "argv0 ending in a slash");
	proc_parse_argv0("/x/abcdefghij", 13, out, 5);
	is_str(out, "abcd", "argv0 truncated to the buffer");
	proc_parse_argv0("/x/no-nul-at-all", 16, out, sizeof(out));
	is_str(out, "no-nul-at-all", "cmdline without a NUL");

	n = proc_cgroup_key("12:pids:/kubepods/besteffort/pod1/abc\n0::/\n", 43, out, sizeof(out));
	is_int(n, 42, "v1 key length (newline dropped)");
	is_str(out, "12:pids:/kubepods/besteffort/pod1/abc\n0::/", "v1 key keeps every line");
	n = proc_cgroup_key("0::/../cri-containerd-abc.scope\n", 32, out, sizeof(out));
	ok(n > 0, "relative v2 path accepted");
	is_str(out, "0::/../cri-containerd-abc.scope", "v2 key");
	is_int(proc_cgroup_key("", 0, out, sizeof(out)), -EINVAL, "empty cgroup refused");
	is_int(proc_cgroup_key("\n\n", 2, out, sizeof(out)), -EINVAL, "blank cgroup refused");
	is_int(proc_cgroup_key("0::/a\0b", 7, out, sizeof(out)), -EINVAL, "binary cgroup refused");
	is_int(proc_cgroup_key("garbage", 7, out, sizeof(out)), -EINVAL, "no colon refused");
	is_int(proc_cgroup_key("0::/abcdef", 10, out, 5), -EINVAL, "too long for the buffer refused");

	proc_cgroup_display("9:name=systemd:/kubepods/pod1/c1\n8:pids:/kubepods/pod1/c1\n0::/", out, sizeof(out));
	is_str(out, "/kubepods/pod1/c1", "hybrid with a root unified line shows the v1 path");
	proc_cgroup_display("8:pids:/\n0::/pod/c2", out, sizeof(out));
	is_str(out, "/pod/c2", "a distinct unified path is shown");
	proc_cgroup_display("0::/../cri-containerd-x.scope", out, sizeof(out));
	is_str(out, "/../cri-containerd-x.scope", "relative v2 path shown as is");
	/* No room at all: nothing is written (it used to look for the end of the line in the buffer). */
	memcpy(out, "ab\ncd", 6);
	proc_cgroup_display("0::/pod/c2", out, 0);
	ok(memcmp(out, "ab\ncd", 6) == 0, "a buffer of 0 bytes is left alone");

	/* A container's name, from the kubelet's termination-message mount. */
	{
		static const char mi[] =
			"318 254 0:55 / / rw,relatime - overlay overlay rw\n"
			"333 318 254:0 /var/lib/kubelet/pods/ea7d-19/etc-hosts /etc/hosts rw - ext4 /dev/vda rw\n"
			"334 318 254:0 /var/lib/kubelet/pods/ea7d-19/containers/first-app/8f1a497a /dev/termination-log "
			"rw,relatime - ext4 /dev/vda rw\n";
		static const char own_fs[] = "40 30 8:3 /pods/uid/containers/shipper/3575 /tmp/custom-term rw - xfs x rw";
		char name[64];

		is_int(proc_mountinfo_container(mi, sizeof(mi) - 1, name, sizeof(name)), 9, "kubelet mount: length");
		is_str(name, "first-app", "kubelet mount: the container's name");
		is_int(proc_mountinfo_container(own_fs, sizeof(own_fs) - 1, name, sizeof(name)), 7,
		       "a kubelet root on its own filesystem, no newline at the end");
		is_str(name, "shipper", "its name");
		is_int(proc_mountinfo_container(mi, 120, name, sizeof(name)), -ENOENT, "no such mount: -ENOENT");
		is_int(proc_mountinfo_container("1 2 3:4 /pods/u/containers/Bad_Name/x /t rw", 44, name, sizeof(name)),
		       -ENOENT, "a name that is no DNS label");
		is_int(proc_mountinfo_container("1 2 3:4 /pods/u/containers/app/x/y /t rw", 40, name, sizeof(name)),
		       -ENOENT, "a deeper path is not the termination file");
		is_int(proc_mountinfo_container("1 2 3:4 /pods/u/containers/app/ /t rw", 37, name, sizeof(name)),
		       -ENOENT, "no file name");
		is_int(proc_mountinfo_container("1 2 3:4 /x /pods/u/containers/app/id rw", 39, name, sizeof(name)),
		       -ENOENT, "in the mount point, not the root: no");
		is_int(proc_mountinfo_container(own_fs, sizeof(own_fs) - 1, name, 4), -ENOENT, "too long for the buffer");
		is_int(proc_mountinfo_container("", 0, name, sizeof(name)), -ENOENT, "empty (a zombie's)");
	}

	/* The pod's cgroup: the parent of the agent's, holding pid 1's too. */
	n = proc_cgroup_pod("12:pids:/kubepods/pod1/agent\n0::/", "12:pids:/kubepods/pod1/pause\n0::/", out,
			    sizeof(out));
	is_str(out, "12:pids:/kubepods/pod1", "v1: the pod is the parent of the agent's cgroup");
	is_int(n, (int)strlen(out), "its length");
	ok(proc_cgroup_within("12:pids:/kubepods/pod1/app\n0::/", out), "a container's cgroup is within");
	ok(!proc_cgroup_within("12:pids:/kubepods/pod1\n0::/", out), "the pod's own cgroup is not");
	ok(!proc_cgroup_within("12:pids:/system.slice/containerd.service\n0::/", out), "a runtime's is not");
	ok(!proc_cgroup_within("12:pids:/kubepods/pod10/app\n0::/", out), "another pod with a longer name is not");
	ok(!proc_cgroup_within("0::/kubepods/pod1/app", out), "a key without that hierarchy is not");
	n = proc_cgroup_pod("8:pids:/rg/agent\n0::/rg/agent", "8:pids:/rg/pause\n0::/rg/pause", out, sizeof(out));
	is_str(out, "0::/rg", "hybrid: the unified line where it tells containers apart");
	ok(proc_cgroup_within("8:pids:/\n0::/rg/app", out), "within, by the unified line");
	ok(!proc_cgroup_within("8:pids:/\n0::/", out), "the root is outside");
	/* A cgroup namespace: the agent's own cgroup is its root, the others climb out of it. */
	proc_cgroup_pod("0::/", "0::/../pause-ctr", out, sizeof(out));
	is_str(out, "0::/..", "cgroupns: the pod is the parent of the namespace's root");
	ok(proc_cgroup_within("0::/../app-ctr", out), "cgroupns: a sibling container is within");
	ok(!proc_cgroup_within("0::/../../system.slice", out), "cgroupns: a runtime's cgroup is not");
	ok(!proc_cgroup_within("0::/..", out), "cgroupns: the pod's own is not");
	is_int(proc_cgroup_pod("0::/a/agent", "0::/b/pause", out, sizeof(out)), -ENOENT,
	       "pid 1 outside the agent's parent: no pod layout");
	is_int(proc_cgroup_pod("0::/pod/agent", "0::/pod", out, sizeof(out)), -ENOENT,
	       "pid 1 in the parent itself: no pod layout");
	is_int(proc_cgroup_pod("0::/a/agent", "0::/a/pause", out, 4), -ENAMETOOLONG, "too long for the buffer");
	is_int(proc_cgroup_pod("garbage", "0::/a/pause", out, sizeof(out)), -EINVAL, "not a cgroup key");
	ok(!proc_cgroup_within("0::/pod/app", "garbage"), "a pod that is not a cgroup holds nothing");

	{
		static const char status[] = "Name:\tSigCgt: x\nState:\tS (sleeping)\nSigQ:\t0/63\n"
					     "SigPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n"
					     "SigIgn:\t0000000000001000\nSigCgt:\t0000000180004a02\nCapInh:\t0\n";
		uint64_t mask = 7;

		is_int(proc_status_sigmask(status, strlen(status), "SigCgt", &mask), 0, "SigCgt parsed");
		ok(mask == 0x180004a02ull, "SigCgt mask (a comm that reads SigCgt does not fool it)");
		ok(mask & (1ull << (15 - 1)), "SIGTERM (15) caught");
		is_int(proc_status_sigmask(status, strlen(status), "SigIgn", &mask), 0, "SigIgn parsed");
		ok(mask == 0x1000, "SigIgn mask (SIGPIPE)");
		mask = 7;
		is_int(proc_status_sigmask("SigCgt:\tffffffffffffffff", 24, "SigCgt", &mask), 0,
		       "every bit, no newline");
		ok(mask == UINT64_MAX, "every bit set");
		is_int(proc_status_sigmask("Name:\tx\n", 8, "SigCgt", &mask), -EINVAL, "no SigCgt line refused");
		is_int(proc_status_sigmask("SigCgt:\t\n", 9, "SigCgt", &mask), -EINVAL, "empty mask refused");
		is_int(proc_status_sigmask("SigCgt:\t00x0\n", 13, "SigCgt", &mask), -EINVAL, "not hex refused");
		is_int(proc_status_sigmask("SigCgt:\t10000000000000000\n", 26, "SigCgt", &mask), -EINVAL,
		       "more than 64 bits refused");
		is_int(proc_status_sigmask("SigCgtX:\t1\n", 11, "SigCgt", &mask), -EINVAL, "another key refused");
		is_int(proc_status_sigmask("SigCgt:\t0000000000004000", 17, "SigCgt", &mask), 0,
		       "a mask cut by the buffer's length");
		ok(mask == 0, "only the bytes within the length count");
		is_int(proc_status_state(status, strlen(status)), 'S', "State S");
		is_int(proc_status_state("State:\tR (running)\n", 19), 'R', "State R");
		is_int(proc_status_state("Name:\tState: S\n", 15), 0, "no State line (a comm does not count)");
		is_int(proc_status_state("State:\t\n", 8), 0, "an empty State");
		is_int(proc_status_state("State:\tsleepy\n", 14), 0, "not a state letter");
	}
	return done_testing();
}
