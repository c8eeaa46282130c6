"""Generated protobuf and gRPC code for tablehost.v1 (scripts/gen-proto.sh; do not edit)."""
