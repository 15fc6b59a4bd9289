/* Another tool's CUDA injection library (CUDA_INJECTION64_PATH): a CUPTI client started at cuInit. */
#include <stdbool.h>
#include <stdio.h>
#include "cupti_client.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * The driver (the fake one here) calls InitializeInjection inside cuInit;
 * the tool subscribes to CUPTI and counts the kernels it is told about. At
 * exit it writes what it saw to FAKE_TOOL_REPORT.
 */
EXPORT int InitializeInjection(void)
{
	client_start("vector_add");
	return 1;
}

__attribute__((destructor)) static void tool_report(void)
{
	const char *path = getenv("FAKE_TOOL_REPORT");
	FILE *f;

	if (!path || !client.counted)
		return;
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f,
		"tool: subscribe=%d register=%d enable=%d kernels_seen=%u foreign_buffers=%u "
		"other_clock=%u\n",
		client.subscribe, client.registered, client.enabled,
		atomic_load(&client.kernels_seen), atomic_load(&client.foreign_buffers),
		atomic_load(&client.other_clock));
	fclose(f);
}
