/* What each DRM tracepoint of the drm source means, and its layout from a format file. */
#ifndef GRT_DRM_EVENTS_H
#define GRT_DRM_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "sources/drm.h"
#include "sources/tp_format.h"

/*
 * One tracepoint: its ring operation and driver (records_drm.h), and the names of the format
 * fields that fill each value of struct drm_layout; NULL for none, a leading '?' for a field
 * that only some kernels have.
 */
struct drm_tracepoint_def {
	uint16_t event;		/* enum grt_drm_event */
	uint16_t driver;	/* enum grt_drm_driver */
	const char *job, *fence, *context, *seqno, *arg0, *arg1, *ring;
};

/* The definition of tracepoint tp (enum drm_tracepoint), its tracefs group and name; NULL past the end. */
const struct drm_tracepoint_def *drm_tracepoint_def(unsigned tp);
const char *drm_tracepoint_group(unsigned tp);
const char *drm_tracepoint_name(unsigned tp);

/*
 * Fills *layout from a tracepoint's parsed format fields. Returns 0, or -EINVAL with the
 * reason in why ("no 'fence' field", "'seqno' is 16 bytes").
 */
int drm_layout_resolve(const struct drm_tracepoint_def *def, const struct tp_field *fields,
		       int count, struct drm_layout *layout, char *why, size_t why_len);

#endif
