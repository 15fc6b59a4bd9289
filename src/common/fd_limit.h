/*
 * The open-file limit. A recorder holds a file descriptor or two per probe (on kernels without
 * uprobe_multi, two per libcuda entry point and direction), so 1024 is reached with two copies
 * of libcuda; the soft limit is raised to the hard one, and the programs grtrace launches get
 * the limit they would have had without it.
 */
#ifndef GRT_FD_LIMIT_H
#define GRT_FD_LIMIT_H

/* Raises this process's soft RLIMIT_NOFILE to its hard limit, remembering the original. */
void grt_fd_limit_raise(void);
/* Puts the original soft limit back (in a child, before it runs the user's command). */
void grt_fd_limit_restore(void);

#endif
