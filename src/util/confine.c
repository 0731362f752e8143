/*
 * confine.c — whether a file lies inside a folder, by real path: what a
 * daemon serving one folder asks before it reads a file a link may have
 * led it to. Paths are compared whole components at a time, so "/x2" is
 * not inside "/x".
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

int fa_real_inside(const char *root_real, const char *real)
{
	size_t n = strlen(root_real);
	if (n == 1 && root_real[0] == '/')
		return real[0] == '/';
	return strncmp(real, root_real, n) == 0 && (real[n] == '\0' || real[n] == '/');
}

int fa_fd_real_path(int fd, char *out, size_t cap)
{
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	ssize_t n = cap ? readlink(proc, out, cap - 1) : -1;
	if (n <= 0 || (size_t)n >= cap - 1 || out[0] != '/')
		return -1;   /* no /proc, or a name too long to be sure of */
	out[n] = '\0';
	return 0;
}
