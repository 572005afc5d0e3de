/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Names from the fabric (NodeDescription, and names derived from it) are
 * set by root on any host and reach us verbatim. They are made safe once,
 * where they enter, so that every front end (Prometheus labels, JSON,
 * SNMP, logs) can trust them to be valid UTF-8 without control bytes.
 */
#ifndef IBW_SAFENAME_H
#define IBW_SAFENAME_H

#include <stddef.h>

/* A NodeDescription is 64 octets; in the worst case each becomes the
 * three octets of U+FFFD. Every buffer that holds a name has this size,
 * so copying a safe name never cuts a character. */
#define IBW_NAME_SIZE (64 * 3 + 1)

/*
 * Copy @srclen bytes of @src into @dst as valid UTF-8, NUL-terminated:
 * - an ill-formed sequence becomes one U+FFFD per maximal subpart (as
 *   Unicode 3.9 recommends, and Python, ICU and browsers do): overlong
 *   forms, surrogates and code points above U+10FFFF included;
 * - control characters (C0 incl. NUL and newline, DEL, C1) become '?';
 * - a sequence cut by the end of @src is dropped, not replaced: that is
 *   a name truncated to its field, not a bad byte;
 * - output stops before the first character that does not fit in
 *   @dstlen - 1 bytes, so no character is ever left half.
 * Returns the length written (without the NUL); @dstlen must be >= 1.
 */
size_t ibw_name_sanitize(char *dst, size_t dstlen, const void *src,
			 size_t srclen);

/* Text built from safe names and cut by snprintf may end inside a
 * character: drop that last partial character of @s in place. */
void ibw_name_trim(char *s);

/* Room for any safe name quoted by ibw_name_quote(). */
#define IBW_NAME_QUOTED_SIZE (2 * IBW_NAME_SIZE + 2)

/* @name (a safe name) in double quotes for a log line, with '"' and '\'
 * escaped by a backslash, so that where the name ends is plain whatever
 * it holds; cut to @dstlen (>= 3) between characters. Returns @dst. */
const char *ibw_name_quote(char *dst, size_t dstlen, const char *name);

#endif
