"""Support for testing rotbench and engines built for it, offline: a fake Anthropic Messages
server on 127.0.0.1 (``fake_anthropic``) and synthetic reports (``synthetic``).

This package module imports nothing.
"""
