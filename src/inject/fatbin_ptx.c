/* Picking the PTX to rewrite out of an image or a file, or saying why there is none. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fatbin.h"
#include "fatbin_image.h"

static int fail(struct fatbin_ptx *ptx, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct fatbin_ptx *ptx, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ptx->reason, sizeof(ptx->reason), fmt, ap);
	va_end(ap);
	return err;
}

static int ptx_from_text(const char *text, size_t max_len, struct fatbin_ptx *ptx)
{
	size_t len = strnlen(text, max_len);

	ptx->text = malloc(len + 1);
	if (!ptx->text)
		return fail(ptx, -ENOMEM, "out of memory copying %zu bytes of PTX", len);
	memcpy(ptx->text, text, len);
	ptx->text[len] = 0;
	ptx->len = len;
	ptx->arch = ptx_text_target_arch(ptx->text, len);
	return 0;
}

/* What the walk over a fat binary's entries saw. */
struct ptx_choice {
	struct fatbin_entry best; /* the PTX entry chosen so far */
	bool have_best;
	unsigned oldest_ptx; /* lowest PTX arch seen, for the "too new" reason */
	unsigned cubins;
	unsigned cubin_arch;
};

static bool better(const struct ptx_choice *c, const struct fatbin_entry *e, unsigned device_arch)
{
	if (device_arch && e->arch > device_arch)
		return false;
	return !c->have_best || e->arch > c->best.arch;
}

static int ptx_from_fatbin(const void *image, size_t max_len, unsigned device_arch,
			   struct fatbin_ptx *ptx)
{
	struct fatbin_iter it;
	struct fatbin_entry e;
	struct ptx_choice c = {0};
	char *buf;
	size_t len;
	int n, err;

	if (fatbin_iter_init(&it, image, max_len))
		return fail(ptx, -EINVAL, "malformed fat binary header");
	while ((n = fatbin_iter_next(&it, &e)) > 0) {
		if (e.kind == FATBIN_ENTRY_ELF) {
			c.cubins++;
			c.cubin_arch = e.arch;
		}
		if (e.kind != FATBIN_ENTRY_PTX)
			continue;
		if (!c.oldest_ptx || e.arch < c.oldest_ptx)
			c.oldest_ptx = e.arch;
		if (better(&c, &e, device_arch)) {
			c.best = e;
			c.have_best = true;
		}
	}
	if (n < 0)
		return fail(ptx, -EINVAL, "malformed fat binary entry at offset %llu",
			    (unsigned long long)it.pos);
	if (!c.have_best && c.oldest_ptx)
		return fail(ptx, -ENOEXEC, "PTX only for sm_%u or newer, the device is sm_%u",
			    c.oldest_ptx, device_arch);
	if (!c.have_best && c.cubins)
		return fail(ptx, -ENOENT, "no PTX (machine code only: %u cubin(s), sm_%u)",
			    c.cubins, c.cubin_arch);
	if (!c.have_best)
		return fail(ptx, -ENOENT, "no PTX (empty fat binary)");
	err = fatbin_entry_contents(&c.best, &buf, &len);
	if (err == -ENOMEM)
		return fail(ptx, err, "out of memory decompressing %llu bytes of PTX",
			    (unsigned long long)c.best.uncompressed_size);
	if (err)
		return fail(ptx, err, "corrupt compressed PTX entry (sm_%u)", c.best.arch);
	ptx->text = buf;
	ptx->len = strnlen(buf, len);
	ptx->arch = c.best.arch;
	ptx->was_compressed = c.best.compressed;
	return 0;
}

int fatbin_find_ptx(const void *image, size_t max_len, unsigned device_arch, struct fatbin_ptx *ptx)
{
	memset(ptx, 0, sizeof(*ptx));
	switch (fatbin_classify(image, max_len)) {
	case FATBIN_IMAGE_WRAPPER:
	case FATBIN_IMAGE_FATBIN:
		return ptx_from_fatbin(image, max_len, device_arch, ptx);
	case FATBIN_IMAGE_PTX:
		return ptx_from_text(image, max_len, ptx);
	case FATBIN_IMAGE_ELF:
		return fail(ptx, -ENOENT, "no PTX (machine code only: cubin)");
	default:
		return fail(ptx, -EINVAL, "not a fat binary, cubin or PTX image");
	}
}

/* A host ELF (executable, shared library) carries its fat binaries in .nv_fatbin. */
static int ptx_from_elf_file(const uint8_t *map, size_t size, unsigned device_arch,
			     struct fatbin_ptx *ptx)
{
	uint64_t off, len;
	int err = elf_find_section(map, size, ".nv_fatbin", &off, &len);

	if (err == -ENOENT)
		return fail(ptx, -ENOENT, "no PTX (machine code only: cubin)");
	if (err)
		return fail(ptx, -EINVAL, "malformed ELF headers");
	return ptx_from_fatbin(map + off, len, device_arch, ptx);
}

int fatbin_find_ptx_file(const char *path, unsigned device_arch, struct fatbin_ptx *ptx)
{
	struct stat st;
	void *map;
	int fd, err;

	memset(ptx, 0, sizeof(*ptx));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(ptx, -errno, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) || st.st_size <= 0) {
		close(fd);
		return fail(ptx, -EINVAL, "%s is empty or unreadable", path);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return fail(ptx, -errno, "cannot map %s: %s", path, strerror(errno));
	if (fatbin_classify(map, (size_t)st.st_size) == FATBIN_IMAGE_ELF)
		err = ptx_from_elf_file(map, (size_t)st.st_size, device_arch, ptx);
	else
		err = fatbin_find_ptx(map, (size_t)st.st_size, device_arch, ptx);
	munmap(map, (size_t)st.st_size);
	return err;
}

void fatbin_ptx_free(struct fatbin_ptx *ptx)
{
	free(ptx->text);
	ptx->text = NULL;
	ptx->len = 0;
}
