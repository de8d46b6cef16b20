#!/usr/bin/env bash
# ollama-server.sh — builds (once per version) a real Ollama server for the
# real-model tests, CPU only, from the Go module proxy, and prints its path.
#
#   scripts/ollama-server.sh            build or reuse; print the binary's path
#
# The binary is cached outside the checkout, by version:
#   ${DUCKLM_CACHE:-${XDG_CACHE_HOME:-~/.cache}/ducklm}/ollama-<version>/ollama
# so a fresh clone reuses it (a first build takes 12–14 min on 2 cores).
#
# Facts this encodes (Ollama v0.17.4, Debian 12):
# - the module zip drops llama.cpp's vendor/ folder: nlohmann/json and stb come
#   from Debian (nlohmann-json3-dev, libstb-dev); miniaudio has no package, and
#   an empty stub is enough for text models (audio input fails cleanly);
# - without -X …/version.Version the server reports 0.0.0.
# The tests (tests/realmodel) start the server, write the tiny model and stop it.
set -euo pipefail

VERSION=${OLLAMA_VERSION:-v0.17.4}
CACHE=${DUCKLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ducklm}
DIR=$CACHE/ollama-$VERSION
BIN=$DIR/ollama

if [[ -x $BIN && -f $DIR/.complete ]]; then
  echo "$BIN"
  exit 0
fi

say() { printf 'ollama-server: %s\n' "$*" >&2; }

need=()
for p in build-essential nlohmann-json3-dev libstb-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if ((${#need[@]})); then
  say "installing ${need[*]}"
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >&2
fi

mkdir -p "$DIR"
# One build at a time: a second caller waits for the first and reuses its binary.
exec 9>"$DIR/.lock"
flock 9
if [[ -x $BIN && -f $DIR/.complete ]]; then
  echo "$BIN"
  exit 0
fi

src=$(go mod download -json "github.com/ollama/ollama@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d $src ]] || { say "could not download github.com/ollama/ollama@$VERSION from the Go module proxy"; exit 1; }
work=$DIR/src
rm -rf "$work"
cp -r "$src" "$work"
chmod -R u+w "$work"
mkdir -p "$work/llama/llama.cpp/vendor/miniaudio"
cat >"$work/llama/llama.cpp/vendor/miniaudio/miniaudio.h" <<'EOF'
/* Stub of miniaudio.h: the Go module zip of Ollama omits llama.cpp/vendor/ and
 * Debian has no miniaudio package. Audio decoding always fails, which only
 * affects audio input of multimodal models; text models are unaffected. */
#ifndef DUCKLM_MINIAUDIO_STUB_H
#define DUCKLM_MINIAUDIO_STUB_H
#include <stddef.h>
#include <stdint.h>
#ifndef MA_API
#define MA_API static
#endif
typedef int ma_result;
typedef uint32_t ma_uint32;
typedef uint64_t ma_uint64;
#define MA_SUCCESS 0
#define MA_ERROR (-1)
typedef enum { ma_format_unknown = 0, ma_format_f32 = 5 } ma_format;
typedef enum { ma_encoding_format_wav = 1 } ma_encoding_format;
typedef struct { ma_format format; ma_uint32 channels; ma_uint32 sampleRate; } ma_decoder_config;
typedef struct { int unused; } ma_decoder;
typedef struct { int unused; } ma_encoder_config;
typedef struct { int unused; } ma_encoder;
MA_API ma_decoder_config ma_decoder_config_init(ma_format f, ma_uint32 c, ma_uint32 r) { ma_decoder_config d; d.format = f; d.channels = c; d.sampleRate = r; return d; }
MA_API ma_result ma_decoder_init_memory(const void *p, size_t n, const ma_decoder_config *c, ma_decoder *d) { (void)p; (void)n; (void)c; (void)d; return MA_ERROR; }
MA_API ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *d, ma_uint64 *n) { (void)d; if (n) *n = 0; return MA_ERROR; }
MA_API ma_result ma_decoder_read_pcm_frames(ma_decoder *d, void *o, ma_uint64 n, ma_uint64 *r) { (void)d; (void)o; (void)n; if (r) *r = 0; return MA_ERROR; }
MA_API ma_result ma_decoder_uninit(ma_decoder *d) { (void)d; return MA_SUCCESS; }
#endif
EOF

say "building Ollama $VERSION (CPU only; 12–14 min on 2 cores the first time, cached in $DIR)"
start=$(date +%s)
(cd "$work" && GOFLAGS=-mod=mod CGO_ENABLED=1 go build -trimpath \
  -ldflags "-s -w -X github.com/ollama/ollama/version.Version=${VERSION#v}" -o "$BIN.tmp" .) >&2
mv "$BIN.tmp" "$BIN"
rm -rf "$work"
touch "$DIR/.complete"
say "built in $(($(date +%s) - start)) s: $BIN"
echo "$BIN"
