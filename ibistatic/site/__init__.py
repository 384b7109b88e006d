"""The published site: build orchestration, atomic swap, renderers."""
