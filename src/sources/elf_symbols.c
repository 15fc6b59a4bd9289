/* Function symbol lookup in ELF files with libelf, for attaching uprobes by offset. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "common/elf_file.h"
#include "common/u64_map.h"
#include "sources/elf_symbols.h"

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

/* Index of name among the wanted names (hash -> index, chained by probing hash+1), or -1. */
static long wanted_index(const struct u64_map *wanted, const char *const *names, const char *name)
{
	uint64_t h = name_hash(name), index;

	while (u64_map_get(wanted, h, &index)) {
		if (!strcmp(names[index], name))
			return (long)index;
		h++;
	}
	return -1;
}

static int index_names(struct u64_map *wanted, const char *const *names, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		uint64_t h = name_hash(names[i]);

		while (u64_map_get(wanted, h, NULL))
			h++;
		if (u64_map_put(wanted, h, i))
			return -ENOMEM;
	}
	return 0;
}

/* The file offset of virtual address addr of section index shndx, 0 if outside it. */
static uint64_t file_offset_of(Elf *elf, size_t shndx, uint64_t addr)
{
	Elf_Scn *scn = elf_getscn(elf, shndx);
	GElf_Shdr shdr;

	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
		return 0;
	if (addr < shdr.sh_addr || addr >= shdr.sh_addr + shdr.sh_size)
		return 0;
	return addr - shdr.sh_addr + shdr.sh_offset;
}

struct wanted_functions {
	struct u64_map index; /* name hash -> position in names */
	const char *const *names;
	uint64_t *offsets;
	int found;
};

static int take_if_wanted(void *arg, Elf *elf, const GElf_Sym *sym, const char *name)
{
	struct wanted_functions *w = arg;
	long at = wanted_index(&w->index, w->names, name);

	if (at < 0 || w->offsets[at])
		return 0;
	w->offsets[at] = file_offset_of(elf, sym->st_shndx, sym->st_value);
	w->found += w->offsets[at] != 0;
	return 0;
}

int elf_find_functions(const char *path, const char *const *names, size_t count, uint64_t *offsets)
{
	struct wanted_functions w = {.names = names, .offsets = offsets};
	struct elf_handle h;
	int err;

	memset(offsets, 0, count * sizeof(*offsets));
	err = elf_handle_open(path, &h);
	if (err)
		return err;
	u64_map_init(&w.index);
	err = index_names(&w.index, names, count);
	if (!err)
		err = elf_each_function(h.elf, take_if_wanted, &w);
	u64_map_destroy(&w.index);
	elf_handle_close(&h);
	return err ? err : w.found;
}

int elf_skip_landing_pads(const char *path, uint64_t *offsets, size_t count)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	unsigned char head[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC), moved = 0;

	if (fd < 0)
		return -errno;
	for (size_t i = 0; i < count; i++) {
		if (!offsets[i] || pread(fd, head, sizeof(head), (off_t)offsets[i]) != sizeof(head))
			continue;
		if (!memcmp(head, endbr64, sizeof(head))) {
			offsets[i] += sizeof(head);
			moved++;
		}
	}
	close(fd);
	return moved;
}
