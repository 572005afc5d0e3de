/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * FNV-1a, 64 bits, for byte strings: the engine's directed-route
 * destinations, the counters' port index and the state file's checksum
 * (integer-keyed tables elsewhere mix their key themselves).
 * Fast and well spread, but not for keys an adversary chooses, and not a
 * cryptographic check: it catches torn and corrupt files, not forged ones.
 * The state file carries its value, so the function must never change.
 */
#ifndef IBW_HASH_H
#define IBW_HASH_H

#include <stddef.h>
#include <stdint.h>

/*
 * Where every hash starts. Not FNV's offset basis (14695981039346656037)
 * but that number with its last digit lost, as ibwatch has always used
 * it: the steps are FNV-1a's and spread as well, and state files written
 * since the first version carry hashes made from this start.
 */
#define IBW_FNV1A64_INIT 1469598103934665603ull

/* Continue the hash @h over the @n bytes at @p (start from
 * IBW_FNV1A64_INIT); hashing in pieces gives the same as all at once.
 * From FNV's offset basis it gives the standard FNV-1a 64 values. */
static inline uint64_t ibw_fnv1a64(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ull; /* the FNV 64-bit prime */
	}
	return h;
}

#endif
