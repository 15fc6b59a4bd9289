/* File offsets of function symbols in an ELF shared object: where a uprobe on them goes. */
#ifndef GRT_ELF_SYMBOLS_H
#define GRT_ELF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/*
 * For each of the count names, stores in offsets[i] the file offset of the
 * defined function symbol of that name in path's .dynsym or .symtab, or 0
 * when there is none. Returns how many were found, or a negative errno
 * (-ENOENT no such file, -ENOEXEC not an ELF object).
 */
int elf_find_functions(const char *path, const char *const *names, size_t count, uint64_t *offsets);

#endif
