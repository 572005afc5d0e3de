#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Registers as NVIDIA's layout database (mstflint's .adb XML) lays them out.

An independent decoder and encoder for the tests: it reads the database
mstflint ships, never ibwatch's C structures, so a register image that it
encodes and ibwatch decodes, or that ibwatch's model serves and it decodes,
checks ibwatch's layouts against the database's.

  adb.py [--db switch|hca|PATH] id REG
      the register's ID (hex), from the database's register union
  adb.py [--db ...] fields REG
      every leaf field: NAME MSB_BIT SIZE ACCESS, as mstreg names them
  adb.py [--db ...] encode REG [NAME=VALUE ...]
      "ID MASK IMAGE": the register image with those fields set (others 0)
      and the mask of its own INDEX fields (not those of a union's
      pages), both in hex
  adb.py [--db ...] decode REG HEX
      "NAME | 0x%08x" per leaf field, as `mstreg --get` prints them

Offsets follow the database's convention: "0xN.B" is byte N, bit B of the
big-endian dword counted from its least significant bit; with
big_endian_arr, the elements of an array of items narrower than a dword
run from the most significant end of each dword.
"""
import signal
import sys
import xml.etree.ElementTree as ET

DBS = {
    "switch": "/usr/share/mstflint/prm_dbs/switch/ext/register_access_table.adb",
    "hca": "/usr/share/mstflint/prm_dbs/hca/ext/register_access_table.adb",
}


def bits(spec):
    """'0x10.24' -> (byte 16, bit 24); '0x4.0' size -> bits."""
    spec = spec.strip()
    if "." in spec:
        b, bit = spec.split(".", 1)
    else:
        b, bit = spec, "0"
    return int(b, 16) if b else 0, int(bit) if bit else 0


def size_bits(spec):
    byte, bit = bits(spec)
    return byte * 8 + bit


class Db:
    def __init__(self, path):
        root = ET.parse(path).getroot()
        self.nodes = {}
        for n in root.iter("node"):
            self.nodes[n.get("name")] = n
        self.regs = {}  # NAME -> (subnode, id)
        summ = self.nodes.get("access_reg_summary_ext")
        ids = {}
        for f in root.iter("field"):
            en = f.get("enum")
            if f.get("name") == "id" and en and "MGIR=" in en:
                for kv in en.split(","):
                    k, _, v = kv.partition("=")
                    ids[k.strip()] = int(v, 16)
        for f in summ.findall("field"):
            sel = f.get("selected_by")
            if sel:
                self.regs[sel] = (f.get("subnode"), ids.get(sel))

    def leaves(self, node_name, base=0, prefix=""):
        """(name, msb_bit, size, access) of every leaf under a node."""
        out = []
        node = self.nodes[node_name]
        for f in node.findall("field"):
            name = prefix + f.get("name")
            byte, bit = bits(f.get("offset"))
            size = size_bits(f.get("size"))
            sub = f.get("subnode")
            hb, lb = f.get("high_bound"), f.get("low_bound")
            if hb is not None and hb != "VARIABLE":
                n = int(hb) - int(lb) + 1
                es = size // n
                first = base + byte * 8 + (32 - bit - es if es < 32 else 0)
                for i in range(n):
                    off = first + i * es
                    ename = "%s[%d]" % (name, i + int(lb))
                    if sub and sub in self.nodes:
                        out += self.leaves(sub, off, ename + ".")
                    else:
                        out.append((ename, off, es, f.get("access", "")))
                continue
            off = base + byte * 8 + (32 - bit - size if size < 32 else 0)
            if sub and sub in self.nodes and sub != "uint64":
                out += self.leaves(sub, off, name + ".")
            elif sub == "uint64":
                out.append((name + ".hi", off, 32, f.get("access", "")))
                out.append((name + ".lo", off + 32, 32, f.get("access", "")))
            else:
                out.append((name, off, size, f.get("access", "")))
        return out

    def reg(self, name):
        if name not in self.regs:
            sys.exit("adb.py: no register %s in the database" % name)
        sub, rid = self.regs[name]
        size = size_bits(self.nodes[sub].get("size"))
        return sub, rid, size // 8


def put(img, off, size, val):
    for i in range(size):
        b = off + size - 1 - i
        if (val >> i) & 1:
            img[b // 8] |= 0x80 >> (b % 8)
        else:
            img[b // 8] &= ~(0x80 >> (b % 8)) & 0xFF


def get(img, off, size):
    v = 0
    for i in range(size):
        b = off + i
        v = (v << 1) | ((img[b // 8] >> (7 - b % 8)) & 1)
    return v


def main(argv):
    db = "switch"
    if len(argv) > 2 and argv[0] == "--db":
        db, argv = argv[1], argv[2:]
    if len(argv) < 2:
        sys.exit(__doc__)
    d = Db(DBS.get(db, db))
    op, reg = argv[0], argv[1].upper()
    sub, rid, nbytes = d.reg(reg)
    leaves = d.leaves(sub)
    if op == "id":
        print("0x%04x" % rid)
    elif op == "fields":
        for n, off, size, acc in leaves:
            print(n, off, size, acc)
    elif op == "encode":
        img = bytearray(nbytes)
        mask = bytearray(nbytes)
        byname = {n: (off, size, acc) for n, off, size, acc in leaves}
        for n, off, size, acc in leaves:
            # the register's own index fields: those inside a union's
            # pages (PDDR's page_data) belong to pages not selected
            if acc == "INDEX" and "." not in n:
                put(mask, off, size, (1 << size) - 1)
        for kv in argv[2:]:
            k, _, v = kv.partition("=")
            if k not in byname:
                sys.exit("adb.py: %s has no field %s" % (reg, k))
            off, size, _ = byname[k]
            val = int(v, 0)
            if val < 0 or val >> size:
                sys.exit("adb.py: %s=%s does not fit %d bits" % (k, v, size))
            put(img, off, size, val)
        print("0x%04x %s %s" % (rid, mask.hex(), img.hex()))
    elif op == "decode":
        img = bytes.fromhex(argv[2])
        img += bytes(max(0, nbytes - len(img)))
        for n, off, size, _ in leaves:
            print("%s | 0x%08x" % (n, get(img, off, size) & 0xFFFFFFFF))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main(sys.argv[1:])
