/*
 * One line per event on stderr, as text or as JSON (--log-format json).
 *
 *	log_info("container appeared");
 *	log_msg(LOG_INFO, FIELDS(LF_STR("sidecar", name), LF_INT("pid", pid)),
 *		"sending %s", "SIGTERM");
 *
 * Text:  2026-01-02T03:04:05.678Z info  sending SIGTERM sidecar=proxy pid=12
 * JSON:  {"ts":"2026-01-02T03:04:05.678Z","level":"info","msg":"sending SIGTERM",
 *         "sidecar":"proxy","pid":12}
 *
 * errno is preserved across every call. Lines are written whole, in order;
 * none is ever waited for (see log_nonblocking).
 */
#ifndef RG_LOG_H
#define RG_LOG_H

#include <stdbool.h>
#include <stdint.h>

#define RG_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };
enum log_format { LOG_TEXT, LOG_JSON };

enum log_field_type { LOGF_STR, LOGF_INT, LOGF_DURATION, LOGF_JSON };

struct log_field {
	const char *key; /* NULL ends a list */
	enum log_field_type type;
	const char *s;   /* LOGF_STR (NULL: the field is left out), LOGF_JSON */
	long long i;     /* LOGF_INT; LOGF_DURATION: microseconds */
};

#define LF_STR(k, v) { .key = (k), .type = LOGF_STR, .s = (v) }
#define LF_INT(k, v) { .key = (k), .type = LOGF_INT, .i = (long long)(v) }
#define LF_DURATION(k, us) { .key = (k), .type = LOGF_DURATION, .i = (long long)(us) }
#define LF_JSON(k, v) { .key = (k), .type = LOGF_JSON, .s = (v) }
#define FIELDS(...) ((const struct log_field[]){ __VA_ARGS__, { .key = NULL } })

/* Sets the level, the format and where lines go (2 for stderr). */
void log_setup(enum log_level level, enum log_format format, int fd);

/*
 * While held, lines are formatted and kept, not written: the agent holds
 * the log while its loop runs and writes the lines once per loop
 * iteration, before it waits again (log_flush), so that a stop request
 * goes out before the lines that explain it are written. log_finish()
 * writes what was kept and stops holding.
 */
void log_hold(void);
void log_flush(void);

/*
 * Log writes never block the loop: log_nonblocking() makes the output
 * non-blocking (for pipes and sockets, the outputs that can stall); what it
 * does not take waits in a bounded buffer (log_pending: the owner of the
 * loop calls log_flush when log_fd() is writable), and a line that does not
 * fit is dropped and counted (log_dropped), and the count is logged once
 * there is room again.
 */
int log_nonblocking(void);
/*
 * The stderr a child should get: the one rearguard was given, when
 * log_nonblocking replaced it with a non-blocking description of its own
 * (which, close-on-exec, a child would not inherit at all); -1 otherwise.
 */
int log_inherited_fd(void);
/* At the end: what waits is written if the output takes it within timeout_ms (a stalled one is left). */
void log_finish(int timeout_ms);
bool log_pending(void);
int log_fd(void);
unsigned long log_dropped(void);

void log_msg(enum log_level level, const struct log_field *fields, const char *fmt, ...) RG_PRINTF(3, 4);

#define log_error(...) log_msg(LOG_ERROR, NULL, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, NULL, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, NULL, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, NULL, __VA_ARGS__)

#endif
