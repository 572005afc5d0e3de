#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "ctr_state.h"
#include "hash.h"

#define STATE_MAGIC "ibwatch-counters 1"

int ibw_ctr_state_save(const char *path, const struct ibw_port_ctrs *ports,
		       unsigned n)
{
	char tmp[4096], line[8192];
	uint64_t h = IBW_FNV1A64_INIT;
	unsigned i;
	int fd, j, rc = 0;
	FILE *f;
	size_t len;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	len = (size_t)snprintf(line, sizeof(line), "%s\n", STATE_MAGIC);
	h = ibw_fnv1a64(h, line, len);
	fputs(line, f);
	for (i = 0; i < n; i++) {
		const struct ibw_port_ctrs *p = &ports[i];

		len = (size_t)snprintf(line, sizeof(line),
				       "p 0x%016" PRIx64 " %u %u %u %" PRIu64
				       " %" PRIu64,
				       p->guid, p->port, p->is_switch,
				       p->resets, p->discontinuity_us,
				       p->updated_us);
		for (j = 0; j < IBW_CTR_MAX; j++) {
			const struct ibw_ctr_val *v = &p->v[j];
			unsigned flags = v->have_raw | v->from_ext << 1 |
					 v->saturated << 2 |
					 v->over_threshold << 3;

			len += (size_t)snprintf(line + len, sizeof(line) - len,
						" %" PRIu64 ":%" PRIu64 ":%u:%"
						"u",
						v->total, v->raw, flags,
						v->resets);
		}
		len += (size_t)snprintf(line + len, sizeof(line) - len, "\n");
		h = ibw_fnv1a64(h, line, len);
		fputs(line, f);
	}
	fprintf(f, "end %u %016" PRIx64 "\n", n, h);
	if (fflush(f) != 0 || fsync(fd) != 0)
		rc = -errno;
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

static int parse_port_line(char *line, struct ibw_port_ctrs *p)
{
	char *s = line + 2, *end;
	unsigned long long g;
	int j;

	memset(p, 0, sizeof(*p));
	g = strtoull(s, &end, 16);
	if (end == s)
		return -1;
	p->guid = g;
	s = end;
	p->port = (uint8_t)strtoul(s, &end, 10);
	p->is_switch = (uint8_t)strtoul(end, &end, 10);
	p->resets = (uint32_t)strtoul(end, &end, 10);
	p->discontinuity_us = strtoull(end, &end, 10);
	p->updated_us = strtoull(end, &end, 10);
	s = end;
	for (j = 0; j < IBW_CTR_MAX; j++) {
		struct ibw_ctr_val *v = &p->v[j];
		unsigned flags;

		v->total = strtoull(s, &end, 10);
		if (end == s || *end != ':')
			return -1;
		v->raw = strtoull(end + 1, &end, 10);
		if (*end != ':')
			return -1;
		flags = (unsigned)strtoul(end + 1, &end, 10);
		if (*end != ':')
			return -1;
		v->resets = (uint32_t)strtoul(end + 1, &end, 10);
		v->have_raw = flags & 1;
		v->from_ext = (flags >> 1) & 1;
		v->saturated = (flags >> 2) & 1;
		v->over_threshold = (flags >> 3) & 1;
		s = end;
	}
	return 0;
}

int ibw_ctr_state_load(const char *path, struct ibw_port_ctrs **out,
		       unsigned *nout, unsigned *capout)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t h = IBW_FNV1A64_INIT;
	struct ibw_port_ctrs *ports = NULL;
	unsigned nports = 0, pcap = 0, want;
	unsigned long long sum;
	int ok = 0, first = 1;

	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (first) {
			first = 0;
			if (strcmp(line, STATE_MAGIC "\n"))
				break;
			h = ibw_fnv1a64(h, line, (size_t)n);
			continue;
		}
		if (!strncmp(line, "end ", 4)) {
			if (sscanf(line, "end %u %llx", &want, &sum) == 2 &&
			    want == nports && sum == h)
				ok = 1;
			break;
		}
		if (strncmp(line, "p ", 2))
			break;
		h = ibw_fnv1a64(h, line, (size_t)n);
		if (nports == pcap) {
			unsigned nc = pcap ? pcap * 2 : 256;
			struct ibw_port_ctrs *np =
				realloc(ports, nc * sizeof(*np));

			if (!np)
				break;
			ports = np;
			pcap = nc;
		}
		if (parse_port_line(line, &ports[nports]) < 0)
			break;
		nports++;
	}
	free(line);
	fclose(f);
	if (!ok) {
		free(ports);
		return -EBADMSG;
	}
	*out = ports;
	*nout = nports;
	*capout = pcap;
	return 0;
}
