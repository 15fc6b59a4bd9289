/* The NVIDIA driver and CUDA versions, read as data: never by loading or running libcuda. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/elf_file.h"
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
 * libcuda carries, among its read-only data, a small JSON document describing
 * itself: {"format":1,"CUDA version":"13.0","driver":[...],...} (seen in the
 * 580 driver's libcuda). Its "CUDA version" is what cuDriverGetVersion
 * answers, so it is read from there as bytes. The 580 driver keeps it in a
 * note section (.note.cuda.fwd_compatibility); rather than trust one name,
 * every allocated section that is neither writable nor code is searched.
 */
#define CUDA_VERSION_KEY "\"CUDA version\":\""
#define SCAN_CHUNK (1u << 20)

/* The version after the key at text (len bytes available): 0 with out filled, or -ENOENT. */
static int version_after_key(const char *text, size_t len, char *out, size_t out_len)
{
	char token[32];
	size_t n = 0;

	while (n < len && n + 1 < sizeof(token) &&
	       (isdigit((unsigned char)text[n]) || text[n] == '.'))
		n++;
	if (n == len || text[n] != '"')
		return -ENOENT;
	memcpy(token, text, n);
	token[n] = 0;
	return copy_token(token, version_token_len(token) == n ? n : 0, out, out_len);
}

static bool is_read_only_data(const GElf_Shdr *sh)
{
	return (sh->sh_type == SHT_PROGBITS || sh->sh_type == SHT_NOTE) && (sh->sh_flags & SHF_ALLOC) &&
	       !(sh->sh_flags & (SHF_WRITE | SHF_EXECINSTR)) && sh->sh_size;
}

/* Searches one section's bytes (buf holds SCAN_CHUNK + keep): 0 with out filled, -ENOENT, -EIO. */
static int scan_section(int fd, const GElf_Shdr *sh, char *buf, size_t keep, char *out, size_t len)
{
	size_t key_len = strlen(CUDA_VERSION_KEY);

	/* chunks overlap by keep bytes, so a key and its value split across two are still seen */
	for (uint64_t at = 0; at < sh->sh_size; at += SCAN_CHUNK) {
		size_t want = sh->sh_size - at < SCAN_CHUNK + keep ? sh->sh_size - at
								  : SCAN_CHUNK + keep;
		ssize_t got = pread(fd, buf, want, (off_t)(sh->sh_offset + at));
		const char *hit;

		if (got <= 0)
			return -EIO;
		hit = memmem(buf, (size_t)got, CUDA_VERSION_KEY, key_len);
		if (hit)
			return version_after_key(hit + key_len, (size_t)got - (hit + key_len - buf), out,
						 len);
		if (at + (size_t)got >= sh->sh_size)
			break;
	}
	return -ENOENT;
}

int cuda_version_from_libcuda(const char *libcuda_path, char *out, size_t len)
{
	size_t keep = strlen(CUDA_VERSION_KEY) + 32;
	struct elf_handle h;
	char *buf;
	int err;

	err = elf_handle_open(libcuda_path, &h);
	if (err)
		return err;
	buf = malloc(SCAN_CHUNK + keep);
	err = buf ? -ENOENT : -ENOMEM;
	for (Elf_Scn *scn = NULL; buf && err == -ENOENT && (scn = elf_nextscn(h.elf, scn));) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && is_read_only_data(&sh))
			err = scan_section(h.fd, &sh, buf, keep, out, len);
	}
	free(buf);
	elf_handle_close(&h);
	return err;
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
	if (!libcuda_path || cuda_version_from_libcuda(libcuda_path, cuda, cuda_len))
		cuda[0] = 0;
}
