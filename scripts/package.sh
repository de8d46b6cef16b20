#!/usr/bin/env bash
# Builds build/ducklm_<version>_<arch>.deb from the desktop binary with nfpm
# (a Go tool of this module). Everything the package holds beyond the binary
# is made here, from the sources: icon sizes from build/appicon.png, the man
# page and bash completion from `ducklm help`, Depends from the libraries the
# binary links (dpkg-shlibdeps). The package has no maintainer scripts: it
# never touches anyone's data directory.
# Usage: scripts/package.sh BIN   (make package runs it)
#        scripts/package.sh --debian-version DESCRIBE   (prints the Debian version of a git describe)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/package.sh BIN | --debian-version DESCRIBE" >&2; exit 2; }

# The version, as `ducklm version` prints it, made a Debian version: a tag
# like v1.2.0-3-gabc1234 becomes 1.2.0+3.gabc1234; a bare commit (no tag yet)
# becomes 0.0~git<commit date>.<sha>, which sorts below any tagged release;
# -dirty becomes .dirty.
debian_version() {
  local describe=$1 dirty="" version
  case "$describe" in *-dirty) dirty=".dirty"; describe=${describe%-dirty} ;; esac
  # A tag has a dot (1.2, v1.2.0); a bare abbreviated commit may start with a digit.
  if [[ $describe =~ ^v?([0-9]+\.[0-9A-Za-z.+~]*)(-([0-9]+)-(g[0-9a-f]+))?$ ]]; then
    version=${BASH_REMATCH[1]}
    [ -n "${BASH_REMATCH[3]}" ] && version="$version+${BASH_REMATCH[3]}.${BASH_REMATCH[4]}"
  else
    local sha=$describe
    [[ $sha =~ ^[0-9a-f]{7,40}$ ]] || sha=$(git rev-parse --short HEAD)
    version="0.0~git$(git log -1 --format=%cd --date=format:%Y%m%d).$sha"
  fi
  echo "$version$dirty"
}
if [ "$1" = --debian-version ]; then
  debian_version "${2:?the git describe to convert}"
  exit
fi
bin=$(realpath "$1")
stage=build/package
rm -rf "$stage" && mkdir -p "$stage"/{icons,doc}
version=$(debian_version "$("$bin" version | awk '{print $2}')")
arch=$(dpkg --print-architecture)
maintainer=$(git log -1 --format='%an <%ae>')
date_rfc=$(git log -1 --format=%cd --date=rfc2822)

# Icons in the hicolor sizes, from the one 1024px source.
for s in 16 22 24 32 48 64 128 256 512; do
  mkdir -p "$stage/icons/${s}x${s}"
  convert build/appicon.png -resize "${s}x${s}" -strip "$stage/icons/${s}x${s}/ducklm.png"
done

# The manual page and bash completion, written by the binary from its help.
"$bin" help --man | gzip -9n >"$stage/ducklm.1.gz"
"$bin" help --bash >"$stage/ducklm.bash"

# The AppStream metainfo with this release.
sed "s|  <content_rating|  <releases>\n    <release version=\"$version\" date=\"$(git log -1 --format=%cs)\"/>\n  </releases>\n  <content_rating|" \
  build/linux/ducklm.metainfo.xml >"$stage/ducklm.metainfo.xml"

# The Debian changelog of a native package, and the copyright file.
printf 'ducklm (%s) unstable; urgency=medium\n\n  * Built from commit %s: %s\n\n -- %s  %s\n' \
  "$version" "$(git rev-parse --short HEAD)" "$(git log -1 --format=%s | cut -c1-40)" "$maintainer" "$date_rfc" |
  gzip -9n >"$stage/doc/changelog.gz"
cat >"$stage/doc/copyright" <<COPY
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ducklm

Files: *
Copyright: $(git log --reverse --format=%cd --date=format:%Y | head -1)-$(git log -1 --format=%cd --date=format:%Y) $maintainer
License: NONE
 The ducklm sources carry no license file yet; until they do, all rights are
 reserved by the copyright holders.
COPY

# Depends: the packages of the shared libraries the binary links, as
# dpkg-shlibdeps finds them (it reads a debian/control, so it gets a minimal one).
shl=$(mktemp -d)
trap 'rm -rf "$shl"' EXIT
mkdir -p "$shl/debian" && printf 'Source: ducklm\n\nPackage: ducklm\nArchitecture: any\n' >"$shl/debian/control"
libs=$(cd "$shl" && dpkg-shlibdeps -O -e"$bin" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$libs" ] || { echo "dpkg-shlibdeps found no libraries for $bin" >&2; exit 1; }

depends=""
IFS=',' read -ra deps <<<"$libs, bubblewrap"
for d in "${deps[@]}"; do depends+="  - \"$(echo "$d" | xargs)\""$'\n'; done

cat >"$stage/nfpm.yaml" <<YAML
name: ducklm
arch: $arch
platform: linux
version: "$version"
version_schema: none
section: devel
priority: optional
maintainer: "$maintainer"
description: |-
  Local runtime for autonomous, multi-model tasks
  ducklm is a durable, event-sourced runtime for autonomous tasks with local
  models through Ollama: sandboxed tools, approvals, deterministic worlds with
  exact checkpoints and forks, bundles and vector memory, in a desktop window
  and on the command line.
depends:
$depends
recommends:
  - chromium
contents:
  - src: $bin
    dst: /usr/bin/ducklm
    file_info: {mode: 0755}
  - src: build/linux/ducklm.desktop
    dst: /usr/share/applications/ducklm.desktop
    file_info: {mode: 0644}
  - src: $stage/ducklm.metainfo.xml
    dst: /usr/share/metainfo/ducklm.metainfo.xml
    file_info: {mode: 0644}
  - src: $stage/ducklm.1.gz
    dst: /usr/share/man/man1/ducklm.1.gz
    file_info: {mode: 0644}
  - src: $stage/ducklm.bash
    dst: /usr/share/bash-completion/completions/ducklm
    file_info: {mode: 0644}
  - src: $stage/doc/changelog.gz
    dst: /usr/share/doc/ducklm/changelog.gz
    file_info: {mode: 0644}
  - src: $stage/doc/copyright
    dst: /usr/share/doc/ducklm/copyright
    file_info: {mode: 0644}
YAML
for s in 16 22 24 32 48 64 128 256 512; do
  printf '  - src: %s\n    dst: %s\n    file_info: {mode: 0644}\n' \
    "$stage/icons/${s}x${s}/ducklm.png" "/usr/share/icons/hicolor/${s}x${s}/apps/ducklm.png" >>"$stage/nfpm.yaml"
done

deb="build/ducklm_${version}_${arch}.deb"
rm -f build/ducklm_*.deb
go tool nfpm package --config "$stage/nfpm.yaml" --packager deb --target "$deb" >/dev/null
echo "built $deb"
