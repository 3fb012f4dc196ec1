/*
 * The options' defaults, written once. options.c takes its values and
 * --help its words from here; tools/defaults writes them into the man page
 * and README.md, and tests/docs/defaults.sh fails when those differ.
 *
 * A duration is written as the user would write it (parse_duration).
 */
#ifndef RG_DEFAULTS_H
#define RG_DEFAULTS_H

#define DEFAULT_DIR "/var/run/rearguard"
#define DEFAULT_TERMINATION_LOG "/dev/termination-log"

/* The agent's and drain's durations. */
#define DEFAULT_STARTUP_TIMEOUT "10m"
#define DEFAULT_SIDECAR_WAIT "2m"
#define DEFAULT_READY_TIMEOUT "5m"
#define DEFAULT_STOP_TIMEOUT "20s"
#define DEFAULT_KILL_AFTER "5s"
#define DEFAULT_TERM_GRACE "25s"
#define DEFAULT_RESTART_GRACE "5m"

/* rearguard run's wait for ready, and rearguard wait's. */
#define DEFAULT_WAIT_TIMEOUT "10m"

#endif
