"""The public surface: explicit ``__all__`` lists whose objects show the public module."""

from __future__ import annotations

import importlib

import pytest

from voice_hitl._public import is_private_to

PINNED = {
    "HumanInputHandler",
    "HumanInputToolHandler",
    "PendingInput",
    "PendingInputStatus",
    "PendingInputEvent",
    "HumanInputRejectedError",
    "AITool",
    "ToolCallContext",
    "current_tool_context",
    "ToolHandler",
    "compose_tool_handlers",
    "ToolFailedError",
    "ToolRefusedError",
    "ToolTimeoutError",
    "UnservedToolCallError",
    "HookTrigger",
    "HookExecution",
    "HookResult",
    "ToolCallReport",
    "ChannelType",
    "VoiceKit",
}


def test_pinned_core_names_are_exported() -> None:
    import voice_hitl

    assert set(voice_hitl.__all__) >= PINNED


@pytest.mark.parametrize("package", ["voice_hitl", "providers", "conference"])
def test_all_names_exist_and_show_public_module(package: str) -> None:
    module = importlib.import_module(package)
    exported = getattr(module, "__all__", [])
    assert len(exported) == len(set(exported)), "duplicate names in __all__"
    for name in exported:
        obj = getattr(module, name)
        owner = getattr(obj, "__module__", package)
        if isinstance(obj, type) or callable(obj):
            assert not is_private_to(owner, package), f"{package}.{name} shows {owner}"


def test_exception_bases() -> None:
    from voice_hitl import (
        ChannelClosedError,
        HumanInputRejectedError,
        ProviderError,
        ToolTimeoutError,
        VoiceHitlError,
    )

    assert issubclass(HumanInputRejectedError, RuntimeError)
    assert issubclass(ToolTimeoutError, TimeoutError)
    assert issubclass(ChannelClosedError, RuntimeError)
    for exc in (HumanInputRejectedError, ToolTimeoutError, ChannelClosedError, ProviderError):
        assert issubclass(exc, VoiceHitlError)
    err = ProviderError("boom", code="rate_limited", recoverable=True)
    assert (err.code, err.recoverable) == ("rate_limited", True)
