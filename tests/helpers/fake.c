/*
 * A stand-in for an app or a sidecar in the integration tests. Its process
 * name is whatever it is exec'd as (tests use symlinks: fluent-bit, job).
 *
 *   fake [WORD...] [--run DUR] [--exit N] [--on SIG:ACTION]... [--children N]
 *        [--log FILE] [--name NAME] [--started FILE] [--handler-delay DUR]
 *
 *   WORD            words that are no option (a subcommand: "vault kv get x") are
 *                   ignored, so that a process can look like a real program's run
 *
 *   --run DUR       exit after DUR (e.g. 2s, 150ms); default: until a signal
 *   --exit N        the exit code when --run ends (default 0)
 *   --on SIG:ACTION what SIG (TERM, INT, QUIT, HUP, USR1, USR2) does:
 *                   exit:N, ignore, delay:DUR:N (exit N after DUR), or die
 *                   (killed by that signal, as a program that does not
 *                   handle it is); default for TERM, INT and QUIT: exit:0
 *   --children N    fork N children that behave the same and run until a signal
 *   --log FILE      append "<unix time in ms> <name> <pid> <event>" lines
 *   --started FILE  create FILE once running (tests wait for it)
 *   --handler-delay DUR
 *                   take no signal for DUR after the exec (every signal has its
 *                   default action: SIGTERM kills it), as a program that
 *                   installs its handlers only after its start-up work
 *
 * With RG_EVENT_CLOCK=mono in the environment, event times are the monotonic
 * clock in microseconds (for the benchmark) instead of wall-clock ms.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "event.h"

#define MAXSIG 65

enum action { ACT_DEFAULT, ACT_EXIT, ACT_IGNORE, ACT_DELAY, ACT_DIE };

static struct {
	enum action act;
	int code;
	long delay_ms;
} on[MAXSIG];
static const char *name = "fake";
static int logfd = -1;

__attribute__((format(printf, 1, 2)))
static void logev(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	event_vlog(logfd, name, fmt, ap);
	va_end(ap);
}

static int signum(const char *s)
{
	static const struct { const char *n; int s; } t[] = {
		{ "TERM", SIGTERM }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
		{ "HUP", SIGHUP }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strncmp(s, t[i].n, strlen(t[i].n)) == 0 && s[strlen(t[i].n)] == ':')
			return t[i].s;
	fprintf(stderr, "fake: bad --on %s\n", s);
	exit(64);
}

static void parse_on(const char *spec)
{
	int sig = signum(spec);
	const char *a = strchr(spec, ':') + 1;

	if (strncmp(a, "exit:", 5) == 0) {
		on[sig].act = ACT_EXIT;
		on[sig].code = atoi(a + 5);
	} else if (strcmp(a, "ignore") == 0) {
		on[sig].act = ACT_IGNORE;
	} else if (strcmp(a, "die") == 0) {
		on[sig].act = ACT_DIE;
	} else if (strncmp(a, "delay:", 6) == 0 && strchr(a + 6, ':')) {
		char dur[32];
		size_t n = (size_t)(strchr(a + 6, ':') - (a + 6));

		snprintf(dur, sizeof(dur), "%.*s", (int)n, a + 6);
		on[sig].act = ACT_DELAY;
		on[sig].delay_ms = parse_ms(dur);
		on[sig].code = atoi(strchr(a + 6, ':') + 1);
	} else {
		fprintf(stderr, "fake: bad action %s\n", a);
		exit(64);
	}
}

static void nothing(int sig)
{
	(void)sig;
}

static void finish(int code)
{
	char c[16];

	snprintf(c, sizeof(c), "%d", code);
	logev("exit %s", c);
	exit(code);
}

/* Dies of sig the way a program without a handler for it does: the kernel reports the signal. */
static void die_of(int sig)
{
	sigset_t one;

	logev("dying of the signal");
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	raise(sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	_exit(125); /* not reached: the signal's default action is to terminate */
}

static void run(long run_ms, int exit_code)
{
	long deadline = run_ms >= 0 ? mono_ms() + run_ms : -1;
	sigset_t set;

	sigemptyset(&set);
	for (int s = 1; s < 32; s++)
		if (s != SIGKILL && s != SIGSTOP && s != SIGSEGV && s != SIGBUS && s != SIGFPE && s != SIGILL)
			sigaddset(&set, s);
	for (;;) {
		struct timespec ts, *tp = NULL;
		siginfo_t info;
		int sig;

		if (deadline >= 0) {
			long left = deadline - mono_ms();

			if (left <= 0)
				finish(exit_code);
			ts.tv_sec = left / 1000;
			ts.tv_nsec = (left % 1000) * 1000000;
			tp = &ts;
		}
		sig = sigtimedwait(&set, &info, tp);
		if (sig < 0)
			continue; /* EAGAIN: the deadline; EINTR */
		if (sig == SIGCHLD) {
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
			continue;
		}
		logev("got SIG%s", sig == SIGTERM ? "TERM" : sig == SIGINT ? "INT" : sig == SIGQUIT ? "QUIT"
				   : sig == SIGHUP ? "HUP" : "OTHER");
		switch (on[sig].act) {
		case ACT_IGNORE:
			break;
		case ACT_DELAY:
			deadline = mono_ms() + on[sig].delay_ms;
			exit_code = on[sig].code;
			break;
		case ACT_EXIT:
			finish(on[sig].code);
			break;
		case ACT_DIE:
			die_of(sig);
			break;
		case ACT_DEFAULT:
			if (sig == SIGTERM || sig == SIGINT || sig == SIGQUIT)
				finish(0);
			break;
		}
	}
}

int main(int argc, char **argv)
{
	long run_ms = -1, handler_delay_ms = 0;
	int exit_code = 0, children = 0, i;
	const char *started = NULL;
	sigset_t all;

	name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		/* Words of a real program's command line (vault kv get ...): taken as they are. */
		if (a[0] != '-')
			continue;
		if (!v) {
			fprintf(stderr, "fake: %s needs a value\n", a);
			return 64;
		}
		if (strcmp(a, "--run") == 0)
			run_ms = parse_ms(v);
		else if (strcmp(a, "--exit") == 0)
			exit_code = atoi(v);
		else if (strcmp(a, "--on") == 0)
			parse_on(v);
		else if (strcmp(a, "--children") == 0)
			children = atoi(v);
		else if (strcmp(a, "--log") == 0)
			logfd = open(v, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
		else if (strcmp(a, "--name") == 0)
			name = v;
		else if (strcmp(a, "--started") == 0)
			started = v;
		else if (strcmp(a, "--handler-delay") == 0)
			handler_delay_ms = parse_ms(v);
		else {
			fprintf(stderr, "fake: unknown option %s\n", a);
			return 64;
		}
		i++;
	}
	if (handler_delay_ms > 0) {
		long until = mono_ms() + handler_delay_ms;
		struct timespec ts;

		logev("no handler yet");
		while (mono_ms() < until) {
			ts.tv_sec = 0;
			ts.tv_nsec = 10 * 1000000L;
			nanosleep(&ts, NULL);
		}
	}
	/* Signals are taken with sigtimedwait: block them before anything can arrive. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	/*
	 * And handled as a program handles them: /proc/PID/status shows them
	 * caught (SigCgt). Blocked, the handler never runs; sigtimedwait takes them.
	 */
	{
		static const int handled[] = { SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2 };
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = nothing;
		sigemptyset(&sa.sa_mask);
		for (size_t k = 0; k < sizeof(handled) / sizeof(handled[0]); k++)
			if (on[handled[k]].act != ACT_DIE)
				sigaction(handled[k], &sa, NULL);
	}
	logev("started");
	for (i = 0; i < children; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			logev("child started");
			run(-1, 0);
		}
	}
	if (started) {
		int fd = open(started, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);

		if (fd >= 0)
			close(fd);
	}
	run(run_ms, exit_code);
	return 0;
}
