/* Parsing tracefs `format` files: field name, offset, size, and whether it is a __data_loc string. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sources/bpf_util.h"
#include "sources/tp_format.h"

static bool is_ident_char(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * The declared name: the last identifier once array brackets are skipped,
 * for "char prev_comm[16]" as for "__data_loc char[] driver".
 */
static int declared_name(const char *decl, size_t len, char *name, size_t name_len)
{
	const char *end = decl + len, *start;

	while (end > decl && end[-1] == ' ')
		end--;
	if (end > decl && end[-1] == ']') {
		while (end > decl && end[-1] != '[')
			end--;
		if (end > decl)
			end--;
		while (end > decl && end[-1] == ' ')
			end--;
	}
	start = end;
	while (start > decl && is_ident_char(start[-1]))
		start--;
	if (start == end || (size_t)(end - start) >= name_len)
		return -EINVAL;
	memcpy(name, start, end - start);
	name[end - start] = 0;
	return 0;
}

/* One "\tfield:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;" line. */
static int parse_field_line(const char *line, struct tp_field *f)
{
	const char *decl = strstr(line, "field:"), *semi, *off, *size;

	if (!decl)
		return -EINVAL;
	decl += 6;
	semi = strchr(decl, ';');
	off = semi ? strstr(semi, "offset:") : NULL;
	size = off ? strstr(off, "size:") : NULL;
	if (!size || declared_name(decl, semi - decl, f->name, sizeof(f->name)))
		return -EINVAL;
	f->offset = atoi(off + 7);
	f->size = atoi(size + 5);
	f->data_loc = !strncmp(decl, "__data_loc ", 11);
	f->char_pointer = !f->data_loc && memmem(decl, semi - decl, "char *", 6) != NULL;
	return f->offset >= 0 && f->size > 0 ? 0 : -EINVAL;
}

int tp_format_parse(const char *text, struct tp_field *fields, int max)
{
	int count = 0;

	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[512];

		if (len >= sizeof(buf) || !memmem(line, len, "field:", 6))
			continue;
		memcpy(buf, line, len);
		buf[len] = 0;
		if (count == max || parse_field_line(buf, &fields[count]))
			return -EINVAL;
		count++;
	}
	return count ? count : -EINVAL;
}

int tp_format_read(const char *path, struct tp_field *fields, int max)
{
	char text[8192];
	size_t n;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	return tp_format_parse(text, fields, max);
}

int tp_format_load(const char *category, const char *event, struct tp_field *fields, int max)
{
	char path[256];
	int err = grt_ensure_tracefs();

	if (err)
		return err;
	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/%s/format", category, event);
	return tp_format_read(path, fields, max);
}

const struct tp_field *tp_field_find(const struct tp_field *fields, int count, const char *name)
{
	for (int i = 0; i < count; i++)
		if (!strcmp(fields[i].name, name))
			return &fields[i];
	return NULL;
}
