#!/usr/bin/env bash
# The Python runtime on an emulated Raspberry Pi: builds (once, then cached) an arm64 Debian userland with
# burnedge's runtime dependencies, and runs bundles through burnedge.Session inside it (chroot + QEMU user mode),
# with the board's CPU (QEMU_CPU), so the library the bundle carries for that board is the one chosen and run.
#
#   scripts/arm64_userland.sh [--cpu cortex-a72] [--expect rpi4] [--trust SIGNER.pub] [BUNDLE.bedge ...]
#
# Without bundles it exports two (the digits MLP in float and the digits CNN in int8, for rpi4 and rpi5). Each
# bundle's test vectors must match inside the userland (float within 1e-4 relative, an int8 bundle bit for bit),
# from the library of target --expect, loaded through cffi in ABI mode: the userland has no C compiler. The board
# trusts the key that signed them, as a device would (--trust; default: this machine's own key, which signs what
# it exports), so an untrusted bundle is refused there too.
#
# Steps: 1. check root, debootstrap, qemu-aarch64-static; 2. mount binfmt_misc and register QEMU for arm64 when
# missing; 3. unless cached: debootstrap bookworm arm64 (minbase + python3, python3-numpy, python3-cffi,
# python3-cryptography, libgomp1), then the pip-only dependencies (onnx, protobuf, ml_dtypes, safetensors) as
# arm64 wheels fetched by this machine's pip (no emulated compiling); 4. copy burnedge, the bundles and the signer's
# public key in; 5. run the check in a chroot.
#
# Needs root and, for the first build, deb.debian.org and pypi.org (about 5-15 minutes on 2 cores; ~450 MB).
# Cache: $BURNEDGE_ARM64_CACHE, else .cache/arm64-userland in the repository. Exit 0 only when every bundle passes.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${BURNEDGE_ARM64_CACHE:-$REPO/.cache/arm64-userland}"
SUITE=bookworm
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PACKAGES=python3,python3-numpy,python3-cffi,python3-ply,python3-pycparser,python3-cryptography,libgomp1,ca-certificates
WHEELS=(onnx protobuf ml_dtypes safetensors)
CPU=cortex-a72
EXPECT=rpi4
BUNDLES=()
TRUST=

die() { echo "arm64_userland: error: $*" >&2; exit 2; }
# removes a (partial) userland: first whatever is still mounted in it (a failed debootstrap may leave /proc, /sys
# or a bind-mounted /dev), and never across a file system boundary
remove() {
    [ -e "$1" ] || return 0
    { grep -o " $1/[^ ]*" /proc/mounts || true; } | sort -r | xargs -r -n1 umount -l
    rm -rf --one-file-system "$1"
}
while [ $# -gt 0 ]; do
    case "$1" in
        --cpu) CPU="$2"; shift 2 ;;
        --expect) EXPECT="$2"; shift 2 ;;
        --trust) TRUST="$(realpath "$2")"; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) die "unknown option $1" ;;
        *) BUNDLES+=("$(realpath "$1")"); shift ;;
    esac
done

# 1. what the machine needs
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, binfmt_misc and chroot); run it as root or in a root CI job"
command -v debootstrap > /dev/null || die "debootstrap is missing: apt-get install debootstrap"
command -v qemu-aarch64-static > /dev/null || die "qemu-aarch64-static is missing: apt-get install qemu-user-static"
PY="${PYTHON:-python3}"
"$PY" -c "import burnedge" 2> /dev/null || die "$PY cannot import burnedge (pip install -e . first)"

# 2. arm64 binaries run through QEMU: binfmt_misc, with the F flag (the interpreter is opened now, so it works
#    inside the chroot, which has no QEMU of its own)
BINFMT=/proc/sys/fs/binfmt_misc
if [ ! -e "$BINFMT/status" ]; then
    mount -t binfmt_misc binfmt_misc "$BINFMT" || die "cannot mount binfmt_misc (a container without privileges?)"
fi
if [ ! -e "$BINFMT/qemu-aarch64" ]; then
    /lib/systemd/systemd-binfmt /usr/lib/binfmt.d/qemu-aarch64.conf 2> /dev/null \
        || update-binfmts --enable qemu-aarch64 2> /dev/null \
        || die "cannot register QEMU for arm64 binaries in binfmt_misc"
fi
grep -q '^flags:.*F' "$BINFMT/qemu-aarch64" \
    || die "QEMU is registered for arm64 without the F flag (qemu-user-binfmt?); install qemu-user-static"

# 3. the userland, cached under a key of what goes into it
KEY=$(printf '%s\n' "$SUITE" "$PACKAGES" "${WHEELS[*]}" "$(sed -n '/^# 3\./,/^# 4\./p' "$0")" | sha256sum | cut -c1-12)
ROOT="$CACHE/$SUITE-arm64-$KEY"
if [ ! -f "$ROOT/.burnedge-userland" ]; then
    echo "arm64_userland: building the $SUITE arm64 userland in $ROOT (once)"
    mkdir -p "$CACHE"
    remove "$ROOT.tmp"
    start=$SECONDS
    debootstrap --arch=arm64 --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOT.tmp" "$MIRROR" \
        > "$CACHE/debootstrap.log" 2>&1 || { tail -20 "$CACHE/debootstrap.log" >&2; die "debootstrap failed"; }
    numpy=$(dpkg-query --admindir="$ROOT.tmp/var/lib/dpkg" -W -f='${Version}' python3-numpy)
    numpy=$(echo "$numpy" | sed 's/^[0-9]*://; s/-.*//')  # 1:1.24.2-1+deb12u1 -> 1.24.2
    pyver=$(chroot "$ROOT.tmp" python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    # the wheels resolve against Debian's numpy (pinned), which then stays the one used
    PIP_ROOT_USER_ACTION=ignore "$PY" -m pip install --quiet --disable-pip-version-check --no-warn-conflicts \
        --target "$ROOT.tmp/opt/burnedge-deps" --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 \
        --python-version "$pyver" --implementation cp --only-binary=:all: "${WHEELS[@]}" "numpy==$numpy" \
        || die "pip could not fetch the arm64 wheels (${WHEELS[*]}) for Python $pyver with numpy $numpy"
    deps="$ROOT.tmp/opt/burnedge-deps"
    rm -rf "$deps"/numpy "$deps"/numpy-* "$deps"/numpy.libs "$deps"/bin
    rm -rf "$ROOT.tmp"/var/cache/apt/archives/*.deb
    touch "$ROOT.tmp/.burnedge-userland"
    mv "$ROOT.tmp" "$ROOT"
    for old in "$CACHE/$SUITE"-arm64-*; do  # userlands of other keys: stale
        [ "$old" = "$ROOT" ] || remove "$old"
    done
    echo "arm64_userland: built in $((SECONDS - start)) s ($(du -sh "$ROOT" | cut -f1))"
fi
# 4. burnedge (this checkout, as source) and the bundles
WORK=$(mktemp -d "$ROOT/tmp/burnedge.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/src"
cp -r "$REPO/burnedge" "$WORK/src/"  # the board TOMLs are package data (burnedge/targets/)
find "$WORK/src" -name __pycache__ -prune -exec rm -rf {} +
if [ ${#BUNDLES[@]} = 0 ]; then
    examples="$REPO/burnedge/examples"
    (cd "$WORK" && "$PY" -m burnedge export "$examples/digits_mlp.onnx" -o mlp.bedge --target rpi4,rpi5 > /dev/null \
        && "$PY" -m burnedge quantize "$examples/digits_cnn.onnx" -o cnn_int8.bedge --target rpi4,rpi5 \
           --calibration "$examples/digits_calibration.npz" > /dev/null) || die "exporting the example bundles failed"
    BUNDLES=("$WORK/mlp.bedge" "$WORK/cnn_int8.bedge")
else
    for i in "${!BUNDLES[@]}"; do cp "${BUNDLES[$i]}" "$WORK/$i.bedge"; BUNDLES[$i]="$WORK/$i.bedge"; done
fi
# the signer's public key, trusted on the board (default: this machine's own, made on its first export)
if [ -z "$TRUST" ]; then
    TRUST=$("$PY" -c 'from burnedge.bundle import keys; keys.local_key(); print(keys.public_path(keys.home() / keys.LOCAL))') \
        || die "cannot find this machine's signing key"
fi
cp "$TRUST" "$WORK/signer.pub" || die "cannot read the signer's public key $TRUST"
cat > "$WORK/check.py" << 'EOF'
"""Inside the arm64 userland: each bundle's test vectors through burnedge.Session, from the expected library."""
import platform
import sys

import numpy as np

import burnedge
from burnedge import bundle, host
from burnedge.backends.c.cross import pick_library
from burnedge.feeds import compare

expect, signer, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
print(f"machine    {platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}, "
      f"triple {host.triple()}")
print(f"cpu        {' '.join(sorted(host.features()))}")
ok = True
for path in paths:
    b = bundle.read(path, trust=[signer])  # the board trusts the signer's key
    lib = pick_library(b.manifest["libraries"].values(), host.fingerprint())
    chosen = lib["path"] if lib else "none (the userland has no compiler to rebuild one)"
    session = burnedge.Session(b)  # the library through cffi, ABI mode
    exact = bool(b.manifest.get("quantization")) and not b.manifest["quantization"].get("kept_float")
    worst = 0.0
    for feeds, refs in b.vectors():
        got = session.run(feeds)
        for name, ref in refs.items():
            max_abs, rel, good = compare(got[name], ref, 0.0 if exact else 1e-4)
            worst, ok = max(worst, rel), ok and good
    right = chosen == f"lib/{expect}/model.so"
    ok = ok and right
    rule = "bit-exact" if exact else "tolerance 1e-4"
    print(f"bundle     {b.name}: library {chosen}{'' if right else ' (expected lib/' + expect + '/model.so)'}, "
          f"max relative error {worst:.3g} ({rule})")
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
EOF
# 5. run it as the board: QEMU_CPU reaches every arm64 process started in the chroot
inside=()
for b in "${BUNDLES[@]}"; do inside+=("/tmp/${WORK#"$ROOT/tmp/"}/$(basename "$b")"); done
start=$SECONDS
status=0
QEMU_CPU="$CPU" chroot "$ROOT" /usr/bin/env -i QEMU_CPU="$CPU" PATH=/usr/bin:/bin HOME=/root BURNEDGE_HOME=/tmp/burnedge-home \
    PYTHONPATH="/tmp/${WORK#"$ROOT/tmp/"}/src:/opt/burnedge-deps" BURNEDGE_CACHE=/tmp/burnedge-cache \
    PYTHONDONTWRITEBYTECODE=1 python3 "/tmp/${WORK#"$ROOT/tmp/"}/check.py" "$EXPECT" "/tmp/${WORK#"$ROOT/tmp/"}/signer.pub" "${inside[@]}" || status=$?
echo "arm64_userland: ran in $((SECONDS - start)) s under qemu-aarch64 -cpu $CPU"
exit $status
