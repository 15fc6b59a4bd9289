/* Small helpers for the images fatbin.c meets: PTX text checks and ELF section lookup. */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include "fatbin_image.h"

/* Skips blanks and comments; returns the offset of the first other byte (or len). */
static size_t skip_blank(const char *t, size_t len, size_t i)
{
	while (i < len && t[i]) {
		if (isspace((unsigned char)t[i])) {
			i++;
		} else if (t[i] == '/' && i + 1 < len && t[i + 1] == '/') {
			while (i < len && t[i] && t[i] != '\n')
				i++;
		} else if (t[i] == '/' && i + 1 < len && t[i + 1] == '*') {
			for (i += 2; i < len && t[i]; i++)
				if (t[i] == '*' && i + 1 < len && t[i + 1] == '/') {
					i += 2;
					break;
				}
		} else {
			break;
		}
	}
	return i;
}

bool ptx_text_looks_valid(const char *text, size_t max_len)
{
	static const char version[] = ".version";
	size_t i = skip_blank(text, max_len, 0);

	for (size_t k = 0; k < sizeof(version) - 1; k++)
		if (i + k >= max_len || text[i + k] != version[k])
			return false;
	return true;
}

unsigned ptx_text_target_arch(const char *text, size_t len)
{
	static const char target[] = ".target";
	const char *p = memmem(text, len, target, sizeof(target) - 1);
	size_t i;
	unsigned arch = 0;

	if (!p)
		return 0;
	i = (size_t)(p - text) + sizeof(target) - 1;
	while (i < len && (text[i] == ' ' || text[i] == '\t'))
		i++;
	if (len - i < 3 || memcmp(text + i, "sm_", 3))
		return 0;
	for (i += 3; i < len && isdigit((unsigned char)text[i]) && arch < 100000; i++)
		arch = arch * 10 + (unsigned)(text[i] - '0');
	return arch;
}

static uint64_t le(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ELF64 header fields and section header fields this lookup needs. */
#define EHDR_SIZE 64
#define SHDR_SIZE 64

int elf_find_section(const uint8_t *elf, size_t len, const char *name, uint64_t *off,
		     uint64_t *size)
{
	uint64_t shoff, shnum, shstrndx, str_off, str_size;
	size_t name_len = strlen(name);

	if (len < EHDR_SIZE || memcmp(elf, "\177ELF", 4) || elf[4] != 2 || elf[5] != 1)
		return -EINVAL;
	shoff = le(elf + 0x28, 8);
	shnum = le(elf + 0x3c, 2);
	shstrndx = le(elf + 0x3e, 2);
	if (le(elf + 0x3a, 2) != SHDR_SIZE || shoff > len || shnum > (len - shoff) / SHDR_SIZE ||
	    shstrndx >= shnum)
		return -EINVAL;
	str_off = le(elf + shoff + shstrndx * SHDR_SIZE + 0x18, 8);
	str_size = le(elf + shoff + shstrndx * SHDR_SIZE + 0x20, 8);
	if (str_off > len || str_size > len - str_off)
		return -EINVAL;
	for (uint64_t i = 0; i < shnum; i++) {
		const uint8_t *sh = elf + shoff + i * SHDR_SIZE;
		uint64_t name_off = le(sh, 4);
		uint64_t type = le(sh + 4, 4);

		if (name_off >= str_size || str_size - name_off <= name_len ||
		    memcmp(elf + str_off + name_off, name, name_len + 1))
			continue;
		*off = le(sh + 0x18, 8);
		*size = le(sh + 0x20, 8);
		if (type == 8 /* SHT_NOBITS */ || *off > len || *size > len - *off)
			return -EINVAL;
		return 0;
	}
	return -ENOENT;
}
