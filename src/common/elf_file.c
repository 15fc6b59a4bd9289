/* Opening ELF files and walking their sections and functions: uprobes, symbols, BPF objects. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include "common/elf_file.h"

int elf_handle_open(const char *path, struct elf_handle *h)
{
	h->elf = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	h->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (h->fd < 0)
		return -errno;
	h->elf = elf_begin(h->fd, ELF_C_READ_MMAP, NULL);
	if (!h->elf || elf_kind(h->elf) != ELF_K_ELF) {
		elf_handle_close(h);
		return -ENOEXEC;
	}
	return 0;
}

int elf_handle_open_memory(void *image, size_t len, struct elf_handle *h)
{
	h->fd = -1;
	h->elf = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	h->elf = elf_memory(image, len);
	if (!h->elf || elf_kind(h->elf) != ELF_K_ELF) {
		elf_handle_close(h);
		return -ENOEXEC;
	}
	return 0;
}

void elf_handle_close(struct elf_handle *h)
{
	if (h->elf)
		elf_end(h->elf);
	if (h->fd >= 0)
		close(h->fd);
	h->elf = NULL;
	h->fd = -1;
}

const char *elf_section_name(Elf *elf, const GElf_Shdr *sh)
{
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	return elf_strptr(elf, shstrndx, sh->sh_name);
}

Elf_Scn *elf_section_by_name(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_section_name(elf, sh);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static bool is_function(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym->st_shndx != SHN_UNDEF &&
	       sym->st_shndx < SHN_LORESERVE && sym->st_value != 0;
}

static int walk_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, elf_function_fn fn,
			void *arg)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < count; i++) {
		GElf_Sym sym;
		const char *name;
		int err;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		if (!is_function(&sym))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (name && *name && (err = fn(arg, elf, &sym, name)) < 0)
			return err;
	}
	return 0;
}

int elf_each_function(Elf *elf, elf_function_fn fn, void *arg)
{
	Elf_Scn *scn = NULL;
	int err;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		if ((err = walk_section(elf, scn, &sh, fn, arg)) < 0)
			return err;
	}
	return 0;
}
