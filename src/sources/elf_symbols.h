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

/*
 * Moves each non-zero offset past an endbr64 landing pad at the function's
 * start. A uprobe on endbr64 is single-stepped out of line (an extra trap,
 * ~1 us in a VM) while the instruction after it is usually a push that the
 * kernel emulates; arguments and the return address are untouched by
 * endbr64, so entry and return probes see the same state 4 bytes later.
 * Returns how many offsets moved, or a negative errno.
 */
int elf_skip_landing_pads(const char *path, uint64_t *offsets, size_t count);

#endif
