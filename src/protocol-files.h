/*
 * The files of the protocol on the shared volume, one name each, for the
 * module that watches and writes them (protocol.h) and for decide, which
 * asks for the agent's writes and hears what an earlier run left. Only
 * names here, no I/O: decide includes it and stays pure.
 *
 *	enum protocol_file f = PROTOCOL_APPS_DONE;
 *	protocol_file_name(f) is "apps-done"
 */
#ifndef RG_PROTOCOL_FILES_H
#define RG_PROTOCOL_FILES_H

enum protocol_file {
	PROTOCOL_READY,     /* ready: every sidecar is ready (the agent writes it) */
	PROTOCOL_DRAIN,     /* drain: drain now (anyone writes it) */
	PROTOCOL_APPS_DONE, /* apps-done: the apps are done, the drain runs (the agent) */
	PROTOCOL_DONE,      /* done: the JSON summary, at the end (the agent) */
	PROTOCOL_REPORT,    /* apps/NAME: an app finished; many, one per name */
	PROTOCOL_NFILES
};

/*
 * The file's name in the directory, as the documentation and the log lines
 * give it; a report's is a pattern, "apps/NAME", never a path to open.
 */
static inline const char *protocol_file_name(enum protocol_file f)
{
	static const char *const names[PROTOCOL_NFILES] = { "ready", "drain", "apps-done", "done", "apps/NAME" };

	return (unsigned)f < PROTOCOL_NFILES ? names[f] : "?";
}

#endif
