"""Tools, hooks and the gate every tool call goes through.

The tool model (``AITool``, ``ToolHandler``), argument parsing against the JSON Schema,
hooks, approvals of regular tools, ``ToolGate`` (the one code path of a tool call) and
``VoiceKit`` (the registry hooks and channels share).
"""
