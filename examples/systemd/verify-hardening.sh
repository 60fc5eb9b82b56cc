#!/bin/sh
# verify-hardening.sh CMD [ARGS...] - run CMD roughly the way reportd.service
# confines reportd, on a machine without a running systemd (containers, CI):
# read-only / (ProtectSystem=strict), a private /tmp (PrivateTmp), empty /root
# and /home (ProtectHome), a minimal /dev (PrivateDevices), an unprivileged
# user with no capabilities and no_new_privs (DynamicUser, NoNewPrivileges,
# CapabilityBoundingSet=), and a /proc that hides other users' processes
# (ProtectProc=invisible: a fresh proc instance mounted with hidepid, never a
# remount - the host's /proc shares its superblock, and a remount in this
# mount namespace would change the host's /proc too).
#
# ProtectKernelTunables= and ProtectKernelLogs= are "no" in the unit: systemd
# implements them with mounts over parts of /proc (/proc/sys read-only,
# /proc/kmsg masked), and the kernel then refuses the unprivileged
# user-namespace mount of a fresh /proc that bubblewrap's --proc makes
# ("bwrap: Can't mount proc on /newroot/proc: Operation not permitted"), so
# no engine could start. PROTECT_KERNEL=1 adds those two mounts here, to see
# that failure. NOT emulated: SystemCallFilter, RestrictAddressFamilies.
# Needs root (unshare -m, setpriv) and Linux >= 5.8 (proc instances).
#
# CMD must live outside /tmp, /root and /home (they are replaced). Run from
# the directory CMD expects as its working directory (RUN_DIR, default a
# fresh directory owned by the unprivileged user). Example, the converter
# tests with real Chromium and LibreOffice:
#
#   go test -c -o /var/tmp/convert.test ./internal/convert
#   cd internal/convert && RUN_DIR=$PWD ../../examples/systemd/verify-hardening.sh \
#       /var/tmp/convert.test -test.run 'ToPDF' -test.v
set -eu
unshare -m --propagation private sh -eu -c '
  mount -o remount,bind,ro / 2>/dev/null || mount --bind -o ro / /
  mount -t tmpfs -o mode=1777 tmpfs /tmp
  mount -t tmpfs -o mode=0755,size=1m tmpfs /root
  mount -t tmpfs -o mode=0755,size=1m tmpfs /home
  mount -t proc -o hidepid=invisible proc /proc
  if [ "${PROTECT_KERNEL:-0}" = 1 ]; then
    mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys
    mount --bind /dev/null /proc/kmsg
  fi
  mkdir -p /tmp/dev/shm /tmp/dev/pts
  for d in null zero random urandom full tty; do touch /tmp/dev/$d; mount --bind /dev/$d /tmp/dev/$d; done
  mount -t tmpfs -o mode=1777 tmpfs /tmp/dev/shm
  mount --rbind /tmp/dev /dev
  mkdir -p /tmp/state && chown 65534:65534 /tmp/state
  cd "${RUN_DIR:-/tmp/state}"
  exec setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs \
    --inh-caps=-all --bounding-set=-all env HOME=/tmp TMPDIR=/tmp "$@"
' sh "$@"
