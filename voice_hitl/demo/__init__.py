"""The demo: ``voice-hitl demo`` and the recorded calls it places.

It uses the library as an application does, and it is the only part of ``voice_hitl``
that imports ``providers`` and ``conference``; nothing in the library imports it back.
"""
