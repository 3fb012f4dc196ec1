/*
 * What the libFuzzer targets share: a reader that takes typed values off
 * the front of the input, and copies of input pieces into heap buffers of
 * exactly their size, so that AddressSanitizer catches a parser reading one
 * byte past what it was given. FUZZ_CHECK aborts with the property that
 * failed: libFuzzer then saves the input as a crash.
 *
 *	struct fuzz_in in = { data, size };
 *	unsigned mode = fuzz_byte(&in) % 4;
 *	char *text = fuzz_str(&in);     (up to the next NUL, NUL-terminated)
 *	...
 *	free(text);
 *
 * tools/fuzz builds each tests/fuzz/NAME.c with the sources it names and
 * runs it on tests/fuzz/corpus/NAME/.
 */
#ifndef RG_FUZZ_H
#define RG_FUZZ_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_CHECK(cond)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "property failed: %s at %s:%d\n", #cond, __FILE__, __LINE__);                  \
			abort();                                                                                       \
		}                                                                                                      \
	} while (0)

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The next byte, or 0 once the input is used up. */
static inline uint8_t fuzz_byte(struct fuzz_in *in)
{
	uint8_t b = 0;

	if (in->n > 0) {
		b = in->p[0];
		in->p++;
		in->n--;
	}
	return b;
}

/* The next four bytes as a little-endian number (zeros past the end). */
static inline uint32_t fuzz_u32(struct fuzz_in *in)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v |= (uint32_t)fuzz_byte(in) << (8 * i);
	return v;
}

/* The next eight bytes as a little-endian number. */
static inline uint64_t fuzz_u64(struct fuzz_in *in)
{
	uint64_t lo = fuzz_u32(in);

	return lo | (uint64_t)fuzz_u32(in) << 32;
}

/* n bytes in a heap block of exactly n bytes (no terminator; 0 bytes is a block too). */
static inline char *fuzz_copy(const void *p, size_t n)
{
	char *c = malloc(n);

	if (!c && n)
		abort();
	if (n)
		memcpy(c, p, n);
	return c;
}

/* An output buffer of exactly n bytes, filled with 0x5a so that what a parser leaves alone shows. */
static inline char *fuzz_buf(size_t n)
{
	char *c = malloc(n);

	if (!c && n)
		abort();
	if (n)
		memset(c, 0x5a, n);
	return c;
}

/* The bytes up to the next NUL (or the end), consumed with the NUL, as a string of exactly that size. */
static inline char *fuzz_str(struct fuzz_in *in)
{
	const uint8_t *nul = memchr(in->p, '\0', in->n);
	size_t len = nul ? (size_t)(nul - in->p) : in->n;
	char *s = malloc(len + 1);

	if (!s)
		abort();
	memcpy(s, in->p, len);
	s[len] = '\0';
	in->p += nul ? len + 1 : len;
	in->n -= nul ? len + 1 : len;
	return s;
}

/* The rest of the input as a string of exactly its size, cut at a NUL. */
static inline char *fuzz_rest(struct fuzz_in *in)
{
	char *s = fuzz_str(in);

	in->p += in->n;
	in->n = 0;
	return s;
}

/* stdout to /dev/null, so that a target whose code prints (--help) does not flood the fuzzer's output. */
static inline void fuzz_quiet_stdout(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		dup2(fd, 1);
		close(fd);
	}
}

/* Whether n bytes at p are all zero: what a cleared structure holds. */
static inline int fuzz_all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

#endif
