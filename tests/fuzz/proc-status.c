/*
 * /proc/PID/status of a sidecar's root: the agent reads its signal masks
 * (SigCgt, SigIgn, SigBlk) and its State before it sends the stop signal.
 * Its Name line is the process's comm, chosen by whoever runs it. A mask
 * is the hex the kernel writes, or an error with the output untouched; a
 * state is a capital letter or 0.
 */
#include "config.h"

#include "fuzz.h"
#include "proc.h"

#include <errno.h>
#include <inttypes.h>

static const char *const keys[] = {"SigCgt", "SigIgn", "SigBlk"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	uint64_t mask, again;
	char line[64], state;
	size_t i;
	int rc, n;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		mask = 0x5a5a5a5a5a5a5a5aull;
		rc = proc_status_sigmask(buf, size, keys[i], &mask);
		if (rc < 0) {
			FUZZ_CHECK(rc == -EINVAL);
			FUZZ_CHECK(mask == 0x5a5a5a5a5a5a5a5aull);
			continue;
		}
		FUZZ_CHECK(rc == 0);
		/* Written back as the kernel writes it, it reads the same. */
		n = snprintf(line, sizeof(line), "%s:\t%016" PRIx64 "\n", keys[i], mask);
		FUZZ_CHECK(n > 0 && (size_t)n < sizeof(line));
		FUZZ_CHECK(proc_status_sigmask(line, (size_t)n, keys[i], &again) == 0 && again == mask);
	}
	state = proc_status_state(buf, size);
	FUZZ_CHECK(state == 0 || (state >= 'A' && state <= 'Z'));
	free(buf);
	return 0;
}
