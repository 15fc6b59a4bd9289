/* The subcommands main.c dispatches to; each lives in its own cmd_*.c. */
#ifndef GRT_COMMANDS_H
#define GRT_COMMANDS_H

/* Each returns an enum grt_exit code; argv[0] is the subcommand's name. */
int cmd_record(int argc, char **argv);
int cmd_parse(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_snoop(int argc, char **argv);
int cmd_bpf(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_info(int argc, char **argv);

/*
 * The same commands' option parsing and checks alone: no file is opened or
 * written, nothing is attached or run; --help prints its text. Returns the
 * exit code the command would have given at that point (0, 1 or 2). For the
 * CLI fuzzer and tests.
 */
int record_parse_args(int argc, char **argv);
int parse_parse_args(int argc, char **argv);
int report_parse_args(int argc, char **argv);
int export_parse_args(int argc, char **argv);
int snoop_parse_args(int argc, char **argv);

#endif
