#!/usr/bin/env python3
"""Where one reaction's time goes, from a tracefs record of one trial.

    trace.py TRACE APP_PID|comm=NAME AGENT_PID PROXY_PID VARIANT

TRACE is the text of a tracefs instance (trace_clock mono) that recorded,
for the trial's processes: syscalls:sys_enter_exit_group (the app),
sched:sched_switch and sched:sched_waking (the agent and the proxy),
raw_syscalls:sys_enter (the agent), syscalls:sys_enter_sendto/write/writev
(the agent) and syscalls:sys_exit_read/recvfrom (the proxy).

Prints one JSON object (a raw sample of bench.sh's "trace" section) with
the four hops in microseconds:

    exit_to_awake      app exit_group -> the agent runs
    awake_to_written   the agent runs -> the stop request is written (sendto);
                       also the part of it the agent spent on a CPU
    written_to_proxy   written -> the proxy runs (0 when it was running)
    proxy_to_read      the proxy runs -> it has read the request

and the system calls the agent made between waking and writing.
"""
import json
import re
import sys

# "comm-pid [cpu] flags ts: event: fields", or "event(args)" and "event -> ret" for system calls.
LINE = re.compile(r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[\d+\]\s+\S+\s+(?P<ts>\d+\.\d+):\s+(?P<event>\w+)(?P<rest>.*)$")
SWITCH = re.compile(r"prev_pid=(?P<prev>\d+).*==> next_comm=.* next_pid=(?P<next>\d+)")
SYSCALL_NR = re.compile(r"NR (?P<nr>\d+)")
READ_RET = re.compile(r"->\s*(?P<ret>-?0x[0-9a-f]+|-?\d+)")

# The x86_64 numbers of the system calls that show up in a reaction.
NAMES = {0: "read", 1: "write", 3: "close", 7: "poll", 20: "writev", 41: "socket", 42: "connect", 44: "sendto",
         45: "recvfrom", 54: "setsockopt", 55: "getsockopt", 72: "fcntl", 202: "futex", 228: "clock_gettime",
         232: "epoll_wait", 233: "epoll_ctl", 257: "openat", 262: "newfstatat", 271: "ppoll", 281: "epoll_pwait",
         16: "ioctl", 217: "getdents64", 424: "pidfd_send_signal", 434: "pidfd_open", 51: "getsockname",
         52: "getpeername", 39: "getpid", 8: "lseek", 5: "fstat", 9: "mmap", 11: "munmap", 12: "brk",
         230: "clock_nanosleep", 14: "rt_sigprocmask", 13: "rt_sigaction", 288: "accept4", 46: "sendmsg",
         47: "recvmsg", 318: "getrandom", 332: "statx", 4: "stat", 6: "lstat", 257 + 1000: "?"}


def parse(path):
    events = []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = LINE.match(line)
            if m:
                events.append((float(m["ts"]) * 1e6, m["comm"].strip(), int(m["pid"]), m["event"],
                               m["rest"].lstrip(": ")))
    events.sort(key=lambda e: e[0])
    return events


def main():
    path, app, agent, proxy, variant = sys.argv[1:6]
    agent, proxy = int(agent), int(proxy)
    events = parse(path)

    def is_app(comm, pid):
        return comm == app[5:] if app.startswith("comm=") else pid == int(app)

    exit_t = next((t for t, c, p, e, _ in events if e == "sys_exit_group" and is_app(c, p)), None)
    if exit_t is None:
        sys.exit("trace.py: no exit_group of the app in the trace")
    # The exit wakes the agent (its pidfd turns readable): the waking, then its switch-in.
    waking_t = next((t for t, c, p, e, rest in events
                     if t >= exit_t and e == "sched_waking" and "pid=%d " % agent in rest), None)
    if waking_t is None:
        sys.exit("trace.py: the exit woke no agent")
    awake_t = written_t = None
    on_cpu, since = 0.0, None
    for t, c, p, e, rest in events:
        if t < waking_t:
            continue
        if e == "sched_switch":
            m = SWITCH.search(rest)
            if m and int(m["next"]) == agent:
                awake_t = awake_t or t
                since = t
            elif m and int(m["prev"]) == agent and since is not None:
                on_cpu += t - since
                since = None
        elif p == agent and since is None and e != "sched_waking":
            # Running without a switch-in on record (the idle task's switch is sometimes not
            # traced): its first system call is when it was on the CPU at the latest.
            awake_t = awake_t or t
            since = t
        # The request goes out with sendto (libcurl's send); a write would be a log line.
        if e == "sys_sendto" and p == agent and awake_t:
            written_t = t
            if since is not None:
                on_cpu += t - since
            break
    if awake_t is None or written_t is None:
        sys.exit("trace.py: the agent did not wake, or wrote no request")
    # The proxy: on the CPU at written_t, or its first switch-in after it.
    running = False
    for t, c, p, e, rest in events:
        if t > written_t:
            break
        if e == "sched_switch":
            m = SWITCH.search(rest)
            if m and int(m["next"]) == proxy:
                running = True
            elif m and int(m["prev"]) == proxy:
                running = False
    proxy_t = written_t if running else None
    read_t = None
    for t, c, p, e, rest in events:
        if t < written_t:
            continue
        if proxy_t is None and e == "sched_switch":
            m = SWITCH.search(rest)
            if m and int(m["next"]) == proxy:
                proxy_t = t
        elif proxy_t is None and p == proxy and e != "sched_waking":
            # On the CPU without a switch-in on record (see the agent's): its first system call.
            proxy_t = t
        if proxy_t is not None and p == proxy and e in ("sys_read", "sys_recvfrom"):
            m = READ_RET.search(rest)
            if m and int(m["ret"], 0) > 0:
                read_t = t
                break
    if proxy_t is None or read_t is None:
        sys.exit("trace.py: the proxy did not wake, or read nothing")
    calls = []
    for t, c, p, e, rest in events:
        if p == agent and awake_t <= t <= written_t and e == "sys_enter":
            m = SYSCALL_NR.search(rest)
            if m:
                calls.append(NAMES.get(int(m["nr"]), "nr" + m["nr"]))
    print(json.dumps({
        "section": "trace", "variant": variant,
        "exit_to_awake_us": round(awake_t - exit_t, 1),
        "awake_to_written_us": round(written_t - awake_t, 1),
        "awake_to_written_on_cpu_us": round(on_cpu, 1),
        "written_to_proxy_us": round(proxy_t - written_t, 1),
        "proxy_to_read_us": round(read_t - proxy_t, 1),
        "total_us": round(read_t - exit_t, 1),
        "agent_syscalls": calls,
    }))


if __name__ == "__main__":
    main()
