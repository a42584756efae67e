"""Helpers for the MCP server tests: a raw-wire client and real temporary git repositories."""
