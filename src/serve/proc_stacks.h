/* Allocation stacks of one live process, symbolized later (at its exit) from maps read while it ran. */
#ifndef GRT_SERVE_PROC_STACKS_H
#define GRT_SERVE_PROC_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_stacks;

struct proc_stacks *proc_stacks_new(pid_t pid);
void proc_stacks_free(struct proc_stacks *ps);
/* Reads the process's executable mappings now (again: later ones replace older). 0 or -errno. */
int proc_stacks_read_maps(struct proc_stacks *ps);
/*
 * Whether any executable mapping was ever read: a process that exited before
 * the agent first read its maps has none, and its frames stay bare addresses.
 */
bool proc_stacks_has_mappings(const struct proc_stacks *ps);
/*
 * Stacks are known by a key: the BPF side's 64-bit digest of their frames
 * (cuda_agg.bpf.c), never 0.
 */
/* Keeps a stack's frames (innermost first, depth entries). 0 or -ENOMEM. */
int proc_stacks_add(struct proc_stacks *ps, uint64_t key, const uint64_t *ips, uint32_t depth);
/* Whether key was kept already. */
int proc_stacks_has(const struct proc_stacks *ps, uint64_t key);
/*
 * Up to max_frames frames of a kept stack as "f+0x1a (path) <- g+0x9 (path)";
 * "no stack" when it was not kept.
 */
void proc_stacks_format(struct proc_stacks *ps, uint64_t key, unsigned max_frames, char *buf,
			size_t len);

#endif
