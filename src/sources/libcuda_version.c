/* The NVIDIA driver and CUDA versions, read as data: never by loading or running libcuda. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sources/libcuda_version.h"

/* "580.159.04", "575.57", "418.226.00": digits and dots, starting and ending with a digit. */
static size_t version_token_len(const char *s)
{
	size_t n = 0, dots = 0;

	while (isdigit((unsigned char)s[n]) || (s[n] == '.' && n && isdigit((unsigned char)s[n + 1]))) {
		dots += s[n] == '.';
		n++;
	}
	return dots ? n : 0;
}

static int copy_token(const char *s, size_t n, char *out, size_t len)
{
	if (!n || n >= len)
		return -ENOENT;
	memcpy(out, s, n);
	out[n] = 0;
	return 0;
}

int driver_version_from_proc_line(const char *line, char *out, size_t len)
{
	const char *at = strstr(line, "Kernel Module");

	if (!at)
		return -ENOENT;
	for (at += strlen("Kernel Module"); *at && *at != '\n'; at++)
		if ((at[-1] == ' ' || at[-1] == '\t') && version_token_len(at))
			return copy_token(at, version_token_len(at), out, len);
	return -ENOENT;
}

int driver_version_from_libcuda_name(const char *libcuda_path, char *out, size_t len)
{
	char resolved[PATH_MAX];
	const char *base;
	size_t n;

	if (!realpath(libcuda_path, resolved))
		return -ENOENT;
	base = strrchr(resolved, '/');
	base = base ? base + 1 : resolved;
	if (strncmp(base, "libcuda.so.", 11))
		return -ENOENT;
	n = version_token_len(base + 11);
	/* "libcuda.so.1" is the link's own name, not a version */
	if (base[11 + n])
		return -ENOENT;
	return copy_token(base + 11, n, out, len);
}

/*
 * Driver branch -> the CUDA version its libcuda reports (cuDriverGetVersion),
 * from NVIDIA's CUDA release notes (minimum driver of each toolkit release).
 */
static const struct {
	unsigned branch;
	const char *cuda;
} branches[] = {
	{ 590, "13.1" }, { 580, "13.0" }, { 575, "12.9" }, { 570, "12.8" }, { 565, "12.7" },
	{ 560, "12.6" }, { 555, "12.5" }, { 550, "12.4" }, { 545, "12.3" }, { 535, "12.2" },
	{ 530, "12.1" }, { 525, "12.0" }, { 520, "11.8" }, { 515, "11.7" }, { 510, "11.6" },
	{ 495, "11.5" }, { 470, "11.4" }, { 465, "11.3" }, { 460, "11.2" }, { 455, "11.1" },
	{ 450, "11.0" },
};

int cuda_version_of_driver(const char *driver_version, char *out, size_t len)
{
	char *end;
	unsigned long branch = strtoul(driver_version, &end, 10);

	if (end == driver_version || *end != '.')
		return -ENOENT;
	for (size_t i = 0; i < sizeof(branches) / sizeof(branches[0]); i++)
		if (branches[i].branch == branch)
			return copy_token(branches[i].cuda, strlen(branches[i].cuda), out, len);
	return -ENOENT;
}

/* First line of a small system file; 0 or -errno. */
static int read_first_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(out, (int)len, f))
		err = -ENOENT;
	fclose(f);
	return err;
}

void versions_read(const char *libcuda_path, char *driver, size_t driver_len, char *cuda,
		   size_t cuda_len)
{
	char line[256];

	driver[0] = cuda[0] = 0;
	if (!read_first_line("/proc/driver/nvidia/version", line, sizeof(line)) &&
	    !driver_version_from_proc_line(line, driver, driver_len))
		;
	else if (!read_first_line("/sys/module/nvidia/version", line, sizeof(line)) &&
		 !copy_token(line, version_token_len(line), driver, driver_len))
		;
	else if (!libcuda_path || driver_version_from_libcuda_name(libcuda_path, driver, driver_len))
		driver[0] = 0;
	if (driver[0] && cuda_version_of_driver(driver, cuda, cuda_len))
		cuda[0] = 0;
}
