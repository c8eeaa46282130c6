# Common tasks. Each target is one line of shell so the recipe reads as docs.
.PHONY: help toolchain games games-check rust-test

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

toolchain: ## install the Rust/wasm toolchain if missing (Debian packages)
	scripts/install-toolchain.sh

games: ## build every sample game to sample_games/dist/<name>.wasm + SHA256SUMS
	scripts/build-games.sh build

games-check: ## fail when the committed sample_games/dist differs from a fresh build
	scripts/build-games.sh check

rust-test: ## cargo test for the SDK and every game, natively
	scripts/build-games.sh test
