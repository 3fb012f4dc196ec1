#include "config.h"

#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int parse_duration_ms(const char *s, int64_t *out_ms)
{
	static const struct { const char *suffix; int64_t ms; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "", 1000 },
	};
	int64_t whole = 0, frac = 0, frac_div = 1, ms;
	const char *p = s;
	size_t i;

	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (*p - '0');
		if (whole > DURATION_MAX_MS)
			return -ERANGE;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_div < 1000000000) {
				frac = frac * 10 + (*p - '0');
				frac_div *= 10;
			}
		}
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(p, units[i].suffix) == 0)
			break;
	if (i == sizeof(units) / sizeof(units[0]))
		return -EINVAL;
	if (whole > DURATION_MAX_MS / units[i].ms)
		return -ERANGE;
	ms = whole * units[i].ms + frac * units[i].ms / frac_div;
	if (ms > DURATION_MAX_MS)
		return -ERANGE;
	*out_ms = ms;
	return 0;
}

int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static const struct { const char *name; int sig; } signals[] = {
	{ "TERM", SIGTERM }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "HUP", SIGHUP },
	{ "KILL", SIGKILL }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "ABRT", SIGABRT },
	{ "ALRM", SIGALRM }, { "PWR", SIGPWR }, { "WINCH", SIGWINCH }, { "STOP", SIGSTOP },
	{ "CONT", SIGCONT }, { "PIPE", SIGPIPE }, { "SEGV", SIGSEGV }, { "BUS", SIGBUS },
	{ "FPE", SIGFPE }, { "ILL", SIGILL }, { "TRAP", SIGTRAP }, { "SYS", SIGSYS },
	{ "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
	{ "CHLD", SIGCHLD }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU }, { "TSTP", SIGTSTP },
	{ "URG", SIGURG }, { "IO", SIGIO }, { "STKFLT", SIGSTKFLT },
};

int parse_signal(const char *s, int *out)
{
	unsigned long num;
	size_t i;

	if (parse_uint(s, 1, 31, &num) == 0) {
		*out = (int)num;
		return 0;
	}
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		if (strcasecmp(s, signals[i].name) == 0) {
			*out = signals[i].sig;
			return 0;
		}
	}
	return -EINVAL;
}

const char *signal_name(int sig)
{
	size_t i;

	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (signals[i].sig == sig)
			return signals[i].name;
	return "?";
}

void format_duration(int64_t ms, char out[32])
{
	if (ms != 0 && ms % 3600000 == 0)
		snprintf(out, 32, "%lldh", (long long)(ms / 3600000));
	else if (ms != 0 && ms % 60000 == 0)
		snprintf(out, 32, "%lldm", (long long)(ms / 60000));
	else if (ms % 1000 == 0)
		snprintf(out, 32, "%llds", (long long)(ms / 1000));
	else
		snprintf(out, 32, "%lldms", (long long)ms);
}
