# Common tasks. Each target is one line of shell so the recipe reads as docs.
.PHONY: help setup demo test py-test check proto bench toolchain games games-check rust-test

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

setup: ## install the host and its dev tools into this Python (PyPI only)
	scripts/setup-python.sh

demo: setup ## the main job: a server, every sample game played by bots over gRPC, records verified
	python3 -m tablehost demo

test: setup toolchain rust-test py-test ## everything CI checks: cargo tests, then pytest

py-test: ## the Python suites (unit, property, end to end against a real server)
	python3 -m pytest

check: ## lint and type-check the host
	python3 -m ruff check runtime tests bench && python3 -m mypy

proto: ## regenerate runtime/tablehost/api/_pb from proto/
	scripts/gen-proto.sh

bench: ## print host throughput, patch, move cost, gRPC latency and sandbox (switch, idle memory, refusal) figures
	python3 bench/host_throughput.py && python3 bench/table_patch.py && python3 bench/move_cost.py && python3 bench/grpc_latency.py && python3 bench/sandbox.py

toolchain: ## install the Rust/wasm toolchain if missing (Debian packages)
	scripts/install-toolchain.sh

games: ## build every sample game to sample_games/dist/<name>.wasm + SHA256SUMS
	scripts/build-games.sh build

games-check: ## fail when the committed sample_games/dist differs from a fresh build
	scripts/build-games.sh check

rust-test: ## cargo test for the SDK, every game and the SDK's example (nim), natively
	scripts/build-games.sh test
