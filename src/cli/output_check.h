/* The -o output of the commands, and refusing one that is the command's own input. */
#ifndef GRT_OUTPUT_CHECK_H
#define GRT_OUTPUT_CHECK_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Whether out_path and in_path name the same file: same device and inode,
 * so symbolic and hard links count. False when either does not exist yet.
 */
bool output_is_input(const char *out_path, const char *in_path);

/*
 * -o PATH of every command: stdout for NULL or "-", else the file created
 * (truncated). NULL after printing "grtrace: CMD: cannot create PATH: ...".
 */
FILE *output_open(const char *cmd, const char *path);
/*
 * Closes what output_open gave (stdout is left to main's check). Returns
 * rc, or GRT_EXIT_FAILURE after one line when rc was 0 and the write failed.
 */
int output_close(const char *cmd, FILE *out, const char *path, int rc);

#endif
