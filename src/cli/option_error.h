/* The one-line message for an option getopt could not take, shared by every command. */
#ifndef GRT_OPTION_ERROR_H
#define GRT_OPTION_ERROR_H

/*
 * For getopt_long's ':' (an option without its value) and '?' (an option it
 * does not know) under an optstring starting with ':' and opterr = 0: prints
 * "grtrace: CMD: ...; see grtrace CMD --help" and returns GRT_EXIT_USAGE.
 */
int option_error(const char *cmd, int opt, char **argv);

#endif
