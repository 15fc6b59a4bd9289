/* /metrics, /healthz and clear answers to everything else, served by libmicrohttpd's own threads. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>
#include "common/clock.h"
#include "export/prom_text.h"
#include "serve/http.h"
#include "serve/metrics.h"

#define HTTP_THREADS 2
#define HTTP_CONNECTION_LIMIT 512
#define HTTP_IDLE_TIMEOUT_S 10
/* the agent loop turns at least every second; three missed turns mean it is stuck */
#define HEARTBEAT_STALE_NS 3000000000ull

struct serve_http {
	struct serve_http_config cfg;
	struct serve_agent *_Atomic agent;
	struct MHD_Daemon *daemon;
	int fd;
	unsigned port;
};

int serve_parse_listen(const char *listen, char *host, size_t host_len, unsigned *port)
{
	const char *colon, *h = listen;
	size_t hlen;
	char *end;
	long p;

	if (!listen || !*listen)
		return -EINVAL;
	if (*listen == '[') {
		const char *close = strchr(listen, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		h = listen + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(listen, ':');
		if (!colon || memchr(listen, ':', (size_t)(colon - listen)))
			return -EINVAL; /* no port, or a bare IPv6 address */
		hlen = (size_t)(colon - listen);
	}
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p < 0 || p > 65535 || hlen >= host_len)
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = 0;
	*port = (unsigned)p;
	return 0;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)text, strlen(text),
		     MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result serve_metrics(struct serve_http *h, struct MHD_Connection *c)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	enum prom_format format = prom_format_for_accept(accept);
	struct serve_agent *agent = atomic_load(&h->agent);
	struct serve_snapshot snap;
	char *body = NULL;
	size_t len = 0;
	FILE *out;

	if (!agent)
		return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "starting: probes not loaded yet\n");
	if (serve_agent_snapshot(agent, &snap))
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	out = open_memstream(&body, &len);
	if (out) {
		serve_metrics_write(out, format, &snap);
		fclose(out);
	}
	serve_snapshot_free(&snap);
	if (!out || !body)
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return reply(c, MHD_HTTP_OK, prom_content_type(format), body, len, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result on_request(void *ctx, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	struct serve_http *h = ctx;
	uint64_t beat;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	/* a body with a GET is read and ignored: the request is answered once it is all in */
	if (*upload_len) {
		*upload_len = 0;
		return MHD_YES;
	}
	if (!strcmp(url, "/metrics"))
		return serve_metrics(h, c);
	if (!strcmp(url, "/healthz")) {
		if (!atomic_load(&h->agent))
			return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "starting\n");
		beat = atomic_load(h->cfg.heartbeat_ns);
		if (grt_monotonic_ns() - beat > HEARTBEAT_STALE_NS)
			return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
					  "stalled: the probe loop has not run for 3 s\n");
		return reply_text(c, MHD_HTTP_OK, "ok\n");
	}
	if (!strcmp(url, "/"))
		return reply_text(c, MHD_HTTP_OK,
				  "grtrace serve: /metrics (Prometheus or OpenMetrics), /healthz\n");
	return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics or /healthz\n");
}

static int bind_listener(struct serve_http *h, char *why, size_t why_len)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE};
	struct addrinfo *ai = NULL;
	struct sockaddr_storage bound;
	socklen_t bound_len = sizeof(bound);
	char host[256], port[16];
	unsigned p;
	int one = 1, err;

	if (serve_parse_listen(h->cfg.listen, host, sizeof(host), &p)) {
		snprintf(why, why_len, "bad --listen '%s': give HOST:PORT, [IPV6]:PORT or :PORT",
			 h->cfg.listen);
		return -EINVAL;
	}
	snprintf(port, sizeof(port), "%u", p);
	err = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
	if (err) {
		snprintf(why, why_len, "bad --listen address '%s': %s (give a numeric address)",
			 host, gai_strerror(err));
		return -EINVAL;
	}
	h->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	err = h->fd < 0 ? -errno : 0;
	if (!err)
		setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!err && bind(h->fd, ai->ai_addr, ai->ai_addrlen))
		err = -errno;
	if (!err && listen(h->fd, 128))
		err = -errno;
	freeaddrinfo(ai);
	if (err == -EADDRINUSE)
		snprintf(why, why_len, "%s is in use (another agent?); pick a free port with --listen",
			 h->cfg.listen);
	else if (err)
		snprintf(why, why_len, "cannot listen on %s: %s", h->cfg.listen, strerror(-err));
	if (!err && !getsockname(h->fd, (struct sockaddr *)&bound, &bound_len))
		h->port = ntohs(bound.ss_family == AF_INET6
				    ? ((struct sockaddr_in6 *)&bound)->sin6_port
				    : ((struct sockaddr_in *)&bound)->sin_port);
	return err;
}

int serve_http_start(struct serve_http **out, const struct serve_http_config *cfg, char *why,
		     size_t why_len)
{
	struct serve_http *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return -ENOMEM;
	h->cfg = *cfg;
	h->fd = -1;
	err = bind_listener(h, why, why_len);
	if (!err) {
		/*
		 * Its own threads, non-blocking sockets: a slow or stuck client holds
		 * one connection slot, never the probe loop or the other clients.
		 */
		h->daemon = MHD_start_daemon(
		    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_SUPPRESS_DATE_NO_CLOCK, 0,
		    NULL, NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET, h->fd,
		    MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_THREADS, MHD_OPTION_CONNECTION_LIMIT,
		    (unsigned)HTTP_CONNECTION_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
		    (unsigned)HTTP_IDLE_TIMEOUT_S, MHD_OPTION_END);
		if (!h->daemon) {
			snprintf(why, why_len, "cannot start the HTTP server on %s", cfg->listen);
			err = -EIO;
		} else {
			h->fd = -1; /* the daemon closes it when it stops */
		}
	}
	if (err) {
		serve_http_stop(h);
		return err;
	}
	*out = h;
	return 0;
}

void serve_http_set_agent(struct serve_http *h, struct serve_agent *agent)
{
	atomic_store(&h->agent, agent);
}

unsigned serve_http_port(const struct serve_http *h)
{
	return h->port;
}

void serve_http_stop(struct serve_http *h)
{
	if (!h)
		return;
	if (h->daemon)
		MHD_stop_daemon(h->daemon);
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}
