/* Opening ELF files and walking their function symbols: for uprobe offsets and for symbolizing. */
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
void elf_handle_close(struct elf_handle *h);

/* Called for each named, defined function symbol; a negative return stops the walk. */
typedef int (*elf_function_fn)(void *arg, Elf *elf, const GElf_Sym *sym, const char *name);

/*
 * Walks the functions (STT_FUNC and STT_GNU_IFUNC with an address in a real
 * section) of every .symtab and .dynsym section. Returns the first negative
 * result of fn, else 0.
 */
int elf_each_function(Elf *elf, elf_function_fn fn, void *arg);

#endif
