/* Launching a command held before exec (so no early event is lost), or checking a running pid. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli/target.h"
#include "common/fd_limit.h"

#define MAX_EXTRA_ENV_BYTES 8192

/* The executable the child would run, so "not found" is reported before anything is set up. */
static int find_executable(const char *name, char *err, size_t err_len)
{
	const char *path = getenv("PATH");
	char candidate[PATH_MAX], *copy, *dir, *save = NULL;
	int found = 0;

	if (strchr(name, '/')) {
		if (access(name, X_OK) == 0)
			return 0;
		snprintf(err, err_len, "cannot run %s: %s", name, strerror(errno));
		return -errno;
	}
	copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(candidate, sizeof(candidate), "%s/%s", dir, name);
		found = access(candidate, X_OK) == 0;
	}
	free(copy);
	if (found)
		return 0;
	snprintf(err, err_len, "cannot run %s: command not found in PATH", name);
	return -ENOENT;
}

/* Child side: wait for the go, take the extra environment, exec; report a failed exec. */
static void __attribute__((noreturn)) run_held_child(int barrier_fd, int exec_fd, char *const argv[])
{
	static char env_buf[MAX_EXTRA_ENV_BYTES + 2];
	size_t got = 0;
	ssize_t n;
	int err;

	while (got < MAX_EXTRA_ENV_BYTES && (n = read(barrier_fd, env_buf + got, MAX_EXTRA_ENV_BYTES - got)) > 0)
		got += (size_t)n;
	if (got == 0)
		_exit(127); /* the recorder went away before releasing us */
	/* the message is "go\0" followed by K=V\0 strings */
	for (char *kv = env_buf + 3; kv < env_buf + got && *kv; kv += strlen(kv) + 1)
		putenv(kv);
	close(barrier_fd);
	grt_fd_limit_restore();
	execvp(argv[0], argv);
	err = errno;
	if (write(exec_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

int target_launch_held(struct target *t, char *const argv[], char *err, size_t err_len)
{
	int barrier[2], exec_pipe[2], rc;

	memset(t, 0, sizeof(*t));
	t->barrier_fd = t->exec_fd = -1;
	rc = find_executable(argv[0], err, err_len);
	if (rc)
		return rc;
	if (pipe2(barrier, O_CLOEXEC) || pipe2(exec_pipe, O_CLOEXEC)) {
		snprintf(err, err_len, "cannot create pipes: %s", strerror(errno));
		return -errno;
	}
	t->pid = fork();
	if (t->pid < 0) {
		snprintf(err, err_len, "cannot fork: %s", strerror(errno));
		return -errno;
	}
	if (t->pid == 0) {
		close(barrier[1]);
		close(exec_pipe[0]);
		run_held_child(barrier[0], exec_pipe[1], argv);
	}
	close(barrier[0]);
	close(exec_pipe[1]);
	t->launched = true;
	t->barrier_fd = barrier[1];
	t->exec_fd = exec_pipe[0];
	return 0;
}

static int send_go(int fd, const char *const *extra_env)
{
	char buf[MAX_EXTRA_ENV_BYTES];
	size_t used = 3;

	memcpy(buf, "go", 3);
	for (; extra_env && *extra_env; extra_env++) {
		size_t n = strlen(*extra_env) + 1;

		if (used + n >= sizeof(buf))
			return -E2BIG;
		memcpy(buf + used, *extra_env, n);
		used += n;
	}
	buf[used++] = 0;
	return write(fd, buf, used) == (ssize_t)used ? 0 : -errno;
}

int target_release(struct target *t, const char *const *extra_env, char *err, size_t err_len)
{
	int exec_errno = 0, rc;
	ssize_t n;

	rc = send_go(t->barrier_fd, extra_env);
	close(t->barrier_fd);
	t->barrier_fd = -1;
	if (rc) {
		snprintf(err, err_len, "cannot release the command: %s", strerror(-rc));
		return rc;
	}
	/* the exec pipe closes on a successful exec (CLOEXEC) or carries the errno */
	do {
		n = read(t->exec_fd, &exec_errno, sizeof(exec_errno));
	} while (n < 0 && errno == EINTR);
	close(t->exec_fd);
	t->exec_fd = -1;
	if (n == (ssize_t)sizeof(exec_errno)) {
		snprintf(err, err_len, "cannot run the command: %s", strerror(exec_errno));
		target_alive(t);
		return -exec_errno;
	}
	return 0;
}

/* The kernel's task flag for its own threads (include/linux/sched.h). */
#define PF_KTHREAD 0x00200000u

/*
 * State (field 3) and flags (field 9) of /proc/PID/stat, read after the
 * parenthesised comm, which may hold spaces and parentheses itself.
 */
static int read_state_flags(pid_t pid, char *state, unsigned *flags)
{
	char path[64], line[1024], *close_paren;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	ok = fgets(line, sizeof(line), f) && (close_paren = strrchr(line, ')')) &&
	     sscanf(close_paren + 1, " %c %*d %*d %*d %*d %*d %u", state, flags) == 2;
	fclose(f);
	return ok ? 0 : -EIO;
}

int target_attach(struct target *t, pid_t pid, char *err, size_t err_len)
{
	unsigned flags = 0;
	char state = 0;

	memset(t, 0, sizeof(*t));
	t->barrier_fd = t->exec_fd = -1;
	t->pid = pid;
	if (pid <= 0 || read_state_flags(pid, &state, &flags)) {
		snprintf(err, err_len, "no process with pid %d", (int)pid);
		return -ESRCH;
	}
	/* neither runs user code any more, or ever: the recording would be empty */
	if (state == 'Z' || state == 'X') {
		snprintf(err, err_len, "pid %d has exited (a zombie its parent has not reaped): "
			 "nothing left to trace", (int)pid);
		return -ESRCH;
	}
	if (flags & PF_KTHREAD) {
		snprintf(err, err_len, "pid %d is a kernel thread: it runs no user code to trace; "
			 "give the pid of a user process", (int)pid);
		return -EINVAL;
	}
	return 0;
}

bool target_alive(struct target *t)
{
	char proc[64];
	int status;

	if (t->exited)
		return false;
	if (t->launched) {
		if (waitpid(t->pid, &status, WNOHANG) == t->pid) {
			t->exited = true;
			t->exit_status = status;
		}
		return !t->exited;
	}
	snprintf(proc, sizeof(proc), "/proc/%d", (int)t->pid);
	t->exited = access(proc, F_OK) != 0;
	return !t->exited;
}

void target_abort(struct target *t)
{
	if (!t->launched || t->exited)
		return;
	if (t->barrier_fd >= 0)
		close(t->barrier_fd); /* the held child sees EOF and exits */
	if (t->exec_fd >= 0)
		close(t->exec_fd);
	t->barrier_fd = t->exec_fd = -1;
	kill(t->pid, SIGKILL);
	waitpid(t->pid, &t->exit_status, 0);
	t->exited = true;
}

void target_close(struct target *t)
{
	if (t->barrier_fd >= 0)
		close(t->barrier_fd);
	if (t->exec_fd >= 0)
		close(t->exec_fd);
	t->barrier_fd = t->exec_fd = -1;
}

int target_exit_code(const struct target *t)
{
	if (!t->launched || !t->exited)
		return 0;
	if (WIFSIGNALED(t->exit_status))
		return 128 + WTERMSIG(t->exit_status);
	return WIFEXITED(t->exit_status) ? WEXITSTATUS(t->exit_status) : 0;
}
