#!/usr/bin/env python3
"""Convert a containers-common seccomp profile (/usr/share/containers/seccomp.json,
the default Podman and CRI-O apply) into the OCI runtime spec's `linux.seccomp`.

It does what Podman and CRI-O do when they load the profile for a
container: an entry is kept only when
  - includes.caps: every capability listed is in the container's bounding set,
  - includes.arches: the target arch is listed,
  - includes.minKernel: the running kernel is at least that version,
  - excludes.caps: none of the listed capabilities is in the bounding set,
  - excludes.arches: the target arch is not listed;
`architectures` is the target's entry of archMap with its sub-architectures.

usage: oci_seccomp.py PROFILE [--arch amd64] [--caps CAP_A,CAP_B | --config config.json]
                              [--merge config.json]
Without --merge it prints the `linux.seccomp` object; with --merge it writes it
into that config.json (in place) and takes the capabilities from it.
"""
import argparse
import json
import os
import platform
import sys

GO_TO_SCMP = {
    "amd64": "SCMP_ARCH_X86_64", "386": "SCMP_ARCH_X86", "arm64": "SCMP_ARCH_AARCH64",
    "arm": "SCMP_ARCH_ARM", "s390x": "SCMP_ARCH_S390X", "ppc64le": "SCMP_ARCH_PPC64LE",
    "riscv64": "SCMP_ARCH_RISCV64", "mips64": "SCMP_ARCH_MIPS64", "mips64le": "SCMP_ARCH_MIPSEL64",
}
MACHINE_TO_GO = {"x86_64": "amd64", "aarch64": "arm64", "s390x": "s390x", "ppc64le": "ppc64le",
                 "riscv64": "riscv64", "i686": "386", "armv7l": "arm"}


def kernel_version():
    rel = platform.release().split("-")[0]
    parts = []
    for p in rel.split(".")[:2]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits or 0))
    while len(parts) < 2:
        parts.append(0)
    return tuple(parts)


def parse_version(text):
    parts = [int("".join(ch for ch in p if ch.isdigit()) or 0) for p in text.split(".")[:2]]
    while len(parts) < 2:
        parts.append(0)
    return tuple(parts)


def wanted(entry, caps, arch, kernel):
    inc = entry.get("includes") or {}
    exc = entry.get("excludes") or {}
    if inc.get("arches") and arch not in inc["arches"]:
        return False
    if inc.get("caps") and not all(c in caps for c in inc["caps"]):
        return False
    if inc.get("minKernel") and kernel < parse_version(inc["minKernel"]):
        return False
    if exc.get("arches") and arch in exc["arches"]:
        return False
    if exc.get("caps") and any(c in caps for c in exc["caps"]):
        return False
    return True


def convert(profile, caps, arch, kernel=None):
    kernel = kernel or kernel_version()
    out = {"defaultAction": profile["defaultAction"]}
    if profile.get("defaultErrnoRet") is not None:
        out["defaultErrnoRet"] = profile["defaultErrnoRet"]
    scmp = GO_TO_SCMP.get(arch)
    arches = []
    for m in profile.get("archMap") or []:
        if m["architecture"] == scmp:
            arches = [m["architecture"]] + list(m.get("subArchitectures") or [])
    if not arches and profile.get("architectures"):
        arches = list(profile["architectures"])
    if arches:
        out["architectures"] = arches
    syscalls = []
    for entry in profile.get("syscalls") or []:
        if not wanted(entry, caps, arch, kernel):
            continue
        names = list(entry.get("names") or ([entry["name"]] if entry.get("name") else []))
        if not names:
            continue
        rule = {"names": names, "action": entry["action"]}
        if entry.get("errnoRet") is not None:
            rule["errnoRet"] = entry["errnoRet"]
        args = []
        for a in entry.get("args") or []:
            args.append({"index": a["index"], "value": a["value"],
                         "valueTwo": a.get("valueTwo", 0), "op": a["op"]})
        if args:
            rule["args"] = args
        syscalls.append(rule)
    out["syscalls"] = syscalls
    if profile.get("flags"):
        out["flags"] = profile["flags"]
    return out


def caps_of(config):
    proc = config.get("process") or {}
    return list((proc.get("capabilities") or {}).get("bounding") or [])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile")
    ap.add_argument("--arch", default=MACHINE_TO_GO.get(platform.machine(), platform.machine()))
    ap.add_argument("--caps", help="comma-separated capabilities (the bounding set)")
    ap.add_argument("--config", help="take the capabilities from this config.json")
    ap.add_argument("--merge", help="write linux.seccomp into this config.json")
    a = ap.parse_args()
    with open(a.profile) as f:
        profile = json.load(f)
    cfg_path = a.merge or a.config
    config = None
    if cfg_path:
        with open(cfg_path) as f:
            config = json.load(f)
    if a.caps is not None:
        caps = [c.strip() for c in a.caps.split(",") if c.strip()]
    elif config is not None:
        caps = caps_of(config)
    else:
        caps = []
    seccomp = convert(profile, caps, a.arch)
    if a.merge:
        config.setdefault("linux", {})["seccomp"] = seccomp
        tmp = a.merge + ".tmp"
        with open(tmp, "w") as f:
            json.dump(config, f, indent=2)
            f.write("\n")
        os.replace(tmp, a.merge)
        print(f"{a.merge}: linux.seccomp from {a.profile} ({len(seccomp['syscalls'])} rules, "
              f"arch {a.arch}, caps {','.join(caps) or 'none'})", file=sys.stderr)
    else:
        json.dump(seccomp, sys.stdout, indent=2)
        sys.stdout.write("\n")


if __name__ == "__main__":
    main()
