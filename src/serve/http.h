/* serve's HTTP endpoint (libmicrohttpd): /metrics and /healthz on its own threads. */
#ifndef GRT_SERVE_HTTP_H
#define GRT_SERVE_HTTP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "serve/agent.h"

struct serve_http;

struct serve_http_config {
	const char *listen;   /* "HOST:PORT", "[V6]:PORT" or ":PORT" (every address) */
	/* CLOCK_MONOTONIC ns of the agent loop's last turn: /healthz fails when it is stale */
	_Atomic uint64_t *heartbeat_ns;
};

/*
 * Splits a --listen value into host (NULL for every address) and port.
 * Returns 0 or -EINVAL.
 */
int serve_parse_listen(const char *listen, char *host, size_t host_len, unsigned *port);

/*
 * Binds and starts serving. Returns 0 or a negative errno with one line in
 * why (the address in use, a bad address, no permission).
 */
int serve_http_start(struct serve_http **out, const struct serve_http_config *cfg, char *why,
		     size_t why_len);
/*
 * Starts answering /metrics from agent: until then it answers 503, so the
 * port is taken (and a port in use found) before any probe is loaded.
 */
void serve_http_set_agent(struct serve_http *h, struct serve_agent *agent);
/* The port actually bound (useful with port 0). */
unsigned serve_http_port(const struct serve_http *h);
void serve_http_stop(struct serve_http *h);

#endif
