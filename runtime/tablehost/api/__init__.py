"""The gRPC match API: server, servicer, interceptors, and the live-match registry behind them.

``registry`` and ``auth`` hold the domain side (no grpc); ``convert`` maps proto messages to the
JSON-shaped dicts of docs/abi.md and back; ``servicer`` and ``interceptors`` are the grpc side.
"""
