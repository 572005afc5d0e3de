# SPDX-License-Identifier: BSD-2-Clause
# Generated Slurm hostlist expressions for tests/integration/
# hostlist_scontrol.sh, one per line: "ok EXPR" for a well-formed one,
# "bad EXPR" for one Slurm refuses. Deterministic for a seed:
#   awk -v n=10000 -v seed=36 -f hostlist-gen.awk
# Widths are the point: lower bounds padded or not, upper bounds as
# wide, wider or narrower ("n[01-100]", "n[1-03]", "n[001-1]"), ranges
# crossing a power of ten, several groups, and now and then a range at
# Slurm's bound of 65536 names.
function rnd(k) { return int(rand() * k) }

function lit(  s, k, i, c) {
	s = ""
	k = 1 + rnd(4)
	for (i = 0; i < k; i++) {
		c = rnd(20)
		if (c < 14)
			s = s substr("abcdefghijklmnopqrstuvwxyz", 1 + rnd(26), 1)
		else if (c < 17)
			s = s rnd(10)
		else
			s = s substr("-_.", 1 + rnd(3), 1)
	}
	return s
}

# a number printed at width w (0: as it is)
function pad(v, w) { return w ? sprintf("%0" w "d", v) : sprintf("%d", v) }

# a lower bound: small, or just under a power of ten
function lower(  c) {
	c = rnd(4)
	if (c == 0)
		return rnd(12)
	if (c == 1)
		return 10 ^ (1 + rnd(4)) - 1 - rnd(3)
	if (c == 2)
		return rnd(200)
	return rnd(100000)
}

# one range of at most @room names; sets names
function range(room,  lo, hi, wl, wh, c) {
	lo = lower()
	wl = rnd(3) ? 0 : length(lo "") + rnd(3)
	if (rnd(3) == 0 || room < 2) {
		names = 1
		return pad(lo, wl)
	}
	hi = lo + rnd(room > 30 ? 30 : room)
	c = rnd(4)
	if (c == 0)
		wh = wl
	else if (c == 1)
		wh = 0
	else
		wh = length(hi "") + rnd(3)
	names = hi - lo + 1
	return pad(lo, wl) "-" pad(hi, wh)
}

# one bracket group of at most @room names; sets names
function group(room,  s, k, i, total) {
	s = ""
	total = 0
	k = 1 + rnd(3)
	for (i = 0; i < k && total < room; i++) {
		s = s (i ? "," : "") range(room - total)
		total += names
	}
	names = total
	return "[" s "]"
}

# one term: literals and groups, a group last if any
function term(  s, g, k, i, total) {
	k = rnd(4)
	if (k == 0)
		return lit()
	s = ""
	total = 1
	for (i = 0; i < k; i++) {
		s = s (i && rnd(4) == 0 ? "" : lit()) group(int(400 / total))
		total *= names
	}
	return s
}

function good(  s, k, i) {
	# now and then a range at Slurm's bound, or crossing it
	if (rnd(400) == 0) {
		k = rnd(100)
		return "big" pad(k, 3) "[" pad(k, 2 + rnd(3)) "-" k + 65535 "]"
	}
	s = term()
	k = rnd(3)
	for (i = 0; i < k; i++)
		s = s (rnd(5) ? "," : " ") term()
	return s
}

function bad(  c, lo) {
	c = rnd(6)
	lo = lower()
	if (c == 0)
		return lit() "[" lo + 1 + rnd(9) "-" lo "]"
	if (c == 1)
		return lit() "[" lo "-" lo + 65536 + rnd(9) "]"
	if (c == 2)
		return term() "[" lo "]" lit()
	if (c == 3)
		return lit() "[" lo ",," lo + 1 "]"
	if (c == 4)
		return lit() "[" lo "--" lo + 1 "]"
	return lit() "[]"
}

BEGIN {
	srand(seed)
	for (j = 0; j < n; j++) {
		e = rnd(100) < 3 ? "bad " bad() : "ok " good()
		# scontrol would take a leading "-" for an option
		if (e ~ /^(ok|bad) -/)
			sub(/ -/, " h-", e)
		print e
	}
}
