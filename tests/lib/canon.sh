# SPDX-License-Identifier: BSD-2-Clause
# Canonical fabric descriptions, to compare ibwatch with ibnetdiscover.
# Sourced by tests. Every line is one of:
#   node GUID TYPE NPORTS
#   port NODEGUID PORT PORTGUID LID      (switch port 0; linked CA ports)
#   link GUID/PORT GUID/PORT             (lower end first)
# GUIDs as 0x%016x.

# ibnetdiscover's topology output on stdin.
canon_ibnetdiscover() {
	awk '
	function hexg(s) { return "0x" substr("0000000000000000", 1, 16 - length(s)) s }
	function g(s) { sub(/^[SHR]-/, "", s); return hexg(s) }
	function endpoints(a, b) { return (a < b) ? a " " b : b " " a }
	/^(Switch|Ca|Rt)[ \t]/ {
		match($0, /"[SHR]-[0-9a-f]+"/)
		cur = g(substr($0, RSTART + 1, RLENGTH - 2))
		type = ($1 == "Switch") ? "switch" : ($1 == "Ca") ? "ca" : "router"
		print "node", cur, type, $2
		if (type == "switch" && match($0, /base port 0 lid [0-9]+/)) {
			split(substr($0, RSTART, RLENGTH), w, " ")
			print "port", cur, 0, cur, w[5]
		}
		next
	}
	/^\[/ {
		match($0, /^\[[0-9]+\]/); lp = substr($0, 2, RLENGTH - 2) + 0
		rest = substr($0, RLENGTH + 1)
		pg = ""
		if (rest ~ /^\(/) { match(rest, /^\([0-9a-f]+\)/); pg = hexg(substr(rest, 2, RLENGTH - 2)) }
		match($0, /"[SHR]-[0-9a-f]+"\[[0-9]+\]/)
		r = substr($0, RSTART, RLENGTH)
		match(r, /"[^"]+"/); rg = g(substr(r, RSTART + 1, RLENGTH - 2))
		match(r, /\[[0-9]+\]/); rp = substr(r, RSTART + 1, RLENGTH - 2) + 0
		print "link", endpoints(sprintf("%s/%d", cur, lp), sprintf("%s/%d", rg, rp))
		if (type != "switch" && match($0, /# lid [0-9]+ lmc/)) {
			split(substr($0, RSTART, RLENGTH), w, " ")
			print "port", cur, lp, pg, w[3]
		}
	}' | sort -u
}

# ibwatchd --once JSON in file $1; gone nodes are left out.
canon_ibwatch() {
	jq -r '
	  .nodes[] | select(.gone | not) | . as $n |
	  ("node \(.guid) \(.type) \(.num_ports)"),
	  (.ports[] |
	    (if ($n.type == "switch" and .port == 0) or
	        ($n.type != "switch" and .remote != null)
	     then "port \($n.guid) \(.port) \(.guid) \(.lid)" else empty end),
	    (if .remote != null then
	       ([("\($n.guid)/\(.port)"), ("\(.remote.guid)/\(.remote.port)")]
	        | sort | "link \(.[0]) \(.[1])")
	     else empty end))' "$1" | sort -u
}

# A path from `ibtracert -n` on stdin, on one line in the tool's terms:
# "0xNODE/PORT OUT>0xGUID/IN ... 0xNODE/PORT".
canon_tracert() {
	sed -n -e 's/^From {\(0x[0-9a-f]*\)}\[\([0-9]*\)\] *$/\1\/\2/p' \
		-e 's/^\[\([0-9]*\)\] -> {\(0x[0-9a-f]*\)}\[\([0-9]*\)\] *$/\1>\2\/\3/p' \
		-e 's/^To {\(0x[0-9a-f]*\)}\[\([0-9]*\)\] *$/\1\/\2/p' | paste -sd' '
}
