/* The traced process: a command launched and held at a barrier, or a running pid. */
#ifndef GRT_TARGET_H
#define GRT_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct target {
	pid_t pid;
	bool launched;		/* we started it (and reap it) */
	bool exited;
	int exit_status;	/* waitpid status, valid once exited */
	int barrier_fd;		/* launched: write end the held child reads its go from */
	int exec_fd;		/* launched: read end that reports a failed exec */
};

/*
 * Forks argv[0] (searched in PATH) and holds the child before exec until
 * target_release. Returns 0, or a negative errno with a one-line reason in err.
 */
int target_launch_held(struct target *t, char *const argv[], char *err, size_t err_len);

/*
 * Lets a held child exec, with extra_env ("K=V" strings, NULL-terminated,
 * may be NULL) added to its environment. Returns 0, or the exec's negative
 * errno with a one-line reason in err.
 */
int target_release(struct target *t, const char *const *extra_env, char *err, size_t err_len);

/* Checks that pid exists and may be traced. 0 or a negative errno with a reason. */
int target_attach(struct target *t, pid_t pid, char *err, size_t err_len);

/* False once the target has exited (launched targets are reaped here). */
bool target_alive(struct target *t);

/*
 * The exit status of record or snoop for a launched target: its own, as time
 * and strace give it (its exit code, 128 + the signal that killed it), so a
 * failing job still fails its script; otherwise 0.
 */
int target_exit_code(const struct target *t);

/* Kills and reaps a launched child that never got released (setup failed). */
void target_abort(struct target *t);

/* Waits for a launched target to exit (after recording stopped by signal, it is not waited for). */
void target_close(struct target *t);

#endif
