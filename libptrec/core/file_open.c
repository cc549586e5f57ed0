/* file_open.c — opening an input file for a reader without ever blocking on it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/file_open.h"

int ptrec_open_regular(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

const char *ptrec_file_type(mode_t mode)
{
	if (S_ISREG(mode)) return "regular file";
	if (S_ISDIR(mode)) return "directory";
	if (S_ISFIFO(mode)) return "FIFO";
	if (S_ISCHR(mode)) return "character device";
	if (S_ISBLK(mode)) return "block device";
	if (S_ISSOCK(mode)) return "socket";
	if (S_ISLNK(mode)) return "symbolic link";
	return "special file";
}
