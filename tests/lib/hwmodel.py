#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The test bed's NVIDIA devices (tests/preload/km_hw.h), written from a
JSON description through the layout database (tests/tools/adb.py), and
what that database says the served registers hold.

  hwmodel.py write SPEC.json HWFILE
      the model's hw file: a dev line and register images per device
  hwmodel.py expect SPEC.json
      JSON: per LID, what ibwatch must show, decoded from the served
      images by the database's layouts (not from SPEC's numbers)

SPEC: {"LID": {"hwid": "0x24d", "switch": true,
               "fw": [27, 2010, 6102], "psid": "MT_0000000063",
               "uptime": 1000, "device_id": 53744,
               "serial": "MT2001X00001", "part": "MQM8790-HS2F",
               "revision": "A1", "product": "Quantum",
               "sensors": {"0": {"name": "asic", "temp": 45.5, "max": 50,
                                 "hi": 105, "lo": 95}},
               "fans": {"1": {"rpm": 9000, "min": 2000, "max": 20000}},
               "psus": [{"present": true, "dc": true, "fan": 2,
                         "watts": 200}]}}
"""
import json
import math
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
ADB = os.path.join(here, "..", "tools", "adb.py")


def adb(db, *args):
    return subprocess.run([sys.executable, ADB, "--db", db] + list(args),
                          check=True, capture_output=True,
                          text=True).stdout.strip()


def chars(field, s, n, width=8):
    """NAME[i]=byte of a string array field of n items of width bits."""
    b = s.encode()[: n * width // 8]
    b += bytes(n * width // 8 - len(b))
    per = width // 8
    out = []
    for i in range(n):
        out.append("%s[%d]=0x%x" % (field, i,
                                    int.from_bytes(b[i * per:(i + 1) * per],
                                                   "big")))
    return out


MI = "page_data.pddr_module_info_ext."
MF = "page_data.module_latched_flag_info_ext."


def u16(v):
    return int(round(v)) & 0xffff


def module_flags(m):
    """The latched flags a module sets against its own thresholds."""
    al, war = m.get("alarm", {}), m.get("warning", {})
    f = {}
    for q, key in (("rx", "rx_uw"), ("tx", "tx_uw"), ("bias", "bias_ma")):
        vals = m.get(key, [])
        for lvl, th in (("al", al), ("war", war)):
            lo, hi = th.get(q + "_low"), th.get(q + "_high")
            for i, v in enumerate(vals):
                if lo is not None and v < lo:
                    f[(q, "lo", lvl)] = f.get((q, "lo", lvl), 0) | 1 << i
                if hi is not None and v > hi:
                    f[(q, "hi", lvl)] = f.get((q, "hi", lvl), 0) | 1 << i
    temp = 0
    t = m.get("temp", 0)
    if "temp_high" in al and t > al["temp_high"]:
        temp |= 1
    if "temp_low" in al and t < al["temp_low"]:
        temp |= 2
    if "temp_high" in war and t > war["temp_high"]:
        temp |= 4
    if "temp_low" in war and t < war["temp_low"]:
        temp |= 8
    return f, temp


def module_lines(db, lid, port, m):
    """PDDR's module info page (powers in uW) and latched flags page."""
    idx = ["pnat=1", "local_port=%d" % port, "module_info_ext=1"]
    al = m.get("alarm", {})
    f = idx + ["page_select=3",
               MI + "cable_type=%d" % m.get("type", 2),
               MI + "cable_identifier=%d" % m.get("identifier", 0),
               MI + "cable_vendor=%d" % m.get("vendor_code", 1),
               MI + "cable_length=%d" % m.get("length", 0),
               MI + "temperature=%d" % u16(m.get("temp", 0) * 256),
               MI + "voltage=%d" % u16(m.get("volt", 0) * 10000),
               MI + "wavelength=%d" % m.get("wavelength", 0),
               MI + "temperature_high_th=%d" % u16(al.get("temp_high", 0) * 256),
               MI + "temperature_low_th=%d" % u16(al.get("temp_low", 0) * 256),
               MI + "voltage_high_th=%d" % u16(al.get("volt_high", 0) * 10000),
               MI + "voltage_low_th=%d" % u16(al.get("volt_low", 0) * 10000),
               MI + "rx_power_high_th=%d" % u16(al.get("rx_high", 0)),
               MI + "rx_power_low_th=%d" % u16(al.get("rx_low", 0)),
               MI + "tx_power_high_th=%d" % u16(al.get("tx_high", 0)),
               MI + "tx_power_low_th=%d" % u16(al.get("tx_low", 0)),
               MI + "tx_bias_high_th=%d" % u16(al.get("bias_high", 0) * 500),
               MI + "tx_bias_low_th=%d" % u16(al.get("bias_low", 0) * 500)]
    f += chars(MI + "vendor_name", m.get("vendor", ""), 4, 32)
    f += chars(MI + "vendor_pn", m.get("pn", ""), 4, 32)
    f += chars(MI + "vendor_sn", m.get("sn", ""), 4, 32)
    f += ["%svendor_rev=0x%x" % (MI, int.from_bytes(
        m.get("rev", "").encode()[:4].ljust(4, b"\0"), "big"))]
    for i, v in enumerate(m.get("rx_uw", [])):
        f.append(MI + "rx_power_lane%d=%d" % (i, u16(v)))
    for i, v in enumerate(m.get("tx_uw", [])):
        f.append(MI + "tx_power_lane%d=%d" % (i, u16(v)))
    for i, v in enumerate(m.get("bias_ma", [])):
        f.append(MI + "tx_bias_lane%d=%d" % (i, u16(v * 500)))
    out = ["%s 0 reg %s" % (lid, adb(db, "encode", "PDDR", *f))]
    flags, temp = module_flags(m)
    g = idx + ["page_select=9", MF + "temp_flags=%d" % temp]
    names = {"rx": "rx_power", "tx": "tx_power", "bias": "tx_bias"}
    for (q, d, lvl), mask in flags.items():
        g.append("%s%s_%s_%s=%d" % (MF, names[q], d, lvl, mask))
    out.append("%s 0 reg %s" % (lid, adb(db, "encode", "PDDR", *g)))
    return out


def lines(spec):
    out = []
    for lid, d in sorted(spec.items(), key=lambda kv: int(kv[0])):
        db = "switch" if d.get("switch") else "hca"
        out.append("%s 0 dev %s" % (lid, d.get("hwid", "0x24d")))
        fw = d.get("fw", [0, 0, 0])
        mgir = ["hw_info.device_id=%d" % d.get("device_id", 0),
                "hw_info.hw_dev_id=%s" % d.get("hwid", "0x24d"),
                "hw_info.uptime=%d" % d.get("uptime", 0),
                "fw_info.extended_major=%d" % fw[0],
                "fw_info.extended_minor=%d" % fw[1],
                "fw_info.extended_sub_minor=%d" % fw[2]]
        mgir += chars("fw_info.psid", d.get("psid", ""), 16)
        out.append("%s 0 reg %s" % (lid, adb(db, "encode", "MGIR", *mgir)))
        if "serial" in d:
            msgi = (chars("serial_number", d["serial"], 6, 32) +
                    chars("part_number", d.get("part", ""), 5, 32) +
                    ["revision=0x%x" % int.from_bytes(
                        d.get("revision", "").encode()[:4].ljust(4, b"\0"),
                        "big")] +
                    chars("product_name", d.get("product", ""), 16, 32))
            out.append("%s 0 reg %s" % (lid, adb(db, "encode", "MSGI",
                                                  *msgi)))
        sens = d.get("sensors", {})
        if sens:
            m = 0
            for k in sens:
                m |= 1 << int(k)
            out.append("%s 0 reg %s" % (lid, adb(
                db, "encode", "MTCAP", "sensor_count=%d" % len(sens),
                "sensor_map.hi=%d" % (m >> 32),
                "sensor_map.lo=%d" % (m & 0xffffffff))))
            for k, s in sens.items():
                name = s.get("name", "").encode()[:8].ljust(8, b"\0")
                f = ["sensor_index=%s" % k,
                     "temperature=%d" % (round(s["temp"] * 8) & 0xffff),
                     "max_temperature=%d" % (round(s.get("max", 0) * 8)
                                             & 0xffff),
                     "temperature_threshold_hi=%d" % round(s.get("hi", 0) * 8),
                     "temperature_threshold_lo=%d" % round(s.get("lo", 0) * 8),
                     "sensor_name_hi=%d" % int.from_bytes(name[:4], "big"),
                     "sensor_name_lo=%d" % int.from_bytes(name[4:], "big")]
                out.append("%s 0 reg %s" % (lid, adb(db, "encode", "MTMP",
                                                      *f)))
        fans = d.get("fans", {})
        if fans:
            t = 0
            for k in fans:
                t |= 1 << int(k)
            out.append("%s 0 reg %s" % (lid, adb(
                db, "encode", "MFCR", "tacho_active=%d" % (t & 0x3ff),
                "tacho_active_msb=%d" % (t >> 10))))
            for k, f in fans.items():
                out.append("%s 0 reg %s" % (lid, adb(
                    db, "encode", "MFSM", "tacho=%s" % k,
                    "rpm=%d" % f["rpm"])))
                out.append("%s 0 reg %s" % (lid, adb(
                    db, "encode", "MFSL", "tacho=%s" % k,
                    "tach_min=%d" % f.get("min", 0),
                    "tach_max=%d" % f.get("max", 0))))
        for port, m in sorted(d.get("modules", {}).items(),
                              key=lambda kv: int(kv[0])):
            out += module_lines(db, lid, int(port), m)
        psus = d.get("psus")
        if psus is not None:
            f = []
            for i, p in enumerate(psus):
                d0 = ((5 if p.get("present", True) else 0) << 28 |
                      (1 if p.get("dc", True) else 2) << 4)
                d1 = p.get("fan", 2)
                d2 = (8 << 28 | p["watts"]) if p.get("watts") else 0
                f += ["psu%d[0]=%d" % (i, d0), "psu%d[1]=%d" % (i, d1),
                      "psu%d[2]=%d" % (i, d2)]
            out.append("%s 0 reg %s" % (lid, adb(db, "encode", "MSPS", *f)))
    return out


def decode(db, reg, image):
    out = {}
    for ln in adb(db, "decode", reg, image).splitlines():
        k, _, v = ln.partition(" | ")
        out[k.strip()] = int(v, 16)
    return out


def text(fields, name, n, width=8):
    b = b""
    for i in range(n):
        b += fields["%s[%d]" % (name, i)].to_bytes(width // 8, "big")
    return b.split(b"\0")[0].decode("utf-8", "replace")


def s16(v):
    return v - 0x10000 if v & 0x8000 else v


def dbm(uw):
    """Power in dBm from the uW PDDR gives with module_info_ext 1, as
    mstlink shows it (0 uW: -40 dBm)."""
    return 10 * math.log10(uw / 1000.0) if uw else -40.0


def module_expect(f):
    """PDDR's module info page by the database's field names and units
    (temperature 1/256 C, voltage 100 uV, bias 2 uA, power uW)."""
    g = lambda k: f[MI + k]
    def words(name):
        b = b"".join(g("%s[%d]" % (name, i)).to_bytes(4, "big")
                     for i in range(4))
        return b.split(b"\0")[0].decode("utf-8", "replace")
    return {
        "vendor": words("vendor_name"), "part_number": words("vendor_pn"),
        "serial_number": words("vendor_sn"),
        "revision": g("vendor_rev").to_bytes(4, "big").split(
            b"\0")[0].decode(),
        "length_m": g("cable_length"), "type": g("cable_type"),
        "identifier": g("cable_identifier"),
        "wavelength_nm": g("wavelength"),
        "temperature_c": s16(g("temperature")) / 256.0,
        "voltage_v": g("voltage") / 10000.0,
        "rx_power_dbm": [dbm(g("rx_power_lane%d" % i)) for i in range(8)],
        "tx_power_dbm": [dbm(g("tx_power_lane%d" % i)) for i in range(8)],
        "tx_bias_ma": [g("tx_bias_lane%d" % i) / 500.0 for i in range(8)],
        "alarm_thresholds": {
            "temperature_high_c": s16(g("temperature_high_th")) / 256.0,
            "temperature_low_c": s16(g("temperature_low_th")) / 256.0,
            "voltage_high_v": g("voltage_high_th") / 10000.0,
            "voltage_low_v": g("voltage_low_th") / 10000.0,
            "rx_power_high_dbm": dbm(g("rx_power_high_th")),
            "rx_power_low_dbm": dbm(g("rx_power_low_th")),
            "tx_power_high_dbm": dbm(g("tx_power_high_th")),
            "tx_power_low_dbm": dbm(g("tx_power_low_th")),
            "tx_bias_high_ma": g("tx_bias_high_th") / 500.0,
            "tx_bias_low_ma": g("tx_bias_low_th") / 500.0}}


def expect(spec):
    """What the served images hold, decoded by the database's layouts."""
    served = {}
    for ln in lines(spec):
        w = ln.split()
        if w[2] == "reg":
            served.setdefault(w[0], []).append((int(w[3], 16), w[5]))
    ids = {}
    res = {}
    for lid, regsv in served.items():
        db = "switch" if spec[lid].get("switch") else "hca"
        if not ids:
            for r in ("MGIR", "MSGI", "MTCAP", "MTMP", "MFCR", "MFSM",
                      "MFSL", "MSPS", "PDDR"):
                ids[int(adb(db, "id", r), 16)] = r
        e = {"sensors": {}, "fans": {}, "psus": [], "modules": {}}
        for rid, img in regsv:
            r = ids[rid]
            f = decode(db, r, img)
            if r == "MGIR":
                e["firmware_version"] = "%d.%04d.%04d" % (
                    f["fw_info.extended_major"], f["fw_info.extended_minor"],
                    f["fw_info.extended_sub_minor"])
                e["psid"] = text(f, "fw_info.psid", 16)
                e["uptime_s"] = f["hw_info.uptime"]
                e["device_id"] = f["hw_info.device_id"]
                e["hw_dev_id"] = "0x%04x" % f["hw_info.hw_dev_id"]
            elif r == "MSGI":
                e["serial_number"] = text(f, "serial_number", 6, 32)
                e["part_number"] = text(f, "part_number", 5, 32)
                e["revision"] = f["revision"].to_bytes(4, "big").split(
                    b"\0")[0].decode()
                e["product_name"] = text(f, "product_name", 16, 32)
            elif r == "MTMP":
                nm = (f["sensor_name_hi"].to_bytes(4, "big") +
                      f["sensor_name_lo"].to_bytes(4, "big"))
                e["sensors"][str(f["sensor_index"])] = {
                    "name": nm.split(b"\0")[0].decode(),
                    "temperature_c": s16(f["temperature"]) / 8,
                    "max_c": s16(f["max_temperature"]) / 8,
                    "threshold_high_c": s16(f["temperature_threshold_hi"]) / 8,
                    "threshold_low_c": s16(f["temperature_threshold_lo"]) / 8}
            elif r == "MFSM":
                e["fans"].setdefault(str(f["tacho"]), {})["rpm"] = f["rpm"]
            elif r == "MFSL":
                x = e["fans"].setdefault(str(f["tacho"]), {})
                x["min_rpm"] = f["tach_min"]
                x["max_rpm"] = f["tach_max"]
            elif r == "PDDR" and f["page_select"] == 3:
                e["modules"][str(f["local_port"])] = module_expect(f)
            elif r == "MSPS":
                for i in range(2):
                    d0, d1, d2 = (f["psu%d[%d]" % (i, j)] for j in range(3))
                    e["psus"].append({
                        "present": d0 >> 28 == 5,
                        "dc_ok": (d0 >> 4 & 0xf) == 1,
                        "fan": {2: "ok", 3: "none"}.get(d1 & 0xf, "failed"),
                        "watts": d2 & 0x0fffffff if d2 >> 28 == 8 else 0})
        res[lid] = e
    return res


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        spec = json.load(f)
    if argv[0] == "write" and len(argv) == 3:
        tmp = argv[2] + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines(spec)) + "\n")
        os.replace(tmp, argv[2])
    elif argv[0] == "expect":
        json.dump(expect(spec), sys.stdout, indent=1, sort_keys=True)
        print()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
