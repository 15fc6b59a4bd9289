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

#endif
