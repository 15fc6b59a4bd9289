/* Field layouts of tracefs events, read from their `format` files at run time. */
#ifndef GRT_TP_FORMAT_H
#define GRT_TP_FORMAT_H

#include <stdbool.h>

#define TP_FIELD_NAME_LEN 48
#define TP_MAX_FIELDS 32

struct tp_field {
	char name[TP_FIELD_NAME_LEN];
	int offset;
	int size;
	bool data_loc;		/* __data_loc: a u32 holding (length << 16 | offset) of the bytes */
	bool char_pointer;	/* "const char *": the address of a string in the kernel */
};

/* Parses the text of a format file. Returns the number of fields or -EINVAL. */
int tp_format_parse(const char *text, struct tp_field *fields, int max);
/* Reads and parses the format file at path (a copy of one, in tests). The count or a negative errno. */
int tp_format_read(const char *path, struct tp_field *fields, int max);
/* Reads /sys/kernel/tracing/events/CATEGORY/EVENT/format. Returns the count or a negative errno. */
int tp_format_load(const char *category, const char *event, struct tp_field *fields, int max);
const struct tp_field *tp_field_find(const struct tp_field *fields, int count, const char *name);

#endif
