/* /proc/PID/maps parsing shared by the sources that find libraries or symbolize stacks. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sources/proc_maps.h"

#define DELETED_SUFFIX " (deleted)"

bool proc_maps_parse_line(const char *line, struct proc_mapping *m)
{
	char perms[5];
	int path_at = 0;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n", &m->start,
		   &m->end, perms, &m->file_offset, &m->dev_major, &m->dev_minor, &m->inode,
		   &path_at) < 7 ||
	    !path_at)
		return false;
	m->executable = perms[2] == 'x';
	/* the path is the rest of the line, spaces included */
	snprintf(m->path, sizeof(m->path), "%s", line + path_at);
	len = strcspn(m->path, "\n");
	m->path[len] = 0;
	if (len > strlen(DELETED_SUFFIX) &&
	    !strcmp(m->path + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX)) {
		m->deleted = true;
		m->path[len - strlen(DELETED_SUFFIX)] = 0;
	}
	return true;
}

int proc_maps_foreach(pid_t pid, int (*fn)(const struct proc_mapping *m, void *ctx), void *ctx)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	struct proc_mapping *m;
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* PATH_MAX-sized: too big for the stack of every caller */
	m = malloc(sizeof(*m));
	if (!m) {
		fclose(f);
		return -ENOMEM;
	}
	while (!rc && getline(&line, &cap, f) > 0)
		if (proc_maps_parse_line(line, m))
			rc = fn(m, ctx);
	free(line);
	free(m);
	fclose(f);
	return rc;
}
