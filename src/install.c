#include "config.h"

#include "install.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int install_binary(const char *dir, size_t *size)
{
	struct stat st;
	size_t len = 0;
	char *buf = NULL;
	int exe, dirfd = -1, rc;

	/* The binary this process runs, even if its path has changed since. */
	exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (exe < 0)
		return -errno;
	rc = fstat(exe, &st) < 0 ? -errno : 0;
	if (rc == 0 && !(buf = malloc((size_t)st.st_size + 1)))
		rc = -ENOMEM;
	if (rc == 0)
		rc = read_small_fd(exe, buf, (size_t)st.st_size + 1, &len, READ_TO_END);
	if (rc == 0 && len != (size_t)st.st_size)
		rc = -EIO; /* changed under us */
	if (rc == 0 && (dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = -errno;
	if (rc == 0)
		rc = write_atomic_at(dirfd, INSTALL_NAME, buf, len, 0755, NULL);
	if (rc == 0)
		*size = len;
	if (dirfd >= 0)
		close(dirfd);
	close(exe);
	free(buf);
	return rc;
}
