/* Payloads of the record types every trace has: strings, drops, trailer, processes, stacks, clocks. */
#ifndef GRT_RECORDS_CORE_H
#define GRT_RECORDS_CORE_H

#include <stddef.h>
#include <stdint.h>
#include "trace/grt_format.h"

/* Strings are written once and referenced by id; id 0 means "no string". */
struct grt_string_rec {
	uint32_t id;
	uint32_t len;		/* bytes in text, including the final NUL */
	char text[];
};

/* Events a source lost since its previous drop record. */
struct grt_drop_rec {
	uint32_t source;	/* enum grt_source_id */
	uint32_t reserved;
	uint64_t count;
};

enum grt_end_reason {
	GRT_END_TARGET_EXIT = 1,
	GRT_END_SIGNAL = 2,
	GRT_END_DURATION = 3,
	GRT_END_IDLE = 4,
	GRT_END_WRITE_ERROR = 5,
	GRT_END_SOURCE_ERROR = 6,
};

/* Last record of a recording that ended in order. A file without one was cut short. */
struct grt_trailer_rec {
	uint32_t reason;	/* enum grt_end_reason */
	uint32_t reserved;
	uint64_t records;	/* records before this one */
	uint64_t drops;		/* sum of all drop records */
	uint64_t end_ns;
	/*
	 * Format 1.2: CRC-32C of this record's header and of the payload up
	 * to here (the last checksum record cannot cover the trailer that
	 * follows it). Absent (zero-extended) from older writers.
	 */
	uint32_t crc;
	uint32_t has_crc;	/* 1 when crc is set */
};

/* Bytes of a trailer record (header + payload) the trailer's crc covers. */
#define GRT_TRAILER_CRC_BYTES (sizeof(struct grt_record_header) + offsetof(struct grt_trailer_rec, crc))

enum grt_checksum_algo {
	GRT_CHECKSUM_CRC32C = 1,
};

/*
 * Format 1.2: the integrity of the records before it. crc is the CRC-32C of
 * the bytes [start, start + length): every record (header and payload) since
 * the previous checksum record, or since the file header. The writer puts one
 * every GRT_CHECKSUM_BLOCK_BYTES or GRT_CHECKSUM_BLOCK_RECORDS and one just
 * before the trailer, so a changed, deleted, duplicated or moved record is
 * found and its block named.
 */
struct grt_checksum_rec {
	uint32_t algo;		/* enum grt_checksum_algo */
	uint32_t records;	/* records in the block */
	uint64_t start;		/* file offset of the block's first record */
	uint64_t length;	/* bytes in the block */
	uint32_t crc;
	uint32_t reserved;
};

#define GRT_CHECKSUM_BLOCK_BYTES (64u * 1024)
#define GRT_CHECKSUM_BLOCK_RECORDS 1024u

enum grt_process_event {
	GRT_PROC_SEEN = 1,	/* existed when tracing started */
	GRT_PROC_START = 2,	/* launched or forked while traced */
	GRT_PROC_EXIT = 3,
};

struct grt_process_rec {
	uint32_t event;		/* enum grt_process_event */
	uint32_t ppid;
	uint32_t comm_str;
	uint32_t exe_str;
	int32_t exit_code;	/* GRT_PROC_EXIT only: the status it passed to exit() */
	/*
	 * GRT_PROC_EXIT only: the signal that killed it, 0 when it exited
	 * (format 1.1 and older wrote 0 here: a clean exit as far as they knew).
	 */
	uint16_t exit_signal;
	uint16_t exit_flags;	/* enum grt_process_exit_flags */
};

enum grt_process_exit_flags {
	GRT_PROC_CORE_DUMPED = 1,
};

/* One executable mapping of a traced process, for symbolizing user stacks offline. */
struct grt_mapping_rec {
	uint64_t start;
	uint64_t end;
	uint64_t file_offset;
	uint32_t path_str;
	uint32_t reserved;
};

#define GRT_MAX_STACK_DEPTH 32
/* An event's user_stack_id when it has no stack: none was asked for, or the walk failed. */
#define GRT_STACK_NONE (-1)
#define GRT_STACK_LOST (-2)

struct grt_stack_rec {
	uint32_t stack_id;	/* referenced by events' user_stack_id */
	uint32_t depth;
	uint64_t ips[];		/* depth entries, innermost first */
};

/* One host/GPU clock pair, measured; gpu = host + offset within +-error_ns. */
struct grt_clock_calib_rec {
	uint32_t device;
	uint32_t clock_id;	/* enum grt_clock_id of gpu_ns */
	uint64_t gpu_ns;
	uint64_t host_ns;	/* CLOCK_MONOTONIC */
	uint64_t error_ns;
};

/* Whether a source ran, and if not, why: every skipped source leaves a trace. */
struct grt_source_status_rec {
	uint32_t source;	/* enum grt_source_id */
	int32_t status;		/* 0 attached, negative errno when skipped or failed */
	uint32_t message_str;
	uint32_t reserved;
};

_Static_assert(sizeof(struct grt_string_rec) == 8, "string layout");
_Static_assert(sizeof(struct grt_drop_rec) == 16, "drop layout");
_Static_assert(sizeof(struct grt_trailer_rec) == 40, "trailer layout");
_Static_assert(sizeof(struct grt_checksum_rec) == 32, "checksum layout");
_Static_assert(sizeof(struct grt_process_rec) == 24, "process layout");
_Static_assert(sizeof(struct grt_mapping_rec) == 32, "mapping layout");
_Static_assert(sizeof(struct grt_stack_rec) == 8, "stack layout");
_Static_assert(sizeof(struct grt_clock_calib_rec) == 32, "clock layout");
_Static_assert(sizeof(struct grt_source_status_rec) == 16, "status layout");

#endif
