/* Opening ELF files and walking their sections and functions: uprobes, symbols, BPF objects. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/elf_file.h"
#include "common/regular_file.h"

/*
 * The tables libelf reads later (section and program headers) must lie inside
 * the file, so a file cut short is "not valid" here rather than a fault or an
 * empty symbol list later.
 */
static bool tables_inside_file(Elf *elf, uint64_t file_size)
{
	GElf_Ehdr eh;
	size_t nsections, nsegments;

	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &nsections) ||
	    elf_getphdrnum(elf, &nsegments))
		return false;
	if (eh.e_shoff > file_size || nsections * (uint64_t)eh.e_shentsize > file_size - eh.e_shoff)
		return false;
	if (eh.e_phoff > file_size || nsegments * (uint64_t)eh.e_phentsize > file_size - eh.e_phoff)
		return false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return false;
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > file_size || sh.sh_size > file_size - sh.sh_offset))
			return false;
	}
	return nsections > 0 || nsegments > 0;
}

int elf_handle_open(const char *path, struct elf_handle *h)
{
	struct stat st;

	h->elf = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	h->fd = regular_file_open(path, &st);
	if (h->fd < 0)
		return h->fd == REGULAR_FILE_NOT_REGULAR ? -ENOEXEC : h->fd;
	/*
	 * ELF_C_READ, not ELF_C_READ_MMAP: libelf then reads with pread, so a
	 * file that is cut short (or truncated by its owner while we read it)
	 * gives a read error instead of SIGBUS on a mapped page past its end.
	 */
	h->elf = elf_begin(h->fd, ELF_C_READ, NULL);
	if (!h->elf || elf_kind(h->elf) != ELF_K_ELF || !tables_inside_file(h->elf, (uint64_t)st.st_size)) {
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
	if (!h->elf || elf_kind(h->elf) != ELF_K_ELF || !tables_inside_file(h->elf, len)) {
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
