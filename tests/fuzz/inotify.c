/*
 * The inotify events of the shared volume: names are whatever a container
 * creates there, and a read may end in the middle of an event. The decoder
 * must consume whole events only, never read past the buffer, and turn a
 * name into a protocol file only when it is one.
 */
#include "config.h"

#include "fuzz.h"
#include "protocol.h"

#include <sys/inotify.h>

static const char *const bases[] = {"rearguard", "apps", "x", ""};
/* The files in the directory, spelt out here rather than taken from the code under test. */
static const char *const names[PROTOCOL_REPORT] = {
	[PROTOCOL_READY] = "ready",
	[PROTOCOL_DRAIN] = "drain",
	[PROTOCOL_APPS_DONE] = "apps-done",
	[PROTOCOL_DONE] = "done",
};

static void check(const struct protocol_event *ev, int wd_dir, int wd_apps, int wd_parent, const char *base)
{
	size_t n = strnlen(ev->name, sizeof(ev->name));

	FUZZ_CHECK(n < sizeof(ev->name));
	FUZZ_CHECK((ev->kind == PROTOCOL_EV_FILE) == (ev->file != PROTOCOL_NFILES));
	switch (ev->kind) {
	case PROTOCOL_EV_NOTHING:
	case PROTOCOL_EV_REREAD:
		break;
	case PROTOCOL_EV_FILE:
		if (ev->file == PROTOCOL_REPORT)
			FUZZ_CHECK(n > 0 && ev->name[0] != '.' && wd_apps >= 0);
		else
			FUZZ_CHECK((unsigned)ev->file < PROTOCOL_REPORT && strcmp(ev->name, names[ev->file]) == 0 &&
				   wd_dir >= 0);
		break;
	case PROTOCOL_EV_APPS_DIR:
		FUZZ_CHECK(strcmp(ev->name, "apps") == 0 && wd_dir >= 0);
		break;
	case PROTOCOL_EV_DIR:
		FUZZ_CHECK(strcmp(ev->name, base) == 0 && wd_parent >= 0);
		break;
	default:
		FUZZ_CHECK(!"an event kind that does not exist");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t b = fuzz_byte(&in);
	/* Watch descriptors -1 (none) to 2, so that they collide now and then. */
	int wd_dir = (b & 3) - 1, wd_apps = (b >> 2 & 3) - 1, wd_parent = (b >> 4 & 3) - 1;
	const char *base = bases[b >> 6];
	char *buf = fuzz_copy(in.p, in.n);
	struct protocol_event ev;
	struct inotify_event h;
	size_t off = 0, used;

	while (off < in.n) {
		memset(&ev, 0x5a, sizeof(ev));
		used = protocol_decode(buf + off, in.n - off, wd_dir, wd_apps, wd_parent, base, &ev);
		if (in.n - off >= sizeof(h))
			memcpy(&h, buf + off, sizeof(h));
		if (used == 0) {
			/* Only an event cut short is left. */
			FUZZ_CHECK(in.n - off < sizeof(h) || sizeof(h) + h.len > in.n - off);
			break;
		}
		FUZZ_CHECK(used == sizeof(h) + h.len && used <= in.n - off);
		check(&ev, wd_dir, wd_apps, wd_parent, base);
		off += used;
	}
	free(buf);
	return 0;
}
