/* Opening ELF files and walking their sections and functions: uprobes, symbols, BPF objects. */
#ifndef GRT_ELF_FILE_H
#define GRT_ELF_FILE_H

#include <gelf.h>
#include <libelf.h>

struct elf_handle {
	int fd;
	Elf *elf;
};

/*
 * Opens a regular file and checks it is an ELF file whose header tables lie
 * inside it. 0, or -errno (open), -ENOSYS (libelf unusable), -ENOEXEC (not a
 * regular file, not ELF, or cut short). Reads with pread, never a mapping.
 */
int elf_handle_open(const char *path, struct elf_handle *h);
/* Same over an image in memory (fd -1); image must outlive the handle. */
int elf_handle_open_memory(void *image, size_t len, struct elf_handle *h);
void elf_handle_close(struct elf_handle *h);

/* The section named name, or NULL; *sh is filled when found. */
Elf_Scn *elf_section_by_name(Elf *elf, const char *name, GElf_Shdr *sh);
/* The name of a section, or NULL. */
const char *elf_section_name(Elf *elf, const GElf_Shdr *sh);

/* Called for each named, defined function symbol; a negative return stops the walk. */
typedef int (*elf_function_fn)(void *arg, Elf *elf, const GElf_Sym *sym, const char *name);

/*
 * Walks the functions (STT_FUNC and STT_GNU_IFUNC with an address in a real
 * section) of every .symtab and .dynsym section. Returns the first negative
 * result of fn, else 0.
 */
int elf_each_function(Elf *elf, elf_function_fn fn, void *arg);

#endif
