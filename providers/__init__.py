"""Realtime model providers that a voice-hitl channel drives."""
