/* Per-record-type descriptions: name, minimum payload, and a describe() that lists the fields. */
#ifndef GRT_RECORD_DESC_H
#define GRT_RECORD_DESC_H

#include <stdint.h>
#include "grt_reader.h"
#include "grt_strings.h"

/*
 * A field emitter: describe() calls these for each field, in order, and the
 * text, CSV and JSON formatters (src/export) implement them. Keys are the
 * JSON keys documented in the README.
 */
struct grt_fields;

struct grt_fields_ops {
	void (*u64)(struct grt_fields *f, const char *key, uint64_t v);
	void (*i64)(struct grt_fields *f, const char *key, int64_t v);
	void (*hex)(struct grt_fields *f, const char *key, uint64_t v);
	void (*f64)(struct grt_fields *f, const char *key, double v);
	void (*str)(struct grt_fields *f, const char *key, const char *s); /* NULL allowed */
	void (*dim3)(struct grt_fields *f, const char *key, const uint32_t v[3]);
	void (*hex_list)(struct grt_fields *f, const char *key, const uint64_t *v, uint32_t n);
};

struct grt_fields {
	const struct grt_fields_ops *ops;
};

static inline void grt_field_u64(struct grt_fields *f, const char *k, uint64_t v) { f->ops->u64(f, k, v); }
static inline void grt_field_i64(struct grt_fields *f, const char *k, int64_t v) { f->ops->i64(f, k, v); }
static inline void grt_field_hex(struct grt_fields *f, const char *k, uint64_t v) { f->ops->hex(f, k, v); }
static inline void grt_field_f64(struct grt_fields *f, const char *k, double v) { f->ops->f64(f, k, v); }
static inline void grt_field_str(struct grt_fields *f, const char *k, const char *s) { f->ops->str(f, k, s); }
static inline void grt_field_dim3(struct grt_fields *f, const char *k, const uint32_t v[3]) { f->ops->dim3(f, k, v); }
static inline void grt_field_hex_list(struct grt_fields *f, const char *k, const uint64_t *v, uint32_t n) { f->ops->hex_list(f, k, v, n); }

struct grt_record_desc {
	uint16_t type;		/* enum grt_record_type */
	const char *name;	/* the "type" value in parse output: "launch", "alloc", ... */
	uint32_t min_len;	/* shorter payloads are corrupt */
	/*
	 * The size of the payload struct this build knows, when later minor
	 * versions appended fields to it (0: min_len). A payload between min_len
	 * and full_len comes from an older writer: the reader hands it out
	 * zero-extended to full_len, so the appended fields read as "unknown".
	 */
	uint32_t full_len;
	/* Variable-length payloads: checks the payload's own counts against its length. 0 = fine. */
	int (*validate)(const void *payload, uint32_t len);
	void (*describe)(const struct grt_record *rec, const struct grt_strings *strings,
			 struct grt_fields *out);
};

/*
 * Registers a description by placing a pointer to it in a linker section, so
 * a new record type is added by adding a file, not by editing a table.
 */
#define GRT_RECORD_DESC(var)                                                                       \
	static const struct grt_record_desc var;                                                   \
	static const struct grt_record_desc *const var##_entry                                     \
		__attribute__((used, section("grt_record_descs"), aligned(sizeof(void *)))) = &var; \
	static const struct grt_record_desc var

/* The description of a type, or NULL when this build does not know it. */
const struct grt_record_desc *grt_record_desc_find(uint16_t type);
/* Looks a description up by its name ("launch"); NULL when none. */
const struct grt_record_desc *grt_record_desc_by_name(const char *name);

#endif
