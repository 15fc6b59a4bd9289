/* Reading /proc/PID/maps: the mappings of a process, for finding libraries and symbolizing stacks.
 */
#ifndef GRT_PROC_MAPS_H
#define GRT_PROC_MAPS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_mapping {
	uint64_t start;
	uint64_t end;
	uint64_t file_offset;
	uint64_t inode; /* 0 for anonymous and pseudo mappings */
	unsigned dev_major;
	unsigned dev_minor;
	bool executable;
	bool deleted;	     /* the file was replaced or removed since it was mapped */
	char path[PATH_MAX]; /* "" when anonymous; "[vdso]" etc. for pseudo mappings */
};

/*
 * Calls fn for every mapping of pid, in address order. Stops early when fn
 * returns non-zero and returns that value; otherwise 0, or a negative errno
 * when the maps file cannot be read (the process is gone, no permission).
 */
int proc_maps_foreach(pid_t pid, int (*fn)(const struct proc_mapping *m, void *ctx), void *ctx);

/* Parses one maps line; false when it is not one. Exposed for tests. */
bool proc_maps_parse_line(const char *line, struct proc_mapping *m);

#endif
