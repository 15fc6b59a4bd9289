/* User stacks of a trace, symbolized from its own stack and mapping records plus the ELF files. */
#ifndef GRT_USER_STACKS_H
#define GRT_USER_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace/grt_reader.h"

/*
 * Stack records are kept by stack_id (ids are global to a recording: the
 * recorder names each distinct list of frames once); mapping records by the
 * pid of their record header.
 * An ip is symbolized with the mappings of the pid whose event used the
 * stack: the mapping gives path + file offset, the file's ELF symbol table
 * gives the function. The ELF files are read at report time, so a binary
 * rebuilt since the recording symbolizes wrongly; a missing one falls back
 * to path+0xoffset.
 */
struct user_stacks;

struct user_stacks *user_stacks_new(void);
void user_stacks_free(struct user_stacks *u);
/* Keeps stack and mapping records, ignores the rest. Returns 0 or -ENOMEM. */
int user_stacks_on_record(struct user_stacks *u, const struct grt_record *rec,
			  const struct grt_strings *strings);
/* The ips of a stack (innermost first) and its depth; NULL when the trace has no such stack. */
const uint64_t *user_stacks_get(const struct user_stacks *u, int32_t stack_id, uint32_t *depth);
/*
 * One frame as text: "func+0x1a (path)", "path+0x1234" (no symbol) or
 * "0x7f..." (no mapping). frame is the index in the stack: frames past 0 are
 * return addresses, looked up at ip - 1 so a call at a function's end still
 * names that function.
 */
void user_stacks_format_frame(struct user_stacks *u, uint32_t pid, uint64_t ip, uint32_t frame,
			      char *buf, size_t len);

#endif
