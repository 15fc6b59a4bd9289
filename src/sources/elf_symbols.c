/* Function symbol lookup in ELF files with libelf, for attaching uprobes by offset. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>
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

static int scan_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, const struct u64_map *wanted,
		       const char *const *names, uint64_t *offsets)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t nsyms = shdr->sh_entsize ? shdr->sh_size / shdr->sh_entsize : 0;
	int found = 0;

	for (size_t i = 0; data && i < nsyms; i++) {
		GElf_Sym sym;
		const char *name;
		long at;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= SHN_LORESERVE || !sym.st_value)
			continue;
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		at = name ? wanted_index(wanted, names, name) : -1;
		if (at < 0 || offsets[at])
			continue;
		offsets[at] = file_offset_of(elf, sym.st_shndx, sym.st_value);
		found += offsets[at] != 0;
	}
	return found;
}

int elf_find_functions(const char *path, const char *const *names, size_t count, uint64_t *offsets)
{
	struct u64_map wanted;
	Elf_Scn *scn = NULL;
	int fd, found = 0, err;
	Elf *elf;

	memset(offsets, 0, count * sizeof(*offsets));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	u64_map_init(&wanted);
	err = index_names(&wanted, names, count);
	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_type == SHT_DYNSYM || shdr.sh_type == SHT_SYMTAB)
			found += scan_symtab(elf, scn, &shdr, &wanted, names, offsets);
	}
	u64_map_destroy(&wanted);
	elf_end(elf);
	close(fd);
	return err ? err : found;
}
