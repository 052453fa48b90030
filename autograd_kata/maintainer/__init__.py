"""Maintainers' checks: verify, the mutation gate, the classic-mistake catalogue."""
