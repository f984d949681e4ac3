#!/usr/bin/env bash
# Generates the Python modules the ditserve package imports from .proto files
# into OUT_DIR (the CMake build runs it into build/python):
#   OUT_DIR/ditserve/v1/{generation,input_config}_pb2.py, generation_pb2_grpc.py
#   OUT_DIR/ditserve/grpc_health/v1/health_pb2.py
#   OUT_DIR/ditserve/rpc_status.desc (google.rpc.Status and BadRequest)
# Put OUT_DIR on PYTHONPATH next to clients/python (see README.md).
# PROTOC, GRPC_PYTHON_PLUGIN and GRPC_PROTO_DIR override the Debian paths.
# Usage: clients/python/generate_stubs.sh OUT_DIR
set -euo pipefail
if (($# != 1)); then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
out=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
protoc=${PROTOC:-protoc}
plugin=${GRPC_PYTHON_PLUGIN:-/usr/bin/grpc_python_plugin}
grpc_proto_dir=${GRPC_PROTO_DIR:-/usr/share/grpc-proto}

mkdir -p "$out"
"$protoc" -I "$root/proto" --python_out="$out" \
  "$root/proto/ditserve/v1/input_config.proto"
"$protoc" -I "$root/proto" --python_out="$out" --grpc_out="$out" \
  --plugin=protoc-gen-grpc="$plugin" "$root/proto/ditserve/v1/generation.proto"

# Debian's python3-grpcio has no grpc_health package, and health_pb2.py cannot
# sit at grpc/health/v1/ (that would be inside grpcio's own `grpc` package), so
# it moves into ours. It imports nothing, and its descriptor keeps the name
# grpc/health/v1/health.proto, so it coexists with grpcio-health-checking.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$protoc" -I "$grpc_proto_dir" --python_out="$tmp" grpc/health/v1/health.proto
mkdir -p "$out/ditserve/grpc_health/v1"
mv "$tmp/grpc/health/v1/health_pb2.py" "$out/ditserve/grpc_health/v1/"

# google.rpc.Status and BadRequest as a descriptor set, which errors.py loads
# into a pool of its own: modules registered in protobuf's default pool would
# clash with googleapis-common-protos' in a process that loads both.
"$protoc" -I "$root/proto" --include_imports \
  --descriptor_set_out="$out/ditserve/rpc_status.desc" \
  "$root/proto/google/rpc/status.proto" \
  "$root/proto/google/rpc/error_details.proto"
