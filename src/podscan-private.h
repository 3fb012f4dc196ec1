/*
 * What podscan.c lends podscan-proc.c: a file of /proc/PID read through
 * podscan's descriptors (its reserve too), and whether command lines are
 * off (podscan_names_only). Theirs alone.
 */
#ifndef RG_PODSCAN_PRIVATE_H
#define RG_PODSCAN_PRIVATE_H

#include "podscan.h"

/* PID's file what (stat, cmdline, status...) into buf, NUL-terminated, in one read; -errno. */
int podscan_read_pid_file(const struct podscan *ps, char *buf, size_t cap, pid_t pid, const char *what,
			  size_t *len);
bool podscan_cmdlines_off(const struct podscan *ps);

#endif
