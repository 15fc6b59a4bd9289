/* A small recursive-descent JSON reader producing a tree (numbers kept as their text). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/json_value.h"

#define JSON_VALUE_MAX_DEPTH 64

struct json_input {
	const char *at;
	const char *end;
	int err;	/* 0, EINVAL or ENOMEM */
};

static void skip_space(struct json_input *in)
{
	while (in->at < in->end && strchr(" \t\r\n", *in->at) && *in->at)
		in->at++;
}

static bool take(struct json_input *in, char c)
{
	skip_space(in);
	if (in->at < in->end && *in->at == c) {
		in->at++;
		return true;
	}
	return false;
}

static void fail(struct json_input *in, int err)
{
	if (!in->err)
		in->err = err;
}

static char *copy_text(struct json_input *in, const char *from, size_t len)
{
	char *s = malloc(len + 1);

	if (!s) {
		fail(in, ENOMEM);
		return NULL;
	}
	memcpy(s, from, len);
	s[len] = 0;
	return s;
}

static int hex4(const char *p, uint32_t *out)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -EINVAL;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *d, uint32_t cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | cp >> 6);
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xe0 | cp >> 12);
		d[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		d[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | cp >> 18);
	d[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	d[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	d[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A "\uXXXX" escape at p (after the backslash-u), a surrogate pair joined; returns bytes used. */
static size_t unicode_escape(const char *p, const char *end, uint32_t *cp)
{
	uint32_t low;

	if (end - p < 4 || hex4(p, cp))
		return 0;
	if (*cp >= 0xd800 && *cp < 0xdc00 && end - p >= 10 && p[4] == '\\' && p[5] == 'u' &&
	    !hex4(p + 6, &low) && low >= 0xdc00 && low < 0xe000) {
		*cp = 0x10000 + ((*cp - 0xd800) << 10) + (low - 0xdc00);
		return 10;
	}
	return 4;
}

/* The string after its opening quote; escapes decoded (the result is never longer). */
static char *parse_string(struct json_input *in)
{
	const char *start = in->at;
	char *s, *d;

	while (in->at < in->end && *in->at != '"')
		in->at += *in->at == '\\' ? 2 : 1;
	if (in->at >= in->end) {
		fail(in, EINVAL);
		return NULL;
	}
	s = d = malloc((size_t)(in->at - start) + 1);
	if (!s) {
		fail(in, ENOMEM);
		return NULL;
	}
	for (const char *p = start; p < in->at; p++) {
		uint32_t cp;
		size_t used;

		if (*p != '\\') {
			*d++ = *p;
			continue;
		}
		switch (*++p) {
		case 'n': *d++ = '\n'; break;
		case 't': *d++ = '\t'; break;
		case 'r': *d++ = '\r'; break;
		case 'b': *d++ = '\b'; break;
		case 'f': *d++ = '\f'; break;
		case 'u':
			used = unicode_escape(p + 1, in->at, &cp);
			if (!used) {
				fail(in, EINVAL);
				break;
			}
			d += put_utf8(d, cp);
			p += used;
			break;
		default: *d++ = *p; break;
		}
	}
	*d = 0;
	in->at++;
	return s;
}

static void parse_value(struct json_input *in, struct json_value *v, int depth);

static int grow(struct json_input *in, struct json_value *v, size_t *cap, bool with_keys)
{
	size_t want = *cap ? *cap * 2 : 8;
	struct json_value *items;

	if (v->count < *cap)
		return 0;
	items = realloc(v->items, want * sizeof(*items));
	if (items)
		v->items = items;
	if (items && with_keys) {
		char **keys = realloc(v->keys, want * sizeof(*keys));

		if (keys)
			v->keys = keys;
		else
			items = NULL;
	}
	if (!items) {
		fail(in, ENOMEM);
		return -ENOMEM;
	}
	*cap = want;
	return 0;
}

static void parse_container(struct json_input *in, struct json_value *v, int depth, bool object)
{
	size_t cap = 0;

	v->type = object ? JSON_OBJECT : JSON_ARRAY;
	if (take(in, object ? '}' : ']'))
		return;
	do {
		char *key = NULL;

		if (object && !(take(in, '"') && (key = parse_string(in)) && take(in, ':'))) {
			free(key);
			fail(in, EINVAL);
			return;
		}
		if (grow(in, v, &cap, object)) {
			free(key);
			return;
		}
		if (object)
			v->keys[v->count] = key;
		memset(&v->items[v->count], 0, sizeof(v->items[0]));
		v->count++;
		parse_value(in, &v->items[v->count - 1], depth + 1);
	} while (!in->err && take(in, ','));
	if (!in->err && !take(in, object ? '}' : ']'))
		fail(in, EINVAL);
}

static bool take_word(struct json_input *in, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(in->end - in->at) < n || memcmp(in->at, word, n))
		return false;
	in->at += n;
	return true;
}

static void parse_number(struct json_input *in, struct json_value *v)
{
	const char *start = in->at;

	while (in->at < in->end && *in->at && strchr("+-0123456789.eE", *in->at))
		in->at++;
	if (in->at == start) {
		fail(in, EINVAL);
		return;
	}
	v->type = JSON_NUMBER;
	v->text = copy_text(in, start, (size_t)(in->at - start));
}

static void parse_value(struct json_input *in, struct json_value *v, int depth)
{
	if (depth > JSON_VALUE_MAX_DEPTH) {
		fail(in, EINVAL);
		return;
	}
	skip_space(in);
	if (take(in, '{')) {
		parse_container(in, v, depth, true);
	} else if (take(in, '[')) {
		parse_container(in, v, depth, false);
	} else if (take(in, '"')) {
		v->type = JSON_STRING;
		v->text = parse_string(in);
	} else if (take_word(in, "true")) {
		v->type = JSON_BOOL;
		v->text = copy_text(in, "true", 4);
	} else if (take_word(in, "false")) {
		v->type = JSON_BOOL;
		v->text = copy_text(in, "false", 5);
	} else if (take_word(in, "null")) {
		v->type = JSON_NULL;
	} else {
		parse_number(in, v);
	}
}

static void free_children(struct json_value *v)
{
	for (size_t i = 0; i < v->count; i++) {
		free_children(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->text);
}

struct json_value *json_value_parse(const char *text, size_t len)
{
	struct json_input in = { .at = text, .end = text + len };
	struct json_value *v = calloc(1, sizeof(*v));

	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	parse_value(&in, v, 0);
	skip_space(&in);
	if (!in.err && in.at != in.end)
		in.err = EINVAL;
	if (in.err) {
		json_value_free(v);
		errno = in.err;
		return NULL;
	}
	return v;
}

void json_value_free(struct json_value *v)
{
	if (!v)
		return;
	free_children(v);
	free(v);
}

const struct json_value *json_value_get(const struct json_value *v, const char *key)
{
	if (v->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < v->count; i++)
		if (!strcmp(v->keys[i], key))
			return &v->items[i];
	return NULL;
}
