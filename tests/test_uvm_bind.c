/* Tests of the uvm source's binding logic and error paths without a GPU. */

/*
 * Tests of the uvm source's binding logic without a GPU: finding a process's UVM descriptor through
 * /proc, taking it with pidfd_getfd, a descriptor that appears later, dead and forbidden targets,
 * and the one-line errors for a missing driver or device file.
 *
 * What this proves and what it does not: the stand-in "nvidia-uvm" is a plain file in a temp
 * directory held open by a helper process, so the /proc scan, the exact-path match, pidfd_getfd
 * (same file on both sides) and the error paths are real; the tracker ioctls on it fail as they
 * must on a file that is not the driver's. Binding to the real driver is proven by
 * bench/gpu_uvm.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "sources/uvm_bind.h"
#include "test_util.h"

static char tmpdir[] = "/tmp/grt_uvm_bind_XXXXXX";
static char fake_uvm[PATH_MAX], fake_tools[PATH_MAX], holder[PATH_MAX];

/* Starts the holder with args; returns its pid and the fd numbers it printed. */
static pid_t start_holder(const char *delay_ms, const char *path1, const char *path2, int fds[2])
{
	int pipefd[2];
	pid_t pid;
	FILE *out;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		/* nobody reads when fds is NULL: a write to a closed pipe would kill the holder */
		int devnull = open("/dev/null", O_WRONLY);

		dup2(fds ? pipefd[1] : devnull, 1);
		close(pipefd[0]);
		if (delay_ms)
			execl(holder, holder, "--delay-ms", delay_ms, path1, path2, (char *)NULL);
		else
			execl(holder, holder, path1, path2, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	if (!fds) {
		close(pipefd[0]);
		return pid;
	}
	out = fdopen(pipefd[0], "r");
	for (int i = 0; i < 2; i++) {
		char line[PATH_MAX + 32];

		/* line by line: the holder keeps its stdout open while it waits */
		if (!fgets(line, sizeof(line), out) || sscanf(line, "fd %d", &fds[i]) != 1)
			fds[i] = -1;
	}
	fclose(out);
	return pid;
}

static void stop_holder(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_finds_exactly_the_uvm_descriptor(void)
{
	int printed[2], found[4];
	pid_t pid = start_holder(NULL, fake_tools, fake_uvm, printed);

	CHECK(pid > 0 && printed[0] >= 0 && printed[1] >= 0);
	/* the -tools file is open too and must not match */
	CHECK_EQ_U64(uvm_find_fds(pid, fake_uvm, found, 4), 1);
	CHECK_EQ_U64(found[0], printed[1]);
	CHECK_EQ_U64(uvm_find_fds(pid, fake_tools, found, 4), 1);
	CHECK_EQ_U64(found[0], printed[0]);
	/* our own process holds neither */
	CHECK_EQ_U64(uvm_find_fds(getpid(), fake_uvm, found, 4), 0);
	stop_holder(pid);
}

static void test_pidfd_getfd_takes_the_same_file(void)
{
	int printed[2], pidfd, local;
	pid_t pid = start_holder(NULL, fake_uvm, fake_tools, printed);
	struct stat theirs, ours;

	pidfd = uvm_pidfd_open(pid);
	CHECK(pidfd >= 0);
	local = uvm_pidfd_getfd(pidfd, printed[0]);
	CHECK(local >= 0);
	CHECK_EQ_U64(stat(fake_uvm, &theirs), 0);
	CHECK_EQ_U64(fstat(local, &ours), 0);
	CHECK_EQ_U64(ours.st_ino, theirs.st_ino);
	CHECK_EQ_U64(ours.st_dev, theirs.st_dev);
	CHECK_EQ_U64(uvm_pidfd_exited(pidfd), 0);
	stop_holder(pid);
	/* after the exit the pidfd says so, and the process's descriptors are gone */
	CHECK_EQ_U64(uvm_pidfd_exited(pidfd), 1);
	CHECK_EQ_U64(uvm_pidfd_getfd(pidfd, printed[0]), (uint64_t)-ESRCH);
	close(local);
	close(pidfd);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The source's case of a CUDA program that opens its UVM file after tracing started. */
static void test_descriptor_opened_later_is_found(void)
{
	pid_t pid = start_holder("300", fake_uvm, fake_tools, NULL);
	uint64_t start = now_ms(), found_at = 0;
	int found[4], n = 0;

	CHECK(pid > 0);
	CHECK_EQ_U64(uvm_find_fds(pid, fake_uvm, found, 4), 0);
	while (now_ms() - start < 5000 && (n = uvm_find_fds(pid, fake_uvm, found, 4)) == 0)
		usleep(5000);
	found_at = now_ms() - start;
	CHECK_EQ_U64(n, 1);
	CHECK(found_at >= 250);
	stop_holder(pid);
}

static void test_dead_pid(void)
{
	pid_t pid = start_holder(NULL, fake_uvm, fake_tools, NULL);
	char why[256] = "";
	int found[4];

	stop_holder(pid);
	CHECK_EQ_U64(uvm_find_fds(pid, fake_uvm, found, 4), (uint64_t)-ESRCH);
	CHECK_EQ_U64(uvm_pidfd_open(pid), (uint64_t)-ESRCH);
	CHECK_EQ_U64(uvm_check_target(pid, why, sizeof(why)), (uint64_t)-ESRCH);
	{
		char want[64];

		snprintf(want, sizeof(want), "no process %d", (int)pid);
		CHECK_STR(why, want);
	}
}

/* An unprivileged tracer may not take a root process's descriptors: the error says why. */
static void test_not_allowed_to_take_descriptors(void)
{
	int status = -1, pipefd[2];
	char why[256] = "";
	pid_t child;

	if (geteuid() != 0) {
		/* already unprivileged: pid 1 is out of reach directly */
		CHECK_EQ_U64(uvm_check_target(1, why, sizeof(why)), (uint64_t)-EPERM);
		CHECK(strstr(why, "not allowed to take pid 1's descriptors") != NULL);
		return;
	}
	CHECK_EQ_U64(pipe(pipefd), 0);
	child = fork();
	if (child == 0) {
		int err;

		close(pipefd[0]);
		if (setgid(65534) || setuid(65534))
			_exit(2);
		err = uvm_check_target(1, why, sizeof(why));
		if (write(pipefd[1], why, strlen(why) + 1) < 0)
			_exit(3);
		_exit(err == -EPERM ? 0 : 1);
	}
	close(pipefd[1]);
	CHECK(read(pipefd[0], why, sizeof(why)) > 0);
	close(pipefd[0]);
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_STR(why, "not allowed to take pid 1's descriptors (pidfd_getfd needs root or "
		       "CAP_SYS_PTRACE over it)");
}

static void test_missing_driver_messages(void)
{
	char why[256], missing[PATH_MAX], module_dir[PATH_MAX];
	int err;

	snprintf(missing, sizeof(missing), "%s/no-such-tools", tmpdir);
	snprintf(module_dir, sizeof(module_dir), "%s/no-module", tmpdir);
	err = uvm_check_available(missing, module_dir, why, sizeof(why));
	CHECK_EQ_U64(err, (uint64_t)-ENOENT);
	{
		char want[PATH_MAX + 80];

		snprintf(want, sizeof(want),
			 "no %s: NVIDIA UVM driver not loaded (modprobe nvidia-uvm)", missing);
		CHECK_STR(why, want);
	}
	/* module loaded (its sysfs directory exists) but no device node */
	CHECK_EQ_U64(mkdir(module_dir, 0755), 0);
	err = uvm_check_available(missing, module_dir, why, sizeof(why));
	CHECK_EQ_U64(err, (uint64_t)-ENOENT);
	CHECK(strstr(why, "although nvidia_uvm is loaded: create it (nvidia-modprobe -u -c=0)") !=
	      NULL);
	rmdir(module_dir);
	/* device present: usable as root, refused with the reason otherwise */
	err = uvm_check_available(fake_tools, module_dir, why, sizeof(why));
	if (geteuid() == 0)
		CHECK_EQ_U64(err, 0);
	else
		CHECK(err == -EPERM && strstr(why, "needs root") != NULL);
}

/* The real default paths on this machine: a GPU-less machine gets the driver message. */
static void test_default_paths(void)
{
	char why[256] = "";
	struct stat st;
	int err = uvm_check_available(UVM_TOOLS_DEVICE_PATH, UVM_MODULE_DIR, why, sizeof(why));

	if (stat(UVM_TOOLS_DEVICE_PATH, &st) == 0) {
		CHECK(err == 0 || err == -EPERM);
		return;
	}
	CHECK_EQ_U64(err, (uint64_t)-ENOENT);
	CHECK(strstr(why, "no /dev/nvidia-uvm-tools") == why);
}

/* Tracker creation refuses what is not the driver, with the errno the source acts on. */
static void test_tracker_on_non_driver_files(void)
{
	struct uvm_tracker t;
	char missing[PATH_MAX];
	uint32_t status = 0;
	int fd = open(fake_uvm, O_RDWR);

	snprintf(missing, sizeof(missing), "%s/absent-tools", tmpdir);
	CHECK_EQ_U64(uvm_tracker_open(&t, missing, fd, 1024, UVM_QUEUE_V2, &status),
		     (uint64_t)-ENOENT);
	CHECK_EQ_U64(t.tools_fd, (uint64_t)-1);
	/* a regular file answers ioctls with ENOTTY: neither ioctl 76 nor 56 exists there */
	CHECK_EQ_U64(uvm_tracker_open(&t, fake_tools, fd, 1024, UVM_QUEUE_V2, &status),
		     (uint64_t)-ENOTTY);
	CHECK_EQ_U64(uvm_tracker_open(&t, fake_tools, fd, 1000, UVM_QUEUE_V2, &status),
		     (uint64_t)-EINVAL);
	CHECK(t.entries == NULL && t.ctrl == NULL);
	CHECK_EQ_U64(uvm_flush_events(fd), (uint64_t)-ENOTTY);
	uvm_tracker_close(&t);
	close(fd);
}

static int setup(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int fd;

	if (n <= 0 || !mkdtemp(tmpdir))
		return -1;
	exe[n] = 0;
	/* BUILD/tests/test_uvm_bind -> BUILD/fixtures/uvm_fd_holder */
	snprintf(holder, sizeof(holder), "%s/../fixtures/uvm_fd_holder", dirname(exe));
	snprintf(fake_uvm, sizeof(fake_uvm), "%s/nvidia-uvm", tmpdir);
	snprintf(fake_tools, sizeof(fake_tools), "%s/nvidia-uvm-tools", tmpdir);
	for (int i = 0; i < 2; i++) {
		fd = open(i ? fake_tools : fake_uvm, O_CREAT | O_RDWR, 0600);
		if (fd < 0)
			return -1;
		close(fd);
	}
	return access(holder, X_OK);
}

int main(void)
{
	if (setup()) {
		printf("FAIL - setup (needs %s built by tests/fixtures.mk)\n", holder);
		return 1;
	}
	RUN_TEST(test_finds_exactly_the_uvm_descriptor);
	RUN_TEST(test_pidfd_getfd_takes_the_same_file);
	RUN_TEST(test_descriptor_opened_later_is_found);
	RUN_TEST(test_dead_pid);
	RUN_TEST(test_not_allowed_to_take_descriptors);
	RUN_TEST(test_missing_driver_messages);
	RUN_TEST(test_default_paths);
	RUN_TEST(test_tracker_on_non_driver_files);
	unlink(fake_uvm);
	unlink(fake_tools);
	rmdir(tmpdir);
	return TEST_EXIT_STATUS();
}
