/* The producer side of the recorder's shared ring: messages from this process, never waiting. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "inject/channel.h"
#include "inject/inject.h"

#define NAMES_INITIAL 1024

int channel_open(struct inject_channel *ch, const char *path)
{
	struct stat sb;
	void *map;
	int fd, err = 0;

	if (ch->ring)
		return 0;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) || sb.st_size < (off_t)SHM_RING_DATA_OFFSET) {
		close(fd);
		return -EINVAL;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	if (shm_ring_check(map, (uint64_t)sb.st_size)) {
		munmap(map, (size_t)sb.st_size);
		return -EINVAL;
	}
	ch->ring = map;
	ch->map_len = (uint64_t)sb.st_size;
	atomic_fetch_add(&ch->ring->producers, 1);
	return err;
}

void channel_close(struct inject_channel *ch)
{
	if (ch->ring)
		munmap(ch->ring, ch->map_len);
	ch->ring = NULL;
	free(ch->names_sent);
	ch->names_sent = NULL;
	ch->names_cap = ch->names_used = 0;
}

void channel_fill_head(struct inj_head *h, uint64_t ts_ns)
{
	int cpu = sched_getcpu();

	h->pid = (uint32_t)inject()->pid;
	h->tid = inject_tid();
	h->cpu = cpu < 0 ? 0 : (uint32_t)cpu;
	h->reserved = 0;
	h->ts_ns = ts_ns;
}

void channel_send(struct inject_channel *ch, uint32_t type, const void *msg, uint32_t len)
{
	if (ch->ring)
		shm_ring_write(ch->ring, type, msg, len);
}

/* The open-addressing set of sent name ids; called with names_lock held. */
static bool names_insert(struct inject_channel *ch, uint64_t id)
{
	uint32_t mask, i;

	if ((ch->names_used + 1) * 2 > ch->names_cap) {
		uint32_t cap = ch->names_cap ? ch->names_cap * 2 : NAMES_INITIAL;
		uint64_t *bigger = calloc(cap, sizeof(*bigger));

		if (!bigger)
			return true; /* cannot remember: send again next time */
		for (uint32_t j = 0; j < ch->names_cap; j++) {
			uint64_t v = ch->names_sent[j];

			if (!v)
				continue;
			for (i = (uint32_t)v & (cap - 1); bigger[i]; i = (i + 1) & (cap - 1))
				;
			bigger[i] = v;
		}
		free(ch->names_sent);
		ch->names_sent = bigger;
		ch->names_cap = cap;
	}
	mask = ch->names_cap - 1;
	for (i = (uint32_t)id & mask; ch->names_sent[i]; i = (i + 1) & mask)
		if (ch->names_sent[i] == id)
			return false;
	ch->names_sent[i] = id;
	ch->names_used++;
	return true;
}

static void names_forget(struct inject_channel *ch, uint64_t id)
{
	uint32_t mask = ch->names_cap - 1;

	/* linear probing: re-insert the cluster after the hole */
	for (uint32_t i = (uint32_t)id & mask; ch->names_sent[i]; i = (i + 1) & mask) {
		if (ch->names_sent[i] != id)
			continue;
		ch->names_sent[i] = 0;
		ch->names_used--;
		for (uint32_t j = (i + 1) & mask; ch->names_sent[j]; j = (j + 1) & mask) {
			uint64_t v = ch->names_sent[j];

			ch->names_sent[j] = 0;
			ch->names_used--;
			names_insert(ch, v);
		}
		return;
	}
}

uint64_t channel_name(struct inject_channel *ch, const char *name)
{
	size_t len;
	uint64_t id;
	struct inj_name *msg;

	if (!name)
		return 0;
	id = inj_name_hash(name);
	if (!ch->ring)
		return id;
	pthread_mutex_lock(&ch->names_lock);
	if (!names_insert(ch, id)) {
		pthread_mutex_unlock(&ch->names_lock);
		return id;
	}
	len = strnlen(name, GRT_INJECT_MAX_NAME - 1);
	msg = shm_ring_reserve(ch->ring, INJ_MSG_NAME, (uint32_t)(sizeof(*msg) + len + 1));
	if (!msg) {
		names_forget(ch,
			     id); /* the record referring to it may still arrive: try next time */
		pthread_mutex_unlock(&ch->names_lock);
		return id;
	}
	channel_fill_head(&msg->head, inject_now_ns());
	msg->name_id = id;
	memcpy(msg->text, name, len);
	msg->text[len] = 0;
	shm_ring_commit(ch->ring, msg);
	pthread_mutex_unlock(&ch->names_lock);
	return id;
}

static void vstatus(struct inject_channel *ch, uint32_t part, int status, uint64_t ts_ns,
		    const char *fmt, va_list ap)
{
	char text[512];
	struct inj_status *msg;
	int n;

	n = vsnprintf(text, sizeof(text), fmt, ap);
	if (n < 0)
		return;
	if (n >= (int)sizeof(text))
		n = sizeof(text) - 1;
	if (inject()->cfg.debug)
		inject_debug("%s", text);
	if (!ch->ring)
		return;
	msg = shm_ring_reserve(ch->ring, INJ_MSG_STATUS, (uint32_t)(sizeof(*msg) + (size_t)n + 1));
	if (!msg)
		return;
	channel_fill_head(&msg->head, ts_ns);
	msg->part = part;
	msg->status = status;
	memcpy(msg->text, text, (size_t)n + 1);
	shm_ring_commit(ch->ring, msg);
}

void channel_status(struct inject_channel *ch, uint32_t part, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vstatus(ch, part, status, inject_now_ns(), fmt, ap);
	va_end(ap);
}

void channel_status_at(struct inject_channel *ch, uint32_t part, int status, uint64_t ts_ns,
		       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vstatus(ch, part, status, ts_ns, fmt, ap);
	va_end(ap);
}

void channel_drops(struct inject_channel *ch, uint32_t kind, uint64_t count)
{
	struct inj_drops msg = {.kind = kind, .count = count};

	if (!count || !ch->ring)
		return;
	channel_fill_head(&msg.head, inject_now_ns());
	channel_send(ch, INJ_MSG_DROPS, &msg, sizeof(msg));
}

void channel_instrument(struct inject_channel *ch, const char *kernel, int status,
			const char *reason)
{
	size_t len = reason ? strnlen(reason, 255) : 0;
	struct inj_instrument *msg;
	uint64_t id;

	if (inject()->cfg.debug)
		inject_debug("%s: %s%s", kernel, status ? "not instrumented: " : "instrumented",
			     status ? reason : "");
	if (!ch->ring)
		return;
	id = channel_name(ch, kernel);
	msg = shm_ring_reserve(ch->ring, INJ_MSG_INSTRUMENT, (uint32_t)(sizeof(*msg) + len + 1));
	if (!msg)
		return;
	channel_fill_head(&msg->head, inject_now_ns());
	msg->name_id = id;
	memset(&msg->rec, 0, sizeof(msg->rec));
	msg->rec.status = status;
	if (len)
		memcpy(msg->reason, reason, len);
	msg->reason[len] = 0;
	shm_ring_commit(ch->ring, msg);
}
