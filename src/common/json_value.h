/* A JSON text read back into a tree, for the few places that reshape grtrace's own JSON. */
#ifndef GRT_JSON_VALUE_H
#define GRT_JSON_VALUE_H

#include <stddef.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_value {
	enum json_type type;
	/*
	 * NUMBER: its text as written (no rounding through a double); STRING:
	 * the decoded UTF-8; BOOL: "true" or "false"; NULL otherwise.
	 */
	char *text;
	size_t count;			/* ARRAY, OBJECT: number of items */
	char **keys;			/* OBJECT: the item keys, in order */
	struct json_value *items;	/* ARRAY, OBJECT: the items */
};

/*
 * Parses one JSON value (surrounding white space allowed). Returns a tree
 * to free with json_value_free(), or NULL with errno EINVAL (not JSON, or
 * nested deeper than 64) or ENOMEM.
 */
struct json_value *json_value_parse(const char *text, size_t len);
void json_value_free(struct json_value *v);
/* The item under key in an object, or NULL. */
const struct json_value *json_value_get(const struct json_value *v, const char *key);

#endif
