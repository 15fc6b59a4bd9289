/* Reading raw UVM queue captures, and turning one into a queue the driver's readers can drain. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sources/uvm_capture.h"

int uvm_capture_load(const char *path, struct uvm_capture *out, char *why, size_t why_len)
{
	FILE *f = fopen(path, "rb");
	long size = -1;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!f) {
		err = -errno;
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
		return err;
	}
	if (!fseek(f, 0, SEEK_END))
		size = ftell(f);
	rewind(f);
	if (size < 0 || fread(&out->h, sizeof(out->h), 1, f) != 1 ||
	    memcmp(out->h.magic, UVM_CAPTURE_MAGIC, 8) ||
	    out->h.entry_size != uvm_entry_size((enum uvm_queue_version)out->h.version) ||
	    !out->h.entry_size || out->h.count > (uint64_t)size / out->h.entry_size ||
	    (uint64_t)size != sizeof(out->h) + out->h.count * out->h.entry_size) {
		snprintf(why, why_len, "%s is not a UVM queue capture (header, or size %ld)", path,
			 size);
		err = -EINVAL;
	} else if (!(out->entries = malloc(out->h.count * out->h.entry_size + 1))) {
		snprintf(why, why_len, "out of memory reading %s", path);
		err = -ENOMEM;
	} else if (fread(out->entries, out->h.entry_size, out->h.count, f) != out->h.count) {
		snprintf(why, why_len, "%s: cut short", path);
		err = -EIO;
	}
	fclose(f);
	if (err)
		uvm_capture_free(out);
	return err;
}

void uvm_capture_free(struct uvm_capture *c)
{
	free(c->entries);
	c->entries = NULL;
}

int uvm_capture_queue(const struct uvm_capture *c, struct uvm_queue *q)
{
	uint32_t slots = 2;
	uint8_t *entries;

	memset(q, 0, sizeof(*q));
	/* one slot always stays free, as in the driver's queues */
	while (slots <= c->h.count && slots < (1u << 30))
		slots *= 2;
	if (slots <= c->h.count)
		return -E2BIG;
	entries = calloc(slots, c->h.entry_size);
	q->ctrl = calloc(1, sizeof(*q->ctrl));
	if (!entries || !q->ctrl) {
		free(entries);
		free(q->ctrl);
		q->ctrl = NULL;
		return -ENOMEM;
	}
	memcpy(entries, c->entries, c->h.count * c->h.entry_size);
	q->entries = entries;
	q->count = slots;
	q->entry_size = c->h.entry_size;
	q->ctrl->put_ahead = q->ctrl->put_behind = (uint32_t)c->h.count;
	q->ctrl->dropped[0] = c->h.dropped;
	return 0;
}

void uvm_capture_queue_free(struct uvm_queue *q)
{
	free((void *)q->entries);
	free(q->ctrl);
	memset(q, 0, sizeof(*q));
}
