/* Compiling PTX with the CUDA toolkit's ptxas, when it is installed, and reading its statistics. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/elf_file.h"
#include "gpubpf/ptxas_run.h"

static int executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

const char *ptxas_find(char *buf, size_t len)
{
	const char *env = getenv("PTXAS"), *path = getenv("PATH"), *cuda = getenv("CUDA_HOME");

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return executable(buf) ? buf : NULL;
	}
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);

		if (n && n < len - 8) {
			snprintf(buf, len, "%.*s/ptxas", (int)n, path);
			if (executable(buf))
				return buf;
		}
		path = colon ? colon + 1 : NULL;
	}
	if (cuda && *cuda) {
		snprintf(buf, len, "%s/bin/ptxas", cuda);
		if (executable(buf))
			return buf;
	}
	snprintf(buf, len, "/usr/local/cuda/bin/ptxas");
	return executable(buf) ? buf : NULL;
}

/* Runs argv with stdout and stderr into the file at out_path; returns the exit status or -errno. */
static int run(char *const argv[], const char *out_path)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -errno;
	if (!pid) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static struct ptxas_entry_stats *entry_named(struct ptxas_result *res, const char *name)
{
	for (size_t i = 0; i < res->nr_entries; i++)
		if (!strcmp(res->entries[i].name, name))
			return &res->entries[i];
	if (res->nr_entries == sizeof(res->entries) / sizeof(res->entries[0]))
		return NULL;
	snprintf(res->entries[res->nr_entries].name, sizeof(res->entries[0].name), "%s", name);
	return &res->entries[res->nr_entries++];
}

/*
 * ptxas -v prints, per entry: "Compiling entry function 'NAME' for 'sm_90'",
 * "N bytes stack frame, ...", "Used N registers, ...".
 */
static void parse_log(FILE *log, struct ptxas_result *res)
{
	struct ptxas_entry_stats *cur = NULL;
	char line[512];

	while (fgets(line, sizeof(line), log)) {
		char *p;

		if ((p = strstr(line, "Compiling entry function '"))) {
			char *name = p + strlen("Compiling entry function '"),
			     *end = strchr(name, '\'');

			if (end) {
				*end = 0;
				cur = entry_named(res, name);
			}
		} else if (cur && (p = strstr(line, "Used ")) && strstr(line, "registers")) {
			cur->registers = (unsigned)strtoul(p + 5, NULL, 10);
		} else if (cur && strstr(line, "bytes stack frame")) {
			cur->stack_bytes = (unsigned)strtoul(line + strspn(line, " \t"), NULL, 10);
		} else if (!res->message[0] && res->exit_status && strstr(line, "error")) {
			size_t n = strcspn(line, "\n");

			if (n >= sizeof(res->message))
				n = sizeof(res->message) - 1;
			memcpy(res->message, line, n);
			res->message[n] = 0;
		}
	}
}

/* SASS instruction counts from the sizes of the cubin's .text.<entry> sections. */
static void count_instructions(const char *cubin, struct ptxas_result *res)
{
	struct elf_handle h;

	if (elf_handle_open(cubin, &h))
		return;
	for (size_t i = 0; i < res->nr_entries; i++) {
		char name[160];
		GElf_Shdr sh;

		snprintf(name, sizeof(name), ".text.%s", res->entries[i].name);
		if (elf_section_by_name(h.elf, name, &sh))
			res->entries[i].instructions = (unsigned)(sh.sh_size / 16);
	}
	elf_handle_close(&h);
}

int ptxas_compile(const char *ptxas, const char *ptx, const char *arch, struct ptxas_result *res)
{
	const char *tmp = getenv("TMPDIR");
	char dir[256], src[300], cubin[300], log_path[300], arch_opt[64];
	char *argv[] = {(char *)ptxas, arch_opt, "-v", "-o", cubin, src, NULL};
	FILE *f, *log;
	int rc;

	memset(res, 0, sizeof(*res));
	snprintf(dir, sizeof(dir), "%s/grtrace-ptxas-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -errno;
	snprintf(src, sizeof(src), "%s/prog.ptx", dir);
	snprintf(cubin, sizeof(cubin), "%s/prog.cubin", dir);
	snprintf(log_path, sizeof(log_path), "%s/ptxas.log", dir);
	snprintf(arch_opt, sizeof(arch_opt), "-arch=%s", arch);
	f = fopen(src, "w");
	if (!f) {
		rc = -errno;
	} else {
		rc = fputs(ptx, f) < 0 ? -EIO : 0;
		if (fclose(f) && !rc)
			rc = -EIO;
	}
	if (!rc) {
		res->exit_status = run(argv, log_path);
		if (res->exit_status < 0 || res->exit_status == 127)
			rc = res->exit_status < 0 ? res->exit_status : -ENOEXEC;
	}
	if (!rc && (log = fopen(log_path, "r"))) {
		parse_log(log, res);
		fclose(log);
		if (!res->exit_status)
			count_instructions(cubin, res);
		else if (!res->message[0])
			snprintf(res->message, sizeof(res->message), "ptxas exited with status %d",
				 res->exit_status);
	}
	unlink(src);
	unlink(cubin);
	unlink(log_path);
	rmdir(dir);
	return rc;
}
